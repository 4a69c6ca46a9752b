/*
 * Internal: a pool of device memory blocks (MXNet's GPU storage managers),
 * independent of the device.
 *
 * The pool takes blocks from a `struct mxr__mem_source` (cudaMalloc for a
 * GPU; a fake device in the tests) and keeps freed blocks for reuse, by one
 * of three policies (MXNET_GPU_MEM_POOL_TYPE):
 *
 *   Naive     a block is reused only for a request of the same size after
 *             rounding up to a multiple of `page_size` (4096);
 *   Round     sizes up to 2^round_cutoff bytes round up to a power of two,
 *             larger ones to a multiple of 2^round_cutoff, so more requests
 *             share a bucket (more reuse, more slack);
 *   Unpooled  every free goes back to the source at once.
 *
 * Reserve (MXNET_GPU_MEM_POOL_RESERVE, a percentage of the device's memory):
 * before taking a new block from the source, a pooling policy checks the
 * device's free memory; if the block would leave less than the reserve free,
 * every cached block goes back first.  A source that reports out of memory
 * gets one more try after the cache is emptied.  So cached blocks never
 * cause an out-of-memory failure that uncached allocation would not.
 *
 * Thread safety: every function may be called from any thread (frees come
 * from engine workers).  Ownership: the pool owns the cached blocks; a block
 * handed out belongs to the caller until mxr__mem_pool_free().
 */
#ifndef MXR_STORAGE_MEM_POOL_H
#define MXR_STORAGE_MEM_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "mxref/storage.h" /* struct mxr_storage_pool_stats */

/* Where a pool's blocks come from.  Each function returns 0 or a negative
 * status after mxr_set_error(); alloc returns MXR_ENOMEM (and only then)
 * when the device is out of memory, so the pool knows a retry may help. */
struct mxr__mem_source {
  void *user;
  char name[32]; /* the device, for messages: "gpu(0)" */
  int (*alloc)(void *user, size_t size, void **out);
  int (*release)(void *user, void *ptr, size_t size);
  int (*mem_info)(void *user, size_t *free_bytes, size_t *total_bytes);
};

struct mxr__mem_pool_opts {
  int type;            /* enum mxr_gpu_mem_pool_type */
  int reserve_percent; /* 0..100 */
  size_t page_size;    /* Naive's rounding unit; a power of two */
  int round_cutoff;    /* Round's log2 linear cutoff, 12..40 */
};

/* MXNet's defaults: 4 KiB pages, a 16 MiB (2^24) linear cutoff. */
#define MXR_MEM_POOL_PAGE_SIZE 4096
#define MXR_MEM_POOL_ROUND_CUTOFF 24

typedef struct mxr__mem_pool mxr__mem_pool;

/* Create a pool over `src` (copied).  MXR_EINVAL names a bad option. */
int mxr__mem_pool_create(const struct mxr__mem_source *src, const struct mxr__mem_pool_opts *opts,
                         mxr__mem_pool **out);

/* Empty the cache and free the pool.  Blocks still handed out are the
 * caller's leak; their total is returned (0 for a clean shutdown). */
size_t mxr__mem_pool_destroy(mxr__mem_pool *pool);

/* The size a request of `size` bytes occupies under the pool's policy. */
size_t mxr__mem_pool_block_size(const mxr__mem_pool *pool, size_t size);

/* A block of at least `size` (> 0) bytes.  MXR_ENOMEM names the device, the
 * size and what the pool held when the source refused. */
int mxr__mem_pool_alloc(mxr__mem_pool *pool, size_t size, void **out);

/* Give back a block from mxr__mem_pool_alloc(); `size` is the size that was
 * requested.  Returns 0, or the source's error when an Unpooled release
 * failed. */
int mxr__mem_pool_free(mxr__mem_pool *pool, void *ptr, size_t size);

/* Return every cached block to the source (MXStorageEmptyCache). */
int mxr__mem_pool_release_all(mxr__mem_pool *pool);

void mxr__mem_pool_get_stats(mxr__mem_pool *pool, struct mxr_storage_pool_stats *out);

#endif /* MXR_STORAGE_MEM_POOL_H */
