/*
 * FullyConnected and its backward op with MXNet 1.9.1 semantics, on
 * float32 and float64: the products go to OpenBLAS, the bias is added in
 * the dtype.  The GPU forwards share the CPU forwards' checks and run
 * cuBLAS and the bias kernels of op/cuda/launch.h (op/cuda/linalg.cu).
 * What the nn families share is in nn_common.h.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "op/blas.h"
#include "op/nn_common.h"
#include "op/cuda/launch.h"
#include "op/cuda/output.h"

/* C[m,n] = (or +=) op(A) op(B), row-major; op(A) is m x k, op(B) is k x n. */
static int gemm(const char *opname, int dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                const void *a, const void *b, bool add, void *c) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return mxr_set_error(MXR_EINVAL, "%s: matrix of %lld x %lld x %lld is too large for BLAS",
                         opname, (long long)m, (long long)n, (long long)k);
  if (m == 0 || n == 0) return 0;
  if (k == 0) {
    if (!add) memset(c, 0, (size_t)(m * n) * mxr_dtype_size(dtype));
    return 0;
  }
  const struct mxr__blas *blas = mxr__blas(opname);
  if (!blas) return MXR_ENOTFOUND;
  const int lda = (int)(ta ? m : k), ldb = (int)(tb ? k : n);
  const enum CBLAS_TRANSPOSE at = ta ? CblasTrans : CblasNoTrans, bt = tb ? CblasTrans : CblasNoTrans;
  if (dtype == MXR_FLOAT64)
    blas->dgemm(CblasRowMajor, at, bt, (int)m, (int)n, (int)k, 1.0, a, lda, b, ldb, add ? 1.0 : 0.0,
                c, (int)n);
  else
    blas->sgemm(CblasRowMajor, at, bt, (int)m, (int)n, (int)k, 1.0f, a, lda, b, ldb,
                add ? 1.0f : 0.0f, c, (int)n);
  return 0;
}

/* -------------------------------------------------------- FullyConnected */

struct fc_params {
  int num_hidden;
  bool no_bias, flatten;
};

static const struct mxr_param_field fc_fields[] = {
    {"num_hidden", MXR_PARAM_INT, offsetof(struct fc_params, num_hidden), NULL, NULL},
    {"no_bias", MXR_PARAM_BOOL, offsetof(struct fc_params, no_bias), "False", NULL},
    {"flatten", MXR_PARAM_BOOL, offsetof(struct fc_params, flatten), "True", NULL},
};

static const char *const fc_inputs[] = {"data", "weight", "bias"};

static int fc_check(const char *opname, void *params) {
  const struct fc_params *p = params;
  if (p->num_hidden < 1)
    return mxr_set_error(MXR_EINVAL, "%s: num_hidden must be > 0, got %d", opname, p->num_hidden);
  return 0;
}

static int fc_nin(const void *params) { return ((const struct fc_params *)params)->no_bias ? 2 : 3; }
static int fc_bwd_nin(const void *params) { return 1 + fc_nin(params); }

/* data as a matrix: m rows of k inputs. */
static void fc_dims(const struct fc_params *p, const struct mxr_shape *d, int64_t *m, int64_t *k) {
  if (p->flatten) {
    *m = d->dim[0];
    *k = dims_prod(d, 1, d->ndim);
  } else {
    *m = dims_prod(d, 0, d->ndim - 1);
    *k = d->dim[d->ndim - 1];
  }
}

SHAPE_FN(fc_shape) {
  SHAPE_ARGS_MAYBE_UNUSED;
  const struct fc_params *p = params;
  if (!mxr__shape_known(&in[0])) return 0;
  char a[96];
  if (in[0].ndim < 1)
    return mxr_set_error(MXR_EINVAL, "FullyConnected: data must have at least 1 dimension, got %s",
                         mxr_shape_str(&in[0], a, sizeof a));
  int64_t m, k;
  fc_dims(p, &in[0], &m, &k);
  struct mxr_shape w = mxr__shape2(p->num_hidden, k), o = in[0];
  int st = mxr__shape_assign(&in[1], &w, "weight");
  if (st) return st;
  if (!p->no_bias) {
    struct mxr_shape b1 = mxr__shape1(p->num_hidden), b2 = mxr__shape2(p->num_hidden, 1);
    if (!mxr__shape_known(&in[2]))
      in[2] = b1;
    else if (!mxr_shape_equal(&in[2], &b1) && !mxr_shape_equal(&in[2], &b2))
      return mxr_set_error(MXR_EINVAL,
                           "FullyConnected: bias: expected shape (%d,) or (%d,1), got %s",
                           p->num_hidden, p->num_hidden, mxr_shape_str(&in[2], a, sizeof a));
  }
  if (p->flatten)
    o = mxr__shape2(in[0].dim[0], p->num_hidden);
  else
    o.dim[o.ndim - 1] = p->num_hidden;
  st = mxr__shape_assign(&out[0], &o, "output");
  if (!st && mxr__shape_known(&out[0]) && in[0].dim[0] <= 0 && out[0].ndim > 0)
    in[0].dim[0] = out[0].dim[0]; /* the batch size, known from the output */
  return st;
}

/* data as m x k, and a check that the weight is num_hidden x k. */
static int fc_forward_dims(const struct fc_params *p, const struct mxr_tensor *in, int64_t *m,
                           int64_t *k) {
  fc_dims(p, &in[0].shape, m, k);
  int64_t n = p->num_hidden;
  if (mxr_tensor_size(&in[1]) != n * *k)
    return mxr_set_error(MXR_EINVAL, "FullyConnected: weight has %lld elements, expected %lld",
                         (long long)mxr_tensor_size(&in[1]), (long long)(n * *k));
  return 0;
}

KERNEL(fc_forward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct fc_params *p = params;
  if (req[0] == MXR_REQ_NULL) return 0;
  int64_t m, k, n = p->num_hidden;
  int st = fc_forward_dims(p, in, &m, &k);
  if (st) return st;
  st = gemm("FullyConnected", in[0].dtype, false, true, m, n, k, in[0].data, in[1].data,
                req[0] == MXR_REQ_ADD, out[0].data);
  if (st || p->no_bias) return st;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) put(&out[0], MXR_REQ_ADD, i * n + j, get(&in[2], j));
  return 0;
}

/* Inputs: ograd, data, weight[, bias].  Outputs: their gradients.  The
 * weight gradient is computed before the data gradient, so the data
 * gradient may share the data's memory (the in-place hint). */
KERNEL(fc_backward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct fc_params *p = params;
  const struct mxr_tensor *dy = &in[0], *x = &in[1], *w = &in[2];
  int64_t m, k, n = p->num_hidden;
  fc_dims(p, &x->shape, &m, &k);
  int st = 0, dt = dy->dtype;
  if (req[1] != MXR_REQ_NULL)
    st = gemm("_backward_FullyConnected", dt, true, false, n, k, m, dy->data, x->data,
              req[1] == MXR_REQ_ADD, out[1].data);
  if (!st && !p->no_bias && req[2] != MXR_REQ_NULL)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t i = 0; i < m; i++) s += get(dy, i * n + j);
      put(&out[2], req[2], j, s);
    }
  if (!st && req[0] != MXR_REQ_NULL)
    st = gemm("_backward_FullyConnected", dt, false, false, m, k, n, dy->data, w->data,
              req[0] == MXR_REQ_ADD, out[0].data);
  return st;
}

#ifdef MXR_HAVE_CUDA
/* The same products through cuBLAS on the worker's stream; the bias row is
 * added, and its gradient summed, by small kernels on that stream. */
KERNEL(fc_forward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct fc_params *p = params;
  if (req[0] == MXR_REQ_NULL) return 0;
  int64_t m, k, n = p->num_hidden;
  int st = fc_forward_dims(p, in, &m, &k);
  if (!st)
    st = mxr__gpu_gemm(ctx->run, in[0].dtype, false, true, m, n, k, in[0].data, k, in[1].data, k,
                       req[0], out[0].data);
  if (st || p->no_bias) return st;
  return mxr__gpu_add_row(mxr__op_stream(ctx), out[0].data, in[2].data, m, n, in[0].dtype);
}

KERNEL(fc_backward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct fc_params *p = params;
  const struct mxr_tensor *dy = &in[0], *x = &in[1], *w = &in[2];
  int64_t m, k, n = p->num_hidden;
  fc_dims(p, &x->shape, &m, &k);
  int dt = dy->dtype;
  /* the weight gradient first, as on the CPU: the data gradient may share
   * the data's memory */
  int st = mxr__gpu_gemm(ctx->run, dt, true, false, n, k, m, dy->data, n, x->data, k, req[1],
                         out[1].data);
  if (!st && !p->no_bias)
    st = mxr__gpu_column_sums(mxr__op_stream(ctx), dy->data, out[2].data, m, n, dt, req[2]);
  if (!st)
    st = mxr__gpu_gemm(ctx->run, dt, false, false, m, k, n, dy->data, n, w->data, k, req[0],
                       out[0].data);
  return st;
}
#endif

SHAPE_FN(fc_bwd_shape) {
  SHAPE_ARGS_MAYBE_UNUSED;
  return grads_like_inputs(in, 1, out, nout);
}

static const struct mxr_op op_fc = {
    .name = "FullyConnected",
    .aliases = {"_sparse_FullyConnected", "_npx_fully_connected", NULL},
    .fields = fc_fields,
    .num_fields = 3,
    .params_size = sizeof(struct fc_params),
    .check = fc_check,
    .nin = 3,
    .nout = 1,
    .get_nin = fc_nin,
    .input_names = fc_inputs,
    .infer_shape = fc_shape,
    .dtypes = F32_F64,
    .forward_cpu = fc_forward,
    .forward_gpu = MXR_GPU_FORWARD(fc_forward_gpu),
    .backward = "_backward_FullyConnected",
    .grad_flags = MXR_GRAD_USE_INPUTS,
};

static const struct mxr_op op_fc_backward = {
    .name = "_backward_FullyConnected",
    .fields = fc_fields,
    .num_fields = 3,
    .params_size = sizeof(struct fc_params),
    .check = fc_check,
    .nin = 4,
    .nout = 3,
    .get_nin = fc_bwd_nin,
    .get_nout = fc_nin,
    .infer_shape = fc_bwd_shape,
    .dtypes = F32_F64,
    .forward_cpu = fc_backward,
    .forward_gpu = MXR_GPU_FORWARD(fc_backward_gpu),
    .inplace = {{1, 0}},
    .num_inplace = 1,
};

const struct mxr_op *const mxr__ops_fully_connected[] = {
    &op_fc,
    &op_fc_backward,
    NULL,
};
