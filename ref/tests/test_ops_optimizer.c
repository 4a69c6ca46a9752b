/* The optimizer ops (sgd_update, sgd_mom_update, adam_update) against
 * float64 references of one and of several update steps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "op_check.h"

/* Hyper-parameters as MXNet holds them (float), widened for the references. */
struct hyper {
  double lr, momentum, wd, rescale, clip, beta1, beta2, eps;
};

static double clip(double x, double bound) { return x > bound ? bound : x < -bound ? -bound : x; }

/* One step of each optimizer on element values; state updated in place. */
static double sgd_step(const struct hyper *h, double w, double g) {
  double gr = h->rescale * g;
  if (h->clip >= 0) gr = clip(gr, h->clip); /* clipping before weight decay */
  return w - h->lr * (gr + h->wd * w);
}

static double sgd_mom_step(const struct hyper *h, double w, double g, double *mom) {
  double gr = h->rescale * g;
  if (h->clip >= 0) gr = clip(gr, h->clip);
  *mom = h->momentum * *mom - h->lr * (gr + h->wd * w);
  return w + *mom;
}

static double adam_step(const struct hyper *h, double w, double g, double *m, double *v) {
  double gr = h->rescale * g + h->wd * w; /* Adam clips after weight decay */
  if (h->clip >= 0) gr = clip(gr, h->clip);
  *m = h->beta1 * *m + (1 - h->beta1) * gr;
  *v = h->beta2 * *v + (1 - h->beta2) * gr * gr;
  return w - h->lr * *m / (sqrt(*v) + h->eps);
}

static void sgd_ref(REF_ARGS) {
  REF_UNUSED;
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) out[0][j] = sgd_step(user, in[0][j], in[1][j]);
}

static void sgd_mom_ref(REF_ARGS) {
  REF_UNUSED;
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) {
    double mom = in[2][j];
    out[0][j] = sgd_mom_step(user, in[0][j], in[1][j], &mom);
  }
}

static void adam_ref(REF_ARGS) {
  REF_UNUSED;
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) {
    double m = in[2][j], v = in[3][j];
    out[0][j] = adam_step(user, in[0][j], in[1][j], &m, &v);
  }
}

/* Adam's variance state is never negative; gradients span [-3, 3) so that
 * clipping bites. */
static void opt_fill(const void *user, int i, double *x, int64_t n, uint64_t *rng) {
  (void)user;
  for (int64_t j = 0; j < n; j++) {
    double u = oc_uniform(rng);
    x[j] = i == 3 ? u : i == 1 ? 6 * u - 3 : 2 * u - 1;
  }
}

#define F(x) ((double)(float)(x))

START_TEST(test_one_step_against_reference) {
  static const struct hyper plain = {F(0.1), 0, 0, 1, -1, 0, 0, 0},
                            all = {F(0.05), 0, F(0.01), F(0.5), F(1.2), 0, 0, 0},
                            mom = {F(0.1), F(0.9), F(0.001), F(2), F(2.5), 0, 0, 0},
                            adam_d = {F(0.01), 0, 0, 1, -1, F(0.9), F(0.999), F(1e-8)},
                            adam_all = {F(0.02), 0, F(0.1), F(0.5), F(0.8), F(0.8), F(0.99), F(1e-3)};
  struct oc_case c = {.op = "sgd_update", .nparams = 1, .keys = {"lr"}, .vals = {"0.1"}, .nin = 2,
                      .in_shapes = {OC_SHAPE(3, 4), OC_SHAPE(3, 4)}, .forward_ref = sgd_ref,
                      .fill = opt_fill, .user = &plain};
  oc_check(&c, 1, 3); /* no gradient: forward only */
  static const struct hyper rs = {F(0.1), 0, F(0.2), F(0.3), -1, 0, 0, 0};
  c.nparams = 3, c.keys[1] = "wd", c.vals[1] = "0.2", c.keys[2] = "rescale_grad", c.vals[2] = "0.3";
  c.user = &rs;
  oc_check(&c, 9, 2);
  struct oc_case c2 = {.op = "_sparse_sgd_update", .nparams = 5,
                       .keys = {"lr", "wd", "rescale_grad", "clip_gradient", "lazy_update"},
                       .vals = {"0.05", "0.01", "0.5", "1.2", "False"}, .nin = 2,
                       .in_shapes = {OC_SHAPE(7), OC_SHAPE(7)}, .forward_ref = sgd_ref,
                       .fill = opt_fill, .user = &all};
  oc_check(&c2, 2, 2);
  c2.dtype = MXR_FLOAT64;
  oc_check(&c2, 3, 1);
  struct oc_case c3 = {.op = "sgd_mom_update", .nparams = 5,
                       .keys = {"lr", "momentum", "wd", "rescale_grad", "clip_gradient"},
                       .vals = {"0.1", "0.9", "0.001", "2", "2.5"}, .nin = 3,
                       .in_shapes = {OC_SHAPE(2, 5), OC_SHAPE(2, 5), OC_SHAPE(2, 5)},
                       .forward_ref = sgd_mom_ref, .fill = opt_fill, .user = &mom};
  oc_check(&c3, 4, 2);
  c3.dtype = MXR_FLOAT64, c3.op = "_sparse_sgd_mom_update";
  oc_check(&c3, 5, 1);
  static const struct hyper mom_nc = {F(0.1), F(0.9), F(0.001), F(2), -1, 0, 0, 0},
                            mom_def = {F(0.1), 0, 0, 1, -1, 0, 0, 0};
  c3.nparams = 4, c3.user = &mom_nc, c3.dtype = MXR_FLOAT32; /* no clipping */
  oc_check(&c3, 10, 2);
  c3.nparams = 1, c3.user = &mom_def; /* momentum defaults to 0 */
  oc_check(&c3, 11, 1);
  struct oc_case c4 = {.op = "adam_update", .nparams = 1, .keys = {"lr"}, .vals = {"0.01"}, .nin = 4,
                       .in_shapes = {OC_SHAPE(6), OC_SHAPE(6), OC_SHAPE(6), OC_SHAPE(6)},
                       .forward_ref = adam_ref, .fill = opt_fill, .user = &adam_d};
  oc_check(&c4, 6, 2);
  struct oc_case c5 = {.op = "_sparse_adam_update", .nparams = 7,
                       .keys = {"lr", "wd", "rescale_grad", "clip_gradient", "beta1", "beta2", "epsilon"},
                       .vals = {"0.02", "0.1", "0.5", "0.8", "0.8", "0.99", "1e-3"}, .nin = 4,
                       .in_shapes = {OC_SHAPE(3, 3), OC_SHAPE(3, 3), OC_SHAPE(3, 3), OC_SHAPE(3, 3)},
                       .forward_ref = adam_ref, .fill = opt_fill, .user = &adam_all};
  oc_check(&c5, 7, 2);
  c5.dtype = MXR_FLOAT64;
  oc_check(&c5, 8, 1);
}
END_TEST

/* ------------------------------------------------------------ several steps */

static double tget(const struct mxr_tensor *t, int64_t i) {
  return t->dtype == MXR_FLOAT64 ? ((double *)t->data)[i] : ((float *)t->data)[i];
}
static void tset(struct mxr_tensor *t, int64_t i, double v) {
  if (t->dtype == MXR_FLOAT64)
    ((double *)t->data)[i] = v;
  else
    ((float *)t->data)[i] = (float)v;
}

static mxr_op_params *parse(const mxr_op *op, int n, const char *const *k, const char *const *v) {
  mxr_op_params *p = NULL;
  ck_assert_msg(mxr_op_params_parse(op, n, k, v, &p) == 0, "%s", mxr_last_error());
  return p;
}

/* Runs `steps` updates with out=weight (the Python optimizers' call) and
 * fresh gradients, checking the weight and every state against the
 * reference after each step.  nstate: 0 sgd, 1 momentum, 2 Adam. */
static void run_steps(const char *opname, int n, const char *const *k, const char *const *v,
                      const struct hyper *h, int nstate, int dtype, int steps, uint64_t seed) {
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find(opname, &op), 0);
  mxr_op_params *p = parse(op, n, k, v);
  enum { N = 10 };
  const struct mxr_shape s = OC_SHAPE(2, 5);
  struct mxr_tensor t[4];
  double ref[4][N];
  uint64_t rng = seed;
  for (int i = 0; i < 2 + nstate; i++) {
    t[i] = (struct mxr_tensor){calloc(N, mxr_dtype_size(dtype)), s, dtype};
    ck_assert_ptr_nonnull(t[i].data);
    for (int j = 0; j < N; j++) {
      /* weights in [-1, 1); states start at zero as in the optimizers */
      tset(&t[i], j, i == 0 ? 2 * oc_uniform(&rng) - 1 : 0);
      ref[i][j] = tget(&t[i], j);
    }
  }
  double tol = dtype == MXR_FLOAT64 ? 1e-12 : 2e-5;
  for (int step = 0; step < steps; step++) {
    for (int j = 0; j < N; j++) {
      tset(&t[1], j, 6 * oc_uniform(&rng) - 3);
      ref[1][j] = tget(&t[1], j);
      double w = ref[0][j], g = ref[1][j];
      ref[0][j] = nstate == 0 ? sgd_step(h, w, g)
                  : nstate == 1 ? sgd_mom_step(h, w, g, &ref[2][j])
                                : adam_step(h, w, g, &ref[2][j], &ref[3][j]);
    }
    struct mxr_tensor out = t[0];
    int req = step % 2 ? MXR_REQ_WRITE : MXR_REQ_INPLACE;
    struct mxr_op_ctx ctx = {0};
    ck_assert_msg(mxr__op_forward_cpu(op, p, &ctx, t, 2 + nstate, &req, &out, 1, NULL, 0) == 0, "%s",
                  mxr_last_error());
    for (int i = 0; i < 2 + nstate; i++)
      for (int j = 0; j < N; j++) {
        if (i == 1) continue;
        double got = tget(&t[i], j), want = ref[i][j];
        ck_assert_msg(fabs(got - want) <= tol * (1 + fabs(want)),
                      "%s step %d: %s element %d: kernel %.9g, reference %.9g", opname, step,
                      i == 0 ? "weight" : i == 2 ? "state 1" : "state 2", j, got, want);
      }
  }
  for (int i = 0; i < 2 + nstate; i++) free(t[i].data);
  mxr_op_params_free(p);
}

START_TEST(test_several_steps_update_state) {
  static const char *k1[] = {"lr", "wd", "clip_gradient"}, *v1[] = {"0.1", "0.05", "1.5"};
  static const struct hyper h1 = {F(0.1), 0, F(0.05), 1, F(1.5), 0, 0, 0};
  run_steps("sgd_update", 3, k1, v1, &h1, 0, MXR_FLOAT32, 5, 11);
  run_steps("sgd_update", 3, k1, v1, &h1, 0, MXR_FLOAT64, 5, 12);
  static const char *k2[] = {"lr", "momentum", "wd", "rescale_grad", "clip_gradient"},
                    *v2[] = {"0.05", "0.9", "0.01", "0.5", "1"};
  static const struct hyper h2 = {F(0.05), F(0.9), F(0.01), F(0.5), F(1), 0, 0, 0};
  run_steps("sgd_mom_update", 5, k2, v2, &h2, 1, MXR_FLOAT32, 6, 13);
  run_steps("sgd_mom_update", 5, k2, v2, &h2, 1, MXR_FLOAT64, 6, 14);
  static const char *k3[] = {"lr"}, *v3[] = {"0.01"};
  static const struct hyper h3 = {F(0.01), 0, 0, 1, -1, F(0.9), F(0.999), F(1e-8)};
  run_steps("adam_update", 1, k3, v3, &h3, 2, MXR_FLOAT32, 6, 15); /* MXNet's defaults */
  static const char *k4[] = {"lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient"},
                    *v4[] = {"0.003", "0.5", "0.9", "1e-6", "0.2", "0.25", "0.5"};
  static const struct hyper h4 = {F(0.003), 0, F(0.2), F(0.25), F(0.5), F(0.5), F(0.9), F(1e-6)};
  run_steps("adam_update", 7, k4, v4, &h4, 2, MXR_FLOAT32, 6, 16);
  run_steps("adam_update", 7, k4, v4, &h4, 2, MXR_FLOAT64, 6, 17);
}
END_TEST

/* clip_gradient = 0 clips every gradient to zero (MXNet tests >= 0), and
 * the momentum is updated even when the weight output is not requested. */
START_TEST(test_clip_zero_and_null_request) {
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find("sgd_mom_update", &op), 0);
  static const char *k[] = {"lr", "momentum", "wd", "clip_gradient"}, *v[] = {"0.5", "0.5", "0.1", "0"};
  mxr_op_params *p = parse(op, 4, k, v);
  float w[2] = {1, -2}, g[2] = {5, -7}, m[2] = {1, 1}, o[2] = {9, 9};
  struct mxr_tensor in[3] = {{w, OC_SHAPE(2), MXR_FLOAT32}, {g, OC_SHAPE(2), MXR_FLOAT32},
                             {m, OC_SHAPE(2), MXR_FLOAT32}};
  struct mxr_tensor out = {o, OC_SHAPE(2), MXR_FLOAT32};
  int req = MXR_REQ_NULL;
  struct mxr_op_ctx ctx = {0};
  ck_assert_int_eq(mxr__op_forward_cpu(op, p, &ctx, in, 3, &req, &out, 1, NULL, 0), 0);
  /* mom = 0.5 * 1 - 0.5 * 0.1 * w - 0.5 * clip(g, 0) */
  ck_assert_float_eq_tol(m[0], 0.45f, 1e-6f);
  ck_assert_float_eq_tol(m[1], 0.6f, 1e-6f);
  ck_assert(o[0] == 9 && o[1] == 9);
  req = MXR_REQ_ADD;
  ck_assert_int_eq(mxr__op_forward_cpu(op, p, &ctx, in, 3, &req, &out, 1, NULL, 0), 0);
  /* mom = 0.5 * 0.45 - 0.05 = 0.175; out += w + mom */
  ck_assert_float_eq_tol(o[0], 9 + 1 + 0.175f, 1e-5f);
  mxr_op_params_free(p);
  /* sgd_update: the same clipping; nothing at all for a null request */
  ck_assert_int_eq(mxr_op_find("sgd_update", &op), 0);
  static const char *ks[] = {"lr", "wd", "clip_gradient"}, *vs[] = {"0.5", "0.1", "0"};
  p = parse(op, 3, ks, vs);
  req = MXR_REQ_NULL;
  ck_assert_int_eq(mxr__op_forward_cpu(op, p, &ctx, in, 2, &req, &out, 1, NULL, 0), 0);
  ck_assert(o[0] == 9 + 1 + 0.175f);
  req = MXR_REQ_WRITE;
  ck_assert_int_eq(mxr__op_forward_cpu(op, p, &ctx, in, 2, &req, &out, 1, NULL, 0), 0);
  ck_assert_float_eq_tol(o[0], 0.95f, 1e-6f); /* (1 - 0.5 * 0.1) * 1 */
  ck_assert_float_eq_tol(o[1], -1.9f, 1e-6f);
  mxr_op_params_free(p);
}
END_TEST

START_TEST(test_registration_params_and_shapes) {
  const mxr_op *sgd, *mom, *adam, *alias;
  ck_assert_int_eq(mxr_op_find("sgd_update", &sgd), 0);
  ck_assert_int_eq(mxr_op_find("sgd_mom_update", &mom), 0);
  ck_assert_int_eq(mxr_op_find("adam_update", &adam), 0);
  ck_assert_int_eq(mxr_op_find("_sparse_adam_update", &alias), 0);
  ck_assert_ptr_eq(alias, adam);
  ck_assert(!sgd->backward && !mom->backward && !adam->backward);
  ck_assert_int_eq(sgd->num_mutate_inputs, 0);
  ck_assert(mom->num_mutate_inputs == 1 && mom->mutate_inputs[0] == 2);
  ck_assert(adam->num_mutate_inputs == 2 && adam->mutate_inputs[0] == 2 && adam->mutate_inputs[1] == 3);
  ck_assert_str_eq(mxr_op_input_name(adam, NULL, 3), "var");
  ck_assert_str_eq(mxr_op_input_name(mom, NULL, 2), "mom");
  mxr_op_params *p = NULL;
  ck_assert_int_eq(mxr_op_params_parse(sgd, 0, NULL, NULL, &p), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "sgd_update: required parameter 'lr' is missing");
  const char *k[] = {"lr", "beta3"}, *v[] = {"0.1", "0.5"}, *vbad[] = {"fast"};
  ck_assert_int_eq(mxr_op_params_parse(adam, 2, k, v, &p), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "adam_update: unknown parameter 'beta3' (value '0.5')");
  ck_assert_int_eq(mxr_op_params_parse(mom, 1, k, vbad, &p), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "sgd_mom_update: parameter lr='fast' is not valid: expected a number");
  const char *km[] = {"lr", "momentum"}, *vm[] = {"0.1", "0.9"};
  ck_assert_int_eq(mxr_op_params_parse(sgd, 2, km, vm, &p), MXR_EINVAL); /* sgd has no momentum */
  ck_assert_int_eq(mxr_op_params_parse(mom, 2, km, vm, &p), 0);
  /* every input and the output share one shape */
  struct mxr_shape in[3] = {OC_SHAPE(3, 4), {-1, {0}}, OC_SHAPE(3, 4)}, out = {-1, {0}};
  ck_assert_int_eq(mxr__op_infer_shape(mom, p, in, 3, &out, 1, NULL, 0), 0);
  ck_assert(mxr_shape_equal(&in[1], &in[0]) && mxr_shape_equal(&out, &in[0]));
  in[2] = OC_SHAPE(3, 5);
  ck_assert_int_eq(mxr__op_infer_shape(mom, p, in, 3, &out, 1, NULL, 0), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "sgd_mom_update: input 2: expected shape (3,4), got (3,5)");
  int types[3] = {MXR_FLOAT32, -1, MXR_FLOAT64}, otype = -1;
  ck_assert_int_eq(mxr__op_infer_type(mom, p, types, 3, &otype, 1, NULL, 0), MXR_EINVAL);
  mxr_op_params_free(p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("optimizer ops");
  TCase *tc = tcase_create("optimizer");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_one_step_against_reference);
  tcase_add_test(tc, test_several_steps_update_state);
  tcase_add_test(tc, test_clip_zero_and_null_request);
  tcase_add_test(tc, test_registration_params_and_shapes);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
