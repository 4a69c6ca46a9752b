/* dtype helpers (mxref/base.h). */
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
