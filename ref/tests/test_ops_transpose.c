/* transpose and its gradient against float64 references. */
#include "tensor_check.h"

/* ----------------------------------------------------------- transpose */

static void transpose_ref(REF_ARGS) {
  REF_UNUSED;
  const int *perm = user;
  const struct mxr_shape *s = &in_shapes[0];
  int64_t c[MXR_MAX_NDIM], ci[MXR_MAX_NDIM];
  struct mxr_shape o = {s->ndim, {0}};
  for (int d = 0; d < s->ndim; d++) o.dim[d] = s->dim[perm[d]];
  ck_assert(mxr_shape_equal(&o, &out_shapes[0]));
  for (int64_t j = 0; j < oc_size(&o); j++) {
    unravel(j, &o, c);
    for (int d = 0; d < s->ndim; d++) ci[perm[d]] = c[d];
    out[0][j] = in[0][ravel(ci, s)];
  }
}

static void check_transpose(const char *spec, struct mxr_shape in, const int *perm, uint64_t seed) {
  struct oc_case c = make_case("transpose", spec, transpose_ref, perm);
  c.nin = 1;
  c.in_shapes[0] = in;
  oc_check(&c, seed, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, seed + 100, 1);
}

START_TEST(test_transpose) {
  static const int p10[] = {1, 0}, p210[] = {2, 1, 0}, p102[] = {1, 0, 2}, p201[] = {2, 0, 1},
                   p3102[] = {3, 1, 0, 2}, p0[] = {0};
  check_transpose("", OC_SHAPE(3, 4), p10, 70);
  check_transpose("axes=()", OC_SHAPE(2, 3, 4), p210, 71);
  check_transpose("axes=(1,0,2)", OC_SHAPE(2, 3, 4), p102, 72);
  check_transpose("axes=(2,0,1)", OC_SHAPE(2, 3, 4), p201, 73);
  check_transpose("axes=[3,1,0,2]", OC_SHAPE(2, 3, 2, 3), p3102, 74);
  check_transpose("", OC_SHAPE(5), p0, 75);
  expect_shape("transpose", "axes=(2,0,1)", OC_SHAPE(2, 3, 4), OC_SHAPE(4, 2, 3));
  /* inferred both ways; the backward's gradient takes the forward input's shape */
  struct mxr_shape in = UNKNOWN, out = OC_SHAPE(4, 2, 3);
  ck_assert_int_eq(infer("transpose", "axes=(2,0,1)", &in, 1, &out, 1), 0);
  ck_assert(mxr_shape_equal(&in, &OC_SHAPE(2, 3, 4)));
  in = OC_SHAPE(4, 2, 3), out = UNKNOWN;
  ck_assert_int_eq(infer("_backward_transpose", "axes=(2,0,1)", &in, 1, &out, 1), 0);
  ck_assert(mxr_shape_equal(&out, &OC_SHAPE(2, 3, 4)));
}
END_TEST

START_TEST(test_transpose_errors) {
  expect_parse_error("transpose", "axes=(0,0,1)", "transpose: axes is not a permutation of 0..2");
  expect_parse_error("transpose", "axes=(0,-1)", "transpose: axes is not a permutation");
  expect_parse_error("transpose", "axes=(0,1,2,3,4,5,6)", "transpose supports at most 6 dims");
  expect_shape_error("transpose", "axes=(1,0)", OC_SHAPE(2, 3, 4), "transpose: axes has 2 entries but the shape (2,3,4) has 3 dims");
  expect_shape_error("transpose", "", OC_SHAPE(1, 1, 1, 1, 1, 1, 1), "has more than 6 dims");
  struct mxr_shape in = OC_SHAPE(2, 3), out = OC_SHAPE(2, 3);
  ck_assert_int_eq(infer("transpose", "", &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "transpose: output: expected shape (3,2), got (2,3)"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("transpose ops");
  TCase *tc = tcase_create("transpose");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_transpose);
  tcase_add_test(tc, test_transpose_errors);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
