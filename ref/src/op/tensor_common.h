/*
 * Private to the tensor families (reduce.c, dot.c, reshape.c, transpose.c,
 * concat.c, softmax.c): element access and movement helpers shared by
 * their kernels.
 */
#ifndef MXR_OP_TENSOR_COMMON_H
#define MXR_OP_TENSOR_COMMON_H

#include <stdio.h>
#include <string.h>

#include "op/op_internal.h"

#define FLOATS ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64))
#define ALL_DTYPES                                                                       \
  ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64) | (1u << MXR_FLOAT16) | (1u << MXR_UINT8) | \
   (1u << MXR_INT32) | (1u << MXR_INT8) | (1u << MXR_INT64) | (1u << MXR_BOOL))

#define UNUSED_KERNEL_ARGS \
  (void)ctx;               \
  (void)nin;               \
  (void)nout;              \
  (void)aux;               \
  (void)naux


/* ------------------------------------------------------------ helpers */

static inline bool is_float(int dt) { return dt == MXR_FLOAT32 || dt == MXR_FLOAT64; }

static inline double ld(const void *p, int dt, int64_t i) {
  return dt == MXR_FLOAT64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static inline void st(void *p, int dt, int64_t i, int req, double v) {
  if (dt == MXR_FLOAT64)
    MXR_ASSIGN(req, (double *)p + i, v);
  else
    MXR_ASSIGN(req, (float *)p + i, (float)v);
}

static inline const char *shape_text(const struct mxr_shape *s, char *buf, size_t n) {
  return mxr_shape_str(s, buf, n);
}

/* Resolve an axis in [-ndim, ndim) as MXNet's CheckAxis does. */
static inline int resolve_axis(const char *what, int64_t axis, const struct mxr_shape *s, int *out) {
  int64_t a = axis < 0 ? axis + s->ndim : axis;
  if (a < 0 || a >= s->ndim) {
    char b[96];
    return mxr_set_error(MXR_EINVAL, "%s=%lld is out of range for shape %s", what,
                         (long long)axis, shape_text(s, b, sizeof b));
  }
  *out = (int)a;
  return 0;
}

/* Put "op: " before the calling thread's last error (copied first: the
 * message buffer is the one being written). */
static inline int prefix_error(const char *op, int status) {
  char msg[MXR_ERROR_MAX];
  snprintf(msg, sizeof msg, "%s", mxr_last_error());
  return mxr_set_error(status, "%s: %s", op, msg);
}

static inline int req_add_needs_float(const char *op, int dt, int req) {
  if (req == MXR_REQ_ADD && !is_float(dt))
    return mxr_set_error(MXR_EINVAL, "%s: accumulating (req add) needs float32 or float64", op);
  return 0;
}

/* dst[0..n) (req)= src[0..n) for any dtype (add: float types only). */
static inline void move_block(void *dst, const void *src, int64_t n, int dt, int req) {
  if (req == MXR_REQ_NULL || n <= 0) return;
  if (req != MXR_REQ_ADD) {
    if (dst != src) memmove(dst, src, (size_t)n * mxr_dtype_size(dt));
  } else if (dt == MXR_FLOAT64) {
    for (int64_t i = 0; i < n; i++) ((double *)dst)[i] += ((const double *)src)[i];
  } else {
    for (int64_t i = 0; i < n; i++) ((float *)dst)[i] += ((const float *)src)[i];
  }
}

/* One element dst[di] (req)= src[si], any dtype. */
static inline void move_one(char *dst, int64_t di, const char *src, int64_t si, size_t es, int dt,
                            int req) {
  if (req == MXR_REQ_ADD) {
    if (dt == MXR_FLOAT64)
      ((double *)dst)[di] += ((const double *)src)[si];
    else
      ((float *)dst)[di] += ((const float *)src)[si];
    return;
  }
  switch (es) {
    case 1: dst[di] = src[si]; break;
    case 2: ((uint16_t *)dst)[di] = ((const uint16_t *)src)[si]; break;
    case 4: ((uint32_t *)dst)[di] = ((const uint32_t *)src)[si]; break;
    default: ((uint64_t *)dst)[di] = ((const uint64_t *)src)[si]; break;
  }
}

/* An odometer over `n` dimensions, tracking an offset with its own strides. */
struct walk {
  int n;
  int64_t dim[MXR_MAX_NDIM], stride[MXR_MAX_NDIM], idx[MXR_MAX_NDIM];
  int64_t off;
};

static inline void walk_init(struct walk *w, int n, const int64_t *dim, const int64_t *stride) {
  w->n = n;
  w->off = 0;
  for (int d = 0; d < n; d++) {
    w->dim[d] = dim[d];
    w->stride[d] = stride[d];
    w->idx[d] = 0;
  }
}

static inline void walk_next(struct walk *w) {
  for (int d = w->n - 1; d >= 0; d--) {
    w->off += w->stride[d];
    if (++w->idx[d] < w->dim[d]) return;
    w->off -= w->stride[d] * w->dim[d];
    w->idx[d] = 0;
  }
}

static inline void row_major_strides(const struct mxr_shape *s, int64_t *stride) {
  int64_t m = 1;
  for (int d = s->ndim - 1; d >= 0; d--) {
    stride[d] = m;
    m *= s->dim[d];
  }
}

#define SHAPE_ERR(...) mxr_set_error(MXR_EINVAL, __VA_ARGS__)

#endif /* MXR_OP_TENSOR_COMMON_H */
