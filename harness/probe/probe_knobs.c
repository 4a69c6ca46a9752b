/*
 * The knobs workload: C API settings observed from outside, each by an
 * exact check (docs/probe-protocol.md):
 *
 * - MXEngineSetBulkSize returns the bulk size in effect before the call.
 * - grad_req kinds, through MXAutogradMarkVariables and MXExecutorBindEX:
 *   y = x * w, backward twice with a head gradient of ones, into a gradient
 *   array of x that starts at 5: 'write' (1) leaves w, 'add' (3) 5 + 2w,
 *   'null' (0) leaves 5.  w is marked 'write' so that a gradient is always
 *   asked for.
 * - a cached op's outputs are the caller's: two calls on different inputs
 *   through flip, flip, 2x2 max pool, flip, flip of an 8x8 image, both
 *   outputs kept; the first reads the same after the second call.  (The
 *   pooled values are smaller than the flips', so a memory plan may place
 *   them inside the flips' arrays, which the next call writes.)
 * - a cached op's gradients reach every input: y = a*b + a called twice on
 *   the marked a and b under autograd, both outputs back-propagated; each
 *   input's gradient is a sum over the calls (da = 2(b+1), db = 2a).
 * - MXNDArrayGetGradState: 0 on an array never marked, 1 on a variable
 *   after backward, 0 after MXNDArraySetGradState(0).
 * - a gradient BlockGrad stops: y = BlockGrad(x) * w bound with grad_req
 *   write, x's gradient array starting at 5: after a backward pass it holds
 *   zeros and w's holds x.  The variables and nodes are named with printf
 *   conversions ("x%n%s"), which must be plain names.
 * - profiler modes (--param profile=symbolic|imperative|autostart): which of
 *   an executor's ops (a training step of x * w) and an imperative op the
 *   trace records; with profile=symbolic also that the backward pass is the
 *   one engine op [_identity_with_attr_like_rhs,_backward_mul], as MXNet's.
 */
#include <stdio.h>
#include <string.h>

#include "probe/probe.h"
#include "probe/probe_internal.h"

enum { LEN = 3, REQ_NULL = 0, REQ_WRITE = 1, REQ_ADD = 3 };

static const float X0[LEN] = {1, 2, 3}, W0[LEN] = {3, 4, 5}, ONES[LEN] = {1, 1, 1}, START = 5;

/* ------------------------------------------------------- bulk size */

static int check_bulk_size_previous(struct probe *p) {
  int prev0, prev1, prev2;
  PROBE_CALL(p, MXEngineSetBulkSize, 7, &prev0);
  PROBE_CALL(p, MXEngineSetBulkSize, 3, &prev1);
  PROBE_CALL(p, MXEngineSetBulkSize, prev0, &prev2);
  mxcts__probe_add_check(p, "set_bulk_size_returns_previous", prev1 == 7 && prev2 == 3,
                         "MXEngineSetBulkSize(7), (3), (%d) returned %d, %d, %d (expected ..., 7, 3)", prev0,
                         prev0, prev1, prev2);
  return 0;
}

/* --------------------------------------------------------- grad_req */

struct grad_arrays {
  NDArrayHandle x, w, gx, gw, ones; /* gx starts at START */
};

static int grad_arrays_new(struct probe *p, struct grad_arrays *a) {
  float start[LEN] = {START, START, START};
  *a = (struct grad_arrays){0};
  if (mxcts__probe_new_vector(p, LEN, X0, &a->x) || mxcts__probe_new_vector(p, LEN, W0, &a->w) ||
      mxcts__probe_new_vector(p, LEN, start, &a->gx) || mxcts__probe_new_vector(p, LEN, NULL, &a->gw) ||
      mxcts__probe_new_vector(p, LEN, ONES, &a->ones))
    return -1;
  return 0;
}

static void grad_arrays_free(struct probe *p, struct grad_arrays *a) {
  NDArrayHandle all[] = {a->x, a->w, a->gx, a->gw, a->ones};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) p->api.MXNDArrayFree(all[i]);
}

static const char *req_name(uint32_t req) { return req == REQ_NULL ? "null" : req == REQ_ADD ? "add" : "write"; }

/* Compare x's gradient after two backward passes with what `req` gives. */
static int check_grad(struct probe *p, const char *via, uint32_t req, NDArrayHandle gx) {
  float g[LEN];
  PROBE_CALL(p, MXNDArraySyncCopyToCPU, gx, g, LEN);
  int wrong = 0;
  for (int i = 0; i < LEN; i++) {
    float want = req == REQ_WRITE ? W0[i] : req == REQ_ADD ? START + 2 * W0[i] : START;
    wrong += g[i] != want;
  }
  char name[64];
  snprintf(name, sizeof name, "%s_grad_req_%s", via, req_name(req));
  mxcts__probe_add_check(p, name, wrong == 0,
                         "x's gradient after two backward passes of x*w from %g (w = 3,4,5): [%g, %g, %g]",
                         (double)START, (double)g[0], (double)g[1], (double)g[2]);
  return 0;
}

static int autograd_pass(struct probe *p, struct grad_arrays *a) {
  int prev;
  NDArrayHandle in[2] = {a->x, a->w}, y;
  PROBE_CALL(p, MXAutogradSetIsRecording, 1, &prev);
  PROBE_CALL(p, MXAutogradSetIsTraining, 1, &prev);
  int rc = mxcts__probe_invoke1(p, "elemwise_mul", 2, in, 0, NULL, NULL, &y);
  PROBE_CALL(p, MXAutogradSetIsRecording, 0, &prev);
  if (rc) return -1;
  rc = p->api.MXAutogradBackwardEx(1, &y, &a->ones, 0, NULL, 0, 0, 1, NULL, NULL);
  p->api.MXNDArrayFree(y);
  return rc ? mxcts__probe_fail(p, "MXAutogradBackwardEx") : 0;
}

static int autograd_grad_req(struct probe *p, uint32_t req) {
  struct grad_arrays a;
  int rc = grad_arrays_new(p, &a);
  NDArrayHandle vars[2] = {a.x, a.w}, grads[2] = {a.gx, a.gw};
  uint32_t reqs[2] = {req, REQ_WRITE};
  if (!rc && p->api.MXAutogradMarkVariables(2, vars, reqs, grads)) rc = mxcts__probe_fail(p, "MXAutogradMarkVariables");
  for (int i = 0; i < 2 && !rc; i++) rc = autograd_pass(p, &a);
  if (!rc) rc = check_grad(p, "autograd", req, a.gx);
  grad_arrays_free(p, &a);
  return rc;
}

/* y = elemwise_mul(x, w) as a symbol. */
static int mul_symbol(struct probe *p, SymbolHandle *out) {
  OpHandle op;
  SymbolHandle args[2];
  PROBE_CALL(p, NNGetOpHandle, "elemwise_mul", &op);
  PROBE_CALL(p, MXSymbolCreateVariable, "x", &args[0]);
  PROBE_CALL(p, MXSymbolCreateVariable, "w", &args[1]);
  PROBE_CALL(p, MXSymbolCreateAtomicSymbol, op, 0, NULL, NULL, out);
  PROBE_CALL(p, MXSymbolCompose, *out, "y", 2, NULL, args);
  p->api.MXSymbolFree(args[0]);
  p->api.MXSymbolFree(args[1]);
  return 0;
}

static int executor_grad_req(struct probe *p, SymbolHandle sym, uint32_t req) {
  struct grad_arrays a;
  ExecutorHandle exe = NULL;
  int rc = grad_arrays_new(p, &a);
  NDArrayHandle in[2] = {a.x, a.w}, grads[2] = {a.gx, a.gw};
  uint32_t reqs[2] = {req, REQ_WRITE};
  if (!rc && p->api.MXExecutorBindEX(sym, p->dev_type, 0, 0, NULL, NULL, NULL, 2, in, grads, reqs, 0, NULL, NULL, &exe))
    rc = mxcts__probe_fail(p, "MXExecutorBindEX");
  for (int i = 0; i < 2 && !rc; i++) {
    if (p->api.MXExecutorForward(exe, 1) || p->api.MXExecutorBackwardEx(exe, 1, &a.ones, 1))
      rc = mxcts__probe_fail(p, "MXExecutorForward/MXExecutorBackwardEx");
  }
  if (!rc) rc = check_grad(p, "executor", req, a.gx);
  if (exe) p->api.MXExecutorFree(exe);
  grad_arrays_free(p, &a);
  return rc;
}

static int check_grad_reqs(struct probe *p) {
  static const uint32_t reqs[] = {REQ_WRITE, REQ_ADD, REQ_NULL};
  SymbolHandle sym;
  if (mul_symbol(p, &sym)) return -1;
  int rc = 0;
  for (int i = 0; i < 3 && !rc; i++) rc = autograd_grad_req(p, reqs[i]) || executor_grad_req(p, sym, reqs[i]);
  p->api.MXSymbolFree(sym);
  return rc ? -1 : 0;
}

/* ----------------------------------------- a gradient BlockGrad stops */

/* Variable names that hold printf conversions: a name is data, and an
 * implementation that formats with one (as a format, not an argument)
 * reads or writes through arguments that are not there. */
static const char *const PERCENT_X = "x%n%s", *const PERCENT_W = "w%n%s";

/* y = elemwise_mul(BlockGrad(x), w), the variables named PERCENT_X and PERCENT_W. */
static int stopped_symbol(struct probe *p, SymbolHandle *out) {
  OpHandle block, mul;
  SymbolHandle x, w, args[2];
  PROBE_CALL(p, NNGetOpHandle, "BlockGrad", &block);
  PROBE_CALL(p, NNGetOpHandle, "elemwise_mul", &mul);
  PROBE_CALL(p, MXSymbolCreateVariable, PERCENT_X, &x);
  PROBE_CALL(p, MXSymbolCreateVariable, PERCENT_W, &w);
  PROBE_CALL(p, MXSymbolCreateAtomicSymbol, block, 0, NULL, NULL, &args[0]);
  PROBE_CALL(p, MXSymbolCompose, args[0], "stop%n%s", 1, NULL, &x);
  args[1] = w;
  PROBE_CALL(p, MXSymbolCreateAtomicSymbol, mul, 0, NULL, NULL, out);
  PROBE_CALL(p, MXSymbolCompose, *out, "y%n%s", 2, NULL, args);
  p->api.MXSymbolFree(args[0]);
  p->api.MXSymbolFree(x);
  p->api.MXSymbolFree(w);
  return 0;
}

static void report_stopped_grad(struct probe *p, const float *gx, const float *gw) {
  int wrong = 0;
  for (int i = 0; i < LEN; i++) wrong += gx[i] != 0 || gw[i] != X0[i];
  mxcts__probe_add_check(p, "executor_stopped_grad", wrong == 0,
                         "gradients of BlockGrad(x) * w (variables named %s, %s; x's from %g): x [%g, %g, %g], "
                         "w [%g, %g, %g] (expected 0s, and x = 1, 2, 3)",
                         PERCENT_X, PERCENT_W, (double)START, (double)gx[0], (double)gx[1], (double)gx[2],
                         (double)gw[0], (double)gw[1], (double)gw[2]);
}

/* A gradient that BlockGrad stops is written as zeros under grad_req write. */
static int check_stopped_grad(struct probe *p) {
  struct grad_arrays a;
  SymbolHandle sym;
  ExecutorHandle exe = NULL;
  if (stopped_symbol(p, &sym)) return -1;
  int rc = grad_arrays_new(p, &a);
  NDArrayHandle in[2] = {a.x, a.w}, grads[2] = {a.gx, a.gw};
  uint32_t reqs[2] = {REQ_WRITE, REQ_WRITE};
  if (!rc && p->api.MXExecutorBindEX(sym, p->dev_type, 0, 0, NULL, NULL, NULL, 2, in, grads, reqs, 0, NULL, NULL, &exe))
    rc = mxcts__probe_fail(p, "MXExecutorBindEX");
  if (!rc && (p->api.MXExecutorForward(exe, 1) || p->api.MXExecutorBackwardEx(exe, 1, &a.ones, 1)))
    rc = mxcts__probe_fail(p, "MXExecutorForward/MXExecutorBackwardEx");
  float gx[LEN], gw[LEN];
  if (!rc && (p->api.MXNDArraySyncCopyToCPU(a.gx, gx, LEN) || p->api.MXNDArraySyncCopyToCPU(a.gw, gw, LEN)))
    rc = mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU");
  if (!rc) report_stopped_grad(p, gx, gw);
  if (exe) p->api.MXExecutorFree(exe);
  grad_arrays_free(p, &a);
  p->api.MXSymbolFree(sym);
  return rc;
}

/* ------------------------------------------------ cached-op outputs */

enum { SIDE = 8, POOLED = (SIDE / 2) * (SIDE / 2) };

/* One more node: op(in) with the given parameters, named `name`. */
static int compose1(struct probe *p, const char *op_name, const char *name, int nparams, const char **keys,
                    const char **vals, SymbolHandle in, SymbolHandle *out) {
  OpHandle op;
  PROBE_CALL(p, NNGetOpHandle, op_name, &op);
  PROBE_CALL(p, MXSymbolCreateAtomicSymbol, op, (uint32_t)nparams, keys, vals, out);
  PROBE_CALL(p, MXSymbolCompose, *out, name, 1, NULL, &in);
  return 0;
}

/* flip(axis 3), flip(3), max pool 2x2 stride 2, flip(2), flip(2) of x. */
static int pool_chain_symbol(struct probe *p, SymbolHandle *out) {
  const char *axis[] = {"axis"}, *three[] = {"3"}, *two[] = {"2"};
  const char *pk[] = {"kernel", "stride", "pool_type"}, *pv[] = {"(2, 2)", "(2, 2)", "max"};
  static const char *const names[] = {"f1", "f2", "pool", "f3", "f4"};
  SymbolHandle s;
  PROBE_CALL(p, MXSymbolCreateVariable, "x", &s);
  for (int i = 0; i < 5; i++) {
    SymbolHandle next;
    int rc = i == 2 ? compose1(p, "Pooling", names[i], 3, pk, pv, s, &next)
                    : compose1(p, "flip", names[i], 1, axis, i < 2 ? three : two, s, &next);
    p->api.MXSymbolFree(s);
    if (rc) return -1;
    s = next;
  }
  *out = s;
  return 0;
}

static int new_image(struct probe *p, float offset, NDArrayHandle *out) {
  const uint32_t shape[] = {1, 1, SIDE, SIDE};
  float x[SIDE * SIDE];
  for (int i = 0; i < SIDE * SIDE; i++) x[i] = (float)((i * 37) % 64) + offset;
  PROBE_CALL(p, MXNDArrayCreateEx, shape, 4, p->dev_type, 0, 0, 0, out);
  PROBE_CALL(p, MXNDArraySyncCopyFromCPU, *out, x, SIDE * SIDE);
  return 0;
}

/* Invoke the cached op on x; *y is its output, held by the caller. */
static int invoke_kept(struct probe *p, CachedOpHandle cop, NDArrayHandle x, NDArrayHandle *y, float *values) {
  int nout = 0;
  NDArrayHandle *outs = NULL;
  const int *stypes;
  PROBE_CALL(p, MXInvokeCachedOpEx, cop, 1, &x, &nout, &outs, &stypes);
  *y = outs[0];
  PROBE_CALL(p, MXNDArraySyncCopyToCPU, *y, values, POOLED);
  return 0;
}

/* The first output read again after the second call (`again`) must hold
 * what it held before it (`first`); the two calls' outputs differ. */
static void report_kept(struct probe *p, const float *first, const float *second, const float *again) {
  for (int i = 0; i < POOLED; i++)
    if (again[i] != first[i]) {
      mxcts__probe_add_check(p, "cachedop_kept_outputs", false,
                             "the first call's output changed under the second call: element %d was %g, "
                             "now %g", i, first[i], again[i]);
      return;
    }
  mxcts__probe_add_check(p, "cachedop_kept_outputs", first[0] != second[0],
                         "the first call's output kept its values through a second call on another "
                         "input (element 0: %g; the second output's: %g)", first[0], second[0]);
}

static int run_kept_outputs(struct probe *p, CachedOpHandle cop) {
  NDArrayHandle x[2] = {NULL, NULL}, y[2] = {NULL, NULL};
  float first[POOLED], second[POOLED], again[POOLED];
  int rc = new_image(p, 0, &x[0]) || new_image(p, -100, &x[1]);
  if (!rc) rc = invoke_kept(p, cop, x[0], &y[0], first) || invoke_kept(p, cop, x[1], &y[1], second);
  if (!rc && p->api.MXNDArraySyncCopyToCPU(y[0], again, POOLED)) rc = mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU");
  if (!rc) report_kept(p, first, second, again);
  for (int i = 0; i < 2; i++) {
    if (y[i]) p->api.MXNDArrayFree(y[i]);
    if (x[i]) p->api.MXNDArrayFree(x[i]);
  }
  return rc;
}

static int check_cachedop_kept_outputs(struct probe *p) {
  const char *keys[] = {"static_alloc", "static_shape"}, *vals[] = {"true", "true"};
  SymbolHandle sym = NULL;
  CachedOpHandle cop;
  if (pool_chain_symbol(p, &sym)) return -1;
  int rc = p->api.MXCreateCachedOpEx(sym, 2, keys, vals, &cop) ? mxcts__probe_fail(p, "MXCreateCachedOpEx") : 0;
  if (!rc) {
    rc = run_kept_outputs(p, cop);
    p->api.MXFreeCachedOp(cop);
  }
  p->api.MXSymbolFree(sym);
  return rc;
}

/* ---------------------------------- cached-op input gradients, grad state */

/* y = a*b + a as a symbol of two inputs, a and b. */
static int mul_add_symbol(struct probe *p, SymbolHandle *out) {
  OpHandle mul, add;
  SymbolHandle a, b, m = NULL;
  PROBE_CALL(p, NNGetOpHandle, "elemwise_mul", &mul);
  PROBE_CALL(p, NNGetOpHandle, "elemwise_add", &add);
  PROBE_CALL(p, MXSymbolCreateVariable, "a", &a);
  PROBE_CALL(p, MXSymbolCreateVariable, "b", &b);
  SymbolHandle ab[2] = {a, b};
  int rc = p->api.MXSymbolCreateAtomicSymbol(mul, 0, NULL, NULL, &m) || p->api.MXSymbolCompose(m, "m", 2, NULL, ab) ||
           p->api.MXSymbolCreateAtomicSymbol(add, 0, NULL, NULL, out);
  SymbolHandle ma[2] = {m, a};
  if (!rc) rc = p->api.MXSymbolCompose(*out, "y", 2, NULL, ma);
  if (m) p->api.MXSymbolFree(m);
  p->api.MXSymbolFree(a);
  p->api.MXSymbolFree(b);
  return rc ? mxcts__probe_fail(p, "building a*b + a") : 0;
}

/* Record two calls of the cached op on (a, b), so that each input feeds two
 * calls and its gradient is a sum, and back-propagate both outputs with
 * heads of ones. */
static int record_two_calls(struct probe *p, CachedOpHandle cop, struct grad_arrays *g) {
  NDArrayHandle in[2] = {g->x, g->w}, y[2] = {NULL, NULL}, heads[2] = {g->ones, g->ones};
  int prev, rc = 0;
  PROBE_CALL(p, MXAutogradSetIsRecording, 1, &prev);
  PROBE_CALL(p, MXAutogradSetIsTraining, 1, &prev);
  for (int k = 0; k < 2 && !rc; k++) {
    int nout = 0;
    NDArrayHandle *outs = NULL;
    const int *stypes;
    rc = p->api.MXInvokeCachedOpEx(cop, 2, in, &nout, &outs, &stypes) ? mxcts__probe_fail(p, "MXInvokeCachedOpEx") : 0;
    if (!rc) y[k] = outs[0];
  }
  PROBE_CALL(p, MXAutogradSetIsRecording, 0, &prev);
  if (!rc && p->api.MXAutogradBackwardEx(2, y, heads, 0, NULL, 0, 0, 1, NULL, NULL))
    rc = mxcts__probe_fail(p, "MXAutogradBackwardEx");
  for (int k = 0; k < 2; k++)
    if (y[k]) p->api.MXNDArrayFree(y[k]);
  return rc;
}

/* Gradients of two calls of a*b + a: 2(b + 1) for a, 2a for b. */
static int report_two_input_grads(struct probe *p, struct grad_arrays *g) {
  float ga[LEN], gb[LEN];
  PROBE_CALL(p, MXNDArraySyncCopyToCPU, g->gx, ga, LEN);
  PROBE_CALL(p, MXNDArraySyncCopyToCPU, g->gw, gb, LEN);
  int wrong = 0;
  for (int i = 0; i < LEN; i++) wrong += ga[i] != 2 * (W0[i] + 1) || gb[i] != 2 * X0[i];
  mxcts__probe_add_check(p, "cachedop_input_grads", wrong == 0,
                         "two recorded calls of a cached op a*b + a on a = (1,2,3), b = (3,4,5): da = [%g, %g, %g] "
                         "(expected 2(b+1) = 8 10 12), db = [%g, %g, %g] (expected 2a = 2 4 6)", (double)ga[0],
                         (double)ga[1], (double)ga[2], (double)gb[0], (double)gb[1], (double)gb[2]);
  return 0;
}

/* MXNDArrayGetGradState of `arr` is `want`. */
static int report_grad_state(struct probe *p, const char *name, NDArrayHandle arr, int want, const char *what) {
  int state = -1;
  PROBE_CALL(p, MXNDArrayGetGradState, arr, &state);
  mxcts__probe_add_check(p, name, state == want, "MXNDArrayGetGradState of %s: %d (expected %d)", what, state, want);
  return 0;
}

static int run_two_input_grads(struct probe *p, CachedOpHandle cop, struct grad_arrays *g) {
  NDArrayHandle vars[2] = {g->x, g->w}, grads[2] = {g->gx, g->gw};
  uint32_t reqs[2] = {REQ_WRITE, REQ_WRITE};
  if (report_grad_state(p, "grad_state_plain", g->ones, 0, "an array never marked")) return -1;
  PROBE_CALL(p, MXAutogradMarkVariables, 2, vars, reqs, grads);
  if (record_two_calls(p, cop, g) || report_two_input_grads(p, g)) return -1;
  if (report_grad_state(p, "grad_state_after_backward", g->x, 1, "a marked variable after backward")) return -1;
  PROBE_CALL(p, MXNDArraySetGradState, g->x, 0);
  return report_grad_state(p, "grad_state_set", g->x, 0, "that variable after MXNDArraySetGradState(0)");
}

static int check_cachedop_input_grads(struct probe *p) {
  SymbolHandle sym;
  CachedOpHandle cop;
  struct grad_arrays g;
  if (mul_add_symbol(p, &sym)) return -1;
  int rc = p->api.MXCreateCachedOpEx(sym, 0, NULL, NULL, &cop) ? mxcts__probe_fail(p, "MXCreateCachedOpEx") : 0;
  p->api.MXSymbolFree(sym);
  if (rc) return -1;
  rc = grad_arrays_new(p, &g);
  if (!rc) rc = run_two_input_grads(p, cop, &g);
  grad_arrays_free(p, &g);
  p->api.MXFreeCachedOp(cop);
  return rc;
}

/* --------------------------------------------------------- profiler */

/* An executor forward of x*w (a symbolic op) and an imperative x + 1. */
/* The executor's training step of x * w (both gradients written), then
 * the imperative _plus_scalar. */
static int run_both_kinds(struct probe *p, SymbolHandle sym) {
  struct grad_arrays a;
  ExecutorHandle exe = NULL;
  NDArrayHandle y = NULL;
  const char *k[] = {"scalar"}, *v[] = {"1"};
  int rc = grad_arrays_new(p, &a);
  NDArrayHandle in[2] = {a.x, a.w}, grads[2] = {a.gx, a.gw};
  uint32_t reqs[2] = {REQ_WRITE, REQ_WRITE};
  if (!rc && p->api.MXExecutorBindEX(sym, p->dev_type, 0, 0, NULL, NULL, NULL, 2, in, grads, reqs, 0, NULL, NULL, &exe))
    rc = mxcts__probe_fail(p, "MXExecutorBindEX");
  if (!rc && (p->api.MXExecutorForward(exe, 1) || p->api.MXExecutorBackwardEx(exe, 1, &a.ones, 1)))
    rc = mxcts__probe_fail(p, "MXExecutorForward/MXExecutorBackwardEx");
  if (!rc) rc = mxcts__probe_invoke1(p, "_plus_scalar", 1, &a.x, 1, k, v, &y);
  if (!rc && p->api.MXNDArrayWaitAll()) rc = mxcts__probe_fail(p, "MXNDArrayWaitAll");
  if (y) p->api.MXNDArrayFree(y);
  if (exe) p->api.MXExecutorFree(exe);
  grad_arrays_free(p, &a);
  return rc;
}

/* Start the profiler recording only the kind `mode` names. */
static int start_profiler(struct probe *p, const char *mode, const char *file) {
  bool sym = strcmp(mode, "symbolic") == 0;
  const char *keys[] = {"profile_symbolic", "profile_imperative", "profile_api", "profile_memory", "filename"};
  const char *vals[] = {sym ? "true" : "false", sym ? "false" : "true", "false", "false", file};
  PROBE_CALL(p, MXSetProfilerConfig, 5, keys, vals);
  PROBE_CALL(p, MXSetProfilerState, 1);
  return 0;
}

static bool trace_has(const struct mxcts_pass_structure *s, const char *op) {
  for (int i = 0; i < s->num_names; i++)
    if (s->names[i] && strstr(s->names[i], op)) return true;
  return false;
}

/* The backward pass of x * w, at the default bulking, is one engine op
 * as MXNet's: the head gradient's identity and _backward_mul, and nothing
 * more (a copy of a gradient the graph does not need, say). */
static void report_backward_segment(struct probe *p, const struct mxcts_pass_structure *s) {
  static const char want[] = "[_identity_with_attr_like_rhs,_backward_mul]";
  char seen[400] = "";
  int others = 0;
  for (int i = 0; i < s->num_names; i++) {
    if (!s->names[i] || strcmp(s->names[i], "[elemwise_mul]") == 0) continue; /* the forward */
    others++;
    size_t at = strlen(seen);
    snprintf(seen + at, sizeof seen - at, "%s%s", at ? " " : "", s->names[i]);
  }
  mxcts__probe_add_check(p, "profiler_symbolic_backward", others == 1 && strcmp(seen, want) == 0,
                         "the engine ops of the trace but the forward's [elemwise_mul]: %s (expected %s)",
                         seen[0] ? seen : "none", want);
}

/* Report whether the trace recorded each kind, against expect_symbolic and
 * expect_imperative. */
static int report_trace(struct probe *p, const char *file, const char *mode) {
  struct mxcts_pass_structure s;
  char err[512];
  if (mxcts_trace_read(file, &s, err, sizeof err)) {
    mxcts__probe_add_check(p, "profiler_trace", false, "profile=%s: %s", mode, err);
    return 0;
  }
  bool sym = trace_has(&s, "elemwise_mul"), imp = trace_has(&s, "_plus_scalar");
  bool want_sym = mxcts__probe_param_long(p, "expect_symbolic", 0), want_imp = mxcts__probe_param_long(p, "expect_imperative", 0);
  mxcts__probe_add_check(p, "profiler_mode_symbolic", sym == want_sym, "profile=%s: the executor's elemwise_mul is %s the trace",
                         mode, sym ? "in" : "not in");
  mxcts__probe_add_check(p, "profiler_mode_imperative", imp == want_imp, "profile=%s: the imperative _plus_scalar is %s the trace",
                         mode, imp ? "in" : "not in");
  if (strcmp(mode, "symbolic") == 0) report_backward_segment(p, &s);
  mxcts_trace_free(&s);
  return 0;
}

static int check_profiler_mode(struct probe *p, const char *mode) {
  bool autostart = strcmp(mode, "autostart") == 0;
  if (!autostart && strcmp(mode, "symbolic") && strcmp(mode, "imperative")) {
    mxcts__probe_add_check(p, "params", false, "profile=%s: none, symbolic, imperative or autostart", mode);
    return -1;
  }
  const char *file = autostart ? "profile.json" : "knobs-profile.json"; /* in the working directory */
  SymbolHandle sym;
  if (mul_symbol(p, &sym)) return -1;
  int rc = autostart ? 0 : start_profiler(p, mode, file);
  if (!rc) rc = run_both_kinds(p, sym);
  p->api.MXSymbolFree(sym);
  if (rc) return -1;
  PROBE_CALL(p, MXSetProfilerState, 0);
  PROBE_CALL(p, MXDumpProfile, 1);
  return report_trace(p, file, mode);
}

int mxcts__probe_knobs(struct probe *p) {
  const char *mode = mxcts__probe_param_str(p, "profile", "none");
  if (strcmp(mode, "none") != 0) return check_profiler_mode(p, mode);
  if (check_bulk_size_previous(p) || check_cachedop_kept_outputs(p) || check_cachedop_input_grads(p)) return -1;
  return check_grad_reqs(p) || check_stopped_grad(p) ? -1 : 0;
}
