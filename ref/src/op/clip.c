/*
 * clip and its gradient _backward_clip, with MXNet 1.9.1 semantics:
 *
 *   y = x > a_max ? a_max : (x < a_min ? a_min : x)
 *   dx = (x > a_max || x < a_min) ? 0 : dy
 *
 * a_min and a_max are required float parameters, kept as float (MXNet's
 * real_t) and compared in the data's dtype.  The order of the tests is
 * MXNet's: when a_min > a_max, elements above a_max become a_max and the
 * rest below a_min become a_min; NaN passes through both, and so does its
 * gradient.  The gradient passes at the bounds themselves.  float32 and
 * float64.
 *
 * _backward_clip takes (head gradient, x), MXNet's ElemwiseGradUseIn.
 * Both kernels read an element before writing the same index, so the
 * in-place pairs below are safe.
 */
#include "config.h"

#include <stddef.h>

#include "op/cuda/clip.h"
#include "op/cuda/launch.h"
#include "op/op_internal.h"

#define FLOAT_DTYPES ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64))

struct clip_params {
  double a_min, a_max;
};

static const struct mxr_param_field clip_fields[] = {
    {"a_min", MXR_PARAM_FLOAT, offsetof(struct clip_params, a_min), NULL, NULL},
    {"a_max", MXR_PARAM_FLOAT, offsetof(struct clip_params, a_max), NULL, NULL},
};

static const char *const data_input[] = {"data"};
static const char *const grad_inputs[] = {"ograd", "data"};

/* Inputs and outputs: one dtype (float32 or float64) and one size. */
static int check_args(const char *op, const struct mxr_tensor *in, int nin, const struct mxr_tensor *out) {
  for (int k = 0; k <= nin; k++) {
    const struct mxr_tensor *t = k < nin ? &in[k] : out;
    if (t->dtype != MXR_FLOAT32 && t->dtype != MXR_FLOAT64)
      return mxr_set_error(MXR_ENOTIMPL, "%s: dtype %s is not implemented by libmxref", op,
                           mxr_dtype_name(t->dtype));
    if (t->dtype != in[0].dtype)
      return mxr_set_error(MXR_EINVAL, "%s: dtypes %s and %s differ", op, mxr_dtype_name(in[0].dtype),
                           mxr_dtype_name(t->dtype));
    if (mxr_tensor_size(t) != mxr_tensor_size(&in[0])) {
      char a[96], b[96];
      return mxr_set_error(MXR_EINVAL, "%s: shapes %s and %s differ", op, mxr_shape_str(&in[0].shape, a, sizeof a),
                           mxr_shape_str(&t->shape, b, sizeof b));
    }
  }
  return 0;
}

/* The bounds as float, then in double for the float64 loops (exact). */
static void bounds(const void *params, double *lo, double *hi) {
  const struct clip_params *p = params;
  *lo = (double)(float)p->a_min;
  *hi = (double)(float)p->a_max;
}

#define CLIP_LOOP(T)                                                               \
  do {                                                                             \
    const T *x = in[0].data, l = (T)lo, h = (T)hi;                                  \
    T *y = out[0].data;                                                            \
    if (req[0] == MXR_REQ_ADD) {                                                   \
      for (int64_t i = 0; i < n; i++) y[i] += x[i] > h ? h : (x[i] < l ? l : x[i]); \
    } else {                                                                       \
      MXR_SIMD for (int64_t i = 0; i < n; i++) y[i] = x[i] > h ? h : (x[i] < l ? l : x[i]); \
    }                                                                              \
  } while (0)

static int clip_forward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx, (void)nout, (void)aux, (void)naux;
  int st = check_args("clip", in, nin, &out[0]);
  if (st || req[0] == MXR_REQ_NULL) return st;
  double lo, hi;
  bounds(params, &lo, &hi);
  int64_t n = mxr_tensor_size(&in[0]);
  if (in[0].dtype == MXR_FLOAT64)
    CLIP_LOOP(double);
  else
    CLIP_LOOP(float);
  return 0;
}

#define CLIP_GRAD_LOOP(T)                                                         \
  do {                                                                            \
    const T *g = in[0].data, *x = in[1].data, l = (T)lo, h = (T)hi;                \
    T *dx = out[0].data;                                                          \
    if (req[0] == MXR_REQ_ADD) {                                                  \
      for (int64_t i = 0; i < n; i++) dx[i] += x[i] > h || x[i] < l ? (T)0 : g[i]; \
    } else {                                                                      \
      MXR_SIMD for (int64_t i = 0; i < n; i++) dx[i] = x[i] > h || x[i] < l ? (T)0 : g[i]; \
    }                                                                             \
  } while (0)

static int clip_backward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx, (void)nout, (void)aux, (void)naux;
  int st = check_args("_backward_clip", in, nin, &out[0]);
  if (st || req[0] == MXR_REQ_NULL) return st;
  double lo, hi;
  bounds(params, &lo, &hi);
  int64_t n = mxr_tensor_size(&in[0]);
  if (in[0].dtype == MXR_FLOAT64)
    CLIP_GRAD_LOOP(double);
  else
    CLIP_GRAD_LOOP(float);
  return 0;
}

#ifdef MXR_HAVE_CUDA
static int clip_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)nout, (void)aux, (void)naux;
  int st = check_args("clip", in, nin, &out[0]);
  if (st || req[0] == MXR_REQ_NULL) return st;
  double lo, hi;
  bounds(params, &lo, &hi);
  return mxr__gpu_clip(mxr__op_stream(ctx), in[0].dtype, mxr_tensor_size(&in[0]), NULL, in[0].data, lo, hi,
                       out[0].data, req[0]);
}

static int clip_backward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)nout, (void)aux, (void)naux;
  int st = check_args("_backward_clip", in, nin, &out[0]);
  if (st || req[0] == MXR_REQ_NULL) return st;
  double lo, hi;
  bounds(params, &lo, &hi);
  return mxr__gpu_clip(mxr__op_stream(ctx), in[0].dtype, mxr_tensor_size(&in[0]), in[0].data, in[1].data, lo,
                       hi, out[0].data, req[0]);
}
#endif

static const struct mxr_op op_clip = {
    .name = "clip",
    .aliases = {NULL},
    .fields = clip_fields,
    .num_fields = 2,
    .params_size = sizeof(struct clip_params),
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .dtypes = FLOAT_DTYPES,
    .forward_cpu = clip_forward,
    .forward_gpu = MXR_GPU_FORWARD(clip_forward_gpu),
    .backward = "_backward_clip",
    .grad_flags = MXR_GRAD_USE_INPUTS,
    .inplace = {{0, 0}},
    .num_inplace = 1,
    .exec_type = MXR_EXEC_SYNC,
};

static const struct mxr_op op_backward_clip = {
    .name = "_backward_clip",
    .aliases = {NULL},
    .fields = clip_fields,
    .num_fields = 2,
    .params_size = sizeof(struct clip_params),
    .nin = 2,
    .nout = 1,
    .input_names = grad_inputs,
    .dtypes = FLOAT_DTYPES,
    .forward_cpu = clip_backward,
    .forward_gpu = MXR_GPU_FORWARD(clip_backward_gpu),
    .inplace = {{0, 0}, {1, 0}},
    .num_inplace = 2,
    .exec_type = MXR_EXEC_SYNC,
};

const struct mxr_op *const mxr__ops_clip[] = {&op_clip, &op_backward_clip, NULL};
