/*
 * C API: NDArrays seen through other NDArrays: views (slice, at, reshape,
 * detach), shallow copies, autograd's gradient arrays and their fresh
 * flag, and the storage type (always dense here).
 */
#include <stdbool.h>
#include <string.h>

#include "capi/capi_internal.h"

/* A new handle for a view of arr (shape over elements from offset on). */
static int view(mxr_ndarray *arr, int64_t offset, const int64_t *shape, int ndim,
                NDArrayHandle *out) {
  mxr_ndarray *v = NULL;
  int st = mxr_ndarray_view(arr, offset, shape, ndim, &v);
  if (!st) st = mxr__capi_wrap_ndarray(v, out);
  return capi_ret(st);
}

/* Unwrap a handle to an array with a shape, and check the out pointer. */
static int shaped(NDArrayHandle handle, const char *fn, void *out, mxr_ndarray **arr) {
  if (mxr__capi_ndarray(handle, fn, "handle", arr)) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  if (mxr_ndarray_is_none(*arr) || mxr_ndarray_ndim(*arr) < 1)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: the array has no first dimension to index", fn));
  return 0;
}

/* Elements in one index of the first dimension. */
static int64_t row_size(mxr_ndarray *arr) {
  const int64_t *s = mxr_ndarray_shape(arr);
  int64_t n = 1;
  for (int i = 1; i < mxr_ndarray_ndim(arr); i++) n *= s[i];
  return n;
}

int MXNDArraySlice(NDArrayHandle handle, uint32_t slice_begin, uint32_t slice_end,
                   NDArrayHandle *out) {
  static const char fn[] = "MXNDArraySlice";
  mxr_ndarray *arr;
  if (shaped(handle, fn, out, &arr)) return -1;
  int64_t rows = mxr_ndarray_shape(arr)[0];
  if (slice_begin > slice_end || slice_end > rows)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: slice [%u, %u) is outside the first dimension (%lld)",
                                  fn, slice_begin, slice_end, (long long)rows));
  int64_t shape[MXR_MAX_NDIM];
  memcpy(shape, mxr_ndarray_shape(arr), (size_t)mxr_ndarray_ndim(arr) * sizeof *shape);
  shape[0] = slice_end - slice_begin;
  return view(arr, slice_begin * row_size(arr), shape, mxr_ndarray_ndim(arr), out);
}

int MXNDArrayAt(NDArrayHandle handle, uint32_t idx, NDArrayHandle *out) {
  static const char fn[] = "MXNDArrayAt";
  mxr_ndarray *arr;
  if (shaped(handle, fn, out, &arr)) return -1;
  int64_t rows = mxr_ndarray_shape(arr)[0];
  if (idx >= rows)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: index %u is outside the first dimension (%lld)", fn,
                                  idx, (long long)rows));
  int ndim = mxr_ndarray_ndim(arr);
  /* MXNet keeps one dimension when indexing a vector. */
  int64_t one = 1;
  const int64_t *shape = ndim > 1 ? mxr_ndarray_shape(arr) + 1 : &one;
  return view(arr, idx * row_size(arr), shape, ndim > 1 ? ndim - 1 : 1, out);
}

/* MXNet's reshape codes: 0 copies the input dimension, -1 is inferred from
 * the others; -2, -3 and -4 are not supported here. */
static int reshape_dims(const char *fn, const int64_t *in, int in_ndim, int64_t size,
                        const dim_t *dims, int ndim, int64_t *out) {
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < ndim; i++) {
    int64_t d = dims[i];
    if (d == 0 && i < in_ndim) d = in[i];
    if (d == -1 && infer < 0) {
      infer = i;
      continue;
    }
    if (d < 0)
      return mxr_set_error(MXR_EINVAL, "%s: reshape code %lld is not supported by libmxref (only 0 and one -1)",
                           fn, (long long)dims[i]);
    out[i] = d;
    known *= d;
  }
  if (infer >= 0) out[infer] = known ? size / known : 0;
  int64_t total = 1;
  for (int i = 0; i < ndim; i++) total *= out[i];
  if (total != size)
    return mxr_set_error(MXR_EINVAL, "%s: cannot reshape %lld elements into a shape of %lld", fn,
                         (long long)size, (long long)total);
  return 0;
}

int MXNDArrayReshape64(NDArrayHandle handle, int ndim, dim_t *dims, bool reverse, NDArrayHandle *out) {
  static const char fn[] = "MXNDArrayReshape64";
  mxr_ndarray *arr;
  if (mxr__capi_ndarray(handle, fn, "handle", &arr)) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  if (ndim < 0 || ndim > MXR_MAX_NDIM || (ndim > 0 && !dims))
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: ndim %d is outside 0..%d (or dims is NULL)", fn, ndim,
                                  MXR_MAX_NDIM));
  if (mxr_ndarray_is_none(arr)) return capi_ret(mxr_set_error(MXR_EINVAL, "%s: the array is none", fn));
  int in_ndim = mxr_ndarray_ndim(arr);
  int64_t in[MXR_MAX_NDIM], shape[MXR_MAX_NDIM];
  dim_t want[MXR_MAX_NDIM];
  /* reverse: codes match the input's dimensions from the right. */
  for (int i = 0; i < in_ndim; i++) in[i] = mxr_ndarray_shape(arr)[reverse ? in_ndim - 1 - i : i];
  for (int i = 0; i < ndim; i++) want[i] = dims[reverse ? ndim - 1 - i : i];
  if (reshape_dims(fn, in, in_ndim, mxr_ndarray_size(arr), want, ndim, shape)) return -1;
  if (reverse)
    for (int i = 0; i < ndim / 2; i++) {
      int64_t t = shape[i];
      shape[i] = shape[ndim - 1 - i];
      shape[ndim - 1 - i] = t;
    }
  return view(arr, 0, shape, ndim, out);
}

int MXNDArrayReshape(NDArrayHandle handle, int ndim, int *dims, NDArrayHandle *out) {
  dim_t wide[MXR_MAX_NDIM];
  if (ndim > MXR_MAX_NDIM || ndim < 0)
    return capi_ret(mxr_set_error(MXR_EINVAL, "MXNDArrayReshape: ndim %d is outside 0..%d", ndim, MXR_MAX_NDIM));
  for (int i = 0; dims && i < ndim; i++) wide[i] = dims[i];
  return MXNDArrayReshape64(handle, ndim, dims ? wide : NULL, false, out);
}

/* The same memory without the autograd history. */
int MXNDArrayDetach(NDArrayHandle handle, NDArrayHandle *out) {
  static const char fn[] = "MXNDArrayDetach";
  mxr_ndarray *arr;
  if (mxr__capi_ndarray(handle, fn, "handle", &arr)) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  if (mxr_ndarray_is_none(arr)) return capi_ret(mxr_set_error(MXR_EINVAL, "%s: the array is none", fn));
  return view(arr, 0, mxr_ndarray_shape(arr), mxr_ndarray_ndim(arr), out);
}

int MXShallowCopyNDArray(NDArrayHandle src, NDArrayHandle *out) {
  static const char fn[] = "MXShallowCopyNDArray";
  mxr_ndarray *arr;
  if (mxr__capi_ndarray(src, fn, "src", &arr)) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  return capi_ret(mxr__capi_wrap_ndarray(mxr_ndarray_retain(arr), out));
}

int MXNDArrayGetStorageType(NDArrayHandle handle, int *out_storage_type) {
  static const char fn[] = "MXNDArrayGetStorageType";
  mxr_ndarray *arr;
  if (mxr__capi_ndarray(handle, fn, "handle", &arr)) return -1;
  if (!out_storage_type) return capi_ret(mxr__capi_null(fn, "out_storage_type"));
  /* MXNet: -1 undefined (a placeholder), 0 default (dense). */
  *out_storage_type = mxr_ndarray_is_none(arr) ? -1 : 0;
  return 0;
}

int MXNDArrayGetGrad(NDArrayHandle handle, NDArrayHandle *out) {
  static const char fn[] = "MXNDArrayGetGrad";
  mxr_ndarray *arr;
  if (mxr__capi_ndarray(handle, fn, "handle", &arr)) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  mxr_ndarray *grad = mxr_autograd_get_grad(arr);
  if (!grad) {
    *out = NULL; /* not marked: MXNet returns no handle */
    return 0;
  }
  return capi_ret(mxr__capi_wrap_ndarray(grad, out));
}

int MXNDArrayGetGradState(NDArrayHandle handle, int *out) {
  static const char fn[] = "MXNDArrayGetGradState";
  mxr_ndarray *arr;
  if (mxr__capi_ndarray(handle, fn, "handle", &arr)) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  *out = mxr_autograd_fresh_grad(arr);
  return 0;
}

int MXNDArraySetGradState(NDArrayHandle handle, int state) {
  static const char fn[] = "MXNDArraySetGradState";
  mxr_ndarray *arr;
  if (mxr__capi_ndarray(handle, fn, "handle", &arr)) return -1;
  /* MXNet keeps the flag on any array; only marked variables have one here. */
  if (!mxr_autograd_fresh_grad(arr) && !state) return 0;
  return capi_ret(mxr_autograd_set_fresh_grad(arr, state));
}
