/*
 * dot and its backward op, with MXNet 1.9.1's names, parameters, shape
 * rules and gradients, on float32 and float64 (products through OpenBLAS).
 *
 * The GPU forward runs the CPU forward's checks, then cuBLAS through
 * mxr__gpu_gemm (op/cuda/launch.h).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op/blas.h"
#include "op/tensor_common.h"
#include "op/cuda/launch.h"
#include "op/cuda/tensor.h"

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

/* Inferred from whole input shapes only (partial ones are left as they are). */
static int dot_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  if (!mxr__shape_complete(&in[0]) || !mxr__shape_complete(&in[1])) return 0;
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
  if (st_ || !mxr__shape_complete(&in[1]) || !mxr__shape_complete(&in[2])) return st_;
  struct dot_plan pl;
  st_ = dot_plan(params, &in[1], &in[2], &pl);
  return st_ ? st_ : mxr__shape_assign(&in[0], &pl.out, "ograd");
}

/* C (req)= op(A) op(B), row-major, C of M x N with leading dimension N. */
static int gemm(int dt, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void *A,
                int64_t lda, const void *B, int64_t ldb, int req, void *C) {
  if (req == MXR_REQ_NULL || M == 0 || N == 0) return 0;
  if (K == 0) {
    if (req != MXR_REQ_ADD) memset(C, 0, (size_t)(M * N) * mxr_dtype_size(dt));
    return 0;
  }
  const struct mxr__blas *blas = mxr__blas("dot");
  if (!blas) return MXR_ENOTFOUND;
  const enum CBLAS_TRANSPOSE opa = ta ? CblasTrans : CblasNoTrans, opb = tb ? CblasTrans : CblasNoTrans;
  if (dt == MXR_FLOAT64)
    blas->dgemm(CblasRowMajor, opa, opb, (blasint)M, (blasint)N, (blasint)K, 1.0, A, (blasint)lda,
                B, (blasint)ldb, req == MXR_REQ_ADD ? 1.0 : 0.0, C, (blasint)N);
  else
    blas->sgemm(CblasRowMajor, opa, opb, (blasint)M, (blasint)N, (blasint)K, 1.0f, A, (blasint)lda,
                B, (blasint)ldb, req == MXR_REQ_ADD ? 1.0f : 0.0f, C, (blasint)N);
  return 0;
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
  return gemm(dt, ta, tb, M, N, K, A, lda, B, ldb, req, C);
}

static int dot_forward_on(bool gpu, const struct mxr_op_ctx *ctx, const struct dot_params *p,
                          const struct mxr_tensor *in, const int *req, struct mxr_tensor *out) {
  struct dot_plan pl;
  int st_ = dot_plan(p, &in[0].shape, &in[1].shape, &pl);
  if (st_ || req[0] == MXR_REQ_NULL) return st_;
  const int dt = in[0].dtype;
  if (pl.vec && !gpu) {
    const struct mxr__blas *blas = mxr__blas("dot");
    if (!blas) return MXR_ENOTFOUND;
    double v = dt == MXR_FLOAT64 ? blas->ddot((blasint)pl.k, in[0].data, 1, in[1].data, 1)
                                 : blas->sdot((blasint)pl.k, in[0].data, 1, in[1].data, 1);
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

const struct mxr_op *const mxr__ops_dot[] = {
    &op_dot,
    &op_backward_dot,
    NULL,
};
