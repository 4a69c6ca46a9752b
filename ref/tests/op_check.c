/* Operator checks against float64 references (op_check.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op/random_fn.h"
#include "op_check.h"

double oc_uniform(uint64_t *rng) {
  /* splitmix64 (op/random_fn.h): stable across platforms.  Draw 0 of the
   * state is the generator's next output; the state then steps once. */
  double v = mxr__uniform_at(*rng, 0);
  *rng += 0x9e3779b97f4a7c15ull;
  return v;
}

/* Everything one check needs: the op, its params, shapes, and the inputs as
 * doubles (already rounded to the kernel's dtype). */
struct oc_setup {
  const struct oc_case *c;
  const mxr_op *op;
  mxr_op_params *params;
  int nin, nout, nvis, naux;
  struct mxr_shape in_shapes[OC_MAX_TENSORS], out_shapes[OC_MAX_TENSORS],
      aux_shapes[OC_MAX_TENSORS];
  double *in[OC_MAX_TENSORS], *aux[OC_MAX_TENSORS];
  uint64_t rng;
};

static double round_to(int dtype, double v) { return dtype == MXR_FLOAT64 ? v : (double)(float)v; }

static double *alloc_doubles(int64_t n) {
  double *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
  ck_assert_ptr_nonnull(p);
  return p;
}

static void fill_random(struct oc_setup *s, double *x, int64_t n, int input) {
  const struct oc_case *c = s->c;
  double lo = c->lo, hi = c->hi;
  if (lo == 0 && hi == 0) lo = -1, hi = 1;
  if (c->fill && input >= 0)
    c->fill(c->user, input, x, n, &s->rng);
  else
    for (int64_t j = 0; j < n; j++) x[j] = lo + (hi - lo) * oc_uniform(&s->rng);
  for (int64_t j = 0; j < n; j++) x[j] = round_to(c->dtype, x[j]);
}

static void setup(struct oc_setup *s, const struct oc_case *c, uint64_t seed) {
  memset(s, 0, sizeof *s);
  s->c = c;
  s->rng = seed * 0x2545f4914f6cdd1dull + 1;
  ck_assert_msg(mxr_op_find(c->op, &s->op) == 0, "%s", mxr_last_error());
  ck_assert_msg(mxr_op_params_parse(s->op, c->nparams, c->keys, c->vals, &s->params) == 0, "%s",
                mxr_last_error());
  s->nin = mxr_op_num_inputs(s->op, s->params);
  s->nout = mxr_op_num_outputs(s->op, s->params);
  s->nvis = mxr_op_num_visible_outputs(s->op, s->params);
  s->naux = mxr_op_num_aux(s->op, s->params);
  ck_assert_msg(s->nin == c->nin, "%s: op has %d inputs, the case gives %d", c->op, s->nin, c->nin);
  for (int i = 0; i < s->nin; i++) s->in_shapes[i] = c->in_shapes[i];
  for (int k = 0; k < s->nout; k++) s->out_shapes[k].ndim = -1;
  for (int a = 0; a < s->naux; a++) s->aux_shapes[a] = a < c->naux ? c->aux_shapes[a] : (struct mxr_shape){-1, {0}};
  int st = mxr__op_infer_shape(s->op, s->params, s->in_shapes, s->nin, s->out_shapes, s->nout,
                               s->aux_shapes, s->naux);
  ck_assert_msg(st == 0, "%s: shape inference failed: %s", c->op, mxr_last_error());
  for (int k = 0; k < s->nout; k++)
    ck_assert_msg(s->out_shapes[k].ndim >= 0, "%s: output %d shape not inferred", c->op, k);
  for (int i = 0; i < s->nin; i++) {
    s->in[i] = alloc_doubles(oc_size(&s->in_shapes[i]));
    fill_random(s, s->in[i], oc_size(&s->in_shapes[i]), i);
  }
  for (int a = 0; a < s->naux; a++) {
    ck_assert_msg(s->aux_shapes[a].ndim >= 0, "%s: aux %d shape not inferred", c->op, a);
    s->aux[a] = alloc_doubles(oc_size(&s->aux_shapes[a]));
    fill_random(s, s->aux[a], oc_size(&s->aux_shapes[a]), -1);
    if (strstr(mxr_op_aux_name(s->op, s->params, a), "var"))
      for (int64_t j = 0; j < oc_size(&s->aux_shapes[a]); j++) s->aux[a][j] = fabs(s->aux[a][j]) + 0.5;
  }
}

static void teardown(struct oc_setup *s) {
  for (int i = 0; i < s->nin; i++) free(s->in[i]);
  for (int a = 0; a < s->naux; a++) free(s->aux[a]);
  mxr_op_params_free(s->params);
}

/* Kernel-side tensors, in the case's dtype. */
static struct mxr_tensor make_tensor(int dtype, const struct mxr_shape *shape, const double *init) {
  int64_t n = oc_size(shape);
  struct mxr_tensor t = {calloc((size_t)(n > 0 ? n : 1), mxr_dtype_size(dtype)), *shape, dtype};
  ck_assert_ptr_nonnull(t.data);
  for (int64_t j = 0; init && j < n; j++) {
    if (dtype == MXR_FLOAT64)
      ((double *)t.data)[j] = init[j];
    else
      ((float *)t.data)[j] = (float)init[j];
  }
  return t;
}

static double tensor_at(const struct mxr_tensor *t, int64_t j) {
  return t->dtype == MXR_FLOAT64 ? ((double *)t->data)[j] : (double)((float *)t->data)[j];
}

static bool close_enough(double got, double want, double rtol, double atol) {
  return isfinite(got) && isfinite(want) && fabs(got - want) <= atol + rtol * fabs(want);
}

static void compare(const char *op, const char *what, int index, const struct mxr_tensor *got,
                    const double *want, double rtol, double atol) {
  int64_t n = mxr_tensor_size(got);
  for (int64_t j = 0; j < n; j++) {
    double g = tensor_at(got, j);
    ck_assert_msg(close_enough(g, want[j], rtol, atol),
                  "%s: %s %d element %lld: kernel %.9g, reference %.9g (rtol %g, atol %g)", op,
                  what, index, (long long)j, g, want[j], rtol, atol);
  }
}

static void *workspace_for(const struct oc_setup *s, const mxr_op *op, const mxr_op_params *p,
                           const struct mxr_shape *in_shapes, int nin, size_t *size) {
  *size = op->workspace_bytes ? op->workspace_bytes(mxr__op_params_struct(p), in_shapes, nin) : 0;
  (void)s;
  if (!*size) return NULL;
  void *w = malloc(*size);
  ck_assert_ptr_nonnull(w);
  return w;
}

/* Run the op's forward kernel; outputs (all of them) and aux come back in
 * out[] / aux[]. */
static void run_forward(struct oc_setup *s, struct mxr_tensor *out, struct mxr_tensor *aux) {
  const struct oc_case *c = s->c;
  struct mxr_tensor in[OC_MAX_TENSORS];
  int req[OC_MAX_TENSORS];
  for (int i = 0; i < s->nin; i++) in[i] = make_tensor(c->dtype, &s->in_shapes[i], s->in[i]);
  for (int k = 0; k < s->nout; k++) {
    out[k] = make_tensor(c->dtype, &s->out_shapes[k], NULL);
    req[k] = MXR_REQ_WRITE;
  }
  for (int a = 0; a < s->naux; a++) aux[a] = make_tensor(c->dtype, &s->aux_shapes[a], s->aux[a]);
  struct mxr_op_ctx ctx = {.run = NULL, .is_train = c->is_train, .seed = s->rng};
  ctx.workspace = workspace_for(s, s->op, s->params, s->in_shapes, s->nin, &ctx.workspace_size);
  int st = mxr__op_forward_cpu(s->op, s->params, &ctx, in, s->nin, req, out, s->nout, aux, s->naux);
  ck_assert_msg(st == 0, "%s forward failed: %s", c->op, mxr_last_error());
  free(ctx.workspace);
  for (int i = 0; i < s->nin; i++) free(in[i].data);
}

/* The reference forward on (possibly perturbed) inputs; fills vis outputs. */
static void ref_forward(const struct oc_setup *s, double *const *in, double **out) {
  double *aux[OC_MAX_TENSORS];
  for (int a = 0; a < s->naux; a++) {
    int64_t n = oc_size(&s->aux_shapes[a]);
    aux[a] = alloc_doubles(n);
    memcpy(aux[a], s->aux[a], (size_t)n * sizeof(double));
  }
  s->c->forward_ref(s->c->user, (const double *const *)in, s->in_shapes, s->nin, out,
                    s->out_shapes, s->nvis, aux, s->naux);
  for (int a = 0; a < s->naux; a++) free(aux[a]);
}

void oc_check_forward(const struct oc_case *c, uint64_t seed) {
  struct oc_setup s;
  setup(&s, c, seed);
  struct mxr_tensor out[OC_MAX_TENSORS], aux[OC_MAX_TENSORS];
  run_forward(&s, out, aux);
  double *want[OC_MAX_TENSORS], *want_aux[OC_MAX_TENSORS];
  for (int k = 0; k < s.nvis; k++) want[k] = alloc_doubles(oc_size(&s.out_shapes[k]));
  for (int a = 0; a < s.naux; a++) {
    want_aux[a] = alloc_doubles(oc_size(&s.aux_shapes[a]));
    memcpy(want_aux[a], s.aux[a], (size_t)oc_size(&s.aux_shapes[a]) * sizeof(double));
  }
  c->forward_ref(c->user, (const double *const *)s.in, s.in_shapes, s.nin, want, s.out_shapes,
                 s.nvis, want_aux, s.naux);
  double rtol = c->rtol ? c->rtol : 1e-5, atol = c->atol ? c->atol : 1e-6;
  for (int k = 0; k < s.nvis; k++) compare(c->op, "output", k, &out[k], want[k], rtol, atol);
  for (int a = 0; a < s.naux; a++) compare(c->op, "aux state", a, &aux[a], want_aux[a], rtol, atol);
  for (int k = 0; k < s.nout; k++) free(out[k].data);
  for (int k = 0; k < s.nvis; k++) free(want[k]);
  for (int a = 0; a < s.naux; a++) {
    free(aux[a].data);
    free(want_aux[a]);
  }
  teardown(&s);
}

/* L(x) = sum over visible outputs of out . ograd, with the reference. */
static double weighted_sum(const struct oc_setup *s, double *const *in, double *const *ograd) {
  double *out[OC_MAX_TENSORS];
  for (int k = 0; k < s->nvis; k++) out[k] = alloc_doubles(oc_size(&s->out_shapes[k]));
  ref_forward(s, in, out);
  double sum = 0;
  for (int k = 0; k < s->nvis; k++) {
    for (int64_t j = 0; j < oc_size(&s->out_shapes[k]); j++) sum += out[k][j] * ograd[k][j];
    free(out[k]);
  }
  return sum;
}

/* Central differences of the reference: grad[i][j] = dL/dx_i[j]. */
static void finite_differences(struct oc_setup *s, double *const *ograd, double **grad) {
  for (int i = 0; i < s->nin; i++) {
    if (s->c->no_grad_inputs & (1u << i)) continue;
    for (int64_t j = 0; j < oc_size(&s->in_shapes[i]); j++) {
      double x = s->in[i][j], h = 1e-6 * fmax(1.0, fabs(x));
      s->in[i][j] = x + h;
      double up = weighted_sum(s, s->in, ograd);
      s->in[i][j] = x - h;
      double down = weighted_sum(s, s->in, ograd);
      s->in[i][j] = x;
      grad[i][j] = (up - down) / (2 * h);
    }
  }
}

/* Run the backward op with every gradient requested as `req`. */
static void run_backward(struct oc_setup *s, const mxr_op *bop, mxr_op_params *bparams,
                         struct mxr_tensor *fwd_out, struct mxr_tensor *fwd_aux,
                         double *const *ograd, struct mxr_tensor *grads, int req_kind) {
  const struct oc_case *c = s->c;
  struct mxr_tensor bin[3 * OC_MAX_TENSORS];
  struct mxr_shape bin_shapes[3 * OC_MAX_TENSORS];
  int n = 0;
  for (int k = 0; k < s->nvis; k++) {
    bin[n] = make_tensor(c->dtype, &s->out_shapes[k], ograd[k]);
    bin_shapes[n++] = s->out_shapes[k];
  }
  int first_owned = 0, owned_end = n;
  if (s->op->grad_flags & MXR_GRAD_USE_INPUTS)
    for (int i = 0; i < s->nin; i++) {
      bin[n] = make_tensor(c->dtype, &s->in_shapes[i], s->in[i]);
      bin_shapes[n++] = s->in_shapes[i];
    }
  owned_end = n;
  if (s->op->grad_flags & MXR_GRAD_USE_OUTPUTS)
    for (int k = 0; k < s->nout; k++) {
      bin[n] = fwd_out[k];
      bin_shapes[n++] = s->out_shapes[k];
    }
  int nbin = mxr_op_num_inputs(bop, bparams);
  ck_assert_msg(nbin == n, "%s: %s takes %d inputs, the gradient convention gives %d", c->op,
                bop->name, nbin, n);
  int req[OC_MAX_TENSORS];
  for (int i = 0; i < s->nin; i++) req[i] = req_kind;
  struct mxr_op_ctx ctx = {.run = NULL, .is_train = c->is_train, .seed = s->rng};
  ctx.workspace = workspace_for(s, bop, bparams, bin_shapes, n, &ctx.workspace_size);
  int st = mxr__op_forward_cpu(bop, bparams, &ctx, bin, n, req, grads, s->nin, fwd_aux, s->naux);
  ck_assert_msg(st == 0, "%s failed: %s", bop->name, mxr_last_error());
  free(ctx.workspace);
  for (int i = first_owned; i < owned_end; i++) free(bin[i].data);
}

void oc_check_backward(const struct oc_case *c, uint64_t seed) {
  struct oc_setup s;
  setup(&s, c, seed);
  ck_assert_msg(s.op->backward != NULL, "%s has no gradient", c->op);
  const mxr_op *bop;
  mxr_op_params *bparams;
  ck_assert_msg(mxr_op_find(s.op->backward, &bop) == 0, "%s", mxr_last_error());
  ck_assert_msg(mxr_op_params_parse(bop, c->nparams, c->keys, c->vals, &bparams) == 0, "%s",
                mxr_last_error());
  struct mxr_tensor out[OC_MAX_TENSORS], aux[OC_MAX_TENSORS];
  run_forward(&s, out, aux);
  double *ograd[OC_MAX_TENSORS], *want[OC_MAX_TENSORS] = {0}, *prior[OC_MAX_TENSORS];
  for (int k = 0; k < s.nvis; k++) {
    ograd[k] = alloc_doubles(oc_size(&s.out_shapes[k]));
    fill_random(&s, ograd[k], oc_size(&s.out_shapes[k]), -1);
  }
  for (int i = 0; i < s.nin; i++) want[i] = alloc_doubles(oc_size(&s.in_shapes[i]));
  if (c->backward_ref)
    c->backward_ref(c->user, (const double *const *)s.in, s.in_shapes, s.nin,
                    (const double *const *)ograd, s.out_shapes, s.nvis, want);
  else
    finite_differences(&s, ograd, want);
  double rtol = c->grad_rtol ? c->grad_rtol : 1e-3, atol = c->grad_atol ? c->grad_atol : 1e-4;

  /* req = write */
  struct mxr_tensor grads[OC_MAX_TENSORS];
  for (int i = 0; i < s.nin; i++) grads[i] = make_tensor(c->dtype, &s.in_shapes[i], NULL);
  run_backward(&s, bop, bparams, out, aux, ograd, grads, MXR_REQ_WRITE);
  for (int i = 0; i < s.nin; i++)
    if (!(c->no_grad_inputs & (1u << i))) compare(c->op, "gradient of input", i, &grads[i], want[i], rtol, atol);

  /* req = add: the gradient lands on top of what is there */
  for (int i = 0; i < s.nin; i++) {
    int64_t n = oc_size(&s.in_shapes[i]);
    prior[i] = alloc_doubles(n);
    fill_random(&s, prior[i], n, -1);
    free(grads[i].data);
    grads[i] = make_tensor(c->dtype, &s.in_shapes[i], prior[i]);
    for (int64_t j = 0; j < n; j++) prior[i][j] += want[i][j];
  }
  run_backward(&s, bop, bparams, out, aux, ograd, grads, MXR_REQ_ADD);
  for (int i = 0; i < s.nin; i++)
    if (!(c->no_grad_inputs & (1u << i))) compare(c->op, "accumulated gradient of input", i, &grads[i], prior[i], rtol, atol);

  for (int i = 0; i < s.nin; i++) {
    free(grads[i].data);
    free(prior[i]);
    free(want[i]);
  }
  for (int k = 0; k < s.nvis; k++) free(ograd[k]);
  for (int k = 0; k < s.nout; k++) free(out[k].data);
  for (int a = 0; a < s.naux; a++) free(aux[a].data);
  mxr_op_params_free(bparams);
  teardown(&s);
}

void oc_check(const struct oc_case *c, uint64_t seed, int rounds) {
  for (int r = 0; r < rounds; r++) {
    oc_check_forward(c, seed + (uint64_t)r);
    if (c->forward_ref) {
      const mxr_op *op;
      ck_assert_int_eq(mxr_op_find(c->op, &op), 0);
      if (op->backward) oc_check_backward(c, seed + (uint64_t)r);
    }
  }
}
