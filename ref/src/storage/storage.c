/*
 * Raw device memory (mxref/storage.h).
 *
 * Host memory comes from posix_memalign (or cudaHostAlloc for cpu_pinned
 * when there is a GPU); GPU memory from one mem_pool.h pool per device over
 * cuda/memory.h.  Without CUDA the GPU pools are never created: mxr_gpu_count()
 * is 0, and every GPU context fails with the reason device.h gives.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/threads.h"
#include "mxref/config.h"
#include "mxref/device.h"
#include "mxref/error.h"
#include "mxref/storage.h"
#include "storage/mem_pool.h"
#include "storage/storage_internal.h"
#ifdef MXR_HAVE_CUDA
#include "cuda/memory.h"
#endif

/* Bytes handed out on host contexts and not yet freed.  Relaxed ordering is
 * enough: the counter is a statistic, it orders no other memory. */
static atomic_size_t cpu_bytes_in_use;

static const char *dev_type_name(int dev_type) {
  switch (dev_type) {
  case MXR_DEV_CPU: return "cpu";
  case MXR_DEV_GPU: return "gpu";
  case MXR_DEV_CPU_PINNED: return "cpu_pinned";
  case MXR_DEV_CPU_SHARED: return "cpu_shared";
  default: return NULL;
  }
}

/* ---------------------------------------------------------------------------
 * GPU pools: created under pools_mu at a device's first allocation, then
 * read without the lock (a pool, once published, lives to process exit). */

static pthread_mutex_t pools_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(mxr__mem_pool *) gpu_pools[MXR_MAX_DEVICES];

/* 0 when gpu(dev) is a usable GPU, else MXR_ENODEV saying why not. */
static int check_gpu(const char *fn, int dev) {
  int n = mxr_gpu_count();
  if (n > MXR_MAX_DEVICES) n = MXR_MAX_DEVICES;
  if (n == 0)
    return mxr_set_error(MXR_ENODEV, "%s: no GPU storage on gpu(%d): %s", fn, dev,
                         mxr_gpu_unavailable_reason());
  if (dev >= n)
    return mxr_set_error(MXR_ENODEV, "%s: no GPU storage on gpu(%d): it does not exist (%d GPU%s)",
                         fn, dev, n, n == 1 ? "" : "s");
  return 0;
}

#ifdef MXR_HAVE_CUDA
static int dev_of(void *user) { return (int)(intptr_t)user; }
static int source_alloc(void *user, size_t size, void **out) {
  return mxr__cuda_mem_alloc(dev_of(user), size, out);
}
static int source_release(void *user, void *ptr, size_t size) {
  (void)size;
  return mxr__cuda_mem_free(dev_of(user), ptr);
}
static int source_mem_info(void *user, size_t *free_bytes, size_t *total_bytes) {
  return mxr__cuda_mem_info(dev_of(user), free_bytes, total_bytes);
}

static int create_gpu_pool(int dev, mxr__mem_pool **out) {
  int st = mxr_config_status();
  if (st) return st;
  const struct mxr_config *cfg = mxr_config_get();
  struct mxr__mem_source src = {.user = (void *)(intptr_t)dev,
                                .alloc = source_alloc,
                                .release = source_release,
                                .mem_info = source_mem_info};
  snprintf(src.name, sizeof src.name, "gpu(%d)", dev);
  struct mxr__mem_pool_opts opts = {.type = cfg->gpu_mem_pool_type,
                                    .reserve_percent = cfg->gpu_mem_pool_reserve,
                                    .page_size = MXR_MEM_POOL_PAGE_SIZE,
                                    .round_cutoff = MXR_MEM_POOL_ROUND_CUTOFF};
  return mxr__mem_pool_create(&src, &opts, out);
}
#else
static int create_gpu_pool(int dev, mxr__mem_pool **out) {
  *out = NULL; /* unreachable: check_gpu() finds no GPU in this build */
  return mxr_set_error(MXR_ENODEV, "no GPU storage on gpu(%d): built without CUDA", dev);
}
#endif

/* gpu(dev)'s pool; with `create`, made on first use.  *out is NULL (and
 * 0 returned) when the pool does not exist and `create` is false. */
static int gpu_pool(const char *fn, int dev, bool create, mxr__mem_pool **out) {
  *out = NULL;
  int st = check_gpu(fn, dev);
  if (st) return st;
  *out = atomic_load_explicit(&gpu_pools[dev], memory_order_acquire);
  if (*out || !create) return 0;
  mxr_mutex_lock(&pools_mu);
  *out = atomic_load_explicit(&gpu_pools[dev], memory_order_relaxed);
  if (!*out) {
    st = create_gpu_pool(dev, out);
    if (st == 0) atomic_store_explicit(&gpu_pools[dev], *out, memory_order_release);
  }
  mxr_mutex_unlock(&pools_mu);
  return st;
}

/* ---------------------------------------------------------------------------
 * Host memory. */

#ifdef MXR_HAVE_CUDA
/* cpu_pinned memory is page-locked where a GPU can use it. */
static bool pinned_is_page_locked(void) { return mxr_built_with_cuda() && mxr_gpu_count() > 0; }
#endif

/* Returns 0 or MXR_ENOMEM with the message set. */
static int host_alloc(struct mxr_context ctx, const char *dev, size_t size, void **out) {
  *out = NULL;
#ifdef MXR_HAVE_CUDA
  if (ctx.dev_type == MXR_DEV_CPU_PINNED && pinned_is_page_locked()) {
    if (mxr__cuda_host_alloc(size, out) == 0) return 0;
    char why[MXR_ERROR_MAX];
    snprintf(why, sizeof why, "%s", mxr_last_error());
    return mxr_set_error(MXR_ENOMEM, "mxr_storage_alloc: cannot allocate %zu page-locked bytes "
                         "on %s(%d): %s", size, dev, ctx.dev_id, why);
  }
#endif
  /* No object may be larger than PTRDIFF_MAX (pointer differences inside it
   * would overflow); refuse such sizes ourselves so that every allocator,
   * sanitizer ones included, reports them the same way. */
  int rc = size > (size_t)PTRDIFF_MAX ? ENOMEM : posix_memalign(out, MXR_STORAGE_ALIGN, size);
  if (rc != 0)
    return mxr_set_error(MXR_ENOMEM, "mxr_storage_alloc: cannot allocate %zu bytes on %s(%d): %s",
                         size, dev, ctx.dev_id, strerror(rc));
  return 0;
}

static void host_free(struct mxr_context ctx, void *p) {
#ifdef MXR_HAVE_CUDA
  if (ctx.dev_type == MXR_DEV_CPU_PINNED && pinned_is_page_locked()) {
    (void)mxr__cuda_host_free(p); /* checked: a failure leaves its message */
    return;
  }
#else
  (void)ctx;
#endif
  free(p);
}

int mxr_storage_alloc(struct mxr_context ctx, size_t size, struct mxr_storage *out) {
  if (out == NULL)
    return mxr_set_error(MXR_EINVAL, "mxr_storage_alloc: out is NULL");
  /* An empty handle on every failure, so that a caller's unconditional
   * mxr_storage_free() is harmless. */
  memset(out, 0, sizeof *out);

  const char *dev = dev_type_name(ctx.dev_type);
  if (dev == NULL)
    return mxr_set_error(MXR_EINVAL,
                         "mxr_storage_alloc: unknown device type %d (expected 1 cpu, 2 gpu, "
                         "3 cpu_pinned or 5 cpu_shared)",
                         ctx.dev_type);
  if (ctx.dev_id < 0)
    return mxr_set_error(MXR_EINVAL, "mxr_storage_alloc: negative device id %s(%d)", dev,
                         ctx.dev_id);
  if (size == 0) {
    /* Still refuse a GPU that does not exist, so that the failure shows at
     * the first allocation whatever its size. */
    if (ctx.dev_type == MXR_DEV_GPU) {
      int st = check_gpu("mxr_storage_alloc", ctx.dev_id);
      if (st) return st;
    }
    out->ctx = ctx;
    return 0;
  }

  void *p = NULL;
  if (ctx.dev_type == MXR_DEV_GPU) {
    mxr__mem_pool *pool;
    int st = gpu_pool("mxr_storage_alloc", ctx.dev_id, true, &pool);
    if (st == 0) st = mxr__mem_pool_alloc(pool, size, &p);
    if (st) return st;
  } else {
    int st = host_alloc(ctx, dev, size, &p);
    if (st) return st;
    atomic_fetch_add_explicit(&cpu_bytes_in_use, size, memory_order_relaxed);
  }
  out->dptr = p;
  out->size = size;
  out->ctx = ctx;
  return 0;
}

void mxr_storage_free(struct mxr_storage *s) {
  if (s == NULL) return;
  if (s->dptr != NULL && s->ctx.dev_type == MXR_DEV_GPU && s->ctx.dev_id >= 0 &&
      s->ctx.dev_id < MXR_MAX_DEVICES) {
    /* The pool exists: this block came from it.  A failed device free is
     * counted in the pool's statistics (the caller has no status to get). */
    mxr__mem_pool *pool = atomic_load_explicit(&gpu_pools[s->ctx.dev_id], memory_order_acquire);
    if (pool) (void)mxr__mem_pool_free(pool, s->dptr, s->size);
  } else if (s->dptr != NULL) {
    host_free(s->ctx, s->dptr);
    atomic_fetch_sub_explicit(&cpu_bytes_in_use, s->size, memory_order_relaxed);
  }
  memset(s, 0, sizeof *s);
}

size_t mxr_storage_cpu_bytes_in_use(void) {
  return atomic_load_explicit(&cpu_bytes_in_use, memory_order_relaxed);
}

int mxr_storage_pool_stats(struct mxr_context ctx, struct mxr_storage_pool_stats *out) {
  static const char fn[] = "mxr_storage_pool_stats";
  if (out == NULL) return mxr_set_error(MXR_EINVAL, "%s: out is NULL", fn);
  memset(out, 0, sizeof *out);
  if (ctx.dev_type != MXR_DEV_GPU || ctx.dev_id < 0)
    return mxr_set_error(MXR_ENODEV, "%s: %s(%d) has no memory pool (only GPUs have one)", fn,
                         dev_type_name(ctx.dev_type) ? dev_type_name(ctx.dev_type) : "?",
                         ctx.dev_id);
  mxr__mem_pool *pool;
  int st = gpu_pool(fn, ctx.dev_id, false, &pool);
  if (st == 0 && pool) mxr__mem_pool_get_stats(pool, out);
  return st;
}

int mxr_storage_release_cache(struct mxr_context ctx) {
  static const char fn[] = "mxr_storage_release_cache";
  if (dev_type_name(ctx.dev_type) == NULL || ctx.dev_id < 0)
    return mxr_set_error(MXR_EINVAL, "%s: no such device (type %d, id %d)", fn, ctx.dev_type,
                         ctx.dev_id);
  if (ctx.dev_type != MXR_DEV_GPU) return 0;
  mxr__mem_pool *pool;
  int st = gpu_pool(fn, ctx.dev_id, false, &pool);
  if (st == 0 && pool) st = mxr__mem_pool_release_all(pool);
  return st;
}

/* ---------------------------------------------------------------------------
 * Copies (storage_internal.h). */

int mxr__storage_copy(void *dst, struct mxr_context dctx, const void *src,
                      struct mxr_context sctx, size_t size, void *stream) {
  if (size == 0) return 0;
  if (mxr_context_is_cpu(dctx) && mxr_context_is_cpu(sctx)) {
    memcpy(dst, src, size);
    return 0;
  }
#ifdef MXR_HAVE_CUDA
  return mxr__cuda_memcpy(dst, src, size, stream);
#else
  (void)stream;
  return mxr_set_error(MXR_ENODEV, "copy of %zu bytes from %s(%d) to %s(%d): built without CUDA",
                       size, dev_type_name(sctx.dev_type), sctx.dev_id,
                       dev_type_name(dctx.dev_type), dctx.dev_id);
#endif
}
