/*
 * Flatten and Reshape (with its backward op), with MXNet 1.9.1's names,
 * parameters and shape rules.  They move elements of every dtype
 * unchanged (accumulating requests: float32 and float64 only).
 *
 * Their GPU forwards run the CPU forwards' checks, then mxr__gpu_copy
 * (op/cuda/launch.h).
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

/* The identity on memory with a new shape (Flatten, Reshape, their
 * gradients): y must hold as many elements of x's dtype as x. */
static int copy_check(const char *op, const struct mxr_tensor *x, int req,
                      const struct mxr_tensor *y) {
  int64_t n = mxr_tensor_size(x);
  if (n != mxr_tensor_size(y) || x->dtype != y->dtype)
    return mxr_set_error(MXR_EINVAL, "%s: output holds %lld %s elements, input %lld %s", op,
                         (long long)mxr_tensor_size(y), mxr_dtype_name(y->dtype), (long long)n,
                         mxr_dtype_name(x->dtype));
  return req_add_needs_float(op, x->dtype, req);
}

static int copy_kernel(const char *op, const struct mxr_tensor *x, int req, struct mxr_tensor *y) {
  int st_ = copy_check(op, x, req, y);
  if (st_) return st_;
  move_block(y->data, x->data, mxr_tensor_size(x), x->dtype, req);
  return 0;
}

#ifdef MXR_HAVE_CUDA
static int copy_kernel_gpu(const struct mxr_op_ctx *ctx, const char *op,
                           const struct mxr_tensor *x, int req, struct mxr_tensor *y) {
  int st_ = copy_check(op, x, req, y);
  if (st_) return st_;
  return mxr__gpu_copy(mxr__op_stream(ctx), x->data, y->data, x->dtype, mxr_tensor_size(x), req);
}
#endif

static int flatten_shape(MXR_SHAPE_FN_PARAMS) {
  (void)params, (void)nin, (void)nout, (void)aux, (void)naux;
  if (!mxr__shape_known(&in[0])) return 0;
  if (in[0].ndim == 0)
    return mxr_set_error(MXR_EINVAL, "Flatten: input must have at least one dimension, got ()");
  int64_t rest = 1;
  for (int d = 1; d < in[0].ndim; d++) rest *= in[0].dim[d];
  struct mxr_shape want = mxr__shape2(in[0].dim[0], rest);
  return mxr__shape_assign(&out[0], &want, "output");
}

static int flatten_forward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel("Flatten", &in[0], req[0], &out[0]);
}

#ifdef MXR_HAVE_CUDA
static int flatten_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel_gpu(ctx, "Flatten", &in[0], req[0], &out[0]);
}
#endif

/* The gradient is MXNet's _backward_copy (cpu/basic.c). */
static const struct mxr_op op_flatten = {
    .name = "Flatten",
    .aliases = {"flatten", "_npx_batch_flatten", NULL},
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .infer_shape = flatten_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = flatten_forward,
    .forward_gpu = MXR_GPU_FORWARD(flatten_forward_gpu),
    .backward = "_backward_copy",
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

/* ------------------------------------------------------------- Reshape */

struct reshape_params {
  struct mxr_tuple shape;
  bool reverse;
  struct mxr_tuple target_shape; /* deprecated in MXNet */
  bool keep_highest;             /* deprecated in MXNet */
};

static const struct mxr_param_field reshape_fields[] = {
    {"shape", MXR_PARAM_TUPLE, offsetof(struct reshape_params, shape), "()", NULL},
    {"reverse", MXR_PARAM_BOOL, offsetof(struct reshape_params, reverse), "False", NULL},
    {"target_shape", MXR_PARAM_TUPLE, offsetof(struct reshape_params, target_shape), "()", NULL},
    {"keep_highest", MXR_PARAM_BOOL, offsetof(struct reshape_params, keep_highest), "False", NULL},
};

static int reshape_check(const char *opname, void *params) {
  const struct reshape_params *p = params;
  for (int i = 0; i < p->shape.n; i++)
    if (p->shape.v[i] < -4)
      return mxr_set_error(MXR_EINVAL,
                           "%s: shape value %lld is not valid: expected a size or one of 0, -1, -2, -3, -4",
                           opname, (long long)p->shape.v[i]);
  for (int i = 0; i < p->target_shape.n; i++)
    if (p->target_shape.v[i] < 0)
      return mxr_set_error(MXR_EINVAL, "%s: target_shape value %lld is negative", opname,
                           (long long)p->target_shape.v[i]);
  return 0;
}

static void reverse_dims(int64_t *v, int n) {
  for (int i = 0, j = n - 1; i < j; i++, j--) {
    int64_t t = v[i];
    v[i] = v[j], v[j] = t;
  }
}

/* The special values of `shape`, applied left to right (right to left with
 * reverse), as MXNet's InferReshapeShape.  `-1` is filled at the position it
 * produced in the output (MXNet indexes by parameter position, which only
 * differs after -2 or -4, where it breaks). */
static int reshape_special(const struct reshape_params *p, const struct mxr_shape *in,
                           struct mxr_shape *out, const char *ins) {
  int64_t d[MXR_MAX_NDIM], q[MXR_MAX_NDIM], t[MXR_MAX_NDIM + 1];
  const int nd = in->ndim, nq = p->shape.n;
  int src = 0, nt = 0, inf = -1;
  for (int i = 0; i < nd; i++) d[i] = in->dim[i];
  for (int i = 0; i < nq; i++) q[i] = p->shape.v[i];
  if (p->reverse) reverse_dims(d, nd), reverse_dims(q, nq);
#define PUSH(v)                                                                                 \
  do {                                                                                          \
    if (nt == MXR_MAX_NDIM)                                                                     \
      return SHAPE_ERR("shape gives more than %d dims for input %s", MXR_MAX_NDIM, ins);        \
    t[nt++] = (v);                                                                              \
  } while (0)
  for (int i = 0; i < nq; i++) {
    const int64_t v = q[i];
    if (v == 0) {
      if (src >= nd) return SHAPE_ERR("shape value 0 at position %d has no input dim to copy (input %s)", i, ins);
      PUSH(d[src++]);
    } else if (v == -1) {
      if (inf >= 0) return SHAPE_ERR("shape has more than one -1 (input %s)", ins);
      inf = nt;
      PUSH(1);
      src++;
    } else if (v == -2) {
      while (src < nd) PUSH(d[src++]);
    } else if (v == -3) {
      if (src + 1 >= nd) return SHAPE_ERR("shape value -3 needs two input dims left (input %s)", ins);
      PUSH(d[src] * d[src + 1]);
      src += 2;
    } else if (v == -4) {
      if (i + 2 >= nq) return SHAPE_ERR("shape value -4 must be followed by two dims");
      if (src >= nd) return SHAPE_ERR("shape value -4 has no input dim to split (input %s)", ins);
      int64_t d0 = d[src++], a = q[++i], b = q[++i];
      if ((a < 1 && a != -1) || (b < 1 && b != -1) || (a == -1 && b == -1))
        return SHAPE_ERR("split dims (%lld,%lld) after -4 are not valid (one may be -1)",
                         (long long)a, (long long)b);
      if (a == -1) a = d0 / b;
      if (b == -1) b = d0 / a;
      if (d0 > 0 && a * b != d0)
        return SHAPE_ERR("split dims (%lld,%lld) do not divide input dim %lld (input %s)",
                         (long long)a, (long long)b, (long long)d0, ins);
      PUSH(a);
      PUSH(b);
    } else {
      PUSH(v);
      src++;
    }
  }
#undef PUSH
  if (inf >= 0 && !mxr__shape_complete(in)) {
    t[inf] = 0; /* the input's size is unknown, so is this dimension */
  } else if (inf >= 0) {
    int64_t known = 1, total = mxr_shape_size(in);
    for (int i = 0; i < nt; i++) known *= t[i];
    if (known == 0 || total % known != 0)
      return SHAPE_ERR("cannot infer the -1 in shape: %lld elements of input %s do not divide by %lld",
                       (long long)total, ins, (long long)known);
    t[inf] = total / known;
  }
  if (p->reverse) reverse_dims(t, nt);
  out->ndim = nt;
  for (int i = 0; i < nt; i++) out->dim[i] = t[i];
  return 0;
}

static int reshape_target(const struct reshape_params *p, const struct mxr_shape *in,
                          struct mxr_shape *out) {
  const int n = p->target_shape.n, start = p->keep_highest ? 1 : 0;
  if (n > MXR_MAX_NDIM) return SHAPE_ERR("target_shape has more than %d dims", MXR_MAX_NDIM);
  if (p->keep_highest && in->ndim == 0) return SHAPE_ERR("keep_highest needs an input of at least one dim");
  out->ndim = n;
  int zeros = 0, at = 0;
  int64_t known = 1;
  for (int i = 0; i < n; i++) {
    out->dim[i] = i == 0 && p->keep_highest ? in->dim[0] : p->target_shape.v[i];
    if (i >= start && out->dim[i] == 0)
      zeros++, at = i;
    else
      known *= out->dim[i];
  }
  if (zeros == 1 && known > 0) out->dim[at] = mxr_shape_size(in) / known;
  return 0;
}

static int reshape_infer(const struct reshape_params *p, const struct mxr_shape *in,
                         struct mxr_shape *out) {
  char ins[96], outs[96];
  shape_text(in, ins, sizeof ins);
  int st_;
  if (p->shape.n > 0)
    st_ = reshape_special(p, in, out, ins);
  else if (p->target_shape.n > 0)
    st_ = reshape_target(p, in, out);
  else
    return SHAPE_ERR("shape is empty: give the target shape");
  if (st_) return st_;
  if (mxr__shape_complete(in) && mxr__shape_complete(out) &&
      mxr_shape_size(out) != mxr_shape_size(in))
    return SHAPE_ERR("target shape %s has %lld elements, input %s has %lld",
                     shape_text(out, outs, sizeof outs), (long long)mxr_shape_size(out), ins,
                     (long long)mxr_shape_size(in));
  return 0;
}

/* Back from a whole output shape to the one unknown dimension of a partial
 * input: the sizes must match, so it is what the known ones leave. */
static void fill_one_unknown(struct mxr_shape *in, const struct mxr_shape *out) {
  if (!mxr__shape_known(in) || !mxr__shape_complete(out)) return;
  int unknown = -1;
  int64_t known = 1;
  for (int d = 0; d < in->ndim; d++) {
    if (in->dim[d] > 0) {
      known *= in->dim[d];
    } else {
      if (unknown >= 0) return;
      unknown = d;
    }
  }
  int64_t total = mxr_shape_size(out);
  if (unknown >= 0 && total % known == 0) in->dim[unknown] = total / known;
}

static int reshape_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  if (!mxr__shape_known(&in[0])) return 0;
  struct mxr_shape want;
  int st_ = reshape_infer(params, &in[0], &want);
  if (!st_) st_ = mxr__shape_assign(&out[0], &want, "output");
  if (!st_ && !mxr__shape_complete(&in[0])) {
    fill_one_unknown(&in[0], &out[0]);
    if (mxr__shape_complete(&in[0])) st_ = reshape_infer(params, &in[0], &want);
    if (!st_) st_ = mxr__shape_assign(&out[0], &want, "output");
  }
  return st_;
}

/* _backward_reshape: ograd -> data gradient; only the sizes must agree. */
static int backward_reshape_shape(MXR_SHAPE_FN_PARAMS) {
  (void)params, (void)nin, (void)nout, (void)aux, (void)naux;
  fill_one_unknown(&out[0], &in[0]);
  fill_one_unknown(&in[0], &out[0]);
  if (mxr__shape_complete(&in[0]) && mxr__shape_complete(&out[0]) &&
      mxr_shape_size(&in[0]) != mxr_shape_size(&out[0])) {
    char a[96], b[96];
    return SHAPE_ERR("ograd %s and data gradient %s differ in size", shape_text(&in[0], a, sizeof a),
                     shape_text(&out[0], b, sizeof b));
  }
  return 0;
}

static int reshape_forward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel("Reshape", &in[0], req[0], &out[0]);
}

static int backward_reshape_forward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel("_backward_reshape", &in[0], req[0], &out[0]);
}

#ifdef MXR_HAVE_CUDA
static int reshape_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel_gpu(ctx, "Reshape", &in[0], req[0], &out[0]);
}

static int backward_reshape_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  (void)params;
  return copy_kernel_gpu(ctx, "_backward_reshape", &in[0], req[0], &out[0]);
}
#endif

static const struct mxr_op op_reshape = {
    .name = "Reshape",
    .aliases = {"reshape", NULL},
    .fields = reshape_fields,
    .num_fields = 4,
    .params_size = sizeof(struct reshape_params),
    .check = reshape_check,
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .infer_shape = reshape_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = reshape_forward,
    .forward_gpu = MXR_GPU_FORWARD(reshape_forward_gpu),
    .backward = "_backward_reshape",
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

static const struct mxr_op op_backward_reshape = {
    .name = "_backward_reshape",
    .aliases = {NULL},
    .fields = reshape_fields,
    .num_fields = 4,
    .params_size = sizeof(struct reshape_params),
    .nin = 1,
    .nout = 1,
    .input_names = ograd_input,
    .infer_shape = backward_reshape_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = backward_reshape_forward,
    .forward_gpu = MXR_GPU_FORWARD(backward_reshape_forward_gpu),
    .inplace = {{0, 0}},
    .num_inplace = 1,
};

const struct mxr_op *const mxr__ops_reshape[] = {
    &op_flatten,
    &op_reshape,
    &op_backward_reshape,
    NULL,
};
