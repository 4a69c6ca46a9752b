/*
 * Dtype conversions: Cast (cast, amp_cast's plain form), its gradient
 * _backward_Cast, and _copyto (NDArray.copyto and astype: a copy into an
 * array of any dtype).  Elements go through int64 between integer types
 * (bool and uint8 included) and through double otherwise, rounding toward
 * zero into integers as C does.  float16 is not implemented.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "op/cuda/launch.h"
#include "op/op_internal.h"

struct cast_params {
  int dtype; /* MXNet's dtype code */
};

static const struct mxr_param_field cast_fields[] = {
    {"dtype", MXR_PARAM_ENUM, offsetof(struct cast_params, dtype), NULL, mxr__dtype_choices},
};

static const char *const data_input[] = {"data"};

static bool is_int(int dt) {
  return dt == MXR_UINT8 || dt == MXR_INT32 || dt == MXR_INT8 || dt == MXR_INT64 || dt == MXR_BOOL;
}

static double load_f(const void *p, int dt, int64_t i) {
  switch (dt) {
    case MXR_FLOAT32: return ((const float *)p)[i];
    case MXR_FLOAT64: return ((const double *)p)[i];
    case MXR_UINT8: return ((const uint8_t *)p)[i];
    case MXR_INT32: return ((const int32_t *)p)[i];
    case MXR_INT8: return ((const int8_t *)p)[i];
    case MXR_INT64: return (double)((const int64_t *)p)[i];
    default: return ((const uint8_t *)p)[i] != 0; /* bool */
  }
}

static int64_t load_i(const void *p, int dt, int64_t i) {
  switch (dt) {
    case MXR_UINT8: return ((const uint8_t *)p)[i];
    case MXR_INT32: return ((const int32_t *)p)[i];
    case MXR_INT8: return ((const int8_t *)p)[i];
    case MXR_INT64: return ((const int64_t *)p)[i];
    default: return ((const uint8_t *)p)[i] != 0; /* bool */
  }
}

static void store(void *p, int dt, int64_t i, int req, double f, int64_t k, bool ints) {
  switch (dt) {
    case MXR_FLOAT32: MXR_ASSIGN(req, (float *)p + i, (float)f); break;
    case MXR_FLOAT64: MXR_ASSIGN(req, (double *)p + i, f); break;
    case MXR_UINT8: MXR_ASSIGN(req, (uint8_t *)p + i, (uint8_t)k); break;
    case MXR_INT32: MXR_ASSIGN(req, (int32_t *)p + i, (int32_t)k); break;
    case MXR_INT8: MXR_ASSIGN(req, (int8_t *)p + i, (int8_t)k); break;
    case MXR_INT64: MXR_ASSIGN(req, (int64_t *)p + i, k); break;
    default: MXR_ASSIGN(req, (uint8_t *)p + i, (uint8_t)(ints ? k != 0 : f != 0.0)); break;
  }
}

static int cast_forward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx, (void)params, (void)nin, (void)nout, (void)aux, (void)naux;
  int from = in[0].dtype, to = out[0].dtype;
  if (from == MXR_FLOAT16 || to == MXR_FLOAT16)
    return mxr_set_error(MXR_ENOTIMPL, "Cast: float16 is not implemented by libmxref");
  int64_t n = mxr_tensor_size(&in[0]);
  if (req[0] == MXR_REQ_NULL) return 0;
  if (from == to && req[0] != MXR_REQ_ADD) {
    if (in[0].data != out[0].data) memmove(out[0].data, in[0].data, (size_t)n * mxr_dtype_size(from));
    return 0;
  }
  bool ints = is_int(from) && is_int(to);
  for (int64_t i = 0; i < n; i++) {
    double f = ints ? 0.0 : load_f(in[0].data, from, i);
    int64_t k = ints ? load_i(in[0].data, from, i) : (int64_t)f;
    store(out[0].data, to, i, req[0], f, k, ints);
  }
  return 0;
}

#ifdef MXR_HAVE_CUDA
static int cast_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)params, (void)nin, (void)nout, (void)aux, (void)naux;
  return mxr__gpu_cast(mxr__op_stream(ctx), in[0].data, in[0].dtype, out[0].data, out[0].dtype,
                       mxr_tensor_size(&in[0]), req[0]);
}
#endif

/* Cast: the output has the dtype parameter's type, the input its own. */
static int cast_type(const void *params, int *in, int nin, int *out, int nout, int *aux, int naux) {
  (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  int dt = ((const struct cast_params *)params)->dtype;
  if (out[0] >= 0 && out[0] != dt)
    return mxr_set_error(MXR_EINVAL, "output dtype %s disagrees with dtype=%s", mxr_dtype_name(out[0]),
                         mxr_dtype_name(dt));
  out[0] = dt;
  return 0;
}

/* _copyto and _backward_Cast: input and output dtypes are independent;
 * the output's comes from the array given (or the graph), else it is the
 * input's. */
static int free_type(const void *params, int *in, int nin, int *out, int nout, int *aux, int naux) {
  (void)params, (void)nin, (void)nout, (void)aux, (void)naux;
  if (out[0] < 0) out[0] = in[0];
  return 0;
}

#define ALL_DTYPES                                                                       \
  ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64) | (1u << MXR_FLOAT16) | (1u << MXR_UINT8) | \
   (1u << MXR_INT32) | (1u << MXR_INT8) | (1u << MXR_INT64) | (1u << MXR_BOOL))

static const struct mxr_op op_cast = {
    .name = "Cast",
    .aliases = {"cast", NULL},
    .fields = cast_fields,
    .num_fields = 1,
    .params_size = sizeof(struct cast_params),
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .infer_type = cast_type,
    .dtypes = ALL_DTYPES,
    .forward_cpu = cast_forward,
    .forward_gpu = MXR_GPU_FORWARD(cast_forward_gpu),
    .backward = "_backward_Cast",
};

static const struct mxr_op op_backward_cast = {
    .name = "_backward_Cast",
    .aliases = {NULL},
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .infer_type = free_type,
    .dtypes = ALL_DTYPES,
    .forward_cpu = cast_forward,
    .forward_gpu = MXR_GPU_FORWARD(cast_forward_gpu),
};

static const struct mxr_op op_copyto = {
    .name = "_copyto",
    .aliases = {NULL},
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .infer_type = free_type,
    .dtypes = ALL_DTYPES,
    .forward_cpu = cast_forward,
    .forward_gpu = MXR_GPU_FORWARD(cast_forward_gpu),
    .backward = "_backward_Cast", /* MXNet records copyto and astype */
};

const struct mxr_op *const mxr__ops_cast[] = {&op_cast, &op_backward_cast, &op_copyto, NULL};
