/* Flatten and Reshape and their gradients against float64 references. */
#include "tensor_check.h"

/* ----------------------------------------------------- Flatten, Reshape */

static void copy_ref(REF_ARGS) {
  REF_UNUSED;
  (void)user;
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) out[0][j] = in[0][j];
}

static void check_copy_op(const char *op, const char *spec, struct mxr_shape in, struct mxr_shape want,
                          uint64_t seed) {
  expect_shape(op, spec, in, want);
  struct oc_case c = make_case(op, spec, copy_ref, NULL);
  c.nin = 1;
  c.in_shapes[0] = in;
  oc_check(&c, seed, 1);
}

START_TEST(test_flatten) {
  check_copy_op("Flatten", "", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 12), 50);
  check_copy_op("flatten", "", OC_SHAPE(5), OC_SHAPE(5, 1), 51);
  check_copy_op("_npx_batch_flatten", "", OC_SHAPE(3, 2), OC_SHAPE(3, 2), 52);
  check_copy_op("Flatten", "", OC_SHAPE(2, 1, 2, 2), OC_SHAPE(2, 4), 53);
  expect_shape_error("Flatten", "", OC_SCALAR, "Flatten: input must have at least one dimension");
  expect_parse_error("Flatten", "axis=1", "Flatten: unknown parameter 'axis'");
}
END_TEST

START_TEST(test_reshape_shapes) {
  /* MXNet's documented examples */
  expect_shape("Reshape", "shape=(4,0,2)", OC_SHAPE(2, 3, 4), OC_SHAPE(4, 3, 2));
  expect_shape("Reshape", "shape=(2,0,0)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4));
  expect_shape("Reshape", "shape=(6,1,-1)", OC_SHAPE(2, 3, 4), OC_SHAPE(6, 1, 4));
  expect_shape("Reshape", "shape=(3,-1,8)", OC_SHAPE(2, 3, 4), OC_SHAPE(3, 1, 8));
  expect_shape("Reshape", "shape=(-1,)", OC_SHAPE(2, 3, 4), OC_SHAPE(24));
  expect_shape("reshape", "shape=(-2,)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4));
  expect_shape("Reshape", "shape=(2,-2)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4));
  expect_shape("Reshape", "shape=(-2,1,1)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4, 1, 1));
  expect_shape("Reshape", "shape=(-3,4)", OC_SHAPE(2, 3, 4), OC_SHAPE(6, 4));
  expect_shape("Reshape", "shape=(-3,-3)", OC_SHAPE(2, 3, 4, 5), OC_SHAPE(6, 20));
  expect_shape("Reshape", "shape=(0,-3)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 12));
  expect_shape("Reshape", "shape=(-3,-2)", OC_SHAPE(2, 3, 4), OC_SHAPE(6, 4));
  expect_shape("Reshape", "shape=(-4,1,2,-2)", OC_SHAPE(2, 3, 4), OC_SHAPE(1, 2, 3, 4));
  expect_shape("Reshape", "shape=(2,-4,-1,3,-2)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 1, 3, 4));
  expect_shape("Reshape", "shape=(-1,0)", OC_SHAPE(10, 5, 4), OC_SHAPE(40, 5));
  expect_shape("Reshape", "shape=(-1,0);reverse=True", OC_SHAPE(10, 5, 4), OC_SHAPE(50, 4));
  expect_shape("Reshape", "shape=5", OC_SHAPE(5), OC_SHAPE(5));
  /* -1 after -2 or -4 fills the output position it produced */
  expect_shape("Reshape", "shape=(-2,-1)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4, 1));
  expect_shape("Reshape", "shape=(-4,1,2,-1)", OC_SHAPE(2, 3, 4), OC_SHAPE(1, 2, 12));
  /* deprecated target_shape: one 0 is inferred; keep_highest keeps dim 0 */
  expect_shape("Reshape", "target_shape=(0,4)", OC_SHAPE(2, 3, 4), OC_SHAPE(6, 4));
  expect_shape("Reshape", "target_shape=(7,0);keep_highest=True", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 12));
}
END_TEST

START_TEST(test_reshape_errors) {
  expect_parse_error("Reshape", "shape=(2,a)", "Reshape: parameter shape='(2,a)' is not valid");
  expect_parse_error("Reshape", "shape=(2,-5)", "Reshape: shape value -5 is not valid");
  expect_parse_error("Reshape", "target_shape=(2,-1)", "target_shape value -1 is negative");
  expect_shape_error("Reshape", "shape=(5,5)", OC_SHAPE(2, 3, 4), "Reshape: target shape (5,5) has 25 elements, input (2,3,4) has 24");
  expect_shape_error("Reshape", "shape=(-1,-1)", OC_SHAPE(2, 3), "Reshape: shape has more than one -1");
  expect_shape_error("Reshape", "shape=(0,0,0)", OC_SHAPE(2, 3), "shape value 0 at position 2 has no input dim");
  expect_shape_error("Reshape", "shape=(2,-3)", OC_SHAPE(2, 3), "shape value -3 needs two input dims");
  expect_shape_error("Reshape", "shape=(-4,5,-1,-2)", OC_SHAPE(2, 3), "split dims (5,0)");
  expect_shape_error("Reshape", "shape=(-4,-1,-1)", OC_SHAPE(4), "one may be -1");
  expect_shape_error("Reshape", "shape=(-4,2)", OC_SHAPE(4), "-4 must be followed by two dims");
  expect_shape_error("Reshape", "shape=(-1,5)", OC_SHAPE(2, 3), "cannot infer the -1");
  expect_shape_error("Reshape", "", OC_SHAPE(2, 3), "Reshape: shape is empty");
  expect_shape_error("Reshape", "shape=(-2,1,1,1,1,1,1,1)", OC_SHAPE(2, 3), "more than 8 dims");
  struct mxr_shape in = OC_SHAPE(2, 3), out = OC_SHAPE(7);
  ck_assert_int_eq(infer("_backward_reshape", "shape=(-1,)", &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "_backward_reshape: ograd (2,3) and data gradient (7,) differ in size"));
}
END_TEST

START_TEST(test_reshape_against_reference) {
  check_copy_op("Reshape", "shape=(4,-1)", OC_SHAPE(2, 3, 4), OC_SHAPE(4, 6), 60);
  check_copy_op("reshape", "shape=(-3,0);reverse=1", OC_SHAPE(2, 3, 4), OC_SHAPE(6, 4), 61);
  struct oc_case c = make_case("Reshape", "shape=(-1,)", copy_ref, NULL);
  c.nin = 1;
  c.in_shapes[0] = OC_SHAPE(3, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, 62, 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("reshape ops");
  TCase *tc = tcase_create("reshape");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_flatten);
  tcase_add_test(tc, test_reshape_shapes);
  tcase_add_test(tc, test_reshape_errors);
  tcase_add_test(tc, test_reshape_against_reference);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
