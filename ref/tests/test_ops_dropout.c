/* Dropout against float64 plain-loop references. */
#include "nn_check.h"

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

int main(void) {
  Suite *s = suite_create("dropout ops");
  TCase *tc = tcase_create("dropout");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_dropout_passes_through_outside_training);
  tcase_add_test(tc, test_dropout_training_mask);
  tcase_add_test(tc, test_dropout_backward_uses_mask);
  tcase_add_test(tc, test_dropout_shapes_and_params);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
