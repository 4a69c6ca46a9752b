/*
 * Engine semantics the engine_random workload checks directly, with no
 * timing threshold (docs/probe-protocol.md):
 *
 * - waits: MXNDArrayWaitToRead and MXNDArrayWaitToWrite return only after
 *   the ops they wait for have finished: one or two writes before a
 *   WaitToRead, a read and a write in either order before a WaitToWrite.
 *   Each pushed op spins on a counter for a while and then records its
 *   completion; the pusher reads that record right after the wait returns.
 * - overlap: two independent ops (different vars) run at once.  Each op
 *   announces its start and then waits until the other has started too (a
 *   rendezvous), so on an engine that runs them concurrently both always
 *   meet, and on a serial one the first waits in vain.  The wait is bounded
 *   only so that a serial engine cannot deadlock the probe; the bound is
 *   not a timing threshold.  Callback start/end times (monotonic clock)
 *   tell whether the two intervals overlapped.
 * - priority order (param priority_order=1): CPU-prioritized ops queued for
 *   one worker run highest priority first (below).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "probe/probe_internal.h"

/* ------------------------------------------------------------- waits */

struct spin_op {
  long spins;
  atomic_int done; /* 1 when the op has ended */
};

/* A little work that no compiler removes: an atomic counter. */
static void spin(long n) {
  atomic_long counter = 0;
  for (long i = 0; i < n; i++) atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
}

static void spin_then_mark(void *rctx, void *param) {
  (void)rctx;
  struct spin_op *op = param;
  spin(op->spins);
  atomic_store_explicit(&op->done, 1, memory_order_release);
}

/* Push a spinning op that reads (write = false) or writes var `a`. */
static int push_spin(struct probe *p, struct spin_op *op, NDArrayHandle a, bool write) {
  int ctx[2] = {1, 0}, prop = 0; /* cpu(0), FnProperty::kNormal */
  PROBE_CALL(p, MXEnginePushSyncND, spin_then_mark, op, NULL, ctx, write ? NULL : &a, write ? 0 : 1,
             write ? &a : NULL, write ? 1 : 0, &prop, 0, "probe_spin");
  return 0;
}

static bool ended(struct spin_op *op) { return atomic_load_explicit(&op->done, memory_order_acquire) == 1; }

/* `iters` times: writes of `a` (WaitToRead), two in even iterations and
 * one in odd ones (a wait that looks only at queued ops returns while a
 * lone running write has nothing queued behind it), or a read and a write
 * of `a` (WaitToWrite, which waits for both), the read first in even
 * iterations and last in odd ones (a WaitToWrite that waits only for writes
 * returns while a read pushed after the write still runs); after the wait
 * every op pushed must have ended.
 * *early counts the waits that returned before an op had ended.  `ops`
 * holds 2 x iters ops, one pair per wait, so that an op a broken wait did
 * not wait for still has its own record. */
static int waits_after(struct probe *p, NDArrayHandle a, bool to_write, struct spin_op *ops, int iters,
                       int *early) {
  *early = 0;
  for (int i = 0; i < iters; i++) {
    struct spin_op *pair = &ops[2 * i];
    bool read_last = to_write && i % 2 == 1, lone_write = !to_write && i % 2 == 1;
    if (lone_write) atomic_store_explicit(&pair[1].done, 1, memory_order_relaxed); /* not pushed */
    if (push_spin(p, &pair[0], a, !to_write || read_last) ||
        (!lone_write && push_spin(p, &pair[1], a, !read_last)))
      return -1;
    if (to_write)
      PROBE_CALL(p, MXNDArrayWaitToWrite, a);
    else
      PROBE_CALL(p, MXNDArrayWaitToRead, a);
    *early += !(ended(&pair[0]) && ended(&pair[1]));
  }
  return 0;
}

/* Run waits_after and wait for every op before `ops` goes away. */
static int count_early_waits(struct probe *p, NDArrayHandle a, bool to_write, int iters, long spins, int *early) {
  struct spin_op *ops = mxcts_xcalloc((size_t)iters * 2, sizeof *ops);
  for (int k = 0; k < 2 * iters; k++) ops[k].spins = spins;
  int rc = waits_after(p, a, to_write, ops, iters, early);
  if (p->api.MXNDArrayWaitAll() && !rc) rc = mxcts__probe_fail(p, "MXNDArrayWaitAll");
  free(ops);
  return rc;
}

int mxcts__probe_check_waits(struct probe *p, NDArrayHandle a) {
  int iters = (int)mxcts__probe_param_long(p, "wait_iterations", 100);
  long spins = mxcts__probe_param_long(p, "wait_spins", 100000);
  int early;
  if (iters < 1) {
    mxcts__probe_add_check(p, "params", false, "wait_iterations=%d: at least 1 is needed", iters);
    return -1;
  }
  if (count_early_waits(p, a, false, iters, spins, &early)) return -1;
  mxcts__probe_add_check(p, "wait_to_read_waits_for_writes", early == 0,
                         "%d of %d MXNDArrayWaitToRead calls returned before the writes they wait for "
                         "had finished", early, iters);
  if (!p->api.MXNDArrayWaitToWrite) {
    mxcts__probe_add_check(p, "wait_to_write_waits_for_reads_and_writes", false,
                           "the implementation exports no MXNDArrayWaitToWrite");
    return 0;
  }
  if (count_early_waits(p, a, true, iters, spins, &early)) return -1;
  mxcts__probe_add_check(p, "wait_to_write_waits_for_reads_and_writes", early == 0,
                         "%d of %d MXNDArrayWaitToWrite calls returned before the read and the write "
                         "they wait for had finished", early, iters);
  return 0;
}

/* ----------------------------------------------------------- overlap */

struct meet_op {
  atomic_int *self_started, *other_started;
  double bound_ms;
  double start, end;
  bool met; /* saw the other op started before its own end */
};

static void meet(void *rctx, void *param) {
  (void)rctx;
  struct meet_op *op = param;
  op->start = mxcts__probe_now_ms();
  atomic_store(op->self_started, 1);
  double until = op->start + op->bound_ms;
  while (!atomic_load(op->other_started) && mxcts__probe_now_ms() < until) spin(100);
  op->met = atomic_load(op->other_started) != 0;
  op->end = mxcts__probe_now_ms();
}

/* One pair: an op writing x and an op writing y, pushed back to back.
 * Returns -1 when a call failed; *overlapped says whether both met and
 * their intervals overlapped. */
static int run_pair(struct probe *p, NDArrayHandle x, NDArrayHandle y, double bound_ms, bool *overlapped) {
  atomic_int a_started = 0, b_started = 0;
  struct meet_op ops[2] = {{&a_started, &b_started, bound_ms, 0, 0, false},
                           {&b_started, &a_started, bound_ms, 0, 0, false}};
  int ctx[2] = {1, 0}, prop = 0;
  NDArrayHandle vars[2] = {x, y};
  for (int i = 0; i < 2; i++)
    PROBE_CALL(p, MXEnginePushSyncND, meet, &ops[i], NULL, ctx, NULL, 0, &vars[i], 1, &prop, 0, "probe_meet");
  PROBE_CALL(p, MXNDArrayWaitAll);
  bool intervals = ops[0].start < ops[1].end && ops[1].start < ops[0].end;
  *overlapped = ops[0].met && ops[1].met && intervals;
  return 0;
}

int mxcts__probe_check_overlap(struct probe *p, NDArrayHandle x, NDArrayHandle y) {
  int pairs = (int)mxcts__probe_param_long(p, "overlap_pairs", 2);
  double bound_ms = (double)mxcts__probe_param_long(p, "overlap_bound_ms", 2000);
  if (pairs < 1 || bound_ms < 1) {
    mxcts__probe_add_check(p, "params", false, "overlap_pairs=%d, overlap_bound_ms=%.0f: at least 1 each is needed",
                           pairs, bound_ms);
    return -1;
  }
  int overlapped = 0;
  for (int i = 0; i < pairs; i++) {
    bool o = false;
    if (run_pair(p, x, y, bound_ms, &o)) return -1;
    overlapped += o;
  }
  mxcts__probe_add_metric(p, "independent_pairs_overlapped", overlapped);
  mxcts__probe_add_check(p, "independent_ops_overlap", overlapped == pairs,
                         "%d of %d pairs of independent ops ran at once (each op waits up to %.0f ms for "
                         "the other to start)", overlapped, pairs, bound_ms);
  mxcts__probe_add_check(p, "independent_ops_serial", overlapped == 0,
                         "%d of %d pairs of independent ops ran at once", overlapped, pairs);
  return 0;
}

/* ---------------------------------------------------- priority order */

/* CPU-prioritized ops (FnProperty::kCPUPrioritized) wait in a priority
 * queue (MXNet's cpu_priority_worker_): among ready ops the one pushed
 * with the highest priority runs first.  With one such worker
 * (MXNET_CPU_PRIORITY_NTHREADS=1), a first op holds the worker until every
 * other op is queued; they are pushed in increasing priority, each on its
 * own var, and must then run in decreasing priority.  The priorities are
 * distinct: MXNet leaves the order of ties open. */

enum { PRIO_OPS = 8, CPU_PRIORITIZED = 3 };

struct prio_run {
  atomic_int blocker_started, released, next;
  int order[PRIO_OPS]; /* priorities in the order the ops ran */
  double bound_ms;
};

struct prio_op {
  struct prio_run *run;
  int priority;
};

/* Hold the worker until released (bounded: a guard against a worker that
 * never comes back, not a timing threshold). */
static void hold_worker(void *rctx, void *param) {
  (void)rctx;
  struct prio_run *r = param;
  atomic_store(&r->blocker_started, 1);
  double until = mxcts__probe_now_ms() + r->bound_ms;
  while (!atomic_load(&r->released) && mxcts__probe_now_ms() < until) spin(100);
}

static void record_priority(void *rctx, void *param) {
  (void)rctx;
  struct prio_op *op = param;
  int k = atomic_fetch_add(&op->run->next, 1);
  if (k < PRIO_OPS) op->run->order[k] = op->priority;
}

static int push_prioritized(struct probe *p, EngineSyncFunc fn, void *param, NDArrayHandle var, int priority) {
  int ctx[2] = {1, 0}, prop = CPU_PRIORITIZED;
  PROBE_CALL(p, MXEnginePushSyncND, fn, param, NULL, ctx, NULL, 0, &var, 1, &prop, priority, "probe_priority");
  return 0;
}

/* Hold the worker, queue the ops in increasing priority, release. */
static int run_prioritized(struct probe *p, NDArrayHandle *vars, struct prio_run *r, struct prio_op *ops) {
  if (push_prioritized(p, hold_worker, r, vars[PRIO_OPS], 0)) return -1;
  double until = mxcts__probe_now_ms() + r->bound_ms;
  while (!atomic_load(&r->blocker_started) && mxcts__probe_now_ms() < until) spin(100);
  int rc = 0;
  for (int i = 0; i < PRIO_OPS && !rc; i++) {
    ops[i] = (struct prio_op){r, i + 1};
    rc = push_prioritized(p, record_priority, &ops[i], vars[i], i + 1);
  }
  atomic_store(&r->released, 1);
  if (p->api.MXNDArrayWaitAll() && !rc) rc = mxcts__probe_fail(p, "MXNDArrayWaitAll");
  return rc;
}

int mxcts__probe_check_priority_order(struct probe *p) {
  NDArrayHandle vars[PRIO_OPS + 1] = {0};
  struct prio_op ops[PRIO_OPS];
  struct prio_run r = {.bound_ms = 5000};
  uint32_t shape[] = {1};
  int rc = 0;
  for (int i = 0; i <= PRIO_OPS && !rc; i++)
    if (p->api.MXNDArrayCreateEx(shape, 1, 1, 0, 0, 0, &vars[i])) rc = mxcts__probe_fail(p, "MXNDArrayCreateEx");
  if (!rc) rc = run_prioritized(p, vars, &r, ops);
  for (int i = 0; i <= PRIO_OPS; i++)
    if (vars[i]) p->api.MXNDArrayFree(vars[i]);
  if (rc) return -1;
  bool descending = atomic_load(&r.next) == PRIO_OPS && atomic_load(&r.blocker_started);
  for (int k = 0; k < PRIO_OPS; k++) descending = descending && r.order[k] == PRIO_OPS - k;
  mxcts__probe_add_check(p, "priority_order", descending,
                         "8 CPU-prioritized ops pushed with priorities 1..8 behind an op holding the one "
                         "prioritized worker ran with priorities %d %d %d %d %d %d %d %d (expected 8 down to 1)",
                         r.order[0], r.order[1], r.order[2], r.order[3], r.order[4], r.order[5], r.order[6],
                         r.order[7]);
  return 0;
}
