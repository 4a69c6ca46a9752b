/* FullyConnected against float64 plain-loop references. */
#include "nn_check.h"

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

int main(void) {
  Suite *s = suite_create("fully_connected ops");
  TCase *tc = tcase_create("fully_connected");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_fc_against_reference);
  tcase_add_test(tc, test_fc_shapes_and_params);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
