/*
 * Oracle ops over windows: Convolution (1-D, 2-D and 3-D, channel-first
 * layouts: MXNet 1.9.1's CPU convolution refuses channel-last ones) and
 * Pooling (also channel-last: NWC, NHWC, NDHWC), as direct loops over
 * output positions and taps (no im2col, no BLAS).  Both gradients are
 * derivatives (GRAD_FD).
 *
 * MXNet 1.9.1 semantics that matter here:
 *  - Convolution: out = (in + 2 pad - (dilate (kernel - 1) + 1)) / stride
 *    + 1 per spatial axis; weight (num_filter, channels / num_group,
 *    kernel...); filter f sees the channels of group f / (num_filter /
 *    num_group);
 *  - Pooling: valid convention out = 1 + (in + 2 pad - kernel) / stride,
 *    full 1 + ceil((in + 2 pad - kernel) / stride); max ignores padding;
 *    avg divides by the window clipped to the padded input
 *    (count_include_pad, the default) or to the input; sum divides by 1;
 *    lp takes (sum x^p)^(1/p) for p_value 1, 2, 3; global_pool pools each
 *    whole plane (kernel, stride and pad are ignored).
 * Windows that lie entirely in the padding are rejected (MXNet gives
 * -FLT_MAX or NaN there).
 */
#include <math.h>
#include <string.h>

#include "oracle/oracle_internal.h"

/* Spatial sizes padded in front to three axes (kernel 1, stride 1, pad 0,
 * dilate 1 on the missing ones). */
struct geom {
  int64_t n, c;
  int64_t in[3], out[3], k[3], s[3], p[3], d[3];
};

/* Fill an empty tuple parameter with `def` per kernel axis, or check it. */
static int complete(struct mxcts_oracle_call *c, int field, const char *name, int nk, int64_t def,
                    int64_t min, struct mxcts_oracle_error *err) {
  struct mxcts_oracle_value *v = &c->pv[field];
  if (v->n == 0) {
    v->n = nk;
    for (int i = 0; i < nk; i++) v->t[i] = def;
  }
  if (v->n != nk) return FAIL(MXCTS_ORACLE_EINVAL, "%s has %d entries for a %d-D kernel", name, v->n, nk);
  for (int i = 0; i < nk; i++)
    if (v->t[i] < min) return FAIL(MXCTS_ORACLE_EINVAL, "%s must be at least %lld in every axis", name, (long long)min);
  return 0;
}

static const char *const first_layouts[] = {"NCW", "NCHW", "NCDHW"}, *const last_layouts[] = {"NWC", "NHWC", "NDHWC"};

static bool channel_last(const char *layout) {
  for (int i = 0; i < 3; i++)
    if (strcmp(layout, last_layouts[i]) == 0) return true;
  return false;
}

/* layout: None or a layout of nsp spatial axes; channel-last ones only
 * where `last_ok` (Pooling; MXNet 1.9.1's CPU Convolution refuses them). */
static int check_layout(const struct mxcts_oracle_call *c, const char *layout, int nsp, bool last_ok,
                        struct mxcts_oracle_error *err) {
  if (strcmp(layout, "None") == 0) return 0;
  for (int i = 0; i < 3; i++) {
    const bool first = strcmp(layout, first_layouts[i]) == 0, last = strcmp(layout, last_layouts[i]) == 0;
    if (last && !last_ok)
      return FAIL(MXCTS_ORACLE_ENOTSUP, "layout=%s: channel-last convolution is not modelled", layout);
    if (first || last)
      return i + 1 == nsp ? 0 : FAIL(MXCTS_ORACLE_EINVAL, "layout=%s does not fit %d spatial axes", layout, nsp);
  }
  return FAIL(MXCTS_ORACLE_EINVAL, "layout='%s' is not a layout", layout);
}

/* ------------------------------------------------------------ Convolution */

enum { CV_KERNEL, CV_STRIDE, CV_DILATE, CV_PAD, CV_FILTERS, CV_GROUPS, CV_WORKSPACE, CV_NO_BIAS,
       CV_TUNE, CV_CUDNN_OFF, CV_LAYOUT };
static const struct mxcts_oracle_field conv_fields[] = {
    [CV_KERNEL] = {"kernel", MXCTS_ORACLE_P_TUPLE, NULL, NULL},
    [CV_STRIDE] = {"stride", MXCTS_ORACLE_P_TUPLE, "()", NULL},
    [CV_DILATE] = {"dilate", MXCTS_ORACLE_P_TUPLE, "()", NULL},
    [CV_PAD] = {"pad", MXCTS_ORACLE_P_TUPLE, "()", NULL},
    [CV_FILTERS] = {"num_filter", MXCTS_ORACLE_P_INT, NULL, NULL},
    [CV_GROUPS] = {"num_group", MXCTS_ORACLE_P_INT, "1", NULL},
    [CV_WORKSPACE] = {"workspace", MXCTS_ORACLE_P_INT, "1024", NULL},
    [CV_NO_BIAS] = {"no_bias", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [CV_TUNE] = {"cudnn_tune", MXCTS_ORACLE_P_STRING, "None", NULL},
    [CV_CUDNN_OFF] = {"cudnn_off", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [CV_LAYOUT] = {"layout", MXCTS_ORACLE_P_STRING, "None", NULL},
};

static void conv_geom(const struct mxcts_oracle_call *c, struct geom *g) {
  const shape_t *x = &c->in_shape[0];
  const int nk = c->pv[CV_KERNEL].n, off = 3 - nk;
  g->n = x->dim[0];
  g->c = x->dim[1];
  for (int i = 0; i < 3; i++) {
    const int j = i - off;
    g->in[i] = j < 0 ? 1 : x->dim[2 + j];
    g->k[i] = j < 0 ? 1 : c->pv[CV_KERNEL].t[j];
    g->s[i] = j < 0 ? 1 : c->pv[CV_STRIDE].t[j];
    g->p[i] = j < 0 ? 0 : c->pv[CV_PAD].t[j];
    g->d[i] = j < 0 ? 1 : c->pv[CV_DILATE].t[j];
    g->out[i] = (g->in[i] + 2 * g->p[i] - (g->d[i] * (g->k[i] - 1) + 1)) / g->s[i] + 1;
  }
}

PREP(prep_conv) {
  const int nk = c->pv[CV_KERNEL].n;
  char a[96], b[96];
  if (nk < 1 || nk > 3) return FAIL(MXCTS_ORACLE_EINVAL, "kernel must have 1, 2 or 3 entries, got %d", nk);
  int st = complete(c, CV_KERNEL, "kernel", nk, 1, 1, err);
  if (!st) st = complete(c, CV_STRIDE, "stride", nk, 1, 1, err);
  if (!st) st = complete(c, CV_DILATE, "dilate", nk, 1, 1, err);
  if (!st) st = complete(c, CV_PAD, "pad", nk, 0, 0, err);
  if (!st) st = check_layout(c, c->pv[CV_LAYOUT].s, nk, false, err);
  if (st) return st;
  static const char *const tunes[] = {"None", "off", "limited_workspace", "fastest"};
  bool tune_ok = false;
  for (int i = 0; i < 4; i++) tune_ok = tune_ok || strcmp(c->pv[CV_TUNE].s, tunes[i]) == 0;
  if (!tune_ok) return FAIL(MXCTS_ORACLE_EINVAL, "cudnn_tune='%s' is not valid", c->pv[CV_TUNE].s);
  const int64_t nf = c->pv[CV_FILTERS].i, ng = c->pv[CV_GROUPS].i;
  if (nf < 1 || ng < 1 || nf % ng)
    return FAIL(MXCTS_ORACLE_EINVAL, "num_filter=%lld and num_group=%lld: both positive, num_group "
                "dividing num_filter", (long long)nf, (long long)ng);
  st = mxcts__oracle_want_nin(c, c->pv[CV_NO_BIAS].i ? 2 : 3, err);
  if (st) return st;
  const shape_t *x = &c->in_shape[0];
  if (x->ndim != nk + 2)
    return FAIL(MXCTS_ORACLE_EINVAL, "data of shape %s: expected %d dimensions for a %d-D kernel",
                mxcts_oracle_shape_str(x, a, sizeof a), nk + 2, nk);
  if (x->dim[1] % ng) return FAIL(MXCTS_ORACLE_EINVAL, "num_group=%lld does not divide %lld channels",
                                  (long long)ng, (long long)x->dim[1]);
  struct geom g;
  conv_geom(c, &g);
  shape_t w = {nk + 2, {nf, x->dim[1] / ng}}, o = {nk + 2, {x->dim[0], nf}};
  for (int j = 0; j < nk; j++) {
    const int i = 3 - nk + j;
    if (g.d[i] * (g.k[i] - 1) + 1 > g.in[i] + 2 * g.p[i])
      return FAIL(MXCTS_ORACLE_EINVAL, "the dilated kernel is larger than the padded input in axis %d", j);
    w.dim[2 + j] = g.k[i];
    o.dim[2 + j] = g.out[i];
  }
  if (!mxcts_oracle_shape_equal(&c->in_shape[1], &w))
    return FAIL(MXCTS_ORACLE_EINVAL, "weight has shape %s, expected %s",
                mxcts_oracle_shape_str(&c->in_shape[1], a, sizeof a), mxcts_oracle_shape_str(&w, b, sizeof b));
  const shape_t bias = {1, {nf}};
  if (c->nin == 3 && !mxcts_oracle_shape_equal(&c->in_shape[2], &bias))
    return FAIL(MXCTS_ORACLE_EINVAL, "bias has shape %s, expected (%lld,)",
                mxcts_oracle_shape_str(&c->in_shape[2], a, sizeof a), (long long)nf);
  c->nout = 1;
  c->out_shape[0] = o;
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_conv) {
  FWD_UNUSED;
  struct geom g;
  conv_geom(c, &g);
  const int64_t nf = c->pv[CV_FILTERS].i, cg = g.c / c->pv[CV_GROUPS].i, fg = nf / c->pv[CV_GROUPS].i;
  const int64_t isz = g.in[0] * g.in[1] * g.in[2], osz = g.out[0] * g.out[1] * g.out[2],
                ksz = g.k[0] * g.k[1] * g.k[2];
  const double *x = in[0], *w = in[1];
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t f = 0; f < nf; f++) {
      const int64_t c0 = f / fg * cg; /* first channel of the filter's group */
      int64_t o[3], oj = 0;
      for (o[0] = 0; o[0] < g.out[0]; o[0]++)
        for (o[1] = 0; o[1] < g.out[1]; o[1]++)
          for (o[2] = 0; o[2] < g.out[2]; o[2]++, oj++) {
            double s = c->nin == 3 ? in[2][f] : 0.0;
            for (int64_t ci = 0; ci < cg; ci++) {
              const double *plane = x + (n * g.c + c0 + ci) * isz;
              const double *taps = w + (f * cg + ci) * ksz;
              int64_t t[3], tj = 0;
              for (t[0] = 0; t[0] < g.k[0]; t[0]++)
                for (t[1] = 0; t[1] < g.k[1]; t[1]++)
                  for (t[2] = 0; t[2] < g.k[2]; t[2]++, tj++) {
                    int64_t at = 0;
                    bool inside = true;
                    for (int i = 0; i < 3; i++) {
                      const int64_t pos = o[i] * g.s[i] - g.p[i] + t[i] * g.d[i];
                      inside = inside && pos >= 0 && pos < g.in[i];
                      at = at * g.in[i] + pos;
                    }
                    if (inside) s += plane[at] * taps[tj];
                  }
            }
            out[0][(n * nf + f) * osz + oj] = s;
          }
    }
}

/* ------------------------------------------------------------ Pooling */

enum { PL_KERNEL, PL_TYPE, PL_GLOBAL, PL_CUDNN_OFF, PL_CONVENTION, PL_STRIDE, PL_PAD, PL_P_VALUE,
       PL_INCLUDE_PAD, PL_LAYOUT };
enum { POOL_MAX, POOL_AVG, POOL_SUM, POOL_LP };
static const char *const pool_types[] = {"max", "avg", "sum", "lp", NULL};
enum { CONV_VALID, CONV_FULL, CONV_SAME };
static const char *const conventions[] = {"valid", "full", "same", NULL};
static const struct mxcts_oracle_field pool_fields[] = {
    [PL_KERNEL] = {"kernel", MXCTS_ORACLE_P_TUPLE, "()", NULL},
    [PL_TYPE] = {"pool_type", MXCTS_ORACLE_P_ENUM, "max", pool_types},
    [PL_GLOBAL] = {"global_pool", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [PL_CUDNN_OFF] = {"cudnn_off", MXCTS_ORACLE_P_BOOL, "False", NULL},
    [PL_CONVENTION] = {"pooling_convention", MXCTS_ORACLE_P_ENUM, "valid", conventions},
    [PL_STRIDE] = {"stride", MXCTS_ORACLE_P_TUPLE, "()", NULL},
    [PL_PAD] = {"pad", MXCTS_ORACLE_P_TUPLE, "()", NULL},
    [PL_P_VALUE] = {"p_value", MXCTS_ORACLE_P_OPT_INT, "None", NULL},
    [PL_INCLUDE_PAD] = {"count_include_pad", MXCTS_ORACLE_P_OPT_BOOL, "None", NULL},
    [PL_LAYOUT] = {"layout", MXCTS_ORACLE_P_STRING, "None", NULL},
};

/* Where data's spatial axis j and its channel axis are. */
static int pool_spatial(const struct mxcts_oracle_call *c, int j) {
  return channel_last(c->pv[PL_LAYOUT].s) ? 1 + j : 2 + j;
}
static int pool_channel(const struct mxcts_oracle_call *c) {
  return channel_last(c->pv[PL_LAYOUT].s) ? c->in_shape[0].ndim - 1 : 1;
}

static void pool_geom(const struct mxcts_oracle_call *c, struct geom *g) {
  const shape_t *x = &c->in_shape[0];
  const int nsp = x->ndim - 2, off = 3 - nsp;
  const bool global = c->pv[PL_GLOBAL].i, full = c->pv[PL_CONVENTION].i == CONV_FULL;
  g->n = x->dim[0];
  g->c = x->dim[pool_channel(c)];
  for (int i = 0; i < 3; i++) {
    const int j = i - off;
    g->in[i] = j < 0 ? 1 : x->dim[pool_spatial(c, j)];
    g->d[i] = 1;
    if (j < 0 || global) {
      g->k[i] = g->in[i], g->s[i] = 1, g->p[i] = 0, g->out[i] = 1;
      continue;
    }
    g->k[i] = c->pv[PL_KERNEL].t[j];
    g->s[i] = c->pv[PL_STRIDE].t[j];
    g->p[i] = c->pv[PL_PAD].t[j];
    const int64_t span = g->in[i] + 2 * g->p[i] - g->k[i];
    g->out[i] = 1 + (full ? (span + g->s[i] - 1) / g->s[i] : span / g->s[i]);
  }
}

/* Window of output position o along axis i: [lo, hi) in the padded input
 * clipped at in + pad (its size counts for count_include_pad), and
 * [clo, chi) clipped to the input. */
static void window(const struct geom *g, int i, int64_t o, int64_t *lo, int64_t *hi, int64_t *clo,
                   int64_t *chi) {
  *lo = o * g->s[i] - g->p[i];
  *hi = *lo + g->k[i] < g->in[i] + g->p[i] ? *lo + g->k[i] : g->in[i] + g->p[i];
  *clo = *lo > 0 ? *lo : 0;
  *chi = *hi < g->in[i] ? *hi : g->in[i];
}

PREP(prep_pool) {
  int st = mxcts__oracle_want_nin(c, 1, err);
  if (st) return st;
  const shape_t *x = &c->in_shape[0];
  char a[96];
  if (x->ndim < 3 || x->ndim > 5)
    return FAIL(MXCTS_ORACLE_EINVAL, "data of shape %s: expected 3 to 5 dimensions", mxcts_oracle_shape_str(x, a, sizeof a));
  const int nsp = x->ndim - 2;
  if (c->pv[PL_CONVENTION].i == CONV_SAME)
    return FAIL(MXCTS_ORACLE_ENOTSUP, "pooling_convention=same is not modelled");
  st = check_layout(c, c->pv[PL_LAYOUT].s, nsp, true, err);
  if (st) return st;
  const int64_t type = c->pv[PL_TYPE].i;
  if (type == POOL_LP && (c->pv[PL_P_VALUE].none || c->pv[PL_P_VALUE].i < 1 || c->pv[PL_P_VALUE].i > 3))
    return FAIL(MXCTS_ORACLE_EINVAL, "pool_type=lp needs p_value 1, 2 or 3");
  if (!c->pv[PL_GLOBAL].i) {
    if (c->pv[PL_KERNEL].n != nsp)
      return FAIL(MXCTS_ORACLE_EINVAL, "kernel has %d entries for %d spatial axes", c->pv[PL_KERNEL].n, nsp);
    st = complete(c, PL_KERNEL, "kernel", nsp, 1, 1, err);
    if (!st) st = complete(c, PL_STRIDE, "stride", nsp, 1, 1, err);
    if (!st) st = complete(c, PL_PAD, "pad", nsp, 0, 0, err);
    if (st) return st;
    for (int j = 0; j < nsp; j++)
      if (c->pv[PL_KERNEL].t[j] > x->dim[pool_spatial(c, j)] + 2 * c->pv[PL_PAD].t[j])
        return FAIL(MXCTS_ORACLE_EINVAL, "kernel exceeds the padded input in axis %d", j);
  }
  struct geom g;
  pool_geom(c, &g);
  for (int i = 0; i < 3; i++)
    for (int64_t o = 0; o < g.out[i]; o++) {
      int64_t lo, hi, clo, chi;
      window(&g, i, o, &lo, &hi, &clo, &chi);
      if (hi <= lo || chi <= clo) /* MXNet 1.9.1 accepts it: an output of no input is not modelled */
        return FAIL(MXCTS_ORACLE_ENOTSUP, "the window of output %lld in axis %d covers no input",
                    (long long)o, i - (3 - nsp));
    }
  c->nout = 1;
  c->out_shape[0] = *x;
  for (int j = 0; j < nsp; j++) c->out_shape[0].dim[pool_spatial(c, j)] = g.out[3 - nsp + j];
  c->grad = MXCTS_ORACLE_GRAD_FD;
  return 0;
}

FWD(fwd_pool) {
  FWD_UNUSED;
  struct geom g;
  pool_geom(c, &g);
  const int64_t type = c->pv[PL_TYPE].i, pv = type == POOL_LP ? c->pv[PL_P_VALUE].i : 1;
  const bool include_pad = c->pv[PL_INCLUDE_PAD].none || c->pv[PL_INCLUDE_PAD].i;
  const int64_t isz = g.in[0] * g.in[1] * g.in[2], osz = g.out[0] * g.out[1] * g.out[2];
  /* element (image n, channel ch, spatial position sp) of a plane of sz
   * positions sits at (n C + ch) sz + sp channel-first, (n sz + sp) C + ch
   * channel-last */
  const bool last = channel_last(c->pv[PL_LAYOUT].s);
  for (int64_t plane = 0; plane < g.n * g.c; plane++) {
    const int64_t n = plane / g.c, ch = plane % g.c;
    const int64_t x0 = last ? n * isz * g.c + ch : plane * isz, xs = last ? g.c : 1;
    const int64_t y0 = last ? n * osz * g.c + ch : plane * osz, ys = last ? g.c : 1;
    const double *x = in[0] + x0;
    int64_t o[3], oj = 0;
    for (o[0] = 0; o[0] < g.out[0]; o[0]++)
      for (o[1] = 0; o[1] < g.out[1]; o[1]++)
        for (o[2] = 0; o[2] < g.out[2]; o[2]++, oj++) {
          int64_t lo[3], hi[3], clo[3], chi[3], full = 1, clipped = 1;
          for (int i = 0; i < 3; i++) {
            window(&g, i, o[i], &lo[i], &hi[i], &clo[i], &chi[i]);
            full *= hi[i] - lo[i];
            clipped *= chi[i] - clo[i];
          }
          double acc = type == POOL_MAX ? -INFINITY : 0.0;
          for (int64_t a = clo[0]; a < chi[0]; a++)
            for (int64_t b = clo[1]; b < chi[1]; b++)
              for (int64_t e = clo[2]; e < chi[2]; e++) {
                const double v = x[((a * g.in[1] + b) * g.in[2] + e) * xs];
                if (type == POOL_MAX)
                  acc = v > acc ? v : acc;
                else
                  acc += pv == 1 ? v : pv == 2 ? v * v : v * v * v;
              }
          if (type == POOL_AVG) acc /= (double)(include_pad ? full : clipped);
          if (type == POOL_LP) acc = pv == 2 ? sqrt(acc) : pv == 3 ? cbrt(acc) : acc;
          out[0][y0 + oj * ys] = acc;
        }
  }
}

/* ------------------------------------------------------------ the table */

OP(op_conv, "Convolution", conv_fields, NOF(conv_fields), prep_conv, fwd_conv, NULL, "_npx_convolution", NULL);
OP(op_pool, "Pooling", pool_fields, NOF(pool_fields), prep_pool, fwd_pool, NULL, "_npx_pooling", NULL);

const struct mxcts_oracle_opdef *const mxcts__oracle_ops_conv[] = {&op_conv, &op_pool, NULL};
