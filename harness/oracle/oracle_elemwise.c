/*
 * Oracle ops, element by element: reverse, _copy, _zeros, _ones,
 * zeros_like, ones_like, add_n, elemwise_*, the *_scalar family,
 * broadcast_*, the unary math ops, Activation, LeakyReLU, clip and Cast.
 *
 * MXNet 1.9.1 semantics that matter here:
 *  - broadcasting is numpy's: shapes align at the last axis, missing axes
 *    count as 1, size-1 axes stretch;
 *  - LeakyReLU's slope is a float parameter (used as float(slope)); prelu
 *    places gamma's axes from its last against data's axes 1 and 0;
 *  - LeakyReLU selu's gradient is lambda * (y > 0 ? 1 : alpha + y) on the
 *    output y (mshadow_op::selu_grad), not the derivative
 *    lambda * alpha * exp(x) = y + lambda * alpha (GRAD_DIRECT);
 *  - clip keeps a_min and a_max as float, tests x > a_max before x < a_min
 *    (crossed bounds give a_max above it, a_min below it), and passes the
 *    gradient where a_min <= x <= a_max: the bounds themselves included,
 *    where the derivative is a convention, so it is stated (GRAD_DIRECT)
 *    rather than left to finite differences, which fail near a bound;
 *  - zeros_like/ones_like pass no gradient (GRAD_NONE);
 *  - relu (and Activation's relu) is IsNan(a) || a > 0 ? a : 0: NaN
 *    propagates (mshadow_op::relu);
 *  - Cast converts as C's static_cast: toward zero into an integer type
 *    (tcast in CastCompute); only its forward is modelled (GRAD_NONE).
 */
#include <math.h>
#include <string.h>

#include "oracle/oracle_internal.h"

static const double SELU_ALPHA = 1.6732632423543772848170429916717;
static const double SELU_LAMBDA = 1.0507009873554804934193349852946;

/* One input, output of its shape, gradient by finite differences. */
PREP(prep_like_input) {
  int st = mxcts__oracle_want_nin(c, 1, err);
  if (st) return st;
  c->nout = 1;
  c->out_shape[0] = c->in_shape[0];
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

/* ------------------------------------------------------------ reverse */

static const struct mxcts_oracle_field reverse_fields[] = {
    {"axis", MXCTS_ORACLE_P_TUPLE, NULL, NULL},
};

PREP(prep_reverse) {
  int st = prep_like_input(c, err), ax;
  for (int i = 0; !st && i < c->pv[0].n; i++)
    st = mxcts__oracle_axis(c, "axis", c->pv[0].t[i], c->in_shape[0].ndim, &ax, err);
  return st;
}

FWD(fwd_reverse) {
  FWD_UNUSED;
  const struct mxcts_oracle_shape *s = &c->in_shape[0];
  bool flip[MXCTS_ORACLE_MAX_NDIM] = {false};
  for (int i = 0; i < c->pv[0].n; i++) {
    int64_t a = c->pv[0].t[i];
    flip[a < 0 ? a + s->ndim : a] = true;
  }
  int64_t st[MXCTS_ORACLE_MAX_NDIM];
  mxcts__oracle_strides(s, st);
  const int64_t n = size_of(s);
  for (int64_t o = 0; o < n; o++) {
    int64_t src = 0;
    for (int d = 0; d < s->ndim; d++) {
      int64_t i = o / st[d] % s->dim[d];
      src += (flip[d] ? s->dim[d] - 1 - i : i) * st[d];
    }
    out[0][o] = in[0][src];
  }
}

/* ------------------------------------------------------------ copies and fillers */

FWD(fwd_copy) {
  FWD_UNUSED;
  memcpy(out[0], in[0], (size_t)size_of(&c->in_shape[0]) * sizeof(double));
}

static const char *const dtype_names[] = {"float32", "float64", "float16", "uint8", "int32",
                                          "int8",    "int64",   "bool",    NULL};
static const struct mxcts_oracle_field init_fields[] = {
    {"shape", MXCTS_ORACLE_P_TUPLE, "()", NULL},
    {"ctx", MXCTS_ORACLE_P_STRING, "", NULL},
    {"dtype", MXCTS_ORACLE_P_ENUM, "float32", dtype_names},
};

/* The code of dtype choice `i` of dtype_names (MXNet's order, which the
 * oracle's codes follow up to int8); ENOTSUP beyond. */
static int dtype_choice(struct mxcts_oracle_call *c, int64_t i, struct mxcts_oracle_error *err) {
  const int code = mxcts_oracle_dtype_code(dtype_names[i]);
  if (code < 0) return FAIL(MXCTS_ORACLE_ENOTSUP, "dtype=%s is not modelled", dtype_names[i]);
  c->out_dtype = code;
  return 0;
}

PREP(prep_init) {
  int st = mxcts__oracle_want_nin(c, 0, err);
  if (!st) st = dtype_choice(c, c->pv[2].i, err);
  if (st) return st;
  c->nout = 1;
  c->out_shape[0].ndim = c->pv[0].n;
  for (int i = 0; i < c->pv[0].n; i++) {
    if (c->pv[0].t[i] < 0) return FAIL(MXCTS_ORACLE_EINVAL, "shape has a negative dimension");
    c->out_shape[0].dim[i] = c->pv[0].t[i];
  }
  c->grad = MXCTS_ORACLE_GRAD_NONE;
  return 0;
}

PREP(prep_like_nograd) {
  int st = prep_like_input(c, err);
  c->grad = MXCTS_ORACLE_GRAD_NONE;
  return st;
}

static void fill(const struct mxcts_oracle_call *c, double *out, double v) {
  for (int64_t i = 0; i < size_of(&c->out_shape[0]); i++) out[i] = v;
}
FWD(fwd_zeros) { FWD_UNUSED, fill(c, out[0], 0.0); }
FWD(fwd_ones) { FWD_UNUSED, fill(c, out[0], 1.0); }

/* ------------------------------------------------------------ add_n */

static const struct mxcts_oracle_field add_n_fields[] = {
    {"num_args", MXCTS_ORACLE_P_INT, NULL, NULL},
};

PREP(prep_add_n) {
  const int64_t k = c->pv[0].i;
  if (k < 1 || k > MXCTS_ORACLE_MAX_INPUTS)
    return FAIL(MXCTS_ORACLE_EINVAL, "num_args=%lld: expected 1 to %d", (long long)k,
                MXCTS_ORACLE_MAX_INPUTS);
  int st = mxcts__oracle_want_nin(c, (int)k, err);
  for (int i = 1; !st && i < c->nin; i++) st = mxcts__oracle_want_same(c, 0, i, err);
  if (st) return st;
  c->nout = 1;
  c->out_shape[0] = c->in_shape[0];
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_add_n) {
  FWD_UNUSED;
  for (int64_t j = 0; j < size_of(&c->out_shape[0]); j++) {
    double s = 0;
    for (int i = 0; i < c->nin; i++) s += in[i][j];
    out[0][j] = s;
  }
}

/* ------------------------------------------------------------ arithmetic */

enum fn {
  F_ADD, F_SUB, F_MUL, F_DIV, F_RSUB, F_RDIV,
  F_NEG, F_EXP, F_LOG, F_SQRT, F_SQUARE, F_RELU, F_SIGMOID, F_TANH, F_SOFTRELU, F_SOFTSIGN,
};

static double apply(int fn, double a, double b) {
  switch (fn) {
    case F_ADD: return a + b;
    case F_SUB: return a - b;
    case F_MUL: return a * b;
    case F_DIV: return a / b;
    case F_RSUB: return b - a;
    case F_RDIV: return b / a;
    case F_NEG: return -a;
    case F_EXP: return exp(a);
    case F_LOG: return log(a);
    case F_SQRT: return sqrt(a);
    case F_SQUARE: return a * a;
    case F_RELU: return isnan(a) || a > 0 ? a : 0.0;
    case F_SIGMOID: return 1.0 / (1.0 + exp(-a));
    case F_TANH: return tanh(a);
    case F_SOFTRELU: return a > 0 ? a + log1p(exp(-a)) : log1p(exp(a)); /* log(1 + e^a) */
    case F_SOFTSIGN: return a / (1.0 + fabs(a));
  }
  return NAN;
}

/* Which function an op computes, by its canonical name. */
static int fn_of(const char *op) {
  static const struct {
    const char *name;
    int fn;
  } map[] = {
      {"elemwise_add", F_ADD},      {"elemwise_sub", F_SUB},       {"elemwise_mul", F_MUL},
      {"elemwise_div", F_DIV},      {"broadcast_add", F_ADD},      {"broadcast_sub", F_SUB},
      {"broadcast_mul", F_MUL},     {"broadcast_div", F_DIV},      {"_plus_scalar", F_ADD},
      {"_minus_scalar", F_SUB},     {"_rminus_scalar", F_RSUB},    {"_mul_scalar", F_MUL},
      {"_div_scalar", F_DIV},       {"_rdiv_scalar", F_RDIV},      {"negative", F_NEG},
      {"exp", F_EXP},               {"log", F_LOG},                {"sqrt", F_SQRT},
      {"square", F_SQUARE},         {"relu", F_RELU},              {"sigmoid", F_SIGMOID},
      {"tanh", F_TANH},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(map[i].name, op) == 0) return map[i].fn;
  return -1;
}

PREP(prep_binary) {
  int st = mxcts__oracle_want_nin(c, 2, err);
  if (!st) st = mxcts__oracle_want_same(c, 0, 1, err);
  if (st) return st;
  c->nout = 1;
  c->out_shape[0] = c->in_shape[0];
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_binary) {
  FWD_UNUSED;
  const int fn = fn_of(c->op);
  for (int64_t j = 0; j < size_of(&c->out_shape[0]); j++) out[0][j] = apply(fn, in[0][j], in[1][j]);
}

FWD(fwd_unary) {
  FWD_UNUSED;
  const int fn = fn_of(c->op);
  for (int64_t j = 0; j < size_of(&c->out_shape[0]); j++) out[0][j] = apply(fn, in[0][j], 0.0);
}

static const struct mxcts_oracle_field scalar_fields[] = {
    {"scalar", MXCTS_ORACLE_P_FLOAT, "1", NULL},
    {"is_int", MXCTS_ORACLE_P_BOOL, "True", NULL},
};

/* The scalar is a double parameter; float32 data meets it as float(scalar)
 * (the case table uses exactly representable scalars). */
FWD(fwd_scalar) {
  FWD_UNUSED;
  const int fn = fn_of(c->op);
  const double s = c->pv[0].f;
  for (int64_t j = 0; j < size_of(&c->out_shape[0]); j++) out[0][j] = apply(fn, in[0][j], s);
}

/* ------------------------------------------------------------ broadcasting */

/* Index into an array of shape s of element `flat` of the shape o it
 * broadcasts to. */
static int64_t bsrc(const struct mxcts_oracle_shape *s, const struct mxcts_oracle_shape *o, int64_t flat) {
  int64_t idx = 0, mul = 1;
  for (int d = o->ndim - 1; d >= 0; d--) {
    const int64_t i = flat % o->dim[d];
    flat /= o->dim[d];
    const int sd = d - (o->ndim - s->ndim);
    if (sd < 0) continue;
    if (s->dim[sd] != 1) idx += i * mul;
    mul *= s->dim[sd];
  }
  return idx;
}

PREP(prep_broadcast) {
  int st = mxcts__oracle_want_nin(c, 2, err);
  if (st) return st;
  const struct mxcts_oracle_shape *a = &c->in_shape[0], *b = &c->in_shape[1];
  struct mxcts_oracle_shape *o = &c->out_shape[0];
  o->ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int d = 0; d < o->ndim; d++) {
    const int da = d - (o->ndim - a->ndim), db = d - (o->ndim - b->ndim);
    const int64_t x = da >= 0 ? a->dim[da] : 1, y = db >= 0 ? b->dim[db] : 1;
    if (x != y && x != 1 && y != 1) {
      char s1[96], s2[96];
      return FAIL(MXCTS_ORACLE_EINVAL, "shapes %s and %s cannot be broadcast together",
                  mxcts_oracle_shape_str(a, s1, sizeof s1), mxcts_oracle_shape_str(b, s2, sizeof s2));
    }
    o->dim[d] = x == 1 ? y : x;
  }
  c->nout = 1;
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_broadcast) {
  FWD_UNUSED;
  const int fn = fn_of(c->op);
  const struct mxcts_oracle_shape *o = &c->out_shape[0];
  for (int64_t j = 0; j < size_of(o); j++)
    out[0][j] = apply(fn, in[0][bsrc(&c->in_shape[0], o, j)], in[1][bsrc(&c->in_shape[1], o, j)]);
}

/* ------------------------------------------------------------ Activation */

static const char *const act_types[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign", NULL};
static const struct mxcts_oracle_field act_fields[] = {
    {"act_type", MXCTS_ORACLE_P_ENUM, NULL, act_types},
};

FWD(fwd_activation) {
  FWD_UNUSED;
  static const int fn[] = {F_RELU, F_SIGMOID, F_TANH, F_SOFTRELU, F_SOFTSIGN};
  const int f = fn[c->pv[0].i];
  for (int64_t j = 0; j < size_of(&c->out_shape[0]); j++) out[0][j] = apply(f, in[0][j], 0.0);
}

/* ------------------------------------------------------------ LeakyReLU */

enum { LK_LEAKY, LK_PRELU, LK_RRELU, LK_ELU, LK_SELU, LK_GELU };
static const char *const leaky_types[] = {"leaky", "prelu", "rrelu", "elu", "selu", "gelu", NULL};
enum { LK_TYPE, LK_SLOPE, LK_LOWER, LK_UPPER };
static const struct mxcts_oracle_field leaky_fields[] = {
    [LK_TYPE] = {"act_type", MXCTS_ORACLE_P_ENUM, "leaky", leaky_types},
    [LK_SLOPE] = {"slope", MXCTS_ORACLE_P_FLOAT, "0.25", NULL},
    [LK_LOWER] = {"lower_bound", MXCTS_ORACLE_P_FLOAT, "0.125", NULL},
    [LK_UPPER] = {"upper_bound", MXCTS_ORACLE_P_FLOAT, "0.334", NULL},
};

/* Gamma's shape as it meets data (MXNet's expand_shape for prelu). */
static bool gamma_placed(const struct mxcts_oracle_shape *data, const struct mxcts_oracle_shape *gamma,
                         struct mxcts_oracle_shape *placed) {
  int s = gamma->ndim - 1;
  placed->ndim = data->ndim;
  for (int d = data->ndim - 1; d >= 0; d--) {
    if (s >= 0 && d <= 1 && (gamma->dim[s] == data->dim[d] || gamma->dim[s] == 1))
      placed->dim[d] = gamma->dim[s--];
    else
      placed->dim[d] = 1;
  }
  return s < 0;
}

PREP(prep_leaky) {
  const int64_t t = c->pv[LK_TYPE].i;
  if (t == LK_RRELU)
    return FAIL(MXCTS_ORACLE_ENOTSUP, "act_type=rrelu draws random slopes in training and leaves "
                                      "its mask unset otherwise; not modelled");
  int st = mxcts__oracle_want_nin(c, t == LK_PRELU ? 2 : 1, err);
  if (st) return st;
  struct mxcts_oracle_shape placed;
  if (t == LK_PRELU && !gamma_placed(&c->in_shape[0], &c->in_shape[1], &placed)) {
    char a[96], b[96];
    return FAIL(MXCTS_ORACLE_EINVAL, "gamma of shape %s does not fit data of shape %s",
                mxcts_oracle_shape_str(&c->in_shape[1], a, sizeof a),
                mxcts_oracle_shape_str(&c->in_shape[0], b, sizeof b));
  }
  c->nout = 1;
  c->out_shape[0] = c->in_shape[0];
  c->grad = t == LK_SELU ? MXCTS_ORACLE_GRAD_DIRECT : MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_leaky) {
  FWD_UNUSED;
  const struct mxcts_oracle_shape *s = &c->in_shape[0];
  const double slope = mxcts__oracle_f32(c->pv[LK_SLOPE].f);
  struct mxcts_oracle_shape placed;
  const int64_t t = c->pv[LK_TYPE].i;
  if (t == LK_PRELU) gamma_placed(s, &c->in_shape[1], &placed);
  for (int64_t j = 0; j < size_of(s); j++) {
    const double x = in[0][j];
    double y = x;
    switch (t) {
      case LK_LEAKY: y = x > 0 ? x : slope * x; break;
      case LK_PRELU: y = x > 0 ? x : in[1][bsrc(&placed, s, j)] * x; break;
      case LK_ELU: y = x > 0 ? x : slope * expm1(x); break;
      case LK_SELU: y = SELU_LAMBDA * (x > 0 ? x : SELU_ALPHA * expm1(x)); break;
      case LK_GELU: y = 0.5 * x * (1.0 + erf(x / sqrt(2.0))); break;
      default: break;
    }
    out[0][j] = y;
  }
}

/* selu only (the other types are GRAD_FD). */
static void bwd_leaky(const struct mxcts_oracle_call *c, const double *const *in,
                      const double *const *aux, const double *const *head, double *const *grad) {
  (void)aux;
  if (!grad[0]) return;
  for (int64_t j = 0; j < size_of(&c->in_shape[0]); j++) {
    const double x = in[0][j], y = SELU_LAMBDA * (x > 0 ? x : SELU_ALPHA * expm1(x));
    grad[0][j] = head[0][j] * SELU_LAMBDA * (y > 0 ? 1.0 : SELU_ALPHA + y);
  }
}

/* ------------------------------------------------------------ clip */

enum { CL_MIN, CL_MAX };
static const struct mxcts_oracle_field clip_fields[] = {
    [CL_MIN] = {"a_min", MXCTS_ORACLE_P_FLOAT, NULL, NULL},
    [CL_MAX] = {"a_max", MXCTS_ORACLE_P_FLOAT, NULL, NULL},
};

PREP(prep_clip) {
  int st = prep_like_input(c, err);
  c->grad = MXCTS_ORACLE_GRAD_DIRECT;
  return st;
}

FWD(fwd_clip) {
  FWD_UNUSED;
  const double lo = mxcts__oracle_f32(c->pv[CL_MIN].f), hi = mxcts__oracle_f32(c->pv[CL_MAX].f);
  for (int64_t j = 0; j < size_of(&c->in_shape[0]); j++) {
    const double x = in[0][j];
    out[0][j] = x > hi ? hi : x < lo ? lo : x;
  }
}

BWD(bwd_clip) {
  (void)aux;
  if (!grad[0]) return;
  const double lo = mxcts__oracle_f32(c->pv[CL_MIN].f), hi = mxcts__oracle_f32(c->pv[CL_MAX].f);
  for (int64_t j = 0; j < size_of(&c->in_shape[0]); j++)
    grad[0][j] = in[0][j] > hi || in[0][j] < lo ? 0.0 : head[0][j];
}

/* ------------------------------------------------------------ Cast */

static const struct mxcts_oracle_field cast_fields[] = {
    {"dtype", MXCTS_ORACLE_P_ENUM, NULL, dtype_names},
};

PREP(prep_cast) {
  int st = mxcts__oracle_want_nin(c, 1, err);
  if (!st) st = dtype_choice(c, c->pv[0].i, err);
  if (st) return st;
  c->nout = 1;
  c->out_shape[0] = c->in_shape[0];
  c->grad = MXCTS_ORACLE_GRAD_NONE;
  return 0;
}

FWD(fwd_cast) {
  FWD_UNUSED;
  for (int64_t j = 0; j < size_of(&c->in_shape[0]); j++) out[0][j] = mxcts_oracle_round_to(c->out_dtype, in[0][j]);
}

/* ------------------------------------------------------------ the table */

OP(op_reverse, "reverse", reverse_fields, 1, prep_reverse, fwd_reverse, NULL, "flip", NULL);
OP(op_copy, "_copy", NULL, 0, prep_like_input, fwd_copy, NULL, "identity", NULL);
OP(op_zeros, "_zeros", init_fields, NOF(init_fields), prep_init, fwd_zeros, NULL, NULL);
OP(op_ones, "_ones", init_fields, NOF(init_fields), prep_init, fwd_ones, NULL, NULL);
OP(op_zeros_like, "zeros_like", NULL, 0, prep_like_nograd, fwd_zeros, NULL, NULL);
OP(op_ones_like, "ones_like", NULL, 0, prep_like_nograd, fwd_ones, NULL, NULL);
OP(op_add_n, "add_n", add_n_fields, 1, prep_add_n, fwd_add_n, NULL, "ElementWiseSum", NULL);

OP(op_eadd, "elemwise_add", NULL, 0, prep_binary, fwd_binary, NULL, "_add", "_plus", "_Plus",
   "_sparse_elemwise_add", NULL);
OP(op_esub, "elemwise_sub", NULL, 0, prep_binary, fwd_binary, NULL, "_sub", "_minus", "_Minus",
   "_sparse_elemwise_sub", NULL);
OP(op_emul, "elemwise_mul", NULL, 0, prep_binary, fwd_binary, NULL, "_mul", "_Mul",
   "_sparse_elemwise_mul", NULL);
OP(op_ediv, "elemwise_div", NULL, 0, prep_binary, fwd_binary, NULL, "_div", "_Div",
   "_sparse_elemwise_div", NULL);

#define SCALAR(var, NAME, ALIAS) \
  OP(var, NAME, scalar_fields, NOF(scalar_fields), prep_like_input, fwd_scalar, NULL, ALIAS, NULL)
SCALAR(op_plus_scalar, "_plus_scalar", "_PlusScalar");
SCALAR(op_minus_scalar, "_minus_scalar", "_MinusScalar");
SCALAR(op_rminus_scalar, "_rminus_scalar", "_RMinusScalar");
SCALAR(op_mul_scalar, "_mul_scalar", "_MulScalar");
SCALAR(op_div_scalar, "_div_scalar", "_DivScalar");
SCALAR(op_rdiv_scalar, "_rdiv_scalar", "_RDivScalar");

OP(op_badd, "broadcast_add", NULL, 0, prep_broadcast, fwd_broadcast, NULL, "broadcast_plus",
   "_sparse_broadcast_add", "_sparse_broadcast_plus", NULL);
OP(op_bsub, "broadcast_sub", NULL, 0, prep_broadcast, fwd_broadcast, NULL, "broadcast_minus",
   "_sparse_broadcast_sub", "_sparse_broadcast_minus", NULL);
OP(op_bmul, "broadcast_mul", NULL, 0, prep_broadcast, fwd_broadcast, NULL, "_sparse_broadcast_mul", NULL);
OP(op_bdiv, "broadcast_div", NULL, 0, prep_broadcast, fwd_broadcast, NULL, "_sparse_broadcast_div", NULL);

#define UNARY(var, NAME, ALIAS) OP(var, NAME, NULL, 0, prep_like_input, fwd_unary, NULL, ALIAS, NULL)
UNARY(op_negative, "negative", "_sparse_negative");
UNARY(op_exp, "exp", "_sparse_exp");
UNARY(op_log, "log", "_sparse_log");
UNARY(op_sqrt, "sqrt", "_sparse_sqrt");
UNARY(op_square, "square", "_sparse_square");
UNARY(op_relu, "relu", "_sparse_relu");
UNARY(op_sigmoid, "sigmoid", "_sparse_sigmoid");
UNARY(op_tanh, "tanh", "_sparse_tanh");

OP(op_activation, "Activation", act_fields, 1, prep_like_input, fwd_activation, NULL,
   "_npx_activation", NULL);
OP(op_leaky, "LeakyReLU", leaky_fields, NOF(leaky_fields), prep_leaky, fwd_leaky, bwd_leaky,
   "_npx_leaky_relu", NULL);
OP(op_clip, "clip", clip_fields, NOF(clip_fields), prep_clip, fwd_clip, bwd_clip, NULL);
OP(op_cast, "Cast", cast_fields, NOF(cast_fields), prep_cast, fwd_cast, NULL, "cast", NULL);

const struct mxcts_oracle_opdef *const mxcts__oracle_ops_elemwise[] = {
    &op_reverse,      &op_copy,        &op_zeros,         &op_ones,          &op_zeros_like,
    &op_ones_like,    &op_add_n,       &op_eadd,          &op_esub,          &op_emul,
    &op_ediv,         &op_plus_scalar, &op_minus_scalar,  &op_rminus_scalar, &op_mul_scalar,
    &op_div_scalar,   &op_rdiv_scalar, &op_badd,          &op_bsub,          &op_bmul,
    &op_bdiv,         &op_negative,    &op_exp,           &op_log,           &op_sqrt,
    &op_square,       &op_relu,        &op_sigmoid,       &op_tanh,          &op_activation,
    &op_leaky,        &op_clip,        &op_cast,          NULL,
};
