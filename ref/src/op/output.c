/*
 * The loss outputs with MXNet 1.9.1 semantics: SoftmaxOutput (alias
 * Softmax), the regression outputs (Linear, MAE, Logistic), and their
 * `_backward_*` ops.  What the nn families share is in nn_common.h.
 *
 * Kernels take float32 and float64.  Element-wise work is done in double
 * and rounded once when stored.  The GPU forwards share the CPU forwards'
 * checks and run the launchers of op/cuda/output.h.
 *
 * Where MXNet's CPU kernels behave oddly, the choice made here:
 *  - SoftmaxOutput with out_grad=True multiplies the gradient by the softmax
 *    output, not the head gradient: MXNet's gradient node feeds the output
 *    in the head gradient's place, so that is what 1.9.1 computes.
 *  - Every output honours its req; MXNet ignores req=add in some places.
 */
#include "config.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "op/nn_common.h"
#include "op/cuda/launch.h"
#include "op/cuda/output.h"

/* A gradient that is zero (labels): written as 0, or left alone for add. */
static void zero_grad(struct mxr_tensor *t, int req) {
  if (writes(req)) memset(t->data, 0, (size_t)mxr_tensor_size(t) * mxr_dtype_size(t->dtype));
}

/* MXNet's static_cast<int> of a label, without undefined behaviour. */
static int label_int(double v) {
  return v > (double)INT_MIN - 1.0 && v < (double)INT_MAX + 1.0 ? (int)v : INT_MIN;
}

/* --------------------------------------------------------- SoftmaxOutput */

enum { NORM_NULL, NORM_BATCH, NORM_VALID };
static const char *const norm_choices[] = {"null", "batch", "valid", NULL};

struct smo_params {
  double grad_scale, ignore_label, smooth_alpha;
  bool multi_output, use_ignore, preserve_shape, out_grad;
  int normalization;
};

static const struct mxr_param_field smo_fields[] = {
    {"grad_scale", MXR_PARAM_FLOAT, offsetof(struct smo_params, grad_scale), "1", NULL},
    {"ignore_label", MXR_PARAM_FLOAT, offsetof(struct smo_params, ignore_label), "-1", NULL},
    {"multi_output", MXR_PARAM_BOOL, offsetof(struct smo_params, multi_output), "False", NULL},
    {"use_ignore", MXR_PARAM_BOOL, offsetof(struct smo_params, use_ignore), "False", NULL},
    {"preserve_shape", MXR_PARAM_BOOL, offsetof(struct smo_params, preserve_shape), "False", NULL},
    {"normalization", MXR_PARAM_ENUM, offsetof(struct smo_params, normalization), "null",
     norm_choices},
    {"out_grad", MXR_PARAM_BOOL, offsetof(struct smo_params, out_grad), "False", NULL},
    {"smooth_alpha", MXR_PARAM_FLOAT, offsetof(struct smo_params, smooth_alpha), "0", NULL},
};

static const char *const data_label_inputs[] = {"data", "label"};

static int smo_check(const char *opname, void *params) {
  const struct smo_params *p = params;
  if (!(p->smooth_alpha >= 0 && p->smooth_alpha <= 1))
    return mxr_set_error(MXR_EINVAL, "%s: smooth_alpha must be in [0, 1], got %g", opname,
                         p->smooth_alpha);
  return 0;
}

SHAPE_FN(smo_shape) {
  SHAPE_ARGS_MAYBE_UNUSED;
  const struct smo_params *p = params;
  const struct mxr_shape *d = &in[0];
  if (!mxr__shape_complete(d)) return 0; /* from whole data shapes only */
  char a[96], b[96], c[96];
  if (d->ndim < (p->multi_output ? 2 : 1))
    return mxr_set_error(MXR_EINVAL, "SoftmaxOutput: data must have at least %d dimension(s)%s, got %s",
                         p->multi_output ? 2 : 1, p->multi_output ? " with multi_output" : "",
                         mxr_shape_str(d, a, sizeof a));
  struct mxr_shape *l = &in[1];
  if (!mxr_shape_equal(d, l)) { /* a label per instance (else probabilities) */
    if (p->multi_output) {
      int64_t n = d->dim[0], k = d->dim[1], size = mxr_shape_size(d);
      struct mxr_shape l1 = mxr__shape2(n, n && k ? size / n / k : 0), l2 = {d->ndim - 1, {n}},
                       l3 = *d;
      for (int i = 2; i < d->ndim; i++) l2.dim[i - 1] = d->dim[i];
      l3.dim[1] = 1;
      if (!mxr__shape_known(l))
        *l = l1;
      else if (!mxr_shape_equal(l, &l1) && !mxr_shape_equal(l, &l2) && !mxr_shape_equal(l, &l3))
        return mxr_set_error(MXR_EINVAL, "SoftmaxOutput: label: expected shape %s or %s, got %s",
                             mxr_shape_str(&l1, a, sizeof a), mxr_shape_str(&l2, b, sizeof b),
                             mxr_shape_str(l, c, sizeof c));
    } else {
      struct mxr_shape want = {d->ndim - 1, {0}};
      for (int i = 0; i + 1 < d->ndim; i++) want.dim[i] = d->dim[i];
      int st = mxr__shape_assign(l, &want, "label");
      if (st) return st;
    }
  }
  return mxr__shape_assign(&out[0], d, "output");
}

/* Softmax runs along the middle axis of (outer, k, inner). */
struct smo_layout {
  int64_t outer, k, inner;
};

static struct smo_layout smo_layout(const struct smo_params *p, const struct mxr_shape *d) {
  int64_t size = mxr_shape_size(d);
  struct smo_layout l = {d->ndim ? d->dim[0] : 1, 0, 1};
  if (p->multi_output) {
    l.k = d->dim[1];
    l.inner = l.outer && l.k ? size / l.outer / l.k : 0;
  } else if (p->preserve_shape) {
    l.k = d->ndim ? d->dim[d->ndim - 1] : 1;
    l.outer = l.k ? size / l.k : 0;
  } else {
    l.k = l.outer ? size / l.outer : 0;
  }
  return l;
}

static int smo_check_data(const struct smo_params *p, const struct mxr_tensor *data) {
  if (p->multi_output && data->shape.ndim < 2)
    return mxr_set_error(MXR_EINVAL, "SoftmaxOutput: multi_output needs data with 2 or more dimensions");
  return 0;
}

KERNEL(smo_forward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  if (req[0] == MXR_REQ_NULL) return 0;
  int st = smo_check_data(params, &in[0]);
  if (st) return st;
  struct smo_layout l = smo_layout(params, &in[0].shape);
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t i = 0; i < l.inner; i++) {
      const int64_t base = o * l.k * l.inner + i;
      double mx = -INFINITY, sum = 0;
      for (int64_t x = 0; x < l.k; x++) mx = fmax(mx, get(&in[0], base + x * l.inner));
      for (int64_t x = 0; x < l.k; x++) sum += exp(get(&in[0], base + x * l.inner) - mx);
      for (int64_t x = 0; x < l.k; x++) {
        const int64_t j = base + x * l.inner;
        put(&out[0], req[0], j, exp(get(&in[0], j) - mx) / sum);
      }
    }
  return 0;
}

/* What the gradient with class-index labels needs besides the arrays: the
 * layout, and the normaliser `valid` (counted from the labels on the CPU;
 * on a GPU by the kernel itself, count_valid). */
static int smo_grad_setup(const struct smo_params *p, const struct mxr_tensor *label,
                          const struct mxr_tensor *y, struct mxr_smo_grad_plan *g) {
  struct smo_layout l = smo_layout(p, &y->shape);
  const int64_t nlabel = l.outer * l.inner;
  if (mxr_tensor_size(label) != nlabel)
    return mxr_set_error(MXR_EINVAL, "_backward_SoftmaxOutput: label has %lld elements, expected %lld",
                         (long long)mxr_tensor_size(label), (long long)nlabel);
  const double alpha = (float)p->smooth_alpha;
  *g = (struct mxr_smo_grad_plan){
      .outer = l.outer, .k = l.k, .inner = l.inner, .grad_scale = (float)p->grad_scale,
      .ignore_label = label_int(p->ignore_label), .use_ignore = p->use_ignore,
      .out_grad = p->out_grad, .count_valid = p->normalization == NORM_VALID,
      .divide_by_inner = p->multi_output && p->normalization != NORM_VALID, .valid = 1,
      .smooth = !p->multi_output && p->smooth_alpha != 0, .alpha = alpha,
      .off = l.k > 1 ? alpha / (double)(l.k - 1) : 0};
  if (p->normalization == NORM_BATCH) g->valid = p->multi_output ? l.outer : nlabel;
  return 0;
}

/* Inputs: ograd (unused), data, label, output.  Outputs: d data, d label. */
KERNEL(smo_backward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct smo_params *p = params;
  const struct mxr_tensor *label = &in[2], *y = &in[3];
  zero_grad(&out[1], req[1]);
  if (req[0] == MXR_REQ_NULL) return 0;
  if (mxr_shape_equal(&label->shape, &y->shape)) { /* probabilities as labels */
    const double gs = (float)p->grad_scale;
    for (int64_t j = 0; j < mxr_tensor_size(y); j++) {
      double v = (get(y, j) - get(label, j)) * gs;
      put(&out[0], req[0], j, p->out_grad ? v * get(y, j) : v);
    }
    return 0;
  }
  struct mxr_smo_grad_plan g = {.valid = 1};
  int st = smo_grad_setup(p, label, y, &g);
  if (st) return st;
  int64_t valid = g.valid;
  if (g.count_valid) {
    valid = g.outer * g.inner;
    for (int64_t j = 0; j < g.outer * g.inner; j++) valid -= label_int(get(label, j)) == g.ignore_label;
    if (valid == 0) valid = 1;
  }
  double scale = g.grad_scale / (double)valid;
  if (g.divide_by_inner) scale /= (double)g.inner;
  for (int64_t o = 0; o < g.outer; o++)
    for (int64_t i = 0; i < g.inner; i++) {
      const int cls = label_int(get(label, o * g.inner + i));
      const bool skip = g.use_ignore && cls == g.ignore_label;
      for (int64_t x = 0; x < g.k; x++) {
        const int64_t j = (o * g.k + x) * g.inner + i;
        double v = 0;
        if (!skip) {
          v = get(y, j) - (x == cls ? 1.0 : 0.0);
          if (g.smooth) v += x == cls ? g.alpha : -g.off;
        }
        v *= scale;
        put(&out[0], req[0], j, g.out_grad ? v * get(y, j) : v);
      }
    }
  return 0;
}

#ifdef MXR_HAVE_CUDA
/* A zero gradient (labels) on a GPU: written as 0, or left alone for add. */
static int zero_grad_gpu(const struct mxr_op_ctx *ctx, struct mxr_tensor *t, int req) {
  if (!writes(req)) return 0;
  return mxr__gpu_fill(mxr__op_stream(ctx), t->data, t->dtype, mxr_tensor_size(t), req, 0.0);
}

KERNEL(smo_forward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  if (req[0] == MXR_REQ_NULL) return 0;
  int st = smo_check_data(params, &in[0]);
  if (st) return st;
  struct smo_layout l = smo_layout(params, &in[0].shape);
  return mxr__gpu_softmax_mid(mxr__op_stream(ctx), in[0].dtype, l.outer, l.k, l.inner, in[0].data,
                              out[0].data, req[0]);
}

KERNEL(smo_backward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct smo_params *p = params;
  const struct mxr_tensor *label = &in[2], *y = &in[3];
  int st = zero_grad_gpu(ctx, &out[1], req[1]);
  if (st || req[0] == MXR_REQ_NULL) return st;
  if (mxr_shape_equal(&label->shape, &y->shape))
    return mxr__gpu_smo_grad_dense(mxr__op_stream(ctx), y->dtype, mxr_tensor_size(y),
                                   (float)p->grad_scale, p->out_grad, label->data, y->data,
                                   out[0].data, req[0]);
  struct mxr_smo_grad_plan g = {.valid = 1};
  st = smo_grad_setup(p, label, y, &g);
  return st ? st
            : mxr__gpu_smo_grad(ctx->run, y->dtype, &g, label->data, y->data, out[0].data,
                                req[0]);
}
#endif

SHAPE_FN(loss_bwd_shape) {
  SHAPE_ARGS_MAYBE_UNUSED;
  return grads_like_inputs(in, 1, out, nout);
}

static const struct mxr_op op_smo = {
    .name = "SoftmaxOutput",
    .aliases = {"Softmax", NULL},
    .fields = smo_fields,
    .num_fields = 8,
    .params_size = sizeof(struct smo_params),
    .check = smo_check,
    .nin = 2,
    .nout = 1,
    .input_names = data_label_inputs,
    .infer_shape = smo_shape,
    .dtypes = F32_F64,
    .forward_cpu = smo_forward,
    .forward_gpu = MXR_GPU_FORWARD(smo_forward_gpu),
    .backward = "_backward_SoftmaxOutput",
    .grad_flags = MXR_GRAD_USE_INPUTS | MXR_GRAD_USE_OUTPUTS,
    .ignores_out_grad = true,
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

static const struct mxr_op op_smo_backward = {
    .name = "_backward_SoftmaxOutput",
    .fields = smo_fields,
    .num_fields = 8,
    .params_size = sizeof(struct smo_params),
    .check = smo_check,
    .nin = 4,
    .nout = 2,
    .infer_shape = loss_bwd_shape,
    .dtypes = F32_F64,
    .forward_cpu = smo_backward,
    .forward_gpu = MXR_GPU_FORWARD(smo_backward_gpu),
    .inplace = {{3, 0}},
    .num_inplace = 1,
};

/* ---------------------------------------------------- regression outputs */

struct reg_params {
  double grad_scale;
};

static const struct mxr_param_field reg_fields[] = {
    {"grad_scale", MXR_PARAM_FLOAT, offsetof(struct reg_params, grad_scale), "1", NULL},
};

SHAPE_FN(reg_shape) {
  SHAPE_ARGS_MAYBE_UNUSED;
  const struct mxr_shape *d = &in[0];
  struct mxr_shape *l = &in[1];
  if (!mxr__shape_complete(d)) return 0; /* from whole data shapes only */
  char a[96], b[96];
  if (d->ndim < 1)
    return mxr_set_error(MXR_EINVAL, "data must have at least 1 dimension, got %s",
                         mxr_shape_str(d, a, sizeof a));
  if (!mxr__shape_known(l)) {
    /* a (n, 1) output takes a 1-D label by default */
    *l = d->ndim == 2 && d->dim[1] == 1 ? mxr__shape1(d->dim[0]) : *d;
  } else if (l->ndim < 1 || l->dim[0] != d->dim[0] || mxr_shape_size(l) != mxr_shape_size(d)) {
    return mxr_set_error(MXR_EINVAL, "label: shape %s is inconsistent with data %s",
                         mxr_shape_str(l, a, sizeof a), mxr_shape_str(d, b, sizeof b));
  }
  return mxr__shape_assign(&out[0], d, "output");
}

static int reg_forward(bool logistic, const struct mxr_tensor *x, int req, struct mxr_tensor *y) {
  if (req == MXR_REQ_NULL || (!logistic && writes(req) && x->data == y->data)) return 0;
  for (int64_t j = 0; j < mxr_tensor_size(x); j++) {
    double v = get(x, j);
    put(y, req, j, logistic ? 1.0 / (1.0 + exp(-v)) : v);
  }
  return 0;
}

KERNEL(linear_reg_forward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return reg_forward(false, &in[0], req[0], &out[0]);
}

KERNEL(logistic_reg_forward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return reg_forward(true, &in[0], req[0], &out[0]);
}

/* The gradient's scale, grad_scale / m, m = outputs per example (label
 * size / label rows); an error when the label does not fit. */
static int reg_grad_scale(const char *opname, const struct reg_params *p,
                          const struct mxr_tensor *label, int64_t n, double *scale) {
  if (mxr_tensor_size(label) != n || label->shape.ndim < 1)
    return mxr_set_error(MXR_EINVAL, "%s: label has %lld elements, expected %lld", opname,
                         (long long)mxr_tensor_size(label), (long long)n);
  *scale = (float)p->grad_scale / (float)(n / label->shape.dim[0]);
  return 0;
}

/* Inputs: ograd (unused), data, label, output.  d data = f(out, label) *
 * grad_scale / m. */
static int reg_backward(const char *opname, bool mae, const struct reg_params *p,
                        const struct mxr_tensor *in, const int *req, struct mxr_tensor *out) {
  const struct mxr_tensor *label = &in[2], *y = &in[3];
  zero_grad(&out[1], req[1]);
  const int64_t n = mxr_tensor_size(y);
  if (req[0] == MXR_REQ_NULL || n == 0) return 0;
  double scale = 0;
  int st = reg_grad_scale(opname, p, label, n, &scale);
  if (st) return st;
  for (int64_t j = 0; j < n; j++) {
    double d = get(y, j) - get(label, j);
    put(&out[0], req[0], j, (mae ? (d > 0 ? 1.0 : -1.0) : d) * scale);
  }
  return 0;
}

KERNEL(sq_reg_backward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return reg_backward("_backward_linear_reg_out", false, params, in, req, out);
}

KERNEL(logistic_reg_backward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return reg_backward("_backward_logistic_reg_out", false, params, in, req, out);
}

KERNEL(mae_reg_backward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return reg_backward("_backward_mae_reg_out", true, params, in, req, out);
}

#ifdef MXR_HAVE_CUDA
/* The forward is the identity (linear, MAE) or the logistic function. */
static int reg_forward_gpu(const struct mxr_op_ctx *ctx, bool logistic,
                           const struct mxr_tensor *x, int req, struct mxr_tensor *y) {
  if (req == MXR_REQ_NULL || (!logistic && writes(req) && x->data == y->data)) return 0;
  void *stream = mxr__op_stream(ctx);
  if (!logistic) return mxr__gpu_copy(stream, x->data, y->data, x->dtype, mxr_tensor_size(x), req);
  return mxr__gpu_sigmoid(stream, x->dtype, mxr_tensor_size(x), x->data, y->data, req);
}

KERNEL(linear_reg_forward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return reg_forward_gpu(ctx, false, &in[0], req[0], &out[0]);
}

KERNEL(logistic_reg_forward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return reg_forward_gpu(ctx, true, &in[0], req[0], &out[0]);
}

static int reg_backward_gpu(const struct mxr_op_ctx *ctx, const char *opname, bool mae,
                            const struct reg_params *p, const struct mxr_tensor *in,
                            const int *req, struct mxr_tensor *out) {
  const struct mxr_tensor *label = &in[2], *y = &in[3];
  int st = zero_grad_gpu(ctx, &out[1], req[1]);
  const int64_t n = mxr_tensor_size(y);
  if (st || req[0] == MXR_REQ_NULL || n == 0) return st;
  double scale = 0;
  st = reg_grad_scale(opname, p, label, n, &scale);
  return st ? st
            : mxr__gpu_regression_grad(mxr__op_stream(ctx), y->dtype, n, mae, scale, label->data,
                                       y->data, out[0].data, req[0]);
}

KERNEL(sq_reg_backward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return reg_backward_gpu(ctx, "_backward_linear_reg_out", false, params, in, req, out);
}

KERNEL(logistic_reg_backward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return reg_backward_gpu(ctx, "_backward_logistic_reg_out", false, params, in, req, out);
}

KERNEL(mae_reg_backward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return reg_backward_gpu(ctx, "_backward_mae_reg_out", true, params, in, req, out);
}
#endif

#define REGRESSION_OPS(var, NAME, fwd, BWD, bwd)                                          \
  static const struct mxr_op var = {                                                     \
      .name = NAME,                                                                      \
      .aliases = {"_sparse_" NAME, NULL},                                                \
      .fields = reg_fields,                                                              \
      .num_fields = 1,                                                                   \
      .params_size = sizeof(struct reg_params),                                          \
      .nin = 2,                                                                          \
      .nout = 1,                                                                         \
      .input_names = data_label_inputs,                                                  \
      .infer_shape = reg_shape,                                                          \
      .dtypes = F32_F64,                                                                 \
      .forward_cpu = fwd,                                                                \
      .forward_gpu = MXR_GPU_FORWARD(fwd##_gpu),                                         \
      .backward = BWD,                                                                   \
      .grad_flags = MXR_GRAD_USE_INPUTS | MXR_GRAD_USE_OUTPUTS,                          \
      .ignores_out_grad = true,                                                          \
      .inplace = {{0, 0}},                                                               \
      .num_inplace = 1,                                                                  \
  };                                                                                     \
  static const struct mxr_op var##_backward = {                                          \
      .name = BWD,                                                                       \
      .fields = reg_fields,                                                              \
      .num_fields = 1,                                                                   \
      .params_size = sizeof(struct reg_params),                                          \
      .nin = 4,                                                                          \
      .nout = 2,                                                                         \
      .infer_shape = loss_bwd_shape,                                                     \
      .dtypes = F32_F64,                                                                 \
      .forward_cpu = bwd,                                                                \
      .forward_gpu = MXR_GPU_FORWARD(bwd##_gpu),                                         \
      .inplace = {{3, 0}},                                                               \
      .num_inplace = 1,                                                                  \
  };

REGRESSION_OPS(op_linear_reg, "LinearRegressionOutput", linear_reg_forward,
               "_backward_linear_reg_out", sq_reg_backward)
REGRESSION_OPS(op_mae_reg, "MAERegressionOutput", linear_reg_forward, "_backward_mae_reg_out",
               mae_reg_backward)
REGRESSION_OPS(op_logistic_reg, "LogisticRegressionOutput", logistic_reg_forward,
               "_backward_logistic_reg_out", logistic_reg_backward)

const struct mxr_op *const mxr__ops_output[] = {
    &op_smo,          &op_smo_backward,
    &op_linear_reg,   &op_linear_reg_backward,
    &op_mae_reg,      &op_mae_reg_backward,
    &op_logistic_reg, &op_logistic_reg_backward,
    NULL,
};
