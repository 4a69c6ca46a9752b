/* C API: NDArrays. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "capi/capi_internal.h"
#include "mxref/engine.h"

int MXNDArrayCreateEx(const uint32_t *shape, uint32_t ndim, int dev_type, int dev_id,
                      int delay_alloc, int dtype, NDArrayHandle *out) {
  static const char fn[] = "MXNDArrayCreateEx";
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  if (ndim > MXR_MAX_NDIM)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: ndim %u is more than the %d dimensions supported", fn,
                                  (unsigned)ndim, MXR_MAX_NDIM));
  if (ndim > 0 && !shape) return capi_ret(mxr__capi_null(fn, "shape"));
  int st = mxr__capi_check_device(fn, dev_type, dev_id);
  if (st) return -1;
  if (mxr_dtype_size(dtype) == 0)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: unknown dtype %d", fn, dtype));
  int64_t dims[MXR_MAX_NDIM], size = 1;
  for (uint32_t i = 0; i < ndim; i++) {
    if (shape[i] > INT_MAX)
      return capi_ret(mxr_set_error(MXR_EINVAL, "%s: dimension %u is %u, more than %d", fn, (unsigned)i,
                                    (unsigned)shape[i], INT_MAX));
    dims[i] = shape[i];
    if (size < CAPI_MAX_ELEMENTS) size *= dims[i]; /* cannot overflow: both < 2^31 */
  }
  for (uint32_t i = 0; i < ndim; i++)
    if (dims[i] == 0) size = 0;
  if (size >= CAPI_MAX_ELEMENTS)
    return capi_ret(mxr_set_error(MXR_EINVAL,
                                  "%s: an array of 2^31 - 1 elements or more needs INT64_TENSOR_SIZE, "
                                  "which this build does not have (as MXNet 1.9.1's default)",
                                  fn));
  mxr_engine *eng;
  st = mxr_engine_default(&eng);
  mxr_ndarray *arr = NULL;
  struct mxr_context ctx = {dev_type, dev_id};
  if (!st) st = mxr_ndarray_create(eng, dims, (int)ndim, ctx, dtype, delay_alloc != 0, &arr);
  if (!st) st = mxr__capi_wrap_ndarray(arr, out);
  return capi_ret(st);
}

int MXNDArrayCreateNone(NDArrayHandle *out) {
  if (!out) return capi_ret(mxr__capi_null("MXNDArrayCreateNone", "out"));
  mxr_engine *eng;
  int st = mxr_engine_default(&eng);
  mxr_ndarray *arr = NULL;
  if (!st) st = mxr_ndarray_create_none(eng, &arr);
  if (!st) st = mxr__capi_wrap_ndarray(arr, out);
  return capi_ret(st);
}

int MXNDArrayFree(NDArrayHandle handle) {
  int st = mxr__capi_check(handle, CAPI_NDARRAY, "MXNDArrayFree", "handle");
  if (st) return -1;
  struct capi_ndarray *h = handle;
  mxr_ndarray *arr = h->arr;
  mxr__capi_handle_release(h);
  mxr_ndarray_free(arr);
  return 0;
}

static int copy_check(const char *fn, mxr_ndarray *arr, const void *data, size_t size) {
  if (mxr_ndarray_is_none(arr))
    return mxr_set_error(MXR_EINVAL, "%s: the array is a placeholder with no shape", fn);
  int64_t n = mxr_ndarray_size(arr);
  if (size != (size_t)n)
    return mxr_set_error(MXR_EINVAL, "%s: the array has %lld elements, %zu given (sizes count elements)",
                         fn, (long long)n, size);
  if (!data && size > 0) return mxr__capi_null(fn, "data");
  return 0;
}

int MXNDArraySyncCopyFromCPU(NDArrayHandle handle, const void *data, size_t size) {
  static const char fn[] = "MXNDArraySyncCopyFromCPU";
  mxr_ndarray *arr;
  int st = mxr__capi_ndarray(handle, fn, "handle", &arr);
  if (!st) st = copy_check(fn, arr, data, size);
  if (!st && size > 0) st = mxr_ndarray_sync_copy_from_cpu(arr, data, size);
  return capi_ret(st);
}

int MXNDArraySyncCopyToCPU(NDArrayHandle handle, void *data, size_t size) {
  static const char fn[] = "MXNDArraySyncCopyToCPU";
  mxr_ndarray *arr;
  int st = mxr__capi_ndarray(handle, fn, "handle", &arr);
  if (!st) st = copy_check(fn, arr, data, size);
  if (!st && size > 0) st = mxr_ndarray_sync_copy_to_cpu(arr, data, size);
  return capi_ret(st);
}

/* The shape as MXNet prints it, "(2,3)" or "(4,)", into buf. */
static const char *shape_text(mxr_ndarray *arr, char *buf, size_t cap) {
  const int64_t *s = mxr_ndarray_shape(arr);
  int nd = mxr_ndarray_ndim(arr);
  size_t used = (size_t)snprintf(buf, cap, "(");
  for (int d = 0; d < nd && used < cap; d++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", d ? "," : "", (long long)s[d]);
  if (used < cap) snprintf(buf + used, cap - used, nd == 1 ? ",)" : ")");
  return buf;
}

static bool same_shape(mxr_ndarray *a, mxr_ndarray *b) {
  int nd = mxr_ndarray_ndim(a);
  if (nd != mxr_ndarray_ndim(b)) return false;
  const int64_t *sa = mxr_ndarray_shape(a), *sb = mxr_ndarray_shape(b);
  for (int d = 0; d < nd; d++)
    if (sa[d] != sb[d]) return false;
  return true;
}

/* MXNet copies src's data into dst's data (i = -1) or into dst's auxiliary
 * array i (i >= 0, a sparse dst), then waits for the copy.  Every array
 * here is dense, so only i = -1 can succeed.  Where MXNet would reshape dst
 * to src's shape or cast between dtypes, we refuse: dst keeps the shape
 * and dtype it was created with, and the copy writes exactly its size. */
int MXNDArraySyncCopyFromNDArray(NDArrayHandle handle_dst, const NDArrayHandle handle_src, const int i) {
  static const char fn[] = "MXNDArraySyncCopyFromNDArray";
  mxr_ndarray *dst, *src;
  int st = mxr__capi_ndarray(handle_dst, fn, "handle_dst", &dst);
  if (!st) st = mxr__capi_ndarray(handle_src, fn, "handle_src", &src);
  if (st) return -1;
  if (i >= 0)
    return capi_ret(mxr_set_error(MXR_ENOTIMPL,
                                  "%s: i = %d names an auxiliary array of a sparse destination; sparse "
                                  "storage is not implemented by libmxref, so no array has one",
                                  fn, i));
  if (i != -1)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: i = %d: -1 copies the data, i >= 0 an auxiliary array",
                                  fn, i));
  if (mxr_ndarray_is_none(src) || mxr_ndarray_is_none(dst))
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: the %s is a placeholder with no shape", fn,
                                  mxr_ndarray_is_none(src) ? "source" : "destination"));
  char ss[MXR_MAX_NDIM * 24 + 3], ds[MXR_MAX_NDIM * 24 + 3];
  if (!same_shape(src, dst))
    return capi_ret(mxr_set_error(MXR_EINVAL,
                                  "%s: the source's shape %s differs from the destination's %s "
                                  "(libmxref does not reshape the destination)",
                                  fn, shape_text(src, ss, sizeof ss), shape_text(dst, ds, sizeof ds)));
  if (mxr_ndarray_dtype(src) != mxr_ndarray_dtype(dst))
    return capi_ret(mxr_set_error(MXR_EINVAL,
                                  "%s: the source's dtype %s differs from the destination's %s "
                                  "(libmxref does not cast in this copy)",
                                  fn, mxr_dtype_name(mxr_ndarray_dtype(src)),
                                  mxr_dtype_name(mxr_ndarray_dtype(dst))));
  if (src == dst) return 0; /* MXNet skips a copy onto itself */
  if (mxr_ndarray_var(src) == mxr_ndarray_var(dst))
    return capi_ret(mxr_set_error(MXR_EINVAL,
                                  "%s: the source and the destination share memory (one is a view "
                                  "of the other, or both of one array)",
                                  fn));
  st = mxr_ndarray_copy_to(src, dst);
  if (!st) st = mxr_ndarray_wait_to_read(dst);
  return capi_ret(st);
}

int MXNDArrayWaitToRead(NDArrayHandle handle) {
  mxr_ndarray *arr;
  int st = mxr__capi_ndarray(handle, "MXNDArrayWaitToRead", "handle", &arr);
  if (!st && !mxr_ndarray_is_none(arr)) st = mxr_ndarray_wait_to_read(arr);
  return capi_ret(st);
}

int MXNDArrayWaitToWrite(NDArrayHandle handle) {
  mxr_ndarray *arr;
  int st = mxr__capi_ndarray(handle, "MXNDArrayWaitToWrite", "handle", &arr);
  if (!st && !mxr_ndarray_is_none(arr)) st = mxr_ndarray_wait_to_write(arr);
  return capi_ret(st);
}

int MXNDArrayWaitAll(void) {
  mxr_engine *eng;
  int st = mxr_engine_default(&eng);
  if (!st) st = mxr_engine_wait_for_all(eng);
  return capi_ret(st);
}

int MXNDArrayGetShapeEx(NDArrayHandle handle, int *out_dim, const int **out_pdata) {
  static const char fn[] = "MXNDArrayGetShapeEx";
  mxr_ndarray *arr;
  int st = mxr__capi_ndarray(handle, fn, "handle", &arr);
  if (!st && (!out_dim || !out_pdata)) st = mxr__capi_null(fn, "an out pointer");
  struct capi_tls *t = st ? NULL : mxr__capi_tls();
  if (!st && !t) st = MXR_ENOMEM;
  int ndim = st || mxr_ndarray_is_none(arr) ? 0 : mxr_ndarray_ndim(arr);
  if (!st) st = mxr__capi_reserve(&t->shape, (size_t)(ndim + 1) * sizeof(int));
  if (st) return -1;
  /* MXNet's legacy shapes: a placeholder (unknown shape) has ndim 0. */
  int *dims = t->shape.p;
  const int64_t *s = ndim ? mxr_ndarray_shape(arr) : NULL;
  for (int i = 0; i < ndim; i++) {
    if (s[i] > INT_MAX)
      return capi_ret(mxr_set_error(MXR_EINVAL, "%s: dimension %d (%lld) does not fit an int", fn, i,
                                    (long long)s[i]));
    dims[i] = (int)s[i];
  }
  *out_dim = ndim;
  *out_pdata = dims;
  return 0;
}

int MXNDArrayGetDType(NDArrayHandle handle, int *out_dtype) {
  static const char fn[] = "MXNDArrayGetDType";
  mxr_ndarray *arr;
  int st = mxr__capi_ndarray(handle, fn, "handle", &arr);
  if (!st && !out_dtype) st = mxr__capi_null(fn, "out_dtype");
  if (st) return -1;
  *out_dtype = mxr_ndarray_is_none(arr) ? -1 : mxr_ndarray_dtype(arr);
  return 0;
}

int MXNDArrayGetContext(NDArrayHandle handle, int *out_dev_type, int *out_dev_id) {
  static const char fn[] = "MXNDArrayGetContext";
  mxr_ndarray *arr;
  int st = mxr__capi_ndarray(handle, fn, "handle", &arr);
  if (!st && (!out_dev_type || !out_dev_id)) st = mxr__capi_null(fn, "an out pointer");
  if (st) return -1;
  if (mxr_ndarray_is_none(arr)) {
    *out_dev_type = 0;
    *out_dev_id = 0;
  } else {
    struct mxr_context c = mxr_ndarray_context(arr);
    *out_dev_type = c.dev_type;
    *out_dev_id = c.dev_id;
  }
  return 0;
}

int MXNDArrayGetData(NDArrayHandle handle, void **out_pdata) {
  static const char fn[] = "MXNDArrayGetData";
  mxr_ndarray *arr;
  int st = mxr__capi_ndarray(handle, fn, "handle", &arr);
  if (!st && !out_pdata) st = mxr__capi_null(fn, "out_pdata");
  if (st) return -1;
  if (mxr_ndarray_is_none(arr)) {
    *out_pdata = NULL;
    return 0;
  }
  st = mxr_ndarray_ensure_alloc(arr);
  if (st) return -1;
  *out_pdata = mxr_ndarray_data(arr);
  return 0;
}
