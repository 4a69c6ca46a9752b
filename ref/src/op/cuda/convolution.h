/*
 * Internal: GPU launchers of Convolution and its gradient through cuDNN
 * (op/cuda/convolution.cu; C linkage), called by the GPU forwards in
 * op/convolution.c after they validated exactly as the CPU forwards do.
 * The terms of launch.h hold: device pointers, work queued on `run`'s
 * stream (run NULL or without a worker: the legacy default stream, waited
 * for before returning), req is enum mxr_req, 0 or a negative status with
 * the last error set.
 *
 * These launchers exist only in builds with cuDNN (MXR_HAVE_CUDNN);
 * convolution_gemm.h has the convolution without cuDNN (im2col and
 * cuBLAS), which cudnn_off=True and builds without cuDNN use, so
 * Convolution has a GPU forward in every CUDA build (MXR_GPU_FORWARD(fn)
 * of launch.h).
 */
#ifndef MXR_OP_CUDA_CONVOLUTION_H
#define MXR_OP_CUDA_CONVOLUTION_H

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
 * lower ranks are padded in front with extent 1, kernel 1, stride 1,
 * dilation 1 and pad 0 (as convolution.c's geometry does).  Layouts are channel
 * first (NCW, NCHW, NCDHW) unless said otherwise.
 */

/* One convolution (MXNet's cross-correlation) and how cuDNN may run it
 * (tune and workspace_limit: only the cuDNN launchers read them). */
struct mxr__gpu_conv {
  int nsp;                 /* spatial dimensions: 1, 2 or 3 */
  int dtype;               /* float32 or float64 */
  int64_t n, c, f, groups; /* batch, input channels, filters (num_filter), num_group */
  int64_t in[3], out[3], k[3], s[3], p[3], d[3];
  int tune;                /* algorithm choice: 0 cuDNN's heuristic, 1 fastest
                              measured within workspace_limit, 2 fastest measured */
  size_t workspace_limit;  /* bytes (the op's workspace parameter, in MB, << 20) */
};

/* Through cuDNN (builds with cuDNN only): y = conv(x, w) (+ b when b is
 * not NULL), as req says: x (n, c, in...), w (f, c/groups, k...), b (f),
 * y (n, f, out...). */
int mxr__gpu_conv_forward(const struct mxr_run_ctx *run, const struct mxr__gpu_conv *cv,
                          const void *x, const void *w, const void *b, void *y, int req);

/* Through cuDNN (builds with cuDNN only): the gradients of x, w and b
 * (db NULL: no bias) from dy, each as its req says. */
int mxr__gpu_conv_backward(const struct mxr_run_ctx *run, const struct mxr__gpu_conv *cv,
                           const void *dy, const void *x, const void *w, void *dx, int req_dx,
                           void *dw, int req_dw, void *db, int req_db);

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_CONVOLUTION_H */
