/*
 * The device memory pool (ref/src/storage/mem_pool.h) over a fake device:
 * host memory with a capacity, which records every block it hands out so
 * that a double release or a foreign pointer fails the test.  This runs the
 * pooling policies of MXNET_GPU_MEM_POOL_TYPE without a GPU.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "mxref/config.h"
#include "mxref/error.h"
#include "storage/mem_pool.h"

#define FAKE_MAX_BLOCKS 256

struct fake_device {
  size_t capacity, used;
  void *live[FAKE_MAX_BLOCKS];
  size_t live_size[FAKE_MAX_BLOCKS];
  int allocs, releases;
  int fail_release; /* release returns an error while > 0 */
  bool hide_usage;  /* mem_info reports the whole device free (another
                       process freed memory meanwhile, say) */
};

static int fake_alloc(void *user, size_t size, void **out) {
  struct fake_device *d = user;
  if (size > d->capacity - d->used) return mxr_set_error(MXR_ENOMEM, "fake: out of memory");
  for (int i = 0; i < FAKE_MAX_BLOCKS; i++) {
    if (d->live[i] == NULL) {
      d->live[i] = malloc(size);
      ck_assert_ptr_nonnull(d->live[i]);
      d->live_size[i] = size;
      d->used += size;
      d->allocs++;
      *out = d->live[i];
      return 0;
    }
  }
  ck_abort_msg("fake device: more than %d live blocks", FAKE_MAX_BLOCKS);
  return MXR_ENOMEM;
}

static int fake_release(void *user, void *ptr, size_t size) {
  struct fake_device *d = user;
  if (d->fail_release > 0) {
    d->fail_release--;
    return mxr_set_error(MXR_ECUDA, "fake: release failed");
  }
  for (int i = 0; i < FAKE_MAX_BLOCKS; i++) {
    if (d->live[i] == ptr) {
      ck_assert_uint_eq(d->live_size[i], size);
      free(ptr);
      d->live[i] = NULL;
      d->used -= size;
      d->releases++;
      return 0;
    }
  }
  ck_abort_msg("fake device: release of %p, which it did not hand out", ptr);
  return MXR_EINVAL;
}

static int fake_mem_info(void *user, size_t *free_bytes, size_t *total) {
  struct fake_device *d = user;
  *free_bytes = d->hide_usage ? d->capacity : d->capacity - d->used;
  *total = d->capacity;
  return 0;
}

static mxr__mem_pool *make_pool(struct fake_device *d, int type, int reserve) {
  struct mxr__mem_source src = {
      .user = d, .name = "fake(0)", .alloc = fake_alloc, .release = fake_release,
      .mem_info = fake_mem_info};
  struct mxr__mem_pool_opts opts = {.type = type, .reserve_percent = reserve,
                                    .page_size = MXR_MEM_POOL_PAGE_SIZE,
                                    .round_cutoff = MXR_MEM_POOL_ROUND_CUTOFF};
  mxr__mem_pool *pool = NULL;
  ck_assert_int_eq(mxr__mem_pool_create(&src, &opts, &pool), 0);
  return pool;
}

static void destroy_clean(mxr__mem_pool *pool, struct fake_device *d) {
  ck_assert_uint_eq(mxr__mem_pool_destroy(pool), 0);
  ck_assert_uint_eq(d->used, 0);
  ck_assert_int_eq(d->allocs, d->releases);
}

START_TEST(block_sizes) {
  struct fake_device d = {.capacity = 1 << 30};
  mxr__mem_pool *naive = make_pool(&d, MXR_GPU_POOL_NAIVE, 5);
  ck_assert_uint_eq(mxr__mem_pool_block_size(naive, 1), 4096);
  ck_assert_uint_eq(mxr__mem_pool_block_size(naive, 4096), 4096);
  ck_assert_uint_eq(mxr__mem_pool_block_size(naive, 4097), 8192);
  ck_assert_uint_eq(mxr__mem_pool_block_size(naive, 5000), 8192);
  ck_assert_uint_eq(mxr__mem_pool_block_size(naive, 12289), 16384);
  mxr__mem_pool *round = make_pool(&d, MXR_GPU_POOL_ROUND, 5);
  ck_assert_uint_eq(mxr__mem_pool_block_size(round, 1), 4096);
  ck_assert_uint_eq(mxr__mem_pool_block_size(round, 5000), 8192);
  ck_assert_uint_eq(mxr__mem_pool_block_size(round, 12289), 16384);
  ck_assert_uint_eq(mxr__mem_pool_block_size(round, 100000), 131072);
  ck_assert_uint_eq(mxr__mem_pool_block_size(round, (size_t)1 << 24), (size_t)1 << 24);
  /* Past the linear cutoff (16 MiB): multiples of 16 MiB, not powers of 2. */
  ck_assert_uint_eq(mxr__mem_pool_block_size(round, ((size_t)1 << 24) + 1), (size_t)2 << 24);
  ck_assert_uint_eq(mxr__mem_pool_block_size(round, ((size_t)2 << 24) + 1), (size_t)3 << 24);
  mxr__mem_pool *unpooled = make_pool(&d, MXR_GPU_POOL_UNPOOLED, 5);
  ck_assert_uint_eq(mxr__mem_pool_block_size(unpooled, 5000), 5000);
  /* A size that cannot be rounded fails cleanly. */
  void *p = (void *)&p;
  ck_assert_int_eq(mxr__mem_pool_alloc(naive, SIZE_MAX - 10, &p), MXR_ENOMEM);
  ck_assert_ptr_null(p);
  ck_assert_int_eq(mxr__mem_pool_alloc(naive, 0, &p), MXR_EINVAL);
  destroy_clean(naive, &d);
  destroy_clean(round, &d);
  destroy_clean(unpooled, &d);
}
END_TEST

START_TEST(naive_reuses_same_size_only) {
  struct fake_device d = {.capacity = 1 << 30};
  mxr__mem_pool *pool = make_pool(&d, MXR_GPU_POOL_NAIVE, 5);
  void *a, *b, *c;
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 5000, &a), 0);
  ck_assert_int_eq(mxr__mem_pool_free(pool, a, 5000), 0);
  /* 6000 rounds to the same 8192-byte block: reused. */
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 6000, &b), 0);
  ck_assert_ptr_eq(b, a);
  ck_assert_int_eq(d.allocs, 1);
  /* 9000 is another size: a new block, although 8192 bytes are cached. */
  ck_assert_int_eq(mxr__mem_pool_free(pool, b, 6000), 0);
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 9000, &c), 0);
  ck_assert_ptr_ne(c, a);
  ck_assert_int_eq(d.allocs, 2);
  struct mxr_storage_pool_stats st;
  mxr__mem_pool_get_stats(pool, &st);
  ck_assert_uint_eq(st.used_bytes, 12288);
  ck_assert_uint_eq(st.cached_bytes, 8192);
  ck_assert_uint_eq(st.source_allocs, 2);
  ck_assert_uint_eq(st.reuses, 1);
  ck_assert_int_eq(mxr__mem_pool_free(pool, c, 9000), 0);
  /* Emptying the cache gives every block back. */
  ck_assert_int_eq(mxr__mem_pool_release_all(pool), 0);
  ck_assert_uint_eq(d.used, 0);
  mxr__mem_pool_get_stats(pool, &st);
  ck_assert_uint_eq(st.cached_bytes, 0);
  ck_assert_uint_eq(st.source_releases, 2);
  destroy_clean(pool, &d);
}
END_TEST

START_TEST(round_shares_buckets) {
  struct fake_device d = {.capacity = 1 << 30};
  mxr__mem_pool *pool = make_pool(&d, MXR_GPU_POOL_ROUND, 5);
  void *a, *b;
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 70000, &a), 0);
  ck_assert_int_eq(mxr__mem_pool_free(pool, a, 70000), 0);
  /* 70000 and 120000 both take a 131072-byte block (Naive would not share). */
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 120000, &b), 0);
  ck_assert_ptr_eq(b, a);
  ck_assert_int_eq(d.allocs, 1);
  ck_assert_uint_eq(d.used, 131072);
  ck_assert_int_eq(mxr__mem_pool_free(pool, b, 120000), 0);
  destroy_clean(pool, &d);
}
END_TEST

START_TEST(unpooled_returns_every_block) {
  struct fake_device d = {.capacity = 1 << 30};
  mxr__mem_pool *pool = make_pool(&d, MXR_GPU_POOL_UNPOOLED, 5);
  for (int i = 0; i < 5; i++) {
    void *p;
    ck_assert_int_eq(mxr__mem_pool_alloc(pool, 5000, &p), 0);
    ck_assert_uint_eq(d.used, 5000);
    ck_assert_int_eq(mxr__mem_pool_free(pool, p, 5000), 0);
    ck_assert_uint_eq(d.used, 0);
  }
  struct mxr_storage_pool_stats st;
  mxr__mem_pool_get_stats(pool, &st);
  ck_assert_uint_eq(st.source_allocs, 5);
  ck_assert_uint_eq(st.source_releases, 5);
  ck_assert_uint_eq(st.reuses, 0);
  ck_assert_uint_eq(st.cached_bytes, 0);
  destroy_clean(pool, &d);
}
END_TEST

START_TEST(reserve_flushes_cache) {
  /* 1 MiB device, 25 % reserve: 768 KiB may be in use or cached. */
  struct fake_device d = {.capacity = 1 << 20};
  mxr__mem_pool *pool = make_pool(&d, MXR_GPU_POOL_NAIVE, 25);
  void *a, *b;
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 512 << 10, &a), 0);
  ck_assert_int_eq(mxr__mem_pool_free(pool, a, 512 << 10), 0);
  /* 512 KiB are free and the reserve is ~256 KiB, so a 260 KiB block
   * beside the cached 512 KiB would eat into the reserve: the cache goes
   * back first. */
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 260 << 10, &b), 0);
  struct mxr_storage_pool_stats st;
  mxr__mem_pool_get_stats(pool, &st);
  ck_assert_uint_eq(st.reserve_flushes, 1);
  ck_assert_uint_eq(st.cached_bytes, 0);
  ck_assert_uint_eq(d.used, 260 << 10);
  ck_assert_int_eq(mxr__mem_pool_free(pool, b, 260 << 10), 0);
  /* Below the reserve line nothing is flushed. */
  void *c;
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 100 << 10, &c), 0);
  mxr__mem_pool_get_stats(pool, &st);
  ck_assert_uint_eq(st.reserve_flushes, 1);
  ck_assert_uint_eq(st.cached_bytes, 260 << 10);
  ck_assert_int_eq(mxr__mem_pool_free(pool, c, 100 << 10), 0);
  destroy_clean(pool, &d);
}
END_TEST

START_TEST(oom_retries_after_emptying_cache) {
  /* The device claims to be free, so the reserve check passes and only the
   * source's refusal can flush the cache. */
  struct fake_device d = {.capacity = 64 << 10, .hide_usage = true};
  mxr__mem_pool *pool = make_pool(&d, MXR_GPU_POOL_NAIVE, 0);
  void *a, *b;
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 40 << 10, &a), 0);
  ck_assert_int_eq(mxr__mem_pool_free(pool, a, 40 << 10), 0);
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 32 << 10, &b), 0); /* refused, then retried */
  ck_assert_uint_eq(d.used, 32 << 10);
  struct mxr_storage_pool_stats st;
  mxr__mem_pool_get_stats(pool, &st);
  ck_assert_uint_eq(st.reserve_flushes, 0);
  ck_assert_uint_eq(st.source_releases, 1);
  /* A request the device cannot hold at all: MXR_ENOMEM naming the device,
   * the size and the pool. */
  void *c = (void *)&c;
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 48 << 10, &c), MXR_ENOMEM);
  ck_assert_ptr_null(c);
  const char *msg = mxr_last_error();
  ck_assert_msg(strstr(msg, "fake(0)") && strstr(msg, "49152") && strstr(msg, "Naive"), "%s",
                msg);
  ck_assert_int_eq(mxr__mem_pool_free(pool, b, 32 << 10), 0);
  destroy_clean(pool, &d);
}
END_TEST

START_TEST(failed_release_is_reported) {
  struct fake_device d = {.capacity = 1 << 20};
  mxr__mem_pool *pool = make_pool(&d, MXR_GPU_POOL_UNPOOLED, 5);
  void *a;
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 100, &a), 0);
  d.fail_release = 1;
  ck_assert_int_eq(mxr__mem_pool_free(pool, a, 100), MXR_ECUDA);
  struct mxr_storage_pool_stats st;
  mxr__mem_pool_get_stats(pool, &st);
  ck_assert_uint_eq(st.release_failures, 1);
  /* The fake still holds the block the pool could not give back. */
  ck_assert_int_eq(fake_release(&d, a, 100), 0);
  ck_assert_uint_eq(mxr__mem_pool_destroy(pool), 0);
}
END_TEST

START_TEST(destroy_reports_leaks) {
  struct fake_device d = {.capacity = 1 << 20};
  mxr__mem_pool *pool = make_pool(&d, MXR_GPU_POOL_NAIVE, 5);
  void *a, *b;
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 100, &a), 0);
  ck_assert_int_eq(mxr__mem_pool_alloc(pool, 100, &b), 0);
  ck_assert_int_eq(mxr__mem_pool_free(pool, b, 100), 0);
  ck_assert_uint_eq(mxr__mem_pool_destroy(pool), 4096); /* `a` was never freed */
  ck_assert_int_eq(fake_release(&d, a, 4096), 0);
  ck_assert_uint_eq(d.used, 0);
}
END_TEST

START_TEST(bad_options) {
  struct fake_device d = {.capacity = 1 << 20};
  struct mxr__mem_source src = {.user = &d, .name = "fake(0)", .alloc = fake_alloc,
                                .release = fake_release, .mem_info = fake_mem_info};
  struct mxr__mem_pool_opts opts = {.type = 7, .reserve_percent = 5, .page_size = 4096,
                                    .round_cutoff = 24};
  mxr__mem_pool *pool = (mxr__mem_pool *)&pool;
  ck_assert_int_eq(mxr__mem_pool_create(&src, &opts, &pool), MXR_EINVAL);
  ck_assert_ptr_null(pool);
  ck_assert_msg(strstr(mxr_last_error(), "pool type 7"), "%s", mxr_last_error());
  opts.type = MXR_GPU_POOL_ROUND;
  opts.page_size = 3000;
  ck_assert_int_eq(mxr__mem_pool_create(&src, &opts, &pool), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "3000"), "%s", mxr_last_error());
  opts.page_size = 4096;
  opts.reserve_percent = 101;
  ck_assert_int_eq(mxr__mem_pool_create(&src, &opts, &pool), MXR_EINVAL);
  opts.reserve_percent = 5;
  src.mem_info = NULL;
  ck_assert_int_eq(mxr__mem_pool_create(&src, &opts, &pool), MXR_EINVAL);
}
END_TEST

START_TEST(many_sizes_keep_order) {
  /* Frees in a scrambled order across 64 sizes; every later request of a
   * size gets back a block of that size. */
  struct fake_device d = {.capacity = (size_t)1 << 32};
  mxr__mem_pool *pool = make_pool(&d, MXR_GPU_POOL_NAIVE, 0);
  void *blocks[64];
  for (int i = 0; i < 64; i++) ck_assert_int_eq(mxr__mem_pool_alloc(pool, (size_t)(i + 1) * 4096, &blocks[i]), 0);
  for (int k = 0; k < 64; k++) {
    int i = (k * 37) % 64;
    ck_assert_int_eq(mxr__mem_pool_free(pool, blocks[i], (size_t)(i + 1) * 4096), 0);
  }
  for (int i = 63; i >= 0; i--) {
    void *p;
    ck_assert_int_eq(mxr__mem_pool_alloc(pool, (size_t)(i + 1) * 4096, &p), 0);
    ck_assert_ptr_eq(p, blocks[i]);
  }
  ck_assert_int_eq(d.allocs, 64);
  for (int i = 0; i < 64; i++) ck_assert_int_eq(mxr__mem_pool_free(pool, blocks[i], (size_t)(i + 1) * 4096), 0);
  destroy_clean(pool, &d);
}
END_TEST

static Suite *mem_pool_suite(void) {
  Suite *s = suite_create("mem_pool");
  TCase *tc = tcase_create("mem_pool");
  tcase_add_test(tc, block_sizes);
  tcase_add_test(tc, naive_reuses_same_size_only);
  tcase_add_test(tc, round_shares_buckets);
  tcase_add_test(tc, unpooled_returns_every_block);
  tcase_add_test(tc, reserve_flushes_cache);
  tcase_add_test(tc, oom_retries_after_emptying_cache);
  tcase_add_test(tc, failed_release_is_reported);
  tcase_add_test(tc, destroy_reports_leaks);
  tcase_add_test(tc, bad_options);
  tcase_add_test(tc, many_sizes_keep_order);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return mxr_test_run(mem_pool_suite()); }
