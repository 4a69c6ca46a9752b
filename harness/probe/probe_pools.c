/*
 * The priority_pool workload: how many CPU-prioritized ops (FnProperty
 * kCPUPrioritized, pushed through MXEnginePushSyncND) run at once
 * (docs/probe-protocol.md).  ThreadedEnginePerDevice runs them on a pool of
 * MXNET_CPU_PRIORITY_NTHREADS workers (default 4) of their own.
 *
 * Each op announces its start and waits until `n` ops have started (a
 * rendezvous), or until `bound_ms` passed -- a guard against waiting for
 * ever on a pool too small, not a timing threshold -- and records how many
 * ops were running at most.  `meet` ops, each on its own array, must all
 * meet; then `meet` + 1 ops must not: at most `meet` run at once.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "probe/probe_internal.h"

#define CPU_PRIORITIZED 3 /* MXNet's FnProperty::kCPUPrioritized */

struct rendezvous {
  int n;          /* ops that must be running together */
  double bound_ms;
  atomic_int running, peak;
};

static void meet_or_give_up(void *rctx, void *param) {
  (void)rctx;
  struct rendezvous *r = param;
  int now = atomic_fetch_add(&r->running, 1) + 1;
  int peak = atomic_load(&r->peak);
  while (now > peak && !atomic_compare_exchange_weak(&r->peak, &peak, now)) {
  }
  double t0 = mxcts__probe_now_ms();
  struct timespec nap = {0, 200000};
  while (atomic_load(&r->peak) < r->n && mxcts__probe_now_ms() - t0 < r->bound_ms) nanosleep(&nap, NULL);
  atomic_fetch_sub(&r->running, 1);
}

/* Push `n` prioritized ops that try to meet; *peak is how many ran at once. */
static int push_and_meet(struct probe *p, int n, double bound_ms, int *peak) {
  struct rendezvous r = {n, bound_ms, 0, 0};
  NDArrayHandle *vars = calloc((size_t)n, sizeof *vars);
  if (!vars) return mxcts__probe_fail(p, "calloc");
  uint32_t shape[] = {1};
  int ctx[2] = {1, 0}, prop = CPU_PRIORITIZED, rc = 0;
  for (int i = 0; i < n && !rc; i++)
    if (p->api.MXNDArrayCreateEx(shape, 1, 1, 0, 0, 0, &vars[i])) rc = mxcts__probe_fail(p, "MXNDArrayCreateEx");
  for (int i = 0; i < n && !rc; i++)
    if (p->api.MXEnginePushSyncND(meet_or_give_up, &r, NULL, ctx, NULL, 0, &vars[i], 1, &prop, 0, "probe_meet"))
      rc = mxcts__probe_fail(p, "MXEnginePushSyncND");
  if (p->api.MXNDArrayWaitAll() && !rc) rc = mxcts__probe_fail(p, "MXNDArrayWaitAll");
  for (int i = 0; i < n; i++)
    if (vars[i]) p->api.MXNDArrayFree(vars[i]);
  free(vars);
  *peak = atomic_load(&r.peak);
  return rc;
}

int mxcts__probe_priority_pool(struct probe *p) {
  long meet = mxcts__probe_param_long(p, "meet", 4), bound = mxcts__probe_param_long(p, "bound_ms", 1000);
  if (meet < 1 || meet > 64 || bound < 1) {
    mxcts__probe_add_check(p, "params", false, "meet 1..64, bound_ms >= 1");
    return -1;
  }
  int together, beyond;
  if (push_and_meet(p, (int)meet, (double)bound, &together) ||
      push_and_meet(p, (int)meet + 1, (double)bound, &beyond))
    return -1;
  mxcts__probe_add_metric(p, "prioritized_peak", beyond);
  mxcts__probe_add_check(p, "prioritized_ops_meet", together == meet,
                         "%ld CPU-prioritized ops on their own arrays: at most %d ran at once (expected all %ld)",
                         meet, together, meet);
  mxcts__probe_add_check(p, "prioritized_ops_at_most_meet", beyond <= meet,
                         "%ld CPU-prioritized ops: at most %d ran at once (expected %ld or fewer)", meet + 1, beyond,
                         meet);
  return 0;
}
