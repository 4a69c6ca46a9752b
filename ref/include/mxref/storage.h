/*
 * mxref/storage.h: raw device memory.
 *
 * A storage handle is a plain value describing one allocation.  The caller
 * owns it from mxr_storage_alloc() until it passes it to mxr_storage_free().
 * CPU memory is aligned to MXR_STORAGE_ALIGN bytes.
 *
 * GPU memory comes from one pool per device, created at its first use with
 * the policy MXNET_GPU_MEM_POOL_TYPE names (Naive, Round, Unpooled) and the
 * reserve MXNET_GPU_MEM_POOL_RESERVE; freed blocks stay cached in the pool
 * for reuse until mxr_storage_release_cache().  A build without CUDA, or a
 * machine without the GPU asked for, fails GPU contexts with MXR_ENODEV and
 * the reason.  cpu_pinned memory is page-locked (cudaHostAlloc) when the
 * build has CUDA and the machine a GPU, and plain host memory otherwise.
 */
#ifndef MXREF_STORAGE_H
#define MXREF_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "mxref/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MXR_STORAGE_ALIGN 64

struct mxr_storage {
  void *dptr;             /* NULL when size is 0 */
  size_t size;            /* bytes */
  struct mxr_context ctx;
};

/* Allocate `size` bytes on ctx.  size 0 gives dptr NULL and succeeds. */
int mxr_storage_alloc(struct mxr_context ctx, size_t size, struct mxr_storage *out);

/* Release an allocation; resets *s to zero.  NULL or an empty handle is a no-op. */
void mxr_storage_free(struct mxr_storage *s);

/* Bytes currently allocated through this module on CPU contexts (for tests
 * and leak checks). */
size_t mxr_storage_cpu_bytes_in_use(void);

/* What a device's memory pool holds and has done. */
struct mxr_storage_pool_stats {
  size_t used_bytes;         /* in blocks handed out (sizes after rounding) */
  size_t cached_bytes;       /* in freed blocks kept for reuse */
  uint64_t source_allocs;    /* blocks taken from the device (cudaMalloc) */
  uint64_t source_releases;  /* blocks given back (cudaFree) */
  uint64_t reuses;           /* allocations served from the cache */
  uint64_t reserve_flushes;  /* times keeping the reserve emptied the cache */
  uint64_t release_failures; /* failed device frees (the last error names the call) */
};

/* Statistics of gpu(id)'s pool; all zero before its first allocation.
 * MXR_ENODEV for a context without a pool (not a usable GPU). */
#ifdef __cplusplus /* C++'s -Wshadow: the function hides the struct of the same name */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#endif
int mxr_storage_pool_stats(struct mxr_context ctx, struct mxr_storage_pool_stats *out);
#ifdef __cplusplus
#pragma GCC diagnostic pop
#endif

/* Give the cached blocks of ctx's pool back to the device (MXNet's
 * MXStorageEmptyCache).  A no-op for host contexts and for a GPU that has
 * no pool yet; MXR_ENODEV for a GPU that does not exist. */
int mxr_storage_release_cache(struct mxr_context ctx);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_STORAGE_H */
