/*
 * Dropout and its `_backward_Dropout` op with MXNet 1.9.1 semantics, on
 * float32 and float64 (element-wise work in double, rounded once when
 * stored, as in output.c; the helpers are in nn_common.h).
 *
 * Where MXNet's CPU kernel behaves oddly, the choice made here:
 *  - Dropout always writes its mask (ones when it passes data through), so
 *    the backward op multiplies by the mask and needs no per-node state.
 *  - Every output honours its req; MXNet ignores req=add in some places.
 */
#include "config.h"

#include <string.h>

#include "op/nn_common.h"
#include "op/cuda/launch.h"
#include "op/cuda/dropout.h"
#include "op/random_fn.h"

/* --------------------------------------------------------------- Dropout */

enum { DROPOUT_TRAINING, DROPOUT_ALWAYS };
static const char *const dropout_modes[] = {"training", "always", NULL};

struct dropout_params {
  double p;
  int mode;
  struct mxr_tuple axes;
  struct mxr_param_str cudnn_off; /* MXNet's optional<bool>; unused on CPU */
};

static const struct mxr_param_field dropout_fields[] = {
    {"p", MXR_PARAM_FLOAT, offsetof(struct dropout_params, p), "0.5", NULL},
    {"mode", MXR_PARAM_ENUM, offsetof(struct dropout_params, mode), "training", dropout_modes},
    {"axes", MXR_PARAM_TUPLE, offsetof(struct dropout_params, axes), "()", NULL},
    /* MXNet's default, optional<bool>(false), as dmlc shows it */
    {"cudnn_off", MXR_PARAM_STRING, offsetof(struct dropout_params, cudnn_off), "0", NULL},
};

static const char *const data_input[] = {"data"};

static int dropout_check(const char *opname, void *params) {
  const struct dropout_params *p = params;
  if (!(p->p >= 0 && p->p <= 1))
    return mxr_set_error(MXR_EINVAL, "%s: p must be in [0, 1], got %g", opname, p->p);
  static const char *const ok[] = {"None", "True", "False", "true", "false", "1", "0"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (strcmp(p->cudnn_off.s, ok[i]) == 0) return 0;
  return mxr_set_error(MXR_EINVAL, "%s: parameter cudnn_off='%s' is not valid: expected None, True or False",
                       opname, p->cudnn_off.s);
}

static int dropout_nvisible(const void *params) {
  (void)params;
  return 1;
}

SHAPE_FN(dropout_shape) {
  SHAPE_ARGS_MAYBE_UNUSED;
  const struct dropout_params *p = params;
  if (!mxr__shape_known(&in[0])) return 0;
  struct mxr_shape mask = in[0];
  for (int i = 0; i < p->axes.n; i++) {
    int64_t a = p->axes.v[i] < 0 ? p->axes.v[i] + mask.ndim : p->axes.v[i];
    if (a < 0 || a >= mask.ndim)
      return mxr_set_error(MXR_EINVAL, "Dropout: axis %lld is out of range for %d dimensions",
                           (long long)p->axes.v[i], mask.ndim);
    mask.dim[a] = 1;
  }
  int st = mxr__shape_assign(&out[0], &in[0], "output");
  return st ? st : mxr__shape_assign(&out[1], &mask, "mask");
}

/* Element j of the mask keeps its input when draw j of the call's random
 * sequence (op/random_fn.h) is below the keep probability. */
static bool dropout_keep(uint64_t seed, int64_t j, float pkeep) {
  return mxr__uniformf_at(seed, (uint64_t)j) < pkeep;
}

/* Step through `data` in order, tracking the index into a mask that has
 * extent 1 on the shared axes: mstride[d] is 0 on those. */
static void mask_strides(const struct mxr_shape *d, const struct mxr_shape *m, int64_t *mstride) {
  int64_t s = 1;
  for (int k = d->ndim - 1; k >= 0; k--) {
    mstride[k] = m->dim[k] == d->dim[k] ? s : 0;
    s *= m->dim[k];
  }
}

static void mask_next(const struct mxr_shape *d, const int64_t *mstride, int64_t *idx, int64_t *j) {
  for (int k = d->ndim - 1; k >= 0; k--) {
    *j += mstride[k];
    if (++idx[k] < d->dim[k]) return;
    *j -= mstride[k] * d->dim[k];
    idx[k] = 0;
  }
}

/* Outputs: out, mask (hidden). */
KERNEL(dropout_forward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct dropout_params *p = params;
  const float pkeep = 1.0f - (float)p->p, scale = 1.0f / pkeep;
  const bool active = pkeep < 1 && (ctx->is_train || p->mode == DROPOUT_ALWAYS);
  const int64_t nm = mxr_tensor_size(&out[1]);
  if (req[1] != MXR_REQ_NULL)
    for (int64_t j = 0; j < nm; j++)
      put(&out[1], req[1], j, !active ? 1.0 : dropout_keep(ctx->seed, j, pkeep) ? scale : 0.0);
  if (req[0] == MXR_REQ_NULL) return 0;
  if (!active) {
    if (writes(req[0]) && in[0].data == out[0].data) return 0;
    for (int64_t i = 0; i < mxr_tensor_size(&in[0]); i++) put(&out[0], req[0], i, get(&in[0], i));
    return 0;
  }
  int64_t mstride[MXR_MAX_NDIM], idx[MXR_MAX_NDIM] = {0}, j = 0;
  mask_strides(&in[0].shape, &out[1].shape, mstride);
  for (int64_t i = 0; i < mxr_tensor_size(&in[0]); i++) {
    const double m = dropout_keep(ctx->seed, j, pkeep) ? (double)scale : 0.0;
    put(&out[0], req[0], i, get(&in[0], i) * m);
    mask_next(&in[0].shape, mstride, idx, &j);
  }
  return 0;
}

/* Inputs: ograd, out, mask.  d data = ograd * mask (broadcast on axes). */
KERNEL(dropout_backward) {
  KERNEL_ARGS_MAYBE_UNUSED;
  if (req[0] == MXR_REQ_NULL) return 0;
  const struct mxr_tensor *dy = &in[0], *mask = &in[2];
  int64_t mstride[MXR_MAX_NDIM], idx[MXR_MAX_NDIM] = {0}, j = 0;
  mask_strides(&dy->shape, &mask->shape, mstride);
  for (int64_t i = 0; i < mxr_tensor_size(dy); i++) {
    put(&out[0], req[0], i, get(dy, i) * get(mask, j));
    mask_next(&dy->shape, mstride, idx, &j);
  }
  return 0;
}

#ifdef MXR_HAVE_CUDA
static struct mxr_gpu_mask_layout mask_layout(const struct mxr_shape *data,
                                              const struct mxr_shape *mask) {
  struct mxr_gpu_mask_layout l = {.ndim = data->ndim};
  for (int k = 0; k < data->ndim; k++) l.dim[k] = data->dim[k];
  mask_strides(data, mask, l.mstride);
  return l;
}

KERNEL(dropout_forward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  const struct dropout_params *p = params;
  const float pkeep = 1.0f - (float)p->p, scale = 1.0f / pkeep;
  const bool active = pkeep < 1 && (ctx->is_train || p->mode == DROPOUT_ALWAYS);
  void *stream = mxr__op_stream(ctx);
  const int64_t n = mxr_tensor_size(&in[0]);
  int st = mxr__gpu_dropout_mask(stream, out[1].dtype, mxr_tensor_size(&out[1]), active, ctx->seed,
                                 pkeep, scale, out[1].data, req[1]);
  if (st || req[0] == MXR_REQ_NULL) return st;
  if (!active) {
    if (writes(req[0]) && in[0].data == out[0].data) return 0;
    return mxr__gpu_copy(stream, in[0].data, out[0].data, in[0].dtype, n, req[0]);
  }
  struct mxr_gpu_mask_layout l = mask_layout(&in[0].shape, &out[1].shape);
  return mxr__gpu_dropout_apply(stream, in[0].dtype, &l, n, in[0].data, NULL, ctx->seed, pkeep,
                                scale, out[0].data, req[0]);
}

KERNEL(dropout_backward_gpu) {
  KERNEL_ARGS_MAYBE_UNUSED;
  if (req[0] == MXR_REQ_NULL) return 0;
  const struct mxr_tensor *dy = &in[0], *mask = &in[2];
  struct mxr_gpu_mask_layout l = mask_layout(&dy->shape, &mask->shape);
  return mxr__gpu_dropout_apply(mxr__op_stream(ctx), dy->dtype, &l, mxr_tensor_size(dy), dy->data,
                                mask->data, 0, 0, 0, out[0].data, req[0]);
}
#endif

SHAPE_FN(dropout_bwd_shape) {
  SHAPE_ARGS_MAYBE_UNUSED;
  return mxr__shape_assign(&out[0], &in[0], "input gradient");
}

static const struct mxr_op op_dropout = {
    .name = "Dropout",
    .aliases = {"_npx_dropout", NULL},
    .fields = dropout_fields,
    .num_fields = 4,
    .params_size = sizeof(struct dropout_params),
    .check = dropout_check,
    .nin = 1,
    .nout = 2,
    .get_nvisible = dropout_nvisible,
    .input_names = data_input,
    .infer_shape = dropout_shape,
    .dtypes = F32_F64,
    .forward_cpu = dropout_forward,
    .forward_gpu = MXR_GPU_FORWARD(dropout_forward_gpu),
    .draws_random = true,
    .backward = "_backward_Dropout",
    .grad_flags = MXR_GRAD_USE_OUTPUTS,
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

static const struct mxr_op op_dropout_backward = {
    .name = "_backward_Dropout",
    .fields = dropout_fields,
    .num_fields = 4,
    .params_size = sizeof(struct dropout_params),
    .check = dropout_check,
    .nin = 3,
    .nout = 1,
    .infer_shape = dropout_bwd_shape,
    .dtypes = F32_F64,
    .forward_cpu = dropout_backward,
    .forward_gpu = MXR_GPU_FORWARD(dropout_backward_gpu),
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

const struct mxr_op *const mxr__ops_dropout[] = {
    &op_dropout, &op_dropout_backward, NULL,
};
