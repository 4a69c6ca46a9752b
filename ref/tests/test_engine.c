/* Engine semantics: validation, ordering, overlap, errors, delete, async,
 * priorities, pools and drivers.  Loop tests run once per engine config. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "engine/engine_internal.h" /* mxr__engine_wait_vars_quiet */
#include "engine_util.h"

static bool is_naive(int cfg) { return tu_engine_configs[cfg].opts.type == MXR_ENGINE_NAIVE; }

/* ----------------------------------------------------------- op bodies */

struct append_arg {
  int *log;
  atomic_int *len;
  int value;
};

static int append_value(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  struct append_arg *a = p;
  a->log[atomic_fetch_add(a->len, 1)] = a->value;
  return 0;
}

static int fail_boom(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  (void)p;
  return mxr_set_error(MXR_EOP, "boom");
}

static int set_flag(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  atomic_store((atomic_int *)p, 1);
  return 0;
}

static int noop(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  (void)p;
  return 0;
}

static atomic_int freed_params;
static void count_free(void *p) {
  (void)p;
  atomic_fetch_add(&freed_params, 1);
}

/* ------------------------------------------------------------ creation */

START_TEST(test_create_each_type) {
  mxr_engine *eng = tu_engine(_i);
  ck_assert_int_eq(mxr_engine_type_of(eng), tu_engine_configs[_i].opts.type);
  struct mxr_engine_stats s;
  mxr_engine_get_stats(eng, &s);
  ck_assert_int_eq(s.pools_started, 0); /* pools start lazily */
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_bad_options) {
  mxr_engine *eng = NULL;
  struct mxr_engine_opts o = tu_opts(7, 1);
  ck_assert_int_eq(mxr_engine_create(&o, &eng), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "engine type 7"));
  o = tu_opts(MXR_ENGINE_THREADED_PER_DEVICE, 0);
  ck_assert_int_eq(mxr_engine_create(&o, &eng), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "cpu_worker_nthreads = 0"));
  o = tu_opts(MXR_ENGINE_THREADED_PER_DEVICE, 1);
  o.gpu_worker_nstreams = 3;
  ck_assert_int_eq(mxr_engine_create(&o, &eng), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "gpu_worker_nstreams"));
  ck_assert_int_eq(mxr_engine_create(NULL, &eng), MXR_EINVAL);
  ck_assert_ptr_null(eng);
}
END_TEST

START_TEST(test_push_validation) {
  mxr_engine *eng = tu_engine(_i);
  mxr_var *a, *b;
  ck_assert_int_eq(mxr_engine_new_var(eng, &a), 0);
  ck_assert_int_eq(mxr_engine_new_var(eng, &b), 0);
  atomic_store(&freed_params, 0);
  struct mxr_push req = {.ctx = mxr_cpu(0), .param_free = count_free, .name = "v"};
  ck_assert_int_eq(mxr_engine_push(eng, &req), MXR_EINVAL); /* no function */
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "exactly one of sync_fn and async_fn"));
  req.sync_fn = noop;
  req.prop = 42;
  ck_assert_int_eq(mxr_engine_push(eng, &req), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "unknown property 42"));
  req.prop = MXR_PROP_NORMAL;
  mxr_var *dup[2] = {a, a};
  req.mutable_vars = dup;
  req.num_mutable = 2;
  ck_assert_int_eq(mxr_engine_push(eng, &req), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "appears twice"));
  req.const_vars = &a;
  req.num_const = 1;
  req.mutable_vars = &a;
  req.num_mutable = 1;
  ck_assert_int_eq(mxr_engine_push(eng, &req), MXR_EINVAL); /* read and write of one var */
  mxr_var *nulls[1] = {NULL};
  req.const_vars = nulls;
  req.num_mutable = 0;
  ck_assert_int_eq(mxr_engine_push(eng, &req), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "const var 0 is NULL"));
  req.num_const = 0;
  req.ctx = (struct mxr_context){9, 0};
  ck_assert_int_eq(mxr_engine_push(eng, &req), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "unknown device type 9"));
  req.ctx = mxr_gpu(0);
  ck_assert_int_eq(mxr_engine_push(eng, &req), MXR_ENODEV);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "no GPU driver"));
  req.ctx = mxr_cpu(-1);
  ck_assert_int_eq(mxr_engine_push(eng, &req), MXR_EINVAL);
  /* Ownership: param_free ran once for each rejected push. */
  ck_assert_int_eq(atomic_load(&freed_params), 8);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* Pushes naming many vars: distinct ones are accepted, and one named twice
 * is refused wherever it sits (read and write sets, beyond the sizes that
 * are checked pairwise or in the on-stack table). */
START_TEST(test_many_vars_checked_for_duplicates) {
  enum { N = 300 };
  mxr_engine *eng = tu_engine(_i);
  mxr_var **vars = calloc(N, sizeof *vars);
  for (int i = 0; i < N; i++) ck_assert_int_eq(mxr_engine_new_var(eng, &vars[i]), 0);
  const int sizes[] = {9, 40, N};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int n = sizes[k], nconst = n / 2;
    struct mxr_push req = {.sync_fn = noop, .ctx = mxr_cpu(0), .const_vars = vars,
                           .num_const = nconst, .mutable_vars = vars + nconst,
                           .num_mutable = n - nconst, .name = "many"};
    ck_assert_int_eq(mxr_engine_push(eng, &req), 0);
    mxr_var *keep = vars[n - 1];
    vars[n - 1] = vars[0]; /* the last write names the first read */
    ck_assert_int_eq(mxr_engine_push(eng, &req), MXR_EINVAL);
    ck_assert_ptr_nonnull(strstr(mxr_last_error(), "appears twice"));
    vars[n - 1] = keep;
  }
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  for (int i = 0; i < N; i++) ck_assert_int_eq(mxr_engine_delete_var(eng, vars[i], NULL, NULL, NULL), 0);
  free(vars);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* ------------------------------------------------------------ ordering */

START_TEST(test_writes_in_push_order) {
  enum { N = 2000 };
  mxr_engine *eng = tu_engine(_i);
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  int *log = calloc(N, sizeof *log);
  atomic_int len = 0;
  struct append_arg *args = calloc(N, sizeof *args);
  for (int k = 0; k < N; k++) {
    args[k] = (struct append_arg){log, &len, k};
    ck_assert_int_eq(mxr_engine_push_sync(eng, append_value, &args[k], NULL, mxr_cpu(0), NULL, 0,
                                          &v, 1, "append"), 0);
  }
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, v), 0);
  ck_assert_int_eq(atomic_load(&len), N);
  for (int k = 0; k < N; k++) ck_assert_int_eq(log[k], k);
  ck_assert_uint_eq(mxr_var_version(v), N);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
  free(log);
  free(args);
}
END_TEST

struct slow_write {
  atomic_int *value;
  int set_to;
  int sleep_ms;
};

static int slow_write_fn(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  struct slow_write *w = p;
  tu_sleep_ms(w->sleep_ms);
  atomic_store(w->value, w->set_to);
  return 0;
}

static int count_run(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  atomic_fetch_add((atomic_int *)p, 1);
  return 0;
}

/* Push `n` ops that read `gate`: most write one var (their blocks are
 * recycled), every 50th writes five (theirs are not). */
static void push_burst(mxr_engine *eng, mxr_var *gate, mxr_var **vars, int nvars, int n,
                       atomic_int *ran) {
  for (int k = 0; k < n; k++) {
    mxr_var *writes[5];
    int nw = k % 50 == 0 ? 5 : 1;
    for (int w = 0; w < nw; w++) writes[w] = vars[(k + w) % nvars];
    ck_assert_int_eq(mxr_engine_push_sync(eng, count_run, ran, NULL, mxr_cpu(0), &gate, 1, writes,
                                          nw, "burst"),
                     0);
  }
}

/* Thousands of ops held behind one slow write complete at once, more than
 * the engine keeps for reuse; then as many again reuse what it kept.  Every
 * op runs exactly once. */
START_TEST(test_burst_of_ops_behind_one_write) {
  enum { N = 6000, NVARS = 64 };
  mxr_engine *eng = tu_engine(_i);
  mxr_var *gate, *vars[NVARS];
  ck_assert_int_eq(mxr_engine_new_var(eng, &gate), 0);
  for (int v = 0; v < NVARS; v++) ck_assert_int_eq(mxr_engine_new_var(eng, &vars[v]), 0);
  atomic_int ran = 0, gate_value = 0;
  for (int round = 1; round <= 2; round++) {
    struct slow_write w = {&gate_value, round, 20};
    ck_assert_int_eq(mxr_engine_push_sync(eng, slow_write_fn, &w, NULL, mxr_cpu(0), NULL, 0, &gate,
                                          1, "gate"),
                     0);
    push_burst(eng, gate, vars, NVARS, N, &ran);
    ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
    ck_assert_int_eq(atomic_load(&ran), round * N);
  }
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

struct observe {
  atomic_int *value;
  int seen;
  int sleep_ms;
};

static int observe_fn(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  struct observe *o = p;
  tu_sleep_ms(o->sleep_ms);
  o->seen = atomic_load(o->value);
  return 0;
}

START_TEST(test_read_waits_for_earlier_write) {
  mxr_engine *eng = tu_engine(_i);
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  atomic_int value = 0;
  struct slow_write w = {&value, 1, 30};
  struct observe o = {&value, -1, 0};
  ck_assert_int_eq(mxr_engine_push_sync(eng, slow_write_fn, &w, NULL, mxr_cpu(0), NULL, 0, &v, 1, "w"), 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, observe_fn, &o, NULL, mxr_cpu(0), &v, 1, NULL, 0, "r"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(o.seen, 1);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_write_waits_for_earlier_read) {
  mxr_engine *eng = tu_engine(_i);
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  atomic_int value = 0;
  struct observe o = {&value, -1, 30};
  struct slow_write w = {&value, 2, 0};
  ck_assert_int_eq(mxr_engine_push_sync(eng, observe_fn, &o, NULL, mxr_cpu(0), &v, 1, NULL, 0, "r"), 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, slow_write_fn, &w, NULL, mxr_cpu(0), NULL, 0, &v, 1, "w"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, v), 0);
  ck_assert_int_eq(o.seen, 0);
  ck_assert_int_eq(atomic_load(&value), 2);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* Two reads of one var, on an engine with two workers, must be seen running
 * at the same time: each waits (bounded) for the other to start. */
struct overlap {
  atomic_int *running;
  atomic_int *max_running;
};

static int overlapping_read(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  struct overlap *o = p;
  int now = atomic_fetch_add(o->running, 1) + 1;
  double until = tu_now_s() + 5.0;
  while (atomic_load(o->running) < 2 && tu_now_s() < until) tu_sleep_ms(1);
  now = atomic_load(o->running);
  int prev = atomic_load(o->max_running);
  while (now > prev && !atomic_compare_exchange_weak(o->max_running, &prev, now)) {
  }
  tu_sleep_ms(5);
  atomic_fetch_sub(o->running, 1);
  return 0;
}

START_TEST(test_reads_overlap_with_two_workers) {
  struct mxr_engine_opts opts[] = {tu_opts(MXR_ENGINE_THREADED_PER_DEVICE, 2),
                                   tu_opts(MXR_ENGINE_THREADED, 1)};
  opts[1].pooled_nthreads = 2;
  for (int e = 0; e < 2; e++) {
    mxr_engine *eng;
    ck_assert_int_eq(mxr_engine_create(&opts[e], &eng), 0);
    mxr_var *v;
    ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
    atomic_int value = 0, running = 0, max_running = 0;
    struct slow_write w = {&value, 1, 10};
    struct overlap o = {&running, &max_running};
    struct observe after = {&running, -1, 0};
    ck_assert_int_eq(mxr_engine_push_sync(eng, slow_write_fn, &w, NULL, mxr_cpu(0), NULL, 0, &v, 1, "w"), 0);
    for (int k = 0; k < 2; k++)
      ck_assert_int_eq(mxr_engine_push_sync(eng, overlapping_read, &o, NULL, mxr_cpu(0), &v, 1, NULL, 0, "r"), 0);
    /* A write after the reads must see none of them still running. */
    ck_assert_int_eq(mxr_engine_push_sync(eng, observe_fn, &after, NULL, mxr_cpu(0), NULL, 0, &v, 1, "w2"), 0);
    ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
    ck_assert_msg(atomic_load(&max_running) == 2, "engine %d: reads did not overlap (max %d)", e,
                  atomic_load(&max_running));
    ck_assert_int_eq(after.seen, 0);
    ck_assert_int_eq(mxr_engine_free(eng), 0);
  }
}
END_TEST

/* -------------------------------------------------------------- errors */

START_TEST(test_error_skips_readers_and_surfaces_at_wait) {
  mxr_engine *eng = tu_engine(_i);
  mxr_var *x, *y, *z;
  ck_assert_int_eq(mxr_engine_new_var(eng, &x), 0);
  ck_assert_int_eq(mxr_engine_new_var(eng, &y), 0);
  ck_assert_int_eq(mxr_engine_new_var(eng, &z), 0);
  atomic_int ran_b = 0, ran_c = 0;
  int st = mxr_engine_push_sync(eng, fail_boom, NULL, NULL, mxr_cpu(0), NULL, 0, &x, 1, "A");
  if (is_naive(_i)) {
    /* The naive engine runs the op at push and returns its error there. */
    ck_assert_int_eq(st, MXR_EOP);
    ck_assert_ptr_nonnull(strstr(mxr_last_error(), "A: boom"));
    ck_assert_int_eq(mxr_engine_free(eng), 0);
    return;
  }
  ck_assert_int_eq(st, 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, set_flag, &ran_b, NULL, mxr_cpu(0), &x, 1, &y, 1, "B"), 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, set_flag, &ran_c, NULL, mxr_cpu(0), NULL, 0, &z, 1, "C"), 0);
  st = mxr_engine_wait_for_var(eng, y);
  ck_assert_int_eq(st, MXR_EOP);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "A: boom"));
  ck_assert_int_eq(atomic_load(&ran_b), 0); /* skipped */
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, z), 0);
  ck_assert_int_eq(atomic_load(&ran_c), 1); /* independent op ran */
  struct mxr_engine_stats s;
  mxr_engine_get_stats(eng, &s);
  ck_assert_uint_eq(s.ops_skipped, 1);
  /* Surfacing cleared the shared error: x reads clean, wait-for-all too. */
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, x), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  /* Recovery: new ops on x and y run. */
  atomic_store(&ran_b, 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, set_flag, &ran_b, NULL, mxr_cpu(0), &x, 1, &y, 1, "B2"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, y), 0);
  ck_assert_int_eq(atomic_load(&ran_b), 1);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_error_surfaces_at_wait_for_all_once) {
  if (is_naive(_i)) return; /* covered above: errors return at push */
  mxr_engine *eng = tu_engine(_i);
  mxr_var *x;
  ck_assert_int_eq(mxr_engine_new_var(eng, &x), 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, fail_boom, NULL, NULL, mxr_cpu(0), NULL, 0, &x, 1, "A"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), MXR_EOP);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "boom"));
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);   /* a second wait is clean */
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, x), 0); /* and so is the var */
  atomic_int ran = 0;
  ck_assert_int_eq(mxr_engine_push_sync(eng, set_flag, &ran, NULL, mxr_cpu(0), &x, 1, NULL, 0, "R"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(atomic_load(&ran), 1);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_no_skip_runs_despite_error) {
  if (is_naive(_i)) return;
  mxr_engine *eng = tu_engine(_i);
  mxr_var *x;
  ck_assert_int_eq(mxr_engine_new_var(eng, &x), 0);
  atomic_int ran = 0;
  ck_assert_int_eq(mxr_engine_push_sync(eng, fail_boom, NULL, NULL, mxr_cpu(0), NULL, 0, &x, 1, "A"), 0);
  struct mxr_push req = {.sync_fn = set_flag, .param = &ran, .ctx = mxr_cpu(0), .const_vars = &x,
                         .num_const = 1, .prop = MXR_PROP_NO_SKIP, .name = "N"};
  ck_assert_int_eq(mxr_engine_push(eng, &req), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), MXR_EOP);
  ck_assert_int_eq(atomic_load(&ran), 1);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* -------------------------------------------------------------- delete */

struct delete_check {
  atomic_int *written;
  int saw_write;
};

static int check_on_delete(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  struct delete_check *d = p;
  d->saw_write = atomic_load(d->written);
  return 0;
}

START_TEST(test_delete_var_waits_for_pending_ops) {
  mxr_engine *eng = tu_engine(_i);
  struct mxr_engine_stats s;
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  mxr_engine_get_stats(eng, &s);
  ck_assert_int_eq(s.vars_live, 1);
  atomic_int written = 0;
  struct slow_write w = {&written, 1, 30};
  struct delete_check d = {&written, -1};
  atomic_store(&freed_params, 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, slow_write_fn, &w, NULL, mxr_cpu(0), NULL, 0, &v, 1, "w"), 0);
  ck_assert_int_eq(mxr_engine_delete_var(eng, v, check_on_delete, &d, count_free), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(d.saw_write, 1);
  ck_assert_int_eq(atomic_load(&freed_params), 1);
  mxr_engine_get_stats(eng, &s);
  ck_assert_int_eq(s.vars_live, 0);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_free_engine_releases_live_vars) {
  mxr_engine *eng = tu_engine(_i);
  for (int k = 0; k < 10; k++) {
    mxr_var *v;
    ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  }
  /* No leak: ASan's leak checker watches this. */
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_wait_on_idle_var) {
  mxr_engine *eng = tu_engine(_i);
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, v), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, NULL), MXR_EINVAL);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* The executor's wait before a rebind: on an idle engine it pushes nothing;
 * otherwise it returns only after the ops on its vars (named twice here)
 * have run. */
START_TEST(test_quiet_wait) {
  mxr_engine *eng = tu_engine(_i);
  mxr_var *v, *w;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  ck_assert_int_eq(mxr_engine_new_var(eng, &w), 0);
  mxr_var *vars[] = {v, w, v};
  uint64_t pushed = atomic_load(&eng->pushed); /* wait markers included */
  ck_assert_int_eq(mxr__engine_wait_vars_quiet(eng, vars, 3), 0);
  ck_assert_uint_eq(atomic_load(&eng->pushed), pushed);
  atomic_int value = 0;
  struct slow_write sw = {&value, 1, 30};
  ck_assert_int_eq(mxr_engine_push_sync(eng, slow_write_fn, &sw, NULL, mxr_cpu(0), NULL, 0, &v, 1, "w"), 0);
  ck_assert_int_eq(mxr__engine_wait_vars_quiet(eng, vars, 3), 0);
  ck_assert_int_eq(atomic_load(&value), 1);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* A slow op on one var must not hold up an op on another var while a worker
 * is free: the free worker has to be woken. */
START_TEST(test_slow_op_does_not_block_other_var) {
  struct mxr_engine_opts opts[] = {tu_opts(MXR_ENGINE_THREADED_PER_DEVICE, 2), tu_opts(MXR_ENGINE_THREADED, 1)};
  opts[1].pooled_nthreads = 4;
  for (int e = 0; e < 2; e++) {
    mxr_engine *eng;
    ck_assert_int_eq(mxr_engine_create(&opts[e], &eng), 0);
    mxr_var *a, *b;
    ck_assert_int_eq(mxr_engine_new_var(eng, &a), 0);
    ck_assert_int_eq(mxr_engine_new_var(eng, &b), 0);
    /* let the workers fall asleep first */
    ck_assert_int_eq(mxr_engine_push_sync(eng, noop, NULL, NULL, mxr_cpu(0), NULL, 0, &b, 1, "warm"), 0);
    ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
    tu_sleep_ms(20);
    atomic_int value = 0;
    struct slow_write slow = {&value, 1, 400};
    ck_assert_int_eq(mxr_engine_push_sync(eng, slow_write_fn, &slow, NULL, mxr_cpu(0), NULL, 0, &a, 1, "slow"), 0);
    double t0 = tu_now_s();
    ck_assert_int_eq(mxr_engine_push_sync(eng, noop, NULL, NULL, mxr_cpu(0), NULL, 0, &b, 1, "fast"), 0);
    ck_assert_int_eq(mxr_engine_wait_for_var(eng, b), 0);
    double waited = tu_now_s() - t0;
    ck_assert_msg(waited < 0.2, "engine %d: waiting for b took %.3f s behind a slow op on a", e, waited);
    ck_assert_int_eq(mxr_engine_free(eng), 0);
  }
}
END_TEST

/* --------------------------------------------------------------- async */

struct async_job {
  atomic_int *value;
  int status;
  mxr_completion *done;
};

static void *finish_later(void *p) {
  struct async_job *j = p;
  tu_sleep_ms(10);
  atomic_store(j->value, 7);
  if (j->status) mxr_set_error(j->status, "async failure");
  mxr_engine_complete(j->done, j->status);
  return NULL;
}

static void async_start(const struct mxr_run_ctx *rctx, void *p, mxr_completion *done) {
  (void)rctx;
  struct async_job *j = p;
  j->done = done;
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, finish_later, j), 0);
  ck_assert_int_eq(pthread_detach(t), 0);
}

START_TEST(test_async_op_completes_from_another_thread) {
  mxr_engine *eng = tu_engine(_i);
  mxr_var *v;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  atomic_int value = 0;
  struct async_job job = {&value, 0, NULL};
  struct observe o = {&value, -1, 0};
  struct mxr_push req = {.async_fn = async_start, .param = &job, .ctx = mxr_cpu(0),
                         .mutable_vars = &v, .num_mutable = 1, .prop = MXR_PROP_ASYNC, .name = "async"};
  ck_assert_int_eq(mxr_engine_push(eng, &req), 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, observe_fn, &o, NULL, mxr_cpu(0), &v, 1, NULL, 0, "r"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(o.seen, 7);
  /* An async failure reaches the var. */
  struct async_job bad = {&value, MXR_EOP, NULL};
  req.param = &bad;
  int st = mxr_engine_push(eng, &req);
  if (!is_naive(_i)) {
    ck_assert_int_eq(st, 0);
    st = mxr_engine_wait_for_var(eng, v);
  }
  ck_assert_int_eq(st, MXR_EOP);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "async failure"));
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* ----------------------------------------------------------- priorities */

struct gate {
  atomic_int open;
  atomic_int entered; /* the gate op is running */
};

static int wait_gate(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  struct gate *g = p;
  atomic_store(&g->entered, 1);
  double until = tu_now_s() + 5.0;
  while (!atomic_load(&g->open) && tu_now_s() < until) tu_sleep_ms(1);
  return 0;
}

START_TEST(test_priority_pool_runs_higher_priority_first) {
  struct mxr_engine_opts o = tu_opts(MXR_ENGINE_THREADED_PER_DEVICE, 1);
  o.cpu_priority_nthreads = 1;
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_create(&o, &eng), 0);
  struct gate g = {0};
  int log[3];
  atomic_int len = 0;
  struct append_arg args[3] = {{log, &len, 1}, {log, &len, 5}, {log, &len, 3}};
  struct mxr_push req = {.sync_fn = wait_gate, .param = &g, .ctx = mxr_cpu(0),
                         .prop = MXR_PROP_CPU_PRIORITIZED, .name = "gate"};
  ck_assert_int_eq(mxr_engine_push(eng, &req), 0);
  /* The one worker must be held by the gate before the others queue up, or
   * it could take the first of them before the later, higher ones arrive. */
  for (double until = tu_now_s() + 5.0; !atomic_load(&g.entered) && tu_now_s() < until;) tu_sleep_ms(1);
  ck_assert_int_eq(atomic_load(&g.entered), 1);
  for (int k = 0; k < 3; k++) {
    struct mxr_push r = {.sync_fn = append_value, .param = &args[k], .ctx = mxr_cpu(0),
                         .prop = MXR_PROP_CPU_PRIORITIZED, .priority = args[k].value, .name = "p"};
    ck_assert_int_eq(mxr_engine_push(eng, &r), 0);
  }
  atomic_store(&g.open, 1);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(atomic_load(&len), 3);
  ck_assert_int_eq(log[0], 5);
  ck_assert_int_eq(log[1], 3);
  ck_assert_int_eq(log[2], 1);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* ---------------------------------------------------- pools and drivers */

/* A fake GPU driver.  Workers call it from their own threads, so whatever
 * it counts or is told to do is atomic.  worker_start gives each (worker,
 * device) a heap block as driver_data that worker_stop frees: a missing stop
 * leaks and a second one frees twice, which the sanitizer builds report. */
struct mock_driver {
  atomic_int starts[8];   /* by enum mxr_pool_kind */
  atomic_int stops;
  atomic_int finishes;
  atomic_int finished_after_run; /* op_finish calls that followed their op */
  atomic_int op_starts;
  atomic_int last_start_dev;     /* the device op_start was last given */
  atomic_bool fail_start, fail_op_start;
};

/* What worker_start hands a worker for one device. */
struct mock_worker {
  struct mxr_context ctx;
  enum mxr_pool_kind kind;
  int worker;
};

/* On a worker thread: the GPU that op_start made current and that no op has
 * run on yet, and the GPU an op has just run on and op_finish has not yet
 * seen (-1: none).  They let an op and op_finish check the calls' order. */
static _Thread_local int mock_selected_dev = -1;
static _Thread_local int mock_ran_dev = -1;

static int mock_count(void *u) {
  (void)u;
  return 2;
}

static int mock_start(void *u, struct mxr_context ctx, enum mxr_pool_kind kind, int nstreams,
                      struct mxr_run_ctx *rctx) {
  struct mock_driver *m = u;
  if (atomic_load(&m->fail_start))
    return mxr_set_error(MXR_ECUDA, "mock: no stream for gpu(%d)", ctx.dev_id);
  struct mock_worker *w = malloc(sizeof *w);
  if (!w) return mxr_set_error(MXR_ENOMEM, "mock: out of memory");
  *w = (struct mock_worker){ctx, kind, rctx->worker};
  atomic_fetch_add(&m->starts[kind], 1);
  rctx->stream = (void *)(uintptr_t)(0x1000 + ctx.dev_id);
  rctx->aux_stream = nstreams == 2 ? (void *)(uintptr_t)0x2000 : NULL;
  rctx->driver_data = w;
  return 0;
}

static void mock_stop(void *u, struct mxr_run_ctx *rctx) {
  free(rctx->driver_data);
  rctx->driver_data = NULL;
  atomic_fetch_add(&((struct mock_driver *)u)->stops, 1);
}

static int mock_finish(void *u, struct mxr_run_ctx *rctx) {
  struct mock_driver *m = u;
  atomic_fetch_add(&m->finishes, 1);
  if (rctx->ctx.dev_type == MXR_DEV_GPU && mock_ran_dev == rctx->ctx.dev_id)
    atomic_fetch_add(&m->finished_after_run, 1);
  mock_ran_dev = -1;
  return 0;
}

static int mock_op_start(void *u, struct mxr_run_ctx *rctx) {
  struct mock_driver *m = u;
  if (atomic_load(&m->fail_op_start))
    return mxr_set_error(MXR_ECUDA, "mock: cannot select gpu(%d)", rctx->ctx.dev_id);
  atomic_fetch_add(&m->op_starts, 1);
  atomic_store(&m->last_start_dev, rctx->ctx.dev_id);
  mock_selected_dev = rctx->ctx.dev_id;
  return 0;
}

/* Worker starts the driver saw, of every pool kind. */
static int mock_total_starts(struct mock_driver *m) {
  int n = 0;
  for (int k = 0; k < 8; k++) n += atomic_load(&m->starts[k]);
  return n;
}

static int record_stream(const struct mxr_run_ctx *rctx, void *p) {
  *(uintptr_t *)p = (uintptr_t)rctx->stream;
  return 0;
}

START_TEST(test_per_device_pools_and_gpu_driver) {
  struct mock_driver m = {0};
  struct mxr_device_driver drv = {&m, mock_count, mock_start, mock_stop, mock_finish, NULL};
  struct mxr_engine_opts o = tu_opts(MXR_ENGINE_THREADED_PER_DEVICE, 2);
  o.gpu_worker_nthreads = 2;
  o.gpu_copy_nthreads = 1;
  o.gpu_driver = &drv;
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_create(&o, &eng), 0);
  struct mxr_engine_stats s;
  uintptr_t seen = 0;
  ck_assert_int_eq(mxr_engine_push_sync(eng, record_stream, &seen, NULL, mxr_cpu(0), NULL, 0, NULL, 0, "c"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_uint_eq(seen, 0); /* CPU workers have no stream */
  mxr_engine_get_stats(eng, &s);
  ck_assert_int_eq(s.pools_started, 1);
  ck_assert_int_eq(s.threads_started, 2);
  ck_assert_int_eq(mxr_engine_push_sync(eng, record_stream, &seen, NULL, mxr_gpu(1), NULL, 0, NULL, 0, "g"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_uint_eq(seen, 0x1001);
  ck_assert_int_eq(atomic_load(&m.starts[MXR_POOL_GPU_WORKER]), 2);
  ck_assert_int_eq(atomic_load(&m.finishes), 1);
  struct mxr_push copy = {.sync_fn = noop, .ctx = mxr_gpu(0), .prop = MXR_PROP_COPY_TO_GPU, .name = "cp"};
  ck_assert_int_eq(mxr_engine_push(eng, &copy), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(atomic_load(&m.starts[MXR_POOL_GPU_COPY]), 1);
  mxr_engine_get_stats(eng, &s);
  ck_assert_int_eq(s.pools_started, 3);
  ck_assert_int_eq(mxr_engine_push_sync(eng, noop, NULL, NULL, mxr_gpu(2), NULL, 0, NULL, 0, "g"), MXR_ENODEV);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "gpu(2) does not exist (2 GPUs)"));
  ck_assert_int_eq(mxr_engine_free(eng), 0);
  ck_assert_int_eq(atomic_load(&m.stops), 3);
}
END_TEST

START_TEST(test_driver_start_failure_fails_push) {
  struct mock_driver m = {0};
  atomic_store(&m.fail_start, true);
  struct mxr_device_driver drv = {&m, mock_count, mock_start, mock_stop, mock_finish, NULL};
  struct mxr_engine_opts o = tu_opts(MXR_ENGINE_THREADED_PER_DEVICE, 1);
  o.gpu_driver = &drv;
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_create(&o, &eng), 0);
  atomic_store(&freed_params, 0);
  int st = mxr_engine_push_sync(eng, noop, NULL, count_free, mxr_gpu(0), NULL, 0, NULL, 0, "g");
  ck_assert_int_eq(st, MXR_ECUDA);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "mock: no stream for gpu(0)"));
  ck_assert_int_eq(atomic_load(&freed_params), 1);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* NaiveEngine runs a GPU op on the pushing thread: op_start selects its
 * device before the function (a worker did that once, at start), op_finish
 * completes it; a failing op_start fails the op without running it.  CPU
 * ops see neither. */
START_TEST(test_naive_engine_starts_each_gpu_op) {
  struct mock_driver m = {0};
  struct mxr_device_driver drv = {&m, mock_count, mock_start, mock_stop, mock_finish,
                                  mock_op_start};
  struct mxr_engine_opts o = tu_opts(MXR_ENGINE_NAIVE, 1);
  o.gpu_driver = &drv;
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_create(&o, &eng), 0);
  uintptr_t seen = 0;
  ck_assert_int_eq(mxr_engine_push_sync(eng, record_stream, &seen, NULL, mxr_gpu(1), NULL, 0, NULL, 0, "g"), 0);
  ck_assert_uint_eq(seen, 0x1001);
  ck_assert_int_eq(atomic_load(&m.op_starts), 1);
  ck_assert_int_eq(atomic_load(&m.last_start_dev), 1);
  ck_assert_int_eq(atomic_load(&m.finishes), 1);
  ck_assert_int_eq(mxr_engine_push_sync(eng, record_stream, &seen, NULL, mxr_gpu(0), NULL, 0, NULL, 0, "g"), 0);
  ck_assert_int_eq(atomic_load(&m.last_start_dev), 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, noop, NULL, NULL, mxr_cpu(0), NULL, 0, NULL, 0, "c"), 0);
  ck_assert_int_eq(atomic_load(&m.op_starts), 2);
  atomic_store(&m.fail_op_start, true);
  seen = 0;
  int st = mxr_engine_push_sync(eng, record_stream, &seen, NULL, mxr_gpu(1), NULL, 0, NULL, 0, "g");
  ck_assert_int_eq(st, MXR_ECUDA);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "mock: cannot select gpu(1)"));
  ck_assert_uint_eq(seen, 0); /* not run */
  ck_assert_int_eq(atomic_load(&m.finishes), 2);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* What an op saw of its run context, and whether op_start had selected its
 * device just before it. */
struct ctx_probe {
  struct mxr_context ctx;
  uintptr_t stream;
  const struct mock_worker *data;
  int worker;
  int selected_dev;
  atomic_int ran;
};

static int probe_run_ctx(const struct mxr_run_ctx *rctx, void *p) {
  struct ctx_probe *c = p;
  c->ctx = rctx->ctx;
  c->stream = (uintptr_t)rctx->stream;
  c->data = rctx->driver_data;
  c->worker = rctx->worker;
  c->selected_dev = mock_selected_dev;
  mock_selected_dev = -1;
  mock_ran_dev = rctx->ctx.dev_type == MXR_DEV_GPU ? rctx->ctx.dev_id : -1;
  atomic_fetch_add(&c->ran, 1);
  return 0;
}

/* A ThreadedEngine with the fake driver: two shared workers and its copy
 * worker. */
static mxr_engine *threaded_engine_with(const struct mxr_device_driver *drv) {
  struct mxr_engine_opts o = tu_opts(MXR_ENGINE_THREADED, 1);
  o.pooled_nthreads = 2;
  o.gpu_driver = drv;
  mxr_engine *eng = NULL;
  ck_assert_msg(mxr_engine_create(&o, &eng) == 0, "%s", mxr_last_error());
  return eng;
}

/* Push `c` for ctx with property prop, reading and writing nothing. */
static void push_probe(mxr_engine *eng, struct ctx_probe *c, struct mxr_context ctx, int prop) {
  struct mxr_push req = {.sync_fn = probe_run_ctx, .param = c, .ctx = ctx, .prop = prop,
                         .name = "probe"};
  ck_assert_int_eq(mxr_engine_push(eng, &req), 0);
}

/* The shared pool runs ops of every device, so its workers start a run
 * context per GPU they meet: each GPU op sees its own device, the stream
 * and driver data its worker got for that device, op_start before it and
 * op_finish after it.  CPU ops see none of it.  Copies go to the copy
 * worker, which starts its own. */
START_TEST(test_threaded_engine_gives_gpu_ops_their_device) {
  enum { N = 30, COPIES = 2 };
  struct mock_driver m = {0};
  struct mxr_device_driver drv = {&m, mock_count, mock_start, mock_stop, mock_finish,
                                  mock_op_start};
  mxr_engine *eng = threaded_engine_with(&drv);
  static const struct mxr_context ctxs[3] = {{MXR_DEV_GPU, 0}, {MXR_DEV_GPU, 1}, {MXR_DEV_CPU, 0}};
  struct ctx_probe *probes = calloc(N + COPIES, sizeof *probes);
  ck_assert_ptr_nonnull(probes);
  for (int k = 0; k < N; k++) push_probe(eng, &probes[k], ctxs[k % 3], MXR_PROP_NORMAL);
  push_probe(eng, &probes[N], mxr_gpu(0), MXR_PROP_COPY_TO_GPU);
  push_probe(eng, &probes[N + 1], mxr_gpu(1), MXR_PROP_COPY_FROM_GPU);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  int gpu_ops = 0;
  for (int k = 0; k < N + COPIES; k++) {
    const struct ctx_probe *c = &probes[k];
    struct mxr_context want = k < N ? ctxs[k % 3] : mxr_gpu(k - N);
    ck_assert_int_eq(atomic_load(&c->ran), 1);
    ck_assert_msg(c->ctx.dev_type == want.dev_type && c->ctx.dev_id == want.dev_id,
                  "op %d pushed for device (%d, %d) ran with (%d, %d)", k, want.dev_type,
                  want.dev_id, c->ctx.dev_type, c->ctx.dev_id);
    if (want.dev_type == MXR_DEV_CPU) {
      ck_assert_uint_eq(c->stream, 0);
      ck_assert_ptr_null(c->data);
      ck_assert_int_eq(c->selected_dev, -1);
      continue;
    }
    gpu_ops++;
    ck_assert_uint_eq(c->stream, 0x1000 + (uintptr_t)want.dev_id);
    ck_assert_ptr_nonnull(c->data);
    ck_assert_int_eq(c->data->ctx.dev_type, MXR_DEV_GPU);
    ck_assert_int_eq(c->data->ctx.dev_id, want.dev_id);
    ck_assert_int_eq(c->data->worker, c->worker);
    ck_assert_int_eq(c->data->kind, k < N ? MXR_POOL_SHARED : MXR_POOL_SHARED_IO);
    ck_assert_msg(c->selected_dev == want.dev_id, "op %d on gpu(%d) ran after op_start for %d", k,
                  want.dev_id, c->selected_dev);
  }
  ck_assert_int_eq(gpu_ops, 2 * N / 3 + COPIES);
  ck_assert_int_eq(atomic_load(&m.op_starts), gpu_ops);
  ck_assert_int_eq(atomic_load(&m.finishes), gpu_ops);
  ck_assert_int_eq(atomic_load(&m.finished_after_run), gpu_ops);
  /* Both GPUs on at least one shared worker, at most on both; one start per
   * device on the copy worker; no per-device pools. */
  int shared = atomic_load(&m.starts[MXR_POOL_SHARED]);
  ck_assert_int_ge(shared, 2);
  ck_assert_int_le(shared, 4);
  ck_assert_int_eq(atomic_load(&m.starts[MXR_POOL_SHARED_IO]), 2);
  ck_assert_int_eq(mock_total_starts(&m), shared + 2);
  ck_assert_int_eq(atomic_load(&m.stops), 0); /* nothing stops before the engine */
  ck_assert_int_eq(mxr_engine_free(eng), 0);
  ck_assert_int_eq(atomic_load(&m.stops), mock_total_starts(&m));
  free(probes);
}
END_TEST

/* A shared worker that cannot start a GPU's run context fails the op: the
 * driver's message reaches the var the op writes and wait-for-all, the op
 * does not run, what reads its output is skipped, and everything else goes
 * on.  Once the driver recovers, GPU ops run again. */
START_TEST(test_threaded_engine_gpu_start_failure_fails_op) {
  struct mock_driver m = {0};
  atomic_store(&m.fail_start, true);
  struct mxr_device_driver drv = {&m, mock_count, mock_start, mock_stop, mock_finish,
                                  mock_op_start};
  mxr_engine *eng = threaded_engine_with(&drv);
  mxr_var *x, *y, *z;
  ck_assert_int_eq(mxr_engine_new_var(eng, &x), 0);
  ck_assert_int_eq(mxr_engine_new_var(eng, &y), 0);
  ck_assert_int_eq(mxr_engine_new_var(eng, &z), 0);
  struct ctx_probe gpu_op = {0}, reader = {0}, cpu_op = {0};
  ck_assert_int_eq(mxr_engine_push_sync(eng, probe_run_ctx, &gpu_op, NULL, mxr_gpu(1), NULL, 0,
                                        &x, 1, "g1"), 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, probe_run_ctx, &cpu_op, NULL, mxr_cpu(0), NULL, 0,
                                        &z, 1, "c"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, x), MXR_ECUDA);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "g1: mock: no stream for gpu(1)"));
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, z), 0);
  ck_assert_int_eq(atomic_load(&gpu_op.ran), 0);
  ck_assert_int_eq(atomic_load(&cpu_op.ran), 1);
  /* The same failure seen through wait-for-all, which waits for the reader
   * too: it was skipped.  Then a clean engine. */
  struct ctx_probe gpu0 = {0};
  ck_assert_int_eq(mxr_engine_push_sync(eng, probe_run_ctx, &gpu0, NULL, mxr_gpu(0), NULL, 0,
                                        &z, 1, "g0"), 0);
  ck_assert_int_eq(mxr_engine_push_sync(eng, probe_run_ctx, &reader, NULL, mxr_cpu(0), &z, 1,
                                        &y, 1, "r"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), MXR_ECUDA);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "g0: mock: no stream for gpu(0)"));
  ck_assert_int_eq(atomic_load(&gpu0.ran), 0);
  ck_assert_int_eq(atomic_load(&reader.ran), 0);
  ck_assert_int_eq(atomic_load(&m.op_starts), 0);
  ck_assert_int_eq(atomic_load(&m.finishes), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, y), 0);
  struct ctx_probe later_cpu = {0};
  ck_assert_int_eq(mxr_engine_push_sync(eng, probe_run_ctx, &later_cpu, NULL, mxr_cpu(0), &x, 1,
                                        &z, 1, "c2"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, z), 0);
  ck_assert_int_eq(atomic_load(&later_cpu.ran), 1);
  /* A failed start is not kept: the next GPU op asks the driver again. */
  atomic_store(&m.fail_start, false);
  struct ctx_probe retry = {0};
  ck_assert_int_eq(mxr_engine_push_sync(eng, probe_run_ctx, &retry, NULL, mxr_gpu(1), NULL, 0,
                                        &x, 1, "g1"), 0);
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, x), 0);
  ck_assert_int_eq(atomic_load(&retry.ran), 1);
  ck_assert_uint_eq(retry.stream, 0x1001);
  ck_assert_int_eq(retry.selected_dev, 1);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
  ck_assert_int_eq(mock_total_starts(&m), 1); /* failed starts are not stopped */
  ck_assert_int_eq(atomic_load(&m.stops), 1);
}
END_TEST

/* --------------------------------------------------------------- hooks */

struct hook_counts {
  atomic_int begins, ends;
};

static atomic_uint last_profile;

static uint64_t on_begin(void *u, const struct mxr_op_event *ev) {
  atomic_store(&last_profile, ev->profile);
  atomic_fetch_add(&((struct hook_counts *)u)->begins, 1);
  return 0xc0ffee;
}

static void on_end(void *u, const struct mxr_op_event *ev, uint64_t cookie) {
  (void)ev;
  ck_assert_uint_eq(cookie, 0xc0ffee); /* op_begin's value comes back */
  atomic_fetch_add(&((struct hook_counts *)u)->ends, 1);
}

START_TEST(test_hooks_see_run_ops_only) {
  mxr_engine *eng = tu_engine(_i);
  struct hook_counts h = {0, 0};
  struct mxr_engine_hooks hooks = {&h, on_begin, on_end};
  mxr_engine_set_hooks(eng, &hooks);
  mxr_var *x;
  ck_assert_int_eq(mxr_engine_new_var(eng, &x), 0);
  for (int k = 0; k < 5; k++)
    ck_assert_int_eq(mxr_engine_push_sync(eng, noop, NULL, NULL, mxr_cpu(0), NULL, 0, &x, 1, "n"), 0);
  struct mxr_push tagged = {.sync_fn = noop, .ctx = mxr_cpu(0), .mutable_vars = &x, .num_mutable = 1,
                            .name = "tagged", .profile = MXR_PROFILE_SYMBOLIC};
  ck_assert_int_eq(mxr_engine_push(eng, &tagged), 0);
  ck_assert_int_eq(mxr_engine_wait_for_var(eng, x), 0);
  ck_assert_uint_eq(atomic_load(&last_profile), MXR_PROFILE_SYMBOLIC); /* passed through */
  ck_assert_int_eq(atomic_load(&h.begins), 6);
  ck_assert_int_eq(atomic_load(&h.ends), 6);
  if (!is_naive(_i)) {
    ck_assert_int_eq(mxr_engine_push_sync(eng, fail_boom, NULL, NULL, mxr_cpu(0), NULL, 0, &x, 1, "f"), 0);
    ck_assert_int_eq(mxr_engine_push_sync(eng, noop, NULL, NULL, mxr_cpu(0), &x, 1, NULL, 0, "s"), 0);
    ck_assert_int_eq(mxr_engine_wait_for_all(eng), MXR_EOP);
    ck_assert_int_eq(atomic_load(&h.begins), 7); /* the skipped op was not seen */
    ck_assert_int_eq(atomic_load(&h.ends), 7);
  }
  mxr_engine_set_hooks(eng, NULL);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_default_engine_follows_config) {
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_default(&eng), 0);
  ck_assert_int_eq(mxr_engine_type_of(eng), mxr_config_get()->engine_type);
  mxr_engine *again;
  ck_assert_int_eq(mxr_engine_default(&again), 0);
  ck_assert_ptr_eq(eng, again);
  ck_assert_int_eq(mxr_engine_shutdown_default(), 0);
  ck_assert_int_eq(mxr_engine_default(&again), MXR_ESTATE);
  ck_assert_int_eq(mxr_engine_shutdown_default(), 0); /* idempotent */
}
END_TEST

static Suite *engine_suite(void) {
  Suite *s = suite_create("engine");
  TCase *each = tcase_create("each engine");
  tcase_set_timeout(each, 60);
  int n = TU_NUM_ENGINE_CONFIGS;
  tcase_add_loop_test(each, test_create_each_type, 0, n);
  tcase_add_loop_test(each, test_push_validation, 0, n);
  tcase_add_loop_test(each, test_many_vars_checked_for_duplicates, 0, n);
  tcase_add_loop_test(each, test_writes_in_push_order, 0, n);
  tcase_add_loop_test(each, test_burst_of_ops_behind_one_write, 0, n);
  tcase_add_loop_test(each, test_read_waits_for_earlier_write, 0, n);
  tcase_add_loop_test(each, test_write_waits_for_earlier_read, 0, n);
  tcase_add_loop_test(each, test_error_skips_readers_and_surfaces_at_wait, 0, n);
  tcase_add_loop_test(each, test_error_surfaces_at_wait_for_all_once, 0, n);
  tcase_add_loop_test(each, test_no_skip_runs_despite_error, 0, n);
  tcase_add_loop_test(each, test_delete_var_waits_for_pending_ops, 0, n);
  tcase_add_loop_test(each, test_free_engine_releases_live_vars, 0, n);
  tcase_add_loop_test(each, test_wait_on_idle_var, 0, n);
  tcase_add_loop_test(each, test_quiet_wait, 0, n);
  tcase_add_loop_test(each, test_async_op_completes_from_another_thread, 0, n);
  tcase_add_loop_test(each, test_hooks_see_run_ops_only, 0, n);
  suite_add_tcase(s, each);
  TCase *one = tcase_create("specific");
  tcase_set_timeout(one, 60);
  tcase_add_test(one, test_bad_options);
  tcase_add_test(one, test_reads_overlap_with_two_workers);
  tcase_add_test(one, test_slow_op_does_not_block_other_var);
  tcase_add_test(one, test_priority_pool_runs_higher_priority_first);
  tcase_add_test(one, test_per_device_pools_and_gpu_driver);
  tcase_add_test(one, test_driver_start_failure_fails_push);
  tcase_add_test(one, test_naive_engine_starts_each_gpu_op);
  tcase_add_test(one, test_threaded_engine_gives_gpu_ops_their_device);
  tcase_add_test(one, test_threaded_engine_gpu_start_failure_fails_op);
  tcase_add_test(one, test_default_engine_follows_config);
  suite_add_tcase(s, one);
  return s;
}

int main(void) { return mxr_test_run(engine_suite()); }
