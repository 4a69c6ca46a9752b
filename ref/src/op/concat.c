/*
 * Concat and its backward op (MXNet 1.9.1 semantics), on every dtype:
 * elements move unchanged (accumulating requests: float32 and float64
 * only).  The GPU forwards share the CPU forwards' checks and run the
 * launchers of op/cuda/tensor.h (kernels in op/cuda/concat.cu).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "op/tensor_common.h"
#include "op/cuda/launch.h"
#include "op/cuda/tensor.h"

static const char *const ograd_input[] = {"ograd"};

struct concat_params {
  int num_args;
  int dim;
};

static const struct mxr_param_field concat_fields[] = {
    {"num_args", MXR_PARAM_INT, offsetof(struct concat_params, num_args), NULL, NULL},
    {"dim", MXR_PARAM_INT, offsetof(struct concat_params, dim), "1", NULL},
};

static int concat_check(const char *opname, void *params) {
  const struct concat_params *p = params;
  if (p->num_args < 1)
    return mxr_set_error(MXR_EINVAL, "%s: num_args must be at least 1, got %d", opname, p->num_args);
  return 0;
}

static int concat_nargs(const void *params) { return ((const struct concat_params *)params)->num_args; }
static int one(const void *params) { (void)params; return 1; }

/* The dims other than `axis` that the known shapes among out and in[]
 * give (0 where none does), checked against each other (a conflict is
 * reported against `tmpl`, the first known shape). */
static int concat_common(const struct concat_params *p, const struct mxr_shape *in, int nin,
                         const struct mxr_shape *out, const struct mxr_shape *tmpl, int axis,
                         struct mxr_shape *common) {
  char a[96], b[96];
  for (int i = -1; i < nin; i++) {
    const struct mxr_shape *s = i < 0 ? out : &in[i];
    if (!mxr__shape_known(s)) continue;
    bool ok = s->ndim == common->ndim;
    for (int d = 0; ok && d < s->ndim; d++)
      ok = d == axis || s->dim[d] <= 0 || common->dim[d] <= 0 || s->dim[d] == common->dim[d];
    if (!ok)
      return SHAPE_ERR("%s%d has shape %s, incompatible with %s along the axes other than dim=%d",
                       i < 0 ? "output" : "input ", i < 0 ? 0 : i, shape_text(s, a, sizeof a),
                       shape_text(tmpl, b, sizeof b), p->dim);
    for (int d = 0; d < s->ndim; d++)
      if (d != axis && common->dim[d] <= 0) common->dim[d] = s->dim[d];
  }
  return 0;
}

/* Inputs agree with each other and the output except along `dim`, whose
 * sizes add up: the output's from the inputs', or one input's unknown size
 * from the output's and the others'.  Shapes may be partial. */
static int concat_infer(const struct concat_params *p, struct mxr_shape *in, int nin,
                        struct mxr_shape *out) {
  const struct mxr_shape *tmpl = mxr__shape_known(out) ? out : NULL;
  for (int i = 0; i < nin && !tmpl; i++)
    if (mxr__shape_known(&in[i])) tmpl = &in[i];
  if (!tmpl) return 0;
  char a[96];
  if (tmpl->ndim == 0) return SHAPE_ERR("zero-dimensional arrays cannot be concatenated");
  int axis = 0, unknown = -1, nunknown = 0;
  int st_ = resolve_axis("dim", p->dim, tmpl, &axis);
  if (st_) return st_;
  struct mxr_shape common = {tmpl->ndim, {0}};
  st_ = concat_common(p, in, nin, out, tmpl, axis, &common);
  if (st_) return st_;
  int64_t sum = 0;
  for (int i = 0; i < nin; i++) {
    int64_t v = mxr__shape_known(&in[i]) ? in[i].dim[axis] : 0;
    if (v <= 0) unknown = i, nunknown++;
    sum += v > 0 ? v : 0;
  }
  int64_t total = mxr__shape_known(out) ? out->dim[axis] : 0;
  if (nunknown == 1 && total > 0) {
    if (total < sum)
      return SHAPE_ERR("the inputs already exceed output %s along dim=%d", shape_text(out, a, sizeof a), p->dim);
    struct mxr_shape want = common;
    want.dim[axis] = total - sum;
    st_ = mxr__shape_assign(&in[unknown], &want, "input");
    sum = total, nunknown = 0;
  }
  for (int i = 0; !st_ && i < nin; i++) {
    struct mxr_shape want = common;
    want.dim[axis] = mxr__shape_known(&in[i]) ? in[i].dim[axis] : 0;
    st_ = mxr__shape_assign(&in[i], &want, "input");
  }
  struct mxr_shape want = common;
  want.dim[axis] = nunknown == 0 ? sum : 0;
  return st_ ? st_ : mxr__shape_assign(out, &want, "output");
}

static int concat_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nout, (void)aux, (void)naux;
  return concat_infer(params, in, nin, &out[0]);
}

/* Backward: ograd in, one gradient per forward input out. */
static int concat_backward_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)aux, (void)naux;
  return concat_infer(params, out, nout, &in[0]);
}

/* How the parts of a Concat lie in the whole: `lead` rows (the dims before
 * the axis), each made of every part's dim[axis] * `trail` elements in
 * order (trail: the dims after the axis), `mid` along the axis in all. */
struct concat_layout {
  int axis;
  int64_t lead, mid, trail;
};

/* Checks the parts against the whole and the requests (req[0] for all
 * parts when into_whole, else req[i] for part i). */
static int concat_plan(const char *op, const struct concat_params *p,
                       const struct mxr_tensor *whole, const struct mxr_tensor *parts, int nparts,
                       const int *req, bool into_whole, struct concat_layout *lay) {
  int st_ = resolve_axis("dim", p->dim, &whole->shape, &lay->axis);
  if (st_) return prefix_error(op, st_);
  const int axis = lay->axis, dt = whole->dtype;
  lay->lead = 1, lay->trail = 1, lay->mid = 0;
  for (int d = 0; d < axis; d++) lay->lead *= whole->shape.dim[d];
  for (int d = axis + 1; d < whole->shape.ndim; d++) lay->trail *= whole->shape.dim[d];
  for (int i = 0; i < nparts; i++) {
    if (parts[i].dtype != dt || parts[i].shape.ndim != whole->shape.ndim)
      return mxr_set_error(MXR_EINVAL, "%s: input %d does not match the output", op, i);
    lay->mid += parts[i].shape.dim[axis];
    st_ = req_add_needs_float(op, dt, into_whole ? req[0] : req[i]);
    if (st_) return st_;
  }
  if (lay->mid != whole->shape.dim[axis])
    return mxr_set_error(MXR_EINVAL, "%s: the inputs do not add up to the output along dim", op);
  return 0;
}

/* The part of `whole` along `axis` that each of `parts` covers, moved into
 * (forward) or out of (backward) the whole. */
static int concat_move(const char *op, const struct concat_params *p,
                       const struct mxr_tensor *whole, const struct mxr_tensor *parts, int nparts,
                       const int *req, bool into_whole) {
  struct concat_layout lay = {.lead = 0};
  int st_ = concat_plan(op, p, whole, parts, nparts, req, into_whole, &lay);
  if (st_) return st_;
  const int dt = whole->dtype;
  const size_t es = mxr_dtype_size(dt);
  for (int64_t l = 0; l < lay.lead; l++) {
    int64_t at = l * lay.mid * lay.trail;
    for (int i = 0; i < nparts; i++) {
      int64_t blk = parts[i].shape.dim[lay.axis] * lay.trail;
      char *w = (char *)whole->data + (size_t)at * es, *q = (char *)parts[i].data + (size_t)(l * blk) * es;
      if (into_whole)
        move_block(w, q, blk, dt, req[0]);
      else
        move_block(q, w, blk, dt, req[i]);
      at += blk;
    }
  }
  return 0;
}

static int concat_forward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  if (req[0] == MXR_REQ_NULL) return 0;
  return concat_move("Concat", params, &out[0], in, nin, req, true);
}

static int concat_backward(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  return concat_move("_backward_Concat", params, &in[0], out, nout, req, false);
}

#ifdef MXR_HAVE_CUDA
/* concat_move on the device: one launch per part, each moving the part's
 * columns [offset, offset + width) of every row of the whole. */
static int concat_move_gpu(const struct mxr_op_ctx *ctx, const char *op,
                           const struct concat_params *p, const struct mxr_tensor *whole,
                           const struct mxr_tensor *parts, int nparts, const int *req,
                           bool into_whole) {
  struct concat_layout lay = {.lead = 0};
  int st_ = concat_plan(op, p, whole, parts, nparts, req, into_whole, &lay);
  if (st_) return st_;
  void *stream = mxr__op_stream(ctx);
  const int64_t row = lay.mid * lay.trail;
  int64_t offset = 0;
  for (int i = 0; i < nparts; i++) {
    const int64_t width = parts[i].shape.dim[lay.axis] * lay.trail;
    if (into_whole)
      st_ = mxr__gpu_concat_part(stream, parts[i].data, whole->data, whole->dtype, lay.lead, row,
                                 offset, width, req[0]);
    else
      st_ = mxr__gpu_split_part(stream, whole->data, parts[i].data, whole->dtype, lay.lead, row,
                                offset, width, req[i]);
    if (st_) return st_;
    offset += width;
  }
  return 0;
}

static int concat_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  if (req[0] == MXR_REQ_NULL) return 0;
  return concat_move_gpu(ctx, "Concat", params, &out[0], in, nin, req, true);
}

static int concat_backward_gpu(MXR_FCOMPUTE_PARAMS) {
  UNUSED_KERNEL_ARGS;
  return concat_move_gpu(ctx, "_backward_Concat", params, &in[0], out, nout, req, false);
}
#endif

static const struct mxr_op op_concat = {
    .name = "Concat",
    .aliases = {"concat", "_sparse_concat", NULL},
    .fields = concat_fields,
    .num_fields = 2,
    .params_size = sizeof(struct concat_params),
    .check = concat_check,
    .get_nin = concat_nargs,
    .nout = 1,
    .infer_shape = concat_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = concat_forward,
    .forward_gpu = MXR_GPU_FORWARD(concat_forward_gpu),
    .backward = "_backward_Concat",
};

static const struct mxr_op op_backward_concat = {
    .name = "_backward_Concat",
    .aliases = {NULL},
    .fields = concat_fields,
    .num_fields = 2,
    .params_size = sizeof(struct concat_params),
    .check = concat_check,
    .get_nin = one,
    .get_nout = concat_nargs,
    .input_names = ograd_input,
    .infer_shape = concat_backward_shape,
    .dtypes = ALL_DTYPES,
    .forward_cpu = concat_backward,
    .forward_gpu = MXR_GPU_FORWARD(concat_backward_gpu),
};

const struct mxr_op *const mxr__ops_concat[] = {
    &op_concat,
    &op_backward_concat,
    NULL,
};
