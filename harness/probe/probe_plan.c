/*
 * The memory_plan workload: an executor's memory plan and a cached op's
 * cache keys, judged by what a wrong plan changes (docs/probe-protocol.md).
 * Every graph is symbol JSON (MXSymbolCreateFromJSON) bound with
 * MXExecutorBindEX; its inputs come from the probe seed, so the processes
 * of one round compute the same values whatever their plan settings.
 *
 * - values: three graphs run forward and backward `iterations` times, each
 *   iteration with new data; every output and gradient of every iteration
 *   is reported (values), for the suite to compare bit for bit with a run
 *   whose plan shares nothing.  "reuse": in-place candidates (activations,
 *   elementwise ops) whose input has a later reader, a long chain with a
 *   value read again twelve ops later, a diamond, and an output that an
 *   in-place op could overwrite.  "scratch": eight independent branches,
 *   each a convolution of a differently shifted input, concatenated: the
 *   convolutions use the kernels' scratch and can run at once on several
 *   engine workers.  "fanout": a value added to itself thirty times,
 *   times w, whose gradient graph grows by gradient sums alone.
 * - memory: MXExecutorPrint's "Total N MB allocated" (MXNet's
 *   storage_allocated_bytes >> 20) of two forward-only graphs, as metrics:
 *   chain_mb, six transposes of a 4 MB matrix (24 MB without sharing, 8 MB
 *   when dead values' blocks are reused), and halving_mb, x (1,1024,1024)
 *   concatenated with itself (8 MB), transposed (8 MB), summed over the
 *   first axis (4 MB): the sum fits in the concat's dead block only when
 *   the match range lets a value take a block twice its size (20 MB with
 *   exact matches only, 16 MB otherwise).
 * - cache keys: a cached op (x*w, relu, + x, summed per row) called under
 *   autograd on float32 (4,8), then float32 (6,8), then float64 (6,8),
 *   then float32 (6,8) again (each time one key changes), with
 *   static_alloc and static_shape off and on; each call's output and gradients must equal, byte for byte, those
 *   of a fresh cached op on the same inputs.  A call that fails is a
 *   failed check, with the library's message.
 * - head gradient copy: y = x * w (512x512) bound with gradients, six
 *   iterations (param head_grad_iterations); each writes the head gradient
 *   with asynchronous imperative ops just before MXExecutorBackwardEx and
 *   overwrites it right after; x's gradient must be that iteration's head
 *   gradient * w (check head_grad_copy_ordered).
 * - cached-op inputs: a cached op of y0 = w * x, y1 = w + x (512x512),
 *   static_alloc and static_shape off and on, called six times with x
 *   alternating between two arrays (so the op rebinds its input on every
 *   call), each written the same way just before the call and overwritten
 *   right after; every call's outputs must be w * x and w + x of that
 *   call's x (cachedop_inputs_ordered_static_off, _static_on), and, read
 *   again after the last call, every output the caller kept must still
 *   hold them (cachedop_outputs_kept_static_off, _static_on).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_internal.h"

enum { MAX_VARS = 16, MAX_HEADS = 4, MAX_DIMS = 4, DTYPE_F32 = 0, DTYPE_F64 = 1 };

/* ------------------------------------------------------------- graphs */

struct graph_var {
  const char *name;
  int ndim;
  uint32_t shape[MAX_DIMS];
};

/* A symbol being written as MXNet's JSON: variables and single-output ops. */
struct graph {
  struct mxcts_buf nodes; /* the members of "nodes" */
  int n;
  struct graph_var vars[MAX_VARS];
  int var_node[MAX_VARS];
  int nvars;
  int heads[MAX_HEADS], nheads;
};

static int g_var(struct graph *g, const char *name, int ndim, const uint32_t *shape) {
  struct graph_var *v = &g->vars[g->nvars];
  v->name = name;
  v->ndim = ndim;
  memcpy(v->shape, shape, (size_t)ndim * sizeof *shape);
  g->var_node[g->nvars++] = g->n;
  mxcts_buf_printf(&g->nodes, "%s{\"op\": \"null\", \"name\": \"%s\", \"inputs\": []}", g->n ? ", " : "", name);
  return g->n++;
}

/* An op node on `nin` inputs (node indices, output 0 each); attrs is the
 * inside of a JSON object ("" for none). */
static int g_op(struct graph *g, const char *op, const char *attrs, int nin, ...) {
  va_list ap;
  va_start(ap, nin);
  mxcts_buf_printf(&g->nodes, ", {\"op\": \"%s\", \"name\": \"n%d_%s\", \"attrs\": {%s}, \"inputs\": [", op, g->n,
                   op, attrs);
  for (int i = 0; i < nin; i++) mxcts_buf_printf(&g->nodes, "%s[%d, 0, 0]", i ? ", " : "", va_arg(ap, int));
  va_end(ap);
  mxcts_buf_puts(&g->nodes, "]}");
  return g->n++;
}

static void g_head(struct graph *g, int node) { g->heads[g->nheads++] = node; }

/* The symbol's JSON text (the caller frees it); frees the node list. */
static char *g_json(struct graph *g) {
  struct mxcts_buf b = {0};
  mxcts_buf_printf(&b, "{\"nodes\": [%s], \"arg_nodes\": [", mxcts_buf_str(&g->nodes));
  for (int i = 0; i < g->nvars; i++) mxcts_buf_printf(&b, "%s%d", i ? ", " : "", g->var_node[i]);
  mxcts_buf_puts(&b, "], \"node_row_ptr\": [");
  for (int i = 0; i <= g->n; i++) mxcts_buf_printf(&b, "%s%d", i ? ", " : "", i);
  mxcts_buf_puts(&b, "], \"heads\": [");
  for (int h = 0; h < g->nheads; h++) mxcts_buf_printf(&b, "%s[%d, 0, 0]", h ? ", " : "", g->heads[h]);
  mxcts_buf_puts(&b, "], \"attrs\": {\"mxnet_version\": [\"int\", 10901]}}");
  mxcts_buf_free(&g->nodes);
  return mxcts_buf_take(&b);
}

/* ---------------------------------------------------------- arrays */

static int64_t shape_size(int ndim, const uint32_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  return n;
}

/* Uniform values in [-1, 1) from the probe seed and a stream number, so
 * every process of a round draws the same ones. */
static void draw(const struct probe *p, uint64_t stream, double *x, int64_t n) {
  uint64_t s = p->seed * 0x9e3779b97f4a7c15ull + stream * 7919 + 1;
  for (int64_t i = 0; i < n; i++) x[i] = mxcts_rng_uniform(&s) * 2 - 1;
}

/* Drawn values (zeros when stream is 0) written into `a`, an array of
 * `n` elements of `dtype` (float32 or float64). */
static int fill_array(struct probe *p, NDArrayHandle a, int64_t n, int dtype, uint64_t stream) {
  double *x = mxcts_xcalloc((size_t)n + 1, sizeof *x);
  float *f = mxcts_xcalloc((size_t)n + 1, sizeof *f);
  if (stream) draw(p, stream, x, n);
  for (int64_t i = 0; i < n; i++) f[i] = (float)x[i];
  int rc = 0;
  if (p->api.MXNDArraySyncCopyFromCPU(a, dtype == DTYPE_F64 ? (void *)x : (void *)f, (size_t)n))
    rc = mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU");
  free(x);
  free(f);
  return rc;
}

/* A new array of `dtype` on the probe's device, filled as by fill_array. */
static int new_array(struct probe *p, int ndim, const uint32_t *shape, int dtype, uint64_t stream,
                     NDArrayHandle *out) {
  PROBE_CALL(p, MXNDArrayCreateEx, shape, (uint32_t)ndim, p->dev_type, 0, 0, dtype, out);
  return fill_array(p, *out, shape_size(ndim, shape), dtype, stream);
}

/* An array's elements in a new host buffer of `esize`-byte elements. */
static int read_array(struct probe *p, NDArrayHandle a, size_t esize, void **buf, int64_t *n) {
  int ndim;
  const int *dims;
  if (mxcts__capi_get_shape(&p->api, a, &ndim, &dims)) return mxcts__probe_fail(p, "MXNDArrayGetShapeEx");
  *n = 1;
  for (int d = 0; d < ndim; d++) *n *= dims[d];
  *buf = mxcts_xmalloc((size_t)*n * esize + 1);
  if (p->api.MXNDArraySyncCopyToCPU(a, *buf, (size_t)*n)) {
    free(*buf);
    *buf = NULL;
    return mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU");
  }
  return 0;
}

static int report_array(struct probe *p, NDArrayHandle a, const char *name) {
  void *x;
  int64_t n;
  if (read_array(p, a, sizeof(float), &x, &n)) return -1;
  mxcts__probe_add_values(p, name, x, n);
  free(x);
  return 0;
}

/* ------------------------------------------------------- executors */

struct bound {
  SymbolHandle sym;
  ExecutorHandle exe;
  uint32_t nargs;
  NDArrayHandle args[MAX_VARS], grads[MAX_VARS];
  const char *arg_names[MAX_VARS]; /* the graph's own strings */
  int nheads;
  NDArrayHandle head_grads[MAX_HEADS];
};

static void unbind(struct probe *p, struct bound *b) {
  if (b->exe) p->api.MXExecutorFree(b->exe);
  if (b->sym) p->api.MXSymbolFree(b->sym);
  for (uint32_t i = 0; i < b->nargs; i++) {
    if (b->args[i]) p->api.MXNDArrayFree(b->args[i]);
    if (b->grads[i]) p->api.MXNDArrayFree(b->grads[i]);
  }
  for (int h = 0; h < b->nheads; h++)
    if (b->head_grads[h]) p->api.MXNDArrayFree(b->head_grads[h]);
}

/* The graph variable named `name`, or -1. */
static int find_var(const struct graph *g, const char *name) {
  for (int v = 0; v < g->nvars; v++)
    if (strcmp(g->vars[v].name, name) == 0) return v;
  return -1;
}

/* Arguments in the library's order, each drawn from its own stream (the
 * variable's index in the graph), and zeroed gradients when training. */
static int make_args(struct probe *p, const struct graph *g, bool train, struct bound *b) {
  const char **names;
  PROBE_CALL(p, MXSymbolListArguments, b->sym, &b->nargs, &names);
  if (b->nargs > MAX_VARS) return mxcts__probe_fail(p, "MXSymbolListArguments (too many arguments)");
  for (uint32_t i = 0; i < b->nargs; i++) {
    int v = find_var(g, names[i]);
    if (v < 0) return mxcts__probe_fail(p, "MXSymbolListArguments (an argument the graph lacks)");
    const struct graph_var *gv = &g->vars[v];
    b->arg_names[i] = gv->name;
    if (new_array(p, gv->ndim, gv->shape, DTYPE_F32, 100 + (uint64_t)v, &b->args[i])) return -1;
    if (train && new_array(p, gv->ndim, gv->shape, DTYPE_F32, 0, &b->grads[i])) return -1;
  }
  return 0;
}

/* Head gradients drawn in the outputs' shapes. */
static int make_head_grads(struct probe *p, struct bound *b) {
  uint32_t n;
  NDArrayHandle *outs;
  PROBE_CALL(p, MXExecutorOutputs, b->exe, &n, &outs);
  int rc = n > MAX_HEADS ? mxcts__probe_fail(p, "MXExecutorOutputs (too many outputs)") : 0;
  for (uint32_t h = 0; h < n; h++) {
    int ndim;
    const int *dims;
    uint32_t shape[MAX_DIMS];
    if (!rc && (mxcts__capi_get_shape(&p->api, outs[h], &ndim, &dims) || ndim > MAX_DIMS))
      rc = mxcts__probe_fail(p, "MXNDArrayGetShapeEx");
    for (int d = 0; !rc && d < ndim; d++) shape[d] = (uint32_t)dims[d];
    if (!rc && (rc = new_array(p, ndim, shape, DTYPE_F32, 200 + h, &b->head_grads[h])) == 0) b->nheads++;
    p->api.MXNDArrayFree(outs[h]);
  }
  return rc;
}

static int bind_graph(struct probe *p, struct graph *g, bool train, struct bound *b) {
  *b = (struct bound){0};
  char *json = g_json(g);
  int rc = p->api.MXSymbolCreateFromJSON(json, &b->sym) ? mxcts__probe_fail(p, "MXSymbolCreateFromJSON") : 0;
  free(json);
  if (!rc) rc = make_args(p, g, train, b);
  uint32_t reqs[MAX_VARS];
  for (uint32_t i = 0; i < b->nargs; i++) reqs[i] = train ? 1 : 0;
  /* MXNet reads the gradient list even without gradients: NULLs then */
  if (!rc && p->api.MXExecutorBindEX(b->sym, p->dev_type, 0, 0, NULL, NULL, NULL, b->nargs, b->args, b->grads,
                                     reqs, 0, NULL, NULL, &b->exe))
    rc = mxcts__probe_fail(p, "MXExecutorBindEX");
  if (!rc && train) rc = make_head_grads(p, b);
  return rc;
}

/* Every output and argument gradient of iteration `it` as values. */
static int report_iteration(struct probe *p, const char *graph, int it, struct bound *b) {
  uint32_t n;
  NDArrayHandle *outs;
  char name[96];
  PROBE_CALL(p, MXExecutorOutputs, b->exe, &n, &outs);
  int rc = 0;
  for (uint32_t h = 0; h < n; h++) {
    snprintf(name, sizeof name, "%s.it%d.out%u", graph, it, h);
    if (!rc) rc = report_array(p, outs[h], name);
    p->api.MXNDArrayFree(outs[h]);
  }
  for (uint32_t i = 0; i < b->nargs && !rc; i++) {
    snprintf(name, sizeof name, "%s.it%d.grad_%s", graph, it, b->arg_names[i]);
    rc = report_array(p, b->grads[i], name);
  }
  return rc;
}

/* Bind, then per iteration new data in the first variable's array,
 * forward, backward with the drawn head gradients, and report. */
static int run_values(struct probe *p, const char *name, struct graph *g) {
  struct bound b;
  int rc = bind_graph(p, g, true, &b);
  const struct graph_var *data = &g->vars[0];
  int x = -1;
  for (uint32_t i = 0; !rc && i < b.nargs; i++)
    if (b.arg_names[i] == data->name) x = (int)i;
  if (!rc && x < 0) rc = mxcts__probe_fail(p, "MXSymbolListArguments (the data argument is missing)");
  long iterations = mxcts__probe_param_long(p, "iterations", 3);
  for (long it = 0; it < iterations && !rc; it++) {
    rc = fill_array(p, b.args[x], shape_size(data->ndim, data->shape), DTYPE_F32, 1000 + (uint64_t)it);
    if (!rc && (p->api.MXExecutorForward(b.exe, 1) ||
                p->api.MXExecutorBackwardEx(b.exe, (uint32_t)b.nheads, b.head_grads, 1)))
      rc = mxcts__probe_fail(p, "MXExecutorForward/MXExecutorBackwardEx");
    if (!rc) rc = report_iteration(p, name, (int)it, &b);
  }
  unbind(p, &b);
  return rc;
}

/* ------------------------------------------------------ value graphs */

/* The chain's ops, in turn: unary, most with in-place hints. */
static int chain_op(struct graph *g, int k, int in) {
  switch (k % 6) {
    case 0: return g_op(g, "sigmoid", "", 1, in);
    case 1: return g_op(g, "_mul_scalar", "\"scalar\": \"1.5\"", 1, in);
    case 2: return g_op(g, "tanh", "", 1, in);
    case 3: return g_op(g, "_plus_scalar", "\"scalar\": \"0.25\"", 1, in);
    case 4: return g_op(g, "negative", "", 1, in);
    default: return g_op(g, "Activation", "\"act_type\": \"tanh\"", 1, in);
  }
}

/* x, w (32, 64): a = relu(x); b = sigmoid(a) and c = tanh(b) may run in
 * place, but a is read again by d = a + c, and c is an output; e = d * w;
 * then 18 chained ops of which the 15th adds the 3rd's value back; and the
 * diamond sigmoid(e) * tanh(e).  Outputs: the chain's end, the diamond, c. */
static void reuse_graph(struct graph *g) {
  const uint32_t shape[] = {32, 64};
  int x = g_var(g, "x", 2, shape), w = g_var(g, "w", 2, shape);
  int a = g_op(g, "Activation", "\"act_type\": \"relu\"", 1, x);
  int b = g_op(g, "sigmoid", "", 1, a);
  int c = g_op(g, "tanh", "", 1, b);
  int d = g_op(g, "elemwise_add", "", 2, a, c);
  int e = g_op(g, "elemwise_mul", "", 2, d, w);
  int t = e, third = -1;
  for (int k = 1; k <= 18; k++) {
    t = chain_op(g, k, t);
    if (k == 3) third = t;
    if (k == 15) t = g_op(g, "elemwise_add", "", 2, t, third);
  }
  int left = g_op(g, "sigmoid", "", 1, e), right = g_op(g, "tanh", "", 1, e);
  int diamond = g_op(g, "elemwise_mul", "", 2, left, right);
  g_head(g, t);
  g_head(g, diamond);
  g_head(g, c);
}

enum { FANOUT_STAGES = 30 };

/* x, w (4, 8): t = x, then t = t + t thirty times, the output t * w.
 * Each t is read twice, so the gradient pass sums two contributions
 * (add_n) per stage, and elemwise_add's gradient passes through without
 * a node of its own: the gradient graph grows by those sums alone, and its
 * node array is reallocated while output gradients are being summed. */
static void fanout_graph(struct graph *g) {
  const uint32_t shape[] = {4, 8};
  int t = g_var(g, "x", 2, shape), w = g_var(g, "w", 2, shape);
  for (int k = 0; k < FANOUT_STAGES; k++) t = g_op(g, "elemwise_add", "", 2, t, t);
  g_head(g, g_op(g, "elemwise_mul", "", 2, t, w));
}

enum { BRANCHES = 8 };

/* x (8, 16, 32, 32); branch i: conv_i(x + i/2) with 16 3x3 filters, pad 1,
 * no bias; the branches concatenated along the channels.  No branch
 * depends on another, so an engine with several workers runs their
 * convolutions (forward and backward) at once. */
static void scratch_graph(struct graph *g) {
  static const char *const wnames[BRANCHES] = {"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"};
  const uint32_t xshape[] = {8, 16, 32, 32}, wshape[] = {16, 16, 3, 3};
  int x = g_var(g, "x", 4, xshape), conv[BRANCHES];
  for (int i = 0; i < BRANCHES; i++) {
    char shift[48];
    snprintf(shift, sizeof shift, "\"scalar\": \"%g\"", 0.5 * i);
    int in = g_op(g, "_plus_scalar", shift, 1, x), w = g_var(g, wnames[i], 4, wshape);
    conv[i] = g_op(g, "Convolution",
                   "\"kernel\": \"(3, 3)\", \"pad\": \"(1, 1)\", \"num_filter\": \"16\", \"no_bias\": \"True\"", 2,
                   in, w);
  }
  g_head(g, g_op(g, "Concat", "\"dim\": \"1\", \"num_args\": \"8\"", BRANCHES, conv[0], conv[1], conv[2], conv[3],
                 conv[4], conv[5], conv[6], conv[7]));
}

/* ------------------------------------------------------------ memory */

/* N of the last "Total N MB allocated" in MXExecutorPrint's text; -1 when
 * there is none. */
static long total_mb(const char *text) {
  long mb = -1;
  for (const char *s = strstr(text, "Total "); s; s = strstr(s + 1, "Total ")) {
    char *end;
    long v = strtol(s + 6, &end, 10);
    if (end != s + 6 && strncmp(end, " MB allocated", 13) == 0) mb = v;
  }
  return mb;
}

/* Bind for inference and report the plan's MB as metric `metric`. */
static int report_plan_mb(struct probe *p, struct graph *g, const char *metric) {
  struct bound b;
  const char *text = NULL;
  int rc = bind_graph(p, g, false, &b);
  if (!rc && p->api.MXExecutorPrint(b.exe, &text)) rc = mxcts__probe_fail(p, "MXExecutorPrint");
  long mb = rc ? -1 : total_mb(text);
  if (!rc && mb < 0) {
    char call[160];
    snprintf(call, sizeof call, "MXExecutorPrint (no \"Total N MB allocated\" for %s)", metric);
    rc = mxcts__probe_fail(p, call);
  }
  if (!rc) mxcts__probe_add_metric(p, metric, (double)mb);
  unbind(p, &b);
  return rc;
}

static int report_memory(struct probe *p) {
  struct graph chain = {0}, halving = {0};
  const uint32_t mat[] = {1024, 1024}, cube[] = {1, 1024, 1024};
  int t = g_var(&chain, "x", 2, mat);
  for (int k = 0; k < 6; k++) t = g_op(&chain, "transpose", "", 1, t);
  g_head(&chain, t);
  int x = g_var(&halving, "x", 3, cube);
  int cat = g_op(&halving, "Concat", "\"dim\": \"0\", \"num_args\": \"2\"", 2, x, x);
  int tr = g_op(&halving, "transpose", "\"axes\": \"(0, 2, 1)\"", 1, cat);
  g_head(&halving, g_op(&halving, "sum", "\"axis\": \"0\"", 1, tr));
  int rc = report_plan_mb(p, &chain, "chain_mb");
  if (rc) {
    mxcts_buf_free(&halving.nodes);
    return rc;
  }
  return report_plan_mb(p, &halving, "halving_mb");
}

/* -------------------------------------------------------- cache keys */

enum { COLS = 8, NCALLS = 4 };

/* The calls' inputs: rows and dtype.  Call 1 is a new shape, calls 2 and
 * 3 a new dtype and back, on that shape. */
static const struct {
  uint32_t rows;
  int dtype;
} calls[NCALLS] = {{4, DTYPE_F32}, {6, DTYPE_F32}, {6, DTYPE_F64}, {6, DTYPE_F32}};

static const char *dtype_name(int dtype) { return dtype == DTYPE_F64 ? "float64" : "float32"; }

/* sum(relu(x * w) + x, axis=1) of x, w (rows, 8). */
static int keys_symbol(struct probe *p, SymbolHandle *out) {
  struct graph g = {0};
  const uint32_t shape[] = {4, COLS};
  int x = g_var(&g, "x", 2, shape), w = g_var(&g, "w", 2, shape);
  int r = g_op(&g, "Activation", "\"act_type\": \"relu\"", 1, g_op(&g, "elemwise_mul", "", 2, x, w));
  g_head(&g, g_op(&g, "sum", "\"axis\": \"1\"", 1, g_op(&g, "elemwise_add", "", 2, r, x)));
  char *json = g_json(&g);
  int rc = p->api.MXSymbolCreateFromJSON(json, out) ? mxcts__probe_fail(p, "MXSymbolCreateFromJSON") : 0;
  free(json);
  return rc;
}

/* What one call gave: the output and the gradients of x and w, as bytes. */
struct call_result {
  void *v[3];
  int64_t n[3];
  char failed[600]; /* the cached op's call failed: the call and message */
};

static void call_result_free(struct call_result *r) {
  for (int i = 0; i < 3; i++) free(r->v[i]);
  *r = (struct call_result){0};
}

static const char *const result_names[3] = {"output", "x's gradient", "w's gradient"};

/* The cached op on call k's inputs under autograd, then backward with a
 * drawn head gradient.  -1: an array call failed (probe error); 0: done,
 * with r->failed set when the cached op's own call or the backward failed. */
static int call_cop(struct probe *p, CachedOpHandle cop, bool x_first, int k, struct call_result *r) {
  const uint32_t shape[] = {calls[k].rows, COLS}, rows = calls[k].rows;
  const int dt = calls[k].dtype;
  NDArrayHandle x = NULL, w = NULL, gx = NULL, gw = NULL, head = NULL, *outs = NULL;
  int nout = 0, prev, rc = new_array(p, 2, shape, dt, 300 + 10 * (uint64_t)k, &x);
  if (!rc) rc = new_array(p, 2, shape, dt, 301 + 10 * (uint64_t)k, &w);
  if (!rc) rc = new_array(p, 2, shape, dt, 0, &gx) || new_array(p, 2, shape, dt, 0, &gw);
  if (!rc) rc = new_array(p, 1, &rows, dt, 302 + 10 * (uint64_t)k, &head);
  NDArrayHandle vars[2] = {x, w}, grads[2] = {gx, gw}, in[2] = {x_first ? x : w, x_first ? w : x};
  uint32_t reqs[2] = {1, 1};
  if (!rc && p->api.MXAutogradMarkVariables(2, vars, reqs, grads)) rc = mxcts__probe_fail(p, "MXAutogradMarkVariables");
  if (!rc && (p->api.MXAutogradSetIsRecording(1, &prev) || p->api.MXAutogradSetIsTraining(1, &prev)))
    rc = mxcts__probe_fail(p, "MXAutogradSetIsRecording");
  const int *stypes;
  bool invoked = !rc && p->api.MXInvokeCachedOpEx(cop, 2, in, &nout, &outs, &stypes) == 0;
  if (!rc && (p->api.MXAutogradSetIsRecording(0, &prev) || p->api.MXAutogradSetIsTraining(0, &prev)))
    rc = mxcts__probe_fail(p, "MXAutogradSetIsRecording");
  const char *failed = !rc && !invoked ? "MXInvokeCachedOpEx" : NULL;
  if (!rc && !failed && p->api.MXAutogradBackwardEx(1, outs, &head, 0, NULL, 0, 0, 1, NULL, NULL))
    failed = "MXAutogradBackwardEx";
  if (failed) snprintf(r->failed, sizeof r->failed, "%s failed: %s", failed, p->api.MXGetLastError());
  NDArrayHandle got[3] = {invoked ? outs[0] : NULL, gx, gw};
  size_t esize = dt == DTYPE_F64 ? 8 : 4;
  for (int i = 0; i < 3 && !rc && !failed; i++) rc = read_array(p, got[i], esize, &r->v[i], &r->n[i]);
  for (int i = 0; invoked && i < nout; i++) p->api.MXNDArrayFree(outs[i]);
  NDArrayHandle mine[] = {x, w, gx, gw, head};
  for (size_t i = 0; i < sizeof mine / sizeof *mine; i++)
    if (mine[i]) p->api.MXNDArrayFree(mine[i]);
  return rc;
}

/* Whether two calls' results are the same bytes; the first difference in
 * `why` otherwise. */
static bool same_results(const struct call_result *a, const struct call_result *b, int dtype, char *why,
                         size_t len) {
  size_t esize = dtype == DTYPE_F64 ? 8 : 4;
  for (int i = 0; i < 3; i++) {
    if (a->n[i] != b->n[i]) {
      snprintf(why, len, "its %s has %lld elements, a fresh cached op's %lld", result_names[i],
               (long long)a->n[i], (long long)b->n[i]);
      return false;
    }
    for (int64_t j = 0; j < a->n[i]; j++) {
      const char *x = (const char *)a->v[i] + j * (int64_t)esize, *y = (const char *)b->v[i] + j * (int64_t)esize;
      if (memcmp(x, y, esize) == 0) continue;
      double dx = esize == 8 ? *(const double *)x : *(const float *)x;
      double dy = esize == 8 ? *(const double *)y : *(const float *)y;
      snprintf(why, len, "its %s[%lld] is %.9g, a fresh cached op's %.9g", result_names[i], (long long)j, dx, dy);
      return false;
    }
  }
  return true;
}

/* Call k on a fresh cached op of `sym` with `flags`. */
static int fresh_call(struct probe *p, SymbolHandle sym, const char *const *vals, bool x_first, int k,
                      struct call_result *r) {
  const char *keys[] = {"static_alloc", "static_shape"};
  CachedOpHandle cop;
  if (p->api.MXCreateCachedOpEx(sym, 2, keys, (const char **)vals, &cop)) return mxcts__probe_fail(p, "MXCreateCachedOpEx");
  int rc = call_cop(p, cop, x_first, k, r);
  p->api.MXFreeCachedOp(cop);
  return rc;
}

/* Judge call k of the long-lived cached op against a fresh one: false
 * (with the reason in why) when a call failed or the bytes differ. */
static int judge_call(struct probe *p, SymbolHandle sym, const char *const *vals, bool x_first, int k,
                      struct call_result *kept, char *why, size_t len, bool *ok) {
  struct call_result fresh = {0};
  int rc = fresh_call(p, sym, vals, x_first, k, &fresh);
  const char *what = kept->failed[0] ? kept->failed : fresh.failed;
  *ok = !rc && !kept->failed[0] && !fresh.failed[0] && same_results(kept, &fresh, calls[k].dtype, why, len);
  if (!rc && what[0]) snprintf(why, len, "%s%s", what, kept->failed[0] ? "" : " (on the fresh cached op)");
  call_result_free(&fresh);
  return rc;
}

/* "call K, float64 (4,8) after float32 (4,8): WHY" */
static void describe_call(int k, const char *why, char *out, size_t len) {
  int n = snprintf(out, len, "call %d, %s (%u,%d)", k + 1, dtype_name(calls[k].dtype), calls[k].rows, COLS);
  if (k > 0 && n > 0 && (size_t)n < len)
    n += snprintf(out + n, len - (size_t)n, " after %s (%u,%d)", dtype_name(calls[k - 1].dtype), calls[k - 1].rows,
                  COLS);
  if (n > 0 && (size_t)n < len) snprintf(out + n, len - (size_t)n, ": %s", why);
}

/* One cached op through every call, each judged against a fresh cached
 * op: checks cachedop_new_shape_SUFFIX (calls 0 and 1) and
 * cachedop_new_dtype_SUFFIX (calls 2 and 3). */
static int check_cache_keys(struct probe *p, SymbolHandle sym, bool x_first, bool statics) {
  const char *keys[] = {"static_alloc", "static_shape"};
  const char *const vals[2] = {statics ? "true" : "false", statics ? "true" : "false"};
  CachedOpHandle cop;
  if (p->api.MXCreateCachedOpEx(sym, 2, keys, (const char **)vals, &cop)) return mxcts__probe_fail(p, "MXCreateCachedOpEx");
  bool shape_ok = true, dtype_ok = true;
  char shape_why[800] = "", dtype_why[800] = "";
  int rc = 0;
  for (int k = 0; k < NCALLS && !rc; k++) {
    struct call_result kept = {0};
    bool ok = true;
    char why[700] = "";
    rc = call_cop(p, cop, x_first, k, &kept);
    if (!rc) rc = judge_call(p, sym, vals, x_first, k, &kept, why, sizeof why, &ok);
    bool *verdict = k < 2 ? &shape_ok : &dtype_ok; /* the first call counts with the shapes */
    if (!rc && !ok && *verdict) describe_call(k, why, k < 2 ? shape_why : dtype_why, sizeof shape_why);
    *verdict = *verdict && ok;
    call_result_free(&kept);
  }
  p->api.MXFreeCachedOp(cop);
  if (rc) return rc;
  const char *suffix = statics ? "static_on" : "static_off";
  char name[64];
  snprintf(name, sizeof name, "cachedop_new_shape_%s", suffix);
  mxcts__probe_add_check(p, name, shape_ok, "static_alloc and static_shape %s: %s", vals[0],
                         shape_ok ? "a float32 (6,8) call after a (4,8) one re-plans: its output and gradients "
                                    "equal a fresh cached op's" : shape_why);
  snprintf(name, sizeof name, "cachedop_new_dtype_%s", suffix);
  mxcts__probe_add_check(p, name, dtype_ok, "static_alloc and static_shape %s: %s", vals[0],
                         dtype_ok ? "a float64 (6,8) call after a float32 (6,8) one, then float32 again, re-plans: "
                                    "outputs and gradients equal a fresh cached op's" : dtype_why);
  return 0;
}

static int check_cached_ops(struct probe *p) {
  SymbolHandle sym;
  if (keys_symbol(p, &sym)) return -1;
  uint32_t n;
  const char **names;
  int rc = p->api.MXSymbolListArguments(sym, &n, &names) ? mxcts__probe_fail(p, "MXSymbolListArguments") : 0;
  if (!rc && n != 2) rc = mxcts__probe_fail(p, "MXSymbolListArguments (not x and w)");
  bool x_first = !rc && strcmp(names[0], "x") == 0; /* the cached op's inputs in that order */
  for (int s = 0; s < 2 && !rc; s++) rc = check_cache_keys(p, sym, x_first, s == 1);
  p->api.MXSymbolFree(sym);
  return rc;
}

/* ------------------------------------------------ head gradient copy */

enum { HG_ROWS = 512, HG_COLS = 512, HG_SLOW_WRITES = 4 };

/* out = op(in, scalar), written into the existing array `out`. */
static int invoke_into(struct probe *p, const char *opname, NDArrayHandle in, double scalar, NDArrayHandle out) {
  OpHandle op;
  PROBE_CALL(p, NNGetOpHandle, opname, &op);
  char val[32];
  snprintf(val, sizeof val, "%g", scalar);
  const char *k[] = {"scalar"}, *v[] = {val};
  NDArrayHandle *outs = &out;
  int nout = 1;
  const int *stypes;
  PROBE_CALL(p, MXImperativeInvokeEx, op, 1, &in, &nout, &outs, 1, k, v, &stypes);
  return 0;
}

/* Iteration `it`'s head gradient, base + it, written into `head` by
 * asynchronous ops just before backward: several writes of other values
 * come first, so a copy that does not wait for head's writers reads one
 * of those. */
static int write_head_grad(struct probe *p, NDArrayHandle base, NDArrayHandle head, long it) {
  for (int k = 0; k < HG_SLOW_WRITES; k++)
    if (invoke_into(p, "_mul_scalar", base, 1000.0 + k, head)) return -1;
  return invoke_into(p, "_plus_scalar", base, (double)it, head);
}

/* The first element of `got` (x's gradient, or an output: `what`) that
 * is not (base + it) * w, the written array times w (plus w with `add`),
 * as `why`; true when there is none. */
static bool is_written_op_w(const float *got, const char *what, const float *base, const float *w, long it, bool add,
                            char *why, size_t len) {
  for (int64_t i = 0; i < (int64_t)HG_ROWS * HG_COLS; i++) {
    float x = base[i] + (float)it, want = add ? w[i] + x : w[i] * x;
    if (got[i] == want) continue;
    snprintf(why, len, "iteration %ld: %s[%lld] is %.9g, w %s the written array is %.9g", it, what, (long long)i,
             (double)got[i], add ? "+" : "*", (double)want);
    return false;
  }
  return true;
}

/* Host copies of an argument's drawn values, as make_args drew them. */
static float *drawn_floats(struct probe *p, uint64_t stream) {
  int64_t n = (int64_t)HG_ROWS * HG_COLS;
  double *x = mxcts_xcalloc((size_t)n, sizeof *x);
  float *f = mxcts_xcalloc((size_t)n, sizeof *f);
  draw(p, stream, x, n);
  for (int64_t i = 0; i < n; i++) f[i] = (float)x[i];
  free(x);
  return f;
}

/* y = x * w bound with gradients; per iteration forward, the head
 * gradient written by asynchronous ops, MXExecutorBackwardEx with it, and
 * at once another write of the head gradient's array: x's gradient must be
 * that iteration's head gradient * w (check head_grad_copy_ordered). */
static int check_head_grad_copy(struct probe *p) {
  struct graph g = {0};
  const uint32_t shape[] = {HG_ROWS, HG_COLS};
  int x = g_var(&g, "x", 2, shape), w = g_var(&g, "w", 2, shape);
  g_head(&g, g_op(&g, "elemwise_mul", "", 2, x, w));
  struct bound b;
  NDArrayHandle base = NULL;
  int rc = bind_graph(p, &g, true, &b), ix = -1;
  for (uint32_t i = 0; !rc && i < b.nargs; i++)
    if (strcmp(b.arg_names[i], "x") == 0) ix = (int)i;
  if (!rc && (ix < 0 || b.nheads != 1)) rc = mxcts__probe_fail(p, "MXExecutorBindEX (not y = x * w)");
  if (!rc) rc = new_array(p, 2, shape, DTYPE_F32, 400, &base);
  float *hbase = drawn_floats(p, 400), *hw = drawn_floats(p, 100 + (uint64_t)find_var(&g, "w"));
  bool ok = true;
  char why[300] = "";
  long iterations = mxcts__probe_param_long(p, "head_grad_iterations", 6);
  for (long it = 0; it < iterations && !rc && ok; it++) {
    if (p->api.MXExecutorForward(b.exe, 1)) rc = mxcts__probe_fail(p, "MXExecutorForward");
    if (!rc) rc = write_head_grad(p, base, b.head_grads[0], it);
    if (!rc && p->api.MXExecutorBackwardEx(b.exe, 1, b.head_grads, 1)) rc = mxcts__probe_fail(p, "MXExecutorBackwardEx");
    if (!rc) rc = invoke_into(p, "_mul_scalar", base, -1000.0, b.head_grads[0]);
    void *grad = NULL;
    int64_t n;
    if (!rc) rc = read_array(p, b.grads[ix], sizeof(float), &grad, &n);
    if (!rc)
      ok = n == (int64_t)HG_ROWS * HG_COLS && is_written_op_w(grad, "x's gradient", hbase, hw, it, false, why, sizeof why);
    free(grad);
  }
  if (!rc)
    mxcts__probe_add_check(p, "head_grad_copy_ordered", ok, "%s",
                           ok ? "every iteration's x gradient is that iteration's head gradient * w" : why);
  free(hbase);
  free(hw);
  if (base) p->api.MXNDArrayFree(base);
  unbind(p, &b);
  return rc;
}

/* ------------------------------------------------ cached-op inputs */

/* y0 = w * x and y1 = w + x as symbol JSON, x and w (HG_ROWS, HG_COLS):
 * x, the array written before each call, is both nodes' second operand,
 * so that a dependency taken from a node's first operand alone does not
 * order it. */
static int two_heads_symbol(struct probe *p, SymbolHandle *out) {
  struct graph g = {0};
  const uint32_t shape[] = {HG_ROWS, HG_COLS};
  int x = g_var(&g, "x", 2, shape), w = g_var(&g, "w", 2, shape);
  g_head(&g, g_op(&g, "elemwise_mul", "", 2, w, x));
  g_head(&g, g_op(&g, "elemwise_add", "", 2, w, x));
  char *json = g_json(&g);
  int rc = p->api.MXSymbolCreateFromJSON(json, out) ? mxcts__probe_fail(p, "MXSymbolCreateFromJSON") : 0;
  free(json);
  return rc;
}

/* One call of iteration `it`: x (the array of this iteration) written by
 * asynchronous ops just before MXInvokeCachedOpEx and overwritten right
 * after; y[0], y[1] get the call's outputs. */
static int ordered_call(struct probe *p, CachedOpHandle cop, NDArrayHandle base, NDArrayHandle x, NDArrayHandle w,
                        bool x_first, long it, NDArrayHandle *y) {
  NDArrayHandle in[2] = {x_first ? x : w, x_first ? w : x}, *outs = NULL;
  int nout = 0;
  const int *stypes;
  if (write_head_grad(p, base, x, it)) return -1;
  PROBE_CALL(p, MXInvokeCachedOpEx, cop, 2, in, &nout, &outs, &stypes);
  for (int k = 0; k < nout; k++) {
    if (k < 2) y[k] = outs[k];
    else p->api.MXNDArrayFree(outs[k]);
  }
  if (nout != 2) return mxcts__probe_fail(p, "MXInvokeCachedOpEx (not two outputs)");
  return invoke_into(p, "_mul_scalar", base, -1000.0, x);
}

/* Whether call `it`'s outputs y[0], y[1] hold w * x and w + x of that
 * call's x; the first difference in `why` otherwise.  -1: a read failed. */
static int outputs_right(struct probe *p, NDArrayHandle *y, const float *hbase, const float *hw, long it,
                         bool *ok, char *why, size_t len) {
  for (int k = 0; k < 2 && *ok; k++) {
    void *got = NULL;
    int64_t n = 0;
    if (read_array(p, y[k], sizeof(float), &got, &n)) return -1;
    *ok = n == (int64_t)HG_ROWS * HG_COLS &&
          is_written_op_w(got, k ? "output 1" : "output 0", hbase, hw, it, k == 1, why, len);
    free(got);
  }
  return 0;
}

/* A cached op of y0 = w * x, y1 = w + x called `iterations` times, x
 * alternating between two arrays (the op rebinds its input each call),
 * each written by asynchronous ops just before the call and overwritten
 * right after: every call's outputs must be w * x and w + x of that call's
 * x (check cachedop_inputs_ordered_SUFFIX).  The caller keeps every output
 * to the end, as a training loop keeps its losses, and reads them all
 * again then: each must still hold its call's values
 * (cachedop_outputs_kept_SUFFIX). */
static int check_cached_op_inputs(struct probe *p, SymbolHandle sym, bool x_first, bool statics) {
  const char *keys[] = {"static_alloc", "static_shape"};
  const char *const vals[2] = {statics ? "true" : "false", statics ? "true" : "false"};
  const char *suffix = statics ? "static_on" : "static_off";
  const uint32_t shape[] = {HG_ROWS, HG_COLS};
  NDArrayHandle base = NULL, w = NULL, x[2] = {NULL, NULL};
  CachedOpHandle cop = NULL;
  int rc = new_array(p, 2, shape, DTYPE_F32, 400, &base) || new_array(p, 2, shape, DTYPE_F32, 401, &w) ||
           new_array(p, 2, shape, DTYPE_F32, 0, &x[0]) || new_array(p, 2, shape, DTYPE_F32, 0, &x[1]);
  if (!rc && p->api.MXCreateCachedOpEx(sym, 2, keys, (const char **)vals, &cop))
    rc = mxcts__probe_fail(p, "MXCreateCachedOpEx");
  float *hbase = drawn_floats(p, 400), *hw = drawn_floats(p, 401);
  bool ordered = true, kept = true;
  char why[300] = "", kept_why[300] = "";
  long iterations = mxcts__probe_param_long(p, "head_grad_iterations", 6), done = 0;
  NDArrayHandle *ys = mxcts_xcalloc((size_t)(iterations > 0 ? 2 * iterations : 1), sizeof *ys);
  for (; done < iterations && !rc && ordered; done++) {
    rc = ordered_call(p, cop, base, x[done % 2], w, x_first, done, &ys[2 * done]);
    if (!rc) rc = outputs_right(p, &ys[2 * done], hbase, hw, done, &ordered, why, sizeof why);
  }
  for (long it = 0; it < done && !rc && ordered && kept; it++)
    rc = outputs_right(p, &ys[2 * it], hbase, hw, it, &kept, kept_why, sizeof kept_why);
  char name[64];
  if (!rc) {
    snprintf(name, sizeof name, "cachedop_inputs_ordered_%s", suffix);
    mxcts__probe_add_check(p, name, ordered, "static_alloc and static_shape %s: %s", vals[0],
                           ordered ? "every call's outputs are w * x and w + x of that call's x" : why);
    snprintf(name, sizeof name, "cachedop_outputs_kept_%s", suffix);
    mxcts__probe_add_check(p, name, ordered && kept, "static_alloc and static_shape %s: %s", vals[0],
                           !ordered ? "not judged: a call's outputs were wrong already"
                           : kept   ? "after the last call every kept output still holds its call's values"
                                    : kept_why);
  }
  free(hbase);
  free(hw);
  if (cop) p->api.MXFreeCachedOp(cop);
  for (long i = 0; i < 2 * iterations; i++)
    if (ys[i]) p->api.MXNDArrayFree(ys[i]);
  free(ys);
  NDArrayHandle mine[] = {base, w, x[0], x[1]};
  for (size_t i = 0; i < sizeof mine / sizeof *mine; i++)
    if (mine[i]) p->api.MXNDArrayFree(mine[i]);
  return rc;
}

static int check_cached_ops_inputs(struct probe *p) {
  SymbolHandle sym;
  if (two_heads_symbol(p, &sym)) return -1;
  uint32_t n;
  const char **names;
  int rc = p->api.MXSymbolListArguments(sym, &n, &names) ? mxcts__probe_fail(p, "MXSymbolListArguments") : 0;
  if (!rc && n != 2) rc = mxcts__probe_fail(p, "MXSymbolListArguments (not x and w)");
  bool x_first = !rc && strcmp(names[0], "x") == 0;
  for (int s = 0; s < 2 && !rc; s++) rc = check_cached_op_inputs(p, sym, x_first, s == 1);
  p->api.MXSymbolFree(sym);
  return rc;
}

/* ------------------------------------------------------------ entry */

int mxcts__probe_memory_plan(struct probe *p) {
  uint32_t nops;
  const char **ops;
  /* as a frontend does before loading JSON: releases up to 1.4 register
   * their legacy operators with the graph loader while listing them */
  if (p->api.MXListAllOpNames) (void)p->api.MXListAllOpNames(&nops, &ops);
  struct graph reuse = {0}, scratch = {0}, fanout = {0};
  reuse_graph(&reuse);
  scratch_graph(&scratch);
  fanout_graph(&fanout);
  int rc = run_values(p, "reuse", &reuse);
  if (!rc) rc = run_values(p, "scratch", &scratch);
  else mxcts_buf_free(&scratch.nodes);
  if (!rc) rc = run_values(p, "fanout", &fanout);
  else mxcts_buf_free(&fanout.nodes);
  if (!rc) rc = report_memory(p);
  if (!rc) rc = check_cached_ops(p);
  if (!rc) rc = check_head_grad_copy(p);
  if (!rc) rc = check_cached_ops_inputs(p);
  return rc;
}
