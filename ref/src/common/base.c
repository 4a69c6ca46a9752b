/* dtype helpers (mxref/base.h). */
#include <stdio.h>

#include "mxref/base.h"

struct dtype_row {
  const char *name;
  size_t size;
};

/* Indexed by enum mxr_dtype. */
static const struct dtype_row dtypes[] = {
    [MXR_FLOAT32] = {"float32", 4}, [MXR_FLOAT64] = {"float64", 8},
    [MXR_FLOAT16] = {"float16", 2}, [MXR_UINT8] = {"uint8", 1},
    [MXR_INT32] = {"int32", 4},     [MXR_INT8] = {"int8", 1},
    [MXR_INT64] = {"int64", 8},     [MXR_BOOL] = {"bool", 1},
};

static const struct dtype_row *dtype_row(int dtype) {
  if (dtype < 0 || (size_t)dtype >= sizeof dtypes / sizeof dtypes[0]) return NULL;
  return &dtypes[dtype];
}

size_t mxr_dtype_size(int dtype) {
  const struct dtype_row *r = dtype_row(dtype);
  return r ? r->size : 0;
}

const char *mxr_dtype_name(int dtype) {
  const struct dtype_row *r = dtype_row(dtype);
  return r ? r->name : NULL;
}

int64_t mxr_shape_size(const struct mxr_shape *s) {
  if (s->ndim < 0) return -1;
  int64_t n = 1;
  for (int i = 0; i < s->ndim; i++) n *= s->dim[i];
  return n;
}

int mxr_shape_equal(const struct mxr_shape *a, const struct mxr_shape *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->dim[i] != b->dim[i]) return 0;
  return 1;
}

char *mxr_shape_str(const struct mxr_shape *s, char *buf, size_t size) {
  if (size == 0) return buf;
  if (s->ndim < 0) {
    snprintf(buf, size, "?");
    return buf;
  }
  size_t used = (size_t)snprintf(buf, size, "(");
  for (int i = 0; i < s->ndim && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, i ? ",%lld" : "%lld", (long long)s->dim[i]);
  if (used < size) snprintf(buf + used, size - used, s->ndim == 1 ? ",)" : ")");
  return buf;
}
