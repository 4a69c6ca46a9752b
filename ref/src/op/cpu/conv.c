/*
 * Convolution and Pooling (1-D, 2-D and 3-D) and their gradients, with the
 * semantics of MXNet 1.9.1's native CPU operators (nn/convolution*,
 * nn/pooling*, nn/pool.h); the code is our own.
 *
 * Convolution lowers each image to a column matrix (im2col) and multiplies
 * it per group with the weights through BLAS; the data gradient goes back
 * through col2im.  Channel-last layouts (NHWC, NDHWC) are accepted by the
 * parser and by shape inference, as MXNet accepts them, but the CPU kernel
 * rejects them, as MXNet's does.
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
 * On GPUs (op/gpu/conv.h), after the same checks: Convolution runs through
 * cuDNN (so only in builds with cuDNN; cudnn_off cannot be honoured, as
 * there is no other GPU convolution, and is ignored), with the algorithm
 * chosen as cudnn_tune, or MXNET_CUDNN_AUTOTUNE_DEFAULT when it is None,
 * says, within the `workspace` parameter's MB; Pooling runs kernels that
 * compute the definition above, or cuDNN where it computes the same
 * (cudnn_off: never).
 */
#include "config.h"

#include <cblas.h>
#include <ctype.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mxref/config.h"
#include "op/gpu/conv.h"
#include "op/op_internal.h"

/* ------------------------------------------------------------ shared */

#define F32_F64 ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64))

/* MXNet's layout enum; the rank is the number of spatial dimensions. */
enum layout { L_NONE = -1, L_NCW, L_NCHW, L_NCDHW, L_NWC, L_NHWC, L_NDHWC };
static const char *const layout_names[] = {"NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"};
static int layout_rank(int l) { return l % 3 + 1; }
static bool layout_channel_last(int l) { return l >= L_NWC; }

static inline double load(const void *p, int64_t i, bool f64) {
  return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static inline void store(void *p, int64_t i, bool f64, double v) {
  if (f64)
    ((double *)p)[i] = v;
  else
    ((float *)p)[i] = (float)v;
}
/* The result of one arithmetic operation in the tensor's dtype. */
static inline double rnd(bool f64, double v) { return f64 ? v : (double)(float)v; }

static void zero_tensor(struct mxr_tensor *t) {
  memset(t->data, 0, (size_t)mxr_tensor_size(t) * mxr_dtype_size(t->dtype));
}

static const char *tuple_str(const struct mxr_tuple *t, char *buf, size_t size) {
  struct mxr_shape s = {t->n, {0}};
  for (int i = 0; i < t->n; i++) s.dim[i] = t->v[i];
  return mxr_shape_str(&s, buf, size);
}

/* Copy `text` without surrounding spaces into buf. */
static void trimmed(const char *text, char *buf, size_t size) {
  while (isspace((unsigned char)*text)) text++;
  size_t n = strlen(text);
  while (n && isspace((unsigned char)text[n - 1])) n--;
  if (n >= size) n = size - 1;
  memcpy(buf, text, n);
  buf[n] = '\0';
}

/* An optional enum as dmlc parses one: "None" or one of the names. */
static int parse_opt_choice(const char *op, const char *key, const char *text,
                            const char *const *names, const int *ids, int n, int *out) {
  char t[MXR_PARAM_STRING_MAX];
  trimmed(text, t, sizeof t);
  if (strcmp(t, "None") == 0) return *out = L_NONE, 0;
  for (int i = 0; i < n; i++)
    if (strcmp(t, names[ids[i]]) == 0) return *out = ids[i], 0;
  char expected[128] = "None";
  for (int i = 0; i < n; i++) {
    strncat(expected, ", ", sizeof expected - strlen(expected) - 1);
    strncat(expected, names[ids[i]], sizeof expected - strlen(expected) - 1);
  }
  return mxr_set_error(MXR_EINVAL, "%s: parameter %s='%s' is not valid: expected one of %s", op,
                       key, text, expected);
}

/* Fill an empty tuple with `def` per dimension, or check its length. */
static int complete_tuple(const char *op, const char *key, struct mxr_tuple *t,
                          const struct mxr_tuple *kernel, int64_t def) {
  char a[96], b[96];
  if (t->n == 0) {
    t->n = kernel->n;
    for (int i = 0; i < t->n; i++) t->v[i] = def;
    return 0;
  }
  if (t->n != kernel->n)
    return mxr_set_error(MXR_EINVAL, "%s: %s=%s must have as many dimensions as kernel=%s", op,
                         key, tuple_str(t, a, sizeof a), tuple_str(kernel, b, sizeof b));
  return 0;
}

static int check_min(const char *op, const char *key, const struct mxr_tuple *t, int64_t min) {
  char a[96];
  for (int i = 0; i < t->n; i++)
    if (t->v[i] < min)
      return mxr_set_error(MXR_EINVAL, "%s: %s=%s must be %s in every dimension", op, key,
                           tuple_str(t, a, sizeof a), min ? "positive" : "non-negative");
  return 0;
}

/* (N, sp..., C) <-> (N, C, sp...) */
static struct mxr_shape channel_first(const struct mxr_shape *s) {
  struct mxr_shape r = *s;
  r.dim[1] = s->dim[s->ndim - 1];
  for (int i = 2; i < s->ndim; i++) r.dim[i] = s->dim[i - 1];
  return r;
}
static struct mxr_shape channel_last(const struct mxr_shape *s) {
  struct mxr_shape r = *s;
  r.dim[s->ndim - 1] = s->dim[1];
  for (int i = 1; i < s->ndim - 1; i++) r.dim[i] = s->dim[i + 1];
  return r;
}

static int check_float_tensors(const char *op, const struct mxr_tensor *t, int n) {
  for (int i = 0; i < n; i++)
    if (t[i].dtype != t[0].dtype || (t[i].dtype != MXR_FLOAT32 && t[i].dtype != MXR_FLOAT64))
      return mxr_set_error(MXR_EINVAL, "%s: tensors must all be float32 or all float64", op);
  return 0;
}

static int check_tensor_shape(const char *op, const char *what, const struct mxr_tensor *t,
                              const struct mxr_shape *want) {
  char a[96], b[96];
  if (mxr_shape_equal(&t->shape, want)) return 0;
  return mxr_set_error(MXR_EINVAL, "%s: %s has shape %s, expected %s", op, what,
                       mxr_shape_str(&t->shape, a, sizeof a), mxr_shape_str(want, b, sizeof b));
}

/* ------------------------------------------------------- Convolution */

enum { TUNE_OFF, TUNE_LIMITED, TUNE_FASTEST };
static const char *const tune_names[] = {"off", "limited_workspace", "fastest"};

struct conv_params {
  struct mxr_tuple kernel, stride, dilate, pad;
  int num_filter, num_group, workspace;
  bool no_bias, cudnn_off;
  struct mxr_param_str cudnn_tune, layout;
  /* set by conv_check */
  int tune;   /* TUNE_* or L_NONE */
  int layout_id;
};

static const struct mxr_param_field conv_fields[] = {
    {"kernel", MXR_PARAM_TUPLE, offsetof(struct conv_params, kernel), NULL, NULL},
    {"stride", MXR_PARAM_TUPLE, offsetof(struct conv_params, stride), "()", NULL},
    {"dilate", MXR_PARAM_TUPLE, offsetof(struct conv_params, dilate), "()", NULL},
    {"pad", MXR_PARAM_TUPLE, offsetof(struct conv_params, pad), "()", NULL},
    {"num_filter", MXR_PARAM_INT, offsetof(struct conv_params, num_filter), NULL, NULL},
    {"num_group", MXR_PARAM_INT, offsetof(struct conv_params, num_group), "1", NULL},
    {"workspace", MXR_PARAM_INT, offsetof(struct conv_params, workspace), "1024", NULL},
    {"no_bias", MXR_PARAM_BOOL, offsetof(struct conv_params, no_bias), "False", NULL},
    {"cudnn_tune", MXR_PARAM_STRING, offsetof(struct conv_params, cudnn_tune), "None", NULL},
    {"cudnn_off", MXR_PARAM_BOOL, offsetof(struct conv_params, cudnn_off), "False", NULL},
    {"layout", MXR_PARAM_STRING, offsetof(struct conv_params, layout), "None", NULL},
};

static int conv_check(const char *op, void *params) {
  struct conv_params *p = params;
  char a[96];
  int nk = p->kernel.n;
  if (nk < 1 || nk > 3)
    return mxr_set_error(MXR_EINVAL,
                         "%s: %dD convolution is not supported: kernel=%s needs 1, 2 or 3 "
                         "dimensions",
                         op, nk, tuple_str(&p->kernel, a, sizeof a));
  int st = complete_tuple(op, "stride", &p->stride, &p->kernel, 1);
  if (!st) st = complete_tuple(op, "dilate", &p->dilate, &p->kernel, 1);
  if (!st) st = complete_tuple(op, "pad", &p->pad, &p->kernel, 0);
  if (!st) st = check_min(op, "kernel", &p->kernel, 1);
  if (!st) st = check_min(op, "stride", &p->stride, 1);
  if (!st) st = check_min(op, "dilate", &p->dilate, 1);
  if (!st) st = check_min(op, "pad", &p->pad, 0);
  if (st) return st;
  if (p->num_filter < 1)
    return mxr_set_error(MXR_EINVAL, "%s: num_filter=%d must be at least 1", op, p->num_filter);
  if (p->num_group < 1)
    return mxr_set_error(MXR_EINVAL, "%s: num_group=%d must be at least 1", op, p->num_group);
  if (p->num_filter % p->num_group)
    return mxr_set_error(MXR_EINVAL, "%s: num_filter=%d is not divisible by num_group=%d", op,
                         p->num_filter, p->num_group);
  if (p->workspace < 0)
    return mxr_set_error(MXR_EINVAL, "%s: workspace=%d must not be negative", op, p->workspace);
  static const int tune_ids[] = {TUNE_OFF, TUNE_LIMITED, TUNE_FASTEST};
  st = parse_opt_choice(op, "cudnn_tune", p->cudnn_tune.s, tune_names, tune_ids, 3, &p->tune);
  if (st) return st;
  static const int conv_layouts[] = {L_NCW, L_NCHW, L_NCDHW, L_NHWC, L_NDHWC};
  st = parse_opt_choice(op, "layout", p->layout.s, layout_names, conv_layouts, 5, &p->layout_id);
  if (st) return st;
  if (p->layout_id == L_NONE) p->layout_id = nk - 1; /* NCW, NCHW, NCDHW */
  if (layout_rank(p->layout_id) != nk)
    return mxr_set_error(MXR_EINVAL, "%s: layout=%s does not fit the %d-D kernel=%s", op,
                         layout_names[p->layout_id], nk, tuple_str(&p->kernel, a, sizeof a));
  return 0;
}

/* Sizes of one convolution.  Spatial arrays always have 3 entries; lower
 * ranks are padded in front with extent 1 (kernel 1, stride 1, no pad). */
struct conv_geom {
  int64_t n, c, f, groups;
  int64_t in[3], out[3], k[3], s[3], p[3], d[3];
  int64_t isz, osz, ksz; /* spatial element counts */
  bool direct;           /* 1x1 kernel, stride 1, no pad: the image is its column matrix */
};

/* `data` in channel-first order; fills `g` or fails naming the problem. */
static int conv_geometry(const struct conv_params *p, const struct mxr_shape *data,
                         struct conv_geom *g) {
  char a[96], b[96];
  const int nsp = p->kernel.n, off = 3 - nsp;
  g->n = data->dim[0];
  g->c = data->dim[1];
  g->f = p->num_filter;
  g->groups = p->num_group;
  if (g->c % g->groups)
    return mxr_set_error(MXR_EINVAL, "Convolution: data has %lld channels, which num_group=%d does not divide",
                         (long long)g->c, p->num_group);
  g->isz = g->osz = g->ksz = 1;
  g->direct = true;
  for (int i = 0; i < 3; i++) {
    int j = i - off;
    g->in[i] = j < 0 ? 1 : data->dim[2 + j];
    g->k[i] = j < 0 ? 1 : p->kernel.v[j];
    g->s[i] = j < 0 ? 1 : p->stride.v[j];
    g->p[i] = j < 0 ? 0 : p->pad.v[j];
    g->d[i] = j < 0 ? 1 : p->dilate.v[j];
    int64_t extent = 1 + (g->k[i] - 1) * g->d[i], padded = g->in[i] + 2 * g->p[i];
    if (extent > padded)
      return mxr_set_error(MXR_EINVAL,
                           "Convolution: kernel=%s with dilate=%s spans %lld in spatial dimension "
                           "%d, more than the padded input (%lld)",
                           tuple_str(&p->kernel, a, sizeof a), tuple_str(&p->dilate, b, sizeof b),
                           (long long)extent, j, (long long)padded);
    g->out[i] = (padded - extent) / g->s[i] + 1;
    g->isz *= g->in[i];
    g->osz *= g->out[i];
    g->ksz *= g->k[i];
    g->direct = g->direct && g->k[i] == 1 && g->s[i] == 1 && g->p[i] == 0;
  }
  return 0;
}

/* Shapes of data, weight, bias (NULL with no_bias) and output. */
static int conv_infer(const struct conv_params *p, const struct mxr_shape *data, struct mxr_shape *weight,
                      struct mxr_shape *bias, struct mxr_shape *out) {
  char a[96], b[96];
  if (!mxr__shape_known(data)) return 0;
  const int nsp = p->kernel.n;
  const bool last = layout_channel_last(p->layout_id);
  if (data->ndim != nsp + 2)
    return mxr_set_error(MXR_EINVAL,
                         "Convolution: data must have %d dimensions (batch, channel and %d spatial) "
                         "for kernel=%s, got shape %s",
                         nsp + 2, nsp, tuple_str(&p->kernel, a, sizeof a),
                         mxr_shape_str(data, b, sizeof b));
  struct mxr_shape d = last ? channel_first(data) : *data;
  struct conv_geom g;
  int st = conv_geometry(p, &d, &g);
  if (st) return st;
  struct mxr_shape w = {nsp + 2, {g.f, g.c / g.groups}}, o = {nsp + 2, {g.n, g.f}};
  for (int j = 0; j < nsp; j++) {
    w.dim[2 + j] = p->kernel.v[j];
    o.dim[2 + j] = g.out[3 - nsp + j];
  }
  if (last) {
    w = channel_last(&w);
    o = channel_last(&o);
  }
  struct mxr_shape bs = mxr__shape1(g.f);
  st = mxr__shape_assign(weight, &w, "Convolution: weight");
  if (!st && bias) st = mxr__shape_assign(bias, &bs, "Convolution: bias");
  if (!st) st = mxr__shape_assign(out, &o, "Convolution: output");
  return st;
}

static int conv_shape(const void *params, struct mxr_shape *in, int nin, struct mxr_shape *out,
                      int nout, struct mxr_shape *aux, int naux) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  const struct conv_params *p = params;
  return conv_infer(p, &in[0], &in[1], p->no_bias ? NULL : &in[2], &out[0]);
}

/* _backward_Convolution: in = (ograd, data, weight[, bias]), out = their gradients. */
static int conv_backward_shape(const void *params, struct mxr_shape *in, int nin,
                               struct mxr_shape *out, int nout, struct mxr_shape *aux, int naux) {
  (void)aux, (void)naux;
  const struct conv_params *p = params;
  for (int i = 1; i < nin && i - 1 < nout; i++) {
    int st = mxr__shape_assign(&in[i], &out[i - 1], "Convolution gradient: input");
    if (st) return st;
  }
  int st = conv_infer(p, &in[1], &in[2], p->no_bias ? NULL : &in[3], &in[0]);
  for (int i = 1; !st && i < nin && i - 1 < nout; i++)
    st = mxr__shape_assign(&out[i - 1], &in[i], "Convolution gradient: output");
  return st;
}

static size_t conv_ws_for(const struct conv_params *p, const struct mxr_shape *data) {
  if (!mxr__shape_known(data) || data->ndim != p->kernel.n + 2) return 0;
  struct mxr_shape d = layout_channel_last(p->layout_id) ? channel_first(data) : *data;
  struct conv_geom g;
  if (conv_geometry(p, &d, &g) || g.direct) return 0;
  /* dtype is not known here: size for float64, the widest supported */
  return (size_t)(g.c * g.ksz * g.osz) * sizeof(double);
}

static size_t conv_workspace(const void *params, const struct mxr_shape *in, int nin) {
  return nin >= 1 ? conv_ws_for(params, &in[0]) : 0;
}
static size_t conv_backward_workspace(const void *params, const struct mxr_shape *in, int nin) {
  return nin >= 2 ? conv_ws_for(params, &in[1]) : 0;
}

/* im2col (to_col): the column matrix of one image, all channels: row
 * (c, k0, k1, k2), column the output position, 0 for taps in the padding.
 * Otherwise its adjoint col2im: adds each column entry onto its pixel. */
static void im2col(const struct conv_geom *g, bool f64, bool to_col, void *img, void *col) {
  int64_t j = 0;
  for (int64_t c = 0; c < g->c; c++)
    for (int64_t a = 0; a < g->k[0]; a++)
      for (int64_t b = 0; b < g->k[1]; b++)
        for (int64_t e = 0; e < g->k[2]; e++)
          for (int64_t o0 = 0; o0 < g->out[0]; o0++) {
            int64_t i0 = o0 * g->s[0] - g->p[0] + a * g->d[0];
            bool in0 = i0 >= 0 && i0 < g->in[0];
            for (int64_t o1 = 0; o1 < g->out[1]; o1++) {
              int64_t i1 = o1 * g->s[1] - g->p[1] + b * g->d[1];
              bool in1 = in0 && i1 >= 0 && i1 < g->in[1];
              int64_t row = (c * g->in[0] + i0) * g->in[1] + i1;
              for (int64_t o2 = 0; o2 < g->out[2]; o2++, j++) {
                int64_t i2 = o2 * g->s[2] - g->p[2] + e * g->d[2], x = row * g->in[2] + i2;
                bool ok = in1 && i2 >= 0 && i2 < g->in[2];
                if (to_col)
                  store(col, j, f64, ok ? load(img, x, f64) : 0.0);
                else if (ok)
                  store(img, x, f64, load(img, x, f64) + load(col, j, f64));
              }
            }
          }
}

/* Row-major C (m x n) = op(A) op(B) + beta C, op(A) m x k, op(B) k x n. */
static void gemm(bool f64, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a,
                 const void *b, double beta, void *c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0) memset(c, 0, (size_t)(m * n) * (f64 ? 8 : 4));
    return;
  }
  const enum CBLAS_TRANSPOSE tra = ta ? CblasTrans : CblasNoTrans, trb = tb ? CblasTrans : CblasNoTrans;
  const int lda = (int)(ta ? m : k), ldb = (int)(tb ? k : n);
  if (f64)
    cblas_dgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, 1.0, a, lda, b, ldb, beta, c, (int)n);
  else
    cblas_sgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, 1.0f, a, lda, b, ldb,
                (float)beta, c, (int)n);
}

/* Checks shared by the CPU and GPU kernels (`dev` names which): layout, the
 * geometry from the data and the shapes of weight, bias and output (or
 * their gradients). */
static int conv_validate(const char *op, const char *dev, const struct conv_params *p,
                         const struct mxr_tensor *data, const struct mxr_tensor *weight,
                         const struct mxr_tensor *bias, const struct mxr_tensor *out,
                         struct conv_geom *g) {
  if (layout_channel_last(p->layout_id))
    return mxr_set_error(MXR_EINVAL, "%s: layout=%s is not supported on %s (only NCW, NCHW and NCDHW)",
                         op, layout_names[p->layout_id], dev);
  struct mxr_shape ws = {-1, {0}}, bs = {-1, {0}}, os = {-1, {0}};
  int st = conv_infer(p, &data->shape, &ws, bias ? &bs : NULL, &os);
  if (!st) st = check_tensor_shape(op, "weight", weight, &ws);
  if (!st && bias) st = check_tensor_shape(op, "bias", bias, &bs);
  if (!st) st = check_tensor_shape(op, "output", out, &os);
  if (!st) st = conv_geometry(p, &data->shape, g);
  return st;
}

/* The forward's checks: dtypes, then conv_validate. */
static int conv_forward_checks(const char *dev, const struct conv_params *p,
                               const struct mxr_tensor *in, int nin, const struct mxr_tensor *out,
                               struct conv_geom *g) {
  const char *op = "Convolution";
  int st = check_float_tensors(op, in, nin);
  if (!st) st = check_float_tensors(op, out, 1);
  if (!st) st = check_float_tensors(op, (const struct mxr_tensor[]){in[0], out[0]}, 2);
  if (!st) st = conv_validate(op, dev, p, &in[0], &in[1], p->no_bias ? NULL : &in[2], &out[0], g);
  return st;
}

/* The gradient's checks: dtypes, gradient shapes, then conv_validate. */
static int conv_backward_checks(const char *dev, const struct conv_params *p,
                                const struct mxr_tensor *in, int nin, const struct mxr_tensor *out,
                                int nout, struct conv_geom *g) {
  const char *op = "_backward_Convolution";
  int st = check_float_tensors(op, in, nin);
  if (!st) st = check_float_tensors(op, out, nout);
  if (!st) st = check_float_tensors(op, (const struct mxr_tensor[]){in[0], out[0]}, 2);
  for (int i = 0; !st && i < nout; i++) st = check_tensor_shape(op, "gradient", &out[i], &in[i + 1].shape);
  if (!st) st = conv_validate(op, dev, p, &in[1], &in[2], p->no_bias ? NULL : &in[3], &in[0], g);
  return st;
}

/* What only the CPU kernels need: BLAS's int sizes and the im2col
 * workspace. */
static int conv_cpu_checks(const char *op, const struct mxr_op_ctx *ctx, int dtype,
                           const struct conv_geom *g) {
  int64_t kd = g->c / g->groups * g->ksz;
  if (g->f > INT_MAX || g->osz > INT_MAX || kd > INT_MAX)
    return mxr_set_error(MXR_EINVAL, "%s: matrix sizes exceed the BLAS limit", op);
  size_t need = g->direct ? 0 : (size_t)(g->c * g->ksz * g->osz) * mxr_dtype_size(dtype);
  if (need && (!ctx || !ctx->workspace || ctx->workspace_size < need))
    return mxr_set_error(MXR_EINVAL, "%s: workspace of %zu bytes is too small (%zu needed)", op,
                         ctx ? ctx->workspace_size : (size_t)0, need);
  return 0;
}

static int conv_forward(const struct mxr_op_ctx *ctx, const void *params,
                        const struct mxr_tensor *in, int nin, const int *req,
                        struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
  (void)nout, (void)aux, (void)naux;
  const struct conv_params *p = params;
  if (req[0] == MXR_REQ_NULL) return 0;
  struct conv_geom g;
  int st = conv_forward_checks("CPU", p, in, nin, out, &g);
  if (!st) st = conv_cpu_checks("Convolution", ctx, in[0].dtype, &g);
  if (st) return st;
  const bool f64 = in[0].dtype == MXR_FLOAT64;
  const size_t es = f64 ? 8 : 4;
  const int64_t fg = g.f / g.groups, kd = g.c / g.groups * g.ksz, P = g.osz;
  const double beta = req[0] == MXR_REQ_ADD ? 1.0 : 0.0;
  const char *x = in[0].data, *w = in[1].data;
  char *y = out[0].data;
  for (int64_t n = 0; n < g.n; n++) {
    const char *img = x + (size_t)(n * g.c * g.isz) * es;
    const char *col = img;
    if (!g.direct) {
      im2col(&g, f64, true, (void *)img, ctx->workspace);
      col = ctx->workspace;
    }
    for (int64_t q = 0; q < g.groups; q++)
      gemm(f64, false, false, fg, P, kd, w + (size_t)(q * fg * kd) * es,
           col + (size_t)(q * kd * P) * es, beta, y + (size_t)((n * g.f + q * fg) * P) * es);
  }
  if (!p->no_bias)
    for (int64_t n = 0; n < g.n; n++)
      for (int64_t m = 0; m < g.f; m++) {
        double b = load(in[2].data, m, f64);
        int64_t base = (n * g.f + m) * P;
        for (int64_t j = 0; j < P; j++) store(y, base + j, f64, load(y, base + j, f64) + b);
      }
  return 0;
}

static int conv_backward(const struct mxr_op_ctx *ctx, const void *params,
                         const struct mxr_tensor *in, int nin, const int *req,
                         struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
  (void)aux, (void)naux;
  const struct conv_params *p = params;
  const char *op = "_backward_Convolution";
  struct conv_geom g;
  int st = conv_backward_checks("CPU", p, in, nin, out, nout, &g);
  if (!st) st = conv_cpu_checks(op, ctx, in[0].dtype, &g);
  if (st) return st;
  const bool f64 = in[0].dtype == MXR_FLOAT64;
  const size_t es = f64 ? 8 : 4;
  const int64_t fg = g.f / g.groups, kd = g.c / g.groups * g.ksz, P = g.osz;
  const char *dy = in[0].data, *x = in[1].data, *w = in[2].data;
  char *ws = ctx ? ctx->workspace : NULL;

  if (req[0] != MXR_REQ_NULL) { /* data: col = W^T dy per group, then col2im */
    if (req[0] != MXR_REQ_ADD) zero_tensor(&out[0]);
    char *dx = out[0].data;
    for (int64_t n = 0; n < g.n; n++) {
      char *dimg = dx + (size_t)(n * g.c * g.isz) * es;
      for (int64_t q = 0; q < g.groups; q++)
        gemm(f64, true, false, kd, P, fg, w + (size_t)(q * fg * kd) * es,
             dy + (size_t)((n * g.f + q * fg) * P) * es, g.direct ? 1.0 : 0.0,
             (g.direct ? dimg : ws) + (size_t)(q * kd * P) * es);
      if (!g.direct) im2col(&g, f64, false, dimg, ws);
    }
  }
  if (req[1] != MXR_REQ_NULL) { /* weight: dW += dy col^T, summed over the batch */
    if (req[1] != MXR_REQ_ADD) zero_tensor(&out[1]);
    char *dw = out[1].data;
    for (int64_t n = 0; n < g.n; n++) {
      const char *img = x + (size_t)(n * g.c * g.isz) * es, *col = img;
      if (!g.direct) {
        im2col(&g, f64, true, (void *)img, ws);
        col = ws;
      }
      for (int64_t q = 0; q < g.groups; q++)
        gemm(f64, false, true, fg, kd, P, dy + (size_t)((n * g.f + q * fg) * P) * es,
             col + (size_t)(q * kd * P) * es, 1.0, dw + (size_t)(q * fg * kd) * es);
    }
  }
  if (!p->no_bias && req[2] != MXR_REQ_NULL) /* bias: dy summed over batch and positions */
    for (int64_t m = 0; m < g.f; m++) {
      double sum = 0;
      for (int64_t n = 0; n < g.n; n++)
        for (int64_t j = 0; j < P; j++) sum += load(dy, (n * g.f + m) * P + j, f64);
      double prior = req[2] == MXR_REQ_ADD ? load(out[2].data, m, f64) : 0.0;
      store(out[2].data, m, f64, prior + rnd(f64, sum));
    }
  return 0;
}

#if defined(MXR_HAVE_CUDA) && defined(MXR_HAVE_CUDNN)
/* The launchers' view of a convolution (op/gpu/conv.h). */
static struct mxr__gpu_conv conv_gpu_desc(const struct conv_params *p, const struct conv_geom *g,
                                          int dtype) {
  struct mxr__gpu_conv cv = {
      .nsp = p->kernel.n,
      .dtype = dtype,
      .n = g->n,
      .c = g->c,
      .f = g->f,
      .groups = g->groups,
      .tune = p->tune == L_NONE ? mxr_config_get()->cudnn_autotune_default : p->tune,
      .workspace_limit = (size_t)p->workspace << 20, /* MB, as MXNet reads it */
  };
  for (int i = 0; i < 3; i++) {
    cv.in[i] = g->in[i];
    cv.out[i] = g->out[i];
    cv.k[i] = g->k[i];
    cv.s[i] = g->s[i];
    cv.p[i] = g->p[i];
    cv.d[i] = g->d[i];
  }
  return cv;
}

static int conv_forward_gpu(const struct mxr_op_ctx *ctx, const void *params,
                            const struct mxr_tensor *in, int nin, const int *req,
                            struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
  (void)nout, (void)aux, (void)naux;
  const struct conv_params *p = params;
  if (req[0] == MXR_REQ_NULL) return 0;
  struct conv_geom g;
  int st = conv_forward_checks("GPU", p, in, nin, out, &g);
  if (st) return st;
  const struct mxr__gpu_conv cv = conv_gpu_desc(p, &g, in[0].dtype);
  return mxr__gpu_conv_forward(ctx ? ctx->run : NULL, &cv, in[0].data, in[1].data,
                               p->no_bias ? NULL : in[2].data, out[0].data, req[0]);
}

static int conv_backward_gpu(const struct mxr_op_ctx *ctx, const void *params,
                             const struct mxr_tensor *in, int nin, const int *req,
                             struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
  (void)aux, (void)naux;
  const struct conv_params *p = params;
  struct conv_geom g;
  int st = conv_backward_checks("GPU", p, in, nin, out, nout, &g);
  if (st) return st;
  const struct mxr__gpu_conv cv = conv_gpu_desc(p, &g, in[0].dtype);
  return mxr__gpu_conv_backward(ctx ? ctx->run : NULL, &cv, in[0].data, in[1].data, in[2].data,
                                out[0].data, req[0], out[1].data, req[1],
                                p->no_bias ? NULL : out[2].data, p->no_bias ? MXR_REQ_NULL : req[2]);
}
#endif

static int conv_nin(const void *params) { return ((const struct conv_params *)params)->no_bias ? 2 : 3; }
static int conv_backward_nin(const void *params) { return conv_nin(params) + 1; }

static const char *const conv_inputs[] = {"data", "weight", "bias"};
static const char *const conv_grad_inputs[] = {"ograd", "data", "weight", "bias"};

static const struct mxr_op op_convolution = {
    .name = "Convolution",
    .aliases = {"_npx_convolution", NULL},
    .fields = conv_fields,
    .num_fields = (int)(sizeof conv_fields / sizeof conv_fields[0]),
    .params_size = sizeof(struct conv_params),
    .check = conv_check,
    .get_nin = conv_nin,
    .nout = 1,
    .input_names = conv_inputs,
    .infer_shape = conv_shape,
    .dtypes = F32_F64,
    .forward_cpu = conv_forward,
    .forward_gpu = MXR_CUDNN_GPU_FORWARD(conv_forward_gpu),
    .workspace_bytes = conv_workspace,
    .backward = "_backward_Convolution",
    .grad_flags = MXR_GRAD_USE_INPUTS,
};

static const struct mxr_op op_backward_convolution = {
    .name = "_backward_Convolution",
    .aliases = {NULL},
    .fields = conv_fields,
    .num_fields = (int)(sizeof conv_fields / sizeof conv_fields[0]),
    .params_size = sizeof(struct conv_params),
    .check = conv_check,
    .get_nin = conv_backward_nin,
    .get_nout = conv_nin,
    .input_names = conv_grad_inputs,
    .infer_shape = conv_backward_shape,
    .dtypes = F32_F64,
    .forward_cpu = conv_backward,
    .forward_gpu = MXR_CUDNN_GPU_FORWARD(conv_backward_gpu),
    .workspace_bytes = conv_backward_workspace,
};

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
      if (g->k[i] > g->in[i] + 2 * g->p[i])
        return mxr_set_error(MXR_EINVAL, "Pooling: kernel=%s exceeds the input in spatial dimension "
                             "%d (%lld padded to %lld)", tuple_str(&p->kernel, a, sizeof a), j,
                             (long long)g->in[i], (long long)(g->in[i] + 2 * g->p[i]));
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

static int pool_shape(const void *params, struct mxr_shape *in, int nin, struct mxr_shape *out,
                      int nout, struct mxr_shape *aux, int naux) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  return pool_infer(params, &in[0], &out[0]);
}

/* _backward_Pooling: in = (ograd, data, output), out = (data gradient). */
static int pool_backward_shape(const void *params, struct mxr_shape *in, int nin,
                               struct mxr_shape *out, int nout, struct mxr_shape *aux, int naux) {
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

static int pool_forward(const struct mxr_op_ctx *ctx, const void *params,
                        const struct mxr_tensor *in, int nin, const int *req,
                        struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
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

static int pool_backward(const struct mxr_op_ctx *ctx, const void *params,
                         const struct mxr_tensor *in, int nin, const int *req,
                         struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
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
               "pool types are numbered alike in conv.h");

/* The launchers' view of a pooling (op/gpu/conv.h). */
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

static int pool_forward_gpu(const struct mxr_op_ctx *ctx, const void *params,
                            const struct mxr_tensor *in, int nin, const int *req,
                            struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  if (req[0] == MXR_REQ_NULL) return 0;
  struct pool_run r;
  int st = pool_prepare("Pooling", params, &in[0], &out[0], &r);
  if (st) return st;
  const struct mxr__gpu_pool pl = pool_gpu_desc(params, &r, in[0].dtype);
  return mxr__gpu_pool_forward(ctx ? ctx->run : NULL, &pl, in[0].data, out[0].data, req[0]);
}

static int pool_backward_gpu(const struct mxr_op_ctx *ctx, const void *params,
                             const struct mxr_tensor *in, int nin, const int *req,
                             struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
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

const struct mxr_op *const mxr__ops_conv[] = {
    &op_convolution, &op_backward_convolution, &op_pooling, &op_backward_pooling, NULL,
};
