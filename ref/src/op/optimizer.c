/*
 * Optimizer update ops with MXNet 1.9.1 semantics: sgd_update,
 * sgd_mom_update, adam_update (dense storage; lazy_update is accepted and
 * only matters for row_sparse gradients, which this runtime does not have).
 *
 * They have no gradient.  The state inputs (momentum; Adam's mean and var)
 * are written in place (mutate_inputs); the new weight is the output, which
 * callers usually alias to the weight (out=weight).  Every element is
 * computed in the array's own type with MXNet's float parameters, in the
 * order of operations MXNet's kernels use.
 *
 * Gradient clipping applies when clip_gradient >= 0 (MXNet's kernels test
 * >= 0 although the documentation says > 0).  SGD clips the rescaled
 * gradient and adds weight decay outside the clip; Adam adds weight decay
 * to the gradient first and clips the sum.
 *
 * The GPU forwards run the same formulas (op/cuda/optimizer.h).
 */
#include "config.h"

#include <math.h>

#include "op/cuda/launch.h"
#include "op/cuda/optimizer.h"
#include "op/op_internal.h"

#define F32_F64 ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64))

struct sgd_params { /* also sgd_mom_update's; momentum unused by sgd_update */
  double lr, momentum, wd, rescale_grad, clip_gradient;
  bool lazy_update;
};

struct adam_params {
  double lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient;
  bool lazy_update;
};

#define COMMON_FIELDS(type)                                                              \
  {"lr", MXR_PARAM_FLOAT, offsetof(type, lr), NULL, NULL},                               \
      {"wd", MXR_PARAM_FLOAT, offsetof(type, wd), "0", NULL},                            \
      {"rescale_grad", MXR_PARAM_FLOAT, offsetof(type, rescale_grad), "1", NULL},        \
      {"clip_gradient", MXR_PARAM_FLOAT, offsetof(type, clip_gradient), "-1", NULL},     \
      {"lazy_update", MXR_PARAM_BOOL, offsetof(type, lazy_update), "True", NULL}

static const struct mxr_param_field sgd_fields[] = {
    COMMON_FIELDS(struct sgd_params),
};

static const struct mxr_param_field sgd_mom_fields[] = {
    COMMON_FIELDS(struct sgd_params),
    {"momentum", MXR_PARAM_FLOAT, offsetof(struct sgd_params, momentum), "0", NULL},
};

static const struct mxr_param_field adam_fields[] = {
    COMMON_FIELDS(struct adam_params),
    {"beta1", MXR_PARAM_FLOAT, offsetof(struct adam_params, beta1), "0.9", NULL},
    {"beta2", MXR_PARAM_FLOAT, offsetof(struct adam_params, beta2), "0.999", NULL},
    {"epsilon", MXR_PARAM_FLOAT, offsetof(struct adam_params, epsilon), "1e-8", NULL},
};

static const char *const sgd_inputs[] = {"weight", "grad", "mom"};
static const char *const adam_inputs[] = {"weight", "grad", "mean", "var"};

#define KERNEL(fn) static int fn(MXR_FCOMPUTE_PARAMS)
#define KERNEL_ARGS_MAYBE_UNUSED MXR_FCOMPUTE_UNUSED

/* MXNet's mshadow_op::clip. */
#define CLIP(x, bound) ((x) > (bound) ? (bound) : (x) < -(bound) ? -(bound) : (x))

/* The loops below are written once for float and once for double:
 * T is the element type, parameters are MXNet's floats cast to T. */

#define SGD_LOOP(T)                                                                    \
  do {                                                                                 \
    const T *w = in[0].data, *g = in[1].data;                                          \
    T *o = out[0].data;                                                                \
    const T lr = (T)(float)p->lr, wd = (T)(float)p->wd, rs = (T)(float)p->rescale_grad, \
            clip = (T)(float)p->clip_gradient;                                          \
    for (int64_t i = 0; i < n; i++) {                                                  \
      T v = clip >= 0 ? (1 - lr * wd) * w[i] - lr * CLIP(rs * g[i], clip)               \
                      : (1 - lr * wd) * w[i] - (lr * rs) * g[i];                        \
      MXR_ASSIGN(req[0], o + i, v);                                                    \
    }                                                                                  \
  } while (0)

KERNEL(sgd_forward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct sgd_params *p = params;
  const int64_t n = mxr_tensor_size(&in[0]);
  if (req[0] == MXR_REQ_NULL) return 0;
  if (in[0].dtype == MXR_FLOAT64)
    SGD_LOOP(double);
  else
    SGD_LOOP(float);
  return 0;
}

#define SGD_MOM_LOOP(T)                                                                \
  do {                                                                                 \
    const T *w = in[0].data, *g = in[1].data;                                          \
    T *m = in[2].data, *o = out[0].data;                                               \
    const T lr = (T)(float)p->lr, wd = (T)(float)p->wd, rs = (T)(float)p->rescale_grad, \
            clip = (T)(float)p->clip_gradient, mom = (T)(float)p->momentum;             \
    for (int64_t i = 0; i < n; i++) {                                                  \
      const T wi = w[i]; /* read before a write to an aliased output */                \
      m[i] = clip >= 0 ? mom * m[i] - lr * wd * wi - lr * CLIP(rs * g[i], clip)         \
                       : mom * m[i] - lr * wd * wi - lr * rs * g[i];                    \
      MXR_ASSIGN(req[0], o + i, wi + m[i]);                                            \
    }                                                                                  \
  } while (0)

/* Inputs: weight, grad, mom (updated in place).  Output: the new weight.
 * The momentum is updated whatever req[0] is, as in MXNet. */
KERNEL(sgd_mom_forward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct sgd_params *p = params;
  const int64_t n = mxr_tensor_size(&in[0]);
  if (in[0].dtype == MXR_FLOAT64)
    SGD_MOM_LOOP(double);
  else
    SGD_MOM_LOOP(float);
  return 0;
}

#define ADAM_LOOP(T, SQRT)                                                             \
  do {                                                                                 \
    const T *w = in[0].data, *g = in[1].data;                                          \
    T *mean = in[2].data, *var = in[3].data, *o = out[0].data;                         \
    const T lr = (T)(float)p->lr, wd = (T)(float)p->wd, rs = (T)(float)p->rescale_grad, \
            clip = (T)(float)p->clip_gradient, b1 = (T)(float)p->beta1,                 \
            b2 = (T)(float)p->beta2, eps = (T)(float)p->epsilon;                        \
    for (int64_t i = 0; i < n; i++) {                                                  \
      const T wi = w[i];                                                               \
      T gr = g[i] * rs + wi * wd;                                                      \
      if (clip >= 0) gr = CLIP(gr, clip);                                              \
      mean[i] = b1 * mean[i] + (1 - b1) * gr;                                          \
      var[i] = b2 * var[i] + (1 - b2) * gr * gr;                                       \
      MXR_ASSIGN(req[0], o + i, wi - lr * mean[i] / (SQRT(var[i]) + eps));             \
    }                                                                                  \
  } while (0)

/* Inputs: weight, grad, mean, var (mean and var updated in place). */
KERNEL(adam_forward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct adam_params *p = params;
  const int64_t n = mxr_tensor_size(&in[0]);
  if (in[0].dtype == MXR_FLOAT64)
    ADAM_LOOP(double, sqrt);
  else
    ADAM_LOOP(float, sqrtf);
  return 0;
}

#ifdef MXR_HAVE_CUDA
/* The GPU forwards: the same updates (op/cuda/optimizer.cu), with the
 * parameters handed over as parsed; the launchers round them to float. */

static struct mxr__gpu_sgd_hyper sgd_hyper(const struct sgd_params *p) {
  return (struct mxr__gpu_sgd_hyper){.lr = p->lr,
                                     .momentum = p->momentum,
                                     .wd = p->wd,
                                     .rescale_grad = p->rescale_grad,
                                     .clip_gradient = p->clip_gradient};
}

static struct mxr__gpu_adam_hyper adam_hyper(const struct adam_params *p) {
  return (struct mxr__gpu_adam_hyper){.lr = p->lr,
                                      .beta1 = p->beta1,
                                      .beta2 = p->beta2,
                                      .epsilon = p->epsilon,
                                      .wd = p->wd,
                                      .rescale_grad = p->rescale_grad,
                                      .clip_gradient = p->clip_gradient};
}

KERNEL(sgd_forward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  if (req[0] == MXR_REQ_NULL) return 0;
  return mxr__gpu_sgd_update(mxr__op_stream(ctx), in[0].data, in[1].data, out[0].data,
                             in[0].dtype, mxr_tensor_size(&in[0]), sgd_hyper(params), req[0]);
}

/* The momentum is updated whatever req[0] is (the launcher runs for null). */
KERNEL(sgd_mom_forward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return mxr__gpu_sgd_mom_update(mxr__op_stream(ctx), in[0].data, in[1].data, in[2].data,
                                 out[0].data, in[0].dtype, mxr_tensor_size(&in[0]),
                                 sgd_hyper(params), req[0]);
}

KERNEL(adam_forward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  return mxr__gpu_adam_update(mxr__op_stream(ctx), in[0].data, in[1].data, in[2].data,
                              in[3].data, out[0].data, in[0].dtype, mxr_tensor_size(&in[0]),
                              adam_hyper(params), req[0]);
}
#endif

/* Shapes: the default (every input and the output share one shape), as
 * MXNet's ElemwiseShape; types likewise. */

static const struct mxr_op op_sgd = {
    .name = "sgd_update",
    .aliases = {"_sparse_sgd_update", NULL},
    .fields = sgd_fields,
    .num_fields = sizeof sgd_fields / sizeof sgd_fields[0],
    .params_size = sizeof(struct sgd_params),
    .nin = 2,
    .nout = 1,
    .input_names = sgd_inputs,
    .dtypes = F32_F64,
    .forward_cpu = sgd_forward,
    .forward_gpu = MXR_GPU_FORWARD(sgd_forward_gpu),
};

static const struct mxr_op op_sgd_mom = {
    .name = "sgd_mom_update",
    .aliases = {"_sparse_sgd_mom_update", NULL},
    .fields = sgd_mom_fields,
    .num_fields = sizeof sgd_mom_fields / sizeof sgd_mom_fields[0],
    .params_size = sizeof(struct sgd_params),
    .nin = 3,
    .nout = 1,
    .input_names = sgd_inputs,
    .dtypes = F32_F64,
    .forward_cpu = sgd_mom_forward,
    .forward_gpu = MXR_GPU_FORWARD(sgd_mom_forward_gpu),
    .mutate_inputs = {2},
    .num_mutate_inputs = 1,
};

static const struct mxr_op op_adam = {
    .name = "adam_update",
    .aliases = {"_sparse_adam_update", NULL},
    .fields = adam_fields,
    .num_fields = sizeof adam_fields / sizeof adam_fields[0],
    .params_size = sizeof(struct adam_params),
    .nin = 4,
    .nout = 1,
    .input_names = adam_inputs,
    .dtypes = F32_F64,
    .forward_cpu = adam_forward,
    .forward_gpu = MXR_GPU_FORWARD(adam_forward_gpu),
    .mutate_inputs = {2, 3},
    .num_mutate_inputs = 2,
};

const struct mxr_op *const mxr__ops_optimizer[] = {&op_sgd, &op_sgd_mom, &op_adam, NULL};
