/*
 * Internal: CUDA launchers of Dropout (op/dropout.c), defined in
 * op/cuda/dropout.cu with C linkage.  Conventions as in launch.h: device
 * pointers, work queued on `stream` (NULL: the legacy default stream,
 * waited for), float32 or float64 (`dtype`), computed in double and stored
 * as `req` asks, 0 or a negative status with the last error set.
 */
#ifndef MXR_OP_CUDA_DROPOUT_H
#define MXR_OP_CUDA_DROPOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "mxref/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Dropout's layout: the data's shape and, per axis, the stride of the mask
 * (0 on the axes the mask shares, where its extent is 1). */
struct mxr_gpu_mask_layout {
  int ndim;
  int64_t dim[MXR_MAX_NDIM];
  int64_t mstride[MXR_MAX_NDIM];
};

/* Dropout's mask: n_mask elements, each `scale` when draw j of `seed`
 * (op/random_fn.h) is below pkeep, else 0; all 1 when !active. */
int mxr__gpu_dropout_mask(void *stream, int dtype, int64_t n_mask, bool active, uint64_t seed,
                          float pkeep, float scale, void *mask, int req);

/* out = x * m, with m the mask element of each x element (the mask
 * broadcast over its shared axes, `layout`), n elements of x.  Dropout's
 * backward passes its mask (x the head gradient); its forward passes NULL,
 * and m is drawn as mxr__gpu_dropout_mask draws it (scale or 0), so the
 * output does not depend on whether the mask is written. */
int mxr__gpu_dropout_apply(void *stream, int dtype, const struct mxr_gpu_mask_layout *layout,
                           int64_t n, const void *x, const void *mask, uint64_t seed, float pkeep,
                           float scale, void *out, int req);

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_DROPOUT_H */
