/*
 * BatchNorm and its `_backward_BatchNorm` op with MXNet 1.9.1 semantics, on
 * float32 and float64 (element-wise work in double, rounded once when
 * stored, as in output.c; the helpers are in nn_common.h).
 *
 * Where MXNet's CPU kernels behave oddly, the choice made here:
 *  - BatchNorm keeps the inverse standard deviation in its "var" output (as
 *    MXNet's CPU kernel does) and updates moving_mean/moving_var in the
 *    backward pass, in training mode (as MXNet's CPU and MKL-DNN kernels do).
 *  - Every output honours its req; MXNet ignores req=add in some places.
 */
#include "config.h"

#include <math.h>

#include "op/nn_common.h"
#include "op/cuda/launch.h"
#include "op/cuda/batchnorm.h"

/* ------------------------------------------------------------- BatchNorm */

struct bn_params {
  double eps, momentum;
  bool fix_gamma, use_global_stats, output_mean_var, cudnn_off;
  int axis;
  struct mxr_opt_float min_calib_range, max_calib_range; /* quantization only */
};

static const struct mxr_param_field bn_fields[] = {
    /* MXNet's default is the float 1e-3f widened to double */
    {"eps", MXR_PARAM_FLOAT, offsetof(struct bn_params, eps), "0.0010000000474974513", NULL},
    {"momentum", MXR_PARAM_FLOAT, offsetof(struct bn_params, momentum), "0.9", NULL},
    {"fix_gamma", MXR_PARAM_BOOL, offsetof(struct bn_params, fix_gamma), "True", NULL},
    {"use_global_stats", MXR_PARAM_BOOL, offsetof(struct bn_params, use_global_stats), "False", NULL},
    {"output_mean_var", MXR_PARAM_BOOL, offsetof(struct bn_params, output_mean_var), "False", NULL},
    {"axis", MXR_PARAM_INT, offsetof(struct bn_params, axis), "1", NULL},
    {"cudnn_off", MXR_PARAM_BOOL, offsetof(struct bn_params, cudnn_off), "False", NULL},
    {"min_calib_range", MXR_PARAM_OPT_FLOAT, offsetof(struct bn_params, min_calib_range), "None", NULL},
    {"max_calib_range", MXR_PARAM_OPT_FLOAT, offsetof(struct bn_params, max_calib_range), "None", NULL},
};

static const char *const bn_inputs[] = {"data", "gamma", "beta"};
static const char *const bn_aux[] = {"moving_mean", "moving_var"};

/* MXNet adds eps to the variance in the data's type. */
static double bn_eps(const struct bn_params *p, int dtype) {
  return dtype == MXR_FLOAT64 ? p->eps : (double)(float)p->eps;
}

static int bn_nvisible(const void *params) {
  return ((const struct bn_params *)params)->output_mean_var ? 3 : 1;
}
static int bn_bwd_nin(const void *params) { return bn_nvisible(params) + 6; }

/* data as (outer, channels, inner) around the channel axis. */
struct bn_layout {
  int64_t outer, c, inner;
};

static int bn_layout(const struct bn_params *p, const struct mxr_shape *d, struct bn_layout *l) {
  int ax = p->axis < 0 ? p->axis + d->ndim : p->axis;
  if (ax < 0 || ax >= d->ndim)
    return mxr_set_error(MXR_EINVAL, "BatchNorm: axis %d is out of range for %d dimensions",
                         p->axis, d->ndim);
  *l = (struct bn_layout){dims_prod(d, 0, ax), d->dim[ax], dims_prod(d, ax + 1, d->ndim)};
  return 0;
}

SHAPE_FN(bn_shape) {
  SHAPE_ARGS_MAYBE_UNUSED;
  if (!mxr__shape_known(&in[0])) return 0;
  struct bn_layout l;
  int st = bn_layout(params, &in[0], &l);
  const struct mxr_shape ch = mxr__shape1(l.c);
  static const char *const what[] = {"gamma", "beta", "moving_mean", "moving_var", "mean", "var"};
  struct mxr_shape *slots[] = {&in[1], &in[2], &aux[0], &aux[1], &out[1], &out[2]};
  for (int i = 0; i < 6 && !st; i++) st = mxr__shape_assign(slots[i], &ch, what[i]);
  return st ? st : mxr__shape_assign(&out[0], &in[0], "output");
}

/* Visit the elements of channel c: callback-free, as an index sequence. */
#define BN_FOR_EACH(l, c, j)                                     \
  for (int64_t bn_o = 0; bn_o < (l).outer; bn_o++)              \
    for (int64_t j = (bn_o * (l).c + (c)) * (l).inner,          \
                 bn_end = j + (l).inner;                        \
         j < bn_end; j++)

/* Channel c of y = (x - mean) * invstd * w + b, evaluated in double and
 * rounded once; a float32 loop where both are float32 and y is written. */
static void bn_normalize(const struct bn_layout *l, int64_t c, const struct mxr_tensor *x, struct mxr_tensor *y,
                         int req, double mean, double invstd, double w, double b) {
  if (req == MXR_REQ_ADD || x->dtype != MXR_FLOAT32 || y->dtype != MXR_FLOAT32) {
    BN_FOR_EACH(*l, c, j) put(y, req, j, (get(x, j) - mean) * invstd * w + b);
    return;
  }
  for (int64_t o = 0; o < l->outer; o++) {
    const int64_t base = (o * l->c + c) * l->inner;
    const float *xs = (const float *)x->data + base;
    float *ys = (float *)y->data + base;
    MXR_SIMD for (int64_t j = 0; j < l->inner; j++) ys[j] = (float)(((double)xs[j] - mean) * invstd * w + b);
  }
}

/* Inputs: data, gamma, beta; aux moving_mean, moving_var.  Outputs: out,
 * mean, inverse std (the batch's in training mode, else the moving ones). */
KERNEL(bn_forward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct bn_params *p = params;
  const struct mxr_tensor *x = &in[0];
  struct bn_layout l;
  int st = bn_layout(p, &x->shape, &l);
  if (st) return st;
  const bool batch_stats = ctx->is_train && !p->use_global_stats;
  const int64_t count = l.outer * l.inner;
  const double eps = bn_eps(p, x->dtype);
  for (int64_t c = 0; c < l.c; c++) {
    double mean, invstd;
    if (batch_stats) {
      double sum = 0, sq = 0;
      BN_FOR_EACH(l, c, j) sum += get(x, j);
      mean = count ? sum / (double)count : 0;
      BN_FOR_EACH(l, c, j) sq += (get(x, j) - mean) * (get(x, j) - mean);
      invstd = sq == 0 && p->eps == 0 ? 0 : 1.0 / sqrt((count ? sq / (double)count : 0) + eps);
    } else {
      mean = get(&aux[0], c);
      invstd = 1.0 / sqrt(get(&aux[1], c) + eps);
    }
    put(&out[1], req[1], c, mean);
    put(&out[2], req[2], c, invstd);
    const double w = p->fix_gamma ? 1.0 : get(&in[1], c), b = get(&in[2], c);
    if (req[0] != MXR_REQ_NULL) bn_normalize(&l, c, x, &out[0], req[0], mean, invstd, w, b);
  }
  return 0;
}

/* Inputs: ograd of each visible output (only the first is used), data,
 * gamma, beta, out, mean, invstd; aux moving_mean, moving_var (updated with
 * the batch statistics in training mode).  Outputs: d data, d gamma, d beta. */
KERNEL(bn_backward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct bn_params *p = params;
  const int base = bn_nvisible(p);
  const struct mxr_tensor *dy = &in[0], *x = &in[base], *smean = &in[base + 4], *sinv = &in[base + 5];
  struct bn_layout l;
  int st = bn_layout(p, &x->shape, &l);
  if (st) return st;
  const bool batch_stats = ctx->is_train && !p->use_global_stats;
  const double mom = (float)p->momentum, count = (double)(l.outer * l.inner);
  for (int64_t c = 0; c < l.c; c++) {
    const double w = p->fix_gamma ? 1.0 : get(&in[base + 1], c);
    double mean, invstd;
    if (batch_stats) {
      mean = get(smean, c);
      invstd = get(sinv, c);
      const double var = 1.0 / (invstd * invstd) - p->eps;
      put(&aux[0], MXR_REQ_WRITE, c, get(&aux[0], c) * mom + mean * (1 - mom));
      put(&aux[1], MXR_REQ_WRITE, c, get(&aux[1], c) * mom + var * (1 - mom));
    } else {
      mean = get(&aux[0], c);
      invstd = 1.0 / sqrt(get(&aux[1], c) + bn_eps(p, x->dtype));
    }
    double sum_dy = 0, dot = 0;
    BN_FOR_EACH(l, c, j) {
      sum_dy += get(dy, j);
      dot += (get(x, j) - mean) * get(dy, j);
    }
    if (req[0] != MXR_REQ_NULL) {
      const double iw = invstd * w;
      if (batch_stats) {
        const double k = count ? dot * invstd * invstd / count : 0, gmean = count ? sum_dy / count : 0;
        BN_FOR_EACH(l, c, j) put(&out[0], req[0], j, (get(dy, j) - gmean - (get(x, j) - mean) * k) * iw);
      } else {
        BN_FOR_EACH(l, c, j) put(&out[0], req[0], j, get(dy, j) * iw);
      }
    }
    if (!p->fix_gamma)
      put(&out[1], req[1], c, dot * invstd);
    else if (writes(req[1]))
      put(&out[1], req[1], c, 0.0);
    put(&out[2], req[2], c, sum_dy);
  }
  return 0;
}

SHAPE_FN(bn_bwd_shape) {
  SHAPE_ARGS_MAYBE_UNUSED;
  return grads_like_inputs(in, bn_nvisible(params), out, nout);
}

#ifdef MXR_HAVE_CUDA
/* The launchers' view of a BatchNorm of data x (op/cuda/batchnorm.h), after the
 * CPU's checks. */
static int bn_gpu_describe(const struct bn_params *p, const struct mxr_op_ctx *ctx,
                           const struct mxr_tensor *x, struct mxr__gpu_bn *bn) {
  struct bn_layout l;
  int st = bn_layout(p, &x->shape, &l);
  if (st) return st;
  *bn = (struct mxr__gpu_bn){
      .dtype = x->dtype,
      .outer = l.outer,
      .c = l.c,
      .inner = l.inner,
      .eps = bn_eps(p, x->dtype),
      .eps_param = p->eps,
      .momentum = (float)p->momentum,
      .fix_gamma = p->fix_gamma,
      .batch_stats = ctx->is_train && !p->use_global_stats,
      .allow_cudnn = !p->cudnn_off,
  };
  return 0;
}

/* Device kernels index blindly: each tensor they touch (NULL: one they
 * do not) must have the data's dtype (float32 or float64), and the data's
 * size (the first ndata) or c elements (the rest). */
static int bn_gpu_check(const char *op, const struct mxr__gpu_bn *bn,
                        const struct mxr_tensor *const *t, int n, int ndata) {
  if (bn->dtype != MXR_FLOAT32 && bn->dtype != MXR_FLOAT64)
    return mxr_set_error(MXR_EINVAL, "%s: dtype %d is not supported on GPU (float32, float64)",
                         op, bn->dtype);
  for (int i = 0; i < n; i++) {
    const int64_t want = i < ndata ? bn->outer * bn->c * bn->inner : bn->c;
    if (t[i] && (t[i]->dtype != bn->dtype || mxr_tensor_size(t[i]) != want))
      return mxr_set_error(MXR_EINVAL, "%s: tensor %d has dtype %d and %lld elements, expected "
                           "dtype %d and %lld", op, i, t[i]->dtype,
                           (long long)mxr_tensor_size(t[i]), bn->dtype, (long long)want);
  }
  return 0;
}

/* out[i], or NULL when req[i] leaves it alone. */
static const struct mxr_tensor *bn_written(const struct mxr_tensor *out, const int *req, int i) {
  return req[i] == MXR_REQ_NULL ? NULL : &out[i];
}

KERNEL(bn_forward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  struct mxr__gpu_bn bn;
  int st = bn_gpu_describe(params, ctx, &in[0], &bn);
  const struct mxr_tensor *used[] = {&in[0],  bn_written(out, req, 0), &in[1],
                                     &in[2],  &aux[0], &aux[1], bn_written(out, req, 1),
                                     bn_written(out, req, 2)};
  if (!st) st = bn_gpu_check("BatchNorm", &bn, used, 8, 2);
  if (st) return st;
  return mxr__gpu_bn_forward(ctx->run, &bn, in[0].data, in[1].data, in[2].data, aux[0].data,
                             aux[1].data, out[0].data, out[1].data, out[2].data, req);
}

KERNEL(bn_backward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const int base = bn_nvisible(params);
  const struct mxr_tensor *dy = &in[0], *x = &in[base], *gamma = &in[base + 1];
  const struct mxr_tensor *smean = &in[base + 4], *sinv = &in[base + 5];
  struct mxr__gpu_bn bn;
  int st = bn_gpu_describe(params, ctx, x, &bn);
  const struct mxr_tensor *used[] = {dy,     x,       bn_written(out, req, 0), gamma, smean,
                                     sinv,   &aux[0], &aux[1], bn_written(out, req, 1),
                                     bn_written(out, req, 2)};
  if (!st) st = bn_gpu_check("_backward_BatchNorm", &bn, used, 10, 3);
  if (st) return st;
  return mxr__gpu_bn_backward(ctx->run, &bn, dy->data, x->data, gamma->data, smean->data,
                              sinv->data, aux[0].data, aux[1].data, out[0].data, out[1].data,
                              out[2].data, req);
}
#endif

static const struct mxr_op op_bn = {
    .name = "BatchNorm",
    .aliases = {"_npx_batch_norm", NULL},
    .fields = bn_fields,
    .num_fields = 9,
    .params_size = sizeof(struct bn_params),
    .nin = 3,
    .nout = 3,
    .naux = 2,
    .get_nvisible = bn_nvisible,
    .input_names = bn_inputs,
    .aux_names = bn_aux,
    .infer_shape = bn_shape,
    .dtypes = F32_F64,
    .forward_cpu = bn_forward,
    .forward_gpu = MXR_GPU_FORWARD(bn_forward_gpu),
    .backward = "_backward_BatchNorm",
    .grad_flags = MXR_GRAD_USE_INPUTS | MXR_GRAD_USE_OUTPUTS,
};

static const struct mxr_op op_bn_backward = {
    .name = "_backward_BatchNorm",
    .fields = bn_fields,
    .num_fields = 9,
    .params_size = sizeof(struct bn_params),
    .nin = 7,
    .nout = 3,
    .naux = 2,
    .get_nin = bn_bwd_nin,
    .aux_names = bn_aux,
    .infer_shape = bn_bwd_shape,
    .dtypes = F32_F64,
    .forward_cpu = bn_backward,
    .forward_gpu = MXR_GPU_FORWARD(bn_backward_gpu),
};

const struct mxr_op *const mxr__ops_batchnorm[] = {
    &op_bn, &op_bn_backward, NULL,
};
