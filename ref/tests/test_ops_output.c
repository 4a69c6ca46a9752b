/* SoftmaxOutput and the regression outputs against float64 plain-loop
 * references; the in-place hints of the nn families' ops. */
#include "nn_check.h"

/* ------------------------------------------------------- SoftmaxOutput */

struct smo_user {
  int layout; /* 0: rows by first axis, 1: preserve_shape, 2: multi_output */
  double gs, ignore, alpha;
  bool use_ignore, out_grad, prob_label;
  int norm; /* 0 null, 1 batch, 2 valid */
};

/* (outer, k, inner) as MXNet lays the data out for each mode. */
static void smo_dims(const struct smo_user *u, const struct mxr_shape *d, int64_t *outer, int64_t *k,
                     int64_t *inner) {
  int64_t size = oc_size(d);
  *inner = 1;
  if (u->layout == 0) *outer = d->dim[0], *k = size / *outer;
  if (u->layout == 1) *k = d->dim[d->ndim - 1], *outer = size / *k;
  if (u->layout == 2) *outer = d->dim[0], *k = d->dim[1], *inner = size / *outer / *k;
}

static void smo_softmax(const struct smo_user *u, const struct mxr_shape *d, const double *x, double *y) {
  int64_t outer, k, inner;
  smo_dims(u, d, &outer, &k, &inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double sum = 0;
      for (int64_t c = 0; c < k; c++) sum += exp(x[(o * k + c) * inner + i]);
      for (int64_t c = 0; c < k; c++) y[(o * k + c) * inner + i] = exp(x[(o * k + c) * inner + i]) / sum;
    }
}

static void smo_ref(REF_ARGS) {
  REF_UNUSED;
  smo_softmax(user, &in_shapes[0], in[0], out[0]);
}

/* MXNet's gradient: softmax minus the (smoothed) one-hot label, zero for
 * ignored instances, scaled by grad_scale and the normalization. */
static void smo_grad_ref(BREF_ARGS) {
  (void)nin, (void)ograd, (void)out_shapes, (void)nout;
  const struct smo_user *u = user;
  const struct mxr_shape *d = &in_shapes[0];
  const int64_t n = oc_size(d);
  double *y = calloc((size_t)n, sizeof *y);
  smo_softmax(u, d, in[0], y);
  if (u->prob_label) {
    for (int64_t j = 0; j < n; j++) grad[0][j] = (y[j] - in[1][j]) * u->gs * (u->out_grad ? y[j] : 1);
    free(y);
    return;
  }
  int64_t outer, k, inner, nl = oc_size(&in_shapes[1]);
  smo_dims(u, d, &outer, &k, &inner);
  double valid = 1;
  if (u->norm == 1) valid = u->layout == 2 ? (double)outer : (double)nl;
  if (u->norm == 2) {
    valid = 0;
    for (int64_t j = 0; j < nl; j++) valid += (int)in[1][j] != (int)u->ignore;
    if (valid == 0) valid = 1;
  }
  double scale = u->gs / valid / (u->layout == 2 && u->norm != 2 ? (double)inner : 1.0);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int cls = (int)in[1][o * inner + i];
      for (int64_t c = 0; c < k; c++) {
        int64_t j = (o * k + c) * inner + i;
        double target = c == cls ? 1.0 : 0.0;
        if (u->alpha != 0 && u->layout != 2) target = c == cls ? 1 - u->alpha : u->alpha / (double)(k - 1);
        double g = (u->use_ignore && cls == (int)u->ignore) ? 0 : (y[j] - target) * scale;
        grad[0][j] = u->out_grad ? g * y[j] : g;
      }
    }
  free(y);
}

/* Labels: whole classes in [-1, k), so some equal the ignore label -1. */
static void smo_fill(const void *user, int i, double *x, int64_t n, uint64_t *rng) {
  const struct smo_user *u = user;
  for (int64_t j = 0; j < n; j++)
    x[j] = i == 0 || u->prob_label ? 4 * oc_uniform(rng) - 2 : floor(oc_uniform(rng) * 5) - 1;
}

static void smo_case(const char *op, const char *spec, struct mxr_shape data, struct mxr_shape label,
                     const struct smo_user *u, int dtype, uint64_t seed) {
  struct oc_case c = {.op = op, .nin = 2, .in_shapes = {data, label}, .dtype = dtype,
                      .no_grad_inputs = 2, .forward_ref = smo_ref, .backward_ref = smo_grad_ref,
                      .fill = smo_fill, .user = u};
  char buf[256];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
    char *eq = strchr(kv, '=');
    *eq = '\0';
    c.keys[c.nparams] = strdup(kv);
    c.vals[c.nparams++] = strdup(eq + 1);
  }
  oc_check(&c, seed, 2);
  for (int i = 0; i < c.nparams; i++) free((void *)c.keys[i]), free((void *)c.vals[i]);
}

START_TEST(test_softmax_output_against_reference) {
  /* 5 classes so the labels in [-1, 4] are all valid or ignored */
  static const struct smo_user plain = {0, 1, -1, 0, false, false, false, 0},
                               ign = {0, 2.5, -1, 0, true, false, false, 2},
                               batch = {0, 1, 3, 0, true, false, false, 1},
                               smooth = {0, 1, -1, 0.2, true, false, false, 0},
                               outg = {0, 0.5, -1, 0, false, true, false, 0},
                               pres = {1, 1, -1, 0, true, false, false, 2},
                               multi = {2, 1, -1, 0, false, false, false, 0},
                               multi_v = {2, 3, -1, 0, true, false, false, 2},
                               multi_b = {2, 1, -1, 0.3, false, false, false, 1},
                               prob = {0, 2, -1, 0, true, true, true, 1};
  smo_case("SoftmaxOutput", "", OC_SHAPE(6, 5), UNK, &plain, MXR_FLOAT32, 10);
  smo_case("Softmax", "grad_scale=2.5;use_ignore=True;normalization=valid", OC_SHAPE(6, 5), UNK, &ign,
           MXR_FLOAT32, 11);
  smo_case("SoftmaxOutput", "use_ignore=True;ignore_label=3;normalization=batch", OC_SHAPE(6, 5),
           OC_SHAPE(6), &batch, MXR_FLOAT64, 12);
  smo_case("SoftmaxOutput", "smooth_alpha=0.2;use_ignore=1", OC_SHAPE(6, 5), UNK, &smooth, MXR_FLOAT32, 13);
  smo_case("SoftmaxOutput", "out_grad=True;grad_scale=0.5", OC_SHAPE(4, 5), UNK, &outg, MXR_FLOAT32, 14);
  smo_case("SoftmaxOutput", "preserve_shape=True;use_ignore=True;normalization=valid",
           OC_SHAPE(2, 3, 5), UNK, &pres, MXR_FLOAT32, 15);
  smo_case("SoftmaxOutput", "multi_output=True", OC_SHAPE(2, 5, 3), UNK, &multi, MXR_FLOAT32, 16);
  smo_case("SoftmaxOutput", "multi_output=True;use_ignore=True;normalization=valid;grad_scale=3",
           OC_SHAPE(2, 5, 2, 2), OC_SHAPE(2, 2, 2), &multi_v, MXR_FLOAT64, 17);
  /* smooth_alpha does not apply with multi_output, as in MXNet */
  smo_case("SoftmaxOutput", "multi_output=True;normalization=batch;smooth_alpha=0.3",
           OC_SHAPE(3, 5, 2), OC_SHAPE(3, 1, 2), &multi_b, MXR_FLOAT32, 18);
  /* a label with the data's shape holds probabilities: no ignore, no normalization */
  smo_case("SoftmaxOutput", "grad_scale=2;use_ignore=True;out_grad=True;normalization=batch",
           OC_SHAPE(3, 5), OC_SHAPE(3, 5), &prob, MXR_FLOAT32, 19);
}
END_TEST

START_TEST(test_softmax_output_shapes_and_params) {
  struct mxr_shape in[2] = {OC_SHAPE(2, 3, 4), UNK}, out[1], aux[1];
  ck_assert_int_eq(infer("SoftmaxOutput", "", in, out, aux), 0);
  expect_shape(&in[1], OC_SHAPE(2, 3));
  expect_shape(&out[0], OC_SHAPE(2, 3, 4));
  struct mxr_shape mo[2] = {OC_SHAPE(2, 3, 4, 5), UNK};
  ck_assert_int_eq(infer("SoftmaxOutput", "multi_output=True", mo, out, aux), 0);
  expect_shape(&mo[1], OC_SHAPE(2, 20));
  struct mxr_shape mo2[2] = {OC_SHAPE(2, 3, 4, 5), OC_SHAPE(2, 4, 5)};
  ck_assert_int_eq(infer("SoftmaxOutput", "multi_output=True", mo2, out, aux), 0);
  struct mxr_shape bad[2] = {OC_SHAPE(2, 3), OC_SHAPE(3)};
  expect_shape_error("SoftmaxOutput", "", bad, "label: expected shape (2,), got (3,)");
  struct mxr_shape badm[2] = {OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3)};
  expect_shape_error("SoftmaxOutput", "multi_output=True", badm,
                     "label: expected shape (2,4) or (2,4), got (2,3)");
  struct mxr_shape one[2] = {OC_SHAPE(4), UNK};
  expect_shape_error("SoftmaxOutput", "multi_output=True", one, "at least 2 dimension(s) with multi_output");
  expect_parse_error("SoftmaxOutput", "normalization=all", "normalization='all' is not valid: expected one of null, batch, valid");
  expect_parse_error("Softmax", "smooth_alpha=1.5", "SoftmaxOutput: smooth_alpha must be in [0, 1], got 1.5");
  expect_parse_error("SoftmaxOutput", "ignore_label=x", "ignore_label='x' is not valid");
  ck_assert_ptr_eq(find("Softmax"), find("SoftmaxOutput"));
  /* the backward op ignores the head gradient and fills no label gradient */
  ck_assert(find("SoftmaxOutput")->ignores_out_grad);
}
END_TEST

/* --------------------------------------------------- regression outputs */

struct reg_user {
  int kind; /* 0 linear, 1 MAE, 2 logistic */
  double gs;
};

static double reg_f(int kind, double x) { return kind == 2 ? 1 / (1 + exp(-x)) : x; }

static void reg_ref(REF_ARGS) {
  REF_UNUSED;
  const struct reg_user *u = user;
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) out[0][j] = reg_f(u->kind, in[0][j]);
}

static void reg_grad_ref(BREF_ARGS) {
  (void)nin, (void)ograd, (void)out_shapes, (void)nout;
  const struct reg_user *u = user;
  double m = (double)(oc_size(&in_shapes[1]) / in_shapes[1].dim[0]);
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) {
    double d = reg_f(u->kind, in[0][j]) - in[1][j];
    grad[0][j] = (u->kind == 1 ? (d > 0 ? 1 : -1) : d) * u->gs / m;
  }
}

START_TEST(test_regression_outputs_against_reference) {
  static const struct reg_user lin = {0, 1}, lin2 = {0, 2.5}, mae = {1, 1}, logi = {2, 0.5};
  struct oc_case c = {.op = "LinearRegressionOutput", .nin = 2, .in_shapes = {OC_SHAPE(4, 3), UNK},
                      .no_grad_inputs = 2, .forward_ref = reg_ref, .backward_ref = reg_grad_ref,
                      .user = &lin};
  oc_check(&c, 20, 2);
  c.in_shapes[0] = OC_SHAPE(5, 1); /* takes a (5,) label: one output per example */
  c.nparams = 1, c.keys[0] = "grad_scale", c.vals[0] = "2.5", c.user = &lin2;
  oc_check(&c, 21, 2);
  c.in_shapes[0] = OC_SHAPE(2, 3, 2), c.in_shapes[1] = OC_SHAPE(2, 6);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, 22, 1);
  c.op = "MAERegressionOutput", c.nparams = 0, c.user = &mae, c.dtype = MXR_FLOAT32;
  oc_check(&c, 23, 2);
  c.op = "_sparse_LogisticRegressionOutput", c.nparams = 1, c.vals[0] = "0.5", c.user = &logi;
  c.lo = -4, c.hi = 4;
  oc_check(&c, 24, 2);
}
END_TEST

START_TEST(test_regression_shapes_and_params) {
  struct mxr_shape in[2] = {OC_SHAPE(5, 1), UNK}, out[1], aux[1];
  ck_assert_int_eq(infer("LinearRegressionOutput", "", in, out, aux), 0);
  expect_shape(&in[1], OC_SHAPE(5));
  struct mxr_shape same[2] = {OC_SHAPE(5, 2), UNK};
  ck_assert_int_eq(infer("MAERegressionOutput", "", same, out, aux), 0);
  expect_shape(&same[1], OC_SHAPE(5, 2));
  struct mxr_shape bad[2] = {OC_SHAPE(5, 2), OC_SHAPE(2, 5)};
  expect_shape_error("LogisticRegressionOutput", "", bad, "label: shape (2,5) is inconsistent with data (5,2)");
  expect_parse_error("LinearRegressionOutput", "grad_scale=abc", "grad_scale='abc' is not valid: expected a number");
  expect_parse_error("_backward_linear_reg_out", "scale=1", "unknown parameter 'scale'");
  ck_assert_str_eq(mxr_op_name(find("_sparse_MAERegressionOutput")), "MAERegressionOutput");
}
END_TEST

/* ------------------------------------------------------ in-place hints */

/* Each in-place pair of the op gives the same results when the output
 * shares the input's memory as when it does not. */
static void check_inplace(const char *opname, const char *spec, const struct mxr_shape *shapes, int nin,
                          bool train) {
  const mxr_op *op = find(opname);
  mxr_op_params *p = parse(opname, spec, 0);
  int nout = mxr_op_num_outputs(op, p);
  struct mxr_shape ins[8], outs[8], aux[2];
  for (int i = 0; i < nin; i++) ins[i] = shapes[i];
  for (int k = 0; k < nout; k++) outs[k] = UNK;
  ck_assert_int_eq(mxr__op_infer_shape(op, p, ins, nin, outs, nout, aux, 0), 0);
  ck_assert_int_gt(op->num_inplace, 0);
  for (int h = 0; h < op->num_inplace; h++) {
    struct mxr_tensor in[2][8], out[2][8];
    int req[8];
    for (int pass = 0; pass < 2; pass++) {
      uint64_t rng = 5;
      for (int i = 0; i < nin; i++) in[pass][i] = tensor(MXR_FLOAT32, ins[i]), tfill(&in[pass][i], &rng, -2, 3);
      for (int k = 0; k < nout; k++) out[pass][k] = tensor(MXR_FLOAT32, outs[k]), req[k] = MXR_REQ_WRITE;
      if (pass) { /* the output takes over the input's buffer */
        free(out[1][op->inplace[h].out].data);
        out[1][op->inplace[h].out].data = in[1][op->inplace[h].in].data;
        req[op->inplace[h].out] = MXR_REQ_INPLACE;
      }
      struct mxr_op_ctx ctx = {.is_train = train, .seed = 42};
      ck_assert_msg(mxr__op_forward_cpu(op, p, &ctx, in[pass], nin, req, out[pass], nout, NULL, 0) == 0,
                    "%s", mxr_last_error());
    }
    for (int k = 0; k < nout; k++) {
      for (int64_t j = 0; j < oc_size(&outs[k]); j++)
        ck_assert_msg(tget(&out[0][k], j) == tget(&out[1][k], j), "%s in place (%d, %d): output %d element %lld",
                      opname, op->inplace[h].in, op->inplace[h].out, k, (long long)j);
      if (k != op->inplace[h].out) free(out[1][k].data);
      free(out[0][k].data);
    }
    for (int i = 0; i < nin; i++) free(in[0][i].data), free(in[1][i].data);
  }
  mxr_op_params_free(p);
}

START_TEST(test_inplace_hints_hold) {
  const struct mxr_shape d = OC_SHAPE(4, 5), l = OC_SHAPE(4), x = OC_SHAPE(4, 3), w = OC_SHAPE(5, 3);
  check_inplace("_backward_FullyConnected", "num_hidden=5", (struct mxr_shape[]){d, x, w, OC_SHAPE(5)}, 4, true);
  check_inplace("SoftmaxOutput", "", (struct mxr_shape[]){d, l}, 2, true);
  check_inplace("_backward_SoftmaxOutput", "normalization=valid", (struct mxr_shape[]){d, d, l, d}, 4, true);
  check_inplace("LogisticRegressionOutput", "", (struct mxr_shape[]){d, d}, 2, true);
  check_inplace("_backward_mae_reg_out", "", (struct mxr_shape[]){d, d, d, d}, 4, true);
  check_inplace("Dropout", "p=0.4", (struct mxr_shape[]){d}, 1, true);
  check_inplace("_backward_Dropout", "", (struct mxr_shape[]){d, d, d}, 3, true);
}
END_TEST

/* Softmax subtracts the row maximum: huge logits neither overflow nor NaN. */
START_TEST(test_softmax_output_large_logits) {
  struct mxr_tensor x = tensor(MXR_FLOAT32, OC_SHAPE(2, 3)), lab = tensor(MXR_FLOAT32, OC_SHAPE(2)),
                    y = tensor(MXR_FLOAT32, OC_SHAPE(2, 3));
  const double v[6] = {1000, 1001, 999, -1000, -1000, -1001};
  for (int j = 0; j < 6; j++) tset(&x, j, v[j]);
  int req = MXR_REQ_WRITE;
  run("SoftmaxOutput", "", false, 0, (struct mxr_tensor[]){x, lab}, 2, &req, &y, 1, NULL, 0);
  const double e = exp(1), row0 = 1 + e + 1 / e, row1 = 2 + 1 / e;
  const double want[6] = {1 / row0, e / row0, 1 / e / row0, 1 / row1, 1 / row1, 1 / e / row1};
  for (int j = 0; j < 6; j++)
    ck_assert_msg(fabs(tget(&y, j) - want[j]) < 1e-6, "element %d: %g, want %g", j, tget(&y, j), want[j]);
  free(x.data), free(lab.data), free(y.data);
}
END_TEST

int main(void) {
  Suite *s = suite_create("output ops");
  TCase *tc = tcase_create("output");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_softmax_output_against_reference);
  tcase_add_test(tc, test_softmax_output_shapes_and_params);
  tcase_add_test(tc, test_regression_outputs_against_reference);
  tcase_add_test(tc, test_regression_shapes_and_params);
  tcase_add_test(tc, test_inplace_hints_hold);
  tcase_add_test(tc, test_softmax_output_large_logits);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
