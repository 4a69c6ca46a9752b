/*
 * softmax and log_softmax and their backward ops (MXNet 1.9.1 semantics):
 * float32 and float64 computed in double, with MXNet's dtype, temperature
 * and use_length parameters.  The GPU forwards share the CPU forwards'
 * checks and run the launchers of op/cuda/tensor.h (kernels in
 * op/cuda/softmax.cu).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "op/tensor_common.h"
#include "op/cuda/launch.h"
#include "op/cuda/tensor.h"

struct softmax_params {
  int axis;
  struct mxr_opt_float temperature;
  struct mxr_param_str dtype; /* None, float16, float32, float64 */
  bool use_length;
  int out_dtype; /* from dtype in check: -1 for None */
};

static const struct mxr_param_field softmax_fields[] = {
    {"axis", MXR_PARAM_INT, offsetof(struct softmax_params, axis), "-1", NULL},
    {"temperature", MXR_PARAM_OPT_FLOAT, offsetof(struct softmax_params, temperature), "None", NULL},
    {"dtype", MXR_PARAM_STRING, offsetof(struct softmax_params, dtype), "None", NULL},
    {"use_length", MXR_PARAM_BOOL, offsetof(struct softmax_params, use_length), "False", NULL},
};

static int softmax_check(const char *opname, void *params) {
  struct softmax_params *p = params;
  static const struct {
    const char *name;
    int dt;
  } dts[] = {{"None", -1}, {"float16", MXR_FLOAT16}, {"float32", MXR_FLOAT32}, {"float64", MXR_FLOAT64}};
  p->out_dtype = -2;
  for (int i = 0; i < 4; i++)
    if (strcmp(p->dtype.s, dts[i].name) == 0) p->out_dtype = dts[i].dt;
  if (p->out_dtype == -2)
    return mxr_set_error(MXR_EINVAL,
                         "%s: parameter dtype='%s' is not valid: expected None, float16, float32 or float64",
                         opname, p->dtype.s);
  if (p->temperature.has && (p->temperature.value == 0 || !isfinite(p->temperature.value)))
    return mxr_set_error(MXR_EINVAL, "%s: temperature must be a finite non-zero number, got %g",
                         opname, p->temperature.value);
  return 0;
}

/* MXNet's log_softmax takes no length input. */
static int log_softmax_check(const char *opname, void *params) {
  if (((struct softmax_params *)params)->use_length)
    return mxr_set_error(MXR_EINVAL, "%s: use_length=True is not supported (no length input)", opname);
  return softmax_check(opname, params);
}

static int softmax_nin(const void *params) {
  return ((const struct softmax_params *)params)->use_length ? 2 : 1;
}
static int two(const void *params) { (void)params; return 2; }

/* data, output (and the backward's ograd and gradient) share one shape; the
 * length has data's shape without the softmax axis ((1,) for 1-D data). */
static int softmax_infer(const struct softmax_params *p, struct mxr_shape *same[], int nsame,
                         struct mxr_shape *length) {
  struct mxr_shape s = {.ndim = -1}, len = {0, {0}};
  for (int i = 0; i < nsame; i++) mxr__shape_fill(&s, same[i]);
  if (!mxr__shape_known(&s)) return 0;
  int axis = 0, st_ = resolve_axis("axis", p->axis, &s, &axis);
  for (int i = 0; !st_ && i < nsame; i++) st_ = mxr__shape_assign(same[i], &s, i ? "output" : "data");
  if (st_ || !length) return st_;
  for (int d = 0; d < s.ndim; d++)
    if (d != axis) len.dim[len.ndim++] = s.dim[d];
  if (len.ndim == 0) len = mxr__shape1(1);
  return mxr__shape_assign(length, &len, "length");
}

static int softmax_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  const struct softmax_params *p = params;
  struct mxr_shape *same[2] = {&in[0], &out[0]};
  return softmax_infer(p, same, 2, p->use_length ? &in[1] : NULL);
}

/* Backward: (ograd, output) -> (data gradient[, length gradient]). */
static int softmax_backward_shape(MXR_SHAPE_FN_PARAMS) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  const struct softmax_params *p = params;
  struct mxr_shape *same[3] = {&in[0], &in[1], &out[0]};
  return softmax_infer(p, same, 3, p->use_length ? &out[1] : NULL);
}

static int unify_type(int *a, int *b, const char *what) {
  if (*a >= 0 && *b >= 0 && *a != *b)
    return mxr_set_error(MXR_EINVAL, "%s dtypes disagree (%s and %s)", what, mxr_dtype_name(*a),
                         mxr_dtype_name(*b));
  if (*a < 0) *a = *b;
  if (*b < 0) *b = *a;
  return 0;
}

static int check_length_type(int dt) {
  if (dt >= 0 && dt != MXR_INT32 && dt != MXR_INT64)
    return mxr_set_error(MXR_EINVAL, "length must be int32 or int64, got %s",
                         mxr_dtype_name(dt) ? mxr_dtype_name(dt) : "?");
  return 0;
}

/* The output takes dtype= when given, else the data's dtype. */
static int softmax_type(const void *params, int *in, int nin, int *out, int nout, int *aux,
                        int naux) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  const struct softmax_params *p = params;
  if (p->use_length && check_length_type(in[1])) return MXR_EINVAL;
  if (p->out_dtype < 0) return unify_type(&in[0], &out[0], "data and output");
  if (out[0] >= 0 && out[0] != p->out_dtype)
    return mxr_set_error(MXR_EINVAL, "output dtype %s disagrees with dtype=%s",
                         mxr_dtype_name(out[0]), p->dtype.s);
  out[0] = p->out_dtype;
  if (in[0] < 0) in[0] = out[0];
  return 0;
}

/* ograd and output have the output dtype; the data gradient has the data's,
 * which equals it unless dtype= is given. */
static int softmax_backward_type(const void *params, int *in, int nin, int *out, int nout,
                                 int *aux, int naux) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  const struct softmax_params *p = params;
  int st_ = unify_type(&in[0], &in[1], "ograd and output");
  if (!st_ && p->out_dtype >= 0 && in[0] >= 0 && in[0] != p->out_dtype)
    st_ = mxr_set_error(MXR_EINVAL, "ograd dtype %s disagrees with dtype=%s", mxr_dtype_name(in[0]),
                        p->dtype.s);
  if (!st_ && p->out_dtype < 0) st_ = unify_type(&in[0], &out[0], "ograd and gradient");
  if (!st_ && p->use_length) st_ = check_length_type(out[1]);
  return st_;
}

/* Rows along the axis: element j of row (o, i) is at (o * M + j) * inner + i. */
struct rows {
  int64_t outer, m, inner;
};

static int softmax_rows(const char *op, const struct softmax_params *p, const struct mxr_shape *s,
                        struct rows *r) {
  int axis = 0, st_ = resolve_axis("axis", p->axis, s, &axis);
  if (st_) return prefix_error(op, st_);
  r->outer = 1, r->inner = 1, r->m = s->dim[axis];
  for (int d = 0; d < axis; d++) r->outer *= s->dim[d];
  for (int d = axis + 1; d < s->ndim; d++) r->inner *= s->dim[d];
  return 0;
}

static int float_io(const char *op, const struct mxr_tensor *t, const char *what) {
  if (!is_float(t->dtype))
    return mxr_set_error(MXR_EINVAL, "%s: %s dtype %s is not supported (float32 or float64)", op,
                         what, mxr_dtype_name(t->dtype) ? mxr_dtype_name(t->dtype) : "?");
  return 0;
}

/* The temperature x is divided by (1 when not given). */
static double softmax_temperature(const struct softmax_params *p) {
  return p->temperature.has ? p->temperature.value : 1.0;
}

/* Checks a forward's arrays; its rows in r. */
static int softmax_check_arrays(const char *op, const struct softmax_params *p,
                                const struct mxr_tensor *x, const struct mxr_tensor *len,
                                const struct mxr_tensor *y, struct rows *r) {
  int st_ = softmax_rows(op, p, &x->shape, r);
  if (!st_) st_ = float_io(op, x, "data");
  if (!st_) st_ = float_io(op, y, "output");
  if (!st_ && len && len->dtype != MXR_INT32 && len->dtype != MXR_INT64)
    st_ = mxr_set_error(MXR_EINVAL, "%s: length must be int32 or int64", op);
  return st_;
}

/* y = softmax(x / T) or log_softmax(x / T) along the axis, shifting by the
 * row's largest x / T so that exp never overflows.  With a length input,
 * only the first length[row] elements take part; the rest are 0. */
static int softmax_run(const char *op, const struct softmax_params *p, const struct mxr_tensor *in,
                       int req, struct mxr_tensor *y, bool log_out) {
  const struct mxr_tensor *x = &in[0], *len = p->use_length ? &in[1] : NULL;
  struct rows r;
  int st_ = softmax_check_arrays(op, p, x, len, y, &r);
  if (st_ || req == MXR_REQ_NULL) return st_;
  double t = softmax_temperature(p);
  for (int64_t o = 0; o < r.outer; o++)
    for (int64_t i = 0; i < r.inner; i++) {
      const int64_t base = o * r.m * r.inner + i, row = o * r.inner + i;
      int64_t n = r.m;
      if (len) {
        n = len->dtype == MXR_INT32 ? ((const int32_t *)len->data)[row] : ((const int64_t *)len->data)[row];
        if (n < 0 || n > r.m)
          return mxr_set_error(MXR_EINVAL, "%s: length %lld at position %lld is outside [0, %lld]", op,
                               (long long)n, (long long)row, (long long)r.m);
      }
      double top = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; j++) top = fmax(top, ld(x->data, x->dtype, base + j * r.inner) / t);
      for (int64_t j = 0; j < n; j++) sum += exp(ld(x->data, x->dtype, base + j * r.inner) / t - top);
      const double logsum = log(sum);
      for (int64_t j = 0; j < r.m; j++) {
        const int64_t at = base + j * r.inner;
        double v = 0;
        if (j < n) {
          double z = ld(x->data, x->dtype, at) / t - top;
          v = log_out ? z - logsum : exp(z) / sum;
        }
        st(y->data, y->dtype, at, req, v);
      }
    }
  return 0;
}

/* Checks a backward's arrays (ograd g, forward output y, gradient dx);
 * their rows in r. */
static int softmax_grad_check_arrays(const char *op, const struct softmax_params *p,
                                     const struct mxr_tensor *g, const struct mxr_tensor *y,
                                     const struct mxr_tensor *dx, struct rows *r) {
  int st_ = softmax_rows(op, p, &y->shape, r);
  if (!st_) st_ = float_io(op, g, "ograd");
  if (!st_) st_ = float_io(op, dx, "gradient");
  return st_;
}

/* The length input gets a zero gradient, written unless req[1] is null or
 * add (adding zero changes nothing). */
static bool length_grad_zeroed(const struct softmax_params *p, const int *req) {
  return p->use_length && req[1] != MXR_REQ_NULL && req[1] != MXR_REQ_ADD;
}

static size_t length_grad_bytes(const struct mxr_tensor *t) {
  return (size_t)mxr_tensor_size(t) * mxr_dtype_size(t->dtype);
}

/* softmax:     dx = y * (g - sum(g * y)) / T
 * log_softmax: dx = (g - exp(y) * sum(g)) / T
 * Elements a length masked out have y = 0 (softmax), hence dx = 0. */
static int softmax_grad_run(const char *op, const struct softmax_params *p,
                            const struct mxr_tensor *in, const int *req, struct mxr_tensor *out,
                            bool log_out) {
  const struct mxr_tensor *g = &in[0], *y = &in[1];
  struct mxr_tensor *dx = &out[0];
  struct rows r;
  int st_ = softmax_grad_check_arrays(op, p, g, y, dx, &r);
  if (st_) return st_;
  if (length_grad_zeroed(p, req))
    memset(out[1].data, 0, length_grad_bytes(&out[1]));
  if (req[0] == MXR_REQ_NULL) return 0;
  const double t = softmax_temperature(p);
  for (int64_t o = 0; o < r.outer; o++)
    for (int64_t i = 0; i < r.inner; i++) {
      const int64_t base = o * r.m * r.inner + i;
      double sum = 0;
      for (int64_t j = 0; j < r.m; j++) {
        const int64_t at = base + j * r.inner;
        sum += ld(g->data, g->dtype, at) * (log_out ? 1.0 : ld(y->data, y->dtype, at));
      }
      for (int64_t j = 0; j < r.m; j++) {
        const int64_t at = base + j * r.inner;
        const double gj = ld(g->data, g->dtype, at), yj = ld(y->data, y->dtype, at);
        st(dx->data, dx->dtype, at, req[0], (log_out ? gj - exp(yj) * sum : yj * (gj - sum)) / t);
      }
    }
  return 0;
}

#define SOFTMAX_KERNEL(fn, run, opname, log_out, reqarg)                                      \
  static int fn(MXR_FCOMPUTE_PARAMS) {                                                  \
    UNUSED_KERNEL_ARGS;                                                                        \
    return run(opname, params, in, reqarg, out, log_out);                                      \
  }
SOFTMAX_KERNEL(softmax_forward, softmax_run, "softmax", false, req[0])
SOFTMAX_KERNEL(log_softmax_forward, softmax_run, "log_softmax", true, req[0])
SOFTMAX_KERNEL(softmax_backward, softmax_grad_run, "_backward_softmax", false, req)
SOFTMAX_KERNEL(log_softmax_backward, softmax_grad_run, "_backward_log_softmax", true, req)

#ifdef MXR_HAVE_CUDA
static int softmax_run_gpu(const struct mxr_op_ctx *ctx, const char *op,
                           const struct softmax_params *p, const struct mxr_tensor *in, int req,
                           struct mxr_tensor *y, bool log_out) {
  const struct mxr_tensor *x = &in[0], *len = p->use_length ? &in[1] : NULL;
  struct rows r;
  int st_ = softmax_check_arrays(op, p, x, len, y, &r);
  if (st_ || req == MXR_REQ_NULL) return st_;
  return mxr__gpu_softmax(mxr__op_stream(ctx), x->data, x->dtype, len ? len->data : NULL,
                          len ? len->dtype : -1, y->data, y->dtype, r.outer, r.m, r.inner,
                          softmax_temperature(p), log_out, req,
                          len ? mxr__cuda_error_slot(ctx->run) : NULL);
}

static int softmax_grad_run_gpu(const struct mxr_op_ctx *ctx, const char *op,
                                const struct softmax_params *p, const struct mxr_tensor *in,
                                const int *req, struct mxr_tensor *out, bool log_out) {
  const struct mxr_tensor *g = &in[0], *y = &in[1];
  struct mxr_tensor *dx = &out[0];
  struct rows r;
  int st_ = softmax_grad_check_arrays(op, p, g, y, dx, &r);
  if (st_) return st_;
  if (g->dtype != y->dtype) /* the launcher reads both as one type */
    return mxr_set_error(MXR_EINVAL, "%s (GPU): ograd %s and output %s differ in dtype", op,
                         mxr_dtype_name(g->dtype),
                         mxr_dtype_name(y->dtype) ? mxr_dtype_name(y->dtype) : "?");
  void *stream = mxr__op_stream(ctx);
  if (length_grad_zeroed(p, req))
    st_ = mxr__gpu_zero(stream, out[1].data, length_grad_bytes(&out[1]));
  if (st_ || req[0] == MXR_REQ_NULL) return st_;
  return mxr__gpu_softmax_grad(stream, g->data, y->data, y->dtype, dx->data, dx->dtype, r.outer,
                               r.m, r.inner, softmax_temperature(p), log_out, req[0]);
}

#define SOFTMAX_KERNEL_GPU(fn, run, opname, log_out, reqarg)                                  \
  static int fn(MXR_FCOMPUTE_PARAMS) {                                                  \
    UNUSED_KERNEL_ARGS;                                                                        \
    return run(ctx, opname, params, in, reqarg, out, log_out);                                 \
  }
SOFTMAX_KERNEL_GPU(softmax_forward_gpu, softmax_run_gpu, "softmax", false, req[0])
SOFTMAX_KERNEL_GPU(log_softmax_forward_gpu, softmax_run_gpu, "log_softmax", true, req[0])
SOFTMAX_KERNEL_GPU(softmax_backward_gpu, softmax_grad_run_gpu, "_backward_softmax", false, req)
SOFTMAX_KERNEL_GPU(log_softmax_backward_gpu, softmax_grad_run_gpu, "_backward_log_softmax", true,
                   req)
#endif

static const char *const softmax_inputs[] = {"data", "length"};
static const char *const softmax_grad_inputs[] = {"ograd", "output"};

/* The length input is an integer array, hence int32/int64 in dtypes; the
 * kernels accept only float data. */
#define SOFTMAX_DTYPES (FLOATS | (1u << MXR_INT32) | (1u << MXR_INT64))

#define SOFTMAX_OP(var, opname, alias, chk, nin_fn, names, shape, type, fwd, fwd_gpu, bwd, \
                   nout_fn, hints)                                                          \
  static const struct mxr_op var = {                                                        \
      .name = opname,                                                                       \
      .aliases = {alias, NULL},                                                             \
      .fields = softmax_fields,                                                             \
      .num_fields = 4,                                                                      \
      .params_size = sizeof(struct softmax_params),                                         \
      .check = chk,                                                                         \
      .nin = 2,                                                                             \
      .nout = 1,                                                                            \
      .get_nin = nin_fn,                                                                    \
      .get_nout = nout_fn,                                                                  \
      .input_names = names,                                                                 \
      .infer_shape = shape,                                                                 \
      .infer_type = type,                                                                   \
      .dtypes = SOFTMAX_DTYPES,                                                             \
      .forward_cpu = fwd,                                                                   \
      .forward_gpu = MXR_GPU_FORWARD(fwd_gpu),                                              \
      .backward = bwd,                                                                      \
      .grad_flags = MXR_GRAD_USE_OUTPUTS,                                                   \
      .inplace = {{0, 0}, {1, 0}},                                                          \
      .num_inplace = hints,                                                                 \
  }
SOFTMAX_OP(op_softmax, "softmax", "_npx_softmax", softmax_check, softmax_nin, softmax_inputs,
           softmax_shape, softmax_type, softmax_forward, softmax_forward_gpu, "_backward_softmax",
           NULL, 1);
SOFTMAX_OP(op_log_softmax, "log_softmax", "_npx_log_softmax", log_softmax_check, softmax_nin,
           softmax_inputs, softmax_shape, softmax_type, log_softmax_forward,
           log_softmax_forward_gpu, "_backward_log_softmax", NULL, 1);
SOFTMAX_OP(op_backward_softmax, "_backward_softmax", NULL, softmax_check, two,
           softmax_grad_inputs, softmax_backward_shape, softmax_backward_type, softmax_backward,
           softmax_backward_gpu, NULL, softmax_nin, 2);
SOFTMAX_OP(op_backward_log_softmax, "_backward_log_softmax", NULL, log_softmax_check, two,
           softmax_grad_inputs, softmax_backward_shape, softmax_backward_type,
           log_softmax_backward, log_softmax_backward_gpu, NULL, softmax_nin, 2);

const struct mxr_op *const mxr__ops_softmax[] = {
    &op_softmax,
    &op_backward_softmax,
    &op_log_softmax,
    &op_backward_log_softmax,
    NULL,
};
