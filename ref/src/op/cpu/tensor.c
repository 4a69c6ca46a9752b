/*
 * Ops of the 'tensor' group, with MXNet 1.9.1's names, parameters, shape
 * rules and gradients: sum and mean (reductions over axes), dot, Flatten,
 * Reshape, transpose, Concat, softmax and log_softmax, and their backward
 * ops.
 *
 * Element-moving ops (Flatten, Reshape, transpose, Concat) work on every
 * dtype; arithmetic ones on float32 and float64, accumulating in double.
 * MXNet's transpose uses itself (with inverted axes) as its gradient; the
 * op contract gives a backward op the forward's parameters, so the inverse
 * lives in a separate op, _backward_transpose.  Concat, softmax and
 * log_softmax are in tensor_2.c, transpose and _backward_transpose in
 * transpose.c.
 *
 * Every op has a GPU forward too: it runs the CPU forward's checks (shared
 * helpers), then a launcher of op/gpu/tensor.h (dot: cuBLAS, through
 * launch.h; Flatten and Reshape: mxr__gpu_copy).
 */
#include "config.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op/cpu/tensor_common.h"
#include "op/gpu/launch.h"
#include "op/gpu/tensor.h"

static const char *const data_input[] = {"data"};
static const char *const ograd_input[] = {"ograd"};

/* The identity on memory with a new shape (Flatten, Reshape, their
 * gradients): y must hold as many elements of x's dtype as x. */
static int copy_check(const char *op, const struct mxr_tensor *x, int req,
                      const struct mxr_tensor *y) {
  int64_t n = mxr_tensor_size(x);
  if (n != mxr_tensor_size(y) || x->dtype != y->dtype)
    return mxr_set_error(MXR_EINVAL, "%s: output holds %lld %s elements, input %lld %s", op,
                         (long long)mxr_tensor_size(y), mxr_dtype_name(y->dtype), (long long)n,
                         mxr_dtype_name(x->dtype));
  return req_add_needs_float(op, x->dtype, req);
}

static int copy_kernel(const char *op, const struct mxr_tensor *x, int req, struct mxr_tensor *y) {
  int st_ = copy_check(op, x, req, y);
  if (st_) return st_;
  move_block(y->data, x->data, mxr_tensor_size(x), x->dtype, req);
  return 0;
}

#ifdef MXR_HAVE_CUDA
static int copy_kernel_gpu(const struct mxr_op_ctx *ctx, const char *op,
                           const struct mxr_tensor *x, int req, struct mxr_tensor *y) {
  int st_ = copy_check(op, x, req, y);
  if (st_) return st_;
  return mxr__gpu_copy(mxr__op_stream(ctx), x->data, y->data, x->dtype, mxr_tensor_size(x), req);
}
#endif

/* ------------------------------------------------------------ sum, mean */

struct reduce_params {
  struct mxr_opt_tuple axis;
  bool keepdims, exclude;
};

static const struct mxr_param_field reduce_fields[] = {
    {"axis", MXR_PARAM_OPT_TUPLE, offsetof(struct reduce_params, axis), "None", NULL},
    {"keepdims", MXR_PARAM_BOOL, offsetof(struct reduce_params, keepdims), "False", NULL},
    {"exclude", MXR_PARAM_BOOL, offsetof(struct reduce_params, exclude), "False", NULL},
};

/* Which input dims are reduced and the output shape (MXNet's
 * ReduceAxesShapeImpl): axis None or () reduces everything; the output is
 * never 0-d unless keepdims keeps a 0-d input. */
static int reduce_plan(const struct reduce_params *p, const struct mxr_shape *in,
                       bool red[MXR_MAX_NDIM], struct mxr_shape *out) {
  const int nd = in->ndim;
  bool sel[MXR_MAX_NDIM] = {false};
  const bool all = !p->axis.has || p->axis.t.n == 0;
  char b[96];
  for (int i = 0; !all && i < p->axis.t.n; i++) {
    int64_t a = p->axis.t.v[i] < 0 ? p->axis.t.v[i] + nd : p->axis.t.v[i];
    if (a < 0 || a >= nd)
      return mxr_set_error(MXR_EINVAL, "axis %lld is out of range for input shape %s",
                           (long long)p->axis.t.v[i], shape_text(in, b, sizeof b));
    if (sel[a])
      return mxr_set_error(MXR_EINVAL, "axis has duplicates (%lld names an axis twice) for input shape %s",
                           (long long)p->axis.t.v[i], shape_text(in, b, sizeof b));
    sel[a] = true;
  }
  out->ndim = 0;
  for (int d = 0; d < nd; d++) {
    red[d] = all || (p->exclude ? !sel[d] : sel[d]);
    if (p->keepdims)
      out->dim[out->ndim++] = red[d] ? 1 : in->dim[d];
    else if (!red[d])
      out->dim[out->ndim++] = in->dim[d];
  }
  if (!p->keepdims && out->ndim == 0) *out = mxr__shape1(1);
  return 0;
}

static int reduce_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  if (!mxr__shape_known(&in[0])) return 0;
  bool red[MXR_MAX_NDIM];
  struct mxr_shape want;
  int st_ = reduce_plan(params, &in[0], red, &want);
  return st_ ? st_ : mxr__shape_assign(&out[0], &want, "output");
}

/* Backward: input ograd (the forward output's shape), output the data
 * gradient; the data shape cannot be recovered from ograd, so only check. */
static int reduce_backward_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  if (!mxr__shape_known(&out[0])) return 0;
  bool red[MXR_MAX_NDIM];
  struct mxr_shape want;
  int st_ = reduce_plan(params, &out[0], red, &want);
  return st_ ? st_ : mxr__shape_assign(&in[0], &want, "ograd");
}

/* Which dims of `full` the reduction sums (red), after checking that
 * `small` (the reduced array, called `what`) has the reduced size. */
static int reduce_match(const char *op, const struct reduce_params *p,
                        const struct mxr_shape *full, const struct mxr_tensor *small,
                        const char *what, bool red[MXR_MAX_NDIM]) {
  struct mxr_shape want;
  if (reduce_plan(p, full, red, &want) || mxr_shape_size(&want) != mxr_tensor_size(small))
    return mxr_set_error(MXR_EINVAL, "%s: %s shape does not match the reduction", op, what);
  return 0;
}

/* What a reduction's gradient multiplies ograd by: 1, or for mean the
 * kept count over the total (1 / the reduced count). */
static double reduce_grad_scale(const struct mxr_tensor *dy, const struct mxr_tensor *dx,
                                bool mean) {
  int64_t n = mxr_tensor_size(dx);
  return mean && n > 0 ? (double)mxr_tensor_size(dy) / (double)n : 1.0;
}

static int reduce_run(const char *op, const struct reduce_params *p, const struct mxr_tensor *x,
                      int req, struct mxr_tensor *y, bool mean) {
  bool red[MXR_MAX_NDIM];
  int st_ = reduce_match(op, p, &x->shape, y, "output", red);
  if (st_ || req == MXR_REQ_NULL) return st_;
  int64_t stride[MXR_MAX_NDIM], kd[MXR_MAX_NDIM], ks[MXR_MAX_NDIM], rd[MXR_MAX_NDIM],
      rs[MXR_MAX_NDIM], nk = 1, nr = 1;
  int nkept = 0, nred = 0;
  row_major_strides(&x->shape, stride);
  for (int d = 0; d < x->shape.ndim; d++) {
    if (red[d]) {
      rd[nred] = x->shape.dim[d], rs[nred++] = stride[d];
      nr *= x->shape.dim[d];
    } else {
      kd[nkept] = x->shape.dim[d], ks[nkept++] = stride[d];
      nk *= x->shape.dim[d];
    }
  }
  struct walk wk, wr;
  walk_init(&wk, nkept, kd, ks);
  for (int64_t o = 0; o < nk; o++, walk_next(&wk)) {
    double acc = 0;
    walk_init(&wr, nred, rd, rs);
    for (int64_t r = 0; r < nr; r++, walk_next(&wr)) acc += ld(x->data, x->dtype, wk.off + wr.off);
    st(y->data, y->dtype, o, req, mean ? acc / (double)nr : acc);
  }
  return 0;
}

/* dx[i] = dy[kept coordinates of i] (divided by the reduced count for mean). */
static int reduce_grad_run(const char *op, const struct reduce_params *p,
                           const struct mxr_tensor *dy, int req, struct mxr_tensor *dx, bool mean) {
  bool red[MXR_MAX_NDIM];
  int st_ = reduce_match(op, p, &dx->shape, dy, "ograd", red);
  if (st_ || req == MXR_REQ_NULL) return st_;
  int64_t gstride[MXR_MAX_NDIM], m = 1, n = mxr_tensor_size(dx);
  for (int d = dx->shape.ndim - 1; d >= 0; d--) {
    gstride[d] = red[d] ? 0 : m;
    if (!red[d]) m *= dx->shape.dim[d];
  }
  const double scale = reduce_grad_scale(dy, dx, mean);
  struct walk w;
  walk_init(&w, dx->shape.ndim, dx->shape.dim, gstride);
  for (int64_t i = 0; i < n; i++, walk_next(&w))
    st(dx->data, dx->dtype, i, req, ld(dy->data, dy->dtype, w.off) * scale);
  return 0;
}

#define REDUCE_KERNEL(fn, run, opname, mean)                                                  \
  static int fn(MXR_FCOMPUTE_PARAMS) {                                                  \
    UNUSED_KERNEL_ARGS;                                                                        \
    return run(opname, params, &in[0], req[0], &out[0], mean);                                 \
  }
REDUCE_KERNEL(sum_forward, reduce_run, "sum", false)
REDUCE_KERNEL(mean_forward, reduce_run, "mean", true)
REDUCE_KERNEL(sum_backward, reduce_grad_run, "_backward_sum", false)
REDUCE_KERNEL(mean_backward, reduce_grad_run, "_backward_mean", true)

#ifdef MXR_HAVE_CUDA
/* The launchers take one dtype for both arrays (type inference gives them
 * one). */
static int same_dtype(const char *op, const struct mxr_tensor *a, const struct mxr_tensor *b) {
  if (a->dtype != b->dtype)
    return mxr_set_error(MXR_EINVAL, "%s (GPU): input %s and output %s differ in dtype", op,
                         mxr_dtype_name(a->dtype) ? mxr_dtype_name(a->dtype) : "?",
                         mxr_dtype_name(b->dtype) ? mxr_dtype_name(b->dtype) : "?");
  return 0;
}

static int reduce_run_gpu(const struct mxr_op_ctx *ctx, const char *op,
                          const struct reduce_params *p, const struct mxr_tensor *x, int req,
                          struct mxr_tensor *y, bool mean) {
  bool red[MXR_MAX_NDIM];
  int st_ = reduce_match(op, p, &x->shape, y, "output", red);
  if (st_ || req == MXR_REQ_NULL) return st_;
  st_ = same_dtype(op, x, y);
  if (st_) return st_;
  return mxr__gpu_reduce(mxr__op_stream(ctx), x->data, y->data, x->dtype, x->shape.ndim,
                         x->shape.dim, red, mean, req);
}

static int reduce_grad_run_gpu(const struct mxr_op_ctx *ctx, const char *op,
                               const struct reduce_params *p, const struct mxr_tensor *dy,
                               int req, struct mxr_tensor *dx, bool mean) {
  bool red[MXR_MAX_NDIM];
  int st_ = reduce_match(op, p, &dx->shape, dy, "ograd", red);
  if (st_ || req == MXR_REQ_NULL) return st_;
  st_ = same_dtype(op, dy, dx);
  if (st_) return st_;
  return mxr__gpu_reduce_grad(mxr__op_stream(ctx), dy->data, dx->data, dx->dtype, dx->shape.ndim,
                              dx->shape.dim, red, reduce_grad_scale(dy, dx, mean), req);
}

#define REDUCE_KERNEL_GPU(fn, run, opname, mean)                                               \
  static int fn(MXR_FCOMPUTE_PARAMS) {                                                  \
    UNUSED_KERNEL_ARGS;                                                                        \
    return run(ctx, opname, params, &in[0], req[0], &out[0], mean);                            \
  }
REDUCE_KERNEL_GPU(sum_forward_gpu, reduce_run_gpu, "sum", false)
REDUCE_KERNEL_GPU(mean_forward_gpu, reduce_run_gpu, "mean", true)
REDUCE_KERNEL_GPU(sum_backward_gpu, reduce_grad_run_gpu, "_backward_sum", false)
REDUCE_KERNEL_GPU(mean_backward_gpu, reduce_grad_run_gpu, "_backward_mean", true)
#endif

#define REDUCE_OP(var, opname, a1, a2, fwd, fwd_gpu, shape, bwd, names) \
  static const struct mxr_op var = {                                    \
      .name = opname,                                                   \
      .aliases = {a1, a2, NULL},                                        \
      .fields = reduce_fields,                                          \
      .num_fields = 3,                                                  \
      .params_size = sizeof(struct reduce_params),                      \
      .nin = 1,                                                         \
      .nout = 1,                                                        \
      .input_names = names,                                             \
      .infer_shape = shape,                                             \
      .dtypes = FLOATS,                                                 \
      .forward_cpu = fwd,                                               \
      .forward_gpu = MXR_GPU_FORWARD(fwd_gpu),                          \
      .backward = bwd,                                                  \
  }
REDUCE_OP(op_sum, "sum", "sum_axis", "_sparse_sum", sum_forward, sum_forward_gpu, reduce_shape,
          "_backward_sum", data_input);
REDUCE_OP(op_mean, "mean", "_sparse_mean", NULL, mean_forward, mean_forward_gpu, reduce_shape,
          "_backward_mean", data_input);
REDUCE_OP(op_backward_sum, "_backward_sum", NULL, NULL, sum_backward, sum_backward_gpu,
          reduce_backward_shape, NULL, ograd_input);
REDUCE_OP(op_backward_mean, "_backward_mean", NULL, NULL, mean_backward, mean_backward_gpu,
          reduce_backward_shape, NULL, ograd_input);

/* ------------------------------------------------------------------ dot */

struct dot_params {
  bool transpose_a, transpose_b;
  struct mxr_param_str forward_stype; /* dense only here; accepted as MXNet does */
};

static const struct mxr_param_field dot_fields[] = {
    {"transpose_a", MXR_PARAM_BOOL, offsetof(struct dot_params, transpose_a), "False", NULL},
    {"transpose_b", MXR_PARAM_BOOL, offsetof(struct dot_params, transpose_b), "False", NULL},
    {"forward_stype", MXR_PARAM_STRING, offsetof(struct dot_params, forward_stype), "None", NULL},
};

static int dot_check(const char *opname, void *params) {
  const char *s = ((struct dot_params *)params)->forward_stype.s;
  static const char *const ok[] = {"None", "default", "row_sparse", "csr"};
  for (int i = 0; i < 4; i++)
    if (strcmp(s, ok[i]) == 0) return 0;
  return mxr_set_error(MXR_EINVAL,
                       "%s: parameter forward_stype='%s' is not valid: expected None, default, "
                       "row_sparse or csr", opname, s);
}

/* C(m,n) = op(A) op(B) with A and B seen as matrices (MXNet's DotShape):
 * lhs contracts its last axis (its first with transpose_a), rhs its first
 * (its last with transpose_b); the output keeps the other axes of each
 * operand of two or more dims.  Two vectors give shape (1,). */
struct dot_plan {
  bool vec;
  int64_t m, n, k;
  struct mxr_shape out;
};

static int dot_plan(const struct dot_params *p, const struct mxr_shape *l, const struct mxr_shape *r,
                    struct dot_plan *pl) {
  const bool ta = p->transpose_a, tb = p->transpose_b;
  char bl[96], br[96];
  shape_text(l, bl, sizeof bl);
  shape_text(r, br, sizeof br);
  if (l->ndim == 0 || r->ndim == 0)
    return mxr_set_error(MXR_EINVAL, "dot: scalar inputs are not supported (lhs %s, rhs %s)", bl, br);
  pl->vec = l->ndim == 1 && r->ndim == 1;
  if (pl->vec && (ta || tb))
    return mxr_set_error(MXR_EINVAL, "dot: cannot transpose vectors (lhs %s, rhs %s)", bl, br);
  int64_t kl = ta ? l->dim[0] : l->dim[l->ndim - 1], kr = tb ? r->dim[r->ndim - 1] : r->dim[0];
  if (kl != kr)
    return mxr_set_error(MXR_EINVAL, "dot: shape mismatch: lhs %s X rhs %s (transpose_a=%d, transpose_b=%d)",
                         bl, br, ta, tb);
  pl->k = kl, pl->m = 1, pl->n = 1;
  pl->out.ndim = 0;
  if (pl->vec) {
    pl->out = mxr__shape1(1);
  } else if (l->ndim + r->ndim - 2 > MXR_MAX_NDIM) {
    return mxr_set_error(MXR_EINVAL, "dot: the output of lhs %s X rhs %s has more than %d dims", bl,
                         br, MXR_MAX_NDIM);
  } else {
    for (int d = ta ? 1 : 0; l->ndim > 1 && d < l->ndim - (ta ? 0 : 1); d++)
      pl->m *= l->dim[d], pl->out.dim[pl->out.ndim++] = l->dim[d];
    for (int d = tb ? 0 : 1; r->ndim > 1 && d < r->ndim - (tb ? 1 : 0); d++)
      pl->n *= r->dim[d], pl->out.dim[pl->out.ndim++] = r->dim[d];
  }
  if (pl->m > INT_MAX || pl->n > INT_MAX || pl->k > INT_MAX)
    return mxr_set_error(MXR_EINVAL, "dot: lhs %s X rhs %s is too large for BLAS", bl, br);
  return 0;
}

static int dot_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  if (!mxr__shape_known(&in[0]) || !mxr__shape_known(&in[1])) return 0;
  struct dot_plan pl;
  int st_ = dot_plan(params, &in[0], &in[1], &pl);
  return st_ ? st_ : mxr__shape_assign(&out[0], &pl.out, "output");
}

/* Backward: inputs (ograd, lhs, rhs), outputs (lhs grad, rhs grad). */
static int dot_backward_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  int st_ = mxr__shape_assign(&out[0], &in[1], "lhs gradient");
  if (!st_) st_ = mxr__shape_assign(&in[1], &out[0], "lhs");
  if (!st_) st_ = mxr__shape_assign(&out[1], &in[2], "rhs gradient");
  if (!st_) st_ = mxr__shape_assign(&in[2], &out[1], "rhs");
  if (st_ || !mxr__shape_known(&in[1]) || !mxr__shape_known(&in[2])) return st_;
  struct dot_plan pl;
  st_ = dot_plan(params, &in[1], &in[2], &pl);
  return st_ ? st_ : mxr__shape_assign(&in[0], &pl.out, "ograd");
}

/* C (req)= op(A) op(B), row-major, C of M x N with leading dimension N. */
static void gemm(int dt, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void *A,
                 int64_t lda, const void *B, int64_t ldb, int req, void *C) {
  if (req == MXR_REQ_NULL || M == 0 || N == 0) return;
  if (K == 0) {
    if (req != MXR_REQ_ADD) memset(C, 0, (size_t)(M * N) * mxr_dtype_size(dt));
    return;
  }
  const enum CBLAS_TRANSPOSE opa = ta ? CblasTrans : CblasNoTrans, opb = tb ? CblasTrans : CblasNoTrans;
  if (dt == MXR_FLOAT64)
    cblas_dgemm(CblasRowMajor, opa, opb, (blasint)M, (blasint)N, (blasint)K, 1.0, A, (blasint)lda,
                B, (blasint)ldb, req == MXR_REQ_ADD ? 1.0 : 0.0, C, (blasint)N);
  else
    cblas_sgemm(CblasRowMajor, opa, opb, (blasint)M, (blasint)N, (blasint)K, 1.0f, A, (blasint)lda,
                B, (blasint)ldb, req == MXR_REQ_ADD ? 1.0f : 0.0f, C, (blasint)N);
}

/* C (req)= op(A) op(B) on the op's device: OpenBLAS on the CPU, cuBLAS on
 * the worker's stream on a GPU. */
static int matmul(const struct mxr_op_ctx *ctx, bool gpu, int dt, bool ta, bool tb, int64_t M,
                  int64_t N, int64_t K, const void *A, int64_t lda, const void *B, int64_t ldb,
                  int req, void *C) {
#ifdef MXR_HAVE_CUDA
  if (gpu) return mxr__gpu_gemm(ctx->run, dt, ta, tb, M, N, K, A, lda, B, ldb, req, C);
#else
  (void)ctx, (void)gpu;
#endif
  gemm(dt, ta, tb, M, N, K, A, lda, B, ldb, req, C);
  return 0;
}

static int dot_forward_on(bool gpu, const struct mxr_op_ctx *ctx, const struct dot_params *p,
                          const struct mxr_tensor *in, const int *req, struct mxr_tensor *out) {
  struct dot_plan pl;
  int st_ = dot_plan(p, &in[0].shape, &in[1].shape, &pl);
  if (st_ || req[0] == MXR_REQ_NULL) return st_;
  const int dt = in[0].dtype;
  if (pl.vec && !gpu) {
    double v = dt == MXR_FLOAT64 ? cblas_ddot((blasint)pl.k, in[0].data, 1, in[1].data, 1)
                                 : cblas_sdot((blasint)pl.k, in[0].data, 1, in[1].data, 1);
    st(out[0].data, dt, 0, req[0], v);
    return 0;
  }
  /* (two vectors on a GPU: a 1 x k by k x 1 product, pl.m = pl.n = 1) */
  return matmul(ctx, gpu, dt, p->transpose_a, p->transpose_b, pl.m, pl.n, pl.k, in[0].data,
                p->transpose_a ? pl.m : pl.k, in[1].data, p->transpose_b ? pl.k : pl.n, req[0],
                out[0].data);
}

static int dot_forward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  return dot_forward_on(false, ctx, params, in, req, out);
}

/* The gradients of two vectors: dA = g B, dB = g A. */
static int dot_vec_backward(bool gpu, const struct mxr_op_ctx *ctx, int dt, int64_t k,
                            const void *G, const void *A, const void *B, const int *req,
                            struct mxr_tensor *out) {
  if (gpu) { /* k x 1 by 1 x 1 products */
    int s = matmul(ctx, true, dt, false, false, k, 1, 1, B, 1, G, 1, req[0], out[0].data);
    return s ? s : matmul(ctx, true, dt, false, false, k, 1, 1, A, 1, G, 1, req[1], out[1].data);
  }
  double g = ld(G, dt, 0);
  for (int64_t i = 0; i < k; i++) {
    st(out[0].data, dt, i, req[0], g * ld(B, dt, i));
    st(out[1].data, dt, i, req[1], g * ld(A, dt, i));
  }
  return 0;
}

/* With C = op(A) op(B) and G = dC:
 *   dA = G op(B)^T   (transpose_a: dA = op(B) G^T)
 *   dB = op(A)^T G   (transpose_b: dB = G^T op(A)) */
static int dot_backward_on(bool gpu, const struct mxr_op_ctx *ctx, const struct dot_params *p,
                           const struct mxr_tensor *in, const int *req, struct mxr_tensor *out) {
  const bool ta = p->transpose_a, tb = p->transpose_b;
  struct dot_plan pl;
  int st_ = dot_plan(p, &in[1].shape, &in[2].shape, &pl);
  if (st_) return st_;
  const int dt = in[0].dtype;
  const void *G = in[0].data, *A = in[1].data, *B = in[2].data;
  if (pl.vec) return dot_vec_backward(gpu, ctx, dt, pl.k, G, A, B, req, out);
  const int64_t m = pl.m, n = pl.n, k = pl.k, lda = ta ? m : k, ldb = tb ? k : n;
  if (!ta)
    st_ = matmul(ctx, gpu, dt, false, !tb, m, k, n, G, n, B, ldb, req[0], out[0].data);
  else
    st_ = matmul(ctx, gpu, dt, tb, true, k, m, n, B, ldb, G, n, req[0], out[0].data);
  if (st_) return st_;
  if (!tb) return matmul(ctx, gpu, dt, !ta, false, k, n, m, A, lda, G, n, req[1], out[1].data);
  return matmul(ctx, gpu, dt, true, ta, n, k, m, G, n, A, lda, req[1], out[1].data);
}

static int dot_backward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  return dot_backward_on(false, ctx, params, in, req, out);
}

#ifdef MXR_HAVE_CUDA
static int dot_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  return dot_forward_on(true, ctx, params, in, req, out);
}

static int dot_backward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  return dot_backward_on(true, ctx, params, in, req, out);
}
#endif

static const char *const dot_inputs[] = {"lhs", "rhs"};

static const struct mxr_op op_dot = {
    .name = "dot",
    .aliases = {"_sparse_dot", NULL},
    .fields = dot_fields,
    .num_fields = 3,
    .params_size = sizeof(struct dot_params),
    .check = dot_check,
    .nin = 2,
    .nout = 1,
    .input_names = dot_inputs,
    .infer_shape = dot_shape,
    .dtypes = FLOATS,
    .forward_cpu = dot_forward,
    .forward_gpu = MXR_GPU_FORWARD(dot_forward_gpu),
    .backward = "_backward_dot",
    .grad_flags = MXR_GRAD_USE_INPUTS,
};

static const struct mxr_op op_backward_dot = {
    .name = "_backward_dot",
    .aliases = {NULL},
    .fields = dot_fields,
    .num_fields = 3,
    .params_size = sizeof(struct dot_params),
    .check = dot_check,
    .nin = 3,
    .nout = 2,
    .infer_shape = dot_backward_shape,
    .dtypes = FLOATS,
    .forward_cpu = dot_backward,
    .forward_gpu = MXR_GPU_FORWARD(dot_backward_gpu),
};

/* ------------------------------------------------------------- Flatten */

static int flatten_shape(MXR_SHAPE_FN_PARAMS) {
  (void)params, (void)nin, (void)nout, (void)aux, (void)naux;
  if (!mxr__shape_known(&in[0])) return 0;
  if (in[0].ndim == 0)
    return mxr_set_error(MXR_EINVAL, "Flatten: input must have at least one dimension, got ()");
  int64_t rest = 1;
  for (int d = 1; d < in[0].ndim; d++) rest *= in[0].dim[d];
  struct mxr_shape want = mxr__shape2(in[0].dim[0], rest);
  return mxr__shape_assign(&out[0], &want, "output");
}

static int flatten_forward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel("Flatten", &in[0], req[0], &out[0]);
}

#ifdef MXR_HAVE_CUDA
static int flatten_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel_gpu(ctx, "Flatten", &in[0], req[0], &out[0]);
}
#endif

/* The gradient is MXNet's _backward_copy (cpu/basic.c). */
static const struct mxr_op op_flatten = {
    .name = "Flatten",
    .aliases = {"flatten", "_npx_batch_flatten", NULL},
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .infer_shape = flatten_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = flatten_forward,
    .forward_gpu = MXR_GPU_FORWARD(flatten_forward_gpu),
    .backward = "_backward_copy",
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

/* ------------------------------------------------------------- Reshape */

struct reshape_params {
  struct mxr_tuple shape;
  bool reverse;
  struct mxr_tuple target_shape; /* deprecated in MXNet */
  bool keep_highest;             /* deprecated in MXNet */
};

static const struct mxr_param_field reshape_fields[] = {
    {"shape", MXR_PARAM_TUPLE, offsetof(struct reshape_params, shape), "()", NULL},
    {"reverse", MXR_PARAM_BOOL, offsetof(struct reshape_params, reverse), "False", NULL},
    {"target_shape", MXR_PARAM_TUPLE, offsetof(struct reshape_params, target_shape), "()", NULL},
    {"keep_highest", MXR_PARAM_BOOL, offsetof(struct reshape_params, keep_highest), "False", NULL},
};

static int reshape_check(const char *opname, void *params) {
  const struct reshape_params *p = params;
  for (int i = 0; i < p->shape.n; i++)
    if (p->shape.v[i] < -4)
      return mxr_set_error(MXR_EINVAL,
                           "%s: shape value %lld is not valid: expected a size or one of 0, -1, -2, -3, -4",
                           opname, (long long)p->shape.v[i]);
  for (int i = 0; i < p->target_shape.n; i++)
    if (p->target_shape.v[i] < 0)
      return mxr_set_error(MXR_EINVAL, "%s: target_shape value %lld is negative", opname,
                           (long long)p->target_shape.v[i]);
  return 0;
}

static void reverse_dims(int64_t *v, int n) {
  for (int i = 0, j = n - 1; i < j; i++, j--) {
    int64_t t = v[i];
    v[i] = v[j], v[j] = t;
  }
}

/* The special values of `shape`, applied left to right (right to left with
 * reverse), as MXNet's InferReshapeShape.  `-1` is filled at the position it
 * produced in the output (MXNet indexes by parameter position, which only
 * differs after -2 or -4, where it breaks). */
static int reshape_special(const struct reshape_params *p, const struct mxr_shape *in,
                           struct mxr_shape *out, const char *ins) {
  int64_t d[MXR_MAX_NDIM], q[MXR_MAX_NDIM], t[MXR_MAX_NDIM + 1];
  const int nd = in->ndim, nq = p->shape.n;
  int src = 0, nt = 0, inf = -1;
  for (int i = 0; i < nd; i++) d[i] = in->dim[i];
  for (int i = 0; i < nq; i++) q[i] = p->shape.v[i];
  if (p->reverse) reverse_dims(d, nd), reverse_dims(q, nq);
#define PUSH(v)                                                                                 \
  do {                                                                                          \
    if (nt == MXR_MAX_NDIM)                                                                     \
      return SHAPE_ERR("shape gives more than %d dims for input %s", MXR_MAX_NDIM, ins);        \
    t[nt++] = (v);                                                                              \
  } while (0)
  for (int i = 0; i < nq; i++) {
    const int64_t v = q[i];
    if (v == 0) {
      if (src >= nd) return SHAPE_ERR("shape value 0 at position %d has no input dim to copy (input %s)", i, ins);
      PUSH(d[src++]);
    } else if (v == -1) {
      if (inf >= 0) return SHAPE_ERR("shape has more than one -1 (input %s)", ins);
      inf = nt;
      PUSH(1);
      src++;
    } else if (v == -2) {
      while (src < nd) PUSH(d[src++]);
    } else if (v == -3) {
      if (src + 1 >= nd) return SHAPE_ERR("shape value -3 needs two input dims left (input %s)", ins);
      PUSH(d[src] * d[src + 1]);
      src += 2;
    } else if (v == -4) {
      if (i + 2 >= nq) return SHAPE_ERR("shape value -4 must be followed by two dims");
      if (src >= nd) return SHAPE_ERR("shape value -4 has no input dim to split (input %s)", ins);
      int64_t d0 = d[src++], a = q[++i], b = q[++i];
      if ((a < 1 && a != -1) || (b < 1 && b != -1) || (a == -1 && b == -1))
        return SHAPE_ERR("split dims (%lld,%lld) after -4 are not valid (one may be -1)",
                         (long long)a, (long long)b);
      if (a == -1) a = d0 / b;
      if (b == -1) b = d0 / a;
      if (a * b != d0)
        return SHAPE_ERR("split dims (%lld,%lld) do not divide input dim %lld (input %s)",
                         (long long)a, (long long)b, (long long)d0, ins);
      PUSH(a);
      PUSH(b);
    } else {
      PUSH(v);
      src++;
    }
  }
#undef PUSH
  if (inf >= 0) {
    int64_t known = 1, total = mxr_shape_size(in);
    for (int i = 0; i < nt; i++) known *= t[i];
    if (known == 0 || total % known != 0)
      return SHAPE_ERR("cannot infer the -1 in shape: %lld elements of input %s do not divide by %lld",
                       (long long)total, ins, (long long)known);
    t[inf] = total / known;
  }
  if (p->reverse) reverse_dims(t, nt);
  out->ndim = nt;
  for (int i = 0; i < nt; i++) out->dim[i] = t[i];
  return 0;
}

static int reshape_target(const struct reshape_params *p, const struct mxr_shape *in,
                          struct mxr_shape *out) {
  const int n = p->target_shape.n, start = p->keep_highest ? 1 : 0;
  if (n > MXR_MAX_NDIM) return SHAPE_ERR("target_shape has more than %d dims", MXR_MAX_NDIM);
  if (p->keep_highest && in->ndim == 0) return SHAPE_ERR("keep_highest needs an input of at least one dim");
  out->ndim = n;
  int zeros = 0, at = 0;
  int64_t known = 1;
  for (int i = 0; i < n; i++) {
    out->dim[i] = i == 0 && p->keep_highest ? in->dim[0] : p->target_shape.v[i];
    if (i >= start && out->dim[i] == 0)
      zeros++, at = i;
    else
      known *= out->dim[i];
  }
  if (zeros == 1 && known > 0) out->dim[at] = mxr_shape_size(in) / known;
  return 0;
}

static int reshape_infer(const struct reshape_params *p, const struct mxr_shape *in,
                         struct mxr_shape *out) {
  char ins[96], outs[96];
  shape_text(in, ins, sizeof ins);
  int st_;
  if (p->shape.n > 0)
    st_ = reshape_special(p, in, out, ins);
  else if (p->target_shape.n > 0)
    st_ = reshape_target(p, in, out);
  else
    return SHAPE_ERR("shape is empty: give the target shape");
  if (st_) return st_;
  if (mxr_shape_size(out) != mxr_shape_size(in))
    return SHAPE_ERR("target shape %s has %lld elements, input %s has %lld",
                     shape_text(out, outs, sizeof outs), (long long)mxr_shape_size(out), ins,
                     (long long)mxr_shape_size(in));
  return 0;
}

static int reshape_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  if (!mxr__shape_known(&in[0])) return 0;
  struct mxr_shape want;
  int st_ = reshape_infer(params, &in[0], &want);
  return st_ ? st_ : mxr__shape_assign(&out[0], &want, "output");
}

/* _backward_reshape: ograd -> data gradient; only the sizes must agree. */
static int backward_reshape_shape(MXR_SHAPE_FN_PARAMS) {
  (void)params, (void)nin, (void)nout, (void)aux, (void)naux;
  if (mxr__shape_known(&in[0]) && mxr__shape_known(&out[0]) &&
      mxr_shape_size(&in[0]) != mxr_shape_size(&out[0])) {
    char a[96], b[96];
    return SHAPE_ERR("ograd %s and data gradient %s differ in size", shape_text(&in[0], a, sizeof a),
                     shape_text(&out[0], b, sizeof b));
  }
  return 0;
}

static int reshape_forward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel("Reshape", &in[0], req[0], &out[0]);
}

static int backward_reshape_forward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel("_backward_reshape", &in[0], req[0], &out[0]);
}

#ifdef MXR_HAVE_CUDA
static int reshape_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel_gpu(ctx, "Reshape", &in[0], req[0], &out[0]);
}

static int backward_reshape_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel_gpu(ctx, "_backward_reshape", &in[0], req[0], &out[0]);
}
#endif

static const struct mxr_op op_reshape = {
    .name = "Reshape",
    .aliases = {"reshape", NULL},
    .fields = reshape_fields,
    .num_fields = 4,
    .params_size = sizeof(struct reshape_params),
    .check = reshape_check,
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .infer_shape = reshape_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = reshape_forward,
    .forward_gpu = MXR_GPU_FORWARD(reshape_forward_gpu),
    .backward = "_backward_reshape",
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

static const struct mxr_op op_backward_reshape = {
    .name = "_backward_reshape",
    .aliases = {NULL},
    .fields = reshape_fields,
    .num_fields = 4,
    .params_size = sizeof(struct reshape_params),
    .nin = 1,
    .nout = 1,
    .input_names = ograd_input,
    .infer_shape = backward_reshape_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = backward_reshape_forward,
    .forward_gpu = MXR_GPU_FORWARD(backward_reshape_forward_gpu),
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

const struct mxr_op *const mxr__ops_tensor[] = {
    &op_sum,
    &op_backward_sum,
    &op_mean,
    &op_backward_mean,
    &op_dot,
    &op_backward_dot,
    &op_flatten,
    &op_reshape,
    &op_backward_reshape,
    &mxr__op_transpose,
    &mxr__op_backward_transpose,
    &mxr__op_concat,
    &mxr__op_backward_concat,
    &mxr__op_softmax,
    &mxr__op_backward_softmax,
    &mxr__op_log_softmax,
    &mxr__op_backward_log_softmax,
    NULL,
};
