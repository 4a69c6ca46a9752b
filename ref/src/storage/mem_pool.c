/*
 * A pool of device memory blocks (mem_pool.h).
 *
 * The cache is an array of buckets sorted by block size, each a stack of
 * free blocks of exactly that size; a model touches a few hundred distinct
 * sizes at most, so a binary search over a flat array is all the index
 * needed.  One mutex guards the pool; the source is called with it held,
 * which serialises cudaMalloc/cudaFree per device (they serialise inside
 * the driver anyway).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/threads.h"
#include "mxref/config.h"
#include "mxref/error.h"
#include "storage/mem_pool.h"

struct bucket {
  size_t size;   /* block size */
  void **blocks; /* free blocks of this size */
  size_t n, cap;
};

struct mxr__mem_pool {
  struct mxr__mem_source src;
  struct mxr__mem_pool_opts opts;
  pthread_mutex_t mu;
  struct bucket *buckets; /* sorted by size; empty buckets stay */
  size_t nbuckets, cap;
  struct mxr_storage_pool_stats stats;
};

static const char *type_name(int type) {
  switch (type) {
  case MXR_GPU_POOL_NAIVE: return "Naive";
  case MXR_GPU_POOL_ROUND: return "Round";
  case MXR_GPU_POOL_UNPOOLED: return "Unpooled";
  default: return NULL;
  }
}

static bool is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

static int check_opts(const struct mxr__mem_pool_opts *o) {
  if (type_name(o->type) == NULL)
    return mxr_set_error(MXR_EINVAL, "memory pool: unknown pool type %d (expected 0 Naive, "
                         "1 Round or 2 Unpooled)", o->type);
  if (o->reserve_percent < 0 || o->reserve_percent > 100)
    return mxr_set_error(MXR_EINVAL, "memory pool: reserve %d%% is outside 0..100",
                         o->reserve_percent);
  if (!is_power_of_two(o->page_size))
    return mxr_set_error(MXR_EINVAL, "memory pool: page size %zu is not a power of two",
                         o->page_size);
  if (o->round_cutoff < 12 || o->round_cutoff > 40)
    return mxr_set_error(MXR_EINVAL, "memory pool: round cutoff 2^%d is outside 2^12..2^40",
                         o->round_cutoff);
  return 0;
}

int mxr__mem_pool_create(const struct mxr__mem_source *src, const struct mxr__mem_pool_opts *opts,
                         mxr__mem_pool **out) {
  *out = NULL;
  if (!src->alloc || !src->release || !src->mem_info)
    return mxr_set_error(MXR_EINVAL, "memory pool for %s: the source lacks a function", src->name);
  int st = check_opts(opts);
  if (st) return st;
  mxr__mem_pool *pool = calloc(1, sizeof *pool);
  if (!pool) return mxr_set_error(MXR_ENOMEM, "memory pool for %s: out of host memory", src->name);
  pool->src = *src;
  pool->opts = *opts;
  st = mxr__mutex_init(&pool->mu, "memory pool");
  if (st) {
    free(pool);
    return st;
  }
  *out = pool;
  return 0;
}

/* Round x up to a multiple of `unit` (a power of two); 0 on overflow. */
static size_t round_up(size_t x, size_t unit) {
  if (x > SIZE_MAX - (unit - 1)) return 0;
  return (x + unit - 1) & ~(unit - 1);
}

static size_t next_power_of_two(size_t x) {
  size_t p = 1;
  while (p < x) {
    if (p > SIZE_MAX / 2) return 0;
    p <<= 1;
  }
  return p;
}

size_t mxr__mem_pool_block_size(const mxr__mem_pool *pool, size_t size) {
  switch (pool->opts.type) {
  case MXR_GPU_POOL_ROUND: {
    size_t cutoff = (size_t)1 << pool->opts.round_cutoff;
    if (size <= cutoff) return next_power_of_two(size < pool->opts.page_size ? pool->opts.page_size : size);
    return round_up(size, cutoff);
  }
  case MXR_GPU_POOL_NAIVE: return round_up(size, pool->opts.page_size);
  default: return size; /* Unpooled: the source's own granularity */
  }
}

/* Index of the bucket for `size`, or where it would be inserted. */
static size_t bucket_index(const mxr__mem_pool *pool, size_t size) {
  size_t lo = 0, hi = pool->nbuckets;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (pool->buckets[mid].size < size)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static struct bucket *find_bucket(mxr__mem_pool *pool, size_t size) {
  size_t i = bucket_index(pool, size);
  return i < pool->nbuckets && pool->buckets[i].size == size ? &pool->buckets[i] : NULL;
}

/* The bucket for `size`, created if missing; NULL when out of host memory. */
static struct bucket *get_bucket(mxr__mem_pool *pool, size_t size) {
  size_t i = bucket_index(pool, size);
  if (i < pool->nbuckets && pool->buckets[i].size == size) return &pool->buckets[i];
  if (pool->nbuckets == pool->cap) {
    size_t cap = pool->cap ? 2 * pool->cap : 16;
    struct bucket *b = realloc(pool->buckets, cap * sizeof *b);
    if (!b) return NULL;
    pool->buckets = b;
    pool->cap = cap;
  }
  memmove(&pool->buckets[i + 1], &pool->buckets[i], (pool->nbuckets - i) * sizeof *pool->buckets);
  pool->buckets[i] = (struct bucket){.size = size};
  pool->nbuckets++;
  return &pool->buckets[i];
}

/* Give every cached block back to the source.  Called with mu held.  Keeps
 * going after a failed release, and returns the first failure. */
static int release_cached(mxr__mem_pool *pool) {
  int first = 0;
  for (size_t i = 0; i < pool->nbuckets; i++) {
    struct bucket *b = &pool->buckets[i];
    for (size_t j = 0; j < b->n; j++) {
      int st = pool->src.release(pool->src.user, b->blocks[j], b->size);
      if (st) pool->stats.release_failures++;
      if (st && !first) first = st;
      pool->stats.source_releases++;
      pool->stats.cached_bytes -= b->size;
    }
    b->n = 0;
  }
  return first;
}

/* The pooling policies keep `reserve_percent` of the device free: a new
 * block that would eat into it first flushes the cache. */
static void keep_reserve(mxr__mem_pool *pool, size_t size) {
  if (pool->opts.type == MXR_GPU_POOL_UNPOOLED || pool->stats.cached_bytes == 0) return;
  size_t free_bytes = 0, total = 0;
  if (pool->src.mem_info(pool->src.user, &free_bytes, &total) != 0) return; /* try anyway */
  size_t reserve = total / 100 * (size_t)pool->opts.reserve_percent;
  if (free_bytes < reserve || size > free_bytes - reserve) {
    (void)release_cached(pool); /* a failed release leaves less room; alloc reports it */
    pool->stats.reserve_flushes++;
  }
}

static int take_from_source(mxr__mem_pool *pool, size_t block, size_t size, void **out) {
  keep_reserve(pool, block);
  int st = pool->src.alloc(pool->src.user, block, out);
  if (st == MXR_ENOMEM && pool->stats.cached_bytes > 0) {
    (void)release_cached(pool);
    st = pool->src.alloc(pool->src.user, block, out);
  }
  if (st == MXR_ENOMEM) {
    char why[MXR_ERROR_MAX];
    snprintf(why, sizeof why, "%s", mxr_last_error());
    return mxr_set_error(MXR_ENOMEM, "out of memory on %s: cannot allocate %zu bytes (a block of "
                         "%zu); the pool (%s) has %zu bytes in use and none cached: %s",
                         pool->src.name, size, block, type_name(pool->opts.type),
                         pool->stats.used_bytes, why);
  }
  if (st) return st;
  pool->stats.source_allocs++;
  return 0;
}

int mxr__mem_pool_alloc(mxr__mem_pool *pool, size_t size, void **out) {
  *out = NULL;
  size_t block = size ? mxr__mem_pool_block_size(pool, size) : 0;
  if (block == 0)
    return mxr_set_error(size ? MXR_ENOMEM : MXR_EINVAL, "%s: cannot allocate %zu bytes%s",
                         pool->src.name, size, size ? ": the size overflows" : "");
  mxr_mutex_lock(&pool->mu);
  int st = 0;
  struct bucket *b = find_bucket(pool, block);
  if (b && b->n > 0) {
    *out = b->blocks[--b->n];
    pool->stats.cached_bytes -= block;
    pool->stats.reuses++;
  } else {
    st = take_from_source(pool, block, size, out);
  }
  if (st == 0) pool->stats.used_bytes += block;
  mxr_mutex_unlock(&pool->mu);
  return st;
}

/* Cache a block; false when out of host memory for the bookkeeping. */
static bool cache_block(mxr__mem_pool *pool, void *ptr, size_t block) {
  struct bucket *b = get_bucket(pool, block);
  if (!b) return false;
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 4;
    void **blocks = realloc(b->blocks, cap * sizeof *blocks);
    if (!blocks) return false;
    b->blocks = blocks;
    b->cap = cap;
  }
  b->blocks[b->n++] = ptr;
  pool->stats.cached_bytes += block;
  return true;
}

int mxr__mem_pool_free(mxr__mem_pool *pool, void *ptr, size_t size) {
  if (ptr == NULL) return 0;
  size_t block = mxr__mem_pool_block_size(pool, size);
  int st = 0;
  mxr_mutex_lock(&pool->mu);
  pool->stats.used_bytes -= block;
  if (pool->opts.type == MXR_GPU_POOL_UNPOOLED || !cache_block(pool, ptr, block)) {
    st = pool->src.release(pool->src.user, ptr, block);
    if (st) pool->stats.release_failures++;
    pool->stats.source_releases++;
  }
  mxr_mutex_unlock(&pool->mu);
  return st;
}

int mxr__mem_pool_release_all(mxr__mem_pool *pool) {
  mxr_mutex_lock(&pool->mu);
  int st = release_cached(pool);
  mxr_mutex_unlock(&pool->mu);
  return st;
}

void mxr__mem_pool_get_stats(mxr__mem_pool *pool, struct mxr_storage_pool_stats *out) {
  mxr_mutex_lock(&pool->mu);
  *out = pool->stats;
  mxr_mutex_unlock(&pool->mu);
}

size_t mxr__mem_pool_destroy(mxr__mem_pool *pool) {
  if (!pool) return 0;
  mxr_mutex_lock(&pool->mu);
  (void)release_cached(pool);
  size_t leaked = pool->stats.used_bytes;
  mxr_mutex_unlock(&pool->mu);
  for (size_t i = 0; i < pool->nbuckets; i++) free(pool->buckets[i].blocks);
  free(pool->buckets);
  mxr_mutex_destroy(&pool->mu);
  free(pool);
  return leaked;
}
