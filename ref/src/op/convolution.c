/*
 * Convolution (1-D, 2-D and 3-D) and its gradient, with the semantics of
 * MXNet 1.9.1's native CPU operator (nn/convolution*); the code is our
 * own.  Pooling is in pooling.c; the helpers both use in conv_common.h.
 *
 * Convolution lowers each image to a column matrix (im2col) and multiplies
 * it per group with the weights through BLAS; the forward puts the columns
 * of several images side by side into one product where they fit in
 * CONV_BATCH_BYTES (conv_batch).  The data gradient goes back through
 * col2im.  Channel-last layouts (NHWC, NDHWC) are accepted by the
 * parser and by shape inference, as MXNet accepts them, but the CPU kernel
 * rejects them, as MXNet's does.
 *
 * float32 and float64 share one code path: values are loaded as double and
 * every arithmetic result is rounded back to the tensor's dtype, which for
 * + - * / and sqrt gives exactly float arithmetic.
 *
 * On GPUs, after the same checks, in every CUDA build: Convolution runs
 * through cuDNN (op/cuda/convolution.h), with the algorithm chosen as
 * cudnn_tune, or MXNET_CUDNN_AUTOTUNE_DEFAULT when it is None, says,
 * within the `workspace` parameter's MB; with cudnn_off=True, and in
 * builds without cuDNN, it runs this file's method instead
 * (op/cuda/convolution_gemm.h: im2col and col2im kernels around cuBLAS
 * products, in the CPU kernel's order), which ignores cudnn_tune and
 * workspace.
 */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "mxref/config.h"
#include "op/blas.h"
#include "op/conv_common.h"
#include "op/cuda/convolution.h"
#include "op/cuda/convolution_gemm.h"

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
    if (g->in[i] <= 0) { /* an unknown size (partial shape inference) */
      g->out[i] = 0;
      continue;
    }
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

static int conv_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  const struct conv_params *p = params;
  return conv_infer(p, &in[0], &in[1], p->no_bias ? NULL : &in[2], &out[0]);
}

/* _backward_Convolution: in = (ograd, data, weight[, bias]), out = their gradients. */
static int conv_backward_shape(MXR_SHAPE_FN_PARAMS) {
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

/* The forward multiplies the column matrices of up to this many bytes of
 * images at once (their columns side by side, plus the product before it is
 * split into images): one wide product instead of one per image, which
 * matters where images are small (7x7, 1x1: a product per image is then
 * nearly a matrix-vector one that reads all the weights for a few columns). */
#define CONV_BATCH_BYTES ((size_t)16 << 20)

/* Output positions from which one image's product is wide enough alone:
 * batching wider images only adds the copies in and out of the workspace. */
#define CONV_WIDE_IMAGE 1024

/* Images per forward product; sized for float64, as the workspace is
 * (the dtype is not known when the workspace is sized). */
static int64_t conv_batch(const struct conv_geom *g) {
  if (g->osz >= CONV_WIDE_IMAGE) return 1;
  size_t per = (size_t)((g->c * g->ksz + g->f) * g->osz) * sizeof(double);
  int64_t nb = per ? (int64_t)(CONV_BATCH_BYTES / per) : g->n;
  return nb < 1 ? 1 : nb > g->n ? g->n : nb;
}

/* Workspace elements: the forward's batched columns and product when it
 * multiplies several images at once, else one image's column matrix (none
 * for a direct convolution). */
static int64_t conv_ws_elems(const struct conv_geom *g, bool forward) {
  int64_t nb = forward ? conv_batch(g) : 1;
  if (nb > 1) return nb * (g->c * g->ksz + g->f) * g->osz;
  return g->direct ? 0 : g->c * g->ksz * g->osz;
}

static size_t conv_ws_for(const struct conv_params *p, const struct mxr_shape *data, bool forward) {
  if (!mxr__shape_known(data) || data->ndim != p->kernel.n + 2) return 0;
  struct mxr_shape d = layout_channel_last(p->layout_id) ? channel_first(data) : *data;
  struct conv_geom g;
  if (conv_geometry(p, &d, &g)) return 0;
  return (size_t)conv_ws_elems(&g, forward) * sizeof(double);
}

static size_t conv_workspace(const void *params, const struct mxr_shape *in, int nin) {
  return nin >= 1 ? conv_ws_for(params, &in[0], true) : 0;
}
static size_t conv_backward_workspace(const void *params, const struct mxr_shape *in, int nin) {
  return nin >= 2 ? conv_ws_for(params, &in[1], false) : 0;
}

/* One row of the column matrix along the last spatial axis: out[2]
 * entries, entry o taken from input position o * s[2] + off of the image
 * row `src` (NULL when that row lies in the padding), 0 for taps in the
 * padding.  Only copies, so it works on bytes of size es. */
static void im2col_run(const struct conv_geom *g, size_t es, const char *src, char *dst, int64_t off) {
  const int64_t n = g->out[2], s = g->s[2], w = g->in[2];
  if (!src) {
    memset(dst, 0, (size_t)n * es);
    return;
  }
  int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;   /* first o with a position >= 0 */
  int64_t hi = w - off <= 0 ? 0 : (w - off + s - 1) / s; /* past the last o with one < w */
  if (hi > n) hi = n;
  if (lo > hi) lo = hi;
  memset(dst, 0, (size_t)lo * es);
  if (s == 1)
    memcpy(dst + (size_t)lo * es, src + (size_t)(lo + off) * es, (size_t)(hi - lo) * es);
  else if (es == 4)
    for (int64_t o = lo; o < hi; o++) memcpy(dst + (size_t)o * 4, src + (size_t)(o * s + off) * 4, 4);
  else
    for (int64_t o = lo; o < hi; o++) memcpy(dst + (size_t)o * 8, src + (size_t)(o * s + off) * 8, 8);
  memset(dst + (size_t)hi * es, 0, (size_t)(n - hi) * es);
}

/* im2col: the column matrix of one image, all channels: row (c, k0, k1,
 * k2), column the output position, 0 for taps in the padding; rows are
 * `ld` elements apart (osz for one image alone). */
static void im2col(const struct conv_geom *g, size_t es, const char *img, char *col, int64_t ld) {
  int64_t r = 0;
  for (int64_t c = 0; c < g->c; c++)
    for (int64_t a = 0; a < g->k[0]; a++)
      for (int64_t b = 0; b < g->k[1]; b++)
        for (int64_t e = 0; e < g->k[2]; e++) {
          char *dst = col + (size_t)(r++ * ld) * es;
          for (int64_t o0 = 0; o0 < g->out[0]; o0++) {
            int64_t i0 = o0 * g->s[0] - g->p[0] + a * g->d[0];
            bool in0 = i0 >= 0 && i0 < g->in[0];
            for (int64_t o1 = 0; o1 < g->out[1]; o1++, dst += (size_t)g->out[2] * es) {
              int64_t i1 = o1 * g->s[1] - g->p[1] + b * g->d[1];
              bool ok = in0 && i1 >= 0 && i1 < g->in[1];
              const char *src = ok ? img + (size_t)(((c * g->in[0] + i0) * g->in[1] + i1) * g->in[2]) * es : NULL;
              im2col_run(g, es, src, dst, e * g->d[2] - g->p[2]);
            }
          }
        }
}

/* col2im, im2col's adjoint: adds each entry of the column matrix (rows
 * osz elements apart) onto the pixel it was taken from. */
static void col2im(const struct conv_geom *g, bool f64, void *img, const void *col) {
  int64_t row_index = 0, j = 0;
  for (int64_t c = 0; c < g->c; c++)
    for (int64_t a = 0; a < g->k[0]; a++)
      for (int64_t b = 0; b < g->k[1]; b++)
        for (int64_t e = 0; e < g->k[2]; e++, j = ++row_index * g->osz)
          for (int64_t o0 = 0; o0 < g->out[0]; o0++) {
            int64_t i0 = o0 * g->s[0] - g->p[0] + a * g->d[0];
            bool in0 = i0 >= 0 && i0 < g->in[0];
            for (int64_t o1 = 0; o1 < g->out[1]; o1++) {
              int64_t i1 = o1 * g->s[1] - g->p[1] + b * g->d[1];
              bool in1 = in0 && i1 >= 0 && i1 < g->in[1];
              int64_t row = (c * g->in[0] + i0) * g->in[1] + i1;
              for (int64_t o2 = 0; o2 < g->out[2]; o2++, j++) {
                int64_t i2 = o2 * g->s[2] - g->p[2] + e * g->d[2], x = row * g->in[2] + i2;
                if (in1 && i2 >= 0 && i2 < g->in[2]) store(img, x, f64, load(img, x, f64) + load(col, j, f64));
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
  /* conv_cpu_checks loaded it */
  const struct mxr__blas *blas = mxr__blas("Convolution");
  if (f64)
    blas->dgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, 1.0, a, lda, b, ldb, beta, c,
                (int)n);
  else
    blas->sgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, 1.0f, a, lda, b, ldb,
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
                           const struct conv_geom *g, bool forward) {
  int64_t kd = g->c / g->groups * g->ksz;
  if (g->f > INT_MAX || g->osz * (forward ? conv_batch(g) : 1) > INT_MAX || kd > INT_MAX)
    return mxr_set_error(MXR_EINVAL, "%s: matrix sizes exceed the BLAS limit", op);
  size_t need = (size_t)conv_ws_elems(g, forward) * mxr_dtype_size(dtype);
  if (need && (!ctx || !ctx->workspace || ctx->workspace_size < need))
    return mxr_set_error(MXR_EINVAL, "%s: workspace of %zu bytes is too small (%zu needed)", op,
                         ctx ? ctx->workspace_size : (size_t)0, need);
  return mxr__blas(op) ? 0 : MXR_ENOTFOUND;
}

/* Images n0 .. n0+m through one product per group: their column matrices
 * side by side in `ws` (row r of image i at column i * P of row r), the
 * product into the rest of `ws`, then each image's block copied (or, for
 * req add, added) into y. */
static void conv_forward_images(const struct conv_geom *g, bool f64, const char *x, const char *w, bool add,
                                char *y, char *ws, int64_t n0, int64_t m) {
  const size_t es = f64 ? 8 : 4;
  const int64_t fg = g->f / g->groups, kd = g->c / g->groups * g->ksz, P = g->osz, wide = m * P;
  const int64_t rows = g->c * g->ksz;
  char *col = ws, *prod = ws + (size_t)(rows * wide) * es;
  for (int64_t i = 0; i < m; i++) {
    const char *img = x + (size_t)((n0 + i) * g->c * g->isz) * es;
    if (!g->direct) {
      im2col(g, es, img, col + (size_t)(i * P) * es, wide);
      continue;
    }
    for (int64_t r = 0; r < rows; r++)
      memcpy(col + (size_t)(r * wide + i * P) * es, img + (size_t)(r * P) * es, (size_t)P * es);
  }
  for (int64_t q = 0; q < g->groups; q++)
    gemm(f64, false, false, fg, wide, kd, w + (size_t)(q * fg * kd) * es, col + (size_t)(q * kd * wide) * es,
         0.0, prod + (size_t)(q * fg * wide) * es);
  for (int64_t i = 0; i < m; i++)
    for (int64_t f = 0; f < g->f; f++) {
      const char *src = prod + (size_t)(f * wide + i * P) * es;
      char *dst = y + (size_t)(((n0 + i) * g->f + f) * P) * es;
      if (!add) {
        memcpy(dst, src, (size_t)P * es);
        continue;
      }
      for (int64_t j = 0; j < P; j++) store(dst, j, f64, load(dst, j, f64) + load(src, j, f64));
    }
}

/* y[n, f, :] += bias[f]; a float sum in float is the double sum rounded. */
static void add_bias(const struct conv_geom *g, bool f64, const void *bias, void *y) {
  const int64_t P = g->osz;
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t m = 0; m < g->f; m++) {
      int64_t base = (n * g->f + m) * P;
      if (f64) {
        double b = ((const double *)bias)[m], *row = (double *)y + base;
        MXR_SIMD for (int64_t j = 0; j < P; j++) row[j] += b;
      } else {
        float b = ((const float *)bias)[m], *row = (float *)y + base;
        MXR_SIMD for (int64_t j = 0; j < P; j++) row[j] += b;
      }
    }
}

static int conv_forward(MXR_FCOMPUTE_PARAMS) {
  (void)nout, (void)aux, (void)naux;
  const struct conv_params *p = params;
  if (req[0] == MXR_REQ_NULL) return 0;
  struct conv_geom g;
  int st = conv_forward_checks("CPU", p, in, nin, out, &g);
  if (!st) st = conv_cpu_checks("Convolution", ctx, in[0].dtype, &g, true);
  if (st) return st;
  const bool f64 = in[0].dtype == MXR_FLOAT64;
  const size_t es = f64 ? 8 : 4;
  const int64_t fg = g.f / g.groups, kd = g.c / g.groups * g.ksz, P = g.osz;
  const double beta = req[0] == MXR_REQ_ADD ? 1.0 : 0.0;
  const char *x = in[0].data, *w = in[1].data;
  char *y = out[0].data;
  const int64_t nb = conv_batch(&g);
  for (int64_t n0 = 0; nb > 1 && n0 < g.n; n0 += nb)
    conv_forward_images(&g, f64, x, w, beta != 0, y, ctx->workspace, n0, g.n - n0 < nb ? g.n - n0 : nb);
  for (int64_t n = 0; nb == 1 && n < g.n; n++) {
    const char *img = x + (size_t)(n * g.c * g.isz) * es;
    const char *col = img;
    if (!g.direct) {
      im2col(&g, es, img, ctx->workspace, P);
      col = ctx->workspace;
    }
    for (int64_t q = 0; q < g.groups; q++)
      gemm(f64, false, false, fg, P, kd, w + (size_t)(q * fg * kd) * es,
           col + (size_t)(q * kd * P) * es, beta, y + (size_t)((n * g.f + q * fg) * P) * es);
  }
  if (!p->no_bias) add_bias(&g, f64, in[2].data, y);
  return 0;
}

static int conv_backward(MXR_FCOMPUTE_PARAMS) {
  (void)aux, (void)naux;
  const struct conv_params *p = params;
  const char *op = "_backward_Convolution";
  struct conv_geom g;
  int st = conv_backward_checks("CPU", p, in, nin, out, nout, &g);
  if (!st) st = conv_cpu_checks(op, ctx, in[0].dtype, &g, false);
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
      if (!g.direct) col2im(&g, f64, dimg, ws);
    }
  }
  if (req[1] != MXR_REQ_NULL) { /* weight: dW += dy col^T, summed over the batch */
    if (req[1] != MXR_REQ_ADD) zero_tensor(&out[1]);
    char *dw = out[1].data;
    for (int64_t n = 0; n < g.n; n++) {
      const char *img = x + (size_t)(n * g.c * g.isz) * es, *col = img;
      if (!g.direct) {
        im2col(&g, es, img, ws, P);
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

#ifdef MXR_HAVE_CUDA
/* The launchers' view of a convolution (op/cuda/convolution.h). */
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

static int conv_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)nout, (void)aux, (void)naux;
  const struct conv_params *p = params;
  if (req[0] == MXR_REQ_NULL) return 0;
  struct conv_geom g;
  int st = conv_forward_checks("GPU", p, in, nin, out, &g);
  if (st) return st;
  const struct mxr__gpu_conv cv = conv_gpu_desc(p, &g, in[0].dtype);
  const struct mxr_run_ctx *run = ctx ? ctx->run : NULL;
  const void *bias = p->no_bias ? NULL : in[2].data;
#ifdef MXR_HAVE_CUDNN
  if (!p->cudnn_off)
    return mxr__gpu_conv_forward(run, &cv, in[0].data, in[1].data, bias, out[0].data, req[0]);
#endif
  return mxr__gpu_conv_gemm_forward(run, &cv, in[0].data, in[1].data, bias, out[0].data, req[0]);
}

static int conv_backward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)aux, (void)naux;
  const struct conv_params *p = params;
  struct conv_geom g;
  int st = conv_backward_checks("GPU", p, in, nin, out, nout, &g);
  if (st) return st;
  const struct mxr__gpu_conv cv = conv_gpu_desc(p, &g, in[0].dtype);
  const struct mxr_run_ctx *run = ctx ? ctx->run : NULL;
  void *db = p->no_bias ? NULL : out[2].data;
  const int req_db = p->no_bias ? MXR_REQ_NULL : req[2];
#ifdef MXR_HAVE_CUDNN
  if (!p->cudnn_off)
    return mxr__gpu_conv_backward(run, &cv, in[0].data, in[1].data, in[2].data, out[0].data,
                                  req[0], out[1].data, req[1], db, req_db);
#endif
  return mxr__gpu_conv_gemm_backward(run, &cv, in[0].data, in[1].data, in[2].data, out[0].data,
                                     req[0], out[1].data, req[1], db, req_db);
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
    .nin = 3,
    .get_nin = conv_nin,
    .nout = 1,
    .input_names = conv_inputs,
    .infer_shape = conv_shape,
    .dtypes = F32_F64,
    .forward_cpu = conv_forward,
    .forward_gpu = MXR_GPU_FORWARD(conv_forward_gpu),
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
    .forward_gpu = MXR_GPU_FORWARD(conv_backward_gpu),
    .workspace_bytes = conv_backward_workspace,
};

const struct mxr_op *const mxr__ops_convolution[] = {
    &op_convolution, &op_backward_convolution, NULL,
};
