/*
 * Engine bulking: which ops are bulked, when a bulk is flushed (size, context
 * change, unbulked push, waits, bulk-size change, thread exit), what a bulk
 * reads and writes, and how an error inside a bulk behaves.
 */
#include <pthread.h>
#include <string.h>

#include "check_tap.h"
#include "engine_util.h"

struct name_log {
  pthread_mutex_t mu;
  int bulks;  /* "ImperativeBulk" ops run */
  int others; /* any other op run */
};

static uint64_t log_begin(void *u, const struct mxr_op_event *ev) {
  struct name_log *l = u;
  pthread_mutex_lock(&l->mu);
  if (strcmp(ev->name, "ImperativeBulk") == 0)
    l->bulks++;
  else
    l->others++;
  pthread_mutex_unlock(&l->mu);
  return 0;
}

static mxr_engine *bulk_engine(struct name_log *log) {
  struct mxr_engine_opts o = tu_opts(MXR_ENGINE_THREADED_PER_DEVICE, 2);
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_create(&o, &eng), 0);
  if (log) {
    memset(log, 0, sizeof *log);
    pthread_mutex_init(&log->mu, NULL);
    struct mxr_engine_hooks h = {log, log_begin, NULL};
    mxr_engine_set_hooks(eng, &h);
  }
  return eng;
}

static int incr(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  atomic_fetch_add((atomic_int *)p, 1);
  return 0;
}

static uint64_t bulks_pushed(mxr_engine *eng) {
  struct mxr_engine_stats s;
  mxr_engine_get_stats(eng, &s);
  return s.bulks_pushed;
}

static void push_incr(mxr_engine *eng, atomic_int *counter, mxr_var *v, struct mxr_context ctx) {
  ck_assert_int_eq(mxr_engine_push_sync(eng, incr, counter, NULL, ctx, NULL, 0, &v, 1, "incr"), 0);
}

START_TEST(test_bulks_of_size_n) {
  struct name_log log;
  mxr_engine *eng = bulk_engine(&log);
  mxr_var *v[30];
  for (int k = 0; k < 30; k++) ck_assert_int_eq(mxr_engine_new_var(eng, &v[k]), 0);
  atomic_int count = 0;
  ck_assert_int_eq(mxr_engine_set_bulk_size(eng, 15), 0);
  ck_assert_int_eq(mxr_engine_bulk_size(eng), 15);
  for (int k = 0; k < 14; k++) push_incr(eng, &count, v[k], mxr_cpu(0));
  ck_assert_uint_eq(bulks_pushed(eng), 0); /* still pending */
  push_incr(eng, &count, v[14], mxr_cpu(0));
  ck_assert_uint_eq(bulks_pushed(eng), 1); /* flushed at the size */
  for (int k = 15; k < 30; k++) push_incr(eng, &count, v[k], mxr_cpu(0));
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(atomic_load(&count), 30);
  struct mxr_engine_stats s;
  mxr_engine_get_stats(eng, &s);
  ck_assert_uint_eq(s.ops_pushed, 2);
  ck_assert_uint_eq(s.ops_bulked, 30);
  ck_assert_int_eq(log.bulks, 2);
  ck_assert_int_eq(log.others, 0);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_flush_on_context_change) {
  mxr_engine *eng = bulk_engine(NULL);
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  atomic_int count = 0;
  mxr_engine_set_bulk_size(eng, 15);
  for (int k = 0; k < 3; k++) push_incr(eng, &count, v, mxr_cpu(0));
  ck_assert_uint_eq(bulks_pushed(eng), 0);
  push_incr(eng, &count, v, mxr_cpu(1));
  ck_assert_uint_eq(bulks_pushed(eng), 1);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_uint_eq(bulks_pushed(eng), 2);
  ck_assert_int_eq(atomic_load(&count), 4);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

static void finish_now(const struct mxr_run_ctx *rctx, void *p, mxr_completion *done) {
  incr(rctx, p);
  mxr_engine_complete(done, 0);
}

/* Each kind of op that cannot be bulked closes the pending bulk first. */
START_TEST(test_flush_on_unbulked_push) {
  struct name_log log;
  mxr_engine *eng = bulk_engine(&log);
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  atomic_int count = 0;
  mxr_engine_set_bulk_size(eng, 15);
  struct mxr_push unbulked[4] = {
      {.sync_fn = incr, .param = &count, .ctx = mxr_cpu(0), .prop = MXR_PROP_CPU_PRIORITIZED, .name = "prio"},
      {.sync_fn = incr, .param = &count, .ctx = mxr_cpu(0), .priority = 2, .name = "pri2"},
      {.async_fn = finish_now, .param = &count, .ctx = mxr_cpu(0), .prop = MXR_PROP_ASYNC, .name = "async"},
      {.sync_fn = incr, .param = &count, .ctx = mxr_cpu(0), .no_bulk = true, .name = "nobulk"},
  };
  for (int u = 0; u < 4; u++) {
    push_incr(eng, &count, v, mxr_cpu(0));
    push_incr(eng, &count, v, mxr_cpu(0));
    ck_assert_uint_eq(bulks_pushed(eng), (uint64_t)u);
    ck_assert_int_eq(mxr_engine_push(eng, &unbulked[u]), 0);
    ck_assert_uint_eq(bulks_pushed(eng), (uint64_t)u + 1);
  }
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(atomic_load(&count), 12);
  ck_assert_int_eq(log.bulks, 4);
  ck_assert_int_eq(log.others, 4);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_flush_on_waits) {
  mxr_engine *eng = bulk_engine(NULL);
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  atomic_int count = 0;
  mxr_engine_set_bulk_size(eng, 15);
  for (int k = 0; k < 3; k++) push_incr(eng, &count, v, mxr_cpu(0));
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, v), 0); /* would hang if not flushed */
  ck_assert_int_eq(atomic_load(&count), 3);
  ck_assert_uint_eq(bulks_pushed(eng), 1);
  for (int k = 0; k < 3; k++) push_incr(eng, &count, v, mxr_cpu(0));
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(atomic_load(&count), 6);
  ck_assert_uint_eq(bulks_pushed(eng), 2);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_set_bulk_size_flushes_and_returns_previous) {
  mxr_engine *eng = bulk_engine(NULL);
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  atomic_int count = 0;
  ck_assert_int_eq(mxr_engine_set_bulk_size(eng, 15), 0);
  for (int k = 0; k < 5; k++) push_incr(eng, &count, v, mxr_cpu(0));
  ck_assert_int_eq(mxr_engine_set_bulk_size(eng, 10), 15);
  ck_assert_uint_eq(bulks_pushed(eng), 0); /* 5 < 10: kept */
  ck_assert_int_eq(mxr_engine_set_bulk_size(eng, 0), 10);
  ck_assert_uint_eq(bulks_pushed(eng), 1); /* 5 >= 0: flushed */
  push_incr(eng, &count, v, mxr_cpu(0)); /* bulk size 0: a plain push */
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  struct mxr_engine_stats s;
  mxr_engine_get_stats(eng, &s);
  ck_assert_uint_eq(s.ops_pushed, 2);
  ck_assert_int_eq(atomic_load(&count), 6);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_naive_engine_never_bulks) {
  struct mxr_engine_opts o = tu_opts(MXR_ENGINE_NAIVE, 1);
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_create(&o, &eng), 0);
  ck_assert_int_eq(mxr_engine_set_bulk_size(eng, 15), 0);
  ck_assert_int_eq(mxr_engine_bulk_size(eng), 0);
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  atomic_int count = 0;
  push_incr(eng, &count, v, mxr_cpu(0));
  ck_assert_int_eq(atomic_load(&count), 1); /* ran at push */
  ck_assert_uint_eq(bulks_pushed(eng), 0);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* Inside one bulk, an op may read what an earlier op of the bulk wrote: the
 * bulk writes that var, and reads only what nobody in it writes. */
struct chain {
  int *src, *dst;
};

static int copy_plus_one(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  struct chain *c = p;
  *c->dst = *c->src + 1;
  return 0;
}

START_TEST(test_dependencies_inside_a_bulk) {
  mxr_engine *eng = bulk_engine(NULL);
  mxr_var *a, *b, *c;
  ck_assert_int_eq(mxr_engine_new_var(eng, &a), 0);
  ck_assert_int_eq(mxr_engine_new_var(eng, &b), 0);
  ck_assert_int_eq(mxr_engine_new_var(eng, &c), 0);
  int va = 10, vb = 0, vc = 0;
  struct chain ab = {&va, &vb}, bc = {&vb, &vc};
  mxr_engine_set_bulk_size(eng, 15);
  ck_assert_int_eq(mxr_engine_push_sync(eng, copy_plus_one, &ab, NULL, mxr_cpu(0), &a, 1, &b, 1, "ab"), 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, copy_plus_one, &bc, NULL, mxr_cpu(0), &b, 1, &c, 1, "bc"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, c), 0);
  ck_assert_int_eq(vc, 12);
  ck_assert_uint_eq(mxr_var_version(b), 1);
  ck_assert_uint_eq(mxr_var_version(c), 1);
  ck_assert_uint_eq(mxr_var_version(a), 0); /* only read */
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

static int fail_in_bulk(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  (void)p;
  return mxr_set_error(MXR_EOP, "second op failed");
}

START_TEST(test_error_inside_a_bulk) {
  mxr_engine *eng = bulk_engine(NULL);
  mxr_var *v[3];
  for (int k = 0; k < 3; k++) ck_assert_int_eq(mxr_engine_new_var(eng, &v[k]), 0);
  atomic_int count = 0;
  mxr_engine_set_bulk_size(eng, 15);
  push_incr(eng, &count, v[0], mxr_cpu(0));
  ck_assert_int_eq(mxr_engine_push_sync(eng, fail_in_bulk, NULL, NULL, mxr_cpu(0), NULL, 0, &v[1], 1, "bad"), 0);
  push_incr(eng, &count, v[2], mxr_cpu(0));
  int st = mxr_engine_wait_for_var(eng, v[2]);
  ck_assert_int_eq(st, MXR_EOP);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "ImperativeBulk: second op failed"));
  ck_assert_int_eq(atomic_load(&count), 1); /* the op after the failure did not run */
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0); /* already surfaced */
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* Bulk state is per thread: another thread's bulk size does not bulk ours,
 * and a thread that exits pushes what it left pending. */
struct thread_arg {
  mxr_engine *eng;
  mxr_var *v;
  atomic_int *count;
};

static void *bulk_and_exit(void *p) {
  struct thread_arg *a = p;
  mxr_engine_set_bulk_size(a->eng, 15);
  for (int k = 0; k < 4; k++)
    mxr_engine_push_sync(a->eng, incr, a->count, NULL, mxr_cpu(0), NULL, 0, &a->v, 1, "t");
  return NULL; /* no wait: the pending bulk is pushed at thread exit */
}

START_TEST(test_bulk_state_is_per_thread) {
  mxr_engine *eng = bulk_engine(NULL);
  mxr_var *v, *w;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  ck_assert_int_eq(mxr_engine_new_var(eng, &w), 0);
  atomic_int count = 0, mine = 0;
  struct thread_arg arg = {eng, v, &count};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, bulk_and_exit, &arg), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(mxr_engine_bulk_size(eng), 0); /* ours is untouched */
  push_incr(eng, &mine, w, mxr_cpu(0));
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(atomic_load(&count), 4);
  ck_assert_int_eq(atomic_load(&mine), 1);
  struct mxr_engine_stats s;
  mxr_engine_get_stats(eng, &s);
  ck_assert_uint_eq(s.bulks_pushed, 1);
  ck_assert_uint_eq(s.ops_pushed, 2);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* Freeing an engine unbinds this thread's bulk state: a later engine, even
 * one allocated at the same address, starts with bulk size 0. */
START_TEST(test_free_forgets_bulk_size) {
  for (int k = 0; k < 4; k++) {
    mxr_engine *eng = bulk_engine(NULL);
    ck_assert_int_eq(mxr_engine_bulk_size(eng), 0);
    ck_assert_int_eq(mxr_engine_set_bulk_size(eng, 15), 0);
    ck_assert_int_eq(mxr_engine_free(eng), 0);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("engine bulking");
  TCase *tc = tcase_create("bulk");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_bulks_of_size_n);
  tcase_add_test(tc, test_flush_on_context_change);
  tcase_add_test(tc, test_flush_on_unbulked_push);
  tcase_add_test(tc, test_flush_on_waits);
  tcase_add_test(tc, test_set_bulk_size_flushes_and_returns_previous);
  tcase_add_test(tc, test_naive_engine_never_bulks);
  tcase_add_test(tc, test_dependencies_inside_a_bulk);
  tcase_add_test(tc, test_error_inside_a_bulk);
  tcase_add_test(tc, test_bulk_state_is_per_thread);
  tcase_add_test(tc, test_free_forgets_bulk_size);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
