/* The nn ops (FullyConnected, SoftmaxOutput, regression outputs, Dropout,
 * BatchNorm) against float64 plain-loop references. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "op_check.h"

#define UNK ((struct mxr_shape){-1, {0}})
#define REF_ARGS                                                                          \
  const void *user, const double *const *in, const struct mxr_shape *in_shapes, int nin, \
      double *const *out, const struct mxr_shape *out_shapes, int nout, double *const *aux, int naux
#define REF_UNUSED \
  ((void)user, (void)in, (void)in_shapes, (void)nin, (void)out, (void)out_shapes, (void)nout, (void)aux, (void)naux)
#define BREF_ARGS                                                                          \
  const void *user, const double *const *in, const struct mxr_shape *in_shapes, int nin, \
      const double *const *ograd, const struct mxr_shape *out_shapes, int nout, double *const *grad

/* ------------------------------------------------------------- helpers */

static const mxr_op *find(const char *name) {
  const mxr_op *op;
  ck_assert_msg(mxr_op_find(name, &op) == 0, "%s", mxr_last_error());
  return op;
}

/* Parse "k=v;k=v" with the op's parser; expect status `want`. */
static mxr_op_params *parse(const char *opname, const char *spec, int want) {
  char buf[512];
  const char *k[16], *v[16];
  int n = 0;
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
    char *eq = strchr(kv, '=');
    ck_assert_ptr_nonnull(eq);
    *eq = '\0';
    k[n] = kv;
    v[n++] = eq + 1;
  }
  mxr_op_params *p = NULL;
  int st = mxr_op_params_parse(find(opname), n, k, v, &p);
  ck_assert_msg(st == want, "%s(%s): status %d, want %d: %s", opname, spec, st, want, mxr_last_error());
  return p;
}

static void expect_parse_error(const char *opname, const char *spec, const char *msg) {
  ck_assert_ptr_null(parse(opname, spec, MXR_EINVAL));
  ck_assert_msg(strstr(mxr_last_error(), msg), "%s: got '%s', want '%s'", opname, mxr_last_error(), msg);
}

/* Shape inference; returns the status, leaves the message. */
static int infer(const char *opname, const char *spec, struct mxr_shape *in, struct mxr_shape *out,
                 struct mxr_shape *aux) {
  const mxr_op *op = find(opname);
  mxr_op_params *p = parse(opname, spec, 0);
  int nin = mxr_op_num_inputs(op, p), nout = mxr_op_num_outputs(op, p), naux = mxr_op_num_aux(op, p);
  for (int k = 0; k < nout; k++) out[k] = UNK;
  for (int a = 0; a < naux; a++) aux[a] = UNK;
  int st = mxr__op_infer_shape(op, p, in, nin, out, nout, aux, naux);
  mxr_op_params_free(p);
  return st;
}

static void expect_shape_error(const char *opname, const char *spec, struct mxr_shape *in, const char *msg) {
  struct mxr_shape out[4], aux[4];
  ck_assert_int_eq(infer(opname, spec, in, out, aux), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), msg), "%s: got '%s', want '%s'", opname, mxr_last_error(), msg);
  ck_assert_msg(strncmp(mxr_last_error(), mxr_op_name(find(opname)), strlen(mxr_op_name(find(opname)))) == 0,
                "message does not name the op: %s", mxr_last_error());
}

static void expect_shape(const struct mxr_shape *got, const struct mxr_shape want) {
  char a[64], b[64];
  ck_assert_msg(mxr_shape_equal(got, &want), "shape %s, want %s", mxr_shape_str(got, a, sizeof a),
                mxr_shape_str(&want, b, sizeof b));
}

/* Kernel tensors for hand-driven runs. */
static struct mxr_tensor tensor(int dtype, struct mxr_shape s) {
  struct mxr_tensor t = {calloc((size_t)(oc_size(&s) ? oc_size(&s) : 1), mxr_dtype_size(dtype)), s, dtype};
  ck_assert_ptr_nonnull(t.data);
  return t;
}
static double tget(const struct mxr_tensor *t, int64_t i) {
  return t->dtype == MXR_FLOAT64 ? ((double *)t->data)[i] : ((float *)t->data)[i];
}
static void tset(struct mxr_tensor *t, int64_t i, double v) {
  if (t->dtype == MXR_FLOAT64)
    ((double *)t->data)[i] = v;
  else
    ((float *)t->data)[i] = (float)v;
}
static void tfill(struct mxr_tensor *t, uint64_t *rng, double lo, double hi) {
  for (int64_t i = 0; i < oc_size(&t->shape); i++) tset(t, i, lo + (hi - lo) * oc_uniform(rng));
}

static void run(const char *opname, const char *spec, bool train, uint64_t seed, struct mxr_tensor *in,
                int nin, const int *req, struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
  const mxr_op *op = find(opname);
  mxr_op_params *p = parse(opname, spec, 0);
  struct mxr_op_ctx ctx = {.is_train = train, .seed = seed};
  int st = mxr__op_forward_cpu(op, p, &ctx, in, nin, req, out, nout, aux, naux);
  ck_assert_msg(st == 0, "%s: %s", opname, mxr_last_error());
  mxr_op_params_free(p);
}

/* ------------------------------------------------------ FullyConnected */

struct fc_user {
  int nh;
  bool no_bias, flatten;
};

static void fc_ref(REF_ARGS) {
  REF_UNUSED;
  const struct fc_user *u = user;
  const struct mxr_shape *d = &in_shapes[0];
  int64_t size = oc_size(d), m = u->flatten ? d->dim[0] : size / d->dim[d->ndim - 1], k = size / m;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < u->nh; j++) {
      double s = u->no_bias ? 0 : in[2][j];
      for (int64_t t = 0; t < k; t++) s += in[0][i * k + t] * in[1][j * k + t];
      out[0][i * u->nh + j] = s;
    }
}

START_TEST(test_fc_against_reference) {
  static const struct fc_user u5 = {5, false, true}, u3nb = {3, true, true}, u4nf = {4, false, false};
  struct oc_case c = {.op = "FullyConnected", .nparams = 1, .keys = {"num_hidden"}, .vals = {"5"},
                      .nin = 3, .in_shapes = {OC_SHAPE(3, 4), UNK, UNK}, .forward_ref = fc_ref,
                      .user = &u5, .atol = 1e-5};
  oc_check(&c, 1, 3);
  c.in_shapes[0] = OC_SHAPE(2, 3, 2); /* flattened to (2, 6) */
  c.in_shapes[2] = OC_SHAPE(5, 1);    /* MXNet also takes a (num_hidden, 1) bias */
  oc_check(&c, 2, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, 3, 1);
  struct oc_case nb = {.op = "_sparse_FullyConnected", .nparams = 2, .keys = {"num_hidden", "no_bias"},
                       .vals = {"3", "True"}, .nin = 2, .in_shapes = {OC_SHAPE(4, 2), UNK},
                       .forward_ref = fc_ref, .user = &u3nb, .atol = 1e-5};
  oc_check(&nb, 4, 2);
  struct oc_case nf = {.op = "_npx_fully_connected", .nparams = 2, .keys = {"num_hidden", "flatten"},
                       .vals = {"4", "False"}, .nin = 3, .in_shapes = {OC_SHAPE(2, 3, 5), UNK, UNK},
                       .forward_ref = fc_ref, .user = &u4nf, .atol = 1e-5};
  oc_check(&nf, 5, 2);
}
END_TEST

START_TEST(test_fc_shapes_and_params) {
  struct mxr_shape in[3] = {OC_SHAPE(2, 3, 4), UNK, UNK}, out[1], aux[1];
  ck_assert_int_eq(infer("FullyConnected", "num_hidden=7", in, out, aux), 0);
  expect_shape(&in[1], OC_SHAPE(7, 12));
  expect_shape(&in[2], OC_SHAPE(7));
  expect_shape(&out[0], OC_SHAPE(2, 7));
  struct mxr_shape nf[3] = {OC_SHAPE(2, 3, 4), UNK, UNK};
  ck_assert_int_eq(infer("FullyConnected", "num_hidden=7;flatten=False", nf, out, aux), 0);
  expect_shape(&nf[1], OC_SHAPE(7, 4));
  expect_shape(&out[0], OC_SHAPE(2, 3, 7));
  struct mxr_shape bw[3] = {OC_SHAPE(2, 3), OC_SHAPE(7, 4), UNK};
  expect_shape_error("FullyConnected", "num_hidden=7", bw, "weight: expected shape (7,3), got (7,4)");
  struct mxr_shape bb[3] = {OC_SHAPE(2, 3), UNK, OC_SHAPE(6)};
  expect_shape_error("FullyConnected", "num_hidden=7", bb, "bias: expected shape (7,) or (7,1), got (6,)");
  struct mxr_shape sc[3] = {OC_SCALAR, UNK, UNK};
  expect_shape_error("FullyConnected", "num_hidden=7", sc, "data must have at least 1 dimension");
  /* counts and names follow no_bias */
  mxr_op_params *p = parse("FullyConnected", "num_hidden=2;no_bias=true", 0);
  ck_assert_int_eq(mxr_op_num_inputs(find("FullyConnected"), p), 2);
  ck_assert_str_eq(mxr_op_input_name(find("FullyConnected"), p, 1), "weight");
  mxr_op_params_free(p);
  ck_assert_str_eq(mxr_op_name(find("_npx_fully_connected")), "FullyConnected");
  expect_parse_error("FullyConnected", "", "required parameter 'num_hidden' is missing");
  expect_parse_error("FullyConnected", "num_hidden=0", "FullyConnected: num_hidden must be > 0, got 0");
  expect_parse_error("FullyConnected", "num_hidden=3;flatten=maybe", "flatten='maybe' is not valid");
  expect_parse_error("_backward_FullyConnected", "num_hidden=-1", "num_hidden must be > 0");
}
END_TEST

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

/* -------------------------------------------------------------- Dropout */

static void identity_ref(REF_ARGS) {
  REF_UNUSED;
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) out[0][j] = in[0][j];
}

START_TEST(test_dropout_passes_through_outside_training) {
  struct oc_case c = {.op = "Dropout", .nparams = 1, .keys = {"p"}, .vals = {"0.3"}, .nin = 1,
                      .in_shapes = {OC_SHAPE(3, 4)}, .forward_ref = identity_ref};
  oc_check(&c, 30, 2);
  c.is_train = true, c.vals[0] = "0"; /* p = 0 passes through in training too */
  c.op = "_npx_dropout";
  oc_check(&c, 31, 1);
  c.dtype = MXR_FLOAT64, c.is_train = false, c.vals[0] = "0.9";
  oc_check(&c, 32, 1);
}
END_TEST

/* Forward in training mode; checks out = data * mask, mask in {0, 1/(1-p)}
 * and returns the kept fraction.  With `axes`, the mask has extent 1 on
 * those axes and is broadcast. */
static double dropout_train(const char *spec, float p, int dtype, struct mxr_shape ds, struct mxr_shape ms,
                            bool train, uint64_t seed, struct mxr_tensor *mask_out) {
  uint64_t rng = 7;
  struct mxr_tensor x = tensor(dtype, ds), out[2] = {tensor(dtype, ds), tensor(dtype, ms)};
  tfill(&x, &rng, 0.5, 1.5);
  int req[2] = {MXR_REQ_WRITE, MXR_REQ_WRITE};
  run("Dropout", spec, train, seed, &x, 1, req, out, 2, NULL, 0);
  const double scale = dtype == MXR_FLOAT64 ? (double)(1.0f / (1.0f - p)) : 1.0f / (1.0f - p);
  int64_t kept = 0, n = oc_size(&ds);
  for (int64_t j = 0; j < oc_size(&ms); j++) {
    double m = tget(&out[1], j);
    ck_assert_msg(m == 0 || m == scale, "mask %lld = %g, want 0 or %g", (long long)j, m, scale);
    kept += m != 0;
  }
  int64_t idx[MXR_MAX_NDIM] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t j = 0; /* the mask element this data element uses */
    for (int d = 0; d < ds.ndim; d++) j = j * ms.dim[d] + (ms.dim[d] == 1 ? 0 : idx[d]);
    double want = tget(&x, i) * tget(&out[1], j);
    if (dtype == MXR_FLOAT32) want = (float)want;
    ck_assert_msg(tget(&out[0], i) == want, "out %lld = %g, want %g", (long long)i, tget(&out[0], i), want);
    for (int d = ds.ndim - 1; d >= 0 && ++idx[d] == ds.dim[d]; d--) idx[d] = 0;
  }
  free(x.data);
  free(out[0].data);
  *mask_out = out[1];
  return (double)kept / (double)oc_size(&ms);
}

START_TEST(test_dropout_training_mask) {
  struct mxr_tensor m1, m2, m3;
  double kept = dropout_train("p=0.3", 0.3f, MXR_FLOAT32, OC_SHAPE(50, 40), OC_SHAPE(50, 40), true, 99, &m1);
  ck_assert_msg(fabs(kept - 0.7) < 0.035, "kept fraction %g, want about 0.7", kept);
  /* the same seed draws the same mask; another seed another one */
  dropout_train("p=0.3", 0.3f, MXR_FLOAT32, OC_SHAPE(50, 40), OC_SHAPE(50, 40), true, 99, &m2);
  ck_assert_int_eq(memcmp(m1.data, m2.data, 2000 * sizeof(float)), 0);
  dropout_train("p=0.3", 0.3f, MXR_FLOAT32, OC_SHAPE(50, 40), OC_SHAPE(50, 40), true, 100, &m3);
  ck_assert_int_ne(memcmp(m1.data, m3.data, 2000 * sizeof(float)), 0);
  free(m1.data), free(m2.data), free(m3.data);
  /* mode=always drops outside training too; float64; other rates */
  kept = dropout_train("p=0.8;mode=always", 0.8f, MXR_FLOAT64, OC_SHAPE(4000), OC_SHAPE(4000), false, 5, &m1);
  ck_assert_msg(fabs(kept - 0.2) < 0.025, "kept fraction %g, want about 0.2", kept);
  free(m1.data);
  /* variational dropout: one mask value per (i, k), shared along axis 1 */
  kept = dropout_train("p=0.5;axes=(1,)", 0.5f, MXR_FLOAT32, OC_SHAPE(30, 5, 20), OC_SHAPE(30, 1, 20), true, 6, &m1);
  ck_assert_msg(fabs(kept - 0.5) < 0.06, "kept fraction %g, want about 0.5", kept);
  free(m1.data);
  kept = dropout_train("p=0.5;axes=(0,2)", 0.5f, MXR_FLOAT64, OC_SHAPE(3, 400, 2), OC_SHAPE(1, 400, 1), true, 8, &m1);
  ck_assert_msg(fabs(kept - 0.5) < 0.08, "kept fraction %g, want about 0.5", kept);
  free(m1.data);
  /* p = 1 drops everything */
  kept = dropout_train("p=1", 0.0f, MXR_FLOAT32, OC_SHAPE(10), OC_SHAPE(10), true, 9, &m1);
  ck_assert(kept == 0);
  free(m1.data);
}
END_TEST

START_TEST(test_dropout_backward_uses_mask) {
  /* data (3, 4, 2) with the mask shared along axis 1: d data = ograd * mask */
  uint64_t rng = 3;
  struct mxr_shape ds = OC_SHAPE(3, 4, 2), ms = OC_SHAPE(3, 1, 2);
  struct mxr_tensor in[3] = {tensor(MXR_FLOAT32, ds), tensor(MXR_FLOAT32, ds), tensor(MXR_FLOAT32, ms)};
  struct mxr_tensor g = tensor(MXR_FLOAT32, ds);
  tfill(&in[0], &rng, -1, 1);
  for (int j = 0; j < 6; j++) tset(&in[2], j, j % 3 ? 2.0 : 0.0);
  for (int pass = 0; pass < 2; pass++) {
    int req = pass ? MXR_REQ_ADD : MXR_REQ_WRITE;
    run("_backward_Dropout", "p=0.5;axes=(1,)", true, 1, in, 3, &req, &g, 1, NULL, 0);
    for (int64_t i = 0; i < 24; i++) {
      int64_t a = i / 8, c = i % 2;
      double want = tget(&in[0], i) * tget(&in[2], a * 2 + c) * (pass ? 2 : 1);
      ck_assert_msg(fabs(tget(&g, i) - want) < 1e-6, "grad %lld = %g, want %g", (long long)i, tget(&g, i), want);
    }
  }
  for (int i = 0; i < 3; i++) free(in[i].data);
  free(g.data);
}
END_TEST

START_TEST(test_dropout_shapes_and_params) {
  const mxr_op *op = find("Dropout");
  mxr_op_params *p = parse("Dropout", "", 0);
  ck_assert_int_eq(mxr_op_num_outputs(op, p), 2);
  ck_assert_int_eq(mxr_op_num_visible_outputs(op, p), 1);
  mxr_op_params_free(p);
  struct mxr_shape in[1] = {OC_SHAPE(2, 3, 4)}, out[2], aux[1];
  ck_assert_int_eq(infer("Dropout", "axes=(0,-1)", in, out, aux), 0);
  expect_shape(&out[0], OC_SHAPE(2, 3, 4));
  expect_shape(&out[1], OC_SHAPE(1, 3, 1));
  expect_shape_error("Dropout", "axes=(3,)", in, "Dropout: axis 3 is out of range for 3 dimensions");
  expect_parse_error("Dropout", "p=1.5", "Dropout: p must be in [0, 1], got 1.5");
  expect_parse_error("Dropout", "mode=sometimes", "mode='sometimes' is not valid: expected one of training, always");
  expect_parse_error("Dropout", "cudnn_off=perhaps", "cudnn_off='perhaps' is not valid");
  mxr_op_params_free(parse("_npx_dropout", "cudnn_off=None;axes=()", 0));
}
END_TEST

/* ------------------------------------------------------------ BatchNorm */

struct bn_user {
  int axis;          /* normalised */
  bool batch_stats;  /* is_train and not use_global_stats */
  bool fix_gamma, mean_var;
  double eps;
};

static void bn_dims(const struct bn_user *u, const struct mxr_shape *d, int64_t *outer, int64_t *c, int64_t *inner) {
  *outer = 1, *inner = 1, *c = d->dim[u->axis];
  for (int k = 0; k < u->axis; k++) *outer *= d->dim[k];
  for (int k = u->axis + 1; k < d->ndim; k++) *inner *= d->dim[k];
}

/* Mean and inverse std of channel c: the batch's or the moving ones. */
static void bn_stats(const struct bn_user *u, const double *const *in, const double *const *aux,
                     const struct mxr_shape *d, int64_t c, double *mean, double *invstd) {
  int64_t outer, nc, inner;
  bn_dims(u, d, &outer, &nc, &inner);
  if (!u->batch_stats) {
    *mean = aux[0][c], *invstd = 1 / sqrt(aux[1][c] + u->eps);
    return;
  }
  double s = 0, sq = 0, n = (double)(outer * inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) s += in[0][(o * nc + c) * inner + i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) sq += pow(in[0][(o * nc + c) * inner + i] - s / n, 2);
  *mean = s / n, *invstd = 1 / sqrt(sq / n + u->eps);
}

static void bn_ref(REF_ARGS) {
  REF_UNUSED;
  const struct bn_user *u = user;
  int64_t outer, nc, inner;
  bn_dims(u, &in_shapes[0], &outer, &nc, &inner);
  for (int64_t c = 0; c < nc; c++) {
    double mean, invstd, w = u->fix_gamma ? 1 : in[1][c];
    bn_stats(u, in, (const double *const *)aux, &in_shapes[0], c, &mean, &invstd);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t j = (o * nc + c) * inner + i;
        out[0][j] = (in[0][j] - mean) * invstd * w + in[2][c];
      }
    if (u->mean_var) out[1][c] = mean, out[2][c] = invstd;
  }
}

/* Analytic gradient for output_mean_var, where MXNet ignores the head
 * gradients of mean and var: training-mode batch statistics only. */
static void bn_grad_ref(BREF_ARGS) {
  (void)nin, (void)out_shapes, (void)nout;
  const struct bn_user *u = user;
  int64_t outer, nc, inner;
  bn_dims(u, &in_shapes[0], &outer, &nc, &inner);
  double n = (double)(outer * inner);
  for (int64_t c = 0; c < nc; c++) {
    double mean, invstd, w = u->fix_gamma ? 1 : in[1][c], sdy = 0, sdyx = 0;
    bn_stats(u, in, NULL, &in_shapes[0], c, &mean, &invstd);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t j = (o * nc + c) * inner + i;
        sdy += ograd[0][j], sdyx += ograd[0][j] * (in[0][j] - mean) * invstd;
      }
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t j = (o * nc + c) * inner + i;
        double xhat = (in[0][j] - mean) * invstd;
        grad[0][j] = w * invstd * (ograd[0][j] - sdy / n - xhat * sdyx / n);
      }
    grad[1][c] = u->fix_gamma ? 0 : sdyx, grad[2][c] = sdy;
  }
}

static void bn_case(const char *spec_keys[], const char *spec_vals[], int np, struct mxr_shape d,
                    const struct bn_user *u, bool train, int dtype, uint64_t seed, int rounds) {
  struct oc_case c = {.op = "BatchNorm", .nparams = np, .nin = 3, .in_shapes = {d, UNK, UNK},
                      .naux = 2, .aux_shapes = {UNK, UNK}, .dtype = dtype, .is_train = train,
                      .forward_ref = bn_ref, .backward_ref = u->mean_var ? bn_grad_ref : NULL,
                      .user = u, .rtol = 1e-4, .atol = 1e-5, .grad_rtol = 2e-3, .grad_atol = 2e-4};
  for (int i = 0; i < np; i++) c.keys[i] = spec_keys[i], c.vals[i] = spec_vals[i];
  oc_check(&c, seed, rounds);
}

START_TEST(test_batchnorm_against_reference) {
  const double eps = (double)1e-3f;
  static const char *k_none[1], *k_g[] = {"fix_gamma"}, *v_g[] = {"False"};
  static const char *k_ax[] = {"fix_gamma", "axis", "eps"}, *v_ax[] = {"False", "-1", "1e-5"};
  static const char *k_gs[] = {"fix_gamma", "use_global_stats"}, *v_gs[] = {"0", "True"};
  static const char *k_mv[] = {"fix_gamma", "output_mean_var", "axis"}, *v_mv[] = {"False", "True", "0"};
  struct bn_user train = {1, true, true, false, eps}, train_g = {1, true, false, false, eps},
                 infer_g = {1, false, false, false, eps}, last = {2, true, false, false, 1e-5},
                 mv = {0, true, false, true, eps}, mv_inf = {0, false, false, true, eps};
  /* training: batch statistics; fix_gamma (the default) zeroes d gamma */
  bn_case(k_none, NULL, 0, OC_SHAPE(4, 3), &train, true, MXR_FLOAT32, 40, 2);
  bn_case(k_g, v_g, 1, OC_SHAPE(2, 3, 2, 2), &train_g, true, MXR_FLOAT32, 41, 2);
  bn_case(k_g, v_g, 1, OC_SHAPE(3, 2, 4), &train_g, true, MXR_FLOAT64, 42, 1);
  bn_case(k_ax, v_ax, 3, OC_SHAPE(3, 2, 4), &last, true, MXR_FLOAT32, 43, 2);
  /* inference, and use_global_stats in training: the moving statistics */
  bn_case(k_g, v_g, 1, OC_SHAPE(2, 3, 2), &infer_g, false, MXR_FLOAT32, 44, 2);
  bn_case(k_gs, v_gs, 2, OC_SHAPE(2, 3, 2), &infer_g, true, MXR_FLOAT32, 45, 2);
  /* output_mean_var: mean and inverse std are visible, their gradients ignored */
  bn_case(k_mv, v_mv, 3, OC_SHAPE(3, 4), &mv, true, MXR_FLOAT32, 46, 2);
  struct oc_case c = {.op = "_npx_batch_norm", .nparams = 3, .keys = {"fix_gamma", "output_mean_var", "axis"},
                      .vals = {"False", "True", "0"}, .nin = 3, .in_shapes = {OC_SHAPE(3, 4), UNK, UNK},
                      .naux = 2, .aux_shapes = {UNK, UNK}, .forward_ref = bn_ref, .user = &mv_inf};
  oc_check_forward(&c, 47);
}
END_TEST

/* Moving statistics change in the training backward pass only. */
START_TEST(test_batchnorm_moving_stats) {
  uint64_t rng = 11;
  struct mxr_shape d = OC_SHAPE(4, 2, 3), ch = OC_SHAPE(2);
  struct mxr_tensor in[3] = {tensor(MXR_FLOAT32, d), tensor(MXR_FLOAT32, ch), tensor(MXR_FLOAT32, ch)};
  struct mxr_tensor out[3] = {tensor(MXR_FLOAT32, d), tensor(MXR_FLOAT32, ch), tensor(MXR_FLOAT32, ch)};
  struct mxr_tensor aux[2] = {tensor(MXR_FLOAT32, ch), tensor(MXR_FLOAT32, ch)}, g[3];
  tfill(&in[0], &rng, -2, 3), tfill(&in[1], &rng, 0.5, 1), tfill(&in[2], &rng, -1, 1);
  tfill(&aux[0], &rng, -1, 1), tfill(&aux[1], &rng, 0.5, 2);
  double mm[2] = {tget(&aux[0], 0), tget(&aux[0], 1)}, mv[2] = {tget(&aux[1], 0), tget(&aux[1], 1)};
  int req[3] = {MXR_REQ_WRITE, MXR_REQ_WRITE, MXR_REQ_WRITE};
  for (int i = 0; i < 3; i++) g[i] = tensor(MXR_FLOAT32, i ? ch : d);
  /* backward inputs: ograd, data, gamma, beta, out, mean, invstd */
  struct mxr_tensor bin[7] = {tensor(MXR_FLOAT32, d), in[0], in[1], in[2], out[0], out[1], out[2]};
  tfill(&bin[0], &rng, -1, 1);
  for (int mode = 0; mode < 3; mode++) { /* inference, use_global_stats, training */
    const char *spec = mode == 1 ? "momentum=0.75;use_global_stats=True" : "momentum=0.75";
    run("BatchNorm", spec, mode > 0, 1, in, 3, req, out, 3, aux, 2);
    for (int c = 0; c < 2; c++)
      ck_assert(tget(&aux[0], c) == (float)mm[c] && tget(&aux[1], c) == (float)mv[c]);
    run("_backward_BatchNorm", spec, mode > 0, 1, bin, 7, req, g, 3, aux, 2);
    for (int c = 0; c < 2; c++) {
      double s = 0, sq = 0;
      for (int o = 0; o < 4; o++)
        for (int i = 0; i < 3; i++) s += tget(&in[0], (o * 2 + c) * 3 + i);
      for (int o = 0; o < 4; o++)
        for (int i = 0; i < 3; i++) sq += pow(tget(&in[0], (o * 2 + c) * 3 + i) - s / 12, 2);
      double want_m = mode == 2 ? 0.75 * mm[c] + 0.25 * s / 12 : mm[c];
      double want_v = mode == 2 ? 0.75 * mv[c] + 0.25 * sq / 12 : mv[c];
      ck_assert_msg(fabs(tget(&aux[0], c) - want_m) < 1e-5, "mode %d moving_mean %g, want %g", mode, tget(&aux[0], c), want_m);
      ck_assert_msg(fabs(tget(&aux[1], c) - want_v) < 1e-5, "mode %d moving_var %g, want %g", mode, tget(&aux[1], c), want_v);
      if (mode == 2) { /* the hidden "var" output is the inverse std */
        ck_assert(fabs(tget(&out[1], c) - s / 12) < 1e-5);
        ck_assert(fabs(tget(&out[2], c) - 1 / sqrt(sq / 12 + (double)1e-3f)) < 1e-4);
      }
    }
  }
  for (int i = 0; i < 3; i++) free(in[i].data), free(out[i].data), free(g[i].data);
  free(aux[0].data), free(aux[1].data), free(bin[0].data);
}
END_TEST

START_TEST(test_batchnorm_shapes_and_params) {
  struct mxr_shape in[3] = {OC_SHAPE(2, 5, 3), UNK, UNK}, out[3], aux[2];
  ck_assert_int_eq(infer("BatchNorm", "axis=-2", in, out, aux), 0);
  expect_shape(&in[1], OC_SHAPE(5));
  expect_shape(&aux[1], OC_SHAPE(5));
  expect_shape(&out[2], OC_SHAPE(5));
  expect_shape(&out[0], OC_SHAPE(2, 5, 3));
  struct mxr_shape bad[3] = {OC_SHAPE(2, 5, 3), OC_SHAPE(4), UNK};
  expect_shape_error("BatchNorm", "", bad, "gamma: expected shape (5,), got (4,)");
  expect_shape_error("BatchNorm", "axis=3", in, "BatchNorm: axis 3 is out of range for 3 dimensions");
  const mxr_op *op = find("BatchNorm");
  mxr_op_params *p = parse("BatchNorm", "output_mean_var=True", 0);
  ck_assert_int_eq(mxr_op_num_visible_outputs(op, p), 3);
  ck_assert_int_eq(mxr_op_num_inputs(find("_backward_BatchNorm"), p), 9);
  mxr_op_params_free(p);
  p = parse("_npx_batch_norm", "min_calib_range=None;max_calib_range=2.5;cudnn_off=1", 0);
  ck_assert_int_eq(mxr_op_num_visible_outputs(op, p), 1);
  ck_assert_int_eq(mxr_op_num_aux(op, p), 2);
  ck_assert_str_eq(mxr_op_aux_name(op, p, 0), "moving_mean");
  ck_assert_str_eq(mxr_op_aux_name(op, p, 1), "moving_var");
  mxr_op_params_free(p);
  expect_parse_error("BatchNorm", "axis=one", "BatchNorm: parameter axis='one' is not valid: expected an integer");
  expect_parse_error("BatchNorm", "fix_gamma=yes", "fix_gamma='yes' is not valid");
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
  Suite *s = suite_create("nn ops");
  TCase *tc = tcase_create("nn");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_fc_against_reference);
  tcase_add_test(tc, test_fc_shapes_and_params);
  tcase_add_test(tc, test_softmax_output_against_reference);
  tcase_add_test(tc, test_softmax_output_shapes_and_params);
  tcase_add_test(tc, test_regression_outputs_against_reference);
  tcase_add_test(tc, test_regression_shapes_and_params);
  tcase_add_test(tc, test_dropout_passes_through_outside_training);
  tcase_add_test(tc, test_dropout_training_mask);
  tcase_add_test(tc, test_dropout_backward_uses_mask);
  tcase_add_test(tc, test_dropout_shapes_and_params);
  tcase_add_test(tc, test_batchnorm_against_reference);
  tcase_add_test(tc, test_batchnorm_moving_stats);
  tcase_add_test(tc, test_batchnorm_shapes_and_params);
  tcase_add_test(tc, test_inplace_hints_hold);
  tcase_add_test(tc, test_softmax_output_large_logits);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
