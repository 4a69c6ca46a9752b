/*
 * The shape_inference workload: symbolic shape and type inference
 * (MXSymbolInferShapeEx, MXSymbolInferType) judged against the float64
 * oracle's shapes (docs/probe-protocol.md, "The shape_inference workload").
 *
 * Every case of the oracle's table and of its parameter spaces (the quick
 * selection) becomes a one-node symbol: the op (MXSymbolCreateAtomicSymbol
 * with the case's parameters) composed on variables in0, in1, ... and aux0,
 * aux1, ... (its inputs, then its aux states).  `part` picks what is given
 * and what must come back:
 *
 * - complete: every input and aux shape given; every argument, aux and
 *   output shape must be the oracle's and the inference complete.  Then
 *   MXSymbolInferType with in0 float32 and float64: every argument and aux
 *   state takes that dtype, the outputs the op's (its inputs', or Cast's,
 *   _zeros's ... parameter).
 * - data: only in0's shape.  Ops whose other inputs follow from the data
 *   (weights, biases, gamma, labels, an elementwise op's other operand) must
 *   infer everything; the others (broadcast ops, dot, Concat) may leave
 *   shapes unknown, but a shape they report must not contradict the oracle.
 * - binary: elementwise and broadcast binary ops given both shapes (in a
 *   process without ops of more inputs), only in1's shape, and
 *   as the lhs of elemwise_add(op, c) with only c's shape (the op's output
 *   known from its consumer).  elemwise_* infer every shape both ways;
 *   broadcast_* cannot (MXNet's BinaryBroadcastShape needs both inputs), so
 *   they may leave shapes unknown.
 * - graphs: ops whose input shape follows from their output (MXNet's
 *   ElemwiseShape ops) as the lhs of elemwise_add(op, c) given only c; and
 *   symbol JSON graphs: _zeros and _ones with shape () or a partly unknown
 *   shape fed to elemwise_add of a known array (their shape comes from the
 *   consumer), and Reshape of an array with one unknown dimension whose
 *   output's consumer is known.
 *
 * One check per case (and dtype), named "<part>/<op>/<case>[/<dtype>]"; a
 * call the implementation fails is a failed check with its error, not an
 * error of the workload.  Shapes use MXNet's legacy convention, as the
 * Python frontend does outside numpy mode: ndim 0 is an unknown shape and a
 * 0 dimension an unknown size, so cases with 0-d or zero-size inputs are
 * left out.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle.h"
#include "probe/probe_internal.h"

enum { MAXV = MXCTS_ORACLE_MAX_INPUTS + MXCTS_ORACLE_MAX_AUX, MAXS = MAXV + MXCTS_ORACLE_MAX_OUTPUTS };

/* What an inference call returned, copied out of the library's buffers:
 * arguments and aux states by name, outputs by position. */
struct inferred {
  int nargs, naux, nout, complete;
  char arg_names[MAXV][16], aux_names[MXCTS_ORACLE_MAX_AUX + MXCTS_ORACLE_MAX_INPUTS][16];
  struct mxcts_oracle_shape args[MAXV], aux[MAXV], outs[MXCTS_ORACLE_MAX_OUTPUTS];
  int arg_types[MAXV], aux_types[MAXV], out_types[MXCTS_ORACLE_MAX_OUTPUTS];
};

/* One shape the judge compares: `must` means it has to be known and equal
 * to `want`; otherwise it may be unknown, or partly known in agreement. */
struct expect {
  char name[16];
  struct mxcts_oracle_shape want;
  bool must;
};

/* A failed call's message (the implementation's last error). */
static void last_error(struct probe *p, const char *call, char *buf, size_t n) {
  const char *e = p->api.MXGetLastError ? p->api.MXGetLastError() : NULL;
  snprintf(buf, n, "%s failed: %s", call, e ? e : "(no message)");
}

static bool names_op(const char *op, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (strcmp(op, list[i]) == 0) return true;
  return false;
}

/* Ops that cannot infer their other inputs (or output) from input 0 alone:
 * MXNet 1.9.1's BinaryBroadcastShape and DotShape return until both inputs
 * are known, ConcatShape learns nothing of an input it has no shape of. */
static const char *const not_from_data[] = {"broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
                                            "dot", "Concat", NULL};
static const char *const elemwise_binary[] = {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", NULL};
static const char *const broadcast_binary[] = {"broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
                                               NULL};
/* Ops whose input shape MXNet 1.9.1 infers from their output shape: those
 * whose FInferShape is ElemwiseShape (or unifies input and output);
 * softmax's SoftmaxOpShape reads only its input. */
static const char *const same_shape_both_ways[] = {
    "_copy", "zeros_like", "ones_like", "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar",
    "_div_scalar", "_rdiv_scalar", "negative", "exp", "log", "sqrt", "square", "relu", "sigmoid", "tanh",
    "Activation", "clip", NULL};

/* A legacy shape (no 0-d, no zero-size dimension) can be given. */
static bool givable(const struct mxcts_oracle_shape *s) {
  if (s->ndim <= 0) return false;
  for (int d = 0; d < s->ndim; d++)
    if (s->dim[d] <= 0) return false;
  return true;
}

static bool case_givable(const struct mxcts_oracle_call *call) {
  for (int i = 0; i < call->nin; i++)
    if (!givable(&call->in_shape[i])) return false;
  for (int i = 0; i < call->naux; i++)
    if (!givable(&call->aux_shape[i])) return false;
  for (int i = 0; i < call->nout; i++)
    if (!givable(&call->out_shape[i])) return false;
  return true;
}

/* ------------------------------------------------------------ symbols */

static int new_var(struct probe *p, const char *name, SymbolHandle *out) {
  PROBE_CALL(p, MXSymbolCreateVariable, name, out);
  return 0;
}

/* The case's op composed on in0.. and aux0.. (positionally, in the op's
 * input order: inputs, then aux states).  0, or -1 with *why set (the
 * implementation refused; a failed check, not a workload error). */
static int case_symbol(struct probe *p, const struct mxcts_oracle_case *c, const struct mxcts_oracle_call *call,
                       SymbolHandle *out, char *why, size_t n) {
  const char *keys[MXCTS_ORACLE_MAX_CASE_PARAMS], *vals[MXCTS_ORACLE_MAX_CASE_PARAMS];
  int np = mxcts_oracle_case_params(c, keys, vals);
  OpHandle op;
  SymbolHandle vars[MAXV];
  int nv = 0;
  if (p->api.NNGetOpHandle(c->op, &op) || p->api.MXSymbolCreateAtomicSymbol(op, (uint32_t)np, keys, vals, out)) {
    last_error(p, "MXSymbolCreateAtomicSymbol", why, n);
    return -1;
  }
  for (int i = 0; i < call->nin + call->naux; i++) {
    char name[16];
    snprintf(name, sizeof name, i < call->nin ? "in%d" : "aux%d", i < call->nin ? i : i - call->nin);
    if (new_var(p, name, &vars[nv])) break;
    nv++;
  }
  int rc = nv == call->nin + call->naux ? p->api.MXSymbolCompose(*out, c->op, (uint32_t)nv, NULL, vars) : -1;
  if (rc) last_error(p, "MXSymbolCompose", why, n);
  for (int i = 0; i < nv; i++) p->api.MXSymbolFree(vars[i]);
  if (rc) p->api.MXSymbolFree(*out);
  return rc ? -1 : 0;
}

/* elemwise_add(inner, c): inner's output known only through its consumer. */
static int consumer_symbol(struct probe *p, SymbolHandle inner, SymbolHandle *out, char *why, size_t n) {
  OpHandle op;
  SymbolHandle c;
  if (new_var(p, "c", &c)) return -1;
  int rc = p->api.NNGetOpHandle("elemwise_add", &op) || p->api.MXSymbolCreateAtomicSymbol(op, 0, NULL, NULL, out);
  if (!rc) {
    SymbolHandle args[2] = {inner, c};
    rc = p->api.MXSymbolCompose(*out, "consumer", 2, NULL, args);
    if (rc) p->api.MXSymbolFree(*out);
  }
  if (rc) last_error(p, "composing elemwise_add(op, c)", why, n);
  p->api.MXSymbolFree(c);
  return rc ? -1 : 0;
}

/* ------------------------------------------------------------ inference */

static void copy_shapes(uint32_t n, const int *ndim, const int *const *data, struct mxcts_oracle_shape *to) {
  for (uint32_t i = 0; i < n && i < MAXV; i++) {
    to[i].ndim = ndim[i] > 0 && ndim[i] <= MXCTS_ORACLE_MAX_NDIM ? ndim[i] : 0;
    for (int d = 0; d < to[i].ndim; d++) to[i].dim[d] = data[i][d];
  }
}

static int copy_names(struct probe *p, SymbolHandle s, bool aux, int *n, char (*names)[16]) {
  uint32_t k;
  const char **list;
  int rc = aux ? p->api.MXSymbolListAuxiliaryStates(s, &k, &list) : p->api.MXSymbolListArguments(s, &k, &list);
  if (rc) return -1;
  *n = (int)(k < MAXV ? k : MAXV);
  for (int i = 0; i < *n; i++) snprintf(names[i], 16, "%s", list[i]);
  return 0;
}

/* MXSymbolInferShapeEx with the named shapes; 0, or -1 with *why set. */
static int infer_shapes(struct probe *p, SymbolHandle s, int nknown, const char *const *keys,
                        const struct mxcts_oracle_shape *known, struct inferred *r, char *why, size_t n) {
  uint32_t ptr[MAXV + 1] = {0};
  int data[MAXV * MXCTS_ORACLE_MAX_NDIM + 1];
  for (int i = 0; i < nknown; i++) {
    ptr[i + 1] = ptr[i] + (uint32_t)known[i].ndim;
    for (int d = 0; d < known[i].ndim; d++) data[ptr[i] + (uint32_t)d] = (int)known[i].dim[d];
  }
  uint32_t na, no, nx;
  const int *nda, *ndo, *ndx, **da, **dout, **dx;
  memset(r, 0, sizeof *r);
  if (p->api.MXSymbolInferShapeEx(s, (uint32_t)nknown, (const char **)keys, ptr, data, &na, &nda, &da, &no, &ndo,
                                  &dout, &nx, &ndx, &dx, &r->complete)) {
    last_error(p, "MXSymbolInferShapeEx", why, n);
    return -1;
  }
  copy_shapes(na, nda, da, r->args);
  copy_shapes(no, ndo, dout, r->outs);
  copy_shapes(nx, ndx, dx, r->aux);
  r->nout = (int)(no < MXCTS_ORACLE_MAX_OUTPUTS ? no : MXCTS_ORACLE_MAX_OUTPUTS);
  if (copy_names(p, s, false, &r->nargs, r->arg_names) || copy_names(p, s, true, &r->naux, r->aux_names)) {
    last_error(p, "MXSymbolListArguments", why, n);
    return -1;
  }
  if ((int)na != r->nargs || (int)nx != r->naux) {
    snprintf(why, n, "MXSymbolInferShapeEx returned %u argument and %u aux shapes for %d arguments and %d aux states",
             na, nx, r->nargs, r->naux);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ judging */

static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t n, const char *fmt, ...) {
  size_t at = strlen(buf);
  if (at >= n) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + at, n - at, fmt, ap);
  va_end(ap);
}

/* A reported shape agrees with `want` where it is known: same rank, and
 * every known (nonzero) dimension equal. */
static bool agrees(const struct mxcts_oracle_shape *got, const struct mxcts_oracle_shape *want) {
  if (got->ndim == 0) return true;
  if (got->ndim != want->ndim) return false;
  for (int d = 0; d < got->ndim; d++)
    if (got->dim[d] != 0 && got->dim[d] != want->dim[d]) return false;
  return true;
}

static const struct mxcts_oracle_shape *find_shape(const struct inferred *r, const char *name) {
  for (int i = 0; i < r->nargs; i++)
    if (strcmp(r->arg_names[i], name) == 0) return &r->args[i];
  for (int i = 0; i < r->naux; i++)
    if (strcmp(r->aux_names[i], name) == 0) return &r->aux[i];
  if (strncmp(name, "out", 3) == 0 && atoi(name + 3) < r->nout) return &r->outs[atoi(name + 3)];
  return NULL;
}

/* Compare every expected shape; returns whether all hold, the differences
 * in `detail`. */
static bool judge_shapes(const struct inferred *r, const struct expect *e, int n, char *detail, size_t len) {
  bool ok = true;
  char g[96], w[96];
  detail[0] = '\0';
  for (int i = 0; i < n; i++) {
    const struct mxcts_oracle_shape *got = find_shape(r, e[i].name);
    if (!got) {
      append(detail, len, "%s: not among the symbol's arguments, aux states or outputs; ", e[i].name);
      ok = false;
      continue;
    }
    bool good = e[i].must ? mxcts_oracle_shape_equal(got, &e[i].want) : agrees(got, &e[i].want);
    if (!good) {
      append(detail, len, "%s: %s, expected %s%s; ", e[i].name, mxcts_oracle_shape_str(got, g, sizeof g),
             mxcts_oracle_shape_str(&e[i].want, w, sizeof w), e[i].must ? "" : " or unknown");
      ok = false;
    }
  }
  if (ok) snprintf(detail, len, "%d shapes as expected", n);
  return ok;
}

/* The case's shapes by variable name: in<i>, aux<j>, out<k>; `must` for
 * the ones in `must_mask` (bit i: slot i in that order). */
static int case_expect(const struct mxcts_oracle_call *call, unsigned long must_mask, struct expect *e) {
  int n = 0;
  for (int i = 0; i < call->nin + call->naux + call->nout; i++, n++) {
    const bool in = i < call->nin, aux = !in && i < call->nin + call->naux;
    const int k = in ? i : aux ? i - call->nin : i - call->nin - call->naux;
    snprintf(e[n].name, sizeof e[n].name, in ? "in%d" : aux ? "aux%d" : "out%d", k);
    e[n].want = in ? call->in_shape[k] : aux ? call->aux_shape[k] : call->out_shape[k];
    e[n].must = (must_mask >> i & 1ul) != 0;
  }
  return n;
}

static void case_check(struct probe *p, const char *part, const struct mxcts_oracle_case *c, const char *suffix,
                       bool pass, const char *detail) {
  char name[256];
  snprintf(name, sizeof name, "%s/%s/%s%s%s", part, c->op, c->name, suffix ? "/" : "", suffix ? suffix : "");
  mxcts__probe_add_check(p, name, pass, "%s", detail);
}

/* Infer with the given known slots and judge every slot of the case. */
static void infer_and_judge(struct probe *p, const char *part, const struct mxcts_oracle_case *c,
                            const struct mxcts_oracle_call *call, SymbolHandle s, int nknown, const char *const *keys,
                            const struct mxcts_oracle_shape *known, unsigned long must_mask, bool want_complete) {
  struct inferred r;
  struct expect e[MAXS];
  char detail[1024];
  if (infer_shapes(p, s, nknown, keys, known, &r, detail, sizeof detail)) {
    case_check(p, part, c, NULL, false, detail);
    return;
  }
  bool ok = judge_shapes(&r, e, case_expect(call, must_mask, e), detail, sizeof detail);
  if (want_complete && !r.complete) {
    append(detail, sizeof detail, "; complete is 0 where every shape is known");
    ok = false;
  }
  case_check(p, part, c, NULL, ok, detail);
}

/* ------------------------------------------------------------ types */

static int expected_out_dtype(const struct mxcts_oracle_call *call, int in_dtype) {
  return call->out_dtype == MXCTS_ORACLE_SAME_DTYPE ? in_dtype : call->out_dtype;
}

/* MXSymbolInferType with in0 of dtype dt: every argument and aux state
 * takes dt, the outputs the op's dtype. */
static void check_types(struct probe *p, const struct mxcts_oracle_case *c, const struct mxcts_oracle_call *call,
                        SymbolHandle s, int dt) {
  const char *key = "in0";
  uint32_t na, no, nx;
  const int *ta, *to, *tx;
  int complete;
  char detail[1024] = "";
  if (p->api.MXSymbolInferType(s, call->nin > 0 ? 1 : 0, &key, &dt, &na, &ta, &no, &to, &nx, &tx, &complete)) {
    last_error(p, "MXSymbolInferType", detail, sizeof detail);
    case_check(p, "types", c, mxcts_oracle_dtype_name(dt), false, detail);
    return;
  }
  bool ok = true;
  for (uint32_t i = 0; call->nin > 0 && i < na + nx; i++) {
    int got = i < na ? ta[i] : tx[i - na];
    if (got != dt) append(detail, sizeof detail, "%s %u: dtype %d, expected %d; ", i < na ? "argument" : "aux", i < na ? i : i - na, got, dt), ok = false;
  }
  for (uint32_t k = 0; k < no; k++) {
    int want = expected_out_dtype(call, dt);
    if (to[k] != want) append(detail, sizeof detail, "output %u: dtype %d, expected %d; ", k, to[k], want), ok = false;
  }
  if (!complete) append(detail, sizeof detail, "complete is 0"), ok = false;
  if (ok) snprintf(detail, sizeof detail, "%u argument, %u aux and %u output dtypes as expected", na, nx, no);
  case_check(p, "types", c, mxcts_oracle_dtype_name(dt), ok, detail);
}

/* ------------------------------------------------------------ parts */

static void fill_known(const struct mxcts_oracle_call *call, int which, const char **key,
                       struct mxcts_oracle_shape *shape, char (*name)[16]) {
  const bool in = which < call->nin;
  snprintf(*name, 16, in ? "in%d" : "aux%d", in ? which : which - call->nin);
  *key = *name;
  *shape = in ? call->in_shape[which] : call->aux_shape[which - call->nin];
}

static unsigned long all_slots(const struct mxcts_oracle_call *call) {
  return (1ul << (call->nin + call->naux + call->nout)) - 1ul;
}

static void part_complete(struct probe *p, const struct mxcts_oracle_case *c, const struct mxcts_oracle_call *call,
                          SymbolHandle s) {
  const char *keys[MAXV];
  struct mxcts_oracle_shape known[MAXV];
  char names[MAXV][16];
  for (int i = 0; i < call->nin + call->naux; i++) fill_known(call, i, &keys[i], &known[i], &names[i]);
  infer_and_judge(p, "complete", c, call, s, call->nin + call->naux, keys, known, all_slots(call), true);
  if (call->nin > 0 || call->out_dtype != MXCTS_ORACLE_SAME_DTYPE) {
    check_types(p, c, call, s, MXCTS_ORACLE_FLOAT32);
    if (call->nin > 0) check_types(p, c, call, s, MXCTS_ORACLE_FLOAT64);
  }
}

/* Whether the op takes `alt` for input or aux slot k in place of the
 * case's shape: inference with every other slot as the case has it
 * succeeds and gives the case's outputs (PReLU's gamma of (1,) or (C,),
 * SoftmaxOutput's label flat or not). */
static bool accepts_instead(struct probe *p, const struct mxcts_oracle_call *call, SymbolHandle s, int k,
                            const struct mxcts_oracle_shape *alt) {
  const char *keys[MAXV];
  struct mxcts_oracle_shape known[MAXV];
  char names[MAXV][16], why[512];
  for (int i = 0; i < call->nin + call->naux; i++) fill_known(call, i, &keys[i], &known[i], &names[i]);
  known[k] = *alt;
  struct inferred r;
  if (infer_shapes(p, s, call->nin + call->naux, keys, known, &r, why, sizeof why)) return false;
  for (int o = 0; o < call->nout; o++)
    if (!mxcts_oracle_shape_equal(&r.outs[o], &call->out_shape[o])) return false;
  return r.complete != 0;
}

/* Only in0 given: ops that can must infer every shape; an input shape
 * other than the case's passes where the op accepts it as well. */
static void part_data(struct probe *p, const struct mxcts_oracle_case *c, const struct mxcts_oracle_call *call,
                      SymbolHandle s) {
  if (call->nin == 0) return;
  const char *key;
  struct mxcts_oracle_shape known;
  char name[16], detail[1024];
  fill_known(call, 0, &key, &known, &name);
  const bool must = !names_op(c->op, not_from_data);
  struct inferred r;
  struct expect e[MAXS];
  if (infer_shapes(p, s, 1, &key, &known, &r, detail, sizeof detail)) {
    case_check(p, "data", c, NULL, false, detail);
    return;
  }
  const int n = case_expect(call, must ? all_slots(call) : 1ul, e);
  for (int k = 1; k < call->nin + call->naux; k++) {
    const struct mxcts_oracle_shape *got = find_shape(&r, e[k].name);
    if (got && givable(got) && !mxcts_oracle_shape_equal(got, &e[k].want) && accepts_instead(p, call, s, k, got))
      e[k].want = *got;
  }
  bool ok = judge_shapes(&r, e, n, detail, sizeof detail);
  if (must && !r.complete) {
    append(detail, sizeof detail, "; complete is 0 where every shape is known");
    ok = false;
  }
  case_check(p, "data", c, NULL, ok, detail);
}

/* Binary ops: both inputs (in a process that runs no op with more
 * inputs, so a shape function that reads past its two inputs reads no
 * leftover of one), in1 alone, then the output through its consumer alone. */
static void part_binary(struct probe *p, const struct mxcts_oracle_case *c, const struct mxcts_oracle_call *call,
                        SymbolHandle s) {
  const bool elemwise = names_op(c->op, elemwise_binary);
  if (!elemwise && !names_op(c->op, broadcast_binary)) return;
  const char *key, *keys[2];
  struct mxcts_oracle_shape known, both[2];
  char name[16], names[2][16], why[512];
  for (int i = 0; i < 2; i++) fill_known(call, i, &keys[i], &both[i], &names[i]);
  infer_and_judge(p, "binary-both", c, call, s, 2, keys, both, 7ul, true);
  fill_known(call, 1, &key, &known, &name);
  infer_and_judge(p, "binary-rhs", c, call, s, 1, &key, &known, elemwise ? 7ul : 2ul, elemwise);
  SymbolHandle g;
  if (consumer_symbol(p, s, &g, why, sizeof why)) {
    case_check(p, "binary-consumer", c, NULL, false, why);
    return;
  }
  const char *ckey = "c";
  infer_and_judge(p, "binary-consumer", c, call, g, 1, &ckey, &call->out_shape[0], elemwise ? 7ul : 4ul, elemwise);
  p->api.MXSymbolFree(g);
}

/* Same-shape ops: the input from the output's consumer. */
static void part_consumer(struct probe *p, const struct mxcts_oracle_case *c, const struct mxcts_oracle_call *call,
                          SymbolHandle s) {
  if (!names_op(c->op, same_shape_both_ways) || call->nin != 1 || call->naux != 0 || call->nout != 1) return;
  SymbolHandle g;
  char why[512];
  if (consumer_symbol(p, s, &g, why, sizeof why)) {
    case_check(p, "consumer", c, NULL, false, why);
    return;
  }
  const char *ckey = "c";
  infer_and_judge(p, "consumer", c, call, g, 1, &ckey, &call->out_shape[0], 3ul, true);
  p->api.MXSymbolFree(g);
}

typedef void part_fn(struct probe *, const struct mxcts_oracle_case *, const struct mxcts_oracle_call *,
                     SymbolHandle);

/* Whether a part judges the case at all (else its symbol is not built, so
 * an op a part does not judge cannot fail it). */
static bool part_takes(part_fn *part, const struct mxcts_oracle_case *c, const struct mxcts_oracle_call *call) {
  if (part == part_data) return call->nin > 0;
  if (part == part_binary) return names_op(c->op, elemwise_binary) || names_op(c->op, broadcast_binary);
  if (part == part_consumer) return names_op(c->op, same_shape_both_ways) && call->nin == 1 && call->naux == 0;
  return true;
}

static bool wanted_op(const char *list, const char *op) {
  if (!list || strcmp(list, "all") == 0) return true;
  size_t len = strlen(op);
  for (const char *s = list; *s;) {
    const char *comma = strchr(s, ',');
    size_t n = comma ? (size_t)(comma - s) : strlen(s);
    if (n == len && strncmp(s, op, n) == 0) return true;
    s += n + (comma ? 1 : 0);
  }
  return false;
}

struct run_counts {
  int judged, skipped;
};

/* One case through a part, when the run wants its op and the case's shapes
 * can be written in MXNet's legacy form. */
static void run_case(struct probe *p, const struct mxcts_oracle_case *c, part_fn *part, struct run_counts *n) {
  const char *exclude = mxcts__probe_param_str(p, "exclude_ops", "");
  if (c->random || !wanted_op(mxcts__probe_param_str(p, "ops", "all"), c->op) || (*exclude && wanted_op(exclude, c->op)))
    return;
  struct mxcts_oracle_call call;
  struct mxcts_oracle_error err;
  if (mxcts_oracle_prepare_case(&call, c, &err) || !case_givable(&call)) {
    n->skipped++;
    return;
  }
  if (!part_takes(part, c, &call)) return;
  SymbolHandle s;
  char why[512];
  n->judged++;
  if (case_symbol(p, c, &call, &s, why, sizeof why)) {
    case_check(p, "symbol", c, NULL, false, why);
    return;
  }
  part(p, c, &call, s);
  p->api.MXSymbolFree(s);
}

/* The oracle's table, then its parameter spaces at quick depth. */
static int run_oracle_cases(struct probe *p, part_fn *part, struct run_counts *n) {
  for (int i = 0; i < mxcts_oracle_num_cases(); i++) run_case(p, mxcts_oracle_case_at(i), part, n);
  int *points = malloc((size_t)mxcts_oracle_num_gen_points() * sizeof *points);
  int total = points ? mxcts_oracle_gen_select(false, points) : MXCTS_ORACLE_ENOMEM;
  struct mxcts_oracle_gen_case g;
  for (int k = 0; k < total; k++)
    if (mxcts_oracle_gen_case_at(points[k], &g) && g.kind == MXCTS_ORACLE_GEN_SPACE) run_case(p, &g.c, part, n);
  free(points);
  if (total < 0) mxcts__probe_add_check(p, "shape_inference/oracle", false, "no memory to select the generated cases");
  return total < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ graphs */

/* A symbol JSON graph: `known` shapes given by name, `expect` judged
 * (outputs as out0, out1, ... in head order). */
struct graph_case {
  const char *name, *json;
  int nknown;
  const char *keys[2];
  struct mxcts_oracle_shape known[2];
  int nexpect;
  struct expect expect[4];
};

#define GRAPH_JSON(NODES, ARGS, ROWS, HEADS)                                                     \
  "{\"nodes\": [" NODES "], \"arg_nodes\": [" ARGS "], \"node_row_ptr\": [" ROWS "], \"heads\": [" \
  HEADS "], \"attrs\": {\"mxnet_version\": [\"int\", 10901]}}"
#define VAR(NAME) "{\"op\": \"null\", \"name\": \"" NAME "\", \"inputs\": []}"
/* nodes 0: c, 1: OP(ATTRS) on INPUTS, 2: elemwise_add(node 1, c); heads 1 and 2 */
#define INTO_ADD(OP, ATTRS, INPUTS, ARGS)                                                              \
  GRAPH_JSON(VAR("c") ", {\"op\": \"" OP "\", \"name\": \"x\", \"attrs\": {" ATTRS "}, \"inputs\": [" \
             INPUTS "]}, {\"op\": \"elemwise_add\", \"name\": \"add\", \"inputs\": [[1, 0, 0], [0, 0, 0]]}", \
             ARGS, "0, 1, 2, 3", "[1, 0, 0], [2, 0, 0]")
/* nodes 0: c, 1: data, 2: Reshape(data), 3: elemwise_add(node 2, c); heads 3 */
#define RESHAPE_INTO_ADD(SHAPE)                                                                        \
  GRAPH_JSON(VAR("c") ", " VAR("data") ", {\"op\": \"Reshape\", \"name\": \"r\", \"attrs\": {\"shape\": \"" \
             SHAPE "\"}, \"inputs\": [[1, 0, 0]]}, {\"op\": \"elemwise_add\", \"name\": \"add\", "       \
             "\"inputs\": [[2, 0, 0], [0, 0, 0]]}", "0, 1", "0, 1, 2, 3, 4", "[3, 0, 0]")

#define SH2(A, B) {2, {A, B}}
#define MUST(NAME, A, B) {NAME, SH2(A, B), true}

static const struct graph_case graph_cases[] = {
    {"zeros_unknown_shape", INTO_ADD("_zeros", "\"shape\": \"()\"", "", "0"), 1, {"c"}, {SH2(2, 3)}, 3,
     {MUST("c", 2, 3), MUST("out0", 2, 3), MUST("out1", 2, 3)}},
    {"ones_unknown_shape", INTO_ADD("_ones", "\"shape\": \"()\"", "", "0"), 1, {"c"}, {SH2(4, 5)}, 3,
     {MUST("c", 4, 5), MUST("out0", 4, 5), MUST("out1", 4, 5)}},
    {"zeros_unknown_dim", INTO_ADD("_zeros", "\"shape\": \"(0, 3)\"", "", "0"), 1, {"c"}, {SH2(2, 3)}, 3,
     {MUST("c", 2, 3), MUST("out0", 2, 3), MUST("out1", 2, 3)}},
    {"ones_unknown_dim", INTO_ADD("_ones", "\"shape\": \"(5, 0)\"", "", "0"), 1, {"c"}, {SH2(5, 2)}, 3,
     {MUST("c", 5, 2), MUST("out0", 5, 2), MUST("out1", 5, 2)}},
    {"reshape_from_consumer", RESHAPE_INTO_ADD("(6, 2)"), 2, {"c", "data"}, {SH2(6, 2), SH2(0, 4)}, 3,
     {MUST("c", 6, 2), MUST("data", 3, 4), MUST("out0", 6, 2)}},
    {"reshape_minus1_from_consumer", RESHAPE_INTO_ADD("(-1, 2)"), 2, {"c", "data"}, {SH2(6, 2), SH2(4, 0)}, 3,
     {MUST("c", 6, 2), MUST("data", 4, 3), MUST("out0", 6, 2)}},
};

static void run_graph(struct probe *p, const struct graph_case *gc) {
  char name[128], detail[1024];
  snprintf(name, sizeof name, "graphs/%s", gc->name);
  SymbolHandle s;
  if (p->api.MXSymbolCreateFromJSON(gc->json, &s)) {
    last_error(p, "MXSymbolCreateFromJSON", detail, sizeof detail);
    mxcts__probe_add_check(p, name, false, "%s", detail);
    return;
  }
  struct inferred r;
  bool ok = infer_shapes(p, s, gc->nknown, gc->keys, gc->known, &r, detail, sizeof detail) == 0;
  if (ok) ok = judge_shapes(&r, gc->expect, gc->nexpect, detail, sizeof detail);
  if (ok && !r.complete) {
    append(detail, sizeof detail, "; complete is 0 where every shape is known");
    ok = false;
  }
  mxcts__probe_add_check(p, name, ok, "%s", detail);
  p->api.MXSymbolFree(s);
}

/* ------------------------------------------------------------ the workload */

int mxcts__probe_shape_inference(struct probe *p) {
  static const struct {
    const char *name;
    part_fn *fn;
  } parts[] = {{"complete", part_complete}, {"data", part_data}, {"binary", part_binary},
               {"graphs", part_consumer}};
  const char *part = mxcts__probe_param_str(p, "part", "complete");
  struct run_counts n = {0, 0};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    if (strcmp(part, parts[i].name) != 0) continue;
    if (run_oracle_cases(p, parts[i].fn, &n)) return 0;
    if (parts[i].fn == part_consumer)
      for (size_t k = 0; k < sizeof graph_cases / sizeof graph_cases[0]; k++) run_graph(p, &graph_cases[k]);
    mxcts__probe_add_metric(p, "cases_judged", n.judged);
    mxcts__probe_add_metric(p, "cases_skipped", n.skipped);
    mxcts__probe_add_check(p, "shape_inference/ran", n.judged > 0, "%d cases judged, %d skipped (0-d or zero-size "
                           "shapes, which MXNet's legacy shapes cannot give)", n.judged, n.skipped);
    return 0;
  }
  mxcts__probe_add_check(p, "shape_inference/part", false, "part=%s: expected complete, data, binary or graphs",
                         part);
  return 0;
}
