/*
 * Pooling (1-D, 2-D and 3-D) and its gradient, with the semantics of
 * MXNet 1.9.1's native CPU operator (nn/pooling*, nn/pool.h); the code is
 * our own.  The helpers it shares with Convolution are in conv_common.h.
 *
 * Pooling follows pool.h window by window: max ignores padding and starts
 * from the dtype's lowest finite value, avg divides by the window clipped to
 * the padded input (count_include_pad) or to the input, Lp pooling takes
 * p = 1, 2 or 3, and the max gradient goes to the first element of the
 * window (row-major) that equals the output.
 *
 * float32 and float64 share one code path: values are loaded as double and
 * every arithmetic result is rounded back to the tensor's dtype, which for
 * + - * / and sqrt gives exactly float arithmetic.
 *
 * On GPUs (op/cuda/pooling.h), after the same checks, Pooling runs kernels
 * that compute the definition above, or cuDNN where it computes the same
 * (cudnn_off: never).
 */
#include "config.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op/conv_common.h"
#include "op/cuda/pooling.h"

/* ----------------------------------------------------------- Pooling */

enum { POOL_MAX, POOL_AVG, POOL_SUM, POOL_LP };
static const char *const pool_types[] = {"max", "avg", "sum", "lp", NULL};
enum { CONV_VALID, CONV_FULL, CONV_SAME };
static const char *const pool_conventions[] = {"valid", "full", "same", NULL};

struct pool_params {
  struct mxr_tuple kernel;
  int pool_type;
  bool global_pool, cudnn_off;
  int pooling_convention;
  struct mxr_tuple stride, pad;
  struct mxr_opt_int p_value;
  struct mxr_param_str count_include_pad, layout;
  /* set by pool_check */
  int include_pad; /* -1 (None: true), 0, 1 */
  int layout_id;   /* L_NONE: from the data's rank */
};

static const struct mxr_param_field pool_fields[] = {
    {"kernel", MXR_PARAM_TUPLE, offsetof(struct pool_params, kernel), "()", NULL},
    {"pool_type", MXR_PARAM_ENUM, offsetof(struct pool_params, pool_type), "max", pool_types},
    {"global_pool", MXR_PARAM_BOOL, offsetof(struct pool_params, global_pool), "False", NULL},
    {"cudnn_off", MXR_PARAM_BOOL, offsetof(struct pool_params, cudnn_off), "False", NULL},
    {"pooling_convention", MXR_PARAM_ENUM, offsetof(struct pool_params, pooling_convention),
     "valid", pool_conventions},
    {"stride", MXR_PARAM_TUPLE, offsetof(struct pool_params, stride), "()", NULL},
    {"pad", MXR_PARAM_TUPLE, offsetof(struct pool_params, pad), "()", NULL},
    {"p_value", MXR_PARAM_OPT_INT, offsetof(struct pool_params, p_value), "None", NULL},
    {"count_include_pad", MXR_PARAM_STRING, offsetof(struct pool_params, count_include_pad),
     "None", NULL},
    {"layout", MXR_PARAM_STRING, offsetof(struct pool_params, layout), "None", NULL},
};

/* dmlc's optional<bool>: none, true, false, 1, 0 in any case. */
static int parse_opt_bool(const char *op, const char *key, const char *text, int *out) {
  char t[MXR_PARAM_STRING_MAX];
  trimmed(text, t, sizeof t);
  for (char *c = t; *c; c++) *c = (char)tolower((unsigned char)*c);
  if (strcmp(t, "none") == 0) return *out = -1, 0;
  if (strcmp(t, "true") == 0 || strcmp(t, "1") == 0) return *out = 1, 0;
  if (strcmp(t, "false") == 0 || strcmp(t, "0") == 0) return *out = 0, 0;
  return mxr_set_error(MXR_EINVAL, "%s: parameter %s='%s' is not valid: expected True, False or None",
                       op, key, text);
}

static int pool_check(const char *op, void *params) {
  struct pool_params *p = params;
  char a[96];
  const int nk = p->kernel.n;
  int st = check_min(op, "kernel", &p->kernel, 1);
  if (!st) st = check_min(op, "stride", &p->stride, 1);
  if (!st) st = check_min(op, "pad", &p->pad, 0);
  if (!st) st = parse_opt_bool(op, "count_include_pad", p->count_include_pad.s, &p->include_pad);
  static const int all_layouts[] = {L_NCW, L_NCHW, L_NCDHW, L_NWC, L_NHWC, L_NDHWC};
  if (!st) st = parse_opt_choice(op, "layout", p->layout.s, layout_names, all_layouts, 6, &p->layout_id);
  if (st) return st;
  if (nk > 3 || (nk == 0 && !p->global_pool))
    return mxr_set_error(MXR_EINVAL, "%s: %dD pooling is not supported: kernel=%s needs 1, 2 or 3 "
                         "dimensions (or global_pool=True)", op, nk, tuple_str(&p->kernel, a, sizeof a));
  if (p->pooling_convention == CONV_SAME) {
    /* MXNet 1.9.1 checks pad[0], pad[1] and pad[2] == 0 whatever the rank,
     * so "same" works there only with pad=(0,0,0) given; so here too. */
    bool zero = p->pad.n >= 3;
    for (int i = 0; i < p->pad.n; i++) zero = zero && p->pad.v[i] == 0;
    if (!zero)
      return mxr_set_error(MXR_EINVAL, "%s: pooling_convention=same needs pad=(0,0,0) (MXNet 1.9.1 "
                           "reads three pad entries), got pad=%s", op, tuple_str(&p->pad, a, sizeof a));
    p->pad.n = 0;
  }
  if (nk > 0) {
    if (p->layout_id == L_NONE) p->layout_id = nk - 1; /* NCW, NCHW, NCDHW */
    if (!p->global_pool && layout_rank(p->layout_id) != nk)
      return mxr_set_error(MXR_EINVAL, "%s: layout=%s does not fit the %d-D kernel=%s", op,
                           layout_names[p->layout_id], nk, tuple_str(&p->kernel, a, sizeof a));
    st = complete_tuple(op, "stride", &p->stride, &p->kernel, 1);
    if (!st) st = complete_tuple(op, "pad", &p->pad, &p->kernel, 0);
    if (st && !p->global_pool) return st; /* global pooling ignores stride and pad */
  }
  if (p->pool_type == POOL_LP && !p->p_value.has)
    return mxr_set_error(MXR_EINVAL, "%s: pool_type=lp needs p_value (1, 2 or 3)", op);
  if (p->pool_type == POOL_LP && (p->p_value.value < 1 || p->p_value.value > 3))
    return mxr_set_error(MXR_EINVAL, "%s: p_value=%d is not supported (1, 2 or 3)", op,
                         p->p_value.value);
  return 0;
}

struct pool_geom {
  int nsp;
  bool last; /* channel-last layout */
  int64_t n, c;
  int64_t in[3], out[3], k[3], s[3], p[3];
  int64_t isz, osz;
};

/* Output extent of one spatial dimension, as MXNet computes it (the full
 * convention in float, like the original). */
static int64_t pool_extent(int convention, int nsp, int64_t in, int64_t k, int64_t s, int64_t pad) {
  if (convention == CONV_VALID) return 1 + (in + 2 * pad - k) / s;
  if (convention == CONV_SAME && nsp == 1) return (int64_t)ceilf((float)(in + 2 * pad) / (float)s);
  return 1 + (int64_t)ceilf((float)(in + 2 * pad - k) / (float)s);
}

static int pool_geometry(const struct pool_params *p, const struct mxr_shape *data,
                         struct pool_geom *g) {
  char a[96], b[96];
  const int nd = data->ndim;
  if (p->pooling_convention == CONV_SAME && nd != 3)
    return mxr_set_error(MXR_EINVAL, "Pooling: pooling_convention=same needs 3-D data (batch, "
                         "channel, x), got shape %s", mxr_shape_str(data, a, sizeof a));
  if (nd < 3 || nd > 5)
    return mxr_set_error(MXR_EINVAL, "Pooling: data must be 3-D, 4-D or 5-D (batch, channel and 1 "
                         "to 3 spatial dimensions), got shape %s", mxr_shape_str(data, a, sizeof a));
  const int nsp = nd - 2, off = 3 - nsp;
  if (!p->global_pool && p->kernel.n != nsp)
    return mxr_set_error(MXR_EINVAL, "Pooling: kernel=%s needs %d-D data, got shape %s",
                         tuple_str(&p->kernel, a, sizeof a), p->kernel.n + 2,
                         mxr_shape_str(data, b, sizeof b));
  const int layout = p->layout_id == L_NONE ? nsp - 1 : p->layout_id;
  if (layout_rank(layout) != nsp)
    return mxr_set_error(MXR_EINVAL, "Pooling: layout=%s does not fit data of shape %s",
                         layout_names[layout], mxr_shape_str(data, a, sizeof a));
  g->nsp = nsp;
  g->last = layout_channel_last(layout);
  struct mxr_shape d = g->last ? channel_first(data) : *data;
  g->n = d.dim[0];
  g->c = d.dim[1];
  g->isz = g->osz = 1;
  for (int i = 0; i < 3; i++) {
    int j = i - off;
    g->in[i] = j < 0 ? 1 : d.dim[2 + j];
    if (j < 0 || p->global_pool) {
      g->k[i] = g->in[i];
      g->s[i] = 1;
      g->p[i] = 0;
      g->out[i] = 1;
    } else {
      g->k[i] = p->kernel.v[j];
      g->s[i] = p->stride.v[j];
      g->p[i] = p->pad.v[j];
      if (g->in[i] <= 0) /* an unknown size (partial shape inference) */
        g->out[i] = 0;
      else if (g->k[i] > g->in[i] + 2 * g->p[i])
        return mxr_set_error(MXR_EINVAL, "Pooling: kernel=%s exceeds the input in spatial dimension "
                             "%d (%lld padded to %lld)", tuple_str(&p->kernel, a, sizeof a), j,
                             (long long)g->in[i], (long long)(g->in[i] + 2 * g->p[i]));
      else
        g->out[i] = pool_extent(p->pooling_convention, nsp, g->in[i], g->k[i], g->s[i], g->p[i]);
    }
    g->isz *= g->in[i];
    g->osz *= g->out[i];
  }
  return 0;
}

static struct mxr_shape pool_out_shape(const struct pool_geom *g) {
  struct mxr_shape o = {g->nsp + 2, {g->n, g->c}};
  for (int j = 0; j < g->nsp; j++) o.dim[2 + j] = g->out[3 - g->nsp + j];
  return g->last ? channel_last(&o) : o;
}

static int pool_infer(const struct pool_params *p, const struct mxr_shape *data,
                      struct mxr_shape *out) {
  if (!mxr__shape_known(data)) return 0;
  struct pool_geom g;
  int st = pool_geometry(p, data, &g);
  if (st) return st;
  struct mxr_shape o = pool_out_shape(&g);
  return mxr__shape_assign(out, &o, "Pooling: output");
}

static int pool_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  return pool_infer(params, &in[0], &out[0]);
}

/* _backward_Pooling: in = (ograd, data, output), out = (data gradient). */
static int pool_backward_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  int st = mxr__shape_assign(&in[1], &out[0], "Pooling gradient: data");
  if (!st) st = mxr__shape_assign(&out[0], &in[1], "Pooling gradient: output");
  if (!st) st = mxr__shape_assign(&in[0], &in[2], "Pooling gradient: ograd");
  if (!st) st = pool_infer(params, &in[1], &in[0]);
  if (!st) st = mxr__shape_assign(&in[2], &in[0], "Pooling gradient: output");
  return st;
}

/* Element index helpers: plane (n, c), spatial position j. */
static inline int64_t pool_at(const struct pool_geom *g, int64_t n, int64_t c, int64_t j,
                              int64_t size) {
  return g->last ? (n * size + j) * g->c + c : (n * g->c + c) * size + j;
}

/* The window of output position o: clipped bounds [lo, hi) per dimension
 * and the divisor pool.h uses (1 unless averaging). */
struct window {
  int64_t lo[3], hi[3];
  int64_t size;
};

static void pool_window(const struct pool_geom *g, const int64_t o[3], bool max_style, bool avg,
                        bool include_pad, struct window *w) {
  int64_t full = 1, clipped = 1;
  for (int i = 0; i < 3; i++) {
    int64_t lo = o[i] * g->s[i] - g->p[i];
    int64_t hi = lo + g->k[i];
    if (max_style) {
      if (hi > g->in[i]) hi = g->in[i];
    } else {
      if (hi > g->in[i] + g->p[i]) hi = g->in[i] + g->p[i];
      full *= hi - lo;
      if (hi > g->in[i]) hi = g->in[i];
    }
    if (lo < 0) lo = 0;
    clipped *= hi - lo;
    w->lo[i] = lo;
    w->hi[i] = hi;
  }
  w->size = !avg ? 1 : include_pad ? full : clipped;
}

static double pow_p(bool f64, double v, int pv) {
  if (pv == 2) return rnd(f64, v * v);
  if (pv == 3) return rnd(f64, rnd(f64, v * v) * v);
  return v;
}
static double root_p(bool f64, double v, int pv) {
  if (pv == 2) return rnd(f64, sqrt(v));
  if (pv == 3) return rnd(f64, cbrt(v));
  return v;
}
/* d out / d in times the incoming gradient (pool_utils.h's lp_grad). */
static double lp_grad(bool f64, double dy, double x, double y, int pv) {
  if (pv == 1) return dy;
  if (y == 0) return 0;
  double r = rnd(f64, x / y);
  return pv == 2 ? rnd(f64, dy * r) : rnd(f64, rnd(f64, dy * r) * r);
}

struct pool_run {
  struct pool_geom g;
  bool f64, avg, include_pad;
  int type, pv;
};

static int pool_prepare(const char *op, const struct pool_params *p, const struct mxr_tensor *data,
                        const struct mxr_tensor *out, struct pool_run *r) {
  int st = check_float_tensors(op, (const struct mxr_tensor[]){*data, *out}, 2);
  if (!st) st = pool_geometry(p, &data->shape, &r->g);
  if (st) return st;
  struct mxr_shape o = pool_out_shape(&r->g);
  st = check_tensor_shape(op, "output", out, &o);
  if (st) return st;
  r->f64 = data->dtype == MXR_FLOAT64;
  r->type = p->pool_type;
  r->avg = p->pool_type == POOL_AVG;
  r->include_pad = p->include_pad != 0;
  r->pv = p->pool_type == POOL_LP ? p->p_value.value : 1;
  return 0;
}

/* Max and average pooling of channel-first float32, written over: the
 * generic loop's values, computed in float (a float division or sum is the
 * double one rounded once, as the generic loop rounds).  Each axis's window
 * bounds are worked out once per call (a window is the product of its
 * axes'), not once per output.  False when it does not apply or cannot get
 * memory (the generic loop then runs). */
static bool pool_forward_f32(const struct pool_run *r, int req, const float *x, float *y) {
  const struct pool_geom *g = &r->g;
  const bool max = r->type == POOL_MAX;
  if (r->f64 || g->last || req == MXR_REQ_ADD || (!max && r->type != POOL_AVG))
    return false;
  int64_t *lo[3], *hi[3], *full[3], total = g->out[0] + g->out[1] + g->out[2];
  int64_t *bounds = malloc((size_t)(3 * total + 1) * sizeof *bounds);
  if (!bounds) return false;
  for (int i = 0, at = 0; i < 3; at += (int)g->out[i], i++) {
    lo[i] = bounds + at, hi[i] = bounds + total + at, full[i] = bounds + 2 * total + at;
    for (int64_t o = 0; o < g->out[i]; o++) { /* pool_window's bounds along axis i */
      int64_t o3[3] = {0, 0, 0};
      struct window w;
      o3[i] = o;
      pool_window(g, o3, max, r->avg, true, &w);
      lo[i][o] = w.lo[i], hi[i][o] = w.hi[i];
      int64_t start = o * g->s[i] - g->p[i], end = start + g->k[i];
      if (end > g->in[i] + g->p[i]) end = g->in[i] + g->p[i];
      full[i][o] = end - start;
    }
  }
  for (int64_t nc = 0; nc < g->n * g->c; nc++) {
    const float *img = x + nc * g->isz;
    float *out = y + nc * g->osz;
    int64_t oj = 0;
    for (int64_t o0 = 0; o0 < g->out[0]; o0++)
      for (int64_t o1 = 0; o1 < g->out[1]; o1++)
        for (int64_t o2 = 0; o2 < g->out[2]; o2++, oj++) {
          int64_t size = !r->avg ? 1
                         : r->include_pad ? full[0][o0] * full[1][o1] * full[2][o2]
                                          : (hi[0][o0] - lo[0][o0]) * (hi[1][o1] - lo[1][o1]) * (hi[2][o2] - lo[2][o2]);
          const float div = (float)size;
          float v = max ? -FLT_MAX : 0.0f;
          for (int64_t a = lo[0][o0]; a < hi[0][o0]; a++)
            for (int64_t b = lo[1][o1]; b < hi[1][o1]; b++) {
              const float *row = img + (a * g->in[1] + b) * g->in[2];
              for (int64_t e = lo[2][o2]; e < hi[2][o2]; e++) v = max ? (row[e] > v ? row[e] : v) : v + row[e] / div;
            }
          out[oj] = !max && g->nsp == 3 && size == 0 ? NAN : v;
        }
  }
  free(bounds);
  return true;
}

static int pool_forward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx, (void)nin, (void)nout, (void)aux, (void)naux;
  if (req[0] == MXR_REQ_NULL) return 0;
  struct pool_run r;
  int st = pool_prepare("Pooling", params, &in[0], &out[0], &r);
  if (st) return st;
  const struct pool_geom *g = &r.g;
  const bool f64 = r.f64;
  const double lowest = f64 ? -DBL_MAX : -FLT_MAX;
  const void *x = in[0].data;
  void *y = out[0].data;
  if (pool_forward_f32(&r, req[0], x, y)) return 0;
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t c = 0; c < g->c; c++) {
      int64_t o[3], oj = 0;
      for (o[0] = 0; o[0] < g->out[0]; o[0]++)
        for (o[1] = 0; o[1] < g->out[1]; o[1]++)
          for (o[2] = 0; o[2] < g->out[2]; o[2]++, oj++) {
            struct window w;
            pool_window(g, o, r.type == POOL_MAX, r.avg, r.include_pad, &w);
            double v = r.type == POOL_MAX ? lowest : 0.0;
            for (int64_t a = w.lo[0]; a < w.hi[0]; a++)
              for (int64_t b = w.lo[1]; b < w.hi[1]; b++)
                for (int64_t e = w.lo[2]; e < w.hi[2]; e++) {
                  double xv = load(x, pool_at(g, n, c, (a * g->in[1] + b) * g->in[2] + e, g->isz), f64);
                  if (r.type == POOL_MAX) {
                    if (xv > v) v = xv;
                  } else {
                    v = rnd(f64, v + rnd(f64, pow_p(f64, xv, r.pv) / (double)w.size));
                  }
                }
            if (r.type != POOL_MAX) v = (g->nsp == 3 && w.size == 0) ? NAN : root_p(f64, v, r.pv);
            int64_t yi = pool_at(g, n, c, oj, g->osz);
            store(y, yi, f64, req[0] == MXR_REQ_ADD ? load(y, yi, f64) + v : v);
          }
    }
  return 0;
}

/* _backward_Pooling's checks (both devices): in = (ograd, data, output). */
static int pool_backward_checks(const struct pool_params *p, const struct mxr_tensor *in,
                                const struct mxr_tensor *out, struct pool_run *r) {
  const char *op = "_backward_Pooling";
  int st = check_float_tensors(op, in, 3);
  if (!st) st = check_float_tensors(op, (const struct mxr_tensor[]){in[0], out[0]}, 2);
  if (!st) st = check_tensor_shape(op, "data gradient", &out[0], &in[1].shape);
  if (!st) st = check_tensor_shape(op, "output gradient", &in[0], &in[2].shape);
  if (!st) st = pool_prepare(op, p, &in[1], &in[2], r);
  return st;
}

static int pool_backward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx, (void)nin, (void)nout, (void)aux, (void)naux;
  if (req[0] == MXR_REQ_NULL) return 0;
  struct pool_run r;
  int st = pool_backward_checks(params, in, out, &r);
  if (st) return st;
  const struct pool_geom *g = &r.g;
  const bool f64 = r.f64;
  const void *dy = in[0].data, *x = in[1].data, *y = in[2].data;
  void *dx = out[0].data;
  if (req[0] != MXR_REQ_ADD) zero_tensor(&out[0]);
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t c = 0; c < g->c; c++) {
      int64_t o[3], oj = 0;
      for (o[0] = 0; o[0] < g->out[0]; o[0]++)
        for (o[1] = 0; o[1] < g->out[1]; o[1]++)
          for (o[2] = 0; o[2] < g->out[2]; o[2]++, oj++) {
            struct window w;
            pool_window(g, o, r.type == POOL_MAX, r.avg, r.include_pad, &w);
            int64_t yi = pool_at(g, n, c, oj, g->osz);
            double yv = load(y, yi, f64), dyv = load(dy, yi, f64);
            bool found = false;
            for (int64_t a = w.lo[0]; a < w.hi[0] && !found; a++)
              for (int64_t b = w.lo[1]; b < w.hi[1] && !found; b++)
                for (int64_t e = w.lo[2]; e < w.hi[2] && !found; e++) {
                  int64_t xi = pool_at(g, n, c, (a * g->in[1] + b) * g->in[2] + e, g->isz);
                  double xv = load(x, xi, f64), gv;
                  if (r.type == POOL_MAX) {
                    if (xv != yv) continue;
                    found = true; /* the first maximum takes the whole gradient */
                    gv = dyv;
                  } else {
                    gv = rnd(f64, lp_grad(f64, dyv, xv, yv, r.pv) / (double)w.size);
                  }
                  store(dx, xi, f64, load(dx, xi, f64) + gv);
                }
          }
    }
  return 0;
}

#ifdef MXR_HAVE_CUDA
_Static_assert((int)POOL_MAX == (int)MXR__GPU_POOL_MAX && (int)POOL_AVG == (int)MXR__GPU_POOL_AVG &&
                   (int)POOL_SUM == (int)MXR__GPU_POOL_SUM && (int)POOL_LP == (int)MXR__GPU_POOL_LP,
               "pool types are numbered alike in pooling.h");

/* The launchers' view of a pooling (op/cuda/convolution.h). */
static struct mxr__gpu_pool pool_gpu_desc(const struct pool_params *p, const struct pool_run *r,
                                          int dtype) {
  const struct pool_geom *g = &r->g;
  struct mxr__gpu_pool pl = {
      .nsp = g->nsp,
      .dtype = dtype,
      .channel_last = g->last,
      .type = r->type,
      .p_value = r->pv,
      .include_pad = r->include_pad,
      .allow_cudnn = !p->cudnn_off,
      .n = g->n,
      .c = g->c,
  };
  for (int i = 0; i < 3; i++) {
    pl.in[i] = g->in[i];
    pl.out[i] = g->out[i];
    pl.k[i] = g->k[i];
    pl.s[i] = g->s[i];
    pl.p[i] = g->p[i];
  }
  return pl;
}

static int pool_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  if (req[0] == MXR_REQ_NULL) return 0;
  struct pool_run r;
  int st = pool_prepare("Pooling", params, &in[0], &out[0], &r);
  if (st) return st;
  const struct mxr__gpu_pool pl = pool_gpu_desc(params, &r, in[0].dtype);
  return mxr__gpu_pool_forward(ctx ? ctx->run : NULL, &pl, in[0].data, out[0].data, req[0]);
}

static int pool_backward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  if (req[0] == MXR_REQ_NULL) return 0;
  struct pool_run r;
  int st = pool_backward_checks(params, in, out, &r);
  if (st) return st;
  const struct mxr__gpu_pool pl = pool_gpu_desc(params, &r, in[1].dtype);
  return mxr__gpu_pool_backward(ctx ? ctx->run : NULL, &pl, in[0].data, in[1].data, in[2].data,
                                out[0].data, req[0]);
}
#endif

static const char *const pool_inputs[] = {"data"};
static const char *const pool_grad_inputs[] = {"ograd", "data", "output"};

static const struct mxr_op op_pooling = {
    .name = "Pooling",
    .aliases = {"_npx_pooling", NULL},
    .fields = pool_fields,
    .num_fields = (int)(sizeof pool_fields / sizeof pool_fields[0]),
    .params_size = sizeof(struct pool_params),
    .check = pool_check,
    .nin = 1,
    .nout = 1,
    .input_names = pool_inputs,
    .infer_shape = pool_shape,
    .dtypes = F32_F64,
    .forward_cpu = pool_forward,
    .forward_gpu = MXR_GPU_FORWARD(pool_forward_gpu),
    .backward = "_backward_Pooling",
    .grad_flags = MXR_GRAD_USE_INPUTS | MXR_GRAD_USE_OUTPUTS,
};

static const struct mxr_op op_backward_pooling = {
    .name = "_backward_Pooling",
    .aliases = {NULL},
    .fields = pool_fields,
    .num_fields = (int)(sizeof pool_fields / sizeof pool_fields[0]),
    .params_size = sizeof(struct pool_params),
    .check = pool_check,
    .nin = 3,
    .nout = 1,
    .input_names = pool_grad_inputs,
    .infer_shape = pool_backward_shape,
    .dtypes = F32_F64,
    .forward_cpu = pool_backward,
    .forward_gpu = MXR_GPU_FORWARD(pool_backward_gpu),
};

const struct mxr_op *const mxr__ops_pooling[] = {
    &op_pooling, &op_backward_pooling, NULL,
};
