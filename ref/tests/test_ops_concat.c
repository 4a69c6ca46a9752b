/* Concat and its gradient against float64 references. */
#include "tensor_check.h"

/* -------------------------------------------------------------- Concat */

static void concat_ref(REF_ARGS) {
  REF_UNUSED;
  const int axis = *(const int *)user;
  const struct mxr_shape *o = &out_shapes[0];
  int64_t c[MXR_MAX_NDIM];
  for (int64_t j = 0; j < oc_size(o); j++) {
    unravel(j, o, c);
    int i = 0;
    while (c[axis] >= in_shapes[i].dim[axis]) c[axis] -= in_shapes[i++].dim[axis];
    out[0][j] = in[i][ravel(c, &in_shapes[i])];
  }
}

static void check_concat(const char *op, const char *spec, int n, const struct mxr_shape *in,
                         struct mxr_shape want, int axis, uint64_t seed) {
  static int axes[64];
  int *ax = &axes[seed % 64];
  *ax = axis;
  struct mxr_shape s[OC_MAX_TENSORS], out = UNKNOWN;
  memcpy(s, in, (size_t)n * sizeof *s);
  ck_assert_msg(infer(op, spec, s, n, &out, 1) == 0, "%s", mxr_last_error());
  ck_assert(mxr_shape_equal(&out, &want));
  struct oc_case c = make_case(op, spec, concat_ref, ax);
  c.nin = n;
  memcpy(c.in_shapes, in, (size_t)n * sizeof *in);
  oc_check(&c, seed, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, seed + 100, 1);
}

START_TEST(test_concat) {
  check_concat("Concat", "num_args=2", 2, (struct mxr_shape[]){OC_SHAPE(2, 3), OC_SHAPE(2, 4)},
               OC_SHAPE(2, 7), 1, 1);
  check_concat("concat", "num_args=3;dim=0", 3,
               (struct mxr_shape[]){OC_SHAPE(1, 3), OC_SHAPE(2, 3), OC_SHAPE(3, 3)}, OC_SHAPE(6, 3), 0, 2);
  check_concat("Concat", "num_args=2;dim=-1", 2,
               (struct mxr_shape[]){OC_SHAPE(2, 2, 1), OC_SHAPE(2, 2, 3)}, OC_SHAPE(2, 2, 4), 2, 3);
  check_concat("Concat", "num_args=3;dim=1", 3,
               (struct mxr_shape[]){OC_SHAPE(2, 1, 3), OC_SHAPE(2, 2, 3), OC_SHAPE(2, 1, 3)},
               OC_SHAPE(2, 4, 3), 1, 4);
  check_concat("_sparse_concat", "num_args=1;dim=0", 1, (struct mxr_shape[]){OC_SHAPE(2, 3)},
               OC_SHAPE(2, 3), 0, 5);
}
END_TEST

START_TEST(test_concat_counts_and_errors) {
  const mxr_op *op, *bop;
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_find("concat", &op), 0);
  ck_assert_str_eq(mxr_op_name(op), "Concat");
  ck_assert_int_eq(parse("Concat", "num_args=3", &p), 0);
  ck_assert_int_eq(mxr_op_num_inputs(op, p), 3);
  ck_assert_str_eq(mxr_op_input_name(op, p, 2), "arg2");
  ck_assert_int_eq(mxr_op_find(op->backward, &bop), 0);
  ck_assert_str_eq(mxr_op_name(bop), "_backward_Concat");
  ck_assert_int_eq(mxr_op_num_inputs(bop, p), 1);
  ck_assert_int_eq(mxr_op_num_outputs(bop, p), 3);
  mxr_op_params_free(p);
  expect_parse_error("Concat", "dim=1", "Concat: required parameter 'num_args' is missing");
  expect_parse_error("Concat", "num_args=0", "Concat: num_args must be at least 1, got 0");
  struct mxr_shape in[3] = {OC_SHAPE(2, 3), OC_SHAPE(3, 3)}, out = UNKNOWN;
  ck_assert_int_eq(infer("Concat", "num_args=2", in, 2, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "Concat: input 1 has shape (3,3), incompatible with (2,3)"));
  ck_assert_int_eq(infer("Concat", "num_args=2;dim=2", in, 2, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "Concat: dim=2 is out of range for shape (2,3)"));
  in[0] = in[1] = OC_SCALAR;
  ck_assert_int_eq(infer("Concat", "num_args=2;dim=0", in, 2, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "zero-dimensional arrays cannot be concatenated"));
  /* one unknown input is inferred from the output */
  in[0] = OC_SHAPE(2, 3), in[1] = UNKNOWN, in[2] = OC_SHAPE(2, 1), out = OC_SHAPE(2, 9);
  ck_assert_int_eq(infer("Concat", "num_args=3", in, 3, &out, 1), 0);
  ck_assert(mxr_shape_equal(&in[1], &OC_SHAPE(2, 5)));
  /* _backward_Concat: ograd -> one gradient per input */
  struct mxr_shape g = OC_SHAPE(2, 9), grads[3] = {OC_SHAPE(2, 3), UNKNOWN, OC_SHAPE(2, 1)};
  ck_assert_int_eq(infer("_backward_Concat", "num_args=3", &g, 1, grads, 3), 0);
  ck_assert(mxr_shape_equal(&grads[1], &OC_SHAPE(2, 5)));
  g = OC_SHAPE(2, 3), grads[1] = UNKNOWN;
  ck_assert_int_eq(infer("_backward_Concat", "num_args=3", &g, 1, grads, 3), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "the inputs already exceed output (2,3)"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("concat ops");
  TCase *tc = tcase_create("concat");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_concat);
  tcase_add_test(tc, test_concat_counts_and_errors);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
