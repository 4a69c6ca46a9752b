/*
 * Internal: GPU launchers of Pooling and its gradient (op/cuda/pooling.cu;
 * C linkage), called by the GPU forwards in op/pooling.c after they
 * validated exactly as the CPU forwards do.  The terms of launch.h hold:
 * device pointers, work queued on `run`'s stream (run NULL or without a
 * worker: the legacy default stream, waited for before returning), req is
 * enum mxr_req, 0 or a negative status with the last error set.
 *
 * Pooling has plain CUDA kernels for every mode the CPU op has, and uses
 * cuDNN where cuDNN computes the CPU op's definition (pooling.cu says
 * where), so it has a GPU forward in every CUDA build (MXR_GPU_FORWARD of
 * launch.h).
 */
#ifndef MXR_OP_CUDA_POOLING_H
#define MXR_OP_CUDA_POOLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "op/cuda/launch.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mxr_run_ctx;

/*
 * Spatial arrays below always have 3 entries, the last `nsp` of them used:
 * lower ranks are padded in front with extent 1, kernel 1 and stride 1,
 * and pad 0 (as pooling.c's geometry does).  Layouts are channel first
 * (NCW, NCHW, NCDHW) unless said otherwise.
 */

/* Pooling modes, numbered as MXNet's pool_type. */
enum mxr__gpu_pool_type {
  MXR__GPU_POOL_MAX = 0,
  MXR__GPU_POOL_AVG = 1,
  MXR__GPU_POOL_SUM = 2,
  MXR__GPU_POOL_LP = 3,
};

/* One pooling, with the output extents already computed for the op's
 * convention (valid, full, same) and global pooling already turned into
 * a kernel over the whole input. */
struct mxr__gpu_pool {
  int nsp;           /* 1, 2 or 3 */
  int dtype;         /* float32 or float64 */
  bool channel_last; /* NWC, NHWC, NDHWC */
  int type;          /* enum mxr__gpu_pool_type */
  int p_value;       /* Lp: 1, 2 or 3 (1 otherwise) */
  bool include_pad;  /* avg: divide by the window clipped to the padded input */
  bool allow_cudnn;  /* false with cudnn_off */
  int64_t n, c;
  int64_t in[3], out[3], k[3], s[3], p[3];
};

/* y = pool(x), as req says. */
int mxr__gpu_pool_forward(const struct mxr_run_ctx *run, const struct mxr__gpu_pool *pl,
                          const void *x, void *y, int req);

/* dx from dy, the forward's x and y, as req says (max: the whole gradient
 * goes to the first maximum of each window, in row-major order). */
int mxr__gpu_pool_backward(const struct mxr_run_ctx *run, const struct mxr__gpu_pool *pl,
                           const void *dy, const void *x, const void *y, void *dx, int req);

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_POOLING_H */
