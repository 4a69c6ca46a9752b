/*
 * engine_dispatch: what the engine costs per op when the op does nothing.
 * Each timed iteration pushes `ops` empty ops through MXEnginePushSyncND,
 * op k writing array k mod `vars` (vars=1: a chain, each op waiting for the
 * one before; many vars: independent ops), with the pushing thread's bulk
 * size set to `bulk` (MXEngineSetBulkSize), then waits for all.  With the
 * default 1000 ops, an iteration's milliseconds are microseconds per op.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "probe/probe_internal.h"

/* Each op counts itself, so that the probe can check every op ran. */
static void count_op(void *rctx, void *param) {
  (void)rctx;
  atomic_fetch_add_explicit((atomic_long *)param, 1, memory_order_relaxed);
}

static int push_ops(struct probe *p, long ops, NDArrayHandle *arrays, long nvars, atomic_long *ran) {
  int ctx[2] = {1, 0}, prop = 0; /* cpu(0), FnProperty::kNormal */
  for (long k = 0; k < ops; k++)
    PROBE_CALL(p, MXEnginePushSyncND, count_op, ran, NULL, ctx, NULL, 0, &arrays[k % nvars], 1,
               &prop, 0, "probe_empty_op");
  PROBE_CALL(p, MXNDArrayWaitAll);
  return 0;
}

static int bad_param(struct probe *p, const char *what) {
  mxcts__probe_add_check(p, "params", false, "%s", what);
  return mxcts__probe_fail(p, "engine_dispatch parameters");
}

int mxcts__probe_engine_dispatch(struct probe *p) {
  long ops = mxcts__probe_param_long(p, "ops", 1000), nvars = mxcts__probe_param_long(p, "vars", 1024);
  long bulk = mxcts__probe_param_long(p, "bulk", 0);
  long iters = mxcts__probe_param_long(p, "iterations", 30), warmup = mxcts__probe_param_long(p, "warmup", 3);
  if (ops < 1 || ops > 10000000) return bad_param(p, "ops must be in [1, 10000000]");
  if (nvars < 1 || nvars > 65536) return bad_param(p, "vars must be in [1, 65536]");
  if (bulk < 0 || bulk > 1000000) return bad_param(p, "bulk must be in [0, 1000000]");
  if (iters < 1 || iters > 100000 || warmup < 0 || warmup > 100000)
    return bad_param(p, "iterations must be in [1, 100000] and warmup in [0, 100000]");
  NDArrayHandle *arrays = calloc((size_t)nvars, sizeof *arrays);
  double *times = calloc((size_t)iters, sizeof *times);
  atomic_long ran = 0;
  int prev = 0, rc = arrays && times ? 0 : mxcts__probe_fail(p, "calloc");
  for (long v = 0; v < nvars && !rc; v++) rc = mxcts__probe_new_vector(p, 1, NULL, &arrays[v]);
  if (!rc && p->api.MXEngineSetBulkSize((int)bulk, &prev) != 0) rc = mxcts__probe_fail(p, "MXEngineSetBulkSize");
  for (long i = 0; i < warmup && !rc; i++) rc = push_ops(p, ops, arrays, nvars, &ran);
  for (long i = 0; i < iters && !rc; i++) {
    mxcts__probe_pin_threads(p);
    double t0 = mxcts__probe_now_ms();
    rc = push_ops(p, ops, arrays, nvars, &ran);
    times[i] = mxcts__probe_now_ms() - t0;
  }
  if (!rc) {
    mxcts__probe_set_timing(p, times, (int)iters);
    long want = (warmup + iters) * ops;
    mxcts__probe_add_check(p, "every_op_ran", atomic_load(&ran) == want, "%ld of %ld ops ran",
                           atomic_load(&ran), want);
  }
  for (long v = 0; v < nvars && arrays; v++)
    if (arrays[v]) p->api.MXNDArrayFree(arrays[v]);
  free(arrays);
  free(times);
  return rc;
}
