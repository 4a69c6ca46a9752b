/*
 * Generated cases (oracle.h, docs/oracle.md "Generated cases"): the test
 * cases of an op drawn from its parameter space instead of picked by hand.
 * A space is a list of dimensions (shapes of rank 1 to 4 with size-1 and
 * odd dimensions, every axis, negative ones included, each parameter's
 * values, the input fill); its points are the full product of them, which
 * holds every pair of values.  A point is numbered in mixed radix, first
 * dimension fastest.  Points whose combination the op rejects (an axis
 * beyond the rank, a padding the kernel cannot hold) are given back as
 * "not a case" after mxcts_oracle_prepare_case said so, so every space can
 * stay a plain product.  Spaces too big for the default run are marked
 * pairwise: quick depth takes a subset of their cases that still holds
 * every pair (mxcts_oracle_gen_select).
 *
 * This file holds the machinery, the spaces of the element-wise and tensor
 * ops, the special values, the dtypes and the views; oracle_gen_nn.c the
 * spaces of the layers (Convolution, Pooling, BatchNorm, Concat,
 * FullyConnected, Cast).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle_internal.h"

#define NSHAPES 8
/* Ranks 1 to 4, each with a size-1 or odd dimension. */
static const struct mxcts_oracle_shape shapes[NSHAPES] = {
    {1, {5}}, {1, {1}}, {2, {3, 4}}, {2, {1, 3}}, {3, {2, 1, 3}}, {3, {3, 2, 5}}, {4, {2, 3, 1, 3}},
    {4, {1, 2, 3, 2}},
};

/* Axis digit d (0 .. 2r-1) of a rank-r shape as -r .. r-1; false beyond. */
static bool axis_of(int d, int rank, int *axis) {
  *axis = d - rank;
  return d < 2 * rank;
}

/* ------------------------------------------------------------ helpers (oracle_internal.h) */

void mxcts__gen_param(struct mxcts_oracle_gen_case *g, const char *key, const char *val) {
  int n = 0;
  while (n < MXCTS_ORACLE_MAX_CASE_PARAMS && g->c.params[n].key) n++;
  if (n == MXCTS_ORACLE_MAX_CASE_PARAMS) return; /* no space has that many */
  snprintf(g->keys[n], sizeof g->keys[n], "%s", key);
  snprintf(g->vals[n], sizeof g->vals[n], "%s", val);
  g->c.params[n].key = g->keys[n];
  g->c.params[n].val = g->vals[n];
}

void mxcts__gen_int_param(struct mxcts_oracle_gen_case *g, const char *key, int64_t val) {
  char v[24];
  snprintf(v, sizeof v, "%lld", (long long)val);
  mxcts__gen_param(g, key, v);
}

void mxcts__gen_tuple_param(struct mxcts_oracle_gen_case *g, const char *key, int n, int64_t v) {
  char t[48];
  const long long x = (long long)v;
  if (n == 1) snprintf(t, sizeof t, "(%lld,)", x);
  else if (n == 2) snprintf(t, sizeof t, "(%lld,%lld)", x, x);
  else snprintf(t, sizeof t, "(%lld,%lld,%lld)", x, x, x);
  mxcts__gen_param(g, key, t);
}

void mxcts__gen_input(struct mxcts_oracle_gen_case *g, int i, const struct mxcts_oracle_shape *s,
                      struct mxcts_oracle_fill fill) {
  g->c.in_shapes[i] = *s;
  g->c.in_fill[i] = fill;
  if (g->c.nin < i + 1) g->c.nin = i + 1;
}

void mxcts__gen_name(struct mxcts_oracle_gen_case *g, const char *what) {
  static const char *const prefix[] = {"gen", "special", "dtype", "view"};
  char sh[40];
  mxcts_oracle_shape_str(&g->c.in_shapes[0], sh, sizeof sh);
  snprintf(g->name, sizeof g->name, "%s:%.63s:%.39s", prefix[g->kind], what, sh);
  g->c.name = g->name;
}

/* A one-input case on shape s with the gradient checked (or not). */
static void one_input(struct mxcts_oracle_gen_case *g, const char *op, const struct mxcts_oracle_shape *s,
                      struct mxcts_oracle_fill fill, bool grad) {
  g->c.op = op;
  mxcts__gen_input(g, 0, s, fill);
  g->c.grad_inputs = grad ? 1u : 0u;
}

static const struct mxcts_oracle_fill uniform2 = {MXCTS_ORACLE_FILL_UNIFORM, -2, 2};

/* ------------------------------------------------------------ the spaces */

/* softmax, log_softmax: shape x temperature x axis. */
static bool gen_softmax(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const char *const temps[] = {NULL, "0.5", "3"};
  const struct mxcts_oracle_shape *s = &shapes[d[0]];
  const char *t = temps[d[1]];
  int axis;
  if (!axis_of(d[2], s->ndim, &axis)) return false;
  one_input(g, op, s, uniform2, true);
  mxcts__gen_int_param(g, "axis", axis);
  if (t) mxcts__gen_param(g, "temperature", t);
  char what[48];
  snprintf(what, sizeof what, "axis%d:T%s", axis, t ? t : "None");
  mxcts__gen_name(g, what);
  return true;
}

/* Edge inputs of softmax and log_softmax: large magnitudes (exp overflows
 * or underflows without the row maximum taken out; forward only), ties and
 * zeros, on the last and the first axis, with and without a temperature. */
static bool gen_softmax_edges(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const struct {
    const char *name;
    struct mxcts_oracle_fill fill;
    bool grad;
  } edges[] = {
      {"large_positive", {MXCTS_ORACLE_FILL_UNIFORM, 998, 1002}, false},
      {"large_negative", {MXCTS_ORACLE_FILL_UNIFORM, -1002, -998}, false},
      {"ties", {MXCTS_ORACLE_FILL_CONST, 0.5, 0.5}, true},
      {"zeros", {MXCTS_ORACLE_FILL_CONST, 0, 0}, true},
  };
  static const struct mxcts_oracle_shape edge_shapes[] = {{2, {3, 5}}, {3, {2, 3, 4}}};
  const int e = d[0], axis = d[1] ? 0 : -1;
  const bool temp = d[3];
  one_input(g, op, &edge_shapes[d[2]], edges[e].fill, edges[e].grad);
  mxcts__gen_int_param(g, "axis", axis);
  if (temp) mxcts__gen_param(g, "temperature", "2");
  char what[64];
  snprintf(what, sizeof what, "%s:axis%d:T%s", edges[e].name, axis, temp ? "2" : "None");
  mxcts__gen_name(g, what);
  return true;
}

/* sum, mean: shape x axis (none, each one, the first and last) x keepdims x exclude. */
static bool gen_reduce(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  const struct mxcts_oracle_shape *s = &shapes[d[0]];
  const int a = d[1], r = s->ndim;
  const bool keepdims = d[2], exclude = d[3];
  int axis = 0;
  char axes[24] = "None";
  if (a >= 1 && a <= 2 * r) {
    axis_of(a - 1, r, &axis);
    snprintf(axes, sizeof axes, "%d", axis);
  } else if (a == 2 * r + 1 && r >= 2) {
    snprintf(axes, sizeof axes, "(0,-1)");
  } else if (a != 0) {
    return false;
  }
  if (exclude && a == 0) return false;
  one_input(g, op, s, uniform2, true);
  if (a != 0) mxcts__gen_param(g, "axis", axes);
  if (keepdims) mxcts__gen_param(g, "keepdims", "True");
  if (exclude) mxcts__gen_param(g, "exclude", "True");
  char what[64];
  snprintf(what, sizeof what, "axis%s%s%s", axes, keepdims ? ":keepdims" : "", exclude ? ":exclude" : "");
  mxcts__gen_name(g, what);
  return true;
}

/* reverse: shape x every axis (MXNet 1.9.1's reverse takes no negative
 * axis, so neither does the space). */
static bool gen_reverse(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  const struct mxcts_oracle_shape *s = &shapes[d[0]];
  const int axis = d[1];
  if (axis >= s->ndim) return false;
  one_input(g, op, s, uniform2, true);
  mxcts__gen_int_param(g, "axis", axis);
  char what[24];
  snprintf(what, sizeof what, "axis%d", axis);
  mxcts__gen_name(g, what);
  return true;
}

/* Activation: act_type x shape. */
static bool gen_activation(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const char *const acts[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign"};
  const char *act = acts[d[0]];
  const bool kink = !strcmp(act, "relu") || !strcmp(act, "softsign");
  one_input(g, op, &shapes[d[1]], kink ? (struct mxcts_oracle_fill){MXCTS_ORACLE_FILL_AWAY, 0, 0} : uniform2,
            true);
  mxcts__gen_param(g, "act_type", act);
  mxcts__gen_name(g, act);
  return true;
}

/* Zeros into the unary ops defined at 0 (forward only: 0 is a kink of relu). */
static bool gen_zeros(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  (void)d;
  one_input(g, op, &shapes[5], (struct mxcts_oracle_fill){MXCTS_ORACLE_FILL_CONST, 0, 0}, false);
  mxcts__gen_name(g, "zeros");
  return true;
}

/* Pooling: pool_type x kernel x stride x pad x convention x
 * count_include_pad x 1-D/2-D.  Max pooling reads all-negative distinct
 * inputs, so a window that reaches into the padding must still give the
 * largest input, never the padding's 0. */
static bool gen_pooling(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const char *const types[] = {"max", "avg", "sum", "lp"};
  static const struct mxcts_oracle_shape in[] = {{3, {1, 2, 7}}, {4, {2, 1, 5, 4}}};
  const int type = d[0], kernel = 2 + d[1], stride = 1 + d[2], pad = d[3];
  const bool full = d[4], exclude_pad = d[5];
  const struct mxcts_oracle_shape *s = &in[d[6]];
  if (exclude_pad && type != 1) return false;
  struct mxcts_oracle_fill fill = type == 0 ? (struct mxcts_oracle_fill){MXCTS_ORACLE_FILL_DISTINCT, -2, -1}
                                            : uniform2;
  one_input(g, op, s, fill, true);
  const int nsp = s->ndim - 2;
  mxcts__gen_tuple_param(g, "kernel", nsp, kernel);
  mxcts__gen_tuple_param(g, "stride", nsp, stride);
  mxcts__gen_tuple_param(g, "pad", nsp, pad);
  mxcts__gen_param(g, "pool_type", types[type]);
  if (type == 3) mxcts__gen_param(g, "p_value", "2");
  if (full) mxcts__gen_param(g, "pooling_convention", "full");
  if (exclude_pad) mxcts__gen_param(g, "count_include_pad", "False");
  char what[64];
  snprintf(what, sizeof what, "%s:k%d:s%d:p%d%s%s", types[type], kernel, stride, pad, full ? ":full" : "",
           exclude_pad ? ":exclude_pad" : "");
  mxcts__gen_name(g, what);
  return true;
}

/* Ties in max pooling with padding: forward only (the gradient of a tie is
 * a convention, not a derivative). */
static bool gen_pooling_ties(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const struct mxcts_oracle_shape s = {4, {1, 2, 5, 5}};
  const bool negative = d[0];
  struct mxcts_oracle_fill fill = {MXCTS_ORACLE_FILL_CONST, negative ? -1.5 : 0, negative ? -1.5 : 0};
  one_input(g, op, &s, fill, false);
  mxcts__gen_param(g, "kernel", "(3,3)");
  mxcts__gen_param(g, "stride", "(2,2)");
  mxcts__gen_param(g, "pad", "(1,1)");
  mxcts__gen_name(g, negative ? "max_ties_negative" : "max_ties_zeros");
  return true;
}

/* clip: shape x bounds (plain, not exact in float, equal). */
static bool gen_clip(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const char *const bounds[][2] = {{"-0.5", "0.5"}, {"-1.3", "0.1"}, {"0.25", "0.25"}};
  const char *const *b = bounds[d[1]];
  one_input(g, op, &shapes[d[0]], uniform2, true);
  mxcts__gen_param(g, "a_min", b[0]);
  mxcts__gen_param(g, "a_max", b[1]);
  char what[40];
  snprintf(what, sizeof what, "%s:%s", b[0], b[1]);
  mxcts__gen_name(g, what);
  return true;
}

/* ------------------------------------------------------------ special values */

/* NaN, +-Inf, -0.0 and denormals (MXCTS_ORACLE_FILL_SPECIAL, one of each
 * in every row of 8) through the ops whose MXNet semantics the oracle
 * models for them; forward only.  The reductions run over the rows (each
 * holds a NaN) and over the columns (each holds one special value 3
 * times: NaN, +Inf, -Inf, -0.0 and denormal sums). */
static const struct special {
  const char *op, *what, *key, *val, *key2, *val2;
  bool columns; /* a (3,8) input, else (2,8) */
} specials[] = {
    {"relu", "relu", NULL, NULL, NULL, NULL, false},
    {"Activation", "relu", "act_type", "relu", NULL, NULL, false},
    {"negative", "negative", NULL, NULL, NULL, NULL, false},
    {"exp", "exp", NULL, NULL, NULL, NULL, false},
    {"log", "log", NULL, NULL, NULL, NULL, false},
    {"sqrt", "sqrt", NULL, NULL, NULL, NULL, false},
    {"square", "square", NULL, NULL, NULL, NULL, false},
    {"sigmoid", "sigmoid", NULL, NULL, NULL, NULL, false},
    {"tanh", "tanh", NULL, NULL, NULL, NULL, false},
    {"clip", "clip", "a_min", "-1", "a_max", "1", false},
    {"sum", "axis0", "axis", "0", NULL, NULL, true},
    {"sum", "axis1", "axis", "1", NULL, NULL, true},
    {"sum", "all", NULL, NULL, NULL, NULL, true},
    {"sum", "axis0:keepdims", "axis", "0", "keepdims", "True", true},
    {"mean", "axis0", "axis", "0", NULL, NULL, true},
    {"mean", "axis1", "axis", "1", NULL, NULL, true},
};
#define NSPECIALS ((int)(sizeof specials / sizeof specials[0]))

static bool gen_special(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  (void)op;
  const struct special *sp = &specials[d[0]];
  static const struct mxcts_oracle_shape rows = {2, {2, 8}}, cols = {2, {3, 8}};
  one_input(g, sp->op, sp->columns ? &cols : &rows, (struct mxcts_oracle_fill){MXCTS_ORACLE_FILL_SPECIAL, 0, 0},
            false);
  if (sp->key) mxcts__gen_param(g, sp->key, sp->val);
  if (sp->key2) mxcts__gen_param(g, sp->key2, sp->val2);
  mxcts__gen_name(g, sp->what);
  return true;
}

/* ------------------------------------------------------------ dtypes */

/* Cases in float16, uint8, int32 and int8 for the ops MXNet 1.9.1 handles
 * in them (docs/oracle.md lists what it handles and what is modelled).
 * Each is built so that the result is exact in the dtype: integer results
 * are the oracle's float64 value converted as C converts (toward zero,
 * wrapping: mxcts_oracle_round_to), which is what MXNet's kernels give for
 * integer arithmetic and for float math on integers (computed in float,
 * then truncated; the fills keep that away from rounding boundaries);
 * float16 runs only ops that move values or add and multiply small
 * integers. */
enum { F16 = 1u << MXCTS_ORACLE_FLOAT16, U8 = 1u << MXCTS_ORACLE_UINT8, I32 = 1u << MXCTS_ORACLE_INT32,
       I8 = 1u << MXCTS_ORACLE_INT8, INTS = U8 | I32 | I8, ALL = INTS | F16 };

/* Input ranges by dtype: [lo, hi) integers, or float16 values. */
enum range { R_ANY, R_POS, R_SMALL };
static struct mxcts_oracle_fill range_fill(int range, int dtype, bool move) {
  static const double bounds[3][4][2] = {/* float16, uint8, int32, int8 */
                                         [R_ANY] = {{-4, 4}, {0, 16}, {-1000, 1000}, {-8, 8}},
                                         [R_POS] = {{1, 8}, {1, 16}, {1, 1000}, {1, 16}},
                                         [R_SMALL] = {{-4, 4}, {0, 6}, {-5, 6}, {-4, 5}}};
  const int k = dtype == MXCTS_ORACLE_FLOAT16 ? 0 : dtype == MXCTS_ORACLE_UINT8 ? 1 : dtype == MXCTS_ORACLE_INT32 ? 2 : 3;
  const double *b = bounds[range][k];
  /* moved values need not be integers: any float16 value moves exactly */
  return (struct mxcts_oracle_fill){move && k == 0 ? MXCTS_ORACLE_FILL_UNIFORM : MXCTS_ORACLE_FILL_INT, b[0], b[1]};
}

static const struct dtype_recipe {
  const char *op, *what, *key, *val;
  int nin;
  struct mxcts_oracle_shape in[3];
  int range[3];
  unsigned dtypes;
  bool move; /* values are moved or compared, not computed */
} recipes[] = {
    {"reverse", "axis1", "axis", "1", 1, {{2, {3, 4}}}, {R_ANY}, ALL, true},
    {"_copy", "copy", NULL, NULL, 1, {{2, {3, 4}}}, {R_ANY}, ALL, true},
    {"Flatten", "flatten", NULL, NULL, 1, {{3, {2, 3, 2}}}, {R_ANY}, ALL, true},
    {"Reshape", "4x3", "shape", "(4,3)", 1, {{2, {3, 4}}}, {R_ANY}, ALL, true},
    {"transpose", "reverse_axes", NULL, NULL, 1, {{3, {2, 3, 4}}}, {R_ANY}, ALL, true},
    {"Concat", "dim1", "num_args", "2", 2, {{2, {2, 3}}, {2, {2, 2}}}, {R_ANY, R_ANY}, ALL, true},
    {"zeros_like", "zeros_like", NULL, NULL, 1, {{2, {3, 4}}}, {R_ANY}, ALL, true},
    {"ones_like", "ones_like", NULL, NULL, 1, {{2, {3, 4}}}, {R_ANY}, ALL, true},
    {"relu", "relu", NULL, NULL, 1, {{2, {3, 4}}}, {R_ANY}, ALL, true},
    {"negative", "negative", NULL, NULL, 1, {{2, {3, 4}}}, {R_ANY}, ALL, true},
    {"clip", "-2:3", "a_min", "-2", 1, {{2, {3, 4}}}, {R_ANY}, ALL, true}, /* a_max below */
    {"elemwise_add", "add", NULL, NULL, 2, {{2, {3, 4}}, {2, {3, 4}}}, {R_ANY, R_ANY}, ALL, false},
    {"elemwise_sub", "sub", NULL, NULL, 2, {{2, {3, 4}}, {2, {3, 4}}}, {R_ANY, R_ANY}, ALL, false},
    {"elemwise_mul", "mul", NULL, NULL, 2, {{2, {3, 4}}, {2, {3, 4}}}, {R_ANY, R_ANY}, ALL, false},
    {"elemwise_div", "div", NULL, NULL, 2, {{2, {3, 4}}, {2, {3, 4}}}, {R_ANY, R_POS}, INTS, false},
    {"broadcast_add", "add", NULL, NULL, 2, {{2, {3, 4}}, {2, {1, 4}}}, {R_ANY, R_ANY}, ALL, false},
    {"broadcast_sub", "sub", NULL, NULL, 2, {{2, {3, 4}}, {2, {3, 1}}}, {R_ANY, R_ANY}, ALL, false},
    {"broadcast_mul", "mul", NULL, NULL, 2, {{2, {3, 4}}, {1, {4}}}, {R_ANY, R_ANY}, ALL, false},
    {"broadcast_div", "div", NULL, NULL, 2, {{2, {3, 4}}, {2, {1, 4}}}, {R_ANY, R_POS}, INTS, false},
    {"add_n", "three", "num_args", "3", 3, {{2, {3, 4}}, {2, {3, 4}}, {2, {3, 4}}}, {R_ANY, R_ANY, R_ANY}, ALL, false},
    {"square", "square", NULL, NULL, 1, {{2, {3, 4}}}, {R_ANY}, ALL, false},
    {"sum", "axis1", "axis", "1", 1, {{2, {3, 4}}}, {R_ANY}, ALL, false},
    {"mean", "axis1", "axis", "1", 1, {{2, {3, 4}}}, {R_ANY}, INTS, false},
    {"exp", "exp", NULL, NULL, 1, {{2, {3, 4}}}, {R_SMALL}, INTS, false},
    {"log", "log", NULL, NULL, 1, {{2, {3, 4}}}, {R_POS}, INTS, false},
    {"sqrt", "sqrt", NULL, NULL, 1, {{2, {3, 4}}}, {R_POS}, INTS, false},
    {"sigmoid", "sigmoid", NULL, NULL, 1, {{2, {3, 4}}}, {R_SMALL}, INTS, false},
    {"tanh", "tanh", NULL, NULL, 1, {{2, {3, 4}}}, {R_SMALL}, INTS, false},
    {"Activation", "relu", "act_type", "relu", 1, {{2, {3, 4}}}, {R_ANY}, F16, true},
    {"Pooling", "max", "kernel", "(2,2)", 1, {{4, {1, 2, 4, 4}}}, {R_ANY}, F16, true},
    {"Dropout", "inference", "p", "0.5", 1, {{2, {3, 4}}}, {R_ANY}, F16, true},
};
#define NRECIPES ((int)(sizeof recipes / sizeof recipes[0]))
static const int recipe_dtypes[4] = {MXCTS_ORACLE_FLOAT16, MXCTS_ORACLE_UINT8, MXCTS_ORACLE_INT32, MXCTS_ORACLE_INT8};

static bool gen_dtype(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  (void)op;
  const struct dtype_recipe *r = &recipes[d[0]];
  const int dtype = recipe_dtypes[d[1]];
  if (!(r->dtypes & (1u << dtype))) return false;
  g->c.op = r->op;
  for (int i = 0; i < r->nin; i++) mxcts__gen_input(g, i, &r->in[i], range_fill(r->range[i], dtype, r->move));
  if (r->key) mxcts__gen_param(g, r->key, r->val);
  if (!strcmp(r->op, "clip")) mxcts__gen_param(g, "a_max", "3");
  g->c.dtypes = 1u << dtype;
  g->c.exact = true;
  char what[64];
  snprintf(what, sizeof what, "%s:%s", r->what, mxcts_oracle_dtype_name(dtype));
  mxcts__gen_name(g, what);
  return true;
}

/* ------------------------------------------------------------ views */

/* Input 0 as a view at an offset into a larger array (MXNDArraySlice's
 * rows, MXNDArrayAt's entry), forward and backward: a kernel that ignores
 * the view's offset reads the larger array's other values. */
static const struct view_recipe {
  const char *op, *what, *key, *val;
  int nin;
  struct mxcts_oracle_shape in[3];
  struct mxcts_oracle_fill fill;
} views[] = {
    {"relu", "relu", NULL, NULL, 1, {{2, {4, 3}}}, {MXCTS_ORACLE_FILL_AWAY, 0, 0}},
    {"reverse", "axis0", "axis", "0", 1, {{2, {4, 3}}}, {MXCTS_ORACLE_FILL_UNIFORM, 0, 0}},
    {"sum", "axis0", "axis", "0", 1, {{2, {4, 3}}}, {MXCTS_ORACLE_FILL_UNIFORM, 0, 0}},
    {"softmax", "axis-1", "axis", "-1", 1, {{2, {3, 5}}}, {MXCTS_ORACLE_FILL_UNIFORM, 0, 0}},
    {"transpose", "transpose", NULL, NULL, 1, {{3, {2, 3, 4}}}, {MXCTS_ORACLE_FILL_UNIFORM, 0, 0}},
    {"elemwise_add", "add", NULL, NULL, 2, {{2, {3, 4}}, {2, {3, 4}}}, {MXCTS_ORACLE_FILL_UNIFORM, 0, 0}},
    {"Concat", "dim1", "num_args", "2", 2, {{2, {3, 2}}, {2, {3, 3}}}, {MXCTS_ORACLE_FILL_UNIFORM, 0, 0}},
    {"FullyConnected", "hidden2", "num_hidden", "2", 3, {{2, {3, 4}}, {2, {2, 4}}, {1, {2}}},
     {MXCTS_ORACLE_FILL_UNIFORM, 0, 0}},
    {"Convolution", "3x3", "kernel", "(3,3)", 3, {{4, {2, 2, 5, 5}}, {4, {2, 2, 3, 3}}, {1, {2}}},
     {MXCTS_ORACLE_FILL_UNIFORM, 0, 0}},
    {"Pooling", "max", "kernel", "(2,2)", 1, {{4, {2, 2, 4, 4}}}, {MXCTS_ORACLE_FILL_DISTINCT, 0, 0}},
};
#define NVIEWS ((int)(sizeof views / sizeof views[0]))

static bool gen_view(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  (void)op;
  const struct view_recipe *v = &views[d[0]];
  const bool at = d[1];
  g->c.op = v->op;
  for (int i = 0; i < v->nin; i++)
    mxcts__gen_input(g, i, &v->in[i], i == 0 ? v->fill : (struct mxcts_oracle_fill){MXCTS_ORACLE_FILL_UNIFORM, 0, 0});
  g->c.grad_inputs = (1u << v->nin) - 1u;
  if (v->key) mxcts__gen_param(g, v->key, v->val);
  if (!strcmp(v->op, "Convolution")) mxcts__gen_param(g, "num_filter", "2");
  g->c.view = at ? MXCTS_ORACLE_VIEW_AT : MXCTS_ORACLE_VIEW_SLICE;
  char what[64];
  snprintf(what, sizeof what, "%s:%s", v->what, at ? "at" : "slice");
  mxcts__gen_name(g, what);
  return true;
}

/* ------------------------------------------------------------ the table of spaces */

#define SPACE(OP, MAKE, ...) \
  {OP, MXCTS_ORACLE_GEN_SPACE, MAKE, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), {__VA_ARGS__}, false}

static const struct mxcts__oracle_space spaces[] = {
    SPACE("softmax", gen_softmax, NSHAPES, 3, 8),
    SPACE("log_softmax", gen_softmax, NSHAPES, 3, 8),
    SPACE("softmax", gen_softmax_edges, 4, 2, 2, 2),
    SPACE("log_softmax", gen_softmax_edges, 4, 2, 2, 2),
    SPACE("sum", gen_reduce, NSHAPES, 10, 2, 2),
    SPACE("mean", gen_reduce, NSHAPES, 10, 2, 2),
    SPACE("reverse", gen_reverse, NSHAPES, 4),
    SPACE("Activation", gen_activation, 5, NSHAPES),
    SPACE("negative", gen_zeros, 1),
    SPACE("exp", gen_zeros, 1),
    SPACE("sqrt", gen_zeros, 1),
    SPACE("square", gen_zeros, 1),
    SPACE("relu", gen_zeros, 1),
    SPACE("sigmoid", gen_zeros, 1),
    SPACE("tanh", gen_zeros, 1),
    SPACE("Pooling", gen_pooling, 4, 2, 2, 2, 2, 2, 2),
    SPACE("Pooling", gen_pooling_ties, 2),
    SPACE("clip", gen_clip, NSHAPES, 3),
    {"(special values)", MXCTS_ORACLE_GEN_SPECIAL, gen_special, 1, {NSPECIALS}, false},
    {"(dtypes)", MXCTS_ORACLE_GEN_DTYPE, gen_dtype, 2, {NRECIPES, 4}, false},
    {"(views)", MXCTS_ORACLE_GEN_VIEW, gen_view, 2, {NVIEWS, 2}, false},
};
#define NSPACES ((int)(sizeof spaces / sizeof spaces[0]))

/* Space k of all (this file's, then oracle_gen_nn.c's). */
static const struct mxcts__oracle_space *space_at(int k) {
  if (k < NSPACES) return &spaces[k];
  return k - NSPACES < mxcts__oracle_nspaces_nn ? &mxcts__oracle_spaces_nn[k - NSPACES] : NULL;
}

static int space_points(const struct mxcts__oracle_space *s) {
  int n = 1;
  for (int i = 0; i < s->ndims; i++) n *= s->radix[i];
  return n;
}

/* The digits of point k of s, first dimension fastest. */
static void digits(const struct mxcts__oracle_space *s, int k, int *d) {
  for (int i = 0; i < s->ndims; i++) {
    d[i] = k % s->radix[i];
    k /= s->radix[i];
  }
}

const char *mxcts_oracle_gen_kind_name(int kind) {
  static const char *const names[] = {"spaces", "special", "dtypes", "views"};
  return kind >= 0 && kind < MXCTS_ORACLE_GEN_NUM_KINDS ? names[kind] : NULL;
}

int mxcts_oracle_num_gen_points(void) {
  int n = 0;
  for (int k = 0; space_at(k); k++) n += space_points(space_at(k));
  return n;
}

/* Point k of space s into *out, prepared: the status of
 * mxcts_oracle_gen_point_status. */
static int make_point(const struct mxcts__oracle_space *s, int k, struct mxcts_oracle_gen_case *out) {
  int d[MXCTS__GEN_MAX_DIMS];
  memset(out, 0, sizeof *out);
  digits(s, k, d);
  out->kind = s->kind;
  if (!s->make(d, s->op, out)) return 1;
  struct mxcts_oracle_call call;
  const int st = mxcts_oracle_prepare_case(&call, &out->c, NULL);
  if (st != 0) return st;
  out->c.grad = call.grad; /* the case checks what the op's gradient is */
  if (call.grad == MXCTS_ORACLE_GRAD_NONE) out->c.grad_inputs = 0;
  return 0;
}

static int make_case(const struct mxcts__oracle_space *s, int k, struct mxcts_oracle_gen_case *out) {
  return make_point(s, k, out) == 0;
}

int mxcts_oracle_gen_point_status(int i, struct mxcts_oracle_gen_case *out) {
  memset(out, 0, sizeof *out);
  if (i < 0) return 1;
  for (int k = 0; space_at(k); k++) {
    const struct mxcts__oracle_space *s = space_at(k);
    if (i < space_points(s)) return make_point(s, i, out);
    i -= space_points(s);
  }
  return 1;
}

int mxcts_oracle_gen_case_at(int i, struct mxcts_oracle_gen_case *out) {
  return mxcts_oracle_gen_point_status(i, out) == 0;
}

/* ------------------------------------------------------------ pairwise selection */

/* Coverage of the values of a space: one flag per value of each dimension
 * and per pair of values of two dimensions. */
struct cover {
  int ndims, radix[MXCTS__GEN_MAX_DIMS];
  int pair_at[MXCTS__GEN_MAX_DIMS][MXCTS__GEN_MAX_DIMS], single_at[MXCTS__GEN_MAX_DIMS];
  int size;
};

static void cover_init(struct cover *cv, const struct mxcts__oracle_space *s) {
  cv->ndims = s->ndims;
  cv->size = 0;
  for (int a = 0; a < s->ndims; a++) {
    cv->radix[a] = s->radix[a];
    cv->single_at[a] = cv->size;
    cv->size += s->radix[a];
    for (int b = a + 1; b < s->ndims; b++) {
      cv->pair_at[a][b] = cv->size;
      cv->size += s->radix[a] * s->radix[b];
    }
  }
}

/* The flags point d sets, into idx (room for ndims (ndims + 1) / 2). */
static int cover_flags(const struct cover *cv, const int *d, int *idx) {
  int n = 0;
  for (int a = 0; a < cv->ndims; a++) {
    idx[n++] = cv->single_at[a] + d[a];
    for (int b = a + 1; b < cv->ndims; b++) idx[n++] = cv->pair_at[a][b] + d[a] * cv->radix[b] + d[b];
  }
  return n;
}

enum { MAX_FLAGS = MXCTS__GEN_MAX_DIMS * (MXCTS__GEN_MAX_DIMS + 1) / 2 };

/* Greedy: the case covering most flags still open, lowest point on ties,
 * until every flag some case sets is covered.  cases[0..n) are the local
 * points of the space's cases, ascending; the chosen ones go to out (in
 * ascending order); returns their count, or -1 without memory. */
static int pairwise(const struct mxcts__oracle_space *s, const int *cases, int n, int *out) {
  struct cover cv;
  cover_init(&cv, s);
  unsigned char *open = calloc((size_t)cv.size, 1), *taken = calloc((size_t)(n ? n : 1), 1);
  if (!open || !taken) {
    free(open), free(taken);
    return -1;
  }
  int d[MXCTS__GEN_MAX_DIMS], idx[MAX_FLAGS], nout = 0;
  for (int c = 0; c < n; c++) {
    digits(s, cases[c], d);
    const int nf = cover_flags(&cv, d, idx);
    for (int f = 0; f < nf; f++) open[idx[f]] = 1;
  }
  for (;;) {
    int best = -1, best_gain = 0;
    for (int c = 0; c < n; c++) {
      if (taken[c]) continue;
      digits(s, cases[c], d);
      const int nf = cover_flags(&cv, d, idx);
      int gain = 0;
      for (int f = 0; f < nf; f++) gain += open[idx[f]];
      if (gain > best_gain) best = c, best_gain = gain;
    }
    if (best < 0) break;
    taken[best] = 1;
    digits(s, cases[best], d);
    const int nf = cover_flags(&cv, d, idx);
    for (int f = 0; f < nf; f++) open[idx[f]] = 0;
  }
  for (int c = 0; c < n; c++)
    if (taken[c]) out[nout++] = cases[c];
  free(open), free(taken);
  return nout;
}

int mxcts_oracle_gen_select(bool full, int *points) {
  int total = 0, base = 0;
  struct mxcts_oracle_gen_case g;
  for (int k = 0; space_at(k); k++) {
    const struct mxcts__oracle_space *s = space_at(k);
    const int np = space_points(s);
    int *cases = points + total, n = 0;
    for (int i = 0; i < np; i++)
      if (make_case(s, i, &g)) cases[n++] = i;
    if (!full && s->pairwise) {
      int *chosen = malloc((size_t)(n ? n : 1) * sizeof *chosen);
      const int m = chosen ? pairwise(s, cases, n, chosen) : -1;
      if (m < 0) {
        free(chosen);
        return MXCTS_ORACLE_ENOMEM;
      }
      memcpy(cases, chosen, (size_t)m * sizeof *chosen);
      free(chosen);
      n = m;
    }
    for (int c = 0; c < n; c++) cases[c] += base;
    total += n;
    base += np;
  }
  return total;
}
