/*
 * Oracle ops that move or reduce whole tensors: sum, mean, dot, Flatten,
 * Reshape, transpose, Concat, softmax, log_softmax.  Every gradient here is
 * the derivative of the forward (GRAD_FD).
 *
 * MXNet 1.9.1 semantics that matter here:
 *  - sum/mean: axis None (or ()) reduces every axis; exclude reduces the
 *    axes not named; without keepdims a full reduction gives shape (1,);
 *  - dot contracts lhs's last axis (its first with transpose_a) with rhs's
 *    first (its last with transpose_b); the output keeps the other axes of
 *    each operand, in order; two vectors give (1,);
 *  - Reshape's special values 0 -1 -2 -3 -4, applied right to left with
 *    reverse=True; -1 fills the output position it produced;
 *  - transpose with axes=() reverses the axes;
 *  - softmax/log_softmax along `axis` of data / temperature.
 */
#include <math.h>
#include <string.h>

#include "oracle/oracle_internal.h"

/* ------------------------------------------------------------ sum, mean */

enum { R_AXIS, R_KEEPDIMS, R_EXCLUDE };
static const struct mxcts_oracle_field reduce_fields[] = {
    [R_AXIS] = {"axis", MXCTS_ORACLE_P_OPT_TUPLE, "None", NULL},
    [R_KEEPDIMS] = {"keepdims", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [R_EXCLUDE] = {"exclude", MXCTS_ORACLE_P_BOOL, "False", NULL},
};

/* red[d]: axis d of the input is reduced. */
static int reduced_axes(const struct mxcts_oracle_call *c, bool *red, struct mxcts_oracle_error *err) {
  const struct mxcts_oracle_value *ax = &c->pv[R_AXIS];
  const int nd = c->in_shape[0].ndim;
  const bool all = ax->none || ax->n == 0;
  bool named[MXCTS_ORACLE_MAX_NDIM] = {false};
  for (int i = 0; !all && i < ax->n; i++) {
    int a;
    int st = mxcts__oracle_axis(c, "axis", ax->t[i], nd, &a, err);
    if (st) return st;
    if (named[a]) return FAIL(MXCTS_ORACLE_EINVAL, "axis names dimension %d twice", a);
    named[a] = true;
  }
  for (int d = 0; d < nd; d++) red[d] = all || (c->pv[R_EXCLUDE].i ? !named[d] : named[d]);
  return 0;
}

PREP(prep_reduce) {
  bool red[MXCTS_ORACLE_MAX_NDIM];
  int st = mxcts__oracle_want_nin(c, 1, err);
  if (!st) st = reduced_axes(c, red, err);
  if (st) return st;
  shape_t *o = &c->out_shape[0];
  const shape_t *s = &c->in_shape[0];
  o->ndim = 0;
  for (int d = 0; d < s->ndim; d++) {
    if (c->pv[R_KEEPDIMS].i)
      o->dim[o->ndim++] = red[d] ? 1 : s->dim[d];
    else if (!red[d])
      o->dim[o->ndim++] = s->dim[d];
  }
  if (!c->pv[R_KEEPDIMS].i && o->ndim == 0) o->ndim = 1, o->dim[0] = 1;
  c->nout = 1;
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_reduce) {
  FWD_UNUSED;
  bool red[MXCTS_ORACLE_MAX_NDIM];
  reduced_axes(c, red, NULL);
  const shape_t *s = &c->in_shape[0];
  /* stride of each input axis in the output (0 for reduced axes) */
  int64_t ost[MXCTS_ORACLE_MAX_NDIM], ist[MXCTS_ORACLE_MAX_NDIM], m = 1;
  for (int d = s->ndim - 1; d >= 0; d--) {
    ost[d] = red[d] ? 0 : m;
    if (!red[d]) m *= s->dim[d];
  }
  mxcts__oracle_strides(s, ist);
  const int64_t n = size_of(s), no = size_of(&c->out_shape[0]);
  for (int64_t o = 0; o < no; o++) out[0][o] = 0;
  for (int64_t j = 0; j < n; j++) {
    int64_t o = 0;
    for (int d = 0; d < s->ndim; d++) o += j / ist[d] % s->dim[d] * ost[d];
    out[0][o] += in[0][j];
  }
  if (strcmp(c->op, "mean") == 0 && no > 0 && n > 0)
    for (int64_t o = 0; o < no; o++) out[0][o] /= (double)(n / no);
}

/* ------------------------------------------------------------ dot */

static const struct mxcts_oracle_field dot_fields[] = {
    {"transpose_a", MXCTS_ORACLE_P_BOOL, "False", NULL},
    {"transpose_b", MXCTS_ORACLE_P_BOOL, "False", NULL},
    {"forward_stype", MXCTS_ORACLE_P_STRING, "None", NULL},
};

/* op(lhs) is m x k, op(rhs) k x n. */
static void dot_dims(const struct mxcts_oracle_call *c, int64_t *m, int64_t *k, int64_t *n) {
  const shape_t *l = &c->in_shape[0], *r = &c->in_shape[1];
  const bool ta = c->pv[0].i, tb = c->pv[1].i;
  *k = ta ? l->dim[0] : l->dim[l->ndim - 1];
  *m = ta ? mxcts__oracle_prod(l, 1, l->ndim) : mxcts__oracle_prod(l, 0, l->ndim - 1);
  *n = tb ? mxcts__oracle_prod(r, 0, r->ndim - 1) : mxcts__oracle_prod(r, 1, r->ndim);
}

PREP(prep_dot) {
  int st = mxcts__oracle_want_nin(c, 2, err);
  if (st) return st;
  const shape_t *l = &c->in_shape[0], *r = &c->in_shape[1];
  const bool ta = c->pv[0].i, tb = c->pv[1].i;
  char a[96], b[96];
  mxcts_oracle_shape_str(l, a, sizeof a);
  mxcts_oracle_shape_str(r, b, sizeof b);
  if (l->ndim == 0 || r->ndim == 0) return FAIL(MXCTS_ORACLE_EINVAL, "scalar operands (lhs %s, rhs %s)", a, b);
  const bool vec = l->ndim == 1 && r->ndim == 1;
  if (vec && (ta || tb)) return FAIL(MXCTS_ORACLE_EINVAL, "vectors cannot be transposed (lhs %s, rhs %s)", a, b);
  const int64_t kl = ta ? l->dim[0] : l->dim[l->ndim - 1], kr = tb ? r->dim[r->ndim - 1] : r->dim[0];
  if (kl != kr) return FAIL(MXCTS_ORACLE_EINVAL, "lhs %s and rhs %s do not contract", a, b);
  shape_t *o = &c->out_shape[0];
  o->ndim = 0;
  if (vec) {
    o->ndim = 1, o->dim[0] = 1;
  } else {
    if (l->ndim + r->ndim - 2 > MXCTS_ORACLE_MAX_NDIM)
      return FAIL(MXCTS_ORACLE_EINVAL, "lhs %s x rhs %s has too many dimensions", a, b);
    if (l->ndim > 1)
      for (int d = ta ? 1 : 0; d < (ta ? l->ndim : l->ndim - 1); d++) o->dim[o->ndim++] = l->dim[d];
    if (r->ndim > 1)
      for (int d = tb ? 0 : 1; d < (tb ? r->ndim - 1 : r->ndim); d++) o->dim[o->ndim++] = r->dim[d];
  }
  c->nout = 1;
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_dot) {
  FWD_UNUSED;
  const bool ta = c->pv[0].i, tb = c->pv[1].i;
  int64_t m, k, n;
  dot_dims(c, &m, &k, &n);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t p = 0; p < k; p++)
        s += in[0][ta ? p * m + i : i * k + p] * in[1][tb ? j * k + p : p * n + j];
      out[0][i * n + j] = s;
    }
}

/* ------------------------------------------------------------ Flatten, Reshape */

FWD(fwd_copy) {
  FWD_UNUSED;
  memcpy(out[0], in[0], (size_t)size_of(&c->in_shape[0]) * sizeof(double));
}

PREP(prep_flatten) {
  int st = mxcts__oracle_want_nin(c, 1, err);
  if (st) return st;
  const shape_t *s = &c->in_shape[0];
  if (s->ndim == 0) return FAIL(MXCTS_ORACLE_EINVAL, "data must have at least one dimension");
  c->nout = 1;
  c->out_shape[0] = (shape_t){2, {s->dim[0], mxcts__oracle_prod(s, 1, s->ndim)}};
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

enum { RS_SHAPE, RS_REVERSE, RS_TARGET, RS_KEEP };
static const struct mxcts_oracle_field reshape_fields[] = {
    [RS_SHAPE] = {"shape", MXCTS_ORACLE_P_TUPLE, "()", NULL},
    [RS_REVERSE] = {"reverse", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [RS_TARGET] = {"target_shape", MXCTS_ORACLE_P_TUPLE, "()", NULL},
    [RS_KEEP] = {"keep_highest", MXCTS_ORACLE_P_BOOL, "False", NULL},
};

static void flip_dims(int64_t *v, int n) {
  for (int i = 0, j = n - 1; i < j; i++, j--) {
    int64_t t = v[i];
    v[i] = v[j], v[j] = t;
  }
}

PREP(prep_reshape) {
  int st = mxcts__oracle_want_nin(c, 1, err);
  if (st) return st;
  if (c->pv[RS_TARGET].n > 0 || c->pv[RS_KEEP].i)
    return FAIL(MXCTS_ORACLE_ENOTSUP, "the deprecated target_shape/keep_highest are not modelled");
  const int nq = c->pv[RS_SHAPE].n, nd = c->in_shape[0].ndim;
  if (nq == 0) return FAIL(MXCTS_ORACLE_EINVAL, "shape is empty");
  int64_t d[MXCTS_ORACLE_MAX_NDIM], q[MXCTS_ORACLE_MAX_NDIM], t[MXCTS_ORACLE_MAX_NDIM];
  memcpy(d, c->in_shape[0].dim, sizeof d);
  memcpy(q, c->pv[RS_SHAPE].t, sizeof q);
  if (c->pv[RS_REVERSE].i) flip_dims(d, nd), flip_dims(q, nq);
  int src = 0, nt = 0, fill_at = -1;
#define EMIT(v)                                                                           \
  do {                                                                                    \
    if (nt == MXCTS_ORACLE_MAX_NDIM) return FAIL(MXCTS_ORACLE_EINVAL, "too many output dims"); \
    t[nt++] = (v);                                                                        \
  } while (0)
  for (int i = 0; i < nq; i++) {
    const int64_t v = q[i];
    if (v > 0) {
      EMIT(v);
      src++;
    } else if (v == 0) {
      if (src >= nd) return FAIL(MXCTS_ORACLE_EINVAL, "0 at position %d has no input dim to copy", i);
      EMIT(d[src++]);
    } else if (v == -1) {
      if (fill_at >= 0) return FAIL(MXCTS_ORACLE_EINVAL, "more than one -1 in shape");
      fill_at = nt;
      EMIT(1);
      src++;
    } else if (v == -2) {
      while (src < nd) EMIT(d[src++]);
    } else if (v == -3) {
      if (src + 1 >= nd) return FAIL(MXCTS_ORACLE_EINVAL, "-3 needs two input dims");
      EMIT(d[src] * d[src + 1]);
      src += 2;
    } else if (v == -4) {
      if (i + 2 >= nq || src >= nd) return FAIL(MXCTS_ORACLE_EINVAL, "-4 needs an input dim and two values after it");
      int64_t whole = d[src++], a = q[++i], b = q[++i];
      if (a == -1 && b > 0) a = whole / b;
      if (b == -1 && a > 0) b = whole / a;
      if (a < 1 || b < 1 || a * b != whole)
        return FAIL(MXCTS_ORACLE_EINVAL, "-4 cannot split %lld into (%lld,%lld)", (long long)whole,
                    (long long)q[i - 1], (long long)q[i]);
      EMIT(a);
      EMIT(b);
    } else {
      return FAIL(MXCTS_ORACLE_EINVAL, "shape value %lld is not valid", (long long)v);
    }
  }
#undef EMIT
  const int64_t total = size_of(&c->in_shape[0]);
  int64_t known = 1;
  for (int i = 0; i < nt; i++) known *= t[i];
  if (fill_at >= 0) {
    if (known == 0 || total % known) return FAIL(MXCTS_ORACLE_EINVAL, "cannot infer the -1");
    t[fill_at] = total / known;
    known = total;
  }
  if (known != total) return FAIL(MXCTS_ORACLE_EINVAL, "the shape has %lld elements, the input %lld",
                                  (long long)known, (long long)total);
  if (c->pv[RS_REVERSE].i) flip_dims(t, nt);
  c->out_shape[0].ndim = nt;
  memcpy(c->out_shape[0].dim, t, (size_t)nt * sizeof t[0]);
  c->nout = 1;
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

/* ------------------------------------------------------------ transpose */

static const struct mxcts_oracle_field transpose_fields[] = {
    {"axes", MXCTS_ORACLE_P_TUPLE, "()", NULL},
};

/* out axis i is in axis perm[i]. */
static void perm_of(const struct mxcts_oracle_call *c, int *perm) {
  const int nd = c->in_shape[0].ndim;
  for (int i = 0; i < nd; i++) perm[i] = c->pv[0].n ? (int)c->pv[0].t[i] : nd - 1 - i;
}

PREP(prep_transpose) {
  int st = mxcts__oracle_want_nin(c, 1, err);
  if (st) return st;
  const shape_t *s = &c->in_shape[0];
  const struct mxcts_oracle_value *ax = &c->pv[0];
  if (ax->n && ax->n != s->ndim)
    return FAIL(MXCTS_ORACLE_EINVAL, "axes has %d entries for %d dimensions", ax->n, s->ndim);
  bool seen[MXCTS_ORACLE_MAX_NDIM] = {false};
  for (int i = 0; i < ax->n; i++) {
    if (ax->t[i] < 0 || ax->t[i] >= ax->n || seen[ax->t[i]])
      return FAIL(MXCTS_ORACLE_EINVAL, "axes is not a permutation of 0..%d", ax->n - 1);
    seen[ax->t[i]] = true;
  }
  int perm[MXCTS_ORACLE_MAX_NDIM];
  perm_of(c, perm);
  c->out_shape[0].ndim = s->ndim;
  for (int i = 0; i < s->ndim; i++) c->out_shape[0].dim[i] = s->dim[perm[i]];
  c->nout = 1;
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_transpose) {
  FWD_UNUSED;
  int perm[MXCTS_ORACLE_MAX_NDIM];
  perm_of(c, perm);
  const shape_t *s = &c->in_shape[0], *o = &c->out_shape[0];
  int64_t ist[MXCTS_ORACLE_MAX_NDIM], ost[MXCTS_ORACLE_MAX_NDIM];
  mxcts__oracle_strides(s, ist);
  mxcts__oracle_strides(o, ost);
  for (int64_t j = 0; j < size_of(o); j++) {
    int64_t src = 0;
    for (int d = 0; d < o->ndim; d++) src += j / ost[d] % o->dim[d] * ist[perm[d]];
    out[0][j] = in[0][src];
  }
}

/* ------------------------------------------------------------ Concat */

static const struct mxcts_oracle_field concat_fields[] = {
    {"num_args", MXCTS_ORACLE_P_INT, NULL, NULL},
    {"dim", MXCTS_ORACLE_P_INT, "1", NULL},
};

PREP(prep_concat) {
  const int64_t k = c->pv[0].i;
  if (k < 1 || k > MXCTS_ORACLE_MAX_INPUTS)
    return FAIL(MXCTS_ORACLE_EINVAL, "num_args=%lld: expected 1 to %d", (long long)k, MXCTS_ORACLE_MAX_INPUTS);
  int st = mxcts__oracle_want_nin(c, (int)k, err), axis = 0;
  if (st) return st;
  const shape_t *s0 = &c->in_shape[0];
  st = mxcts__oracle_axis(c, "dim", c->pv[1].i, s0->ndim, &axis, err);
  if (st) return st;
  shape_t o = *s0;
  for (int i = 1; i < c->nin; i++) {
    const shape_t *s = &c->in_shape[i];
    bool ok = s->ndim == s0->ndim;
    for (int d = 0; ok && d < s->ndim; d++) ok = d == axis || s->dim[d] == s0->dim[d];
    if (!ok) {
      char a[96], b[96];
      return FAIL(MXCTS_ORACLE_EINVAL, "input %d of shape %s does not fit input 0 of shape %s", i,
                  mxcts_oracle_shape_str(s, a, sizeof a), mxcts_oracle_shape_str(s0, b, sizeof b));
    }
    o.dim[axis] += s->dim[axis];
  }
  c->nout = 1;
  c->out_shape[0] = o;
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_concat) {
  FWD_UNUSED;
  const shape_t *o = &c->out_shape[0];
  int axis = (int)(c->pv[1].i < 0 ? c->pv[1].i + o->ndim : c->pv[1].i);
  const int64_t lead = mxcts__oracle_prod(o, 0, axis), trail = mxcts__oracle_prod(o, axis + 1, o->ndim);
  int64_t at = 0;
  for (int64_t l = 0; l < lead; l++)
    for (int i = 0; i < c->nin; i++) {
      const int64_t blk = c->in_shape[i].dim[axis] * trail;
      memcpy(out[0] + at, in[i] + l * blk, (size_t)blk * sizeof(double));
      at += blk;
    }
}

/* ------------------------------------------------------------ softmax, log_softmax */

enum { SM_AXIS, SM_TEMP, SM_DTYPE, SM_USE_LENGTH };
static const struct mxcts_oracle_field softmax_fields[] = {
    [SM_AXIS] = {"axis", MXCTS_ORACLE_P_INT, "-1", NULL},
    [SM_TEMP] = {"temperature", MXCTS_ORACLE_P_OPT_FLOAT, "None", NULL},
    [SM_DTYPE] = {"dtype", MXCTS_ORACLE_P_STRING, "None", NULL},
    [SM_USE_LENGTH] = {"use_length", MXCTS_ORACLE_P_BOOL, "False", NULL},
};

PREP(prep_softmax) {
  int st = mxcts__oracle_want_nin(c, 1, err), axis;
  if (st) return st;
  static const char *const dts[] = {"None", "float16", "float32", "float64"};
  bool dt_ok = false;
  for (int i = 0; i < 4; i++) dt_ok = dt_ok || strcmp(c->pv[SM_DTYPE].s, dts[i]) == 0;
  if (!dt_ok) return FAIL(MXCTS_ORACLE_EINVAL, "dtype='%s': expected None, float16, float32 or float64", c->pv[SM_DTYPE].s);
  if (c->pv[SM_USE_LENGTH].i) return FAIL(MXCTS_ORACLE_ENOTSUP, "use_length=True is not modelled");
  if (!c->pv[SM_TEMP].none && c->pv[SM_TEMP].f == 0) return FAIL(MXCTS_ORACLE_EINVAL, "temperature must not be 0");
  st = mxcts__oracle_axis(c, "axis", c->pv[SM_AXIS].i, c->in_shape[0].ndim, &axis, err);
  if (st) return st;
  c->nout = 1;
  c->out_shape[0] = c->in_shape[0];
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_softmax) {
  FWD_UNUSED;
  const shape_t *s = &c->in_shape[0];
  const int axis = (int)(c->pv[SM_AXIS].i < 0 ? c->pv[SM_AXIS].i + s->ndim : c->pv[SM_AXIS].i);
  const double temp = c->pv[SM_TEMP].none ? 1.0 : c->pv[SM_TEMP].f;
  const bool log_out = strcmp(c->op, "log_softmax") == 0;
  const int64_t outer = mxcts__oracle_prod(s, 0, axis), m = s->dim[axis],
                inner = mxcts__oracle_prod(s, axis + 1, s->ndim);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const double *x = in[0] + o * m * inner + i;
      double *y = out[0] + o * m * inner + i;
      double top = -INFINITY, sum = 0;
      for (int64_t j = 0; j < m; j++) top = fmax(top, x[j * inner] / temp);
      for (int64_t j = 0; j < m; j++) sum += exp(x[j * inner] / temp - top);
      for (int64_t j = 0; j < m; j++) {
        const double z = x[j * inner] / temp - top;
        y[j * inner] = log_out ? z - log(sum) : exp(z) / sum;
      }
    }
}

/* ------------------------------------------------------------ the table */

OP(op_sum, "sum", reduce_fields, NOF(reduce_fields), prep_reduce, fwd_reduce, NULL, "sum_axis", "_sparse_sum",
   NULL);
OP(op_mean, "mean", reduce_fields, NOF(reduce_fields), prep_reduce, fwd_reduce, NULL, "_sparse_mean", NULL);
OP(op_dot, "dot", dot_fields, NOF(dot_fields), prep_dot, fwd_dot, NULL, "_sparse_dot", NULL);
OP(op_flatten, "Flatten", NULL, 0, prep_flatten, fwd_copy, NULL, "flatten", "_npx_batch_flatten", NULL);
OP(op_reshape, "Reshape", reshape_fields, NOF(reshape_fields), prep_reshape, fwd_copy, NULL, "reshape", NULL);
OP(op_transpose, "transpose", transpose_fields, 1, prep_transpose, fwd_transpose, NULL, NULL);
OP(op_concat, "Concat", concat_fields, NOF(concat_fields), prep_concat, fwd_concat, NULL, "concat",
   "_sparse_concat", NULL);
OP(op_softmax, "softmax", softmax_fields, NOF(softmax_fields), prep_softmax, fwd_softmax, NULL,
   "_npx_softmax", NULL);
OP(op_log_softmax, "log_softmax", softmax_fields, NOF(softmax_fields), prep_softmax, fwd_softmax, NULL,
   "_npx_log_softmax", NULL);

const struct mxcts_oracle_opdef *const mxcts__oracle_ops_tensor[] = {
    &op_sum,    &op_mean,   &op_dot,     &op_flatten,     &op_reshape,
    &op_transpose, &op_concat, &op_softmax, &op_log_softmax, NULL,
};
