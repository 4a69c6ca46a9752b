/*
 * Basic ops: reverse (flip), _copy, BlockGrad, _zeros, _ones, _full and their
 * gradients.
 * reverse is the op of the bulking seed workload; its kernels are the
 * shortest possible so that per-op engine and executor costs dominate.
 */
#include "config.h"

#include <string.h>

#include "op/cuda/launch.h"
#include "op/op_internal.h"

/* ------------------------------------------------------------- reverse */

struct reverse_params {
  struct mxr_tuple axis;
};

static const struct mxr_param_field reverse_fields[] = {
    {"axis", MXR_PARAM_TUPLE, offsetof(struct reverse_params, axis), NULL, NULL},
};

static const char *const data_input[] = {"data"};
static const char *const data_ograd[] = {"ograd"};

/* MXR_EINVAL for an axis outside the array.  MXNet 1.9.1's reverse takes
 * no negative axes (its kernel fails on them at run time); we refuse them
 * at shape inference, with a clearer message. */
static int resolve_axes(const struct mxr_tuple *axes, int ndim, bool flip[MXR_MAX_NDIM]) {
  memset(flip, 0, MXR_MAX_NDIM * sizeof flip[0]);
  for (int i = 0; i < axes->n; i++) {
    int64_t a = axes->v[i];
    if (a < 0 || a >= ndim)
      return mxr_set_error(MXR_EINVAL, "reverse: axis %lld is out of range for %d dimensions%s",
                           (long long)a, ndim, a < 0 ? " (MXNet's reverse takes no negative axes)" : "");
    flip[a] = true;
  }
  return 0;
}

static int reverse_shape(MXR_SHAPE_FN_PARAMS) {
  (void)aux;
  (void)naux;
  (void)nout;
  (void)nin;
  int st = mxr__shape_assign(&out[0], &in[0], "output");
  if (!st) st = mxr__shape_assign(&in[0], &out[0], "data");
  if (st || !mxr__shape_known(&in[0])) return st;
  bool flip[MXR_MAX_NDIM];
  return resolve_axes(&((const struct reverse_params *)params)->axis, in[0].ndim, flip);
}

/* Move element `from` of `in` to element `to` of `out`, by element size
 * (fixed-size copies the compiler inlines: memcpy with a variable size
 * would cost a library call per element). */
static inline void move_elem(char *out, int64_t to, const char *in, int64_t from, size_t esize) {
  switch (esize) {
    case 1: out[to] = in[from]; break;
    case 2: ((uint16_t *)(void *)out)[to] = ((const uint16_t *)(const void *)in)[from]; break;
    case 4: ((uint32_t *)(void *)out)[to] = ((const uint32_t *)(const void *)in)[from]; break;
    default: ((uint64_t *)(void *)out)[to] = ((const uint64_t *)(const void *)in)[from]; break;
  }
}

/* Copy `src` into `dst` with the flagged axes reversed.  Elements are moved
 * as bits so every dtype works; ADD requests are handled per dtype. */
static void reverse_copy(const struct mxr_tensor *src, struct mxr_tensor *dst, const bool *flip,
                         int req) {
  const int nd = src->shape.ndim;
  const size_t esize = mxr_dtype_size(src->dtype);
  const int64_t n = mxr_tensor_size(src);
  const char *in = src->data;
  char *out = dst->data;
  if (nd == 1 && flip[0] && req != MXR_REQ_ADD) { /* the seed workload's case */
    for (int64_t o = 0; o < n; o++) move_elem(out, o, in, n - 1 - o, esize);
    return;
  }
  int64_t stride[MXR_MAX_NDIM], idx[MXR_MAX_NDIM] = {0};
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    stride[d] = s;
    s *= src->shape.dim[d];
  }
  for (int64_t o = 0; o < n; o++) {
    int64_t from = 0;
    for (int d = 0; d < nd; d++)
      from += (flip[d] ? src->shape.dim[d] - 1 - idx[d] : idx[d]) * stride[d];
    if (req == MXR_REQ_ADD && src->dtype == MXR_FLOAT32)
      ((float *)(void *)out)[o] += ((const float *)(const void *)in)[from];
    else if (req == MXR_REQ_ADD && src->dtype == MXR_FLOAT64)
      ((double *)(void *)out)[o] += ((const double *)(const void *)in)[from];
    else
      move_elem(out, o, in, from, esize);
    for (int d = nd - 1; d >= 0 && ++idx[d] == src->shape.dim[d]; d--) idx[d] = 0;
  }
}

static int reverse_forward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx;
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  if (req[0] == MXR_REQ_NULL) return 0;
  if (req[0] == MXR_REQ_ADD && in[0].dtype != MXR_FLOAT32 && in[0].dtype != MXR_FLOAT64)
    return mxr_set_error(MXR_EINVAL, "reverse: accumulating (req add) needs float32 or float64");
  if (in[0].data == out[0].data)
    return mxr_set_error(MXR_EINVAL, "reverse: cannot run in place");
  bool flip[MXR_MAX_NDIM];
  int st = resolve_axes(&((const struct reverse_params *)params)->axis, in[0].shape.ndim, flip);
  if (st) return st;
  reverse_copy(&in[0], &out[0], flip, req[0]);
  return 0;
}

#ifdef MXR_HAVE_CUDA
static int reverse_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  if (req[0] == MXR_REQ_NULL) return 0;
  if (in[0].data == out[0].data)
    return mxr_set_error(MXR_EINVAL, "reverse: cannot run in place");
  bool flip[MXR_MAX_NDIM];
  int st = resolve_axes(&((const struct reverse_params *)params)->axis, in[0].shape.ndim, flip);
  if (st) return st;
  return mxr__gpu_reverse(mxr__op_stream(ctx), in[0].data, out[0].data, in[0].dtype, in[0].shape.ndim,
                          in[0].shape.dim, flip, req[0]);
}
#endif

#define ALL_DTYPES                                                                       \
  ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64) | (1u << MXR_FLOAT16) | (1u << MXR_UINT8) | \
   (1u << MXR_INT32) | (1u << MXR_INT8) | (1u << MXR_INT64) | (1u << MXR_BOOL))

static const struct mxr_op op_reverse = {
    .name = "reverse",
    .aliases = {"flip", NULL},
    .fields = reverse_fields,
    .num_fields = 1,
    .params_size = sizeof(struct reverse_params),
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .infer_shape = reverse_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = reverse_forward,
    .forward_gpu = MXR_GPU_FORWARD(reverse_forward_gpu),
    .backward = "_backward_reverse",
};

/* The gradient of a reverse is the reverse of the incoming gradient. */
static const struct mxr_op op_backward_reverse = {
    .name = "_backward_reverse",
    .aliases = {NULL},
    .fields = reverse_fields,
    .num_fields = 1,
    .params_size = sizeof(struct reverse_params),
    .nin = 1,
    .nout = 1,
    .input_names = data_ograd,
    .infer_shape = reverse_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = reverse_forward,
    .forward_gpu = MXR_GPU_FORWARD(reverse_forward_gpu),
};

/* ---------------------------------------------------------------- _copy */

static int copy_forward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx;
  (void)params;
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  int64_t n = mxr_tensor_size(&in[0]);
  if (req[0] == MXR_REQ_NULL || (req[0] != MXR_REQ_ADD && in[0].data == out[0].data)) return 0;
  if (req[0] != MXR_REQ_ADD) {
    memmove(out[0].data, in[0].data, (size_t)n * mxr_dtype_size(in[0].dtype));
    return 0;
  }
  if (in[0].dtype == MXR_FLOAT32) {
    const float *x = in[0].data;
    float *y = out[0].data;
    for (int64_t i = 0; i < n; i++) y[i] += x[i];
  } else if (in[0].dtype == MXR_FLOAT64) {
    const double *x = in[0].data;
    double *y = out[0].data;
    for (int64_t i = 0; i < n; i++) y[i] += x[i];
  } else {
    return mxr_set_error(MXR_EINVAL, "_copy: accumulating (req add) needs float32 or float64");
  }
  return 0;
}

#ifdef MXR_HAVE_CUDA
static int copy_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)params;
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  return mxr__gpu_copy(mxr__op_stream(ctx), in[0].data, out[0].data, in[0].dtype,
                       mxr_tensor_size(&in[0]), req[0]);
}
#endif

static const struct mxr_op op_copy = {
    .name = "_copy",
    .aliases = {"identity", NULL},
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .dtypes = ALL_DTYPES,
    .forward_cpu = copy_forward,
    .forward_gpu = MXR_GPU_FORWARD(copy_forward_gpu),
    .backward = "_backward_copy",
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

/* BlockGrad (stop_gradient): the input unchanged, and no gradient flows
 * back through it (its input's gradient is zero). */
static const struct mxr_op op_block_grad = {
    .name = "BlockGrad",
    .aliases = {"stop_gradient", NULL},
    .nin = 1,
    .nout = 1,
    .ignores_out_grad = true, /* as a loss op's: no head gradient is needed */
    .input_names = data_input,
    .dtypes = ALL_DTYPES,
    .forward_cpu = copy_forward,
    .forward_gpu = MXR_GPU_FORWARD(copy_forward_gpu),
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

/* The gradient of a reshaping op (Flatten, _copy) has the input's shape and
 * the output gradient's size: only the sizes must agree. */
static int same_size_shape(MXR_SHAPE_FN_PARAMS) {
  (void)params;
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  if (!mxr__shape_known(&out[0])) return mxr__shape_assign(&out[0], &in[0], "output");
  if (!mxr__shape_known(&in[0])) return mxr__shape_assign(&in[0], &out[0], "ograd");
  if (mxr__shape_complete(&in[0]) && mxr__shape_complete(&out[0]) &&
      mxr_shape_size(&in[0]) != mxr_shape_size(&out[0])) {
    char a[96], b[96];
    return mxr_set_error(MXR_EINVAL, "gradient of %s elements cannot fill %s",
                         mxr_shape_str(&in[0], a, sizeof a), mxr_shape_str(&out[0], b, sizeof b));
  }
  return 0;
}

static const struct mxr_op op_backward_copy = {
    .name = "_backward_copy",
    .aliases = {NULL},
    .nin = 1,
    .nout = 1,
    .input_names = data_ograd,
    .infer_shape = same_size_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = copy_forward,
    .forward_gpu = MXR_GPU_FORWARD(copy_forward_gpu),
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

/* --------------------------------------------------------- _zeros, _ones */

struct init_params {
  struct mxr_tuple shape;
  struct mxr_param_str ctx; /* accepted as MXNet does; placement comes from the caller */
  int dtype;
};

static const struct mxr_param_field init_fields[] = {
    {"shape", MXR_PARAM_TUPLE, offsetof(struct init_params, shape), "()", NULL},
    {"ctx", MXR_PARAM_STRING, offsetof(struct init_params, ctx), "", NULL},
    {"dtype", MXR_PARAM_ENUM, offsetof(struct init_params, dtype), "float32", mxr__dtype_choices},
};

/* -1 (and 0) stand for an unknown dimension, as in MXNet's legacy shapes. */
static int init_check(const char *opname, void *params) {
  const struct mxr_tuple *t = &((struct init_params *)params)->shape;
  for (int i = 0; i < t->n; i++)
    if (t->v[i] < -1)
      return mxr_set_error(MXR_EINVAL, "%s: shape has a negative dimension (%lld)", opname,
                           (long long)t->v[i]);
  return 0;
}

static int init_shape(MXR_SHAPE_FN_PARAMS) {
  (void)in;
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  const struct mxr_tuple *t = &((const struct init_params *)params)->shape;
  /* MXNet's legacy shapes: () is unknown and a 0 or -1 dimension an unknown
   * size, to be inferred from the consumers (an imperative call then cannot
   * run). */
  if (t->n == 0) return 0;
  struct mxr_shape s = {t->n, {0}};
  for (int i = 0; i < t->n; i++) s.dim[i] = t->v[i] > 0 ? t->v[i] : 0;
  return mxr__shape_assign(&out[0], &s, "output");
}

static int init_type(const void *params, int *in, int nin, int *out, int nout, int *aux,
                     int naux) {
  (void)in;
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  int dt = ((const struct init_params *)params)->dtype;
  if (out[0] >= 0 && out[0] != dt)
    return mxr_set_error(MXR_EINVAL, "output dtype %s disagrees with dtype=%s",
                         mxr_dtype_name(out[0]), mxr_dtype_name(dt));
  out[0] = dt;
  return 0;
}

static int fill_value(struct mxr_tensor *t, int req, double v) {
  int64_t n = mxr_tensor_size(t);
  if (req == MXR_REQ_NULL) return 0;
  if (req == MXR_REQ_ADD && v == 0) return 0;
  switch (t->dtype) {
    case MXR_FLOAT32:
      for (int64_t i = 0; i < n; i++) MXR_ASSIGN(req, (float *)t->data + i, (float)v);
      return 0;
    case MXR_FLOAT64:
      for (int64_t i = 0; i < n; i++) MXR_ASSIGN(req, (double *)t->data + i, v);
      return 0;
    case MXR_INT32:
      for (int64_t i = 0; i < n; i++) MXR_ASSIGN(req, (int32_t *)t->data + i, (int32_t)v);
      return 0;
    case MXR_INT64:
      for (int64_t i = 0; i < n; i++) MXR_ASSIGN(req, (int64_t *)t->data + i, (int64_t)v);
      return 0;
    default:
      return mxr_set_error(MXR_ENOTIMPL, "fill: dtype %s is not implemented by libmxref",
                           mxr_dtype_name(t->dtype));
  }
}

static int zeros_forward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx;
  (void)params;
  (void)in;
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  return fill_value(&out[0], req[0], 0.0);
}

static int ones_forward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx;
  (void)params;
  (void)in;
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  return fill_value(&out[0], req[0], 1.0);
}

#ifdef MXR_HAVE_CUDA
/* Both fills ignore their inputs and params; only the value differs. */
static int fill_output_gpu(const struct mxr_op_ctx *ctx, const int *req, struct mxr_tensor *out,
                           double value) {
  return mxr__gpu_fill(mxr__op_stream(ctx), out[0].data, out[0].dtype, mxr_tensor_size(&out[0]), req[0],
                       value);
}

static int zeros_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)params, (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  return fill_output_gpu(ctx, req, out, 0.0);
}

static int ones_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)params, (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  return fill_output_gpu(ctx, req, out, 1.0);
}
#endif

/* _full: the fill value is a parameter.  Its params start as the other
 * fills' so that their shape and type functions serve it too. */
struct full_params {
  struct init_params init;
  double value;
};

static const struct mxr_param_field full_fields[] = {
    {"shape", MXR_PARAM_TUPLE, offsetof(struct full_params, init.shape), "()", NULL},
    {"ctx", MXR_PARAM_STRING, offsetof(struct full_params, init.ctx), "", NULL},
    {"dtype", MXR_PARAM_ENUM, offsetof(struct full_params, init.dtype), "float32", mxr__dtype_choices},
    {"value", MXR_PARAM_FLOAT, offsetof(struct full_params, value), NULL, NULL},
};

static int full_forward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx, (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  return fill_value(&out[0], req[0], ((const struct full_params *)params)->value);
}

#ifdef MXR_HAVE_CUDA
static int full_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  return fill_output_gpu(ctx, req, out, ((const struct full_params *)params)->value);
}
#endif

#define INIT_DTYPES ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64) | (1u << MXR_INT32) | (1u << MXR_INT64))

/* The three fillers differ in name, parameters and kernels only. */
#define INIT_OP(NAME, FIELDS, NFIELDS, PARAMS, FWD)                                   \
  {                                                                                  \
      .name = NAME,                                                                  \
      .aliases = {NULL},                                                             \
      .fields = FIELDS,                                                              \
      .num_fields = NFIELDS,                                                         \
      .params_size = sizeof(struct PARAMS),                                          \
      .check = init_check,                                                           \
      .nin = 0,                                                                      \
      .nout = 1,                                                                     \
      .infer_shape = init_shape,                                                     \
      .infer_type = init_type,                                                       \
      .dtypes = INIT_DTYPES,                                                         \
      .forward_cpu = FWD,                                                            \
      .forward_gpu = MXR_GPU_FORWARD(FWD##_gpu),                                     \
  }

static const struct mxr_op op_zeros = INIT_OP("_zeros", init_fields, 3, init_params, zeros_forward);
static const struct mxr_op op_full = INIT_OP("_full", full_fields, 4, full_params, full_forward);
static const struct mxr_op op_ones = INIT_OP("_ones", init_fields, 3, init_params, ones_forward);

/* ---------------------------------------------------- add_n, zeros_like */

/* add_n sums its inputs; the gradient pass uses it to add up the gradient
 * contributions of a value used more than once, as MXNet does. */
struct add_n_params {
  int num_args;
};

static const struct mxr_param_field add_n_fields[] = {
    {"num_args", MXR_PARAM_INT, offsetof(struct add_n_params, num_args), NULL, NULL},
};

static int add_n_check(const char *opname, void *params) {
  int n = ((struct add_n_params *)params)->num_args;
  if (n < 1) return mxr_set_error(MXR_EINVAL, "%s: num_args must be >= 1, got %d", opname, n);
  return 0;
}

static int add_n_nin(const void *params) { return ((const struct add_n_params *)params)->num_args; }

static int add_n_forward(MXR_FCOMPUTE_PARAMS) {
  (void)ctx;
  (void)params;
  (void)nout;
  (void)aux;
  (void)naux;
  if (req[0] == MXR_REQ_NULL) return 0;
  int64_t n = mxr_tensor_size(&out[0]);
  if (out[0].dtype == MXR_FLOAT32) {
    float *y = out[0].data;
    for (int64_t j = 0; j < n; j++) {
      float acc = 0;
      for (int i = 0; i < nin; i++) acc += ((const float *)in[i].data)[j];
      MXR_ASSIGN(req[0], &y[j], acc);
    }
  } else {
    double *y = out[0].data;
    for (int64_t j = 0; j < n; j++) {
      double acc = 0;
      for (int i = 0; i < nin; i++) acc += ((const double *)in[i].data)[j];
      MXR_ASSIGN(req[0], &y[j], acc);
    }
  }
  return 0;
}

#ifdef MXR_HAVE_CUDA
static int add_n_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)params;
  (void)nout;
  (void)aux;
  (void)naux;
  /* The executor and the imperative layer cap an op's arrays well below
   * this; a larger count is a caller's bug, reported rather than overrun. */
  const void *ptrs[256];
  if (nin > 256) return mxr_set_error(MXR_EINVAL, "add_n (GPU): %d inputs; at most 256", nin);
  for (int i = 0; i < nin; i++) ptrs[i] = in[i].data;
  return mxr__gpu_add_n(mxr__op_stream(ctx), ptrs, nin, out[0].data, out[0].dtype,
                        mxr_tensor_size(&out[0]), req[0]);
}
#endif

static const struct mxr_op op_add_n = {
    .name = "add_n",
    .aliases = {"ElementWiseSum", NULL},
    .fields = add_n_fields,
    .num_fields = 1,
    .params_size = sizeof(struct add_n_params),
    .check = add_n_check,
    .get_nin = add_n_nin,
    .nout = 1,
    .dtypes = (1u << MXR_FLOAT32) | (1u << MXR_FLOAT64),
    .forward_cpu = add_n_forward,
    .forward_gpu = MXR_GPU_FORWARD(add_n_forward_gpu),
    .grad_passthrough = true,
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

/* zeros_like and ones_like: the fillers' kernels, shaped by their input. */
#define FILL_LIKE_OP(NAME, FWD)                                                       \
  {                                                                                  \
      .name = NAME,                                                                  \
      .aliases = {NULL},                                                             \
      .nin = 1,                                                                      \
      .nout = 1,                                                                     \
      .input_names = data_input,                                                     \
      .dtypes = INIT_DTYPES,                                                         \
      .forward_cpu = FWD,                                                            \
      .forward_gpu = MXR_GPU_FORWARD(FWD##_gpu),                                     \
  }

static const struct mxr_op op_zeros_like = FILL_LIKE_OP("zeros_like", zeros_forward);
static const struct mxr_op op_ones_like = FILL_LIKE_OP("ones_like", ones_forward);

/* _identity_with_attr_like_rhs: lhs, unchanged; rhs only lends its shape.
 * MXNet's gradient pass wraps every head gradient in one, so a backward
 * pass starts with it (one more op in the backward region). */
static const char *const identity_like_inputs[] = {"lhs", "rhs"};

static int identity_like_shape(MXR_SHAPE_FN_PARAMS) {
  (void)params;
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  int st = mxr__shape_assign(&in[0], &in[1], "lhs");
  if (!st) st = mxr__shape_assign(&out[0], &in[0], "output");
  return st;
}

static const struct mxr_op op_identity_like = {
    .name = "_identity_with_attr_like_rhs",
    .aliases = {NULL},
    .nin = 2,
    .nout = 1,
    .input_names = identity_like_inputs,
    .infer_shape = identity_like_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = copy_forward,
    .forward_gpu = MXR_GPU_FORWARD(copy_forward_gpu), /* copies in[0] */
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

const struct mxr_op *const mxr__ops_basic[] = {
    &op_reverse, &op_backward_reverse, &op_copy,       &op_backward_copy, &op_zeros,
    &op_ones,    &op_full,             &op_block_grad,    &op_add_n,            &op_zeros_like, &op_ones_like,     &op_identity_like,
    NULL,
};
