/*
 * The rejections workload: calls that MXNet 1.9.1 refuses, each of which
 * an implementation must refuse too, and stay usable after
 * (docs/probe-protocol.md).
 *
 * A check is one invalid call: it passes when the call returns -1 with a
 * non-empty MXGetLastError text and a valid call made right after it still
 * gives the right values (elemwise_add of two 2x2 arrays, read back).  A
 * call that is accepted fails the check; one that crashes the process is
 * the run's crash verdict.  MXNet refuses all of these at the call (dmlc's
 * parameter parser, shape and dtype inference, its JSON loader), on every
 * engine; after an accepted call the probe waits for everything
 * (MXNDArrayWaitAll) so that no late error leaks into the next check.
 *
 * Parameter `source` picks the calls:
 * - `table`: the hand table below, imperative calls grouped by family
 *   (check `<family>.<what>`), then cached-op flags, executor binds, a
 *   backward with a head gradient of another dtype and symbol JSON;
 * - `oracle`: every point of the float64 oracle's generated spaces that
 *   mxcts_oracle_prepare_case refuses with EINVAL (what MXNet rejects, not
 *   ENOTSUP: valid but not modelled), as MXImperativeInvokeEx with the
 *   point's parameters and float32 inputs of its shapes (check
 *   `oracle.<op>.<point>`); points of ops with aux states are left out,
 *   since a refused point does not say their shapes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle.h"
#include "probe/probe.h"
#include "probe/probe_internal.h"

enum { MAX_KV = 6, MAX_IN = 6, SANE = 4 };

/* One invalid imperative call: op, parameters as key/value strings
 * (NULL-terminated), inputs as "(2,3)" or "float64:(2,3)".  `late`: MXNet
 * 1.9.1 refuses it when the op runs (a check in its kernel), so on a
 * threaded engine the refusal may come from the wait after the call. */
struct bad_call {
  const char *family, *what, *op;
  const char *kv[2 * MAX_KV + 1];
  const char *in[MAX_IN + 1];
  bool late;
};

/* MXNet 1.9.1 refuses every one of these at the call, or where `late`
 * says so when the op runs. */
static const struct bad_call table[] = {
    /* parameters: unknown keys, bad enums, malformed numbers, tuples, bools */
    {"params", "unknown_key", "Pooling", {"kernel", "(2,)", "pool_type", "max", "kernal", "(2,)"}, {"(1,2,7)"}, false},
    {"params", "unknown_key_reduce", "sum", {"axis", "0", "keepdim", "1"}, {"(2,3)"}, false},
    {"params", "bad_enum", "Pooling", {"kernel", "(2,)", "pool_type", "median"}, {"(1,2,7)"}, false},
    {"params", "bad_enum_activation", "Activation", {"act_type", "relux"}, {"(2,3)"}, false},
    {"params", "bad_enum_softmax_dtype", "softmax", {"dtype", "int32"}, {"(2,3)"}, false},
    {"params", "malformed_number", "_plus_scalar", {"scalar", "1.5x"}, {"(2,3)"}, false},
    {"params", "malformed_int", "FullyConnected", {"num_hidden", "four"}, {"(2,3)", "(4,3)", "(4,)"}, false},
    {"params", "malformed_tuple", "Reshape", {"shape", "(3;2)"}, {"(2,3)"}, false},
    {"params", "malformed_bool", "FullyConnected", {"num_hidden", "4", "no_bias", "maybe"}, {"(2,3)", "(4,3)"}, false},
    {"params", "missing_required", "FullyConnected", {NULL}, {"(2,3)", "(4,3)", "(4,)"}, false},
    /* Pooling's ranges */
    {"pooling", "p_value_0", "Pooling", {"kernel", "(2,)", "pool_type", "lp", "p_value", "0"}, {"(1,2,7)"}, true},
    {"pooling", "p_value_4", "Pooling", {"kernel", "(2,)", "pool_type", "lp", "p_value", "4"}, {"(1,2,7)"}, true},
    {"pooling", "lp_without_p_value", "Pooling", {"kernel", "(2,)", "pool_type", "lp"}, {"(1,2,7)"}, false},
    {"pooling", "kernel_beyond_input", "Pooling", {"kernel", "(9,)", "pool_type", "max"}, {"(1,2,7)"}, false},
    {"pooling", "kernel_rank", "Pooling", {"kernel", "(2,2)", "pool_type", "max"}, {"(1,2,7)"}, false},
    /* axes beyond the rank */
    {"axis", "sum_axis_rank", "sum", {"axis", "2"}, {"(2,3)"}, false},
    {"axis", "sum_axis_below_minus_rank", "sum", {"axis", "-3"}, {"(2,3)"}, false},
    {"axis", "softmax_axis_rank", "softmax", {"axis", "2"}, {"(2,3)"}, true},
    {"axis", "concat_dim_rank", "Concat", {"num_args", "2", "dim", "2"}, {"(2,3)", "(2,3)"}, false},
    {"axis", "dropout_axes_rank", "Dropout", {"p", "0.5", "axes", "(5,)", "mode", "always"}, {"(2,3)"}, false},
    /* inputs that do not fit together */
    {"shapes", "elemwise_add", "elemwise_add", {NULL}, {"(2,3)", "(3,2)"}, false},
    {"shapes", "elemwise_mul", "elemwise_mul", {NULL}, {"(2,3)", "(2,4)"}, false},
    {"shapes", "broadcast_add", "broadcast_add", {NULL}, {"(2,3)", "(4,3)"}, false},
    {"shapes", "broadcast_mul_rank3", "broadcast_mul", {NULL}, {"(2,3,4)", "(2,5,4)"}, false},
    {"shapes", "dot", "dot", {NULL}, {"(2,3)", "(2,3)"}, false},
    {"shapes", "dot_transpose_b", "dot", {"transpose_b", "True"}, {"(2,3)", "(3,2)"}, false},
    {"shapes", "concat", "Concat", {"num_args", "2", "dim", "1"}, {"(2,3)", "(3,2)"}, false},
    {"shapes", "fully_connected_weight", "FullyConnected", {"num_hidden", "4"}, {"(2,3)", "(4,5)", "(4,)"}, false},
    {"shapes", "fully_connected_bias", "FullyConnected", {"num_hidden", "4"}, {"(2,3)", "(4,3)", "(5,)"}, false},
    {"shapes", "convolution_channels", "Convolution", {"kernel", "(3,)", "num_filter", "2"},
     {"(1,2,7)", "(2,3,3)", "(2,)"}, false},
    {"shapes", "convolution_kernel_beyond_input", "Convolution", {"kernel", "(9,)", "num_filter", "2"},
     {"(1,2,7)", "(2,2,9)", "(2,)"}, false},
    {"shapes", "zeros_unknown_shape", "_zeros", {"shape", "()"}, {NULL}, false},
    /* input counts */
    {"counts", "elemwise_add_one_input", "elemwise_add", {NULL}, {"(2,3)"}, false},
    {"counts", "relu_two_inputs", "relu", {NULL}, {"(2,3)", "(2,3)"}, false},
    {"counts", "fully_connected_no_weight", "FullyConnected", {"num_hidden", "4"}, {"(2,3)"}, false},
    {"counts", "concat_num_args", "Concat", {"num_args", "3", "dim", "0"}, {"(2,3)", "(2,3)"}, false},
    /* inputs of different dtypes */
    {"dtypes", "elemwise_add", "elemwise_add", {NULL}, {"(2,3)", "float64:(2,3)"}, false},
    {"dtypes", "broadcast_add", "broadcast_add", {NULL}, {"(2,3)", "float64:(1,3)"}, false},
    {"dtypes", "dot", "dot", {NULL}, {"(2,3)", "float64:(3,2)"}, false},
    {"dtypes", "concat", "Concat", {"num_args", "2", "dim", "0"}, {"(2,3)", "float64:(2,3)"}, false},
    {"dtypes", "fully_connected", "FullyConnected", {"num_hidden", "4"}, {"(2,3)", "float64:(4,3)", "(4,)"}, false},
};
#define NTABLE ((int)(sizeof table / sizeof table[0]))

/* What an invalid call gave: its status and the start of its message. */
struct refusal {
  int rc;
  char msg[160];
};

static void record(struct probe *p, int rc, struct refusal *r) {
  const char *m = rc && p->api.MXGetLastError ? p->api.MXGetLastError() : "";
  r->rc = rc;
  snprintf(r->msg, sizeof r->msg, "%s", m ? m : "");
  for (char *c = r->msg; *c; c++)
    if (*c == '\n') *c = ' '; /* MXNet's text carries a traceback: keep it on one line */
}

/* ------------------------------------------------------------ the sanity call */

/* The two 2x2 inputs of the valid call made after each invalid one. */
struct sane {
  NDArrayHandle a, b;
};

static int new_array(struct probe *p, const struct mxcts_oracle_shape *s, int dtype, NDArrayHandle *out) {
  uint32_t shape[MXCTS_ORACLE_MAX_NDIM];
  for (int d = 0; d < s->ndim; d++) shape[d] = (uint32_t)s->dim[d];
  PROBE_CALL(p, MXNDArrayCreateEx, shape, (uint32_t)s->ndim, p->dev_type, 0, 0, dtype, out);
  return 0;
}

static int sane_init(struct probe *p, struct sane *s) {
  const struct mxcts_oracle_shape sq = {2, {2, 2}};
  const float a[SANE] = {1, 2, 3, 4}, b[SANE] = {10, 20, 30, 40};
  if (new_array(p, &sq, 0, &s->a) || new_array(p, &sq, 0, &s->b)) return -1;
  PROBE_CALL(p, MXNDArraySyncCopyFromCPU, s->a, a, (size_t)SANE);
  PROBE_CALL(p, MXNDArraySyncCopyFromCPU, s->b, b, (size_t)SANE);
  return 0;
}

/* Whether elemwise_add(a, b) still works and reads 11 22 33 44; `why`
 * says what went wrong otherwise. */
static bool still_usable(struct probe *p, const struct sane *s, char *why, size_t n) {
  OpHandle op;
  NDArrayHandle in[2] = {s->a, s->b}, *outs = NULL;
  int nout = 0;
  const int *stypes;
  float y[SANE] = {0};
  *why = 0;
  if (p->api.NNGetOpHandle("elemwise_add", &op) ||
      p->api.MXImperativeInvokeEx(op, 2, in, &nout, &outs, 0, NULL, NULL, &stypes) || nout != 1) {
    snprintf(why, n, "; the valid elemwise_add after it failed: %.120s", p->api.MXGetLastError());
    return false;
  }
  int rc = p->api.MXNDArraySyncCopyToCPU(outs[0], y, (size_t)SANE);
  p->api.MXNDArrayFree(outs[0]);
  if (rc || y[0] != 11 || y[1] != 22 || y[2] != 33 || y[3] != 44) {
    snprintf(why, n, "; the valid elemwise_add after it returned %d reading %g %g %g %g (expected 11 22 33 44)",
             rc, (double)y[0], (double)y[1], (double)y[2], (double)y[3]);
    return false;
  }
  return true;
}

/* The check `name`: refused (-1 with a message) and usable after. */
/* The check `name`: refused (-1 with a message; from the wait after the
 * call too where `late_ok`) and usable after. */
static void judge(struct probe *p, const struct sane *s, const char *name, const char *call,
                  const struct refusal *r, bool late_ok) {
  char why[200], late[200] = "";
  bool refused = r->rc != 0 && r->msg[0];
  if (r->rc == 0) { /* an accepted call's late error goes before the next check */
    struct refusal w;
    record(p, p->api.MXNDArrayWaitAll(), &w);
    if (w.rc) snprintf(late, sizeof late, "; WaitAll after it returned %d: %.150s", w.rc, w.msg);
    refused = late_ok && w.rc != 0 && w.msg[0];
  }
  bool usable = still_usable(p, s, why, sizeof why);
  mxcts__probe_add_check(p, name, refused && usable, "%s returned %d (expected -1 with a message%s): %s%s%s", call,
                         r->rc, late_ok ? ", at the call or the wait after it" : "",
                         r->msg[0] ? r->msg : "(no message)", late, why);
}

/* ------------------------------------------------------------ imperative calls */

/* "float64:(2,3)" into its dtype code and shape. */
static int parse_input(const char *text, int *dtype, struct mxcts_oracle_shape *s) {
  const char *colon = strchr(text, ':');
  char name[16] = "float32";
  if (colon) snprintf(name, sizeof name, "%.*s", (int)(colon - text), text);
  *dtype = mxcts_oracle_dtype_code(name);
  return *dtype < 0 ? -1 : mxcts_oracle_parse_tuple(colon ? colon + 1 : text, &s->ndim, s->dim);
}

/* Invoke `op` on new arrays of the given shapes and dtypes; the call's
 * result goes to *r.  Returns -1 only when the probe's own calls fail. */
static int invoke(struct probe *p, const char *opname, int nkv, const char *const *keys, const char *const *vals,
                  int nin, const struct mxcts_oracle_shape *shapes, const int *dtypes, struct refusal *r) {
  OpHandle op;
  NDArrayHandle in[MXCTS_ORACLE_MAX_INPUTS], *outs = NULL;
  int made = 0, rc = 0, nout = 0;
  const int *stypes;
  PROBE_CALL(p, NNGetOpHandle, opname, &op);
  for (; made < nin && !rc; made++) rc = new_array(p, &shapes[made], dtypes[made], &in[made]);
  if (!rc) {
    record(p, p->api.MXImperativeInvokeEx(op, nin, in, &nout, &outs, nkv, (const char **)keys,
                                          (const char **)vals, &stypes), r);
    for (int i = 0; r->rc == 0 && i < nout; i++) p->api.MXNDArrayFree(outs[i]);
  }
  for (int i = 0; i < made - (rc ? 1 : 0); i++) p->api.MXNDArrayFree(in[i]);
  return rc;
}

static int run_table_call(struct probe *p, const struct sane *s, const struct bad_call *b) {
  const char *keys[MAX_KV], *vals[MAX_KV];
  struct mxcts_oracle_shape shapes[MAX_IN];
  int dtypes[MAX_IN], nkv = 0, nin = 0;
  for (; b->kv[2 * nkv]; nkv++) keys[nkv] = b->kv[2 * nkv], vals[nkv] = b->kv[2 * nkv + 1];
  for (; b->in[nin]; nin++)
    if (parse_input(b->in[nin], &dtypes[nin], &shapes[nin])) {
      mxcts__probe_add_check(p, b->what, false, "the probe cannot read input '%s'", b->in[nin]);
      return 0;
    }
  struct refusal r;
  if (invoke(p, b->op, nkv, keys, vals, nin, shapes, dtypes, &r)) return -1;
  char name[96], call[96];
  snprintf(name, sizeof name, "%s.%s", b->family, b->what);
  snprintf(call, sizeof call, "MXImperativeInvokeEx(%s)", b->op);
  judge(p, s, name, call, &r, b->late);
  return 0;
}

/* ------------------------------------------------------------ the oracle's refused points */

/* Whether the oracle's op takes aux states (its first table case says). */
static bool has_aux(const char *op) {
  int n;
  const struct mxcts_oracle_case *c = mxcts_oracle_cases_for(op, &n);
  struct mxcts_oracle_call call;
  return n > 0 && mxcts_oracle_prepare_case(&call, c, NULL) == 0 && call.naux > 0;
}

static int run_oracle_point(struct probe *p, const struct sane *s, const struct mxcts_oracle_gen_case *g) {
  const char *keys[MXCTS_ORACLE_MAX_CASE_PARAMS], *vals[MXCTS_ORACLE_MAX_CASE_PARAMS];
  const int nkv = mxcts_oracle_case_params(&g->c, keys, vals);
  int dtypes[MXCTS_ORACLE_MAX_INPUTS] = {0};
  int prev = 0;
  struct refusal r;
  PROBE_CALL(p, MXAutogradSetIsTraining, g->c.is_train ? 1 : 0, &prev);
  int rc = invoke(p, g->c.op, nkv, keys, vals, g->c.nin, g->c.in_shapes, dtypes, &r);
  PROBE_CALL(p, MXAutogradSetIsTraining, prev, &prev);
  if (rc) return -1;
  char name[192], call[96];
  snprintf(name, sizeof name, "oracle.%s.%s", g->c.op, g->c.name);
  snprintf(call, sizeof call, "MXImperativeInvokeEx(%s)", g->c.op);
  judge(p, s, name, call, &r, false);
  return 0;
}

static int run_oracle(struct probe *p, const struct sane *s) {
  struct mxcts_oracle_gen_case g;
  int refused = 0;
  for (int i = 0; i < mxcts_oracle_num_gen_points(); i++) {
    if (mxcts_oracle_gen_point_status(i, &g) != MXCTS_ORACLE_EINVAL || has_aux(g.c.op)) continue;
    if (run_oracle_point(p, s, &g)) return -1;
    refused++;
  }
  mxcts__probe_add_metric(p, "oracle_points", refused);
  return 0;
}

/* ------------------------------------------------------------ cached ops, executors, JSON */

/* relu(x) as a symbol. */
static int relu_symbol(struct probe *p, SymbolHandle *out) {
  OpHandle relu;
  SymbolHandle x;
  PROBE_CALL(p, NNGetOpHandle, "relu", &relu);
  PROBE_CALL(p, MXSymbolCreateVariable, "x", &x);
  PROBE_CALL(p, MXSymbolCreateAtomicSymbol, relu, 0, NULL, NULL, out);
  int rc = p->api.MXSymbolCompose(*out, "y", 1, NULL, &x) ? mxcts__probe_fail(p, "MXSymbolCompose") : 0;
  p->api.MXSymbolFree(x);
  return rc;
}

/* MXCreateCachedOpEx with one flag: names sorting before and after the
 * flags MXNet knows, and a static_alloc that is not a boolean. */
static int check_cached_op_flags(struct probe *p, const struct sane *s) {
  static const char *const flags[][3] = {
      {"cachedop.unknown_flag", "unknown_flag", "1"},
      {"cachedop.unknown_flag_sorting_first", "bulk_size", "1"},
      {"cachedop.static_alloc_not_bool", "static_alloc", "maybe"},
      {"cachedop.bulk_size_not_count", "forward_bulk_size", "many"},
  };
  SymbolHandle sym;
  if (relu_symbol(p, &sym)) return -1;
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
    CachedOpHandle cop = NULL;
    struct refusal r;
    record(p, p->api.MXCreateCachedOpEx(sym, 1, (const char **)&flags[i][1], (const char **)&flags[i][2], &cop), &r);
    if (r.rc == 0) p->api.MXFreeCachedOp(cop);
    char call[96];
    snprintf(call, sizeof call, "MXCreateCachedOpEx(%s=%s)", flags[i][1], flags[i][2]);
    judge(p, s, flags[i][0], call, &r, false);
  }
  p->api.MXSymbolFree(sym);
  return 0;
}

/* elemwise_add(a, b) as a symbol. */
static int add_symbol(struct probe *p, SymbolHandle *out) {
  OpHandle add;
  SymbolHandle v[2] = {NULL, NULL};
  PROBE_CALL(p, NNGetOpHandle, "elemwise_add", &add);
  PROBE_CALL(p, MXSymbolCreateVariable, "a", &v[0]);
  PROBE_CALL(p, MXSymbolCreateVariable, "b", &v[1]);
  PROBE_CALL(p, MXSymbolCreateAtomicSymbol, add, 0, NULL, NULL, out);
  int rc = p->api.MXSymbolCompose(*out, "y", 2, NULL, v) ? mxcts__probe_fail(p, "MXSymbolCompose") : 0;
  p->api.MXSymbolFree(v[0]);
  p->api.MXSymbolFree(v[1]);
  return rc;
}

/* A training step of a bound a + b: forward, backward with a head
 * gradient of ones (2,3), a wait; the first failure goes to *r. */
static int train_step(struct probe *p, ExecutorHandle exe, struct refusal *r) {
  const struct mxcts_oracle_shape s23 = {2, {2, 3}};
  const float ones[6] = {1, 1, 1, 1, 1, 1};
  NDArrayHandle head;
  if (new_array(p, &s23, 0, &head)) return -1;
  int rc = p->api.MXNDArraySyncCopyFromCPU(head, ones, 6) ? mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU") : 0;
  if (!rc) record(p, p->api.MXExecutorForward(exe, 1), r);
  if (!rc && !r->rc) record(p, p->api.MXExecutorBackwardEx(exe, 1, &head, 1), r);
  if (!rc && !r->rc) record(p, p->api.MXNDArrayWaitAll(), r);
  p->api.MXNDArrayFree(head);
  return rc;
}

/* Bind a + b to arguments and gradients (write) of the given shapes, the
 * gradients holding -7, and train one step: the first failure goes to *r.
 * *kept: whether b's gradient still holds -7 everywhere after a refusal. */
static int bind_add(struct probe *p, SymbolHandle sym, const struct mxcts_oracle_shape *shapes, struct refusal *r,
                    bool *kept) {
  NDArrayHandle arr[4];
  uint32_t req[2] = {1, 1};
  float g[16];
  const int64_t ng = mxcts_oracle_shape_size(&shapes[3]);
  int made = 0, rc = 0;
  for (int i = 0; i < 16; i++) g[i] = -7;
  for (; made < 4 && !rc; made++) rc = new_array(p, &shapes[made], 0, &arr[made]);
  if (!rc && p->api.MXNDArraySyncCopyFromCPU(arr[3], g, (size_t)ng)) rc = mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU");
  if (!rc) {
    ExecutorHandle exe = NULL;
    record(p, p->api.MXExecutorBindEX(sym, p->dev_type, 0, 0, NULL, NULL, NULL, 2, arr, arr + 2, req, 0, NULL, NULL,
                                      &exe), r);
    if (r->rc == 0) {
      rc = train_step(p, exe, r);
      p->api.MXExecutorFree(exe);
    }
  }
  *kept = false;
  if (!rc && r->rc && !p->api.MXNDArraySyncCopyToCPU(arr[3], g, (size_t)ng)) {
    *kept = true;
    for (int64_t i = 0; i < ng; i++) *kept = *kept && g[i] == -7;
  }
  for (int i = 0; i < made - (rc ? 1 : 0); i++) p->api.MXNDArrayFree(arr[i]);
  return rc;
}

/* Arguments that do not fit a + b are refused at the bind.  Gradient
 * arrays of another size than their argument's: MXNet 1.9.1 binds them
 * and refuses the backward (the copy into the gradient checks the sizes);
 * either is a refusal, as long as the gradient was not written. */
static int check_executor_binds(struct probe *p, const struct sane *s) {
  static const struct {
    const char *name, *what;
    struct mxcts_oracle_shape shapes[4]; /* a, b, grad a, grad b */
  } binds[] = {
      {"executor.argument_shape", "arguments (2,3) and (3,2)", {{2, {2, 3}}, {2, {3, 2}}, {2, {2, 3}}, {2, {3, 2}}}},
      {"executor.gradient_larger", "gradient (4,4) of a (2,3) argument",
       {{2, {2, 3}}, {2, {2, 3}}, {2, {2, 3}}, {2, {4, 4}}}},
      {"executor.gradient_smaller", "gradient (2,) of a (2,3) argument",
       {{2, {2, 3}}, {2, {2, 3}}, {2, {2, 3}}, {1, {2}}}},
  };
  SymbolHandle sym;
  if (add_symbol(p, &sym)) return -1;
  for (size_t i = 0; i < sizeof binds / sizeof binds[0]; i++) {
    struct refusal r = {0};
    bool kept;
    if (bind_add(p, sym, binds[i].shapes, &r, &kept)) {
      p->api.MXSymbolFree(sym);
      return -1;
    }
    char call[128];
    snprintf(call, sizeof call, "MXExecutorBindEX(a + b, %s), forward, backward%s", binds[i].what,
             r.rc && !kept ? " (the gradient was written)" : "");
    if (!kept) r.rc = 0; /* a refusal that wrote the gradient is no refusal */
    judge(p, s, binds[i].name, call, &r, false);
  }
  p->api.MXSymbolFree(sym);
  return 0;
}

/* ------------------------------------------------------------ autograd */

/* A second backward of y with a float32 head gradient of 2s: after a
 * backward refused at the call the recorded graph is still there (MXNet
 * throws before it clears the history), so x's gradient becomes
 * 2, 1, 2, 1 (gamma 0.5 on x's second column); after one the call
 * accepted the graph is gone, as after any backward without retain_graph,
 * and the second is refused. */
static int check_graph_after_refusal(struct probe *p, NDArrayHandle y, NDArrayHandle gx, bool refused_at_call) {
  const struct mxcts_oracle_shape sq = {2, {2, 2}};
  const float twos[SANE] = {2, 2, 2, 2}, want[SANE] = {2, 1, 2, 1};
  float got[SANE] = {0};
  NDArrayHandle head;
  if (new_array(p, &sq, 0, &head)) return -1;
  int rc = p->api.MXNDArraySyncCopyFromCPU(head, twos, SANE) ? mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU") : 0;
  struct refusal r = {0};
  if (!rc) record(p, p->api.MXAutogradBackwardEx(1, &y, &head, 0, NULL, 0, 0, 1, NULL, NULL), &r);
  if (!rc && r.rc == 0) record(p, p->api.MXNDArraySyncCopyToCPU(gx, got, SANE), &r);
  bool same = memcmp(got, want, sizeof got) == 0;
  if (!rc)
    mxcts__probe_add_check(p, "dtypes.head_gradient_graph", refused_at_call ? r.rc == 0 && same : r.rc != 0,
                           "after the backward was refused %s, a second one with a float32 head gradient of 2s %s "
                           "(expected %s): %s; x's gradient %g %g %g %g",
                           refused_at_call ? "at the call" : "by the wait after it",
                           r.rc ? "was refused" : "ran", refused_at_call ? "it runs: x's gradient 2 1 2 1" :
                           "it is refused: the graph went with the first backward",
                           r.msg[0] ? r.msg : "(no message)", (double)got[0], (double)got[1], (double)got[2],
                           (double)got[3]);
  p->api.MXNDArrayWaitAll();
  p->api.MXNDArrayFree(head);
  return rc;
}

/* LeakyReLU(x, gamma) with act_type prelu, recorded on a marked float32
 * x, then MXAutogradBackwardEx with a float64 head gradient: the backward
 * op's inputs differ in dtype.  MXNet 1.9.1 accepts the call and refuses
 * the dtypes when _backward_LeakyReLU runs, so the refusal may come from
 * the wait after it.  Then check_graph_after_refusal. */
static int check_head_grad_dtype(struct probe *p, const struct sane *s) {
  const struct mxcts_oracle_shape sq = {2, {2, 2}}, ch = {1, {2}};
  const float xv[SANE] = {1, -2, 3, -4}, gv[2] = {0.25f, 0.5f};
  const double hv[SANE] = {1, 1, 1, 1};
  const char *keys[] = {"act_type"}, *vals[] = {"prelu"};
  NDArrayHandle in[2] = {NULL, NULL}, gx = NULL, head = NULL, y = NULL, *outs = NULL;
  OpHandle op;
  uint32_t req = 1;
  int nout = 0, prev;
  int rc = new_array(p, &sq, 0, &in[0]) || new_array(p, &ch, 0, &in[1]) || new_array(p, &sq, 0, &gx) ||
           new_array(p, &sq, 1, &head);
  const int *stypes;
  struct refusal r = {0};
  uint32_t nops;
  const char **ops;
  /* as a frontend does first: releases up to 1.5 hook up their legacy
   * operators' (LeakyReLU's) parameters while listing them */
  if (p->api.MXListAllOpNames) (void)p->api.MXListAllOpNames(&nops, &ops);
  if (!rc && (p->api.MXNDArraySyncCopyFromCPU(in[0], xv, SANE) || p->api.MXNDArraySyncCopyFromCPU(in[1], gv, 2) ||
              p->api.MXNDArraySyncCopyFromCPU(head, hv, SANE)))
    rc = mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU");
  if (!rc && (p->api.NNGetOpHandle("LeakyReLU", &op) || p->api.MXAutogradMarkVariables(1, &in[0], &req, &gx) ||
              p->api.MXAutogradSetIsRecording(1, &prev)))
    rc = mxcts__probe_fail(p, "NNGetOpHandle/MXAutogradMarkVariables/MXAutogradSetIsRecording");
  if (!rc) {
    int st = p->api.MXImperativeInvokeEx(op, 2, in, &nout, &outs, 1, keys, vals, &stypes);
    p->api.MXAutogradSetIsRecording(0, &prev);
    if (st || nout != 1) rc = mxcts__probe_fail(p, "MXImperativeInvokeEx(LeakyReLU)");
    else y = outs[0]; /* outs is the library's buffer, which the next call reuses */
  }
  if (!rc) {
    record(p, p->api.MXAutogradBackwardEx(1, &y, &head, 0, NULL, 0, 0, 1, NULL, NULL), &r);
    judge(p, s, "dtypes.head_gradient",
          "MXAutogradBackwardEx(a float64 head gradient of LeakyReLU(prelu)'s float32 output)", &r, true);
    rc = check_graph_after_refusal(p, y, gx, r.rc != 0);
  }
  NDArrayHandle all[] = {in[0], in[1], gx, head, y};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) p->api.MXNDArrayFree(all[i]);
  return rc;
}

static int check_symbol_json(struct probe *p, const struct sane *s) {
  static const char *const json[][2] = {
      {"json.malformed", "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}"},
      {"json.not_a_graph", "[1, 2, 3]"},
      {"json.unknown_op",
       "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": \"no_such_op_mxcts\", "
       "\"name\": \"y\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2], "
       "\"heads\": [[1, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", 10901]}}"},
  };
  for (size_t i = 0; i < sizeof json / sizeof json[0]; i++) {
    SymbolHandle sym = NULL;
    struct refusal r;
    record(p, p->api.MXSymbolCreateFromJSON(json[i][1], &sym), &r);
    if (r.rc == 0) p->api.MXSymbolFree(sym);
    judge(p, s, json[i][0], "MXSymbolCreateFromJSON", &r, false);
  }
  return 0;
}

int mxcts__probe_rejections(struct probe *p) {
  const char *source = mxcts__probe_param_str(p, "source", "table");
  struct sane s;
  if (sane_init(p, &s)) return -1;
  int rc = 0;
  if (!strcmp(source, "oracle")) {
    rc = run_oracle(p, &s);
  } else if (strcmp(source, "table")) {
    fprintf(stderr, "mxcts-probe: rejections: source=%s is neither table nor oracle\n", source);
    rc = -1;
  } else {
    for (int i = 0; i < NTABLE && !rc; i++) rc = run_table_call(p, &s, &table[i]);
    if (!rc) rc = check_cached_op_flags(p, &s);
    if (!rc) rc = check_executor_binds(p, &s);
    if (!rc) rc = check_head_grad_dtype(p, &s);
    if (!rc) rc = check_symbol_json(p, &s);
  }
  p->api.MXNDArrayFree(s.a);
  p->api.MXNDArrayFree(s.b);
  return rc;
}
