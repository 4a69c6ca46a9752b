/*
 * Oracle ops of neural-network layers and optimizers: FullyConnected,
 * SoftmaxOutput, the regression outputs (Linear, MAE, Logistic), Dropout,
 * BatchNorm, sgd_update, sgd_mom_update, adam_update.
 *
 * MXNet 1.9.1 semantics that matter here:
 *  - float parameters (grad_scale, ignore_label, smooth_alpha, p, momentum,
 *    the optimizers' lr, wd, ...) are C floats in MXNet: used as float(v);
 *  - SoftmaxOutput and the regression outputs ignore the head gradient and
 *    state their own (GRAD_DIRECT): SoftmaxOutput (y - onehot(label)) *
 *    grad_scale / valid, where valid is 1 (normalization null), the batch
 *    size (batch; the label count without multi_output), or the labels not
 *    equal to ignore_label (valid, at least 1); with multi_output the
 *    gradient is further divided by the spatial size unless normalization
 *    is valid; use_ignore zeroes the gradient of ignored positions; a
 *    label of data's shape is a probability target: (y - label) *
 *    grad_scale.  Regression: (f(y, label)) * grad_scale / (outputs per
 *    example).  Labels get a zero gradient;
 *  - BatchNorm normalises with the batch's biased variance in training
 *    (unless use_global_stats), else with the moving statistics; gamma is 1
 *    under fix_gamma; the moving statistics move by `momentum` once per
 *    training step;
 *  - Dropout is the identity outside training (mode=training) and random
 *    inside it (ENOTSUP here; see mxcts_oracle_dropout_check);
 *  - optimizer updates clip when clip_gradient >= 0: SGD clips
 *    rescale_grad * grad and applies weight decay outside the clip, Adam
 *    clips grad * rescale_grad + wd * weight; Adam has no bias correction.
 */
#include <math.h>
#include <string.h>

#include "oracle/oracle_internal.h"

static double f32(double v) { return mxcts__oracle_f32(v); }

static void zero(double *g, const shape_t *s) {
  if (g) memset(g, 0, (size_t)size_of(s) * sizeof *g);
}

/* ------------------------------------------------------------ FullyConnected */

enum { FC_HIDDEN, FC_NO_BIAS, FC_FLATTEN };
static const struct mxcts_oracle_field fc_fields[] = {
    [FC_HIDDEN] = {"num_hidden", MXCTS_ORACLE_P_INT, NULL, NULL},
    [FC_NO_BIAS] = {"no_bias", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [FC_FLATTEN] = {"flatten", MXCTS_ORACLE_P_BOOL, "True", NULL},
};

/* data as m rows of k values */
static void fc_dims(const struct mxcts_oracle_call *c, int64_t *m, int64_t *k) {
  const shape_t *d = &c->in_shape[0];
  if (c->pv[FC_FLATTEN].i)
    *m = d->dim[0], *k = mxcts__oracle_prod(d, 1, d->ndim);
  else
    *m = mxcts__oracle_prod(d, 0, d->ndim - 1), *k = d->dim[d->ndim - 1];
}

PREP(prep_fc) {
  const int64_t nh = c->pv[FC_HIDDEN].i;
  if (nh < 1) return FAIL(MXCTS_ORACLE_EINVAL, "num_hidden must be positive, got %lld", (long long)nh);
  int st = mxcts__oracle_want_nin(c, c->pv[FC_NO_BIAS].i ? 2 : 3, err);
  if (st) return st;
  const shape_t *d = &c->in_shape[0];
  if (d->ndim < 1) return FAIL(MXCTS_ORACLE_EINVAL, "data needs at least one dimension");
  int64_t m, k;
  fc_dims(c, &m, &k);
  const shape_t w = {2, {nh, k}}, b1 = {1, {nh}}, b2 = {2, {nh, 1}};
  char a[96], b[96];
  if (!mxcts_oracle_shape_equal(&c->in_shape[1], &w))
    return FAIL(MXCTS_ORACLE_EINVAL, "weight has shape %s, expected %s",
                mxcts_oracle_shape_str(&c->in_shape[1], a, sizeof a), mxcts_oracle_shape_str(&w, b, sizeof b));
  if (c->nin == 3 && !mxcts_oracle_shape_equal(&c->in_shape[2], &b1) &&
      !mxcts_oracle_shape_equal(&c->in_shape[2], &b2))
    return FAIL(MXCTS_ORACLE_EINVAL, "bias has shape %s, expected (%lld,)",
                mxcts_oracle_shape_str(&c->in_shape[2], a, sizeof a), (long long)nh);
  shape_t o = *d;
  if (c->pv[FC_FLATTEN].i)
    o = (shape_t){2, {d->dim[0], nh}};
  else
    o.dim[o.ndim - 1] = nh;
  c->nout = 1;
  c->out_shape[0] = o;
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_fc) {
  FWD_UNUSED;
  int64_t m, k;
  const int64_t n = c->pv[FC_HIDDEN].i;
  fc_dims(c, &m, &k);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = c->nin == 3 ? in[2][j] : 0.0;
      for (int64_t p = 0; p < k; p++) s += in[0][i * k + p] * in[1][j * k + p];
      out[0][i * n + j] = s;
    }
}

/* ------------------------------------------------------------ SoftmaxOutput */

enum { SO_SCALE, SO_IGNORE, SO_MULTI, SO_USE_IGNORE, SO_PRESERVE, SO_NORM, SO_OUT_GRAD, SO_SMOOTH };
enum { NORM_NULL, NORM_BATCH, NORM_VALID };
static const char *const norm_names[] = {"null", "batch", "valid", NULL};
static const struct mxcts_oracle_field so_fields[] = {
    [SO_SCALE] = {"grad_scale", MXCTS_ORACLE_P_FLOAT, "1", NULL},
    [SO_IGNORE] = {"ignore_label", MXCTS_ORACLE_P_FLOAT, "-1", NULL},
    [SO_MULTI] = {"multi_output", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [SO_USE_IGNORE] = {"use_ignore", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [SO_PRESERVE] = {"preserve_shape", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [SO_NORM] = {"normalization", MXCTS_ORACLE_P_ENUM, "null", norm_names},
    [SO_OUT_GRAD] = {"out_grad", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [SO_SMOOTH] = {"smooth_alpha", MXCTS_ORACLE_P_FLOAT, "0", NULL},
};

/* Softmax along the middle axis of (outer, k, inner). */
struct so_layout {
  int64_t outer, k, inner;
};

static struct so_layout so_layout(const struct mxcts_oracle_call *c) {
  const shape_t *d = &c->in_shape[0];
  const int64_t size = size_of(d);
  struct so_layout l = {d->dim[0], 0, 1};
  if (c->pv[SO_MULTI].i)
    l.k = d->dim[1], l.inner = mxcts__oracle_prod(d, 2, d->ndim);
  else if (c->pv[SO_PRESERVE].i)
    l.k = d->dim[d->ndim - 1], l.outer = mxcts__oracle_prod(d, 0, d->ndim - 1);
  else
    l.k = l.outer ? size / l.outer : 0;
  return l;
}

static bool prob_labels(const struct mxcts_oracle_call *c) {
  return mxcts_oracle_shape_equal(&c->in_shape[0], &c->in_shape[1]);
}

PREP(prep_softmax_output) {
  int st = mxcts__oracle_want_nin(c, 2, err);
  if (st) return st;
  if (c->pv[SO_OUT_GRAD].i) return FAIL(MXCTS_ORACLE_ENOTSUP, "out_grad=True is not modelled");
  if (c->pv[SO_SMOOTH].f < 0 || c->pv[SO_SMOOTH].f > 1)
    return FAIL(MXCTS_ORACLE_EINVAL, "smooth_alpha must be in [0, 1]");
  const shape_t *d = &c->in_shape[0];
  if (d->ndim < (c->pv[SO_MULTI].i ? 2 : 1))
    return FAIL(MXCTS_ORACLE_EINVAL, "data has too few dimensions");
  if (c->pv[SO_MULTI].i && c->pv[SO_SMOOTH].f != 0)
    return FAIL(MXCTS_ORACLE_ENOTSUP, "smooth_alpha with multi_output is not modelled");
  const struct so_layout l = so_layout(c);
  if (!prob_labels(c) && size_of(&c->in_shape[1]) != l.outer * l.inner) {
    char a[96], b[96];
    return FAIL(MXCTS_ORACLE_EINVAL, "label of shape %s does not fit data of shape %s",
                mxcts_oracle_shape_str(&c->in_shape[1], a, sizeof a), mxcts_oracle_shape_str(d, b, sizeof b));
  }
  c->nout = 1;
  c->out_shape[0] = *d;
  c->grad = MXCTS_ORACLE_GRAD_DIRECT;
  return 0;
}

FWD(fwd_softmax_output) {
  FWD_UNUSED;
  const struct so_layout l = so_layout(c);
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t i = 0; i < l.inner; i++) {
      const double *x = in[0] + o * l.k * l.inner + i;
      double *y = out[0] + o * l.k * l.inner + i, top = -INFINITY, sum = 0;
      for (int64_t j = 0; j < l.k; j++) top = fmax(top, x[j * l.inner]);
      for (int64_t j = 0; j < l.k; j++) sum += exp(x[j * l.inner] - top);
      for (int64_t j = 0; j < l.k; j++) y[j * l.inner] = exp(x[j * l.inner] - top) / sum;
    }
}

/* MXNet's static_cast<int> of a label value. */
static int64_t as_int(double v) { return (int64_t)trunc(v); }

BWD(bwd_softmax_output) {
  const shape_t *d = &c->in_shape[0];
  const int64_t n = size_of(d);
  double *y = grad[0];
  zero(grad[1], &c->in_shape[1]);
  if (!y) return;
  fwd_softmax_output(c, in, aux, &y, NULL, NULL); /* the gradient is built over y */
  const double gs = f32(c->pv[SO_SCALE].f);
  if (prob_labels(c)) {
    for (int64_t j = 0; j < n; j++) y[j] = (y[j] - in[1][j]) * gs;
    return;
  }
  const struct so_layout l = so_layout(c);
  const int64_t nlabel = l.outer * l.inner, ignore = as_int(f32(c->pv[SO_IGNORE].f));
  const bool multi = c->pv[SO_MULTI].i, use_ignore = c->pv[SO_USE_IGNORE].i;
  double valid = 1;
  if (c->pv[SO_NORM].i == NORM_BATCH) {
    valid = (double)(multi ? l.outer : nlabel);
  } else if (c->pv[SO_NORM].i == NORM_VALID) {
    int64_t v = 0;
    for (int64_t j = 0; j < nlabel; j++) v += as_int(in[1][j]) != ignore;
    valid = v ? (double)v : 1.0;
  }
  double scale = gs / valid;
  if (multi && c->pv[SO_NORM].i != NORM_VALID) scale /= (double)l.inner;
  const double alpha = f32(c->pv[SO_SMOOTH].f), off = l.k > 1 ? alpha / (double)(l.k - 1) : 0.0;
  (void)head;
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t i = 0; i < l.inner; i++) {
      const int64_t cls = as_int(in[1][o * l.inner + i]);
      const bool skip = use_ignore && cls == ignore;
      for (int64_t x = 0; x < l.k; x++) {
        double *g = &y[(o * l.k + x) * l.inner + i];
        double v = skip ? 0.0 : *g - (x == cls ? 1.0 - alpha : off);
        *g = v * scale;
      }
    }
}

/* ------------------------------------------------------------ regression outputs */

static const struct mxcts_oracle_field reg_fields[] = {
    {"grad_scale", MXCTS_ORACLE_P_FLOAT, "1", NULL},
};

PREP(prep_regression) {
  int st = mxcts__oracle_want_nin(c, 2, err);
  if (st) return st;
  const shape_t *d = &c->in_shape[0], *l = &c->in_shape[1];
  if (d->ndim < 1 || l->ndim < 1 || l->dim[0] != d->dim[0] || size_of(l) != size_of(d)) {
    char a[96], b[96];
    return FAIL(MXCTS_ORACLE_EINVAL, "label of shape %s does not fit data of shape %s",
                mxcts_oracle_shape_str(l, a, sizeof a), mxcts_oracle_shape_str(d, b, sizeof b));
  }
  c->nout = 1;
  c->out_shape[0] = *d;
  c->grad = MXCTS_ORACLE_GRAD_DIRECT;
  return 0;
}

static bool logistic(const struct mxcts_oracle_call *c) {
  return strcmp(c->op, "LogisticRegressionOutput") == 0;
}

FWD(fwd_regression) {
  FWD_UNUSED;
  const bool lg = logistic(c);
  for (int64_t j = 0; j < size_of(&c->in_shape[0]); j++)
    out[0][j] = lg ? 1.0 / (1.0 + exp(-in[0][j])) : in[0][j];
}

BWD(bwd_regression) {
  (void)aux, (void)head;
  zero(grad[1], &c->in_shape[1]);
  if (!grad[0]) return;
  const int64_t n = size_of(&c->in_shape[0]);
  const bool mae = strcmp(c->op, "MAERegressionOutput") == 0, lg = logistic(c);
  const double scale = f32(c->pv[0].f) / (double)(n / c->in_shape[1].dim[0]);
  for (int64_t j = 0; j < n; j++) {
    const double y = lg ? 1.0 / (1.0 + exp(-in[0][j])) : in[0][j], d = y - in[1][j];
    grad[0][j] = (mae ? (d > 0 ? 1.0 : -1.0) : d) * scale;
  }
}

/* ------------------------------------------------------------ Dropout */

enum { DO_P, DO_MODE, DO_AXES, DO_CUDNN_OFF };
enum { MODE_TRAINING, MODE_ALWAYS };
static const char *const dropout_modes[] = {"training", "always", NULL};
static const struct mxcts_oracle_field dropout_fields[] = {
    [DO_P] = {"p", MXCTS_ORACLE_P_FLOAT, "0.5", NULL},
    [DO_MODE] = {"mode", MXCTS_ORACLE_P_ENUM, "training", dropout_modes},
    [DO_AXES] = {"axes", MXCTS_ORACLE_P_TUPLE, "()", NULL},
    [DO_CUDNN_OFF] = {"cudnn_off", MXCTS_ORACLE_P_OPT_BOOL, "False", NULL},
};

PREP(prep_dropout) {
  int st = mxcts__oracle_want_nin(c, 1, err), ax;
  if (st) return st;
  const double p = c->pv[DO_P].f;
  if (!(p >= 0 && p <= 1)) return FAIL(MXCTS_ORACLE_EINVAL, "p must be in [0, 1], got %g", p);
  for (int i = 0; i < c->pv[DO_AXES].n; i++) {
    st = mxcts__oracle_axis(c, "axes entry", c->pv[DO_AXES].t[i], c->in_shape[0].ndim, &ax, err);
    if (st) return st;
  }
  if (f32(p) > 0 && (c->is_train || c->pv[DO_MODE].i == MODE_ALWAYS))
    return FAIL(MXCTS_ORACLE_ENOTSUP, "dropout is active (p=%g in %s): its output is random; check "
                "it with mxcts_oracle_dropout_check", p, c->is_train ? "training" : "mode=always");
  c->nout = 1;
  c->out_shape[0] = c->in_shape[0];
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_dropout) {
  FWD_UNUSED;
  memcpy(out[0], in[0], (size_t)size_of(&c->in_shape[0]) * sizeof(double));
}

/* ------------------------------------------------------------ BatchNorm */

enum { BN_EPS, BN_MOM, BN_FIX_GAMMA, BN_GLOBAL, BN_OUT_MEAN_VAR, BN_AXIS, BN_CUDNN_OFF, BN_MIN_CAL, BN_MAX_CAL };
static const struct mxcts_oracle_field bn_fields[] = {
    [BN_EPS] = {"eps", MXCTS_ORACLE_P_FLOAT, "0.0010000000474974513", NULL}, /* 1e-3f */
    [BN_MOM] = {"momentum", MXCTS_ORACLE_P_FLOAT, "0.9", NULL},
    [BN_FIX_GAMMA] = {"fix_gamma", MXCTS_ORACLE_P_BOOL, "True", NULL},
    [BN_GLOBAL] = {"use_global_stats", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [BN_OUT_MEAN_VAR] = {"output_mean_var", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [BN_AXIS] = {"axis", MXCTS_ORACLE_P_INT, "1", NULL},
    [BN_CUDNN_OFF] = {"cudnn_off", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [BN_MIN_CAL] = {"min_calib_range", MXCTS_ORACLE_P_OPT_FLOAT, "None", NULL},
    [BN_MAX_CAL] = {"max_calib_range", MXCTS_ORACLE_P_OPT_FLOAT, "None", NULL},
};

/* data as (outer, channels, inner) */
static void bn_layout(const struct mxcts_oracle_call *c, int64_t *outer, int64_t *ch, int64_t *inner) {
  const shape_t *d = &c->in_shape[0];
  const int ax = (int)(c->pv[BN_AXIS].i < 0 ? c->pv[BN_AXIS].i + d->ndim : c->pv[BN_AXIS].i);
  *outer = mxcts__oracle_prod(d, 0, ax);
  *ch = d->dim[ax];
  *inner = mxcts__oracle_prod(d, ax + 1, d->ndim);
}

PREP(prep_batchnorm) {
  int st = mxcts__oracle_want_nin(c, 3, err), ax;
  if (st) return st;
  if (c->pv[BN_OUT_MEAN_VAR].i)
    return FAIL(MXCTS_ORACLE_ENOTSUP, "output_mean_var=True is not modelled (MXNet's CPU kernel "
                                      "returns the inverse std as 'var')");
  if (c->pv[BN_EPS].f <= 0) return FAIL(MXCTS_ORACLE_EINVAL, "eps must be positive");
  st = mxcts__oracle_axis(c, "axis", c->pv[BN_AXIS].i, c->in_shape[0].ndim, &ax, err);
  if (st) return st;
  const shape_t ch = {1, {c->in_shape[0].dim[ax]}};
  for (int i = 1; i < 3; i++)
    if (!mxcts_oracle_shape_equal(&c->in_shape[i], &ch)) {
      char a[96], b[96];
      return FAIL(MXCTS_ORACLE_EINVAL, "%s has shape %s, expected %s", i == 1 ? "gamma" : "beta",
                  mxcts_oracle_shape_str(&c->in_shape[i], a, sizeof a), mxcts_oracle_shape_str(&ch, b, sizeof b));
    }
  c->nout = 1;
  c->out_shape[0] = c->in_shape[0];
  c->naux = 2;
  c->aux_shape[0] = c->aux_shape[1] = ch;
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_batchnorm) {
  FWD_UNUSED;
  int64_t outer, nc, inner;
  bn_layout(c, &outer, &nc, &inner);
  const bool batch = c->is_train && !c->pv[BN_GLOBAL].i, fix = c->pv[BN_FIX_GAMMA].i;
  const double eps = c->pv[BN_EPS].f, mom = f32(c->pv[BN_MOM].f), count = (double)(outer * inner);
  for (int64_t ch = 0; ch < nc; ch++) {
    double mean, var;
    if (batch) {
      double s = 0, q = 0;
      for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) s += in[0][(o * nc + ch) * inner + i];
      mean = s / count;
      for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
          const double v = in[0][(o * nc + ch) * inner + i] - mean;
          q += v * v;
        }
      var = q / count;
    } else {
      mean = aux[0][ch];
      var = aux[1][ch];
    }
    const double invstd = 1.0 / sqrt(var + eps), w = fix ? 1.0 : in[1][ch], b = in[2][ch];
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        const int64_t j = (o * nc + ch) * inner + i;
        out[0][j] = (in[0][j] - mean) * invstd * w + b;
      }
    for (int k = 0; aux_out && k < 2; k++) {
      if (!aux_out[k]) continue;
      const double stat = k == 0 ? mean : var;
      aux_out[k][ch] = batch ? aux[k][ch] * mom + stat * (1.0 - mom) : aux[k][ch];
    }
  }
}

/* ------------------------------------------------------------ optimizers */

enum { OPT_LR, OPT_WD, OPT_RESCALE, OPT_CLIP, OPT_LAZY, OPT_MOMENTUM };
enum { ADAM_BETA1 = OPT_MOMENTUM, ADAM_BETA2, ADAM_EPS };
#define COMMON_FIELDS                                               \
  [OPT_LR] = {"lr", MXCTS_ORACLE_P_FLOAT, NULL, NULL},              \
  [OPT_WD] = {"wd", MXCTS_ORACLE_P_FLOAT, "0", NULL},               \
  [OPT_RESCALE] = {"rescale_grad", MXCTS_ORACLE_P_FLOAT, "1", NULL}, \
  [OPT_CLIP] = {"clip_gradient", MXCTS_ORACLE_P_FLOAT, "-1", NULL}, \
  [OPT_LAZY] = {"lazy_update", MXCTS_ORACLE_P_BOOL, "True", NULL}
static const struct mxcts_oracle_field sgd_fields[] = {COMMON_FIELDS};
static const struct mxcts_oracle_field sgd_mom_fields[] = {
    COMMON_FIELDS, [OPT_MOMENTUM] = {"momentum", MXCTS_ORACLE_P_FLOAT, "0", NULL}};
static const struct mxcts_oracle_field adam_fields[] = {
    COMMON_FIELDS,
    [ADAM_BETA1] = {"beta1", MXCTS_ORACLE_P_FLOAT, "0.9", NULL},
    [ADAM_BETA2] = {"beta2", MXCTS_ORACLE_P_FLOAT, "0.999", NULL},
    [ADAM_EPS] = {"epsilon", MXCTS_ORACLE_P_FLOAT, "1e-8", NULL},
};

PREP(prep_optimizer) {
  const int nin = strcmp(c->op, "sgd_update") == 0 ? 2 : strcmp(c->op, "sgd_mom_update") == 0 ? 3 : 4;
  int st = mxcts__oracle_want_nin(c, nin, err);
  for (int i = 1; !st && i < nin; i++) st = mxcts__oracle_want_same(c, 0, i, err);
  if (st) return st;
  c->nout = 1;
  c->out_shape[0] = c->in_shape[0];
  c->nmutated = nin - 2;
  c->mutated[0] = 2, c->mutated[1] = 3;
  c->grad = MXCTS_ORACLE_GRAD_NONE;
  return 0;
}

static double clip(double v, double bound) { return v > bound ? bound : v < -bound ? -bound : v; }

FWD(fwd_optimizer) {
  FWD_UNUSED;
  const double lr = f32(c->pv[OPT_LR].f), wd = f32(c->pv[OPT_WD].f),
               rs = f32(c->pv[OPT_RESCALE].f), cl = f32(c->pv[OPT_CLIP].f);
  const int64_t n = size_of(&c->in_shape[0]);
  const double *w = in[0], *g = in[1];
  if (c->nin == 4) { /* adam_update */
    const double b1 = f32(c->pv[ADAM_BETA1].f), b2 = f32(c->pv[ADAM_BETA2].f),
                 eps = f32(c->pv[ADAM_EPS].f);
    for (int64_t i = 0; i < n; i++) {
      double gr = g[i] * rs + w[i] * wd;
      if (cl >= 0) gr = clip(gr, cl);
      const double m = b1 * in[2][i] + (1 - b1) * gr, v = b2 * in[3][i] + (1 - b2) * gr * gr;
      if (mutated && mutated[0]) mutated[0][i] = m;
      if (mutated && mutated[1]) mutated[1][i] = v;
      out[0][i] = w[i] - lr * m / (sqrt(v) + eps);
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    const double step = cl >= 0 ? clip(rs * g[i], cl) : rs * g[i];
    if (c->nin == 2) {
      out[0][i] = (1 - lr * wd) * w[i] - lr * step;
    } else {
      const double m = f32(c->pv[OPT_MOMENTUM].f) * in[2][i] - lr * wd * w[i] - lr * step;
      if (mutated && mutated[0]) mutated[0][i] = m;
      out[0][i] = w[i] + m;
    }
  }
}

/* ------------------------------------------------------------ the table */

OP(op_fc, "FullyConnected", fc_fields, NOF(fc_fields), prep_fc, fwd_fc, NULL, "_sparse_FullyConnected",
   "_npx_fully_connected", NULL);
OP(op_softmax_output, "SoftmaxOutput", so_fields, NOF(so_fields), prep_softmax_output, fwd_softmax_output,
   bwd_softmax_output, "Softmax", NULL);
OP(op_linear_reg, "LinearRegressionOutput", reg_fields, NOF(reg_fields), prep_regression, fwd_regression,
   bwd_regression, "_sparse_LinearRegressionOutput", NULL);
OP(op_mae_reg, "MAERegressionOutput", reg_fields, NOF(reg_fields), prep_regression, fwd_regression,
   bwd_regression, "_sparse_MAERegressionOutput", NULL);
OP(op_logistic_reg, "LogisticRegressionOutput", reg_fields, NOF(reg_fields), prep_regression, fwd_regression,
   bwd_regression, "_sparse_LogisticRegressionOutput", NULL);
OP(op_dropout, "Dropout", dropout_fields, NOF(dropout_fields), prep_dropout, fwd_dropout, NULL,
   "_npx_dropout", NULL);
OP(op_batchnorm, "BatchNorm", bn_fields, NOF(bn_fields), prep_batchnorm, fwd_batchnorm, NULL,
   "_npx_batch_norm", NULL);
OP(op_sgd, "sgd_update", sgd_fields, NOF(sgd_fields), prep_optimizer, fwd_optimizer, NULL,
   "_sparse_sgd_update", NULL);
OP(op_sgd_mom, "sgd_mom_update", sgd_mom_fields, NOF(sgd_mom_fields), prep_optimizer, fwd_optimizer, NULL,
   "_sparse_sgd_mom_update", NULL);
OP(op_adam, "adam_update", adam_fields, NOF(adam_fields), prep_optimizer, fwd_optimizer, NULL,
   "_sparse_adam_update", NULL);

const struct mxcts_oracle_opdef *const mxcts__oracle_ops_nn[] = {
    &op_fc,      &op_softmax_output, &op_linear_reg, &op_mae_reg, &op_logistic_reg,
    &op_dropout, &op_batchnorm,      &op_sgd,        &op_sgd_mom, &op_adam,
    NULL,
};
