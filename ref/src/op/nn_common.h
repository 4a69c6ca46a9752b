/*
 * Private to the nn families (fully_connected.c, output.c, dropout.c,
 * batchnorm.c): the signatures of their kernels and shape functions,
 * element access in float32 or float64, and the shape helpers they share.
 */
#ifndef MXR_OP_NN_COMMON_H
#define MXR_OP_NN_COMMON_H

#include "op/op_internal.h"

#define F32_F64 ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64))

#define KERNEL(fn) static int fn(MXR_FCOMPUTE_PARAMS)
#define KERNEL_ARGS_MAYBE_UNUSED MXR_FCOMPUTE_UNUSED

#define SHAPE_FN(fn) static int fn(MXR_SHAPE_FN_PARAMS)
#define SHAPE_ARGS_MAYBE_UNUSED MXR_SHAPE_FN_UNUSED

static inline double get(const struct mxr_tensor *t, int64_t i) {
  return t->dtype == MXR_FLOAT64 ? ((const double *)t->data)[i] : (double)((const float *)t->data)[i];
}

static inline void put(struct mxr_tensor *t, int req, int64_t i, double v) {
  if (t->dtype == MXR_FLOAT64)
    MXR_ASSIGN(req, (double *)t->data + i, v);
  else
    MXR_ASSIGN(req, (float *)t->data + i, (float)v);
}

static inline bool writes(int req) { return req == MXR_REQ_WRITE || req == MXR_REQ_INPLACE; }

static inline int64_t dims_prod(const struct mxr_shape *s, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; d++) n *= s->dim[d];
  return n;
}

/* Backward shapes: the gradient of forward input i has that input's shape;
 * the forward inputs start at backward input `first`. */
static inline int grads_like_inputs(struct mxr_shape *in, int first, struct mxr_shape *out,
                                    int nout) {
  for (int i = 0; i < nout; i++) {
    int st = mxr__shape_assign(&out[i], &in[first + i], "input gradient");
    if (st) return st;
  }
  return 0;
}

#endif /* MXR_OP_NN_COMMON_H */
