/*
 * The reductions sum and mean over axes, and their backward ops, with
 * MXNet 1.9.1's names, parameters, shape rules and gradients.  They take
 * float32 and float64 and accumulate in double.
 *
 * Their GPU forwards run the CPU forwards' checks, then the launchers of
 * op/cuda/tensor.h (kernels in op/cuda/reduce.cu).
 */
#include "config.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op/tensor_common.h"
#include "op/cuda/launch.h"
#include "op/cuda/tensor.h"

static const char *const data_input[] = {"data"};
static const char *const ograd_input[] = {"ograd"};

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
    for (int64_t r = 0; r < nr; r++, walk_next(&wr)) {
      acc += ld(x->data, x->dtype, wk.off + wr.off);
    }
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

const struct mxr_op *const mxr__ops_reduce[] = {
    &op_sum,
    &op_backward_sum,
    &op_mean,
    &op_backward_mean,
    NULL,
};
