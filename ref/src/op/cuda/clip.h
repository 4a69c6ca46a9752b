/*
 * Internal: the CUDA launcher of clip and _backward_clip (op/clip.c),
 * defined in op/cuda/clip.cu with C linkage.  Conventions as in launch.h.
 */
#ifndef MXR_OP_CUDA_CLIP_H
#define MXR_OP_CUDA_CLIP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* n elements of float32 or float64 `dtype`, lo and hi the bounds already
 * rounded to float.  g NULL: out = clip(x) (the forward); else out = g
 * where lo <= x <= hi (or x is NaN), 0 elsewhere (the gradient).  Stored
 * as req asks. */
int mxr__gpu_clip(void *stream, int dtype, int64_t n, const void *g, const void *x, double lo, double hi,
                  void *out, int req);

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_CLIP_H */
