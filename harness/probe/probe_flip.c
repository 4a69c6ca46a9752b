/*
 * The bulking workloads of seed 000: chains of flips (reverse along axis 0)
 * on a small vector, run through the symbolic executor, a cached op under
 * autograd, imperative calls, and an inference-only executor.  An even
 * number of flips gives back the input, and the gradient of any number of
 * flips of a constant head gradient is that head gradient reversed as often
 * -- so values are checked exactly, without an oracle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_internal.h"

struct chain {
  int num_ops, len, iterations, warmup;
};

static struct chain chain_params(const struct probe *p) {
  struct chain c = {(int)mxcts__probe_param_long(p, "num_ops", 1000), (int)mxcts__probe_param_long(p, "len", 10),
                    (int)mxcts__probe_param_long(p, "iterations", 20), (int)mxcts__probe_param_long(p, "warmup", 1)};
  return c;
}

/* flip(flip(...(data))) with num_ops flips, nodes named flip0, flip1, ... */
static int build_chain(struct probe *p, int n, SymbolHandle *out) {
  OpHandle op;
  PROBE_CALL(p, NNGetOpHandle, "flip", &op);
  SymbolHandle x;
  PROBE_CALL(p, MXSymbolCreateVariable, "data", &x);
  const char *keys[] = {"axis"}, *vals[] = {"0"};
  for (int i = 0; i < n; i++) {
    SymbolHandle f;
    char name[32];
    snprintf(name, sizeof name, "flip%d", i);
    PROBE_CALL(p, MXSymbolCreateAtomicSymbol, op, 1, keys, vals, &f);
    PROBE_CALL(p, MXSymbolCompose, f, name, 1, NULL, &x);
    PROBE_CALL(p, MXSymbolFree, x);
    x = f;
  }
  *out = x;
  return 0;
}

int mxcts__probe_new_vector(struct probe *p, int len, const float *data, NDArrayHandle *out) {
  uint32_t shape[] = {(uint32_t)len};
  PROBE_CALL(p, MXNDArrayCreateEx, shape, 1, p->dev_type, 0, 0, 0, out);
  if (data) PROBE_CALL(p, MXNDArraySyncCopyFromCPU, *out, data, (size_t)len);
  return 0;
}

static void fill(struct probe *p, float *x, int len) {
  uint64_t s = p->seed * 7919 + 17;
  for (int i = 0; i < len; i++) x[i] = (float)(mxcts_rng_uniform(&s) * 2 - 1);
}

/* y = flips^n(x): x when n is even, x reversed when odd. */
static bool is_flipped_n(const float *x, const float *y, int len, int n) {
  for (int i = 0; i < len; i++)
    if (y[i] != x[n % 2 ? len - 1 - i : i]) return false;
  return true;
}

static int read_vector(struct probe *p, NDArrayHandle a, float *out, int len) {
  PROBE_CALL(p, MXNDArraySyncCopyToCPU, a, out, (size_t)len);
  return 0;
}

/* Report output and gradient values and their exact checks. */
static void report(struct probe *p, const float *x, const float *y, const float *dy, const float *g,
                   int len, int n) {
  mxcts__probe_add_values(p, "output", y, len);
  mxcts__probe_add_check(p, "output_is_flipped_input", is_flipped_n(x, y, len, n),
                  "%d flips of the input", n);
  if (g) {
    mxcts__probe_add_values(p, "grad", g, len);
    mxcts__probe_add_check(p, "grad_is_flipped_head_grad", is_flipped_n(dy, g, len, n),
                    "%d flips of the head gradient", n);
  }
}

/* ---------------------------------------------------------- symbolic */

static int executor_iteration(struct probe *p, ExecutorHandle exe, NDArrayHandle dy, NDArrayHandle dx,
                              bool backward) {
  PROBE_CALL(p, MXExecutorForward, exe, backward ? 1 : 0);
  if (backward) {
    PROBE_CALL(p, MXExecutorBackwardEx, exe, 1, &dy, 1);
    PROBE_CALL(p, MXNDArrayWaitToRead, dx);
  }
  return 0;
}

static int run_executor(struct probe *p, bool train) {
  struct chain c = chain_params(p);
  SymbolHandle sym;
  if (build_chain(p, c.num_ops, &sym)) return -1;
  float *x = calloc((size_t)c.len, sizeof *x), *dy = calloc((size_t)c.len, sizeof *dy);
  float *y = calloc((size_t)c.len, sizeof *y), *g = calloc((size_t)c.len, sizeof *g);
  double *times = calloc((size_t)c.iterations + 1, sizeof *times);
  fill(p, x, c.len);
  for (int i = 0; i < c.len; i++) dy[i] = 1.0f + (float)i / 8; /* distinct, exact in float */
  NDArrayHandle X = NULL, DX = NULL, DY = NULL;
  int rc = mxcts__probe_new_vector(p, c.len, x, &X) || mxcts__probe_new_vector(p, c.len, NULL, &DX) || mxcts__probe_new_vector(p, c.len, dy, &DY);
  uint32_t req = train ? 1 : 0;
  ExecutorHandle exe = NULL;
  /* aggregate_stats=1: aggregate statistics are being collected at bind,
   * which makes MXNet (and so the reference) turn training bulking off. */
  bool aggregate = mxcts__probe_param_long(p, "aggregate_stats", 0) != 0;
  if (!rc && aggregate) {
    const char *keys[] = {"aggregate_stats", "profile_all"}, *vals[] = {"true", "true"};
    if (p->api.MXSetProfilerConfig(2, keys, vals) || p->api.MXSetProfilerState(1))
      rc = mxcts__probe_fail(p, "MXSetProfilerConfig/MXSetProfilerState (aggregate_stats)");
  }
  NDArrayHandle grads[1] = {train ? DX : NULL}; /* MXNet reads the array even without gradients */
  if (!rc && p->api.MXExecutorBindEX(sym, p->dev_type, 0, 0, NULL, NULL, NULL, 1, &X, grads, &req, 0,
                                     NULL, NULL, &exe) != 0)
    rc = mxcts__probe_fail(p, "MXExecutorBindEX");
  if (!rc && aggregate && p->api.MXSetProfilerState(0)) rc = mxcts__probe_fail(p, "MXSetProfilerState");
  for (int i = 0; i < c.warmup && !rc; i++) rc = executor_iteration(p, exe, DY, DX, train);
  if (!rc && p->api.MXNDArrayWaitAll()) rc = mxcts__probe_fail(p, "MXNDArrayWaitAll"); /* warm-up done */
  if (!rc && p->profile_dir) { /* structure: one profiled pass of each kind */
    rc = mxcts__probe_profile_begin(p, "forward");
    if (!rc && p->api.MXExecutorForward(exe, train ? 1 : 0) != 0) rc = mxcts__probe_fail(p, "MXExecutorForward");
    if (!rc) rc = mxcts__probe_profile_end(p, "forward");
    if (!rc && train) rc = mxcts__probe_profile_begin(p, "backward");
    if (!rc && train && p->api.MXExecutorBackwardEx(exe, 1, &DY, 1) != 0) rc = mxcts__probe_fail(p, "MXExecutorBackwardEx");
    if (!rc && train) rc = mxcts__probe_profile_end(p, "backward");
  } else {
    for (int i = 0; i < c.iterations && !rc; i++) {
      mxcts__probe_pin_threads(p);
      double t0 = mxcts__probe_now_ms();
      rc = executor_iteration(p, exe, DY, DX, train);
      if (!train && !rc) rc = p->api.MXNDArrayWaitAll() ? mxcts__probe_fail(p, "MXNDArrayWaitAll") : 0;
      times[i] = mxcts__probe_now_ms() - t0;
    }
    if (!rc) mxcts__probe_set_timing(p, times, c.iterations);
  }
  uint32_t nout = 0;
  NDArrayHandle *outs = NULL;
  if (!rc && p->api.MXExecutorOutputs(exe, &nout, &outs) != 0) rc = mxcts__probe_fail(p, "MXExecutorOutputs");
  if (!rc && nout >= 1) {
    NDArrayHandle out0 = outs[0];
    for (uint32_t k = 1; k < nout; k++) p->api.MXNDArrayFree(outs[k]);
    rc = read_vector(p, out0, y, c.len);
    if (!rc && train) rc = read_vector(p, DX, g, c.len);
    if (!rc) report(p, x, y, dy, train ? g : NULL, c.len, c.num_ops);
    p->api.MXNDArrayFree(out0);
  }
  if (exe) p->api.MXExecutorFree(exe);
  NDArrayHandle arrays[3] = {X, DX, DY};
  for (int i = 0; i < 3; i++)
    if (arrays[i]) p->api.MXNDArrayFree(arrays[i]);
  p->api.MXSymbolFree(sym);
  free(x), free(y), free(dy), free(g), free(times);
  return rc;
}

int mxcts__probe_symbolic_flip_chain(struct probe *p) { return run_executor(p, true); }
int mxcts__probe_inference_flip_chain(struct probe *p) { return run_executor(p, false); }

/* ---------------------------------------------------------- cached op */

/* One forward and backward under autograd.  *held is the last iteration's
 * output: it is released only after this call's forward returned, as the
 * seed's Python loop (`y = net(x)`) does, so that an implementation that
 * must renew an output still held by the caller pays for it here too. */
static int cachedop_iteration(struct probe *p, CachedOpHandle cop, NDArrayHandle x, NDArrayHandle dy,
                              NDArrayHandle gx, NDArrayHandle *held, const char *profile_pass) {
  int prev;
  NDArrayHandle *outs = NULL;
  int nout = 0;
  const int *stypes;
  PROBE_CALL(p, MXAutogradSetIsRecording, 1, &prev);
  PROBE_CALL(p, MXAutogradSetIsTraining, 1, &prev);
  if (profile_pass && mxcts__probe_profile_begin(p, "forward")) return -1;
  PROBE_CALL(p, MXInvokeCachedOpEx, cop, 1, &x, &nout, &outs, &stypes);
  NDArrayHandle y = outs[0];
  if (*held) PROBE_CALL(p, MXNDArrayFree, *held);
  *held = y;
  if (profile_pass && mxcts__probe_profile_end(p, "forward")) return -1;
  if (profile_pass && mxcts__probe_profile_begin(p, "backward")) return -1;
  PROBE_CALL(p, MXAutogradBackwardEx, 1, &y, &dy, 0, NULL, 0, 0, 1, NULL, NULL);
  PROBE_CALL(p, MXAutogradSetIsRecording, 0, &prev);
  PROBE_CALL(p, MXNDArrayWaitToRead, gx);
  if (profile_pass && mxcts__probe_profile_end(p, "backward")) return -1;
  return 0;
}

/* static_alloc and static_shape, as seed 000's Gluon test hybridizes, plus
 * forward_bulk_size / backward_bulk_size when given as params (Gluon's
 * hybridize passes them the same way). */
static int create_cached_op(struct probe *p, SymbolHandle sym, CachedOpHandle *cop) {
  const char *keys[4] = {"static_alloc", "static_shape"}, *vals[4] = {"true", "true"};
  const char *flags[] = {"forward_bulk_size", "backward_bulk_size"};
  int n = 2;
  for (int i = 0; i < 2; i++) {
    const char *v = mxcts__probe_param_str(p, flags[i], NULL);
    if (v) keys[n] = flags[i], vals[n++] = v;
  }
  PROBE_CALL(p, MXCreateCachedOpEx, sym, n, keys, vals, cop);
  return 0;
}

int mxcts__probe_cachedop_flip_chain(struct probe *p) {
  struct chain c = chain_params(p);
  SymbolHandle sym;
  if (build_chain(p, c.num_ops, &sym)) return -1;
  CachedOpHandle cop;
  if (create_cached_op(p, sym, &cop)) return -1;
  float *x = calloc((size_t)c.len, sizeof *x), *dy = calloc((size_t)c.len, sizeof *dy);
  float *y = calloc((size_t)c.len, sizeof *y), *g = calloc((size_t)c.len, sizeof *g);
  double *times = calloc((size_t)c.iterations + 1, sizeof *times);
  fill(p, x, c.len);
  for (int i = 0; i < c.len; i++) dy[i] = 1.0f + (float)i / 8;
  NDArrayHandle X = NULL, GX = NULL, DY = NULL, held = NULL;
  int rc = mxcts__probe_new_vector(p, c.len, x, &X) || mxcts__probe_new_vector(p, c.len, NULL, &GX) || mxcts__probe_new_vector(p, c.len, dy, &DY);
  uint32_t req = 1;
  if (!rc && p->api.MXAutogradMarkVariables(1, &X, &req, &GX) != 0) rc = mxcts__probe_fail(p, "MXAutogradMarkVariables");
  for (int i = 0; i < c.warmup && !rc; i++) rc = cachedop_iteration(p, cop, X, DY, GX, &held, NULL);
  if (!rc && p->profile_dir) {
    rc = cachedop_iteration(p, cop, X, DY, GX, &held, "profile");
  } else {
    for (int i = 0; i < c.iterations && !rc; i++) {
      mxcts__probe_pin_threads(p);
      double t0 = mxcts__probe_now_ms();
      rc = cachedop_iteration(p, cop, X, DY, GX, &held, NULL);
      times[i] = mxcts__probe_now_ms() - t0;
    }
    if (!rc) mxcts__probe_set_timing(p, times, c.iterations);
  }
  /* one more forward for the output values (not timed) */
  int nout = 0;
  NDArrayHandle *outs = NULL;
  const int *stypes;
  if (!rc && p->api.MXInvokeCachedOpEx(cop, 1, &X, &nout, &outs, &stypes) != 0) rc = mxcts__probe_fail(p, "MXInvokeCachedOpEx");
  if (!rc) {
    NDArrayHandle out0 = outs[0];
    rc = read_vector(p, out0, y, c.len);
    if (!rc) rc = read_vector(p, GX, g, c.len);
    if (!rc) report(p, x, y, dy, g, c.len, c.num_ops);
    p->api.MXNDArrayFree(out0);
  }
  if (held) p->api.MXNDArrayFree(held);
  p->api.MXFreeCachedOp(cop);
  p->api.MXSymbolFree(sym);
  NDArrayHandle arrays[3] = {X, GX, DY};
  for (int i = 0; i < 3; i++)
    if (arrays[i]) p->api.MXNDArrayFree(arrays[i]);
  free(x), free(y), free(dy), free(g), free(times);
  return rc;
}

/* -------------------------------------------------------- imperative */

/* n chained flips; the intermediate arrays are kept until the end, because
 * freeing an array pushes a delete-var op, which (in MXNet too) flushes the
 * pending engine bulk and would hide what bulking does.  *ms (when not NULL)
 * is the time from the first push until the last result is readable: the
 * frees afterwards cost the same bulked or not, and timing them would only
 * dilute the difference. */
static int imperative_run(struct probe *p, OpHandle op, NDArrayHandle x, int n, NDArrayHandle *last,
                          double *ms) {
  const char *keys[] = {"axis"}, *vals[] = {"0"};
  NDArrayHandle *kept = calloc((size_t)n + 1, sizeof *kept);
  if (!kept) return mxcts__probe_fail(p, "calloc");
  NDArrayHandle cur = x;
  int rc = 0, made = 0;
  double t0 = mxcts__probe_now_ms();
  for (int i = 0; i < n && !rc; i++) {
    NDArrayHandle *outs = NULL;
    int nout = 0;
    const int *stypes;
    if (p->api.MXImperativeInvokeEx(op, 1, &cur, &nout, &outs, 1, keys, vals, &stypes) != 0) {
      rc = mxcts__probe_fail(p, "MXImperativeInvokeEx");
      break;
    }
    cur = kept[made++] = outs[0];
  }
  if (!rc && p->api.MXNDArrayWaitToRead(cur) != 0) rc = mxcts__probe_fail(p, "MXNDArrayWaitToRead");
  if (ms) *ms = mxcts__probe_now_ms() - t0;
  for (int i = 0; i < made - 1; i++) p->api.MXNDArrayFree(kept[i]);
  *last = made ? kept[made - 1] : NULL;
  if (rc && *last) {
    p->api.MXNDArrayFree(*last);
    *last = NULL;
  }
  free(kept);
  return rc;
}

int mxcts__probe_imperative_flips(struct probe *p) {
  struct chain c = chain_params(p);
  int bulk = (int)mxcts__probe_param_long(p, "bulk", 0), prev;
  OpHandle op;
  PROBE_CALL(p, NNGetOpHandle, "flip", &op);
  float *x = calloc((size_t)c.len, sizeof *x), *y = calloc((size_t)c.len, sizeof *y);
  double *times = calloc((size_t)c.iterations + 1, sizeof *times);
  fill(p, x, c.len);
  NDArrayHandle X, last = NULL;
  int rc = mxcts__probe_new_vector(p, c.len, x, &X);
  if (!rc && p->api.MXEngineSetBulkSize(bulk, &prev) != 0) rc = mxcts__probe_fail(p, "MXEngineSetBulkSize");
  for (int i = 0; i < c.warmup && !rc; i++) {
    rc = imperative_run(p, op, X, c.num_ops, &last, NULL);
    if (!rc) p->api.MXNDArrayFree(last);
  }
  if (!rc && p->profile_dir) {
    rc = mxcts__probe_profile_begin(p, "forward");
    if (!rc) rc = imperative_run(p, op, X, c.num_ops, &last, NULL);
    if (!rc) rc = mxcts__probe_profile_end(p, "forward");
    if (!rc) p->api.MXNDArrayFree(last);
  } else {
    for (int i = 0; i < c.iterations && !rc; i++) {
      mxcts__probe_pin_threads(p);
      rc = imperative_run(p, op, X, c.num_ops, &last, &times[i]);
      if (!rc) p->api.MXNDArrayFree(last);
    }
    if (!rc) mxcts__probe_set_timing(p, times, c.iterations);
  }
  if (!rc) rc = imperative_run(p, op, X, c.num_ops, &last, NULL);
  if (!rc) rc = read_vector(p, last, y, c.len);
  if (!rc) {
    report(p, x, y, NULL, NULL, c.len, c.num_ops);
    p->api.MXNDArrayFree(last);
  }
  p->api.MXNDArrayFree(X);
  free(x), free(y), free(times);
  return rc;
}

/* ---------------------------------------------------- profiler autostart */

/* A short symbolic run with no profiler call: with MXNET_PROFILER_AUTOSTART=1
 * the implementation must leave profile.json, with these ops, in the
 * working directory at exit (the runner checks the file).  Symbolic ops,
 * because MXNet's default autostart mode records symbolic ops only. */
int mxcts__probe_profiler_autostart(struct probe *p) {
  SymbolHandle sym;
  if (build_chain(p, 10, &sym)) return -1;
  float x[10];
  fill(p, x, 10);
  NDArrayHandle X;
  if (mxcts__probe_new_vector(p, 10, x, &X)) return -1;
  uint32_t req = 0;
  ExecutorHandle exe;
  NDArrayHandle no_grad[1] = {NULL};
  PROBE_CALL(p, MXExecutorBindEX, sym, p->dev_type, 0, 0, NULL, NULL, NULL, 1, &X, no_grad, &req, 0, NULL, NULL, &exe);
  PROBE_CALL(p, MXExecutorForward, exe, 0);
  PROBE_CALL(p, MXNDArrayWaitAll);
  PROBE_CALL(p, MXExecutorFree, exe);
  PROBE_CALL(p, MXNDArrayFree, X);
  PROBE_CALL(p, MXSymbolFree, sym);
  return 0;
}
