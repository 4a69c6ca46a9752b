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
 * stay a plain product.
 */
#include <stdio.h>
#include <string.h>

#include "oracle/oracle_internal.h"

#define NSHAPES 8
/* Ranks 1 to 4, each with a size-1 or odd dimension. */
static const struct mxcts_oracle_shape shapes[NSHAPES] = {
    {1, {5}}, {1, {1}}, {2, {3, 4}}, {2, {1, 3}}, {3, {2, 1, 3}}, {3, {3, 2, 5}}, {4, {2, 3, 1, 3}},
    {4, {1, 2, 3, 2}},
};

/* One digit of a mixed-radix number: *k % base, and *k moves on. */
static int digit(int *k, int base) {
  int d = *k % base;
  *k /= base;
  return d;
}

/* Axis digit d (0 .. 2r-1) of a rank-r shape as -r .. r-1; false beyond. */
static bool axis_of(int d, int rank, int *axis) {
  *axis = d - rank;
  return d < 2 * rank;
}

static void set_param(struct mxcts_oracle_gen_case *g, const char *key, const char *val) {
  int n = 0;
  while (n < MXCTS_ORACLE_MAX_CASE_PARAMS && g->c.params[n].key) n++;
  if (n == MXCTS_ORACLE_MAX_CASE_PARAMS) return; /* no space has that many */
  snprintf(g->keys[n], sizeof g->keys[n], "%s", key);
  snprintf(g->vals[n], sizeof g->vals[n], "%s", val);
  g->c.params[n].key = g->keys[n];
  g->c.params[n].val = g->vals[n];
}

static void set_axis(struct mxcts_oracle_gen_case *g, const char *key, int axis) {
  char v[16];
  snprintf(v, sizeof v, "%d", axis);
  set_param(g, key, v);
}

/* A one-input case on shape s with the FD gradient checked (or not). */
static void one_input(struct mxcts_oracle_gen_case *g, const char *op,
                      const struct mxcts_oracle_shape *s, struct mxcts_oracle_fill fill, bool grad) {
  g->c.op = op;
  g->c.nin = 1;
  g->c.in_shapes[0] = *s;
  g->c.in_fill[0] = fill;
  g->c.grad = MXCTS_ORACLE_GRAD_FD;
  g->c.grad_inputs = grad ? 1u : 0u;
}

static void name_case(struct mxcts_oracle_gen_case *g, const char *what) {
  char sh[40];
  mxcts_oracle_shape_str(&g->c.in_shapes[0], sh, sizeof sh);
  snprintf(g->name, sizeof g->name, "gen:%.63s:%.39s", what, sh);
  g->c.name = g->name;
}

static const struct mxcts_oracle_fill uniform2 = {MXCTS_ORACLE_FILL_UNIFORM, -2, 2};

/* ------------------------------------------------------------ the spaces */

/* softmax, log_softmax: shape x axis x temperature. */
static bool gen_softmax(int k, const char *op, struct mxcts_oracle_gen_case *g) {
  static const char *const temps[] = {NULL, "0.5", "3"};
  const struct mxcts_oracle_shape *s = &shapes[digit(&k, NSHAPES)];
  int axis, t = digit(&k, 3);
  if (!axis_of(digit(&k, 8), s->ndim, &axis)) return false;
  one_input(g, op, s, uniform2, true);
  set_axis(g, "axis", axis);
  if (temps[t]) set_param(g, "temperature", temps[t]);
  char what[48];
  snprintf(what, sizeof what, "axis%d:T%s", axis, temps[t] ? temps[t] : "None");
  name_case(g, what);
  return true;
}

/* Edge inputs of softmax and log_softmax: large magnitudes (exp overflows
 * or underflows without the row maximum taken out; forward only), ties and
 * zeros, on the last and the first axis, with and without a temperature. */
static bool gen_softmax_edges(int k, const char *op, struct mxcts_oracle_gen_case *g) {
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
  int e = digit(&k, 4), axis = digit(&k, 2) ? 0 : -1;
  const struct mxcts_oracle_shape *s = &edge_shapes[digit(&k, 2)];
  bool temp = digit(&k, 2);
  one_input(g, op, s, edges[e].fill, edges[e].grad);
  set_axis(g, "axis", axis);
  if (temp) set_param(g, "temperature", "2");
  char what[64];
  snprintf(what, sizeof what, "%s:axis%d:T%s", edges[e].name, axis, temp ? "2" : "None");
  name_case(g, what);
  return true;
}

/* sum, mean: shape x axis (none, each one, the first and last) x keepdims x exclude. */
static bool gen_reduce(int k, const char *op, struct mxcts_oracle_gen_case *g) {
  const struct mxcts_oracle_shape *s = &shapes[digit(&k, NSHAPES)];
  int a = digit(&k, 10), r = s->ndim, axis = 0;
  bool keepdims = digit(&k, 2), exclude = digit(&k, 2);
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
  if (a != 0) set_param(g, "axis", axes);
  if (keepdims) set_param(g, "keepdims", "True");
  if (exclude) set_param(g, "exclude", "True");
  char what[64];
  snprintf(what, sizeof what, "axis%s%s%s", axes, keepdims ? ":keepdims" : "", exclude ? ":exclude" : "");
  name_case(g, what);
  return true;
}

/* reverse: shape x every axis (MXNet 1.9.1's reverse takes no negative
 * axis, so neither does the space). */
static bool gen_reverse(int k, const char *op, struct mxcts_oracle_gen_case *g) {
  const struct mxcts_oracle_shape *s = &shapes[digit(&k, NSHAPES)];
  int axis = digit(&k, 4);
  if (axis >= s->ndim) return false;
  one_input(g, op, s, uniform2, true);
  set_axis(g, "axis", axis);
  char what[24];
  snprintf(what, sizeof what, "axis%d", axis);
  name_case(g, what);
  return true;
}

/* Activation: act_type x shape. */
static bool gen_activation(int k, const char *op, struct mxcts_oracle_gen_case *g) {
  static const char *const acts[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign"};
  const char *act = acts[digit(&k, 5)];
  const struct mxcts_oracle_shape *s = &shapes[digit(&k, NSHAPES)];
  bool kink = !strcmp(act, "relu") || !strcmp(act, "softsign");
  one_input(g, op, s, kink ? (struct mxcts_oracle_fill){MXCTS_ORACLE_FILL_AWAY, 0, 0} : uniform2, true);
  set_param(g, "act_type", act);
  name_case(g, act);
  return true;
}

/* Zeros into the unary ops defined at 0 (forward only: 0 is a kink of relu). */
static bool gen_zeros(int k, const char *op, struct mxcts_oracle_gen_case *g) {
  (void)k;
  one_input(g, op, &shapes[5], (struct mxcts_oracle_fill){MXCTS_ORACLE_FILL_CONST, 0, 0}, false);
  name_case(g, "zeros");
  return true;
}

/* Pooling: pool_type x kernel x stride x pad x convention x
 * count_include_pad x 1-D/2-D.  Max pooling reads all-negative distinct
 * inputs, so a window that reaches into the padding must still give the
 * largest input, never the padding's 0. */
static bool gen_pooling(int k, const char *op, struct mxcts_oracle_gen_case *g) {
  static const char *const types[] = {"max", "avg", "sum", "lp"};
  static const struct mxcts_oracle_shape in[] = {{3, {1, 2, 7}}, {4, {2, 1, 5, 4}}};
  int type = digit(&k, 4), kernel = 2 + digit(&k, 2), stride = 1 + digit(&k, 2), pad = digit(&k, 2);
  bool full = digit(&k, 2), exclude_pad = digit(&k, 2);
  const struct mxcts_oracle_shape *s = &in[digit(&k, 2)];
  if (exclude_pad && type != 1) return false;
  struct mxcts_oracle_fill fill = type == 0 ? (struct mxcts_oracle_fill){MXCTS_ORACLE_FILL_DISTINCT, -2, -1}
                                            : uniform2;
  one_input(g, op, s, fill, true);
  char v[24];
  int nsp = s->ndim - 2;
  snprintf(v, sizeof v, nsp == 1 ? "(%d,)" : "(%d,%d)", kernel, kernel);
  set_param(g, "kernel", v);
  snprintf(v, sizeof v, nsp == 1 ? "(%d,)" : "(%d,%d)", stride, stride);
  set_param(g, "stride", v);
  snprintf(v, sizeof v, nsp == 1 ? "(%d,)" : "(%d,%d)", pad, pad);
  set_param(g, "pad", v);
  set_param(g, "pool_type", types[type]);
  if (type == 3) set_param(g, "p_value", "2");
  if (full) set_param(g, "pooling_convention", "full");
  if (exclude_pad) set_param(g, "count_include_pad", "False");
  char what[64];
  snprintf(what, sizeof what, "%s:k%d:s%d:p%d%s%s", types[type], kernel, stride, pad, full ? ":full" : "",
           exclude_pad ? ":exclude_pad" : "");
  name_case(g, what);
  return true;
}

/* Ties in max pooling with padding: forward only (the gradient of a tie is
 * a convention, not a derivative). */
static bool gen_pooling_ties(int k, const char *op, struct mxcts_oracle_gen_case *g) {
  static const struct mxcts_oracle_shape s = {4, {1, 2, 5, 5}};
  bool negative = digit(&k, 2);
  struct mxcts_oracle_fill fill = {MXCTS_ORACLE_FILL_CONST, negative ? -1.5 : 0, negative ? -1.5 : 0};
  one_input(g, op, &s, fill, false);
  set_param(g, "kernel", "(3,3)");
  set_param(g, "stride", "(2,2)");
  set_param(g, "pad", "(1,1)");
  name_case(g, negative ? "max_ties_negative" : "max_ties_zeros");
  return true;
}

/* clip: shape x bounds (plain, not exact in float, equal). */
static bool gen_clip(int k, const char *op, struct mxcts_oracle_gen_case *g) {
  static const char *const bounds[][2] = {{"-0.5", "0.5"}, {"-1.3", "0.1"}, {"0.25", "0.25"}};
  const struct mxcts_oracle_shape *s = &shapes[digit(&k, NSHAPES)];
  const char *const *b = bounds[digit(&k, 3)];
  one_input(g, op, s, uniform2, true);
  g->c.grad = MXCTS_ORACLE_GRAD_DIRECT;
  set_param(g, "a_min", b[0]);
  set_param(g, "a_max", b[1]);
  char what[40];
  snprintf(what, sizeof what, "%s:%s", b[0], b[1]);
  name_case(g, what);
  return true;
}

struct space {
  const char *op;
  bool (*make)(int k, const char *op, struct mxcts_oracle_gen_case *g);
  int points;
};

static const struct space spaces[] = {
    {"softmax", gen_softmax, NSHAPES * 3 * 8},
    {"log_softmax", gen_softmax, NSHAPES * 3 * 8},
    {"softmax", gen_softmax_edges, 4 * 2 * 2 * 2},
    {"log_softmax", gen_softmax_edges, 4 * 2 * 2 * 2},
    {"sum", gen_reduce, NSHAPES * 10 * 2 * 2},
    {"mean", gen_reduce, NSHAPES * 10 * 2 * 2},
    {"reverse", gen_reverse, NSHAPES * 4},
    {"Activation", gen_activation, 5 * NSHAPES},
    {"negative", gen_zeros, 1},
    {"exp", gen_zeros, 1},
    {"sqrt", gen_zeros, 1},
    {"square", gen_zeros, 1},
    {"relu", gen_zeros, 1},
    {"sigmoid", gen_zeros, 1},
    {"tanh", gen_zeros, 1},
    {"Pooling", gen_pooling, 4 * 2 * 2 * 2 * 2 * 2 * 2},
    {"Pooling", gen_pooling_ties, 2},
    {"clip", gen_clip, NSHAPES * 3},
};

int mxcts_oracle_num_gen_points(void) {
  int n = 0;
  for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++) n += spaces[i].points;
  return n;
}

int mxcts_oracle_gen_case_at(int i, struct mxcts_oracle_gen_case *out) {
  memset(out, 0, sizeof *out);
  if (i < 0) return 0;
  for (size_t s = 0; s < sizeof spaces / sizeof spaces[0]; s++) {
    if (i >= spaces[s].points) {
      i -= spaces[s].points;
      continue;
    }
    if (!spaces[s].make(i, spaces[s].op, out)) return 0;
    struct mxcts_oracle_call call;
    return mxcts_oracle_prepare_case(&call, &out->c, NULL) == 0;
  }
  return 0;
}
