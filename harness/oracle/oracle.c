/*
 * The oracle's core: op lookup, prepare, forward/backward dispatch, finite
 * differences, the case table's accessors, the input generator, the
 * comparison routine and the training-mode Dropout check.  The ops live in
 * oracle_elemwise.c, oracle_tensor.c, oracle_nn.c and oracle_conv.c, the
 * parameter parser in oracle_params.c, the cases in oracle_cases.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "oracle/oracle_internal.h"

/* ------------------------------------------------------------ shapes */

int64_t mxcts_oracle_shape_size(const struct mxcts_oracle_shape *s) {
  int64_t n = 1;
  for (int d = 0; d < s->ndim; d++) n *= s->dim[d];
  return n;
}

bool mxcts_oracle_shape_equal(const struct mxcts_oracle_shape *a, const struct mxcts_oracle_shape *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->dim[d] != b->dim[d]) return false;
  return true;
}

const char *mxcts_oracle_shape_str(const struct mxcts_oracle_shape *s, char *buf, size_t size) {
  size_t at = 0;
  if (!size) return buf;
  buf[0] = '\0';
  at += (size_t)snprintf(buf, size, "(");
  for (int d = 0; d < s->ndim && at < size; d++)
    at += (size_t)snprintf(buf + at, size - at, "%s%lld", d ? "," : "", (long long)s->dim[d]);
  if (at < size) snprintf(buf + at, size - at, "%s)", s->ndim == 1 ? "," : "");
  return buf;
}

/* ------------------------------------------------------------ dtypes */

static const char *const dtype_names[MXCTS_ORACLE_NUM_DTYPES] = {
    [MXCTS_ORACLE_FLOAT32] = "float32", [MXCTS_ORACLE_FLOAT64] = "float64", [MXCTS_ORACLE_FLOAT16] = "float16",
    [MXCTS_ORACLE_UINT8] = "uint8",     [MXCTS_ORACLE_INT32] = "int32",     [MXCTS_ORACLE_INT8] = "int8",
};

const char *mxcts_oracle_dtype_name(int dtype) {
  return dtype >= 0 && dtype < MXCTS_ORACLE_NUM_DTYPES ? dtype_names[dtype] : NULL;
}

int mxcts_oracle_dtype_code(const char *name) {
  for (int d = 0; name && d < MXCTS_ORACLE_NUM_DTYPES; d++)
    if (strcmp(name, dtype_names[d]) == 0) return d;
  return -1;
}

uint16_t mxcts_oracle_f16_bits(double v) {
  const uint16_t sign = signbit(v) ? 0x8000u : 0u;
  const double a = fabs(v);
  if (isnan(v)) return sign | 0x7e00u;
  if (a >= 65520.0) return sign | 0x7c00u; /* beyond the largest half, 65504, by half an ulp */
  if (a < 0x1p-14) return sign | (uint16_t)nearbyint(a * 0x1p24); /* subnormal: units of 2^-24 */
  int e;
  const double f = frexp(a, &e); /* a = f 2^e, f in [0.5, 1) */
  double m = nearbyint((2 * f - 1) * 1024); /* the 10 fraction bits, rounded to nearest even */
  int biased = e - 1 + 15;
  if (m == 1024) m = 0, biased++;
  if (biased >= 31) return sign | 0x7c00u;
  return sign | (uint16_t)(biased << 10) | (uint16_t)m;
}

double mxcts_oracle_f16_value(uint16_t bits) {
  const int e = bits >> 10 & 31, m = bits & 1023;
  const double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return bits & 0x8000u ? -v : v;
}

/* v toward zero, modulo 2^bits into [lo, lo + 2^bits). */
static double wrap(double v, int bits, double lo) {
  if (!isfinite(v)) return 0;
  const double span = ldexp(1.0, bits), t = trunc(v);
  double r = fmod(t - lo, span);
  if (r < 0) r += span;
  return r + lo;
}

double mxcts_oracle_round_to(int dtype, double v) {
  switch (dtype) {
    case MXCTS_ORACLE_FLOAT32: return (double)(float)v;
    case MXCTS_ORACLE_FLOAT16: return mxcts_oracle_f16_value(mxcts_oracle_f16_bits(v));
    case MXCTS_ORACLE_UINT8: return wrap(v, 8, 0);
    case MXCTS_ORACLE_INT8: return wrap(v, 8, -128);
    case MXCTS_ORACLE_INT32: return wrap(v, 32, -2147483648.0);
    default: return v;
  }
}

/* ------------------------------------------------------------ helpers for ops */

int mxcts__oracle_fail(struct mxcts_oracle_error *err, int code, const char *op, const char *fmt,
                       ...) {
  if (!err) return code;
  int at = snprintf(err->msg, sizeof err->msg, "%s: ", op ? op : "oracle");
  if (at < 0 || (size_t)at >= sizeof err->msg) return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg + at, sizeof err->msg - (size_t)at, fmt, ap);
  va_end(ap);
  return code;
}

int mxcts__oracle_want_nin(const struct mxcts_oracle_call *c, int nin, struct mxcts_oracle_error *err) {
  if (c->nin == nin) return 0;
  return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, c->op, "expected %d input(s), got %d", nin,
                            c->nin);
}

int mxcts__oracle_want_same(const struct mxcts_oracle_call *c, int i, int j,
                            struct mxcts_oracle_error *err) {
  if (mxcts_oracle_shape_equal(&c->in_shape[i], &c->in_shape[j])) return 0;
  char a[96], b[96];
  return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, c->op, "input %d has shape %s, input %d %s", i,
                            mxcts_oracle_shape_str(&c->in_shape[i], a, sizeof a), j,
                            mxcts_oracle_shape_str(&c->in_shape[j], b, sizeof b));
}

int mxcts__oracle_axis(const struct mxcts_oracle_call *c, const char *what, int64_t a, int ndim,
                       int *out, struct mxcts_oracle_error *err) {
  int64_t v = a < 0 ? a + ndim : a;
  if (v < 0 || v >= ndim)
    return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, c->op, "%s %lld is out of range for %d dimension(s)",
                              what, (long long)a, ndim);
  *out = (int)v;
  return 0;
}

void mxcts__oracle_strides(const struct mxcts_oracle_shape *s, int64_t *st) {
  int64_t m = 1;
  for (int d = s->ndim - 1; d >= 0; d--) {
    st[d] = m;
    m *= s->dim[d];
  }
}

int64_t mxcts__oracle_prod(const struct mxcts_oracle_shape *s, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; d++) n *= s->dim[d];
  return n;
}

double mxcts__oracle_f32(double v) { return (double)(float)v; }

/* ------------------------------------------------------------ ops */

static const struct mxcts_oracle_opdef *const *groups(int g) {
  switch (g) {
    case 0: return mxcts__oracle_ops_elemwise;
    case 1: return mxcts__oracle_ops_tensor;
    case 2: return mxcts__oracle_ops_nn;
    case 3: return mxcts__oracle_ops_conv;
    default: return NULL;
  }
}

static const struct mxcts_oracle_opdef *find_def(const char *name) {
  if (!name) return NULL;
  for (int g = 0; groups(g); g++)
    for (const struct mxcts_oracle_opdef *const *d = groups(g); *d; d++) {
      if (strcmp((*d)->name, name) == 0) return *d;
      for (int a = 0; (*d)->aliases[a]; a++)
        if (strcmp((*d)->aliases[a], name) == 0) return *d;
    }
  return NULL;
}

int mxcts_oracle_num_ops(void) {
  int n = 0;
  for (int g = 0; groups(g); g++)
    for (const struct mxcts_oracle_opdef *const *d = groups(g); *d; d++) n++;
  return n;
}

const char *mxcts_oracle_op_name(int i) {
  for (int g = 0; groups(g); g++)
    for (const struct mxcts_oracle_opdef *const *d = groups(g); *d; d++)
      if (i-- == 0) return (*d)->name;
  return NULL;
}

const char *mxcts_oracle_canonical(const char *name) {
  const struct mxcts_oracle_opdef *d = find_def(name);
  return d ? d->name : NULL;
}

int mxcts_oracle_prepare(struct mxcts_oracle_call *call, const char *op, int nparams,
                         const char *const *keys, const char *const *vals, int nin,
                         const struct mxcts_oracle_shape *in_shapes, bool is_train,
                         struct mxcts_oracle_error *err) {
  memset(call, 0, sizeof *call);
  const struct mxcts_oracle_opdef *d = find_def(op);
  if (!d) return mxcts__oracle_fail(err, MXCTS_ORACLE_EUNKNOWN, op, "the oracle has no such op");
  call->def = d;
  call->op = d->name;
  call->is_train = is_train;
  call->out_dtype = MXCTS_ORACLE_SAME_DTYPE;
  if (nin < 0 || nin > MXCTS_ORACLE_MAX_INPUTS || (nin > 0 && !in_shapes))
    return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, d->name, "%d inputs: expected 0 to %d with shapes",
                              nin, MXCTS_ORACLE_MAX_INPUTS);
  call->nin = nin;
  for (int i = 0; i < nin; i++) {
    const struct mxcts_oracle_shape *s = &in_shapes[i];
    if (s->ndim < 0 || s->ndim > MXCTS_ORACLE_MAX_NDIM)
      return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, d->name, "input %d has %d dimensions", i,
                                s->ndim);
    for (int k = 0; k < s->ndim; k++)
      if (s->dim[k] < 0)
        return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, d->name, "input %d has a negative dimension", i);
    call->in_shape[i] = *s;
  }
  int st = mxcts__oracle_parse_params(call, nparams, keys, vals, err);
  if (!st) st = d->prepare(call, err);
  if (st) {
    const struct mxcts_oracle_call failed = {.def = d, .op = d->name, .out_dtype = MXCTS_ORACLE_SAME_DTYPE};
    *call = failed; /* nothing half-prepared escapes */
  }
  return st;
}

int mxcts_oracle_forward(const struct mxcts_oracle_call *call, const double *const *in,
                         const double *const *aux, double *const *out, double *const *aux_out,
                         double *const *mutated, struct mxcts_oracle_error *err) {
  if (!call || !call->def || call->nout < 1)
    return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, call ? call->op : NULL, "call is not prepared");
  call->def->forward(call, in, aux, out, aux_out, mutated);
  return 0;
}

int mxcts_oracle_backward(const struct mxcts_oracle_call *call, const double *const *in,
                          const double *const *aux, const double *const *head_grad,
                          double *const *grad, struct mxcts_oracle_error *err) {
  if (!call || !call->def || call->nout < 1)
    return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, call ? call->op : NULL, "call is not prepared");
  if (call->grad != MXCTS_ORACLE_GRAD_DIRECT || !call->def->backward)
    return mxcts__oracle_fail(err, MXCTS_ORACLE_ENOTSUP, call->op,
                              "the gradient is %s: use finite differences",
                              call->grad == MXCTS_ORACLE_GRAD_NONE ? "not defined" : "the derivative");
  call->def->backward(call, in, aux, head_grad, grad);
  return 0;
}

int mxcts_oracle_fd_grad(const struct mxcts_oracle_call *call, const double *const *in,
                         const double *const *aux, const double *const *head_grad,
                         unsigned which, double *const *grad, struct mxcts_oracle_error *err) {
  if (!call || !call->def || call->nout < 1)
    return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, call ? call->op : NULL, "call is not prepared");
  double *plus[MXCTS_ORACLE_MAX_OUTPUTS] = {NULL}, *minus[MXCTS_ORACLE_MAX_OUTPUTS] = {NULL};
  const double *ins[MXCTS_ORACLE_MAX_INPUTS];
  double *x = NULL;
  int64_t maxin = 0;
  int st = 0;
  for (int i = 0; i < call->nin; i++) {
    ins[i] = in[i];
    if (which >> i & 1u) {
      if (!grad[i])
        return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, call->op, "no gradient array for input %d", i);
      int64_t n = mxcts_oracle_shape_size(&call->in_shape[i]);
      if (n > maxin) maxin = n;
    }
  }
  x = malloc((size_t)(maxin ? maxin : 1) * sizeof *x);
  for (int k = 0; k < call->nout; k++) {
    size_t n = (size_t)mxcts_oracle_shape_size(&call->out_shape[k]);
    plus[k] = malloc((n ? n : 1) * sizeof(double));
    minus[k] = malloc((n ? n : 1) * sizeof(double));
    if (!plus[k] || !minus[k]) st = MXCTS_ORACLE_ENOMEM;
  }
  if (!x) st = MXCTS_ORACLE_ENOMEM;
  for (int i = 0; i < call->nin && !st; i++) {
    if (!(which >> i & 1u)) continue;
    const int64_t n = mxcts_oracle_shape_size(&call->in_shape[i]);
    memcpy(x, in[i], (size_t)n * sizeof *x);
    ins[i] = x;
    for (int64_t j = 0; j < n; j++) {
      const double v = x[j], h = ldexp(1.0, -17) * fmax(1.0, fabs(v));
      const double vp = v + h, vm = v - h;
      x[j] = vp;
      call->def->forward(call, ins, aux, plus, NULL, NULL);
      x[j] = vm;
      call->def->forward(call, ins, aux, minus, NULL, NULL);
      x[j] = v;
      double s = 0;
      for (int k = 0; k < call->nout; k++) {
        const int64_t m = mxcts_oracle_shape_size(&call->out_shape[k]);
        for (int64_t e = 0; e < m; e++) s += (plus[k][e] - minus[k][e]) * head_grad[k][e];
      }
      grad[i][j] = s / (vp - vm);
    }
    ins[i] = in[i];
  }
  for (int k = 0; k < call->nout; k++) free(plus[k]), free(minus[k]);
  free(x);
  if (st) return mxcts__oracle_fail(err, st, call->op, "out of memory for finite differences");
  return 0;
}

int mxcts_oracle_expected_grad(const struct mxcts_oracle_call *call, const double *const *in,
                               const double *const *aux, const double *const *head_grad,
                               unsigned which, double *const *grad,
                               struct mxcts_oracle_error *err) {
  if (!call || !call->def || call->nout < 1)
    return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, call ? call->op : NULL, "call is not prepared");
  if (call->grad == MXCTS_ORACLE_GRAD_FD) return mxcts_oracle_fd_grad(call, in, aux, head_grad, which, grad, err);
  if (call->grad != MXCTS_ORACLE_GRAD_DIRECT)
    return mxcts__oracle_fail(err, MXCTS_ORACLE_ENOTSUP, call->op, "the op has no gradient");
  double *sel[MXCTS_ORACLE_MAX_INPUTS] = {NULL};
  for (int i = 0; i < call->nin; i++) sel[i] = (which >> i & 1u) ? grad[i] : NULL;
  return mxcts_oracle_backward(call, in, aux, head_grad, sel, err);
}

/* ------------------------------------------------------------ cases */

int mxcts_oracle_num_cases(void) { return mxcts__oracle_ncases; }

const struct mxcts_oracle_case *mxcts_oracle_case_at(int i) {
  return i >= 0 && i < mxcts__oracle_ncases ? &mxcts__oracle_cases[i] : NULL;
}

const struct mxcts_oracle_case *mxcts_oracle_cases_for(const char *op, int *count) {
  const char *name = mxcts_oracle_canonical(op);
  *count = 0;
  if (!name) return NULL;
  int first = -1;
  for (int i = 0; i < mxcts__oracle_ncases; i++)
    if (strcmp(mxcts__oracle_cases[i].op, name) == 0) {
      if (first < 0) first = i;
      if (i == first + *count) ++*count; /* the table keeps an op's cases together */
    }
  return first < 0 ? NULL : &mxcts__oracle_cases[first];
}

int mxcts_oracle_case_params(const struct mxcts_oracle_case *c, const char **keys, const char **vals) {
  int n = 0;
  while (n < MXCTS_ORACLE_MAX_CASE_PARAMS && c->params[n].key) {
    if (keys) keys[n] = c->params[n].key;
    if (vals) vals[n] = c->params[n].val;
    n++;
  }
  return n;
}

int mxcts_oracle_prepare_case(struct mxcts_oracle_call *call, const struct mxcts_oracle_case *c,
                              struct mxcts_oracle_error *err) {
  const char *keys[MXCTS_ORACLE_MAX_CASE_PARAMS], *vals[MXCTS_ORACLE_MAX_CASE_PARAMS];
  int n = mxcts_oracle_case_params(c, keys, vals);
  return mxcts_oracle_prepare(call, c->op, n, keys, vals, c->nin, c->in_shapes, c->is_train, err);
}

struct mxcts_oracle_tol mxcts_oracle_case_tol(const struct mxcts_oracle_case *c, int dtype,
                                              bool backward) {
  static const struct mxcts_oracle_tol defaults[2][2] = {
      {{1e-4, 1e-5}, {1e-9, 1e-12}}, /* forward: float32, float64 */
      {{1e-3, 1e-4}, {1e-6, 1e-8}},  /* backward */
  };
  if (c->exact || (dtype != MXCTS_ORACLE_FLOAT32 && dtype != MXCTS_ORACLE_FLOAT64))
    return (struct mxcts_oracle_tol){0, 0};
  const int d = dtype == MXCTS_ORACLE_FLOAT64 ? 1 : 0;
  struct mxcts_oracle_tol t = backward ? c->bwd_tol[d] : c->fwd_tol[d];
  if (t.rtol == 0) t.rtol = defaults[backward][d].rtol;
  if (t.atol == 0) t.atol = defaults[backward][d].atol;
  return t;
}

/* ------------------------------------------------------------ random inputs */

void mxcts_oracle_rng_seed(struct mxcts_oracle_rng *r, uint64_t seed) { r->state = seed; }

void mxcts_oracle_fill_values(const struct mxcts_oracle_fill *f, double *x, int64_t n, int dtype,
                              struct mxcts_oracle_rng *r) {
  const bool dflt = f->lo == 0 && f->hi == 0;
  double lo = f->lo, hi = f->hi;
  switch (f->kind) {
    case MXCTS_ORACLE_FILL_AWAY:
      if (dflt) lo = 0.1, hi = 1.0;
      for (int64_t i = 0; i < n; i++) {
        double m = lo + (hi - lo) * mxcts_rng_uniform(&r->state);
        x[i] = (mxcts_rng_next(&r->state) >> 63) ? -m : m;
      }
      break;
    case MXCTS_ORACLE_FILL_INT: {
      const double first = ceil(lo), count = ceil(hi) - first;
      for (int64_t i = 0; i < n; i++)
        x[i] = count > 0 ? first + floor(count * mxcts_rng_uniform(&r->state)) : first;
      break;
    }
    case MXCTS_ORACLE_FILL_DISTINCT:
      if (dflt) lo = -1.0, hi = 1.0;
      for (int64_t i = 0; i < n; i++)
        x[i] = lo + ((double)i + 0.25 + 0.5 * mxcts_rng_uniform(&r->state)) * (hi - lo) / (double)n;
      for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int64_t j = (int64_t)(mxcts_rng_next(&r->state) % (uint64_t)(i + 1));
        double t = x[i];
        x[i] = x[j], x[j] = t;
      }
      break;
    case MXCTS_ORACLE_FILL_CONST:
      for (int64_t i = 0; i < n; i++) x[i] = lo;
      break;
    case MXCTS_ORACLE_FILL_SPECIAL: {
      const double d = dtype == MXCTS_ORACLE_FLOAT64 ? 0x1p-1070 : 0x1p-140;
      const double special[8] = {NAN, INFINITY, -INFINITY, -0.0, d, -d, 0.5, -1.5};
      for (int64_t i = 0; i < n; i++) x[i] = special[i % 8];
      break;
    }
    default: /* uniform */
      if (dflt) lo = -1.0, hi = 1.0;
      for (int64_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * mxcts_rng_uniform(&r->state);
      break;
  }
  if (dtype != MXCTS_ORACLE_FLOAT64)
    for (int64_t i = 0; i < n; i++) x[i] = mxcts_oracle_round_to(dtype, x[i]);
}

/* ------------------------------------------------------------ comparison */

/* g is NaN where w is NaN, or the same infinity. */
static bool same_nonfinite(double g, double w) { return isnan(w) ? isnan(g) : g == w; }

bool mxcts_oracle_compare(const double *got, const double *want, int64_t n, double rtol,
                          double atol, struct mxcts_oracle_cmp *r) {
  struct mxcts_oracle_cmp c = {.n = n, .worst = n > 0 ? 0 : -1};
  const bool tol_ok = isfinite(rtol) && isfinite(atol) && rtol >= 0 && atol >= 0;
  bool nonfinite = false;
  double worst_ratio = -1;
  for (int64_t i = 0; i < n; i++) {
    const double g = got[i], w = want[i];
    if (!isfinite(w)) { /* expected NaN, +Inf or -Inf: the same kind, or wrong */
      if (same_nonfinite(g, w)) continue;
      c.nbad++;
      if (!nonfinite) c.worst = i, nonfinite = true;
      continue;
    }
    if (!isfinite(g)) {
      c.nbad++;
      if (!nonfinite) c.worst = i, nonfinite = true;
      continue;
    }
    const double d = fabs(g - w), bound = atol + rtol * fabs(w);
    const double rel = w != 0 ? d / fabs(w) : (d == 0 ? 0 : INFINITY);
    if (d > c.max_abs) c.max_abs = d;
    if (rel > c.max_rel) c.max_rel = rel;
    if (!tol_ok || !(d <= bound)) c.nbad++;
    const double ratio = bound > 0 ? d / bound : (d == 0 ? 0 : INFINITY);
    if (!nonfinite && ratio > worst_ratio) worst_ratio = ratio, c.worst = i;
  }
  if (c.worst >= 0) c.got = got[c.worst], c.want = want[c.worst];
  c.pass = c.nbad == 0 && tol_ok;
  if (r) *r = c;
  return c.pass;
}

/* ------------------------------------------------------------ Dropout in training */

bool mxcts_oracle_dropout_check(double p, const double *x, const double *y, int64_t n,
                                double rtol, double atol, double max_z,
                                struct mxcts_oracle_dropout_report *r) {
  struct mxcts_oracle_dropout_report c = {.n = n, .bad = -1};
  const double keep = 1.0 - p, scale = keep > 0 ? 1.0 / keep : 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (y[i] == 0) continue;
    c.kept++;
    const double want = x[i] * scale;
    if (c.bad < 0 && !(keep > 0 && fabs(y[i] - want) <= atol + rtol * fabs(want)))
      c.bad = i, c.got = y[i], c.want = want;
  }
  c.expected = (double)n * keep;
  const double sd = sqrt((double)n * p * keep);
  const double diff = (double)c.kept - c.expected;
  c.z = sd > 0 ? diff / sd : (fabs(diff) < 0.5 ? 0.0 : INFINITY);
  c.pass = c.bad < 0 && p >= 0 && p <= 1 && fabs(c.z) <= max_z;
  if (r) *r = c;
  return c.pass;
}

void mxcts_oracle_dropout_grad(double p, const double *y, const double *head, double *grad,
                               int64_t n) {
  const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  for (int64_t i = 0; i < n; i++) grad[i] = y[i] != 0 ? head[i] * scale : 0.0;
}
