/*
 * Private to the Convolution and Pooling families (convolution.c, pooling.c):
 * MXNet's layout enum, element access in the tensor's dtype, and the
 * parameter, shape and dtype checks both ops use.
 */
#ifndef MXR_OP_CONV_COMMON_H
#define MXR_OP_CONV_COMMON_H

#include <ctype.h>
#include <string.h>

#include "op/op_internal.h"

#define F32_F64 ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64))

/* MXNet's layout enum; the rank is the number of spatial dimensions. */
enum layout { L_NONE = -1, L_NCW, L_NCHW, L_NCDHW, L_NWC, L_NHWC, L_NDHWC };
static const char *const layout_names[] = {"NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"};
static inline int layout_rank(int l) { return l % 3 + 1; }
static inline bool layout_channel_last(int l) { return l >= L_NWC; }

static inline double load(const void *p, int64_t i, bool f64) {
  return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static inline void store(void *p, int64_t i, bool f64, double v) {
  if (f64)
    ((double *)p)[i] = v;
  else
    ((float *)p)[i] = (float)v;
}
/* The result of one arithmetic operation in the tensor's dtype. */
static inline double rnd(bool f64, double v) { return f64 ? v : (double)(float)v; }

static inline void zero_tensor(struct mxr_tensor *t) {
  memset(t->data, 0, (size_t)mxr_tensor_size(t) * mxr_dtype_size(t->dtype));
}

static inline const char *tuple_str(const struct mxr_tuple *t, char *buf, size_t size) {
  struct mxr_shape s = {t->n, {0}};
  for (int i = 0; i < t->n; i++) s.dim[i] = t->v[i];
  return mxr_shape_str(&s, buf, size);
}

/* Copy `text` without surrounding spaces into buf. */
static inline void trimmed(const char *text, char *buf, size_t size) {
  while (isspace((unsigned char)*text)) text++;
  size_t n = strlen(text);
  while (n && isspace((unsigned char)text[n - 1])) n--;
  if (n >= size) n = size - 1;
  memcpy(buf, text, n);
  buf[n] = '\0';
}

/* An optional enum as dmlc parses one: "None" or one of the names. */
static inline int parse_opt_choice(const char *op, const char *key, const char *text,
                                   const char *const *names, const int *ids, int n, int *out) {
  char t[MXR_PARAM_STRING_MAX];
  trimmed(text, t, sizeof t);
  if (strcmp(t, "None") == 0) return *out = L_NONE, 0;
  for (int i = 0; i < n; i++)
    if (strcmp(t, names[ids[i]]) == 0) return *out = ids[i], 0;
  char expected[128] = "None";
  for (int i = 0; i < n; i++) {
    strncat(expected, ", ", sizeof expected - strlen(expected) - 1);
    strncat(expected, names[ids[i]], sizeof expected - strlen(expected) - 1);
  }
  return mxr_set_error(MXR_EINVAL, "%s: parameter %s='%s' is not valid: expected one of %s", op,
                       key, text, expected);
}

/* Fill an empty tuple with `def` per dimension, or check its length. */
static inline int complete_tuple(const char *op, const char *key, struct mxr_tuple *t,
                                 const struct mxr_tuple *kernel, int64_t def) {
  char a[96], b[96];
  if (t->n == 0) {
    t->n = kernel->n;
    for (int i = 0; i < t->n; i++) t->v[i] = def;
    return 0;
  }
  if (t->n != kernel->n)
    return mxr_set_error(MXR_EINVAL, "%s: %s=%s must have as many dimensions as kernel=%s", op,
                         key, tuple_str(t, a, sizeof a), tuple_str(kernel, b, sizeof b));
  return 0;
}

static inline int check_min(const char *op, const char *key, const struct mxr_tuple *t, int64_t min) {
  char a[96];
  for (int i = 0; i < t->n; i++)
    if (t->v[i] < min)
      return mxr_set_error(MXR_EINVAL, "%s: %s=%s must be %s in every dimension", op, key,
                           tuple_str(t, a, sizeof a), min ? "positive" : "non-negative");
  return 0;
}

/* (N, sp..., C) <-> (N, C, sp...) */
static inline struct mxr_shape channel_first(const struct mxr_shape *s) {
  struct mxr_shape r = *s;
  r.dim[1] = s->dim[s->ndim - 1];
  for (int i = 2; i < s->ndim; i++) r.dim[i] = s->dim[i - 1];
  return r;
}
static inline struct mxr_shape channel_last(const struct mxr_shape *s) {
  struct mxr_shape r = *s;
  r.dim[s->ndim - 1] = s->dim[1];
  for (int i = 1; i < s->ndim - 1; i++) r.dim[i] = s->dim[i + 1];
  return r;
}

static inline int check_float_tensors(const char *op, const struct mxr_tensor *t, int n) {
  for (int i = 0; i < n; i++)
    if (t[i].dtype != t[0].dtype || (t[i].dtype != MXR_FLOAT32 && t[i].dtype != MXR_FLOAT64))
      return mxr_set_error(MXR_EINVAL, "%s: tensors must all be float32 or all float64", op);
  return 0;
}

static inline int check_tensor_shape(const char *op, const char *what, const struct mxr_tensor *t,
                                     const struct mxr_shape *want) {
  char a[96], b[96];
  if (mxr_shape_equal(&t->shape, want)) return 0;
  return mxr_set_error(MXR_EINVAL, "%s: %s has shape %s, expected %s", op, what,
                       mxr_shape_str(&t->shape, a, sizeof a), mxr_shape_str(want, b, sizeof b));
}

#endif /* MXR_OP_CONV_COMMON_H */
