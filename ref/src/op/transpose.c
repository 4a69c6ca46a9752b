/*
 * transpose and its gradient _backward_transpose (MXNet 1.9.1 semantics),
 * on every dtype.  MXNet's transpose uses itself (with inverted axes) as
 * its gradient; the op contract gives a backward op the forward's
 * parameters, so the inverse is a separate op, _backward_transpose.  The
 * GPU forwards share the CPU forwards' checks and run the launcher of
 * op/cuda/tensor.h (kernel in op/cuda/transpose.cu).
 */
#include "config.h"

#include "op/tensor_common.h"
#include "op/cuda/launch.h"
#include "op/cuda/tensor.h"

static const char *const data_input[] = {"data"};
static const char *const ograd_input[] = {"ograd"};

/* ----------------------------------------------------------- transpose */

#define TRANSPOSE_MAX_NDIM 6 /* MXNet's limit */

struct transpose_params {
  struct mxr_tuple axes;
};

static const struct mxr_param_field transpose_fields[] = {
    {"axes", MXR_PARAM_TUPLE, offsetof(struct transpose_params, axes), "()", NULL},
};

static int transpose_check(const char *opname, void *params) {
  const struct mxr_tuple *a = &((struct transpose_params *)params)->axes;
  bool seen[MXR_MAX_NDIM] = {false};
  if (a->n > TRANSPOSE_MAX_NDIM)
    return mxr_set_error(MXR_EINVAL, "%s: axes has %d entries; transpose supports at most %d dims",
                         opname, a->n, TRANSPOSE_MAX_NDIM);
  for (int i = 0; i < a->n; i++) {
    if (a->v[i] < 0 || a->v[i] >= a->n || seen[a->v[i]])
      return mxr_set_error(MXR_EINVAL, "%s: axes is not a permutation of 0..%d (entry %lld)", opname,
                           a->n - 1, (long long)a->v[i]);
    seen[a->v[i]] = true;
  }
  return 0;
}

/* out dim i = in dim perm[i]; empty axes reverse the dims. */
static void transpose_perm(const struct transpose_params *p, int nd, int *perm) {
  for (int i = 0; i < nd; i++) perm[i] = p->axes.n ? (int)p->axes.v[i] : nd - 1 - i;
}

static int transpose_infer(const struct transpose_params *p, struct mxr_shape *src,
                           struct mxr_shape *dst) {
  const struct mxr_shape *known = mxr__shape_known(src) ? src : dst;
  if (!mxr__shape_known(known)) return 0;
  char b[96];
  if (known->ndim > TRANSPOSE_MAX_NDIM)
    return SHAPE_ERR("shape %s has more than %d dims", shape_text(known, b, sizeof b), TRANSPOSE_MAX_NDIM);
  if (p->axes.n && p->axes.n != known->ndim)
    return SHAPE_ERR("axes has %d entries but the shape %s has %d dims", p->axes.n,
                     shape_text(known, b, sizeof b), known->ndim);
  int perm[MXR_MAX_NDIM];
  transpose_perm(p, known->ndim, perm);
  /* Both ways, so that what each partial side knows reaches the other. */
  struct mxr_shape s = *known, d = *known;
  int st_ = 0;
  if (mxr__shape_known(src)) {
    for (int i = 0; i < s.ndim; i++) d.dim[i] = src->dim[perm[i]];
    st_ = mxr__shape_assign(dst, &d, "output");
  }
  if (!st_ && mxr__shape_known(dst) && dst->ndim == s.ndim) {
    for (int i = 0; i < d.ndim; i++) s.dim[perm[i]] = dst->dim[i];
    st_ = mxr__shape_assign(src, &s, "data");
  }
  return st_;
}

static int transpose_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  return transpose_infer(params, &in[0], &out[0]);
}

/* Backward: ograd has the forward output's shape, the gradient the input's. */
static int transpose_backward_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  return transpose_infer(params, &out[0], &in[0]);
}

/* Checks y against x for a transpose with `req` (in place is refused only
 * when something would move). */
static int transpose_check_arrays(const char *op, const struct mxr_tensor *x, int req,
                                  const struct mxr_tensor *y) {
  const int64_t n = mxr_tensor_size(x);
  if (y->shape.ndim != x->shape.ndim || x->dtype != y->dtype || mxr_tensor_size(y) != n)
    return mxr_set_error(MXR_EINVAL, "%s: output does not match the input", op);
  int st_ = req_add_needs_float(op, x->dtype, req);
  if (st_ || req == MXR_REQ_NULL || n == 0) return st_;
  if (x->data == y->data) return mxr_set_error(MXR_EINVAL, "%s: cannot run in place", op);
  return 0;
}

/* The permutation that transpose (inverse false) or _backward_transpose
 * (inverse true) applies to an input of nd dims: out dim i = in dim perm[i]. */
static int transpose_perm_for(const char *op, const char *input, const struct transpose_params *p,
                              int nd, bool inverse, int *perm) {
  int fwd[MXR_MAX_NDIM];
  if (p->axes.n && p->axes.n != nd)
    return mxr_set_error(MXR_EINVAL, "%s: axes do not match the %s's dims", op, input);
  transpose_perm(p, nd, fwd);
  for (int i = 0; i < nd; i++) {
    if (inverse)
      perm[fwd[i]] = i;
    else
      perm[i] = fwd[i];
  }
  return 0;
}

/* y[i0..] (req)= x[i_perm...]: y's dim d walks x's dim perm[d]. */
static int transpose_run(const char *op, const int *perm, const struct mxr_tensor *x, int req,
                         struct mxr_tensor *y) {
  const int nd = x->shape.ndim;
  int64_t xs[MXR_MAX_NDIM], dims[MXR_MAX_NDIM], strides[MXR_MAX_NDIM], n = mxr_tensor_size(x);
  int st_ = transpose_check_arrays(op, x, req, y);
  if (st_ || req == MXR_REQ_NULL || n == 0) return st_;
  row_major_strides(&x->shape, xs);
  for (int d = 0; d < nd; d++) dims[d] = x->shape.dim[perm[d]], strides[d] = xs[perm[d]];
  struct walk w;
  walk_init(&w, nd, dims, strides);
  const size_t es = mxr_dtype_size(x->dtype);
  for (int64_t o = 0; o < n; o++, walk_next(&w)) move_one(y->data, o, x->data, w.off, es, x->dtype, req);
  return 0;
}

static int transpose_forward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  int perm[MXR_MAX_NDIM];
  int st_ = transpose_perm_for("transpose", "input", params, in[0].shape.ndim, false, perm);
  return st_ ? st_ : transpose_run("transpose", perm, &in[0], req[0], &out[0]);
}

static int transpose_backward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  int perm[MXR_MAX_NDIM];
  const int nd = in[0].shape.ndim;
  int st_ = transpose_perm_for("_backward_transpose", "ograd", params, nd, true, perm);
  return st_ ? st_ : transpose_run("_backward_transpose", perm, &in[0], req[0], &out[0]);
}

#ifdef MXR_HAVE_CUDA
static int transpose_run_gpu(const struct mxr_op_ctx *ctx, const char *op, const int *perm,
                             const struct mxr_tensor *x, int req, struct mxr_tensor *y) {
  int st_ = transpose_check_arrays(op, x, req, y);
  if (st_ || req == MXR_REQ_NULL || mxr_tensor_size(x) == 0) return st_;
  return mxr__gpu_transpose(mxr__op_stream(ctx), x->data, y->data, x->dtype, x->shape.ndim,
                            x->shape.dim, perm, req);
}

static int transpose_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  int perm[MXR_MAX_NDIM];
  int st_ = transpose_perm_for("transpose", "input", params, in[0].shape.ndim, false, perm);
  return st_ ? st_ : transpose_run_gpu(ctx, "transpose", perm, &in[0], req[0], &out[0]);
}

static int transpose_backward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  int perm[MXR_MAX_NDIM];
  const int nd = in[0].shape.ndim;
  int st_ = transpose_perm_for("_backward_transpose", "ograd", params, nd, true, perm);
  return st_ ? st_ : transpose_run_gpu(ctx, "_backward_transpose", perm, &in[0], req[0], &out[0]);
}
#endif

static const struct mxr_op op_transpose = {
    .name = "transpose",
    .aliases = {NULL},
    .fields = transpose_fields,
    .num_fields = 1,
    .params_size = sizeof(struct transpose_params),
    .check = transpose_check,
    .nin = 1,
    .nout = 1,
    .input_names = data_input,
    .infer_shape = transpose_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = transpose_forward,
    .forward_gpu = MXR_GPU_FORWARD(transpose_forward_gpu),
    .backward = "_backward_transpose",
};

static const struct mxr_op op_backward_transpose = {
    .name = "_backward_transpose",
    .aliases = {NULL},
    .fields = transpose_fields,
    .num_fields = 1,
    .params_size = sizeof(struct transpose_params),
    .check = transpose_check,
    .nin = 1,
    .nout = 1,
    .input_names = ograd_input,
    .infer_shape = transpose_backward_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = transpose_backward,
    .forward_gpu = MXR_GPU_FORWARD(transpose_backward_gpu),
};

const struct mxr_op *const mxr__ops_transpose[] = {
    &op_transpose,
    &op_backward_transpose,
    NULL,
};
