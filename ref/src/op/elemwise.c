/*
 * Elementwise ops with MXNet 1.9.1 semantics: binary arithmetic
 * (elemwise_*, the *_scalar family, broadcast_*), unary math (negative,
 * exp, log, sqrt, square, relu, sigmoid, tanh), the Activation and
 * LeakyReLU layers, and their backward ops.
 *
 * Every kernel runs on float32 and float64.  Values are read as double,
 * computed in double and rounded once on store; where MXNet computes in
 * float whatever the dtype (LeakyReLU's slope products, gelu) the kernels
 * do the same, and float parameters (slope, bounds) are rounded to float.
 * A scalar operand meets float32 data as a float, as in MXNet.
 *
 * Broadcasting follows numpy: shapes align at their last axis, missing
 * leading axes count as 1, and an axis of size 1 stretches.  Gradients of
 * a stretched input are summed over the stretched axes (in double).
 *
 * Aliasing: every kernel reads an element before it writes the element at
 * the same index, so the in-place pairs declared below are safe.  Ops with
 * two outputs compute the one that may share the head gradient's memory
 * last.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "op/elemwise_fn.h"
#include "op/cuda/elemwise.h"
#include "op/cuda/launch.h"
#include "op/op_internal.h"

#define FLOAT_DTYPES ((1u << MXR_FLOAT32) | (1u << MXR_FLOAT64))

/* Where a kernel runs: on the host (loops over the elements here), or on a
 * GPU (the launchers of op/cuda/elemwise.h, queued on `stream`). */
struct site {
  bool gpu;
  void *stream;
};

#define KERNEL_PARAMS MXR_FCOMPUTE_PARAMS
#define KERNEL_PASS ctx, params, in, nin, req, out, nout, aux, naux

/* KERNEL(fn) { body }: one body for both devices, reading `site`, with the
 * entry points fn_cpu and (CUDA builds) fn_gpu that the op table names. */
#ifdef MXR_HAVE_CUDA
#define KERNEL_GPU_ENTRY(fn)                                              \
  static int fn##_gpu(KERNEL_PARAMS) {                                    \
    return fn(&(struct site){true, mxr__op_stream(ctx)}, KERNEL_PASS);    \
  }
#else
#define KERNEL_GPU_ENTRY(fn)
#endif
#define KERNEL(fn)                                                                          \
  static int fn(const struct site *site, KERNEL_PARAMS);                                   \
  static int fn##_cpu(KERNEL_PARAMS) { return fn(&(struct site){false, NULL}, KERNEL_PASS); } \
  KERNEL_GPU_ENTRY(fn)                                                                     \
  static int fn(const struct site *site, KERNEL_PARAMS)
#define KERNEL_ARGS_UNUSED                                                                 \
  ((void)site, (void)ctx, (void)params, (void)in, (void)nin, (void)req, (void)out, (void)nout, \
   (void)aux, (void)naux)

#define SHAPE_FN(fn) static int fn(MXR_SHAPE_FN_PARAMS)

static const char *const data_names[] = {"data", "gamma"};
static const char *const lhs_rhs[] = {"lhs", "rhs"};

/* ------------------------------------------------------- element access */

static inline double ld(const struct mxr_tensor *t, int64_t i) {
  return t->dtype == MXR_FLOAT64 ? ((const double *)t->data)[i] : (double)((const float *)t->data)[i];
}

static inline void st(struct mxr_tensor *t, int64_t i, int req, double v) {
  if (t->dtype == MXR_FLOAT64)
    MXR_ASSIGN(req, (double *)t->data + i, v);
  else
    MXR_ASSIGN(req, (float *)t->data + i, (float)v);
}

/* A parameter as the kernel's dtype sees it. */
static double as_dtype(int dtype, double v) { return dtype == MXR_FLOAT64 ? v : (double)(float)v; }

#ifdef MXR_HAVE_CUDA
/* A device pointer for the launchers (NULL for a missing operand). */
static const void *data_of(const struct mxr_tensor *t) { return t ? t->data : NULL; }
#endif

/* float32 loops for the hot cases (ReLU; sum, difference and product of
 * two arrays), written over; the generic loop gives the same values, since
 * a float +, - or * is the double result rounded once.  False: not one of
 * them. */
static bool emap_f32(int fn, const struct mxr_tensor *a, const struct mxr_tensor *b, struct mxr_tensor *o,
                     int req, int64_t n) {
  if (req == MXR_REQ_ADD || o->dtype != MXR_FLOAT32 || a->dtype != MXR_FLOAT32) return false;
  const float *x = a->data, *z = b && b->dtype == MXR_FLOAT32 ? b->data : NULL;
  float *y = o->data;
  switch (fn) {
    case F_RELU: /* NaN passes, -0 becomes 0 */
      MXR_SIMD for (int64_t i = 0; i < n; i++) y[i] = x[i] <= 0 ? 0.0f : x[i];
      return true;
    case F_ADD:
      if (!z) return false;
      MXR_SIMD for (int64_t i = 0; i < n; i++) y[i] = x[i] + z[i];
      return true;
    case F_SUB:
      if (!z) return false;
      MXR_SIMD for (int64_t i = 0; i < n; i++) y[i] = x[i] - z[i];
      return true;
    case F_MUL:
      if (!z) return false;
      MXR_SIMD for (int64_t i = 0; i < n; i++) y[i] = x[i] * z[i];
      return true;
  }
  return false;
}

/* o[i] = fn(a[i], b ? b[i] : bk, c ? c[i] : ck) for every element. */
static int emap(const struct site *site, int fn, const struct mxr_tensor *a,
                const struct mxr_tensor *b, double bk, const struct mxr_tensor *c, double ck,
                struct mxr_tensor *o, int req) {
  if (req == MXR_REQ_NULL) return 0;
  int64_t n = mxr_tensor_size(o);
#ifdef MXR_HAVE_CUDA
  if (site->gpu)
    return mxr__gpu_emap(site->stream, fn, o->dtype, n, a->data,
                         (struct mxr_gpu_operand){data_of(b), bk},
                         (struct mxr_gpu_operand){data_of(c), ck}, o->data, req);
#else
  (void)site;
#endif
  if (emap_f32(fn, a, b, o, req, n)) return 0;
  for (int64_t i = 0; i < n; i++)
    st(o, i, req, elemwise_eval(fn, ld(a, i), b ? ld(b, i) : bk, c ? ld(c, i) : ck));
  return 0;
}

/* --------------------------------------------------------------- checks */

static int differ(const char *op, const struct mxr_shape *a, const struct mxr_shape *b) {
  char x[96], y[96];
  return mxr_set_error(MXR_EINVAL, "%s: shapes %s and %s differ", op, mxr_shape_str(a, x, sizeof x),
                       mxr_shape_str(b, y, sizeof y));
}

static int check_dtypes(const char *op, const struct mxr_tensor *in, int nin,
                        const struct mxr_tensor *out, int nout) {
  for (int k = 0; k < nin + nout; k++) {
    const struct mxr_tensor *t = k < nin ? &in[k] : &out[k - nin];
    if (t->dtype != in[0].dtype)
      return mxr_set_error(MXR_EINVAL, "%s: dtypes %s and %s differ", op, mxr_dtype_name(in[0].dtype),
                           mxr_dtype_name(t->dtype) ? mxr_dtype_name(t->dtype) : "?");
  }
  return 0;
}

/* Same dtype and element count everywhere (kernels of elementwise ops). */
static int check_same(const char *op, const struct mxr_tensor *in, int nin,
                      const struct mxr_tensor *out, int nout) {
  int st_ = check_dtypes(op, in, nin, out, nout);
  for (int k = 1; k < nin + nout && !st_; k++) {
    const struct mxr_tensor *t = k < nin ? &in[k] : &out[k - nin];
    if (mxr_tensor_size(t) != mxr_tensor_size(&in[0])) st_ = differ(op, &in[0].shape, &t->shape);
  }
  return st_;
}

/* ------------------------------------------------------ shape inference */

/* Give every slot the shape the known ones make together, dimension by
 * dimension (the first known one's where they conflict); a known slot that
 * then disagrees fails. */
static int unify(struct mxr_shape *const *slot, int n) {
  struct mxr_shape s = {.ndim = -1};
  for (int i = 0; i < n; i++) mxr__shape_fill(&s, slot[i]);
  if (!mxr__shape_known(&s)) return 0;
  for (int i = 0; i < n; i++) {
    if (mxr__shape_known(slot[i]) && !mxr__shapes_agree(slot[i], &s)) {
      char a[96], b[96];
      return mxr_set_error(MXR_EINVAL, "shapes %s and %s differ", mxr_shape_str(&s, a, sizeof a),
                           mxr_shape_str(slot[i], b, sizeof b));
    }
    mxr__shape_fill(slot[i], &s);
  }
  return 0;
}

/* MXNet's ElemwiseShape: all inputs and outputs share one shape. */
SHAPE_FN(same_shape) {
  (void)params, (void)aux, (void)naux;
  struct mxr_shape *slot[2 * MXR_MAX_NDIM];
  int n = 0;
  for (int i = 0; i < nin && n < 2 * MXR_MAX_NDIM; i++) slot[n++] = &in[i];
  for (int i = 0; i < nout && n < 2 * MXR_MAX_NDIM; i++) slot[n++] = &out[i];
  return unify(slot, n);
}

/* numpy broadcasting of a and b into o; false if they do not broadcast. */
static bool bcast_dims(const struct mxr_shape *a, const struct mxr_shape *b, struct mxr_shape *o,
                       bool partial) {
  o->ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int d = 0; d < o->ndim; d++) {
    int da = d - (o->ndim - a->ndim), db = d - (o->ndim - b->ndim);
    int64_t x = da >= 0 ? a->dim[da] : 1, y = db >= 0 ? b->dim[db] : 1;
    if (partial && (x <= 0 || y <= 0)) { /* an unknown size: the other decides unless it is 1 */
      int64_t other = x <= 0 ? y : x;
      o->dim[d] = other > 1 ? other : 0;
      continue;
    }
    if (x != y && x != 1 && y != 1) return false;
    o->dim[d] = x == 1 ? y : x;
  }
  return true;
}

static bool bcast_shape(const struct mxr_shape *a, const struct mxr_shape *b, struct mxr_shape *o) {
  return bcast_dims(a, b, o, false);
}

/* As bcast_shape, for inference: a 0 dimension is an unknown size. */
static bool bcast_partial(const struct mxr_shape *a, const struct mxr_shape *b, struct mxr_shape *o) {
  return bcast_dims(a, b, o, true);
}

static int no_bcast(const char *op, const struct mxr_shape *a, const struct mxr_shape *b) {
  char x[96], y[96];
  return mxr_set_error(MXR_EINVAL, "%s%sshapes %s and %s cannot be broadcast together", op ? op : "",
                       op ? ": " : "", mxr_shape_str(a, x, sizeof x), mxr_shape_str(b, y, sizeof y));
}

SHAPE_FN(bcast_infer) {
  (void)params, (void)nin, (void)nout, (void)aux, (void)naux;
  if (!mxr__shape_known(&in[0]) || !mxr__shape_known(&in[1])) return 0;
  struct mxr_shape o;
  if (!bcast_partial(&in[0], &in[1], &o)) return no_bcast(NULL, &in[0], &in[1]);
  return mxr__shape_assign(&out[0], &o, "output");
}

/* _backward_broadcast_*: outputs have the forward inputs' shapes (taken from
 * the inputs when the gradient uses them), and they broadcast to the head
 * gradient's shape.  Without them (add, sub) nothing can be inferred. */
SHAPE_FN(bcast_grad_infer) {
  (void)params, (void)nout, (void)aux, (void)naux;
  int st_ = 0;
  if (nin == 3) {
    st_ = mxr__shape_assign(&out[0], &in[1], "lhs gradient");
    if (!st_) st_ = mxr__shape_assign(&out[1], &in[2], "rhs gradient");
    if (!st_) st_ = mxr__shape_assign(&in[1], &out[0], "lhs");
    if (!st_) st_ = mxr__shape_assign(&in[2], &out[1], "rhs");
  }
  if (st_ || !mxr__shape_known(&out[0]) || !mxr__shape_known(&out[1])) return st_;
  struct mxr_shape o;
  if (!bcast_partial(&out[0], &out[1], &o)) return no_bcast(NULL, &out[0], &out[1]);
  return mxr__shape_assign(&in[0], &o, "head gradient");
}

/* ----------------------------------------------------------- broadcasting */

/* `o` must be bcast_shape(a, b) (callers check). */
static void bcast_init(const struct mxr_shape *o, const struct mxr_shape *a, const struct mxr_shape *b,
                       struct bcast *bc) {
  const struct mxr_shape *s[3] = {o, a, b};
  bc->nd = o->ndim;
  for (int k = 0; k < 3; k++) {
    int64_t stride = 1;
    for (int d = o->ndim - 1; d >= 0; d--) {
      int sd = d - (o->ndim - s[k]->ndim);
      int64_t n = sd >= 0 ? s[k]->dim[sd] : 1;
      bc->dim[d] = o->dim[d];
      bc->sdim[k][d] = n;
      bc->stride[k][d] = n == 1 ? 0 : stride;
      stride *= n;
    }
  }
}

/* Elementwise case: one flat axis of n elements shared by all three. */
static void bcast_flat(int64_t n, struct bcast *bc) {
  bc->nd = 1;
  bc->dim[0] = n;
  for (int k = 0; k < 3; k++) bc->sdim[k][0] = n, bc->stride[k][0] = 1;
}

/* An odometer over the iteration shape in a chosen axis order, keeping
 * element offsets into the three arrays. */
struct walk {
  int n, axis[MXR_MAX_NDIM];
  int64_t idx[MXR_MAX_NDIM], off[3];
};

static inline void walk_step(struct walk *w, const struct bcast *bc) {
  for (int j = w->n - 1; j >= 0; j--) {
    int d = w->axis[j];
    for (int k = 0; k < 3; k++) w->off[k] += bc->stride[k][d];
    if (++w->idx[j] < bc->dim[d]) return;
    for (int k = 0; k < 3; k++) w->off[k] -= bc->stride[k][d] * bc->dim[d];
    w->idx[j] = 0;
  }
}

static int bcast_forward(const struct site *site, int fn, const struct bcast *bc,
                         const struct mxr_tensor *a, const struct mxr_tensor *b,
                         struct mxr_tensor *o, int req) {
  if (req == MXR_REQ_NULL) return 0;
  int64_t n = mxr_tensor_size(o);
#ifdef MXR_HAVE_CUDA
  if (site->gpu)
    return mxr__gpu_bcast_map(site->stream, fn, o->dtype, bc, n, a->data, b->data, o->data, req);
#else
  (void)site;
#endif
  struct walk w = {.n = bc->nd};
  for (int d = 0; d < bc->nd; d++) w.axis[d] = d;
  for (int64_t i = 0; i < n; i++, walk_step(&w, bc))
    st(o, i, req, elemwise_eval(fn, ld(a, w.off[1]), ld(b, w.off[2]), 0));
  return 0;
}

/* grad[side] = sum over the axes where input `side` was stretched.  The
 * iteration visits the kept axes outside and the summed axes inside, so
 * each run of `inner` steps makes one element of the gradient. */
static int bcast_grad_side(const struct site *site, int kind, int side, const struct bcast *bc,
                           const struct mxr_tensor *g, const struct mxr_tensor *a,
                           const struct mxr_tensor *b, struct mxr_tensor *o, int req) {
  if (req == MXR_REQ_NULL) return 0;
#ifdef MXR_HAVE_CUDA
  if (site->gpu)
    return mxr__gpu_bcast_grad(site->stream, kind, side, o->dtype, bc, mxr_tensor_size(o), g->data,
                               data_of(a), data_of(b), o->data, req);
#else
  (void)site;
#endif
  struct walk w = {.n = 0};
  int64_t inner = 1;
  for (int d = 0; d < bc->nd; d++)
    if (bc->sdim[1 + side][d] == bc->dim[d]) w.axis[w.n++] = d;
  for (int d = 0; d < bc->nd; d++)
    if (bc->sdim[1 + side][d] != bc->dim[d]) w.axis[w.n++] = d, inner *= bc->dim[d];
  int64_t outer = mxr_tensor_size(o);
  for (int64_t e = 0; e < outer; e++) {
    double acc = 0;
    for (int64_t j = 0; j < inner; j++, walk_step(&w, bc))
      acc += bcast_grad_term(kind, side, ld(g, w.off[0]), a ? ld(a, w.off[1]) : 0,
                             b ? ld(b, w.off[2]) : 0);
    st(o, e, req, acc);
  }
  return 0;
}

/* Both gradients; the one that may share the head gradient's memory (the
 * in-place hint of the backward op) goes last. */
static int bcast_grads(const struct site *site, int kind, const struct bcast *bc,
                       const struct mxr_tensor *g, const struct mxr_tensor *a,
                       const struct mxr_tensor *b, const int *req, struct mxr_tensor *out,
                       int last) {
  int st_ = bcast_grad_side(site, kind, 1 - last, bc, g, a, b, &out[1 - last], req[1 - last]);
  return st_ ? st_ : bcast_grad_side(site, kind, last, bc, g, a, b, &out[last], req[last]);
}

/* ------------------------------------------------- binary elementwise ops */

static int binary_run(const struct site *site, const char *op, int fn,
                      const struct mxr_tensor *in, const int *req, struct mxr_tensor *out) {
  int st_ = check_same(op, in, 2, out, 1);
  return st_ ? st_ : emap(site, fn, &in[0], &in[1], 0, NULL, 0, &out[0], req[0]);
}

/* _backward_{add,sub,mul,div}: in = (g) or (g, lhs, rhs). */
static int binary_grad_run(const struct site *site, const char *op, int kind,
                           const struct mxr_tensor *in, int nin, const int *req,
                           struct mxr_tensor *out) {
  int st_ = check_same(op, in, nin, out, 2);
  if (st_) return st_;
  struct bcast bc;
  bcast_flat(mxr_tensor_size(&in[0]), &bc);
  return bcast_grads(site, kind, &bc, &in[0], nin == 3 ? &in[1] : NULL, nin == 3 ? &in[2] : NULL,
                     req, out, 1);
}

static int bcast_run(const struct site *site, const char *op, int fn, const struct mxr_tensor *in,
                     const int *req, struct mxr_tensor *out) {
  int st_ = check_dtypes(op, in, 2, out, 1);
  if (st_) return st_;
  struct mxr_shape o;
  if (!bcast_shape(&in[0].shape, &in[1].shape, &o)) return no_bcast(op, &in[0].shape, &in[1].shape);
  if (!mxr_shape_equal(&o, &out[0].shape)) return differ(op, &o, &out[0].shape);
  struct bcast bc;
  bcast_init(&o, &in[0].shape, &in[1].shape, &bc);
  return bcast_forward(site, fn, &bc, &in[0], &in[1], &out[0], req[0]);
}

/* _backward_broadcast_*: the gradients' own shapes say what was stretched. */
static int bcast_grad_run(const struct site *site, const char *op, int kind,
                          const struct mxr_tensor *in, int nin, const int *req,
                          struct mxr_tensor *out) {
  int st_ = check_dtypes(op, in, nin, out, 2);
  if (st_) return st_;
  for (int k = 0; nin == 3 && k < 2; k++)
    if (!mxr_shape_equal(&in[1 + k].shape, &out[k].shape)) return differ(op, &in[1 + k].shape, &out[k].shape);
  struct mxr_shape o;
  if (!bcast_shape(&out[0].shape, &out[1].shape, &o)) return no_bcast(op, &out[0].shape, &out[1].shape);
  if (!mxr_shape_equal(&o, &in[0].shape)) return differ(op, &o, &in[0].shape);
  struct bcast bc;
  bcast_init(&o, &out[0].shape, &out[1].shape, &bc);
  return bcast_grads(site, kind, &bc, &in[0], nin == 3 ? &in[1] : NULL, nin == 3 ? &in[2] : NULL,
                     req, out, 1);
}

#define BINARY_KERNEL(kname, OPNAME, FN) \
  KERNEL(kname) { return KERNEL_ARGS_UNUSED, binary_run(site, OPNAME, FN, in, req, out); }
#define BINARY_GRAD_KERNEL(kname, OPNAME, KIND) \
  KERNEL(kname) { return KERNEL_ARGS_UNUSED, binary_grad_run(site, OPNAME, KIND, in, nin, req, out); }
#define BCAST_KERNEL(kname, OPNAME, FN) \
  KERNEL(kname) { return KERNEL_ARGS_UNUSED, bcast_run(site, OPNAME, FN, in, req, out); }
#define BCAST_GRAD_KERNEL(kname, OPNAME, KIND) \
  KERNEL(kname) { return KERNEL_ARGS_UNUSED, bcast_grad_run(site, OPNAME, KIND, in, nin, req, out); }

BINARY_KERNEL(add_fwd, "elemwise_add", F_ADD)
BINARY_KERNEL(sub_fwd, "elemwise_sub", F_SUB)
BINARY_KERNEL(mul_fwd, "elemwise_mul", F_MUL)
BINARY_KERNEL(div_fwd, "elemwise_div", F_DIV)
BINARY_KERNEL(grad_add_fwd, "_grad_add", F_ADD)
BINARY_GRAD_KERNEL(add_bwd, "_backward_add", K_ADD)
BINARY_GRAD_KERNEL(sub_bwd, "_backward_sub", K_SUB)
BINARY_GRAD_KERNEL(mul_bwd, "_backward_mul", K_MUL)
BINARY_GRAD_KERNEL(div_bwd, "_backward_div", K_DIV)
BCAST_KERNEL(badd_fwd, "broadcast_add", F_ADD)
BCAST_KERNEL(bsub_fwd, "broadcast_sub", F_SUB)
BCAST_KERNEL(bmul_fwd, "broadcast_mul", F_MUL)
BCAST_KERNEL(bdiv_fwd, "broadcast_div", F_DIV)
BCAST_GRAD_KERNEL(badd_bwd, "_backward_broadcast_add", K_ADD)
BCAST_GRAD_KERNEL(bsub_bwd, "_backward_broadcast_sub", K_SUB)
BCAST_GRAD_KERNEL(bmul_bwd, "_backward_broadcast_mul", K_MUL)
BCAST_GRAD_KERNEL(bdiv_bwd, "_backward_broadcast_div", K_DIV)

/* ------------------------------------------------------------ scalar ops */

struct scalar_params {
  double scalar;
  bool is_int; /* only changes result dtypes of integer data in MXNet; kernels are float */
};

static const struct mxr_param_field scalar_fields[] = {
    {"scalar", MXR_PARAM_FLOAT, offsetof(struct scalar_params, scalar), "1", NULL},
    {"is_int", MXR_PARAM_BOOL, offsetof(struct scalar_params, is_int), "True", NULL},
};

/* out = fn(x, scalar), or for _backward_rdiv_scalar fn(g, x, scalar). */
static int scalar_run(const struct site *site, const char *op, int fn, const void *params,
                      const struct mxr_tensor *in, int nin, const int *req,
                      struct mxr_tensor *out) {
  int st_ = check_same(op, in, nin, out, 1);
  double s = as_dtype(in[0].dtype, ((const struct scalar_params *)params)->scalar);
  if (st_) return st_;
  if (nin == 1) return emap(site, fn, &in[0], NULL, s, NULL, 0, &out[0], req[0]);
  return emap(site, fn, &in[0], &in[1], 0, NULL, s, &out[0], req[0]);
}

#define SCALAR_KERNEL(kname, OPNAME, FN) \
  KERNEL(kname) { return KERNEL_ARGS_UNUSED, scalar_run(site, OPNAME, FN, params, in, nin, req, out); }

SCALAR_KERNEL(plus_scalar_fwd, "_plus_scalar", F_ADD)
SCALAR_KERNEL(minus_scalar_fwd, "_minus_scalar", F_SUB)
SCALAR_KERNEL(rminus_scalar_fwd, "_rminus_scalar", F_RSUB)
SCALAR_KERNEL(mul_scalar_fwd, "_mul_scalar", F_MUL)
SCALAR_KERNEL(div_scalar_fwd, "_div_scalar", F_DIV)
SCALAR_KERNEL(rdiv_scalar_fwd, "_rdiv_scalar", F_RDIV)
SCALAR_KERNEL(mul_scalar_bwd, "_backward_mul_scalar", F_MUL)
SCALAR_KERNEL(div_scalar_bwd, "_backward_div_scalar", F_DIV)
SCALAR_KERNEL(rdiv_scalar_bwd, "_backward_rdiv_scalar", G_RDIV)

/* ------------------------------------------------------------ unary ops */

/* out = fn(in[0]) or, for the binary gradient ops, fn(g, in[1]). */
static int unary_run(const struct site *site, const char *op, int fn, const struct mxr_tensor *in,
                     int nin, const int *req, struct mxr_tensor *out) {
  int st_ = check_same(op, in, nin, out, 1);
  return st_ ? st_ : emap(site, fn, &in[0], nin > 1 ? &in[1] : NULL, 0, NULL, 0, &out[0], req[0]);
}

#define UNARY_KERNEL(kname, OPNAME, FN) \
  KERNEL(kname) { return KERNEL_ARGS_UNUSED, unary_run(site, OPNAME, FN, in, nin, req, out); }

UNARY_KERNEL(negative_fwd, "negative", F_NEG)
UNARY_KERNEL(exp_fwd, "exp", F_EXP)
UNARY_KERNEL(log_fwd, "log", F_LOG)
UNARY_KERNEL(sqrt_fwd, "sqrt", F_SQRT)
UNARY_KERNEL(square_fwd, "square", F_SQUARE)
UNARY_KERNEL(relu_fwd, "relu", F_RELU)
UNARY_KERNEL(sigmoid_fwd, "sigmoid", F_SIGMOID)
UNARY_KERNEL(tanh_fwd, "tanh", F_TANH)
UNARY_KERNEL(log_bwd, "_backward_log", G_LOG)
UNARY_KERNEL(sqrt_bwd, "_backward_sqrt", G_SQRT)
UNARY_KERNEL(square_bwd, "_backward_square", G_SQUARE)
UNARY_KERNEL(relu_bwd, "_backward_relu", G_RELU)
UNARY_KERNEL(sigmoid_bwd, "_backward_sigmoid", G_SIGMOID)
UNARY_KERNEL(tanh_bwd, "_backward_tanh", G_TANH)

/* ------------------------------------------------------------ Activation */

enum { ACT_RELU, ACT_SIGMOID, ACT_TANH, ACT_SOFTRELU, ACT_SOFTSIGN };
static const char *const act_choices[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign", NULL};

struct act_params {
  int act_type;
};

static const struct mxr_param_field act_fields[] = {
    {"act_type", MXR_PARAM_ENUM, offsetof(struct act_params, act_type), NULL, act_choices},
};

KERNEL(act_fwd) {
  KERNEL_ARGS_UNUSED;
  static const int fn[] = {F_RELU, F_SIGMOID, F_TANH, F_SOFTRELU, F_SOFTSIGN};
  return unary_run(site, "Activation", fn[((const struct act_params *)params)->act_type], in, 1, req, out);
}

/* in = (g, x, y); softsign's derivative is taken at x, the others' at y. */
KERNEL(act_bwd) {
  KERNEL_ARGS_UNUSED;
  static const int fn[] = {G_RELU, G_SIGMOID, G_TANH, G_SOFTRELU, G_SOFTSIGN};
  int act = ((const struct act_params *)params)->act_type;
  int st_ = check_same("_backward_Activation", in, 3, out, 1);
  if (st_) return st_;
  return emap(site, fn[act], &in[0], &in[act == ACT_SOFTSIGN ? 1 : 2], 0, NULL, 0, &out[0], req[0]);
}

/* ------------------------------------------------------------- LeakyReLU */

/* Numbered as MXNet numbers them. */
enum { LK_LEAKY, LK_PRELU, LK_RRELU, LK_ELU, LK_SELU, LK_GELU };
static const char *const leaky_choices[] = {"leaky", "prelu", "rrelu", "elu", "selu", "gelu", NULL};

struct leaky_params {
  int act_type;
  double slope, lower_bound, upper_bound; /* floats in MXNet: used rounded to float */
};

static const struct mxr_param_field leaky_fields[] = {
    {"act_type", MXR_PARAM_ENUM, offsetof(struct leaky_params, act_type), "leaky", leaky_choices},
    {"slope", MXR_PARAM_FLOAT, offsetof(struct leaky_params, slope), "0.25", NULL},
    {"lower_bound", MXR_PARAM_FLOAT, offsetof(struct leaky_params, lower_bound), "0.125", NULL},
    {"upper_bound", MXR_PARAM_FLOAT, offsetof(struct leaky_params, upper_bound), "0.334", NULL},
};

static int leaky_type(const void *p) { return ((const struct leaky_params *)p)->act_type; }
static int leaky_nin(const void *p) { return leaky_type(p) == LK_PRELU ? 2 : 1; }
static int leaky_nout(const void *p) { return leaky_type(p) == LK_RRELU ? 2 : 1; }
/* head gradients (every output is visible), inputs, outputs */
static int leaky_grad_nin(const void *p) { return 2 * leaky_nout(p) + leaky_nin(p); }

/* MXNet's placement of prelu's gamma against data: gamma's axes, from its
 * last, meet data's axes 1 and 0 (equal size, or 1); every other axis of
 * data sees size 1.  Fails if some gamma axis is left over. */
static int gamma_layout(const char *op, const struct mxr_shape *data,
                        const struct mxr_shape *gamma, struct mxr_shape *placed) {
  int s = gamma->ndim - 1;
  placed->ndim = data->ndim;
  for (int d = data->ndim - 1; d >= 0; d--) {
    bool fits = s >= 0 && d <= 1 && (gamma->dim[s] == data->dim[d] || gamma->dim[s] == 1);
    placed->dim[d] = fits ? gamma->dim[s--] : 1;
  }
  if (s < 0) return 0;
  char a[96], b[96];
  return mxr_set_error(MXR_EINVAL, "%s%sgamma of shape %s does not fit data of shape %s (act_type prelu)",
                       op ? op : "", op ? ": " : "", mxr_shape_str(gamma, a, sizeof a),
                       mxr_shape_str(data, b, sizeof b));
}

SHAPE_FN(leaky_infer) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  int act = leaky_type(params), st_ = 0;
  if (!mxr__shape_known(&in[0])) return 0; /* MXNet infers nothing backwards here */
  if (act == LK_PRELU && !mxr__shape_complete(&in[0])) return 0; /* prelu: whole shapes only */
  if (act == LK_PRELU) {
    if (!mxr__shape_known(&in[1])) {
      if (in[0].ndim < 2)
        return mxr_set_error(MXR_EINVAL, "gamma's shape follows data's axis 1, but data has %d "
                                         "dimension(s); give gamma's shape (act_type prelu)", in[0].ndim);
      in[1] = mxr__shape1(in[0].dim[1]);
    }
    struct mxr_shape placed;
    st_ = gamma_layout(NULL, &in[0], &in[1], &placed);
  }
  if (!st_) st_ = mxr__shape_assign(&out[0], &in[0], "output");
  if (!st_ && act == LK_RRELU) st_ = mxr__shape_assign(&out[1], &in[0], "mask");
  return st_;
}

/* Backward: in = (g_out[, g_mask], data[, gamma], out[, mask]); out =
 * (grad data[, grad gamma]).  Gamma and its gradient share a shape; all
 * other slots share data's. */
SHAPE_FN(leaky_grad_infer) {
  (void)nin, (void)nout, (void)aux, (void)naux;
  int act = leaky_type(params), nvis = leaky_nout(params), nfin = leaky_nin(params);
  struct mxr_shape *slot[8];
  int n = 0;
  for (int i = 0; i < nvis; i++) slot[n++] = &in[i];
  slot[n++] = &in[nvis];
  for (int i = 0; i < nvis; i++) slot[n++] = &in[nvis + nfin + i];
  slot[n++] = &out[0];
  int st_ = unify(slot, n);
  if (!st_ && act == LK_PRELU) st_ = unify((struct mxr_shape *[]){&in[nvis + 1], &out[1]}, 2);
  return st_;
}

/* rrelu: slopes drawn from [lower, upper) in training (the i-th draw of
 * the call's splitmix64 sequence for element i, on either device), stored
 * in the mask; in inference one slope (lower + upper) / 2 (MXNet leaves the
 * mask unset then; here it holds that slope, so a backward pass still
 * works). */
static int rrelu_forward(const struct site *site, const struct mxr_op_ctx *ctx,
                         const struct leaky_params *p, const struct mxr_tensor *x, const int *req,
                         struct mxr_tensor *out) {
  float lo = (float)p->lower_bound, hi = (float)p->upper_bound;
  bool train = ctx && ctx->is_train;
  uint64_t seed = ctx ? ctx->seed : 0;
  int64_t n = mxr_tensor_size(x);
#ifdef MXR_HAVE_CUDA
  if (site->gpu)
    return mxr__gpu_rrelu(site->stream, x->dtype, n, x->data, out[0].data, req[0], out[1].data,
                          req[1], train, seed, lo, hi);
#else
  (void)site;
#endif
  for (int64_t i = 0; i < n; i++) {
    double v = ld(x, i), slope = (double)((lo + hi) / 2.0f);
    if (train)
      slope = as_dtype(x->dtype, mxr__uniform_at(seed, (uint64_t)i) * (double)(hi - lo) + (double)lo);
    st(&out[1], i, req[1], slope);
    st(&out[0], i, req[0], elemwise_eval(F_XELU, v, slope, 0));
  }
  return 0;
}

KERNEL(leaky_fwd) {
  KERNEL_ARGS_UNUSED;
  const struct leaky_params *p = params;
  int st_ = check_dtypes("LeakyReLU", in, nin, out, nout);
  if (st_ || req[0] == MXR_REQ_NULL) return st_;
  double slope = (double)(float)p->slope;
  switch (p->act_type) {
    case LK_PRELU: {
      struct mxr_shape placed;
      st_ = gamma_layout("LeakyReLU", &in[0].shape, &in[1].shape, &placed);
      if (!st_ && !mxr_shape_equal(&in[0].shape, &out[0].shape))
        st_ = differ("LeakyReLU", &in[0].shape, &out[0].shape);
      if (st_) return st_;
      struct bcast bc;
      bcast_init(&in[0].shape, &in[0].shape, &placed, &bc);
      return bcast_forward(site, F_XELU, &bc, &in[0], &in[1], &out[0], req[0]);
    }
    case LK_RRELU:
      st_ = check_same("LeakyReLU", in, 1, out, 2);
      return st_ ? st_ : rrelu_forward(site, ctx, p, &in[0], req, out);
    default: {
      static const int fn[] = {[LK_LEAKY] = F_XELU, [LK_ELU] = F_ELU, [LK_SELU] = F_SELU, [LK_GELU] = F_GELU};
      st_ = check_same("LeakyReLU", in, 1, out, 1);
      return st_ ? st_ : emap(site, fn[p->act_type], &in[0], NULL, slope, NULL, 0, &out[0], req[0]);
    }
  }
}

KERNEL(leaky_bwd) {
  KERNEL_ARGS_UNUSED;
  const struct leaky_params *p = params;
  const char *op = "_backward_LeakyReLU";
  int nvis = leaky_nout(p), nfin = leaky_nin(p);
  const struct mxr_tensor *g = &in[0], *x = &in[nvis], *y = &in[nvis + nfin];
  int st_ = check_dtypes(op, in, nin, out, nout);
  if (st_) return st_;
  if (p->act_type == LK_PRELU) {
    const struct mxr_tensor *gamma = &in[nvis + 1];
    struct mxr_shape placed;
    st_ = gamma_layout(op, &x->shape, &gamma->shape, &placed);
    if (!st_ && !mxr_shape_equal(&x->shape, &g->shape)) st_ = differ(op, &x->shape, &g->shape);
    if (!st_ && !mxr_shape_equal(&x->shape, &out[0].shape)) st_ = differ(op, &x->shape, &out[0].shape);
    if (!st_ && !mxr_shape_equal(&gamma->shape, &out[1].shape)) st_ = differ(op, &gamma->shape, &out[1].shape);
    if (st_) return st_;
    struct bcast bc;
    bcast_init(&x->shape, &x->shape, &placed, &bc);
    return bcast_grads(site, K_PRELU, &bc, g, x, gamma, req, out, 0); /* data's gradient may share g */
  }
  struct mxr_tensor same[4] = {*g, *x, *y};
  st_ = check_same(op, same, 3, out, 1);
  if (st_) return st_;
  double slope = (double)(float)p->slope;
  switch (p->act_type) {
    case LK_LEAKY: return emap(site, G_XELU, g, y, 0, NULL, slope, &out[0], req[0]);
    case LK_RRELU:
      same[3] = in[nvis + nfin + 1];
      st_ = check_same(op, same, 4, out, 0);
      return st_ ? st_ : emap(site, G_XELU, g, y, 0, &same[3], 0, &out[0], req[0]);
    case LK_ELU: return emap(site, G_ELU, g, y, 0, NULL, slope, &out[0], req[0]);
    case LK_SELU: return emap(site, G_SELU, g, y, 0, NULL, 0, &out[0], req[0]);
    case LK_GELU: return emap(site, G_GELU, g, x, 0, NULL, 0, &out[0], req[0]);
  }
  return mxr_set_error(MXR_EINVAL, "%s: unknown act_type %d", op, p->act_type);
}

/* ------------------------------------------------------------ op table */

#define OP_BASE .dtypes = FLOAT_DTYPES, .exec_type = MXR_EXEC_SYNC

/* Two inputs, one output, may overwrite either input. */
#define BINARY_OP(var, NAME, KERN, SHAPE, BWD, FLAGS, ...)                                       \
  static const struct mxr_op var = {                                                           \
      .name = NAME, .aliases = {__VA_ARGS__}, .nin = 2, .nout = 1, .input_names = lhs_rhs,     \
      .infer_shape = SHAPE, .forward_cpu = KERN##_cpu, .forward_gpu = MXR_GPU_FORWARD(KERN##_gpu), .backward = BWD, .grad_flags = FLAGS,         \
      .inplace = {{0, 0}, {1, 0}}, .num_inplace = 2, OP_BASE}

/* Gradients of a two-input op: NIN inputs, two outputs. */
#define BINARY_GRAD_OP(var, NAME, KERN, SHAPE, NIN, ...)                                        \
  static const struct mxr_op var = {                                                           \
      .name = NAME, .aliases = {NULL}, .nin = NIN, .nout = 2, .infer_shape = SHAPE,            \
      .forward_cpu = KERN##_cpu, .forward_gpu = MXR_GPU_FORWARD(KERN##_gpu), .inplace = {__VA_ARGS__},                                           \
      .num_inplace = sizeof((struct mxr_inplace[]){__VA_ARGS__}) / sizeof(struct mxr_inplace), \
      OP_BASE}

#define SCALAR_OP(var, NAME, KERN, BWD, FLAGS, ...)                                              \
  static const struct mxr_op var = {                                                           \
      .name = NAME, .aliases = {__VA_ARGS__}, .fields = scalar_fields, .num_fields = 2,          \
      .params_size = sizeof(struct scalar_params), .nin = 1, .nout = 1, .input_names = data_names, \
      .infer_shape = same_shape, .forward_cpu = KERN##_cpu, .forward_gpu = MXR_GPU_FORWARD(KERN##_gpu), .backward = BWD, .grad_flags = FLAGS,    \
      .inplace = {{0, 0}}, .num_inplace = 1, OP_BASE}

#define UNARY_OP(var, NAME, KERN, BWD, FLAGS, ...)                                               \
  static const struct mxr_op var = {                                                           \
      .name = NAME, .aliases = {__VA_ARGS__}, .nin = 1, .nout = 1, .input_names = data_names,  \
      .infer_shape = same_shape, .forward_cpu = KERN##_cpu, .forward_gpu = MXR_GPU_FORWARD(KERN##_gpu), .backward = BWD, .grad_flags = FLAGS,    \
      .inplace = {{0, 0}}, .num_inplace = 1, OP_BASE}

/* elemwise_add's gradient in MXNet is CloneGradient (the head gradient
 * itself); _backward_add computes the same for whoever builds the node.
 * MXNet's fourth alias, _sparse_elemwise_add (_sparse_elemwise_sub), does
 * not fit in aliases[]. */
static const struct mxr_op op_elemwise_add = {
    .name = "elemwise_add", .aliases = {"_add", "_plus", "_Plus", NULL}, .nin = 2, .nout = 1,
    .input_names = lhs_rhs, .infer_shape = same_shape, .forward_cpu = add_fwd_cpu, .forward_gpu = MXR_GPU_FORWARD(add_fwd_gpu),
    .backward = "_backward_add", .grad_passthrough = true, .inplace = {{0, 0}, {1, 0}},
    .num_inplace = 2, OP_BASE};
BINARY_OP(op_elemwise_sub, "elemwise_sub", sub_fwd, same_shape, "_backward_sub", 0, "_sub", "_minus", "_Minus", NULL);
BINARY_OP(op_elemwise_mul, "elemwise_mul", mul_fwd, same_shape, "_backward_mul", MXR_GRAD_USE_INPUTS,
          "_sparse_elemwise_mul", "_mul", "_Mul", NULL);
BINARY_OP(op_elemwise_div, "elemwise_div", div_fwd, same_shape, "_backward_div", MXR_GRAD_USE_INPUTS,
          "_sparse_elemwise_div", "_div", "_Div", NULL);
BINARY_OP(op_grad_add, "_grad_add", grad_add_fwd, same_shape, NULL, 0, NULL);
BINARY_GRAD_OP(op_backward_add, "_backward_add", add_bwd, same_shape, 1, {0, 0}, {0, 1});
BINARY_GRAD_OP(op_backward_sub, "_backward_sub", sub_bwd, same_shape, 1, {0, 0}, {0, 1});
BINARY_GRAD_OP(op_backward_mul, "_backward_mul", mul_bwd, same_shape, 3, {0, 1});
BINARY_GRAD_OP(op_backward_div, "_backward_div", div_bwd, same_shape, 3, {0, 1});

BINARY_OP(op_broadcast_add, "broadcast_add", badd_fwd, bcast_infer, "_backward_broadcast_add", 0,
          "_sparse_broadcast_add", "_sparse_broadcast_plus", "broadcast_plus", NULL);
BINARY_OP(op_broadcast_sub, "broadcast_sub", bsub_fwd, bcast_infer, "_backward_broadcast_sub", 0,
          "_sparse_broadcast_sub", "_sparse_broadcast_minus", "broadcast_minus", NULL);
BINARY_OP(op_broadcast_mul, "broadcast_mul", bmul_fwd, bcast_infer, "_backward_broadcast_mul",
          MXR_GRAD_USE_INPUTS, "_sparse_broadcast_mul", NULL);
BINARY_OP(op_broadcast_div, "broadcast_div", bdiv_fwd, bcast_infer, "_backward_broadcast_div",
          MXR_GRAD_USE_INPUTS, "_sparse_broadcast_div", NULL);
BINARY_GRAD_OP(op_backward_badd, "_backward_broadcast_add", badd_bwd, bcast_grad_infer, 1, {0, 0}, {0, 1});
BINARY_GRAD_OP(op_backward_bsub, "_backward_broadcast_sub", bsub_bwd, bcast_grad_infer, 1, {0, 0}, {0, 1});
BINARY_GRAD_OP(op_backward_bmul, "_backward_broadcast_mul", bmul_bwd, bcast_grad_infer, 3, {0, 1});
BINARY_GRAD_OP(op_backward_bdiv, "_backward_broadcast_div", bdiv_bwd, bcast_grad_infer, 3, {0, 1});

/* MXNet's gradients of _plus_scalar and _minus_scalar are _copy, of
 * _rminus_scalar negative (ops without parameters, given the forward's). */
SCALAR_OP(op_plus_scalar, "_plus_scalar", plus_scalar_fwd, "_copy", 0, "_PlusScalar", NULL);
SCALAR_OP(op_minus_scalar, "_minus_scalar", minus_scalar_fwd, "_copy", 0, "_MinusScalar", NULL);
SCALAR_OP(op_rminus_scalar, "_rminus_scalar", rminus_scalar_fwd, "negative", 0, "_RMinusScalar", NULL);
SCALAR_OP(op_mul_scalar, "_mul_scalar", mul_scalar_fwd, "_backward_mul_scalar", 0, "_MulScalar", NULL);
SCALAR_OP(op_div_scalar, "_div_scalar", div_scalar_fwd, "_backward_div_scalar", 0, "_DivScalar", NULL);
SCALAR_OP(op_rdiv_scalar, "_rdiv_scalar", rdiv_scalar_fwd, "_backward_rdiv_scalar",
          MXR_GRAD_USE_INPUTS, "_RDivScalar", NULL);
SCALAR_OP(op_backward_mul_scalar, "_backward_mul_scalar", mul_scalar_bwd, NULL, 0, NULL);
SCALAR_OP(op_backward_div_scalar, "_backward_div_scalar", div_scalar_bwd, NULL, 0, NULL);
static const struct mxr_op op_backward_rdiv_scalar = {
    .name = "_backward_rdiv_scalar", .aliases = {NULL}, .fields = scalar_fields, .num_fields = 2,
    .params_size = sizeof(struct scalar_params), .nin = 2, .nout = 1, .input_names = lhs_rhs,
    .infer_shape = same_shape, .forward_cpu = rdiv_scalar_bwd_cpu, .forward_gpu = MXR_GPU_FORWARD(rdiv_scalar_bwd_gpu), .inplace = {{0, 0}, {1, 0}},
    .num_inplace = 2, OP_BASE};

/* exp's gradient is _mul (elemwise_mul) of the head gradient and exp(x). */
UNARY_OP(op_negative, "negative", negative_fwd, "negative", 0, "_sparse_negative", NULL);
UNARY_OP(op_exp, "exp", exp_fwd, "_mul", MXR_GRAD_USE_OUTPUTS, "_sparse_exp", NULL);
UNARY_OP(op_log, "log", log_fwd, "_backward_log", MXR_GRAD_USE_INPUTS, "_sparse_log", NULL);
UNARY_OP(op_sqrt, "sqrt", sqrt_fwd, "_backward_sqrt", MXR_GRAD_USE_OUTPUTS, "_sparse_sqrt", NULL);
UNARY_OP(op_square, "square", square_fwd, "_backward_square", MXR_GRAD_USE_INPUTS, "_sparse_square", NULL);
UNARY_OP(op_relu, "relu", relu_fwd, "_backward_relu", MXR_GRAD_USE_OUTPUTS, "_sparse_relu", NULL);
UNARY_OP(op_sigmoid, "sigmoid", sigmoid_fwd, "_backward_sigmoid", MXR_GRAD_USE_OUTPUTS, "_sparse_sigmoid", NULL);
UNARY_OP(op_tanh, "tanh", tanh_fwd, "_backward_tanh", MXR_GRAD_USE_OUTPUTS, "_sparse_tanh", NULL);
/* (head gradient, x or y): registered as binary ops in MXNet */
BINARY_OP(op_backward_log, "_backward_log", log_bwd, same_shape, NULL, 0, NULL);
BINARY_OP(op_backward_sqrt, "_backward_sqrt", sqrt_bwd, same_shape, NULL, 0, NULL);
BINARY_OP(op_backward_square, "_backward_square", square_bwd, same_shape, NULL, 0, NULL);
BINARY_OP(op_backward_relu, "_backward_relu", relu_bwd, same_shape, NULL, 0, NULL);
BINARY_OP(op_backward_sigmoid, "_backward_sigmoid", sigmoid_bwd, same_shape, NULL, 0, NULL);
BINARY_OP(op_backward_tanh, "_backward_tanh", tanh_bwd, same_shape, NULL, 0, NULL);

/* MXNet feeds _backward_Activation (g, y) for relu and (g, y, x) otherwise;
 * the gradient convention here gives (g, x, y) for every act_type. */
static const struct mxr_op op_activation = {
    .name = "Activation", .aliases = {"_npx_activation", NULL}, .fields = act_fields,
    .num_fields = 1, .params_size = sizeof(struct act_params), .nin = 1, .nout = 1,
    .input_names = data_names, .infer_shape = same_shape, .forward_cpu = act_fwd_cpu, .forward_gpu = MXR_GPU_FORWARD(act_fwd_gpu),
    .backward = "_backward_Activation", .grad_flags = MXR_GRAD_USE_INPUTS | MXR_GRAD_USE_OUTPUTS,
    .inplace = {{0, 0}}, .num_inplace = 1, OP_BASE};
static const struct mxr_op op_backward_activation = {
    .name = "_backward_Activation", .aliases = {NULL}, .fields = act_fields, .num_fields = 1,
    .params_size = sizeof(struct act_params), .nin = 3, .nout = 1, .infer_shape = same_shape,
    .forward_cpu = act_bwd_cpu, .forward_gpu = MXR_GPU_FORWARD(act_bwd_gpu), .inplace = {{0, 0}}, .num_inplace = 1, OP_BASE};

static const struct mxr_op op_leaky_relu = {
    .name = "LeakyReLU", .aliases = {"_npx_leaky_relu", NULL}, .fields = leaky_fields,
    .num_fields = 4, .params_size = sizeof(struct leaky_params), .nin = 2, .get_nin = leaky_nin,
    .get_nout = leaky_nout, .input_names = data_names, .infer_shape = leaky_infer,
    .forward_cpu = leaky_fwd_cpu, .forward_gpu = MXR_GPU_FORWARD(leaky_fwd_gpu),
    .backward = "_backward_LeakyReLU", .draws_random = true, /* rrelu */
    .grad_flags = MXR_GRAD_USE_INPUTS | MXR_GRAD_USE_OUTPUTS, .inplace = {{0, 0}},
    .num_inplace = 1, OP_BASE};
static const struct mxr_op op_backward_leaky_relu = {
    .name = "_backward_LeakyReLU", .aliases = {NULL}, .fields = leaky_fields, .num_fields = 4,
    .params_size = sizeof(struct leaky_params), .get_nin = leaky_grad_nin, .get_nout = leaky_nin,
    .infer_shape = leaky_grad_infer, .forward_cpu = leaky_bwd_cpu, .forward_gpu = MXR_GPU_FORWARD(leaky_bwd_gpu), .inplace = {{0, 0}},
    .num_inplace = 1, OP_BASE};

const struct mxr_op *const mxr__ops_elemwise[] = {
    &op_elemwise_add, &op_elemwise_sub, &op_elemwise_mul, &op_elemwise_div, &op_grad_add,
    &op_backward_add, &op_backward_sub, &op_backward_mul, &op_backward_div,
    &op_broadcast_add, &op_broadcast_sub, &op_broadcast_mul, &op_broadcast_div,
    &op_backward_badd, &op_backward_bsub, &op_backward_bmul, &op_backward_bdiv,
    &op_plus_scalar, &op_minus_scalar, &op_rminus_scalar, &op_mul_scalar, &op_div_scalar,
    &op_rdiv_scalar, &op_backward_mul_scalar, &op_backward_div_scalar, &op_backward_rdiv_scalar,
    &op_negative, &op_exp, &op_log, &op_sqrt, &op_square, &op_relu, &op_sigmoid, &op_tanh,
    &op_backward_log, &op_backward_sqrt, &op_backward_square, &op_backward_relu,
    &op_backward_sigmoid, &op_backward_tanh,
    &op_activation, &op_backward_activation, &op_leaky_relu, &op_backward_leaky_relu,
    NULL,
};
