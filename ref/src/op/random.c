/*
 * Random fills: _random_uniform (uniform, random_uniform) and
 * _random_normal (normal, random_normal), MXNet's samplers with scalar
 * parameters, as the frontends' initializers use them.  The draws are the
 * counter-based ones of op/random_fn.h from the call's seed, identical on
 * both devices.
 */
#include "config.h"

#include <stddef.h>

#include "op/cuda/launch.h"
#include "op/op_internal.h"
#include "op/random_fn.h"

struct random_params {
  double a, b; /* low and high, or loc and scale */
  struct mxr_tuple shape;
  struct mxr_param_str ctx; /* placement comes from the caller */
  int dtype;                /* index into dtype_choices */
};

/* MXNet's choices; "None" means float32. */
static const char *const dtype_choices[] = {"None", "float16", "float32", "float64", NULL};
static const int dtype_codes[] = {MXR_FLOAT32, MXR_FLOAT16, MXR_FLOAT32, MXR_FLOAT64};

#define RANDOM_FIELDS(first, first_def, second, second_def)                                      \
  {                                                                                              \
    {first, MXR_PARAM_FLOAT, offsetof(struct random_params, a), first_def, NULL},                \
        {second, MXR_PARAM_FLOAT, offsetof(struct random_params, b), second_def, NULL},          \
        {"shape", MXR_PARAM_TUPLE, offsetof(struct random_params, shape), "()", NULL},           \
        {"ctx", MXR_PARAM_STRING, offsetof(struct random_params, ctx), "", NULL},                \
        {"dtype", MXR_PARAM_ENUM, offsetof(struct random_params, dtype), "None", dtype_choices}, \
  }

static const struct mxr_param_field uniform_fields[] = RANDOM_FIELDS("low", "0", "high", "1");
static const struct mxr_param_field normal_fields[] = RANDOM_FIELDS("loc", "0", "scale", "1");

static int dtype_check(const char *opname, void *params) {
  if (dtype_codes[((struct random_params *)params)->dtype] != MXR_FLOAT16) return 0;
  return mxr_set_error(MXR_ENOTIMPL, "%s: dtype float16 is not implemented by libmxref", opname);
}

/* The distribution's parameters are checked when the op runs, as MXNet's
 * samplers check them: a bad one fails the op, and the error surfaces when
 * its output is waited for. */
static int check_sampler(int normal, const struct random_params *p) {
  if (!normal && p->b < p->a)
    return mxr_set_error(MXR_EINVAL, "_random_uniform: high (%g) is less than low (%g)", p->b, p->a);
  if (normal && p->b < 0)
    return mxr_set_error(MXR_EINVAL, "_random_normal: scale (%g) is negative", p->b);
  return 0;
}

static int random_shape(MXR_SHAPE_FN_PARAMS) {
  (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  const struct mxr_tuple *t = &((const struct random_params *)params)->shape;
  struct mxr_shape s = {t->n, {0}};
  for (int i = 0; i < t->n; i++) s.dim[i] = t->v[i];
  return mxr__shape_assign(&out[0], &s, "output");
}

static int random_type(const void *params, int *in, int nin, int *out, int nout, int *aux, int naux) {
  (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  int dt = dtype_codes[((const struct random_params *)params)->dtype];
  if (out[0] >= 0 && out[0] != dt)
    return mxr_set_error(MXR_EINVAL, "output dtype %s disagrees with dtype=%s", mxr_dtype_name(out[0]),
                         mxr_dtype_name(dt));
  out[0] = dt;
  return 0;
}

static int fill(const struct mxr_op_ctx *ctx, const struct random_params *p, int normal,
                struct mxr_tensor *out, int req) {
  int64_t n = mxr_tensor_size(out);
  if (check_sampler(normal, p)) return MXR_EINVAL;
  if (req == MXR_REQ_NULL) return 0;
  for (int64_t i = 0; i < n; i++) {
    double v = mxr__random_sample_at(ctx->seed, (uint64_t)i, normal, p->a, p->b);
    if (out->dtype == MXR_FLOAT64) MXR_ASSIGN(req, (double *)out->data + i, v);
    else MXR_ASSIGN(req, (float *)out->data + i, (float)v);
  }
  return 0;
}

static int uniform_forward(MXR_FCOMPUTE_PARAMS) {
  (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  return fill(ctx, params, 0, &out[0], req[0]);
}

static int normal_forward(MXR_FCOMPUTE_PARAMS) {
  (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  return fill(ctx, params, 1, &out[0], req[0]);
}

#ifdef MXR_HAVE_CUDA
static int random_forward_gpu(const struct mxr_op_ctx *ctx, const struct random_params *p, int normal,
                              struct mxr_tensor *out, int req) {
  if (check_sampler(normal, p)) return MXR_EINVAL;
  return mxr__gpu_random_fill(mxr__op_stream(ctx), out->data, out->dtype, mxr_tensor_size(out), req,
                              normal, p->a, p->b, ctx->seed);
}

static int uniform_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  return random_forward_gpu(ctx, params, 0, &out[0], req[0]);
}

static int normal_forward_gpu(MXR_FCOMPUTE_PARAMS) {
  (void)in, (void)nin, (void)nout, (void)aux, (void)naux;
  return random_forward_gpu(ctx, params, 1, &out[0], req[0]);
}
#endif

#define RANDOM_OP(var, opname, alias1, alias2, flds, chk, fwd, fwd_gpu) \
  static const struct mxr_op var = {                                   \
      .name = opname,                                                  \
      .aliases = {alias1, alias2, NULL},                               \
      .fields = flds,                                                  \
      .num_fields = 5,                                                 \
      .params_size = sizeof(struct random_params),                     \
      .check = chk,                                                    \
      .nin = 0,                                                        \
      .nout = 1,                                                       \
      .infer_shape = random_shape,                                     \
      .infer_type = random_type,                                       \
      .dtypes = (1u << MXR_FLOAT32) | (1u << MXR_FLOAT64),             \
      .forward_cpu = fwd,                                              \
      .forward_gpu = MXR_GPU_FORWARD(fwd_gpu),                         \
      .draws_random = true,                                            \
  }

RANDOM_OP(op_random_uniform, "_random_uniform", "uniform", "random_uniform", uniform_fields,
          dtype_check, uniform_forward, uniform_forward_gpu);
RANDOM_OP(op_random_normal, "_random_normal", "normal", "random_normal", normal_fields, dtype_check,
          normal_forward, normal_forward_gpu);

const struct mxr_op *const mxr__ops_random[] = {&op_random_uniform, &op_random_normal, NULL};
