/*
 * N-dimensional arrays over the engine (mxref/ndarray.h).
 *
 * An array is one reference-counted chunk: its engine var, its shape, dtype
 * and context, and its memory.  There are no views yet, so the handle and the
 * chunk are the same object; when reshape/slice arrive, the shape moves into
 * a per-view handle that points at a shared chunk.
 *
 * Memory lifetime.  Ops may still be queued on the array's var when the last
 * reference is dropped, and they may hold the data pointer (taken at push
 * time).  So the memory is not freed at that point: its storage handle is
 * handed to a delete-var op that the engine runs after every op pushed
 * before it.  The handle lives in its own heap block from creation on, so
 * that the last free never has to allocate (and so cannot fail half-way).
 * An op that needs the array object itself from a worker (e.g. to allocate a
 * delayed array there) must hold a reference to it.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/recycle.h"
#include "common/threads.h"
#include "mxref/error.h"
#include "mxref/ndarray.h"
#include "mxref/storage.h"
#include "ndarray/ndarray_internal.h"
#include "storage/storage_internal.h"

struct mxr_ndarray {
  atomic_long refs;
  mxr_engine *eng;
  mxr_var *var;
  int ndim; /* -1 for a none array */
  int64_t shape[MXR_MAX_NDIM];
  int64_t size;  /* elements */
  size_t nbytes; /* size * dtype size; fits in size_t and ptrdiff_t */
  int dtype;
  struct mxr_context ctx;

  /* Delayed allocation: `allocated` is the fast path (acquire pairs with the
   * release store after the allocation, so whoever sees it true also sees
   * *mem filled in); `alloc_mu` makes exactly one thread allocate. */
  atomic_bool allocated;
  pthread_mutex_t alloc_mu;
  struct mxr_storage *mem; /* owned (a view's is its base's); given to the delete op at the end */

  /* A view (mxr_ndarray_view) shares the var and memory of `base`, a
   * reference it holds (never itself a view), from byte `offset` on. */
  mxr_ndarray *base;
  size_t offset;

  /* Autograd's record of this array (imperative/autograd.c), released with
   * the array.  Only the thread that records touches it. */
  void *autograd;
  void (*autograd_release)(void *);
};

void mxr__ndarray_set_autograd(mxr_ndarray *arr, void *entry, void (*release)(void *)) {
  if (arr->autograd && arr->autograd_release) arr->autograd_release(arr->autograd);
  arr->autograd = entry;
  arr->autograd_release = release;
}

void *mxr__ndarray_autograd(const mxr_ndarray *arr) { return arr ? arr->autograd : NULL; }

/* Array objects and storage handles: made on the thread that calls, often
 * freed on an engine worker (common/recycle.h). */
static struct mxr__recycler array_blocks = MXR_RECYCLER_INIT(sizeof(mxr_ndarray), 4096);
static struct mxr__recycler handle_blocks = MXR_RECYCLER_INIT(sizeof(struct mxr_storage), 4096);

static void *take_zeroed(struct mxr__recycler *r) {
  void *p = mxr__recycler_take(r);
  if (p) memset(p, 0, r->size);
  return p;
}

/* ---------------------------------------------------------------------------
 * Releasing memory through the engine. */

/* The delete-var op: frees the memory once every earlier op on the var has
 * finished. */
static int free_storage_op(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  mxr_storage_free(param);
  return 0;
}

/* The delete op's param_free.  mxr_storage_free() empties the handle, so this
 * frees nothing more when the op ran; when the engine skipped the op (its var
 * carried an error; the earlier ops have finished by then all the same) the
 * memory is released here instead of leaking. */
static void free_storage_param(void *param) {
  mxr_storage_free(param);
  mxr__recycler_give(&handle_blocks, param);
}

/* Free the array object; its memory and var go through the engine. */
static void destroy(mxr_ndarray *arr) {
  if (arr->autograd && arr->autograd_release) arr->autograd_release(arr->autograd);
  if (arr->base) { /* the var and memory are the base's */
    mxr_ndarray_free(arr->base);
    mxr_mutex_destroy(&arr->alloc_mu);
    mxr__recycler_give(&array_blocks, arr);
    return;
  }
  /* The engine owns `mem` from this call on, whatever it returns (it calls
   * free_storage_param itself when the push fails).  A failure here would
   * mean the var is not a live var of this engine, a broken invariant
   * with nothing left for the caller to do, so the status is dropped. */
  (void)mxr_engine_delete_var(arr->eng, arr->var, free_storage_op, arr->mem,
                              free_storage_param);
  mxr_mutex_destroy(&arr->alloc_mu);
  mxr__recycler_give(&array_blocks, arr);
}

/* ---------------------------------------------------------------------------
 * Creation. */

static int valid_context(struct mxr_context ctx) {
  switch (ctx.dev_type) {
  case MXR_DEV_CPU:
  case MXR_DEV_GPU:
  case MXR_DEV_CPU_PINNED:
  case MXR_DEV_CPU_SHARED: return ctx.dev_id >= 0;
  default: return 0;
  }
}

/* Check the shape and compute the element and byte counts.  Returns 0 or
 * MXR_EINVAL with a message prefixed by `fn`. */
static int check_shape(const char *fn, const int64_t *shape, int ndim, int dtype,
                       int64_t *size_out, size_t *nbytes_out) {
  if (ndim < 0 || ndim > MXR_MAX_NDIM)
    return mxr_set_error(MXR_EINVAL, "%s: ndim %d is outside 0..%d", fn, ndim, MXR_MAX_NDIM);
  if (ndim > 0 && shape == NULL)
    return mxr_set_error(MXR_EINVAL, "%s: shape is NULL but ndim is %d", fn, ndim);
  size_t esize = mxr_dtype_size(dtype);
  if (esize == 0)
    return mxr_set_error(MXR_EINVAL,
                         "%s: unknown dtype %d (expected 0..7: float32, float64, float16, uint8, "
                         "int32, int8, int64, bool)",
                         fn, dtype);

  bool empty = false;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return mxr_set_error(MXR_EINVAL, "%s: shape[%d] is %" PRId64 "; dimensions must be >= 0",
                           fn, i, shape[i]);
    if (shape[i] == 0) empty = true;
  }
  /* A zero dimension makes the array empty whatever the others are, so the
   * overflow check only applies to arrays with elements. */
  int64_t size = empty ? 0 : 1;
  if (!empty) {
    /* No allocation may exceed PTRDIFF_MAX bytes (see storage.c). */
    const int64_t max_elems = (int64_t)((size_t)PTRDIFF_MAX / esize);
    for (int i = 0; i < ndim; i++) {
      if (size > max_elems / shape[i])
        return mxr_set_error(MXR_EINVAL,
                             "%s: shape[%d] = %" PRId64 " makes the array too large: more than "
                             "%" PRId64 " %s elements",
                             fn, i, shape[i], max_elems, mxr_dtype_name(dtype));
      size *= shape[i];
    }
  }
  *size_out = size;
  *nbytes_out = (size_t)size * esize;
  return 0;
}

/* The common part of both constructors: the object, its mutex, its storage
 * handle and its var.  Shape fields are the caller's. */
static int new_array(const char *fn, mxr_engine *eng, mxr_ndarray **out) {
  mxr_ndarray *arr = take_zeroed(&array_blocks);
  struct mxr_storage *mem = take_zeroed(&handle_blocks);
  int rc = arr && mem ? mxr__mutex_init(&arr->alloc_mu, "an ndarray")
                      : mxr_set_error(MXR_ENOMEM, "%s: out of memory for the array object", fn);
  if (rc == 0) {
    rc = mxr_engine_new_var(eng, &arr->var);
    if (rc != 0) mxr_mutex_destroy(&arr->alloc_mu);
  }
  if (rc != 0) {
    mxr__recycler_give(&array_blocks, arr);
    mxr__recycler_give(&handle_blocks, mem);
    return rc;
  }
  atomic_init(&arr->refs, 1);
  atomic_init(&arr->allocated, false);
  arr->eng = eng;
  arr->mem = mem;
  *out = arr;
  return 0;
}

int mxr_ndarray_create(mxr_engine *eng, const int64_t *shape, int ndim, struct mxr_context ctx,
                       int dtype, int delay_alloc, mxr_ndarray **out) {
  static const char fn[] = "mxr_ndarray_create";
  if (out == NULL) return mxr_set_error(MXR_EINVAL, "%s: out is NULL", fn);
  *out = NULL;
  if (eng == NULL) return mxr_set_error(MXR_EINVAL, "%s: engine is NULL", fn);
  if (!valid_context(ctx))
    return mxr_set_error(MXR_EINVAL, "%s: invalid context (dev_type %d, dev_id %d)", fn,
                         ctx.dev_type, ctx.dev_id);
  int64_t size = 0;
  size_t nbytes = 0;
  int rc = check_shape(fn, shape, ndim, dtype, &size, &nbytes);
  if (rc != 0) return rc;

  mxr_ndarray *arr;
  rc = new_array(fn, eng, &arr);
  if (rc != 0) return rc;
  arr->ndim = ndim;
  for (int i = 0; i < ndim; i++) arr->shape[i] = shape[i];
  arr->size = size;
  arr->nbytes = nbytes;
  arr->dtype = dtype;
  arr->ctx = ctx;

  if (!delay_alloc) {
    rc = mxr_ndarray_ensure_alloc(arr);
    if (rc != 0) {
      /* No op was pushed on the var, so its delete op has nothing to wait
       * for.  The allocation's message stays the last error unless the
       * release itself fails. */
      destroy(arr);
      return rc;
    }
  }
  *out = arr;
  return 0;
}

int mxr_ndarray_create_none(mxr_engine *eng, mxr_ndarray **out) {
  static const char fn[] = "mxr_ndarray_create_none";
  if (out == NULL) return mxr_set_error(MXR_EINVAL, "%s: out is NULL", fn);
  *out = NULL;
  if (eng == NULL) return mxr_set_error(MXR_EINVAL, "%s: engine is NULL", fn);
  /* A none array keeps a var too, so that ops can already be ordered on it
   * and every array is released the same way. */
  mxr_ndarray *arr;
  int rc = new_array(fn, eng, &arr);
  if (rc != 0) return rc;
  arr->ndim = -1;
  arr->size = 0;
  arr->nbytes = 0;
  arr->dtype = MXR_FLOAT32; /* MXNet's default type flag */
  arr->ctx = mxr_cpu(0);
  *out = arr;
  return 0;
}

int mxr_ndarray_view(mxr_ndarray *base, int64_t elem_offset, const int64_t *shape, int ndim,
                     mxr_ndarray **out) {
  static const char fn[] = "mxr_ndarray_view";
  if (out == NULL || base == NULL) return mxr_set_error(MXR_EINVAL, "%s: NULL argument", fn);
  *out = NULL;
  if (base->ndim < 0) return mxr_set_error(MXR_EINVAL, "%s: the base array is none", fn);
  int64_t size = 0;
  size_t nbytes = 0;
  int rc = check_shape(fn, shape, ndim, base->dtype, &size, &nbytes);
  if (rc != 0) return rc;
  if (elem_offset < 0 || elem_offset > base->size || size > base->size - elem_offset)
    return mxr_set_error(MXR_EINVAL,
                         "%s: %" PRId64 " elements from element %" PRId64 " run past the base "
                         "array's %" PRId64 " elements",
                         fn, size, elem_offset, base->size);
  mxr_ndarray *root = base->base ? base->base : base;
  mxr_ndarray *arr = take_zeroed(&array_blocks);
  if (arr == NULL) return mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  rc = mxr__mutex_init(&arr->alloc_mu, "an ndarray view");
  if (rc != 0) {
    mxr__recycler_give(&array_blocks, arr);
    return rc;
  }
  atomic_init(&arr->refs, 1);
  atomic_init(&arr->allocated, true); /* unused: allocation is the base's */
  arr->eng = root->eng;
  arr->var = root->var;
  arr->mem = root->mem;
  arr->base = mxr_ndarray_retain(root);
  arr->offset = base->offset + (size_t)elem_offset * mxr_dtype_size(base->dtype);
  arr->ndim = ndim;
  for (int i = 0; i < ndim; i++) arr->shape[i] = shape[i];
  arr->size = size;
  arr->nbytes = nbytes;
  arr->dtype = base->dtype;
  arr->ctx = base->ctx;
  *out = arr;
  return 0;
}

/* ---------------------------------------------------------------------------
 * References. */

mxr_ndarray *mxr_ndarray_retain(mxr_ndarray *arr) {
  /* Relaxed: taking a reference needs an existing one, which already orders
   * everything before it. */
  if (arr != NULL) atomic_fetch_add_explicit(&arr->refs, 1, memory_order_relaxed);
  return arr;
}

void mxr_ndarray_free(mxr_ndarray *arr) {
  if (arr == NULL) return;
  /* acq_rel: the last owner must see every other owner's writes to the
   * object before it destroys it. */
  long prev = atomic_fetch_sub_explicit(&arr->refs, 1, memory_order_acq_rel);
  if (prev == 1) destroy(arr);
}

long mxr__ndarray_refs(const mxr_ndarray *arr) {
  return arr ? atomic_load_explicit(&arr->refs, memory_order_acquire) : 0;
}

/* ---------------------------------------------------------------------------
 * Accessors.  They accept NULL and answer as for a none array, so that a
 * caller's mistake reads as "no array" rather than a crash. */

int mxr_ndarray_is_none(const mxr_ndarray *arr) { return arr == NULL || arr->ndim < 0; }

int mxr_ndarray_ndim(const mxr_ndarray *arr) { return arr ? arr->ndim : -1; }

const int64_t *mxr_ndarray_shape(const mxr_ndarray *arr) { return arr ? arr->shape : NULL; }

int64_t mxr_ndarray_size(const mxr_ndarray *arr) { return arr ? arr->size : 0; }

int mxr_ndarray_dtype(const mxr_ndarray *arr) { return arr ? arr->dtype : MXR_FLOAT32; }

struct mxr_context mxr_ndarray_context(const mxr_ndarray *arr) {
  return arr ? arr->ctx : mxr_cpu(0);
}

mxr_var *mxr_ndarray_var(const mxr_ndarray *arr) { return arr ? arr->var : NULL; }

/* ---------------------------------------------------------------------------
 * Memory. */

/* The first byte of an allocated array (a view's, inside its base). */
static char *dptr(const mxr_ndarray *arr) { return arr->mem->dptr ? (char *)arr->mem->dptr + arr->offset : NULL; }

int mxr_ndarray_ensure_alloc(mxr_ndarray *arr) {
  if (arr == NULL) return mxr_set_error(MXR_EINVAL, "mxr_ndarray_ensure_alloc: array is NULL");
  if (arr->ndim < 0)
    return mxr_set_error(MXR_ESTATE,
                         "mxr_ndarray_ensure_alloc: the array is none (it has no shape yet)");
  if (arr->base) return mxr_ndarray_ensure_alloc(arr->base);
  if (atomic_load_explicit(&arr->allocated, memory_order_acquire)) return 0;

  /* Ops on worker threads may get here at the same time (several readers of
   * a delayed array); the mutex makes one of them allocate. */
  int rc = 0;
  mxr_mutex_lock(&arr->alloc_mu);
  if (!atomic_load_explicit(&arr->allocated, memory_order_relaxed)) {
    rc = mxr_storage_alloc(arr->ctx, arr->nbytes, arr->mem);
    /* On failure the flag stays false: a later call tries again and reports
     * the error again rather than handing out a NULL pointer. */
    if (rc == 0) atomic_store_explicit(&arr->allocated, true, memory_order_release);
  }
  mxr_mutex_unlock(&arr->alloc_mu);
  return rc;
}

void *mxr_ndarray_data(mxr_ndarray *arr) {
  if (arr == NULL || arr->ndim < 0) return NULL;
  if (mxr_ndarray_ensure_alloc(arr) != 0) return NULL;
  return dptr(arr);
}

/* ---------------------------------------------------------------------------
 * Waiting and host copies. */

int mxr_ndarray_wait_to_read(mxr_ndarray *arr) {
  if (arr == NULL) return mxr_set_error(MXR_EINVAL, "mxr_ndarray_wait_to_read: array is NULL");
  return mxr_engine_wait_for_var(arr->eng, arr->var);
}

/* The body of the WaitToWrite op: writing the var is all it is for. */
static int nop_op(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  (void)param;
  return 0;
}

int mxr_ndarray_wait_to_write(mxr_ndarray *arr) {
  if (arr == NULL) return mxr_set_error(MXR_EINVAL, "mxr_ndarray_wait_to_write: array is NULL");
  /* Waiting for the var only waits for writes.  An op that writes the var
   * runs after every earlier read as well, so push an empty one and wait
   * for it.  It is pushed for cpu(0) whatever the array's device: it touches
   * no memory, and needs no device worker. */
  mxr_var *mut[1] = {arr->var};
  int rc = mxr_engine_push_sync(arr->eng, nop_op, NULL, NULL, mxr_cpu(0), NULL, 0, mut, 1,
                                "WaitToWrite");
  if (rc != 0) return rc;
  return mxr_engine_wait_for_var(arr->eng, arr->var);
}

/* Shared checks of the two host copies. */
static int check_copy(const char *fn, mxr_ndarray *arr, const void *host, size_t count) {
  if (arr == NULL) return mxr_set_error(MXR_EINVAL, "%s: array is NULL", fn);
  if (arr->ndim < 0)
    return mxr_set_error(MXR_EINVAL, "%s: the array is none (it has no shape yet)", fn);
  if ((uint64_t)arr->size != (uint64_t)count)
    return mxr_set_error(MXR_EINVAL,
                         "%s: count is %zu elements but the array holds %" PRId64 " elements", fn,
                         count, arr->size);
  if (host == NULL && count > 0)
    return mxr_set_error(MXR_EINVAL, "%s: host pointer is NULL for %zu elements", fn, count);
  return 0;
}

int mxr_ndarray_sync_copy_from_cpu(mxr_ndarray *arr, const void *src, size_t count) {
  static const char fn[] = "mxr_ndarray_sync_copy_from_cpu";
  int rc = check_copy(fn, arr, src, count);
  if (rc == 0) rc = mxr_ndarray_wait_to_write(arr);
  if (rc == 0) rc = mxr_ndarray_ensure_alloc(arr);
  /* After the wait no op uses the array, so a synchronous copy (on no
   * stream) is ordered after all of them. */
  if (rc == 0) rc = mxr__storage_copy(dptr(arr), arr->ctx, src, mxr_cpu(0), arr->nbytes, NULL);
  return rc;
}

int mxr_ndarray_sync_copy_to_cpu(mxr_ndarray *arr, void *dst, size_t count) {
  static const char fn[] = "mxr_ndarray_sync_copy_to_cpu";
  int rc = check_copy(fn, arr, dst, count);
  if (rc == 0) rc = mxr_ndarray_wait_to_read(arr);
  /* A delayed array nobody wrote reads as whatever the fresh memory holds,
   * as in MXNet; allocating here keeps the pointer valid. */
  if (rc == 0) rc = mxr_ndarray_ensure_alloc(arr);
  if (rc == 0) rc = mxr__storage_copy(dst, mxr_cpu(0), dptr(arr), arr->ctx, arr->nbytes, NULL);
  return rc;
}

/* ---------------------------------------------------------------------------
 * Copies between arrays. */

struct copy_param {
  mxr_ndarray *src, *dst; /* references held by the op */
};

static int copy_op(const struct mxr_run_ctx *rctx, void *param) {
  struct copy_param *p = param;
  int rc = mxr_ndarray_ensure_alloc(p->src);
  if (rc == 0) rc = mxr_ndarray_ensure_alloc(p->dst);
  if (rc == 0)
    rc = mxr__storage_copy(dptr(p->dst), p->dst->ctx, dptr(p->src), p->src->ctx,
                           p->src->nbytes, rctx ? rctx->stream : NULL);
  return rc;
}

static void copy_param_free(void *param) {
  struct copy_param *p = param;
  mxr_ndarray_free(p->src);
  mxr_ndarray_free(p->dst);
  free(p);
}

/* Where a copy runs and under which property, as MXNet places them: a copy
 * that touches a GPU runs on that GPU's copy workers (the destination's
 * when both are GPUs), a host copy is an ordinary op. */
static void place_copy(struct mxr_context from, struct mxr_context to, struct mxr_context *ctx,
                       int *prop, const char **name) {
  bool from_gpu = !mxr_context_is_cpu(from), to_gpu = !mxr_context_is_cpu(to);
  if (!from_gpu && !to_gpu) {
    *ctx = from, *prop = MXR_PROP_NORMAL, *name = "CopyCPU2CPU";
  } else if (!from_gpu) {
    *ctx = to, *prop = MXR_PROP_COPY_TO_GPU, *name = "CopyCPU2GPU";
  } else if (!to_gpu) {
    *ctx = from, *prop = MXR_PROP_COPY_FROM_GPU, *name = "CopyGPU2CPU";
  } else {
    *ctx = to, *prop = MXR_PROP_COPY_TO_GPU, *name = "CopyGPU2GPU";
  }
}

int mxr_ndarray_copy_to(mxr_ndarray *src, mxr_ndarray *dst) {
  static const char fn[] = "mxr_ndarray_copy_to";
  if (src == NULL || dst == NULL)
    return mxr_set_error(MXR_EINVAL, "%s: %s array is NULL", fn, src ? "destination" : "source");
  if (src->ndim < 0 || dst->ndim < 0)
    return mxr_set_error(MXR_EINVAL, "%s: the %s array is none (it has no shape yet)", fn,
                         src->ndim < 0 ? "source" : "destination");
  if (src->size != dst->size || src->dtype != dst->dtype)
    return mxr_set_error(MXR_EINVAL, "%s: the source holds %" PRId64 " elements of dtype %d, the "
                         "destination %" PRId64 " of dtype %d", fn, src->size, src->dtype,
                         dst->size, dst->dtype);
  if (src == dst) return 0;
  if (src->eng != dst->eng)
    return mxr_set_error(MXR_EINVAL, "%s: the arrays belong to different engines", fn);
  struct copy_param *p = malloc(sizeof *p);
  if (p == NULL) return mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  p->src = mxr_ndarray_retain(src);
  p->dst = mxr_ndarray_retain(dst);
  struct mxr_push req = {0};
  const char *name;
  place_copy(src->ctx, dst->ctx, &req.ctx, &req.prop, &name);
  mxr_var *reads[1] = {src->var}, *writes[1] = {dst->var};
  req.sync_fn = copy_op;
  req.param = p;
  req.param_free = copy_param_free;
  req.const_vars = reads;
  req.num_const = 1;
  req.mutable_vars = writes;
  req.num_mutable = 1;
  req.name = name;
  req.profile = MXR_PROFILE_IMPERATIVE;
  req.no_bulk = true; /* MXNet pushes copies as their own ops */
  return mxr_engine_push(src->eng, &req); /* frees p through param_free, also on failure */
}
