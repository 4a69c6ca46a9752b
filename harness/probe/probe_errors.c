/*
 * The op_errors workload: where an op's error surfaces
 * (docs/probe-protocol.md).  The failing op is `_random_normal` with
 * scale=-1, which MXNet 1.9.1 rejects when the sampler runs ("scale
 * parameter in gaussian has to be positive"), inside the engine; every
 * check looks for "scale" in MXGetLastError's text.
 *
 * MXNet's threaded engines (src/engine/threaded_engine.cc) keep the error
 * of a failed op on the vars it writes: the call that pushed it returns 0,
 * an op reading a failed var inherits the error and is skipped, and the
 * first WaitToRead / SyncCopyToCPU of a failed array, or WaitAll, rethrows
 * it and clears it (a second wait returns 0).  Ops on other arrays run as
 * usual.  Its NaiveEngine runs each op inside the call that pushes it, so
 * the error comes back from that call (MXImperativeInvokeEx,
 * MXExecutorForward, MXInvokeCachedOpEx) and no wait sees it again.  The
 * parameter `surfaces` (`wait` or `call`) says which of the two the
 * configuration's engine does; each mode reports its own checks.  With
 * `bulk` > 0 the probe calls MXEngineSetBulkSize(bulk) first, so the
 * imperative ops run in engine bulks and the error comes from inside one.
 */
#include <stdio.h>
#include <string.h>

#include "probe/probe.h"
#include "probe/probe_internal.h"

enum { N = 4 }; /* the (2,2) arrays of every check */

/* What a call that may fail returned: its status, whether MXGetLastError's
 * text names the sampler's parameter, and the start of that text. */
struct outcome {
  int rc;
  bool names_scale;
  char msg[200];
};

static void record(struct probe *p, int rc, struct outcome *o) {
  o->rc = rc;
  const char *m = rc && p->api.MXGetLastError ? p->api.MXGetLastError() : "";
  if (!m) m = "";
  o->names_scale = strstr(m, "scale") != NULL; /* the whole text: a long prefix may push it past msg */
  snprintf(o->msg, sizeof o->msg, "%s", m);
  for (char *c = o->msg; *c; c++)
    if (*c == '\n') *c = ' '; /* MXNet's text carries a traceback: keep it on one line */
}

/* Whether the call failed with the sampler's error. */
static bool sampler_error(const struct outcome *o) {
  return o->rc != 0 && o->names_scale;
}

static const char *ctx_name(const struct probe *p) {
  return p->dev_type == 2 ? "gpu(0)" : "cpu(0)";
}

/* A new (2,2) float32 array on the probe's device, holding `x` when given. */
static int new_array(struct probe *p, const float *x, NDArrayHandle *out) {
  const uint32_t shape[] = {2, 2};
  PROBE_CALL(p, MXNDArrayCreateEx, shape, 2, p->dev_type, 0, 0, 0, out);
  if (x) PROBE_CALL(p, MXNDArraySyncCopyFromCPU, *out, x, (size_t)N);
  return 0;
}

/* Invoke `name` on `nin` inputs writing `out` (an existing array); the
 * call's result goes to `o`.  Returns -1 only when the op is unknown. */
static int invoke_into(struct probe *p, const char *name, int nin, NDArrayHandle *in, int nkv, const char **k,
                       const char **v, NDArrayHandle out, struct outcome *o) {
  OpHandle op;
  PROBE_CALL(p, NNGetOpHandle, name, &op);
  NDArrayHandle outs[1] = {out}, *outp = outs;
  int nout = 1;
  const int *stypes;
  record(p, p->api.MXImperativeInvokeEx(op, nin, in, &nout, &outp, nkv, k, v, &stypes), o);
  return 0;
}

/* _random_normal(loc=0, scale=-1) into `out`. */
static int push_failing_sampler(struct probe *p, NDArrayHandle out, struct outcome *o) {
  const char *k[] = {"loc", "scale", "shape", "ctx"}, *v[] = {"0", "-1", "(2,2)", ctx_name(p)};
  return invoke_into(p, "_random_normal", 0, NULL, 4, k, v, out, o);
}

/* out = in + s. */
static int push_plus(struct probe *p, NDArrayHandle in, const char *s, NDArrayHandle out, struct outcome *o) {
  const char *k[] = {"scalar"};
  return invoke_into(p, "_plus_scalar", 1, &in, 1, k, &s, out, o);
}

/* Read `a`; the copy's result goes to `o`, the values to `y`. */
static void read_into(struct probe *p, NDArrayHandle a, float *y, struct outcome *o) {
  for (int i = 0; i < N; i++) y[i] = -1e30f;
  record(p, p->api.MXNDArraySyncCopyToCPU(a, y, (size_t)N), o);
}

static void wait_read(struct probe *p, NDArrayHandle a, struct outcome *o) {
  record(p, p->api.MXNDArrayWaitToRead(a), o);
}

static void wait_all(struct probe *p, struct outcome *o) {
  record(p, p->api.MXNDArrayWaitAll(), o);
}

/* Start each check with nothing left to surface from an earlier one (a
 * check that failed may have left an error behind). */
static void drain(struct probe *p) {
  p->api.MXNDArrayWaitAll();
}

static bool holds(const float *y, const float *want) {
  for (int i = 0; i < N; i++)
    if (y[i] != want[i]) return false;
  return true;
}

/* ------------------------------------------- imperative, errors at waits */

/* The push returns 0; WaitToRead of its output returns the error, once:
 * a second WaitToRead and then WaitAll return 0. */
static int check_wait_to_read(struct probe *p) {
  NDArrayHandle b;
  struct outcome call, first, again, all;
  if (new_array(p, NULL, &b) || push_failing_sampler(p, b, &call)) return -1;
  wait_read(p, b, &first);
  wait_read(p, b, &again);
  wait_all(p, &all);
  mxcts__probe_add_check(p, "wait_to_read_surfaces_error", call.rc == 0 && sampler_error(&first),
                         "_random_normal(scale=-1) returned %d (expected 0: the error waits for a sync point); "
                         "WaitToRead of its output returned %d (expected -1 with the sampler's error): %s",
                         call.rc, first.rc, first.msg);
  mxcts__probe_add_check(p, "error_surfaces_once", first.rc != 0 && again.rc == 0 && all.rc == 0,
                         "after WaitToRead returned the error (%d), WaitToRead again returned %d and WaitAll "
                         "%d (expected 0 and 0: a surfaced error is cleared): %s%s", first.rc, again.rc, all.rc,
                         again.msg, all.msg);
  p->api.MXNDArrayFree(b);
  return 0;
}

/* SyncCopyToCPU of the failed output returns the error. */
static int check_sync_copy(struct probe *p) {
  NDArrayHandle b;
  struct outcome call, copy;
  float y[N];
  if (new_array(p, NULL, &b) || push_failing_sampler(p, b, &call)) return -1;
  read_into(p, b, y, &copy);
  mxcts__probe_add_check(p, "sync_copy_surfaces_error", call.rc == 0 && sampler_error(&copy),
                         "_random_normal(scale=-1) returned %d (expected 0); SyncCopyToCPU of its output "
                         "returned %d (expected -1 with the sampler's error): %s", call.rc, copy.rc, copy.msg);
  p->api.MXNDArrayFree(b);
  return 0;
}

/* Two failed ops: WaitAll returns the error and clears every error it
 * saw, so WaitToRead of either output and a second WaitAll return 0. */
static int check_wait_all(struct probe *p) {
  NDArrayHandle b[2];
  struct outcome call[2], all, read[2], again;
  for (int i = 0; i < 2; i++)
    if (new_array(p, NULL, &b[i]) || push_failing_sampler(p, b[i], &call[i])) return -1;
  wait_all(p, &all);
  wait_read(p, b[0], &read[0]);
  wait_read(p, b[1], &read[1]);
  wait_all(p, &again);
  mxcts__probe_add_check(p, "wait_all_surfaces_error", call[0].rc == 0 && call[1].rc == 0 && sampler_error(&all),
                         "two _random_normal(scale=-1) returned %d and %d (expected 0 and 0); WaitAll returned %d "
                         "(expected -1 with the sampler's error): %s", call[0].rc, call[1].rc, all.rc, all.msg);
  mxcts__probe_add_check(p, "wait_all_clears_error",
                         all.rc != 0 && read[0].rc == 0 && read[1].rc == 0 && again.rc == 0,
                         "after WaitAll returned the error (%d), WaitToRead of the two failed outputs returned %d "
                         "and %d, WaitAll again %d (expected 0, 0 and 0: WaitAll clears every error): %s%s%s",
                         all.rc, read[0].rc, read[1].rc, again.rc, read[0].msg, read[1].msg, again.msg);
  for (int i = 0; i < 2; i++) p->api.MXNDArrayFree(b[i]);
  return 0;
}

/* The failed output is freed before any wait (a Python temporary):
 * WaitAll still returns the error. */
static int check_wait_all_freed(struct probe *p) {
  NDArrayHandle b;
  struct outcome call, all;
  if (new_array(p, NULL, &b) || push_failing_sampler(p, b, &call)) return -1;
  p->api.MXNDArrayFree(b);
  wait_all(p, &all);
  mxcts__probe_add_check(p, "wait_all_sees_freed_output", call.rc == 0 && sampler_error(&all),
                         "_random_normal(scale=-1) returned %d (expected 0) and its output was freed; WaitAll "
                         "returned %d (expected -1 with the sampler's error): %s", call.rc, all.rc, all.msg);
  return 0;
}

/* c = b + 1 of the failed b: the push returns 0 and WaitToRead(c) returns
 * b's error (the sampler's message, not one of its own).  It is the same
 * error, so surfacing it through c surfaces it for b too: WaitToRead(b)
 * and WaitAll then return 0 (MXNet's vars share one exception_ptr). */
static int check_dependent(struct probe *p) {
  NDArrayHandle b, c;
  struct outcome call, dep, wait, read_b, all;
  if (new_array(p, NULL, &b) || new_array(p, NULL, &c) || push_failing_sampler(p, b, &call) ||
      push_plus(p, b, "1", c, &dep))
    return -1;
  wait_read(p, c, &wait);
  wait_read(p, b, &read_b);
  wait_all(p, &all);
  mxcts__probe_add_check(p, "dependent_inherits_error", call.rc == 0 && dep.rc == 0 && sampler_error(&wait),
                         "_random_normal(scale=-1) into b returned %d, c = b + 1 returned %d (expected 0 and 0); "
                         "WaitToRead(c) returned %d (expected -1 with the sampler's error): %s", call.rc, dep.rc,
                         wait.rc, wait.msg);
  mxcts__probe_add_check(p, "inherited_error_surfaces_once", wait.rc != 0 && read_b.rc == 0 && all.rc == 0,
                         "after WaitToRead(c) returned b's error (%d), WaitToRead(b) returned %d and WaitAll %d "
                         "(expected 0 and 0: it is one error, surfaced once): %s%s", wait.rc, read_b.rc, all.rc,
                         read_b.msg, all.msg);
  p->api.MXNDArrayFree(c);
  p->api.MXNDArrayFree(b);
  return 0;
}

/* ---------------------------------------------- imperative, both modes */

/* With the failed b not surfaced yet (wait mode), d = x + 1 of another
 * array runs and reads x + 1. */
static int check_independent(struct probe *p) {
  static const float x0[N] = {1, 2, 3, 4}, want[N] = {2, 3, 4, 5};
  NDArrayHandle b, x, d;
  struct outcome call, plus, copy;
  float y[N];
  if (new_array(p, NULL, &b) || new_array(p, x0, &x) || new_array(p, NULL, &d) ||
      push_failing_sampler(p, b, &call) || push_plus(p, x, "1", d, &plus))
    return -1;
  read_into(p, d, y, &copy);
  mxcts__probe_add_check(p, "independent_op_runs", plus.rc == 0 && copy.rc == 0 && holds(y, want),
                         "after a failed _random_normal (returned %d) into another array, d = x + 1 returned %d, "
                         "reading d returned %d and read %g %g %g %g (expected 0, 0 and 2 3 4 5): %s%s", call.rc,
                         plus.rc, copy.rc, (double)y[0], (double)y[1], (double)y[2], (double)y[3], plus.msg,
                         copy.msg);
  p->api.MXNDArrayFree(d);
  p->api.MXNDArrayFree(x);
  p->api.MXNDArrayFree(b);
  return 0;
}

/* After the error surfaced (at the call, or at WaitToRead): b = x + 2
 * overwrites the failed array and reads x + 2, and WaitAll returns 0. */
static int check_usable(struct probe *p, bool at_call) {
  static const float x0[N] = {1, 2, 3, 4}, want[N] = {3, 4, 5, 6};
  NDArrayHandle b, x;
  struct outcome call, surfaced, plus, copy, all;
  float y[N];
  if (new_array(p, NULL, &b) || new_array(p, x0, &x) || push_failing_sampler(p, b, &call)) return -1;
  surfaced = call;
  if (!at_call) wait_read(p, b, &surfaced);
  if (push_plus(p, x, "2", b, &plus)) return -1;
  read_into(p, b, y, &copy);
  wait_all(p, &all);
  mxcts__probe_add_check(p, "usable_after_error",
                         plus.rc == 0 && copy.rc == 0 && all.rc == 0 && holds(y, want),
                         "the failed _random_normal's error surfaced with %d; then b = x + 2 into "
                         "the failed array returned %d, reading b returned %d and read %g %g %g %g, WaitAll "
                         "returned %d (expected 0, 0, 3 4 5 6 and 0): %s%s%s", surfaced.rc, plus.rc, copy.rc, (double)y[0],
                         (double)y[1], (double)y[2], (double)y[3], all.rc, plus.msg, copy.msg, all.msg);
  p->api.MXNDArrayFree(x);
  p->api.MXNDArrayFree(b);
  return 0;
}

/* ------------------------------------------------ imperative, at calls */

/* The push itself returns the error; nothing is left for WaitAll. */
static int check_call(struct probe *p) {
  NDArrayHandle b;
  struct outcome call, all;
  if (new_array(p, NULL, &b) || push_failing_sampler(p, b, &call)) return -1;
  wait_all(p, &all);
  mxcts__probe_add_check(p, "call_surfaces_error", sampler_error(&call) && all.rc == 0,
                         "_random_normal(scale=-1) returned %d (expected -1 with the sampler's error: this engine "
                         "runs the op in the call), then WaitAll %d (expected 0): %s%s", call.rc, all.rc, call.msg,
                         all.msg);
  p->api.MXNDArrayFree(b);
  return 0;
}

/* ------------------------------------------------------------- graphs */

/* y = x + _random_normal(loc=0, scale=-1, shape=(2,2)): the graph's
 * sampler fails whenever the graph runs. */
static int failing_graph(struct probe *p, SymbolHandle *out) {
  const char *k[] = {"loc", "scale", "shape"}, *v[] = {"0", "-1", "(2,2)"};
  OpHandle normal, add;
  SymbolHandle args[2] = {NULL, NULL};
  PROBE_CALL(p, NNGetOpHandle, "_random_normal", &normal);
  PROBE_CALL(p, NNGetOpHandle, "elemwise_add", &add);
  PROBE_CALL(p, MXSymbolCreateVariable, "x", &args[0]);
  PROBE_CALL(p, MXSymbolCreateAtomicSymbol, normal, 3, k, v, &args[1]);
  PROBE_CALL(p, MXSymbolCompose, args[1], "noise", 0, NULL, NULL);
  PROBE_CALL(p, MXSymbolCreateAtomicSymbol, add, 0, NULL, NULL, out);
  PROBE_CALL(p, MXSymbolCompose, *out, "y", 2, NULL, args);
  p->api.MXSymbolFree(args[0]);
  p->api.MXSymbolFree(args[1]);
  return 0;
}

/* One way of running the graph on x: the run's call result goes to `o`,
 * its first output (a new handle the caller frees) to *y when it ran. */
struct graph_runner {
  const char *name; /* the checks' prefix */
  int (*run)(struct probe *p, void *graph, NDArrayHandle x, NDArrayHandle *y, struct outcome *o);
  void *graph;
};

static int run_executor(struct probe *p, void *exe, NDArrayHandle x, NDArrayHandle *y, struct outcome *o) {
  (void)x; /* bound */
  record(p, p->api.MXExecutorForward(exe, 0), o);
  uint32_t nout = 0;
  NDArrayHandle *outs = NULL;
  PROBE_CALL(p, MXExecutorOutputs, exe, &nout, &outs);
  for (uint32_t i = 1; i < nout; i++) p->api.MXNDArrayFree(outs[i]);
  *y = nout ? outs[0] : NULL;
  return 0;
}

static int run_cached_op(struct probe *p, void *cop, NDArrayHandle x, NDArrayHandle *y, struct outcome *o) {
  int nout = 0;
  NDArrayHandle *outs = NULL;
  const int *stypes;
  record(p, p->api.MXInvokeCachedOpEx(cop, 1, &x, &nout, &outs, &stypes), o);
  *y = o->rc == 0 && nout > 0 ? outs[0] : NULL;
  return 0;
}

/* Wait mode: the run returns 0 and WaitToRead of the output returns the
 * sampler's error; a second run returns 0 and WaitAll the error. */
static int graph_waits(struct probe *p, const struct graph_runner *g, NDArrayHandle x) {
  NDArrayHandle y = NULL;
  struct outcome run, wait, run2, all;
  char name[96];
  drain(p);
  if (g->run(p, g->graph, x, &y, &run)) return -1;
  if (y) wait_read(p, y, &wait);
  else wait = (struct outcome){.rc = 0, .names_scale = false, .msg = "(no output)"};
  if (y) p->api.MXNDArrayFree(y);
  y = NULL;
  snprintf(name, sizeof name, "%s_wait_to_read_surfaces_error", g->name);
  mxcts__probe_add_check(p, name, run.rc == 0 && sampler_error(&wait),
                         "%s of x + _random_normal(scale=-1) returned %d (expected 0); WaitToRead of its output "
                         "returned %d (expected -1 with the sampler's error): %s%s", g->name, run.rc, wait.rc,
                         run.msg, wait.msg);
  drain(p);
  if (g->run(p, g->graph, x, &y, &run2)) return -1;
  wait_all(p, &all);
  if (y) p->api.MXNDArrayFree(y);
  snprintf(name, sizeof name, "%s_wait_all_surfaces_error", g->name);
  mxcts__probe_add_check(p, name, run2.rc == 0 && sampler_error(&all),
                         "%s of the same graph again returned %d (expected 0); WaitAll returned %d (expected -1 "
                         "with the sampler's error): %s%s", g->name, run2.rc, all.rc, run2.msg, all.msg);
  return 0;
}

/* Call mode: the run itself returns the sampler's error, and WaitAll 0. */
static int graph_call(struct probe *p, const struct graph_runner *g, NDArrayHandle x) {
  NDArrayHandle y = NULL;
  struct outcome run, all;
  char name[96];
  drain(p);
  if (g->run(p, g->graph, x, &y, &run)) return -1;
  wait_all(p, &all);
  if (y) p->api.MXNDArrayFree(y);
  snprintf(name, sizeof name, "%s_call_surfaces_error", g->name);
  mxcts__probe_add_check(p, name, sampler_error(&run) && all.rc == 0,
                         "%s of x + _random_normal(scale=-1) returned %d (expected -1 with the sampler's error: "
                         "this engine runs the graph in the call), then WaitAll %d (expected 0): %s%s", g->name,
                         run.rc, all.rc, run.msg, all.msg);
  return 0;
}

static int graph_checks(struct probe *p, const struct graph_runner *g, NDArrayHandle x, bool at_call) {
  return at_call ? graph_call(p, g, x) : graph_waits(p, g, x);
}

static int check_executor(struct probe *p, SymbolHandle sym, NDArrayHandle x, bool at_call) {
  ExecutorHandle exe;
  NDArrayHandle no_grad = NULL;
  uint32_t req = 0; /* null */
  PROBE_CALL(p, MXExecutorBindEX, sym, p->dev_type, 0, 0, NULL, NULL, NULL, 1, &x, &no_grad, &req, 0, NULL, NULL,
             &exe);
  struct graph_runner g = {"executor", run_executor, exe};
  int rc = graph_checks(p, &g, x, at_call);
  p->api.MXExecutorFree(exe);
  return rc;
}

/* A cached op without flags, and one with static_alloc and static_shape
 * (a planned graph, run as a whole). */
static int check_cached_op(struct probe *p, SymbolHandle sym, NDArrayHandle x, bool stat, bool at_call) {
  const char *keys[] = {"static_alloc", "static_shape"}, *vals[] = {"true", "true"};
  CachedOpHandle cop;
  PROBE_CALL(p, MXCreateCachedOpEx, sym, stat ? 2 : 0, keys, vals, &cop);
  struct graph_runner g = {stat ? "cachedop_static" : "cachedop", run_cached_op, cop};
  int rc = graph_checks(p, &g, x, at_call);
  p->api.MXFreeCachedOp(cop);
  return rc;
}

static int check_graphs(struct probe *p, bool at_call) {
  static const float x0[N] = {1, 2, 3, 4};
  SymbolHandle sym;
  NDArrayHandle x = NULL;
  if (failing_graph(p, &sym)) return -1;
  int rc = new_array(p, x0, &x);
  if (!rc)
    rc = check_executor(p, sym, x, at_call) || check_cached_op(p, sym, x, false, at_call) ||
         check_cached_op(p, sym, x, true, at_call);
  if (x) p->api.MXNDArrayFree(x);
  p->api.MXSymbolFree(sym);
  return rc ? -1 : 0;
}

int mxcts__probe_op_errors(struct probe *p) {
  const char *mode = mxcts__probe_param_str(p, "surfaces", "wait");
  bool at_call = strcmp(mode, "call") == 0;
  if (!at_call && strcmp(mode, "wait") != 0) {
    mxcts__probe_add_check(p, "params", false, "surfaces=%s: wait or call", mode);
    return 0;
  }
  long bulk = mxcts__probe_param_long(p, "bulk", 0);
  int prev;
  if (bulk > 0) PROBE_CALL(p, MXEngineSetBulkSize, (int)bulk, &prev);
  int (*const at_waits[])(struct probe *) = {check_wait_to_read, check_sync_copy, check_wait_all,
                                             check_wait_all_freed, check_dependent, check_independent};
  int (*const at_calls[])(struct probe *) = {check_call, check_independent};
  int (*const *checks)(struct probe *) = at_call ? at_calls : at_waits;
  size_t n = at_call ? sizeof at_calls / sizeof at_calls[0] : sizeof at_waits / sizeof at_waits[0];
  for (size_t i = 0; i < n; i++) {
    drain(p);
    if (checks[i](p)) return -1;
  }
  drain(p);
  if (check_usable(p, at_call)) return -1;
  return check_graphs(p, at_call);
}
