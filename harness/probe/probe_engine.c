/*
 * Engine workloads: a random read/write workload pushed through
 * MXEnginePushSyncND (results against a serial run; read overlap and write
 * exclusivity from the callbacks' own timestamps; which thread runs the
 * callbacks; WaitToRead waiting for its var only; the checks of
 * probe_waits.c), and seed 002's
 * asynchronous-computing observations.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe/probe_internal.h"

enum { MAX_READS = 20 };

struct rand_op {
  int reads[MAX_READS];
  int nreads, write;
  uint64_t *dst;
  const uint64_t *src[MAX_READS];
  double start, end;
  bool on_pusher;
};

static pthread_t pusher;

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xbf58476d1ce4e5b9ull;
}

static void run_rand_op(void *rctx, void *param) {
  (void)rctx;
  struct rand_op *op = param;
  op->start = mxcts__probe_now_ms();
  op->on_pusher = pthread_equal(pthread_self(), pusher);
  uint64_t h = (uint64_t)op->write;
  for (int i = 0; i < op->nreads; i++) h = mix(h, *op->src[i]);
  *op->dst = mix(h, *op->dst);
  op->end = mxcts__probe_now_ms();
}

static void make_ops(struct rand_op *ops, int n, int nvars, uint64_t seed) {
  for (int k = 0; k < n; k++) {
    struct rand_op *op = &ops[k];
    op->nreads = 2 + (int)(mxcts_rng_next(&seed) % (MAX_READS - 1));
    if (op->nreads > nvars - 1) op->nreads = nvars - 1;
    op->write = (int)(mxcts_rng_next(&seed) % (uint64_t)nvars);
    for (int r = 0; r < op->nreads;) {
      int v = (int)(mxcts_rng_next(&seed) % (uint64_t)nvars);
      bool taken = v == op->write;
      for (int i = 0; i < r && !taken; i++) taken = op->reads[i] == v;
      if (!taken) op->reads[r++] = v;
    }
  }
}

/* Do two intervals overlap (strictly)? */
static bool overlaps(const struct rand_op *a, const struct rand_op *b) {
  return a->start < b->end && b->start < a->end;
}

static bool touches(const struct rand_op *op, int v) {
  if (op->write == v) return true;
  for (int i = 0; i < op->nreads; i++)
    if (op->reads[i] == v) return true;
  return false;
}

/* No write overlaps any other op on its var. */
static int count_write_overlaps(const struct rand_op *ops, int n) {
  int bad = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j && touches(&ops[j], ops[i].write) && overlaps(&ops[i], &ops[j])) bad++;
  return bad;
}

static int push_rand_ops(struct probe *p, struct rand_op *ops, int n, NDArrayHandle *arrays, uint64_t **data) {
  int ctx[2] = {1, 0}, prop = 0; /* cpu(0), FnProperty::kNormal */
  for (int k = 0; k < n; k++) {
    struct rand_op *op = &ops[k];
    NDArrayHandle reads[MAX_READS];
    for (int i = 0; i < op->nreads; i++) {
      reads[i] = arrays[op->reads[i]];
      op->src[i] = data[op->reads[i]];
    }
    op->dst = data[op->write];
    PROBE_CALL(p, MXEnginePushSyncND, run_rand_op, op, NULL, ctx, reads, op->nreads,
               &arrays[op->write], 1, &prop, 0, "probe_rand_op");
  }
  PROBE_CALL(p, MXNDArrayWaitAll);
  return 0;
}

/* Two reads of one var that each wait (bounded) for the other to start. */
struct overlap_read {
  atomic_int *running, *max_running;
  double bound_ms; /* a deadlock guard on a serial engine, not a threshold */
};

static void overlapping_read(void *rctx, void *param) {
  (void)rctx;
  struct overlap_read *o = param;
  int now = atomic_fetch_add(o->running, 1) + 1;
  double until = mxcts__probe_now_ms() + o->bound_ms;
  while (atomic_load(o->running) < 2 && mxcts__probe_now_ms() < until) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  now = atomic_load(o->running);
  int prev = atomic_load(o->max_running);
  while (now > prev && !atomic_compare_exchange_weak(o->max_running, &prev, now)) {
  }
  atomic_fetch_sub(o->running, 1);
}

static int check_read_overlap(struct probe *p, NDArrayHandle var) {
  atomic_int running = 0, max_running = 0;
  struct overlap_read o = {&running, &max_running,
                           (double)mxcts__probe_param_long(p, "overlap_bound_ms", 500)};
  int ctx[2] = {1, 0}, prop = 0;
  for (int i = 0; i < 2; i++)
    PROBE_CALL(p, MXEnginePushSyncND, overlapping_read, &o, NULL, ctx, &var, 1, NULL, 0, &prop, 0,
               "probe_overlap_read");
  PROBE_CALL(p, MXNDArrayWaitAll);
  mxcts__probe_add_metric(p, "max_concurrent_reads", atomic_load(&max_running));
  mxcts__probe_add_check(p, "reads_overlap", atomic_load(&max_running) >= 2,
                  "two reads of one var were seen running together: %s",
                  atomic_load(&max_running) >= 2 ? "yes" : "no");
  return 0;
}

static void sleep_op(void *rctx, void *param) {
  (void)rctx;
  struct timespec ts = {0, *(long *)param * 1000000L};
  nanosleep(&ts, NULL);
}

/* WaitToRead(B) must not wait for a slow op on A. */
static int check_wait_is_per_var(struct probe *p, NDArrayHandle a, NDArrayHandle b) {
  static long slow_ms = 300, fast_ms = 0;
  int ctx[2] = {1, 0}, prop = 0;
  PROBE_CALL(p, MXEnginePushSyncND, sleep_op, &slow_ms, NULL, ctx, NULL, 0, &a, 1, &prop, 0, "probe_slow");
  double t0 = mxcts__probe_now_ms();
  PROBE_CALL(p, MXEnginePushSyncND, sleep_op, &fast_ms, NULL, ctx, NULL, 0, &b, 1, &prop, 0, "probe_fast");
  PROBE_CALL(p, MXNDArrayWaitToRead, b);
  double waited = mxcts__probe_now_ms() - t0;
  PROBE_CALL(p, MXNDArrayWaitAll);
  mxcts__probe_add_metric(p, "wait_other_var_ms", waited);
  mxcts__probe_add_check(p, "wait_to_read_waits_for_its_var_only", waited < slow_ms / 2.0,
                  "WaitToRead of B took %.1f ms while a %ld ms op wrote A", waited, slow_ms);
  return 0;
}

/* An op whose inputs carry a failed op's error is skipped -- its function
 * is never called -- unless it was pushed with FnProperty::kNoSkip, which
 * runs anyway (MXNet's threaded engines, ThreadedEngine::ExecuteOprBlock).
 * The failed op is _random_normal with scale=-1 (docs/probe-protocol.md,
 * op_errors): on the threaded engines its push returns 0 and its output
 * carries the error; on NaiveEngine the call itself fails and nothing
 * carries it, so the suite judges op_skipped_after_error on the threaded
 * engines only. */
enum { FN_NORMAL = 0, FN_NO_SKIP = 7 };

static void mark_ran(void *rctx, void *param) {
  (void)rctx;
  atomic_store((atomic_int *)param, 1);
}

/* Push an op reading `var` with FnProperty `prop` that sets *ran. */
static int push_reader(struct probe *p, NDArrayHandle var, int prop, atomic_int *ran) {
  int ctx[2] = {1, 0}; /* cpu(0) */
  PROBE_CALL(p, MXEnginePushSyncND, mark_ran, ran, NULL, ctx, &var, 1, NULL, 0, &prop, 0, "probe_reader");
  return 0;
}

/* _random_normal(loc=0, scale=-1) into `out`; *status is the call's. */
static int push_failing_sampler(struct probe *p, NDArrayHandle out, int *status) {
  const char *k[] = {"loc", "scale", "shape", "ctx"}, *v[] = {"0", "-1", "(2,2)", "cpu(0)"};
  OpHandle op;
  PROBE_CALL(p, NNGetOpHandle, "_random_normal", &op);
  NDArrayHandle *outp = &out;
  int nout = 1;
  const int *stypes;
  *status = p->api.MXImperativeInvokeEx(op, 0, NULL, &nout, &outp, 4, k, v, &stypes);
  return 0;
}

static int check_skip_after_error(struct probe *p) {
  uint32_t shape[] = {2, 2};
  NDArrayHandle failed;
  PROBE_CALL(p, MXNDArrayCreateEx, shape, 2, 1, 0, 0, 0, &failed);
  atomic_int normal_ran = 0, no_skip_ran = 0;
  int pushed = 0;
  int rc = push_failing_sampler(p, failed, &pushed);
  if (!rc) rc = push_reader(p, failed, FN_NORMAL, &normal_ran);
  if (!rc) rc = push_reader(p, failed, FN_NO_SKIP, &no_skip_ran);
  (void)p->api.MXNDArrayWaitAll(); /* surfaces the sampler's error: expected */
  p->api.MXNDArrayFree(failed);
  if (rc) return rc;
  PROBE_CALL(p, MXNDArrayWaitAll); /* the error surfaced once: nothing left */
  mxcts__probe_add_check(p, "op_skipped_after_error", pushed == 0 && !atomic_load(&normal_ran),
                         "the failing sampler's push returned %d; an op reading its output ran: %s", pushed,
                         atomic_load(&normal_ran) ? "yes" : "no");
  mxcts__probe_add_check(p, "no_skip_op_runs_after_error", atomic_load(&no_skip_ran),
                         "an op pushed with FnProperty::kNoSkip reading the failed output ran: %s",
                         atomic_load(&no_skip_ran) ? "yes" : "no");
  return 0;
}

/* An idle engine uses no CPU: once MXNDArrayWaitAll has returned nothing is
 * left to run, and the workers block (MXNet's on condition variables,
 * libmxref's after a spin of 50 us).  The probe then sleeps
 * `idle_window_ms` and reads the process' CPU time over that window; the
 * sleeping probe uses none itself, so what was used is the engine's.  A
 * worker that polls instead of sleeping uses up to a whole core meanwhile.
 * On a busy machine it gets less, which can only make it pass; an idle
 * correct engine uses nothing however busy the machine is.  Hence the
 * generous threshold: a quarter of the window. */
static int check_idle_cpu(struct probe *p) {
  long window_ms = mxcts__probe_param_long(p, "idle_window_ms", 200);
  PROBE_CALL(p, MXNDArrayWaitAll);
  double cpu0 = mxcts__probe_own_cpu_s(), t0 = mxcts__probe_now_ms();
  struct timespec left = {window_ms / 1000, window_ms % 1000 * 1000000L};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) continue; /* a signal: sleep the rest */
  double cpu_ms = (mxcts__probe_own_cpu_s() - cpu0) * 1e3, wall_ms = mxcts__probe_now_ms() - t0;
  mxcts__probe_add_metric(p, "idle_cpu_fraction", cpu_ms / wall_ms);
  mxcts__probe_add_check(p, "idle_engine_uses_no_cpu", cpu_ms < 0.25 * wall_ms,
                         "%.1f ms of CPU time in %.1f ms after MXNDArrayWaitAll, with nothing pushed", cpu_ms,
                         wall_ms);
  return 0;
}

static int alloc_vars(struct probe *p, int nvars, NDArrayHandle *arrays, uint64_t **data, uint64_t seed) {
  if (!p->api.MXNDArrayGetData) {
    mxcts__probe_add_check(p, "data_access", false, "the implementation exports no MXNDArrayGetData");
    return -1;
  }
  uint32_t shape[] = {2}; /* two float32 slots hold one uint64 */
  for (int v = 0; v < nvars; v++) {
    PROBE_CALL(p, MXNDArrayCreateEx, shape, 1, 1, 0, 0, 0, &arrays[v]);
    void *ptr;
    PROBE_CALL(p, MXNDArrayGetData, arrays[v], &ptr);
    data[v] = ptr;
    uint64_t init = mxcts_rng_next(&seed);
    float bits[2];
    memcpy(bits, &init, sizeof init);
    PROBE_CALL(p, MXNDArraySyncCopyFromCPU, arrays[v], bits, 2);
  }
  return 0;
}

int mxcts__probe_engine_random(struct probe *p) {
  int n = (int)mxcts__probe_param_long(p, "ops", 10000), nvars = (int)mxcts__probe_param_long(p, "vars", 100);
  if (n < 1 || nvars < 3) {
    mxcts__probe_add_check(p, "params", false, "ops >= 1 and vars >= 3 are needed");
    return -1;
  }
  pusher = pthread_self();
  struct rand_op *ops = calloc((size_t)n, sizeof *ops);
  NDArrayHandle *arrays = calloc((size_t)nvars, sizeof *arrays);
  uint64_t **data = calloc((size_t)nvars, sizeof *data), *serial = calloc((size_t)nvars, sizeof *serial);
  make_ops(ops, n, nvars, p->seed + 1);
  int rc = alloc_vars(p, nvars, arrays, data, p->seed + 2);
  for (int v = 0; v < nvars && !rc; v++) serial[v] = *data[v];
  double t0 = mxcts__probe_now_ms();
  if (!rc) rc = push_rand_ops(p, ops, n, arrays, data);
  double elapsed = mxcts__probe_now_ms() - t0;
  if (!rc) {
    for (int k = 0; k < n; k++) { /* the serial run */
      uint64_t h = (uint64_t)ops[k].write;
      for (int i = 0; i < ops[k].nreads; i++) h = mix(h, serial[ops[k].reads[i]]);
      serial[ops[k].write] = mix(h, serial[ops[k].write]);
    }
    int wrong = 0, on_pusher = 0;
    for (int v = 0; v < nvars; v++) wrong += *data[v] != serial[v];
    for (int k = 0; k < n; k++) on_pusher += ops[k].on_pusher;
    mxcts__probe_add_check(p, "matches_serial_run", wrong == 0, "%d of %d vars differ from the serial run", wrong, nvars);
    int bad = count_write_overlaps(ops, n < 3000 ? n : 3000);
    mxcts__probe_add_check(p, "writes_exclusive", bad == 0, "%d overlaps of a write with another op on its var", bad);
    mxcts__probe_add_metric(p, "callbacks_on_pushing_thread", (double)on_pusher / n);
    mxcts__probe_add_metric(p, "ns_per_op", elapsed * 1e6 / n);
    mxcts__probe_add_check(p, "all_callbacks_on_pushing_thread", on_pusher == n, "%d of %d callbacks ran on the pushing thread",
                    on_pusher, n);
  }
  if (!rc) rc = check_read_overlap(p, arrays[0]);
  if (!rc) rc = check_wait_is_per_var(p, arrays[1], arrays[2]);
  if (!rc) rc = mxcts__probe_check_waits(p, arrays[0]);
  if (!rc) rc = mxcts__probe_check_overlap(p, arrays[1], arrays[2]);
  if (!rc && mxcts__probe_param_long(p, "priority_order", 0)) rc = mxcts__probe_check_priority_order(p);
  if (!rc) rc = check_skip_after_error(p);
  if (!rc) rc = check_idle_cpu(p);
  for (int v = 0; v < nvars; v++)
    if (arrays[v]) p->api.MXNDArrayFree(arrays[v]);
  free(ops), free(arrays), free(data), free(serial);
  return rc;
}

/* ------------------------------------------------------------ async */

static int new_matrix(struct probe *p, int n, NDArrayHandle *out, uint64_t seed) {
  uint32_t shape[] = {(uint32_t)n, (uint32_t)n};
  PROBE_CALL(p, MXNDArrayCreateEx, shape, 2, p->dev_type, 0, 0, 0, out);
  float *buf = malloc((size_t)n * n * sizeof *buf);
  for (size_t i = 0; i < (size_t)n * n; i++) buf[i] = (float)mxcts_rng_uniform(&seed);
  int rc = p->api.MXNDArraySyncCopyFromCPU(*out, buf, (size_t)n * n) ? mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU") : 0;
  free(buf);
  return rc;
}

int mxcts__probe_invoke1(struct probe *p, const char *opname, int nin, NDArrayHandle *in, int nkv, const char **k,
                         const char **v, NDArrayHandle *out) {
  OpHandle op;
  PROBE_CALL(p, NNGetOpHandle, opname, &op);
  NDArrayHandle *outs = NULL;
  int nout = 0;
  const int *stypes;
  PROBE_CALL(p, MXImperativeInvokeEx, op, nin, in, &nout, &outs, nkv, k, v, &stypes);
  *out = outs[0];
  return 0;
}

/* y = x + 1, `iters` times, waiting every time or only at the end. */
static int plus_one_loop(struct probe *p, NDArrayHandle x, int iters, bool wait_each, double *ms) {
  const char *k[] = {"scalar"}, *v[] = {"1"};
  double t0 = mxcts__probe_now_ms();
  for (int i = 0; i < iters; i++) {
    NDArrayHandle y;
    if (mxcts__probe_invoke1(p, "_plus_scalar", 1, &x, 1, k, v, &y)) return -1;
    if (wait_each) PROBE_CALL(p, MXNDArrayWaitToRead, y);
    PROBE_CALL(p, MXNDArrayFree, y);
  }
  PROBE_CALL(p, MXNDArrayWaitAll);
  *ms = mxcts__probe_now_ms() - t0;
  return 0;
}

int mxcts__probe_async_dot(struct probe *p) {
  int n = (int)mxcts__probe_param_long(p, "size", 2000), iters = (int)mxcts__probe_param_long(p, "iterations", 1000);
  NDArrayHandle a, b, c;
  if (new_matrix(p, n, &a, p->seed + 3) || new_matrix(p, n, &b, p->seed + 4)) return -1;
  PROBE_CALL(p, MXNDArrayWaitAll);
  double t0 = mxcts__probe_now_ms();
  NDArrayHandle in[2] = {a, b};
  if (mxcts__probe_invoke1(p, "dot", 2, in, 0, NULL, NULL, &c)) return -1;
  double pushed = mxcts__probe_now_ms() - t0;
  PROBE_CALL(p, MXNDArrayWaitToRead, c);
  double done = mxcts__probe_now_ms() - t0;
  mxcts__probe_add_metric(p, "dot_push_ms", pushed);
  mxcts__probe_add_metric(p, "dot_total_ms", done);
  mxcts__probe_add_check(p, "push_returns_early", pushed < 0.1 * done,
                  "pushing the dot took %.2f ms of its %.2f ms", pushed, done);
  PROBE_CALL(p, MXNDArrayFree, c);
  uint32_t shape[] = {1000};
  NDArrayHandle x;
  PROBE_CALL(p, MXNDArrayCreateEx, shape, 1, p->dev_type, 0, 0, 0, &x);
  double sync_ms, async_ms;
  if (plus_one_loop(p, x, iters, true, &sync_ms) || plus_one_loop(p, x, iters, false, &async_ms)) return -1;
  mxcts__probe_add_metric(p, "wait_each_ms", sync_ms);
  mxcts__probe_add_metric(p, "wait_once_ms", async_ms);
  mxcts__probe_add_check(p, "wait_once_faster", async_ms < sync_ms, "%d iterations: %.2f ms waiting each time, %.2f ms waiting once",
                  iters, sync_ms, async_ms);
  double t[2] = {sync_ms, async_ms};
  mxcts__probe_set_timing(p, t, 2);
  p->api.MXNDArrayFree(x);
  p->api.MXNDArrayFree(a);
  p->api.MXNDArrayFree(b);
  return 0;
}
