/*
 * Internal: CUDA launchers of the loss ops of op/cpu/nn.c (SoftmaxOutput,
 * the regression outputs) and of Dropout (op/cpu/dropout.c), defined in
 * op/gpu/nn.cu with C linkage.  Conventions as in launch.h: device
 * pointers, work queued on `stream` (NULL: the legacy default stream,
 * waited for), float32 or float64 (`dtype`), computed in double and stored
 * as `req` asks, 0 or a negative status with the last error set.
 */
#ifndef MXR_OP_GPU_NN_H
#define MXR_OP_GPU_NN_H

#include <stdbool.h>
#include <stdint.h>

#include "mxref/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Softmax along the middle axis of an (outer, k, inner) array. */
int mxr__gpu_softmax_mid(void *stream, int dtype, int64_t outer, int64_t k, int64_t inner,
                         const void *x, void *y, int req);

/* SoftmaxOutput's gradient with class-index labels (one per (outer,
 * inner) pair).  What the CPU kernel computes, per element j of y:
 * ((y - [x == label]) (+ label smoothing)) * scale, 0 for an ignored label,
 * times y with out_grad; scale = grad_scale / valid, with valid the count
 * of labels other than ignore_label when count_valid (else passed in
 * `valid`), and divided by inner for multi_output without count_valid.
 * The plan is made once (nn.c's smo_grad_setup) for both devices' kernels. */
struct mxr_smo_grad_plan {
  int64_t outer, k, inner;
  double grad_scale; /* already rounded to float, as the CPU does */
  int ignore_label;
  bool use_ignore, out_grad, count_valid, divide_by_inner;
  int64_t valid; /* when !count_valid */
  bool smooth;
  double alpha, off; /* smoothing: added at the label, subtracted elsewhere */
};
struct mxr_run_ctx;
/* Queued on run's stream (NULL run: a direct call on the legacy default
 * stream); with count_valid it takes a word of run's device scratch. */
int mxr__gpu_smo_grad(const struct mxr_run_ctx *run, int dtype, const struct mxr_smo_grad_plan *g,
                      const void *label, const void *y, void *dx, int req);

/* SoftmaxOutput's gradient with probability labels (label shaped as y):
 * dx = (y - label) * grad_scale, times y with out_grad; n elements. */
int mxr__gpu_smo_grad_dense(void *stream, int dtype, int64_t n, double grad_scale, bool out_grad,
                            const void *label, const void *y, void *dx, int req);

/* LogisticRegressionOutput's forward: y = 1 / (1 + exp(-x)), n elements. */
int mxr__gpu_sigmoid(void *stream, int dtype, int64_t n, const void *x, void *y, int req);

/* A regression output's gradient: dx = f(y - label) * scale, f the
 * identity or (mae) the sign; n elements. */
int mxr__gpu_regression_grad(void *stream, int dtype, int64_t n, bool mae, double scale,
                             const void *label, const void *y, void *dx, int req);

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
#endif /* MXR_OP_GPU_NN_H */
