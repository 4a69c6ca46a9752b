/*
 * mxref/ndarray.h: n-dimensional arrays whose reads and writes are ordered by
 * the engine.
 *
 * An array is a reference-counted chunk: memory (allocated on first need when
 * created with delay_alloc), an engine var that orders every access, a shape,
 * a dtype and a context.  mxr_ndarray_create*() returns a handle with one
 * reference; mxr_ndarray_retain() adds one, mxr_ndarray_free() drops one.
 * When the last reference is dropped the memory is freed through the engine:
 * a delete-var op runs after every op already pushed on the array, so freeing
 * an array that pending ops still use is safe.
 *
 * Arrays use the engine they were created with, which must outlive them.
 */
#ifndef MXREF_NDARRAY_H
#define MXREF_NDARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "mxref/base.h"
#include "mxref/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mxr_ndarray mxr_ndarray;

/* Create an array of `shape[0..ndim)` (ndim 0 is a scalar of one element;
 * a zero dimension gives an empty array).  Fails with MXR_EINVAL on a bad
 * ndim, a negative dimension, an unknown dtype or a size that overflows. */
int mxr_ndarray_create(mxr_engine *eng, const int64_t *shape, int ndim,
                       struct mxr_context ctx, int dtype, int delay_alloc,
                       mxr_ndarray **out);

/* An array with no shape and no memory (MXNDArrayCreateNone); a placeholder
 * an op fills in later. */
int mxr_ndarray_create_none(mxr_engine *eng, mxr_ndarray **out);

/* A view of base's memory (MXNet's Slice, At and Reshape): `shape` over
 * the elements from elem_offset on, same dtype and context.  It shares
 * base's var (ops on either are ordered as ops on one array) and memory,
 * and holds a reference to base.  MXR_EINVAL when the elements run past
 * base's end or base is none. */
int mxr_ndarray_view(mxr_ndarray *base, int64_t elem_offset, const int64_t *shape, int ndim,
                     mxr_ndarray **out);

mxr_ndarray *mxr_ndarray_retain(mxr_ndarray *arr);

/* Drop one reference.  NULL is a no-op. */
void mxr_ndarray_free(mxr_ndarray *arr);

int mxr_ndarray_is_none(const mxr_ndarray *arr);
int mxr_ndarray_ndim(const mxr_ndarray *arr);
/* The shape array (ndim entries), valid while the array lives. */
const int64_t *mxr_ndarray_shape(const mxr_ndarray *arr);
int64_t mxr_ndarray_size(const mxr_ndarray *arr); /* number of elements */
int mxr_ndarray_dtype(const mxr_ndarray *arr);
struct mxr_context mxr_ndarray_context(const mxr_ndarray *arr);
mxr_var *mxr_ndarray_var(const mxr_ndarray *arr);

/* Make sure the memory exists (allocates a delayed array). */
int mxr_ndarray_ensure_alloc(mxr_ndarray *arr);

/* The data pointer, allocating first if needed; NULL for an empty or none
 * array.  Only ops that hold the array's var (or a caller that waited for it)
 * may touch the memory. */
void *mxr_ndarray_data(mxr_ndarray *arr);

/* Copy `count` elements between host memory and the array, waiting as
 * needed.  count must equal the array's size (MXR_EINVAL otherwise). */
int mxr_ndarray_sync_copy_from_cpu(mxr_ndarray *arr, const void *src, size_t count);
int mxr_ndarray_sync_copy_to_cpu(mxr_ndarray *arr, void *dst, size_t count);

/* Copy src's elements into dst (same element count and dtype; shapes may
 * differ) through an engine op ordered after src's writes and dst's
 * accesses; returns after the push.  A copy that touches a GPU runs on that
 * GPU's copy workers (MXNet's CopyCPU2GPU, CopyGPU2CPU, CopyGPU2GPU); a host
 * copy is a CopyCPU2CPU op.  Both arrays must use the same engine. */
int mxr_ndarray_copy_to(mxr_ndarray *src, mxr_ndarray *dst);

/* Wait until pending writes (to_read) or all pending accesses (to_write)
 * have finished; returns an error an op left on the array. */
int mxr_ndarray_wait_to_read(mxr_ndarray *arr);
int mxr_ndarray_wait_to_write(mxr_ndarray *arr);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_NDARRAY_H */
