/*
 * Storage (mxref/storage.h) and ndarray (mxref/ndarray.h) tests.  The ndarray
 * tests run once per engine type: arrays must behave the same whether ops run
 * inline (naive) or on worker threads.
 */
#include <check.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "engine_util.h"
#include "mxref/mxref.h"

/* The "absurd size" tests ask the allocator for petabytes.  Sanitizer
 * allocators abort on such requests by default; make them fail the call
 * instead, as glibc does, so the test sees MXR_ENOMEM in every build. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "allocator_may_return_null=1"; }

/* ===========================================================================
 * Storage
 */

START_TEST(storage_alignment) {
  const size_t sizes[] = {1, 3, 63, 64, 65, 1000, 4096, (size_t)1 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    struct mxr_storage s;
    ck_assert_int_eq(mxr_storage_alloc(mxr_cpu(0), sizes[i], &s), 0);
    ck_assert_ptr_nonnull(s.dptr);
    ck_assert_uint_eq(s.size, sizes[i]);
    ck_assert(mxr_context_equal(s.ctx, mxr_cpu(0)));
    ck_assert_msg((uintptr_t)s.dptr % MXR_STORAGE_ALIGN == 0, "%zu bytes at %p", sizes[i],
                  s.dptr);
    /* Every byte is ours (a sanitizer build checks the bounds). */
    memset(s.dptr, 0xab, s.size);
    mxr_storage_free(&s);
    ck_assert_ptr_null(s.dptr);
    ck_assert_uint_eq(s.size, 0);
  }
  /* The other host device types give host memory too. */
  const int host_types[] = {MXR_DEV_CPU_PINNED, MXR_DEV_CPU_SHARED};
  for (int i = 0; i < 2; i++) {
    struct mxr_context ctx = {host_types[i], 0};
    struct mxr_storage s;
    ck_assert_int_eq(mxr_storage_alloc(ctx, 100, &s), 0);
    ck_assert((uintptr_t)s.dptr % MXR_STORAGE_ALIGN == 0);
    mxr_storage_free(&s);
  }
}
END_TEST

START_TEST(storage_zero_size) {
  size_t before = mxr_storage_cpu_bytes_in_use();
  struct mxr_storage s;
  memset(&s, 0x5a, sizeof s);
  ck_assert_int_eq(mxr_storage_alloc(mxr_cpu(0), 0, &s), 0);
  ck_assert_ptr_null(s.dptr);
  ck_assert_uint_eq(s.size, 0);
  ck_assert(mxr_context_equal(s.ctx, mxr_cpu(0)));
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), before);
  mxr_storage_free(&s);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), before);
}
END_TEST

START_TEST(storage_counter) {
  size_t start = mxr_storage_cpu_bytes_in_use();
  struct mxr_storage a, b;
  ck_assert_int_eq(mxr_storage_alloc(mxr_cpu(0), 1000, &a), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), start + 1000);
  ck_assert_int_eq(mxr_storage_alloc(mxr_cpu(0), 24, &b), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), start + 1024);
  mxr_storage_free(&a);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), start + 24);
  /* A second free of an emptied handle changes nothing. */
  mxr_storage_free(&a);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), start + 24);
  mxr_storage_free(&b);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), start);
  mxr_storage_free(NULL);
}
END_TEST

START_TEST(storage_gpu_enodev) {
  /* The first GPU id this machine lacks: gpu(0) without a GPU. */
  int dev = mxr_gpu_count();
  char want[64];
  snprintf(want, sizeof want, "no GPU storage on gpu(%d)", dev);
  size_t start = mxr_storage_cpu_bytes_in_use();
  struct mxr_storage s;
  ck_assert_int_eq(mxr_storage_alloc(mxr_gpu(dev), 256, &s), MXR_ENODEV);
  ck_assert_msg(strstr(mxr_last_error(), want) != NULL, "%s", mxr_last_error());
  ck_assert_ptr_null(s.dptr);
  ck_assert_int_eq(mxr_storage_alloc(mxr_gpu(dev), 0, &s), MXR_ENODEV);
  ck_assert_msg(strstr(mxr_last_error(), want) != NULL, "%s", mxr_last_error());
  struct mxr_storage_pool_stats stats;
  ck_assert_int_eq(mxr_storage_pool_stats(mxr_gpu(dev), &stats), MXR_ENODEV);
  ck_assert_int_eq(mxr_storage_pool_stats(mxr_cpu(0), &stats), MXR_ENODEV);
  ck_assert_int_eq(mxr_storage_release_cache(mxr_gpu(dev)), MXR_ENODEV);
  ck_assert_int_eq(mxr_storage_release_cache(mxr_cpu(0)), 0);
  ck_assert_ptr_null(s.dptr);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), start);
  mxr_storage_free(&s); /* harmless on a failed handle */
}
END_TEST

START_TEST(storage_bad_args) {
  struct mxr_storage s;
  struct mxr_context bad = {42, 0};
  ck_assert_int_eq(mxr_storage_alloc(bad, 16, &s), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "42") != NULL, "%s", mxr_last_error());
  ck_assert_int_eq(mxr_storage_alloc(mxr_cpu(-1), 16, &s), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "-1") != NULL, "%s", mxr_last_error());
  ck_assert_int_eq(mxr_storage_alloc(mxr_cpu(0), 16, NULL), MXR_EINVAL);
  ck_assert_str_ne(mxr_last_error(), "");
}
END_TEST

START_TEST(storage_absurd_size) {
  size_t start = mxr_storage_cpu_bytes_in_use();
  /* Beyond PTRDIFF_MAX, and a size the allocator itself must refuse. */
  const size_t sizes[] = {SIZE_MAX, SIZE_MAX / 2 + 1, (size_t)1 << 60};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    struct mxr_storage s;
    ck_assert_int_eq(mxr_storage_alloc(mxr_cpu(0), sizes[i], &s), MXR_ENOMEM);
    char num[32];
    snprintf(num, sizeof num, "%zu", sizes[i]);
    ck_assert_msg(strstr(mxr_last_error(), num) != NULL, "message names %s: %s", num,
                  mxr_last_error());
    ck_assert_ptr_null(s.dptr);
    ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), start);
  }
}
END_TEST

/* ===========================================================================
 * NDArray, per engine type (loop index _i)
 */

static const int engine_types[] = {MXR_ENGINE_NAIVE, MXR_ENGINE_THREADED,
                                   MXR_ENGINE_THREADED_PER_DEVICE};
#define NUM_ENGINE_TYPES ((int)(sizeof engine_types / sizeof engine_types[0]))

static mxr_engine *make_engine(int i) {
  struct mxr_engine_opts o = {engine_types[i], 2, 1, 1, 1, 1, 4, NULL};
  mxr_engine *eng = NULL;
  int st = mxr_engine_create(&o, &eng);
  ck_assert_msg(st == 0, "%s: %s", mxr_engine_type_name(engine_types[i]), mxr_last_error());
  return eng;
}

static void free_engine(mxr_engine *eng) {
  ck_assert_msg(mxr_engine_free(eng) == 0, "%s", mxr_last_error());
}

/* A small deterministic generator, so a failure reproduces. */
static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

START_TEST(nd_create_shape) {
  mxr_engine *eng = make_engine(_i);
  const int64_t shape[] = {2, 3, 4};
  mxr_ndarray *a = NULL;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 3, mxr_cpu(0), MXR_FLOAT32, 0, &a), 0);
  ck_assert_ptr_nonnull(a);
  ck_assert(!mxr_ndarray_is_none(a));
  ck_assert_int_eq(mxr_ndarray_ndim(a), 3);
  for (int d = 0; d < 3; d++) ck_assert_int_eq(mxr_ndarray_shape(a)[d], shape[d]);
  ck_assert_int_eq(mxr_ndarray_size(a), 24);
  ck_assert_int_eq(mxr_ndarray_dtype(a), MXR_FLOAT32);
  ck_assert(mxr_context_equal(mxr_ndarray_context(a), mxr_cpu(0)));
  ck_assert_ptr_nonnull(mxr_ndarray_var(a));
  void *p = mxr_ndarray_data(a);
  ck_assert_ptr_nonnull(p);
  ck_assert((uintptr_t)p % MXR_STORAGE_ALIGN == 0);

  /* Every dtype gives its element size worth of memory. */
  for (int dt = MXR_FLOAT32; dt <= MXR_BOOL; dt++) {
    /* Frees go through the engine: let the previous one land first. */
    ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
    size_t before = mxr_storage_cpu_bytes_in_use();
    mxr_ndarray *b = NULL;
    ck_assert_int_eq(mxr_ndarray_create(eng, shape, 3, mxr_cpu(0), dt, 0, &b), 0);
    ck_assert_int_eq(mxr_ndarray_dtype(b), dt);
    ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), before + 24 * mxr_dtype_size(dt));
    mxr_ndarray_free(b);
  }
  mxr_ndarray_free(a);
  free_engine(eng);
}
END_TEST

START_TEST(nd_scalar_and_empty) {
  mxr_engine *eng = make_engine(_i);
  mxr_ndarray *s = NULL;
  ck_assert_int_eq(mxr_ndarray_create(eng, NULL, 0, mxr_cpu(0), MXR_FLOAT64, 1, &s), 0);
  ck_assert_int_eq(mxr_ndarray_ndim(s), 0);
  ck_assert_int_eq(mxr_ndarray_size(s), 1);
  ck_assert(!mxr_ndarray_is_none(s));
  double in = 3.25, out = 0;
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(s, &in, 1), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(s, &out, 1), 0);
  ck_assert(out == 3.25);
  mxr_ndarray_free(s);

  /* A zero dimension: no elements, no memory, copies of 0 elements work,
   * even with dimensions that would overflow if multiplied out. */
  const int64_t shape[] = {INT64_MAX, 0, INT64_MAX};
  mxr_ndarray *e = NULL;
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0); /* the scalar's free */
  size_t before = mxr_storage_cpu_bytes_in_use();
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 3, mxr_cpu(0), MXR_FLOAT32, 0, &e), 0);
  ck_assert_int_eq(mxr_ndarray_size(e), 0);
  ck_assert_ptr_null(mxr_ndarray_data(e));
  ck_assert_int_eq(mxr_ndarray_ensure_alloc(e), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), before);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(e, NULL, 0), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(e, NULL, 0), 0);
  mxr_ndarray_free(e);
  free_engine(eng);
}
END_TEST

/* Expect `call` to fail with MXR_EINVAL and a message that says `what`. */
#define EXPECT_EINVAL(call, what)                                                   \
  do {                                                                              \
    int st_ = (call);                                                               \
    ck_assert_msg(st_ == MXR_EINVAL, "%s: status %d", #call, st_);                  \
    ck_assert_msg(strstr(mxr_last_error(), (what)) != NULL,                         \
                  "%s: message '%s' lacks '%s'", #call, mxr_last_error(), (what));  \
  } while (0)

START_TEST(nd_bad_args) {
  mxr_engine *eng = make_engine(_i);
  size_t before = mxr_storage_cpu_bytes_in_use();
  const int64_t shape[] = {2, 3};
  mxr_ndarray *a = (mxr_ndarray *)&a; /* must be reset to NULL on failure */

  EXPECT_EINVAL(mxr_ndarray_create(NULL, shape, 2, mxr_cpu(0), MXR_FLOAT32, 0, &a), "engine");
  ck_assert_ptr_null(a);
  EXPECT_EINVAL(mxr_ndarray_create(eng, shape, 2, mxr_cpu(0), MXR_FLOAT32, 0, NULL), "out");
  EXPECT_EINVAL(mxr_ndarray_create(eng, shape, -1, mxr_cpu(0), MXR_FLOAT32, 0, &a),
                "ndim -1 is outside 0..8");
  EXPECT_EINVAL(mxr_ndarray_create(eng, shape, MXR_MAX_NDIM + 1, mxr_cpu(0), MXR_FLOAT32, 0, &a),
                "ndim 9 is outside 0..8");
  EXPECT_EINVAL(mxr_ndarray_create(eng, NULL, 2, mxr_cpu(0), MXR_FLOAT32, 0, &a),
                "shape is NULL");
  const int64_t neg[] = {2, -3};
  EXPECT_EINVAL(mxr_ndarray_create(eng, neg, 2, mxr_cpu(0), MXR_FLOAT32, 0, &a),
                "shape[1] is -3");
  EXPECT_EINVAL(mxr_ndarray_create(eng, shape, 2, mxr_cpu(0), 99, 0, &a), "unknown dtype 99");
  EXPECT_EINVAL(mxr_ndarray_create(eng, shape, 2, mxr_cpu(0), -1, 0, &a), "unknown dtype -1");
  const int64_t huge[] = {(int64_t)1 << 40, (int64_t)1 << 40};
  EXPECT_EINVAL(mxr_ndarray_create(eng, huge, 2, mxr_cpu(0), MXR_FLOAT32, 1, &a), "too large");
  /* The element count fits in int64 but the byte count does not. */
  const int64_t big[] = {(int64_t)1 << 61};
  EXPECT_EINVAL(mxr_ndarray_create(eng, big, 1, mxr_cpu(0), MXR_FLOAT64, 1, &a), "too large");
  struct mxr_context bad_ctx = {42, 0};
  EXPECT_EINVAL(mxr_ndarray_create(eng, shape, 2, bad_ctx, MXR_FLOAT32, 0, &a),
                "invalid context");
  EXPECT_EINVAL(mxr_ndarray_create(eng, shape, 2, mxr_cpu(-2), MXR_FLOAT32, 0, &a),
                "invalid context");
  EXPECT_EINVAL(mxr_ndarray_create_none(NULL, &a), "engine");
  EXPECT_EINVAL(mxr_ndarray_create_none(eng, NULL), "out");
  ck_assert_ptr_null(a);

  /* NULL arrays are refused by the calls that can fail, and are harmless
   * for the others. */
  float x = 0;
  EXPECT_EINVAL(mxr_ndarray_sync_copy_from_cpu(NULL, &x, 1), "NULL");
  EXPECT_EINVAL(mxr_ndarray_sync_copy_to_cpu(NULL, &x, 1), "NULL");
  EXPECT_EINVAL(mxr_ndarray_wait_to_read(NULL), "NULL");
  EXPECT_EINVAL(mxr_ndarray_wait_to_write(NULL), "NULL");
  EXPECT_EINVAL(mxr_ndarray_ensure_alloc(NULL), "NULL");
  ck_assert_ptr_null(mxr_ndarray_data(NULL));
  ck_assert_ptr_null(mxr_ndarray_retain(NULL));
  mxr_ndarray_free(NULL);

  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), before);
  free_engine(eng);
}
END_TEST

START_TEST(nd_round_trip) {
  mxr_engine *eng = make_engine(_i);
  uint64_t seed = 0x9e3779b97f4a7c15u + (uint64_t)_i;
  const int dtypes[] = {MXR_FLOAT32, MXR_FLOAT64, MXR_INT8, MXR_INT64};
  const int64_t shape[] = {7, 13, 5};
  const size_t n = 7 * 13 * 5;
  for (int k = 0; k < 4; k++) {
    size_t nbytes = n * mxr_dtype_size(dtypes[k]);
    unsigned char *src = malloc(nbytes), *dst = malloc(nbytes);
    ck_assert(src && dst);
    for (size_t j = 0; j < nbytes; j++) src[j] = (unsigned char)rng_next(&seed);
    memset(dst, 0, nbytes);
    for (int delay = 0; delay <= 1; delay++) {
      mxr_ndarray *a = NULL;
      ck_assert_int_eq(mxr_ndarray_create(eng, shape, 3, mxr_cpu(0), dtypes[k], delay, &a), 0);
      ck_assert_msg(mxr_ndarray_sync_copy_from_cpu(a, src, n) == 0, "%s", mxr_last_error());
      ck_assert_msg(mxr_ndarray_sync_copy_to_cpu(a, dst, n) == 0, "%s", mxr_last_error());
      ck_assert_msg(memcmp(src, dst, nbytes) == 0, "dtype %s delay %d differs",
                    mxr_dtype_name(dtypes[k]), delay);
      ck_assert(memcmp(mxr_ndarray_data(a), src, nbytes) == 0);
      mxr_ndarray_free(a);
      memset(dst, 0, nbytes);
    }
    free(src);
    free(dst);
  }
  free_engine(eng);
}
END_TEST

START_TEST(nd_copy_to) {
  /* A chain of copies between host arrays of different shapes (same size),
   * pushed back to back: each is ordered after the one before. */
  mxr_engine *eng = make_engine(_i);
  size_t b0 = mxr_storage_cpu_bytes_in_use();
  const int64_t s1[] = {6, 5}, s2[] = {30}, s3[] = {2, 3, 5};
  mxr_ndarray *a, *b, *c;
  ck_assert_int_eq(mxr_ndarray_create(eng, s1, 2, mxr_cpu(0), MXR_FLOAT64, 0, &a), 0);
  ck_assert_int_eq(mxr_ndarray_create(eng, s2, 1, mxr_cpu(0), MXR_FLOAT64, 1, &b), 0);
  ck_assert_int_eq(mxr_ndarray_create(eng, s3, 3, mxr_cpu(0), MXR_FLOAT64, 1, &c), 0);
  double in[30], out[30];
  for (int i = 0; i < 30; i++) in[i] = i * 1.25 - 3;
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, in, 30), 0);
  ck_assert_msg(mxr_ndarray_copy_to(a, b) == 0, "%s", mxr_last_error());
  ck_assert_msg(mxr_ndarray_copy_to(b, c) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(mxr_ndarray_copy_to(c, c), 0); /* onto itself: nothing to do */
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(c, out, 30), 0);
  ck_assert_int_eq(memcmp(in, out, sizeof in), 0);

  /* Mismatches are refused before anything is pushed. */
  mxr_ndarray *f32, *small;
  ck_assert_int_eq(mxr_ndarray_create(eng, s2, 1, mxr_cpu(0), MXR_FLOAT32, 1, &f32), 0);
  ck_assert_int_eq(mxr_ndarray_copy_to(a, f32), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "dtype"), "%s", mxr_last_error());
  ck_assert_int_eq(mxr_ndarray_create(eng, s1, 1, mxr_cpu(0), MXR_FLOAT64, 1, &small), 0);
  ck_assert_int_eq(mxr_ndarray_copy_to(a, small), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "30 elements"), "%s", mxr_last_error());
  ck_assert_int_eq(mxr_ndarray_copy_to(NULL, a), MXR_EINVAL);
  ck_assert_int_eq(mxr_ndarray_copy_to(a, NULL), MXR_EINVAL);

  /* To a GPU this engine cannot reach (no driver, or no such GPU): the push
   * fails with MXR_ENODEV and drops the references it took. */
  mxr_ndarray *g;
  ck_assert_int_eq(mxr_ndarray_create(eng, s2, 1, mxr_gpu(mxr_gpu_count()), MXR_FLOAT64, 1, &g),
                   0);
  ck_assert_int_eq(mxr_ndarray_copy_to(a, g), MXR_ENODEV);
  mxr_ndarray_free(g);
  mxr_ndarray_free(a);
  mxr_ndarray_free(b);
  mxr_ndarray_free(c);
  mxr_ndarray_free(f32);
  mxr_ndarray_free(small);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0);
  free_engine(eng);
}
END_TEST

START_TEST(nd_delay_alloc) {
  mxr_engine *eng = make_engine(_i);
  size_t b0 = mxr_storage_cpu_bytes_in_use();
  const int64_t shape[] = {1000};
  mxr_ndarray *a = NULL, *b = NULL, *c = NULL;

  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 1, &a), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0);
  ck_assert_int_eq(mxr_ndarray_wait_to_read(a), 0); /* waiting allocates nothing */
  ck_assert_int_eq(mxr_ndarray_wait_to_write(a), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0);
  void *p = mxr_ndarray_data(a);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0 + 4000);
  ck_assert_ptr_eq(mxr_ndarray_data(a), p); /* allocated once */
  ck_assert_int_eq(mxr_ndarray_ensure_alloc(a), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0 + 4000);

  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 1, &b), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0 + 4000);
  ck_assert_int_eq(mxr_ndarray_ensure_alloc(b), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0 + 8000);

  /* Without delay the memory exists at once. */
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_INT8, 0, &c), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0 + 9000);

  /* A delayed array that was never touched frees nothing and leaks nothing. */
  mxr_ndarray *d = NULL;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT64, 1, &d), 0);
  mxr_ndarray_free(d);

  mxr_ndarray_free(a);
  mxr_ndarray_free(b);
  mxr_ndarray_free(c);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0);
  free_engine(eng);
}
END_TEST

/* An op body that fills a float array with 2*i (+ an offset). */
struct fill_param {
  float *p;
  size_t n;
  float offset;
  int sleep_ms;
  size_t bytes_needed; /* the counter must be at least this when the op ends */
  atomic_int ran;
  atomic_size_t bytes_seen;
};

static int fill_op(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  struct fill_param *f = param;
  if (f->sleep_ms > 0) tu_sleep_ms(f->sleep_ms);
  for (size_t i = 0; i < f->n; i++) f->p[i] = f->offset + 2.0f * (float)i;
  atomic_store(&f->bytes_seen, mxr_storage_cpu_bytes_in_use());
  atomic_store(&f->ran, 1);
  return 0;
}

START_TEST(nd_pushed_write_seen) {
  mxr_engine *eng = make_engine(_i);
  const int64_t shape[] = {64, 16};
  const size_t n = 64 * 16;
  mxr_ndarray *a = NULL;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 2, mxr_cpu(0), MXR_FLOAT32, 1, &a), 0);
  struct fill_param f = {.p = mxr_ndarray_data(a), .n = n, .offset = 1.0f, .sleep_ms = 20};
  ck_assert_ptr_nonnull(f.p);
  mxr_var *mut[] = {mxr_ndarray_var(a)};
  ck_assert_int_eq(mxr_engine_push_sync(eng, fill_op, &f, NULL, mxr_cpu(0), NULL, 0, mut, 1,
                                        "fill"),
                   0);
  /* The copy waits for the pending write. */
  float *out = calloc(n, sizeof *out);
  ck_assert_ptr_nonnull(out);
  ck_assert_msg(mxr_ndarray_sync_copy_to_cpu(a, out, n) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(atomic_load(&f.ran), 1);
  for (size_t i = 0; i < n; i++) ck_assert(out[i] == 1.0f + 2.0f * (float)i);

  /* And a later copy from host is not overtaken by a write pushed before it. */
  f.offset = 5.0f;
  atomic_store(&f.ran, 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, fill_op, &f, NULL, mxr_cpu(0), NULL, 0, mut, 1,
                                        "fill"),
                   0);
  for (size_t i = 0; i < n; i++) out[i] = -1.0f;
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, out, n), 0);
  ck_assert_int_eq(atomic_load(&f.ran), 1);
  ck_assert(((float *)mxr_ndarray_data(a))[n - 1] == -1.0f);

  free(out);
  mxr_ndarray_free(a);
  free_engine(eng);
}
END_TEST

START_TEST(nd_free_while_op_writes) {
  mxr_engine *eng = make_engine(_i);
  size_t b0 = mxr_storage_cpu_bytes_in_use();
  const int64_t shape[] = {1 << 18};
  const size_t nbytes = ((size_t)1 << 18) * sizeof(float);
  mxr_ndarray *a = NULL;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 0, &a), 0);
  struct fill_param f = {.p = mxr_ndarray_data(a), .n = (size_t)1 << 18, .sleep_ms = 50,
                         .bytes_needed = b0 + nbytes};
  mxr_var *mut[] = {mxr_ndarray_var(a)};
  ck_assert_int_eq(mxr_engine_push_sync(eng, fill_op, &f, NULL, mxr_cpu(0), NULL, 0, mut, 1,
                                        "slow_fill"),
                   0);
  /* Drop the only reference while the op (on threaded engines) still
   * sleeps; it then writes every element of the memory. */
  mxr_ndarray_free(a);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(atomic_load(&f.ran), 1);
  /* The memory was still allocated when the op finished writing... */
  ck_assert_msg(atomic_load(&f.bytes_seen) >= f.bytes_needed, "op saw %zu bytes, needs %zu",
                atomic_load(&f.bytes_seen), f.bytes_needed);
  /* ...and is gone once the engine is idle. */
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0);
  free_engine(eng);
}
END_TEST

START_TEST(nd_wrong_count) {
  mxr_engine *eng = make_engine(_i);
  const int64_t shape[] = {3, 4};
  mxr_ndarray *a = NULL;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 2, mxr_cpu(0), MXR_FLOAT32, 1, &a), 0);
  float buf[13] = {0};
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, buf, 11), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "11") && strstr(mxr_last_error(), "12"), "%s",
                mxr_last_error());
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, buf, 13), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "13") && strstr(mxr_last_error(), "12"), "%s",
                mxr_last_error());
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(a, buf, 0), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "0 elements") && strstr(mxr_last_error(), "12"), "%s",
                mxr_last_error());
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(a, buf, 13), MXR_EINVAL);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, NULL, 12), MXR_EINVAL);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(a, NULL, 12), MXR_EINVAL);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, buf, 12), 0);
  mxr_ndarray_free(a);
  free_engine(eng);
}
END_TEST

START_TEST(nd_none) {
  mxr_engine *eng = make_engine(_i);
  size_t b0 = mxr_storage_cpu_bytes_in_use();
  mxr_ndarray *a = NULL;
  ck_assert_int_eq(mxr_ndarray_create_none(eng, &a), 0);
  ck_assert(mxr_ndarray_is_none(a));
  ck_assert_int_eq(mxr_ndarray_ndim(a), -1);
  ck_assert_int_eq(mxr_ndarray_size(a), 0);
  ck_assert_ptr_nonnull(mxr_ndarray_var(a));
  ck_assert_ptr_null(mxr_ndarray_data(a));
  ck_assert_int_eq(mxr_ndarray_ensure_alloc(a), MXR_ESTATE);
  ck_assert_int_eq(mxr_ndarray_wait_to_read(a), 0);
  ck_assert_int_eq(mxr_ndarray_wait_to_write(a), 0);
  float x = 0;
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(a, &x, 0), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "none"), "%s", mxr_last_error());
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0);
  mxr_ndarray_free(a);
  free_engine(eng);
}
END_TEST

START_TEST(nd_retain) {
  mxr_engine *eng = make_engine(_i);
  size_t b0 = mxr_storage_cpu_bytes_in_use();
  const int64_t shape[] = {256};
  mxr_ndarray *a = NULL;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 0, &a), 0);
  ck_assert_ptr_eq(mxr_ndarray_retain(a), a);
  ck_assert_ptr_eq(mxr_ndarray_retain(a), a);
  mxr_ndarray_free(a);
  mxr_ndarray_free(a);
  /* One reference left: still usable, memory still there. */
  float v[256] = {0};
  v[255] = 7;
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, v, 256), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0 + sizeof v);
  mxr_ndarray_free(a);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0);
  free_engine(eng);
}
END_TEST

/* A reader that takes its time and records that it finished. */
struct read_param {
  const float *p;
  int sleep_ms;
  atomic_int done;
};

static int slow_read_op(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  struct read_param *r = param;
  tu_sleep_ms(r->sleep_ms);
  volatile float sink = r->p[0];
  (void)sink;
  atomic_store(&r->done, 1);
  return 0;
}

START_TEST(nd_wait_to_write_waits_for_readers) {
  mxr_engine *eng = make_engine(_i);
  const int64_t shape[] = {16};
  mxr_ndarray *a = NULL;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 0, &a), 0);
  struct read_param r = {.p = mxr_ndarray_data(a), .sleep_ms = 50};
  mxr_var *cv[] = {mxr_ndarray_var(a)};
  ck_assert_int_eq(
      mxr_engine_push_sync(eng, slow_read_op, &r, NULL, mxr_cpu(0), cv, 1, NULL, 0, "slow_read"),
      0);
  ck_assert_int_eq(mxr_ndarray_wait_to_write(a), 0);
  ck_assert_int_eq(atomic_load(&r.done), 1);

  /* A copy from host overwrites memory that readers use: it waits too. */
  atomic_store(&r.done, 0);
  ck_assert_int_eq(
      mxr_engine_push_sync(eng, slow_read_op, &r, NULL, mxr_cpu(0), cv, 1, NULL, 0, "slow_read"),
      0);
  float v[16] = {1};
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, v, 16), 0);
  ck_assert_int_eq(atomic_load(&r.done), 1);
  mxr_ndarray_free(a);
  free_engine(eng);
}
END_TEST

/* Ops that all read one delayed array and ask for its memory at once. */
#define N_READERS 8
struct alloc_race {
  mxr_ndarray *arr;
  void *seen[N_READERS];
  atomic_int next;
};

static int alloc_reader_op(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  struct alloc_race *r = param;
  int slot = atomic_fetch_add(&r->next, 1);
  r->seen[slot] = mxr_ndarray_data(r->arr);
  return r->seen[slot] ? 0 : mxr_set_error(MXR_EOP, "reader %d got no memory", slot);
}

START_TEST(nd_concurrent_first_access) {
  mxr_engine *eng = make_engine(_i);
  size_t b0 = mxr_storage_cpu_bytes_in_use();
  const int64_t shape[] = {100000};
  struct alloc_race r = {0};
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 1, &r.arr), 0);
  mxr_var *cv[] = {mxr_ndarray_var(r.arr)};
  for (int k = 0; k < N_READERS; k++)
    ck_assert_int_eq(mxr_engine_push_sync(eng, alloc_reader_op, &r, NULL, mxr_cpu(0), cv, 1,
                                          NULL, 0, "first_access"),
                     0);
  ck_assert_msg(mxr_engine_wait_for_all(eng) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(atomic_load(&r.next), N_READERS);
  for (int k = 0; k < N_READERS; k++) ck_assert_ptr_eq(r.seen[k], r.seen[0]);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0 + 400000);
  mxr_ndarray_free(r.arr);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0);
  free_engine(eng);
}
END_TEST

static int failing_op(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  (void)param;
  return mxr_set_error(MXR_EOP, "deliberate failure in a test op");
}

START_TEST(nd_op_error_surfaces) {
  mxr_engine *eng = make_engine(_i);
  const int64_t shape[] = {4};
  mxr_ndarray *a = NULL;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 0, &a), 0);
  mxr_var *mut[] = {mxr_ndarray_var(a)};
  int st = mxr_engine_push_sync(eng, failing_op, NULL, NULL, mxr_cpu(0), NULL, 0, mut, 1, "fail");
  if (engine_types[_i] == MXR_ENGINE_NAIVE) {
    /* Ran at push: the push reports it and nothing is left on the array. */
    ck_assert_int_eq(st, MXR_EOP);
    ck_assert_int_eq(mxr_ndarray_wait_to_read(a), 0);
  } else {
    ck_assert_int_eq(st, 0);
    float out[4];
    ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(a, out, 4), MXR_EOP);
    ck_assert_msg(strstr(mxr_last_error(), "deliberate failure"), "%s", mxr_last_error());
    /* Surfacing cleared it. */
    ck_assert_int_eq(mxr_ndarray_wait_to_read(a), 0);
  }
  mxr_ndarray_free(a);
  free_engine(eng);
}
END_TEST

START_TEST(nd_free_with_error) {
  /* An array whose last write failed is freed without anyone waiting: its
   * memory is released all the same, and the error still reaches
   * wait-for-all. */
  mxr_engine *eng = make_engine(_i);
  size_t b0 = mxr_storage_cpu_bytes_in_use();
  const int64_t shape[] = {1024};
  mxr_ndarray *a = NULL;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 0, &a), 0);
  mxr_var *mut[] = {mxr_ndarray_var(a)};
  int st = mxr_engine_push_sync(eng, failing_op, NULL, NULL, mxr_cpu(0), NULL, 0, mut, 1, "fail");
  mxr_ndarray_free(a);
  int waited = mxr_engine_wait_for_all(eng);
  if (engine_types[_i] == MXR_ENGINE_NAIVE) {
    ck_assert_int_eq(st, MXR_EOP);
    ck_assert_int_eq(waited, 0);
  } else {
    ck_assert_int_eq(st, 0);
    ck_assert_int_eq(waited, MXR_EOP);
  }
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0);
  free_engine(eng);
}
END_TEST

START_TEST(nd_gpu_context) {
  /* On a GPU this machine lacks, an eager array fails with MXR_ENODEV and a
   * delayed one fails at first access, both without leaking. */
  int dev = mxr_gpu_count();
  mxr_engine *eng = make_engine(_i);
  size_t b0 = mxr_storage_cpu_bytes_in_use();
  const int64_t shape[] = {8};
  mxr_ndarray *a = (mxr_ndarray *)&a;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_gpu(dev), MXR_FLOAT32, 0, &a),
                   MXR_ENODEV);
  ck_assert_ptr_null(a);
  ck_assert_msg(strstr(mxr_last_error(), "GPU storage"), "%s", mxr_last_error());
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_gpu(dev), MXR_FLOAT32, 1, &a), 0);
  ck_assert(mxr_context_equal(mxr_ndarray_context(a), mxr_gpu(dev)));
  ck_assert_int_eq(mxr_ndarray_ensure_alloc(a), MXR_ENODEV);
  ck_assert_ptr_null(mxr_ndarray_data(a));
  float v[8] = {0};
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, v, 8), MXR_ENODEV);
  mxr_ndarray_free(a);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_uint_eq(mxr_storage_cpu_bytes_in_use(), b0);
  free_engine(eng);
}
END_TEST

static Suite *storage_suite(void) {
  Suite *s = suite_create("storage");

  TCase *tc = tcase_create("storage");
  tcase_add_test(tc, storage_alignment);
  tcase_add_test(tc, storage_zero_size);
  tcase_add_test(tc, storage_counter);
  tcase_add_test(tc, storage_gpu_enodev);
  tcase_add_test(tc, storage_bad_args);
  tcase_add_test(tc, storage_absurd_size);
  suite_add_tcase(s, tc);

  tc = tcase_create("ndarray");
  tcase_set_timeout(tc, 30);
  tcase_add_loop_test(tc, nd_create_shape, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_scalar_and_empty, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_bad_args, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_round_trip, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_copy_to, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_delay_alloc, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_pushed_write_seen, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_free_while_op_writes, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_wrong_count, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_none, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_retain, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_wait_to_write_waits_for_readers, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_concurrent_first_access, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_op_error_surfaces, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_free_with_error, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, nd_gpu_context, 0, NUM_ENGINE_TYPES);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return mxr_test_run(storage_suite()); }
