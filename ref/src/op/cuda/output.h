/*
 * Internal: CUDA launchers of the loss ops of op/output.c (SoftmaxOutput,
 * the regression outputs), defined in op/cuda/output.cu with C linkage.  Conventions as in launch.h: device
 * pointers, work queued on `stream` (NULL: the legacy default stream,
 * waited for), float32 or float64 (`dtype`), computed in double and stored
 * as `req` asks, 0 or a negative status with the last error set.
 */
#ifndef MXR_OP_CUDA_OUTPUT_H
#define MXR_OP_CUDA_OUTPUT_H

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

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_OUTPUT_H */
