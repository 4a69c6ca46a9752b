/* dot and its gradient against float64 references. */
#include "tensor_check.h"

/* ----------------------------------------------------------------- dot */

struct dot_case {
  int64_t m, n, k;
  bool ta, tb;
};

static void dot_ref(REF_ARGS) {
  REF_UNUSED;
  const struct dot_case *d = user;
  const double *A = in[0], *B = in[1];
  for (int64_t i = 0; i < d->m; i++)
    for (int64_t j = 0; j < d->n; j++) {
      double s = 0;
      for (int64_t p = 0; p < d->k; p++)
        s += (d->ta ? A[p * d->m + i] : A[i * d->k + p]) * (d->tb ? B[j * d->k + p] : B[p * d->n + j]);
      out[0][i * d->n + j] = s;
    }
}

static void check_dot(const char *spec, struct mxr_shape l, struct mxr_shape r, struct mxr_shape want,
                      struct dot_case d, uint64_t seed) {
  struct mxr_shape in[2] = {l, r}, out = UNKNOWN;
  ck_assert_msg(infer("dot", spec, in, 2, &out, 1) == 0, "%s", mxr_last_error());
  ck_assert(mxr_shape_equal(&out, &want));
  struct oc_case c = make_case("dot", spec, dot_ref, &d);
  c.nin = 2;
  c.in_shapes[0] = l, c.in_shapes[1] = r;
  c.atol = 1e-5;
  oc_check(&c, seed, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, seed + 100, 1);
}

START_TEST(test_dot) {
  check_dot("", OC_SHAPE(3, 4), OC_SHAPE(4, 5), OC_SHAPE(3, 5), (struct dot_case){3, 5, 4, F, F}, 30);
  check_dot("transpose_a=True", OC_SHAPE(4, 3), OC_SHAPE(4, 5), OC_SHAPE(3, 5),
            (struct dot_case){3, 5, 4, T, F}, 31);
  check_dot("transpose_b=True", OC_SHAPE(3, 4), OC_SHAPE(5, 4), OC_SHAPE(3, 5),
            (struct dot_case){3, 5, 4, F, T}, 32);
  check_dot("transpose_a=1;transpose_b=1", OC_SHAPE(4, 3), OC_SHAPE(5, 4), OC_SHAPE(3, 5),
            (struct dot_case){3, 5, 4, T, T}, 33);
  check_dot("", OC_SHAPE(6), OC_SHAPE(6), OC_SHAPE(1), (struct dot_case){1, 1, 6, F, F}, 34);
  check_dot("", OC_SHAPE(4), OC_SHAPE(4, 5), OC_SHAPE(5), (struct dot_case){1, 5, 4, F, F}, 35);
  check_dot("transpose_a=True", OC_SHAPE(4), OC_SHAPE(4, 5), OC_SHAPE(5), (struct dot_case){1, 5, 4, T, F}, 36);
  check_dot("", OC_SHAPE(3, 4), OC_SHAPE(4), OC_SHAPE(3), (struct dot_case){3, 1, 4, F, F}, 37);
  check_dot("", OC_SHAPE(2, 3, 4), OC_SHAPE(4, 5), OC_SHAPE(2, 3, 5), (struct dot_case){6, 5, 4, F, F}, 38);
  check_dot("transpose_a=True", OC_SHAPE(4, 2, 3), OC_SHAPE(4, 5), OC_SHAPE(2, 3, 5),
            (struct dot_case){6, 5, 4, T, F}, 39);
  check_dot("", OC_SHAPE(3, 4), OC_SHAPE(4, 2, 3), OC_SHAPE(3, 2, 3), (struct dot_case){3, 6, 4, F, F}, 40);
  check_dot("transpose_b=True", OC_SHAPE(3, 4), OC_SHAPE(2, 5, 4), OC_SHAPE(3, 2, 5),
            (struct dot_case){3, 10, 4, F, T}, 41);
  check_dot("forward_stype=default", OC_SHAPE(1, 1), OC_SHAPE(1, 2), OC_SHAPE(1, 2), (struct dot_case){1, 2, 1, F, F}, 42);
  struct dot_case d = {2, 3, 4, F, F};
  struct oc_case c = make_case("_sparse_dot", "", dot_ref, &d);
  c.nin = 2;
  c.in_shapes[0] = OC_SHAPE(2, 4), c.in_shapes[1] = OC_SHAPE(4, 3);
  c.atol = 1e-5;
  oc_check(&c, 43, 1);
}
END_TEST

START_TEST(test_dot_errors) {
  expect_parse_error("dot", "transpose_a=2", "dot: parameter transpose_a='2' is not valid");
  expect_parse_error("dot", "forward_stype=dense", "dot: parameter forward_stype='dense' is not valid");
  struct mxr_shape in[3] = {OC_SHAPE(3, 4), OC_SHAPE(5, 6)}, out[2] = {UNKNOWN, UNKNOWN};
  ck_assert_int_eq(infer("dot", "", in, 2, out, 1), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "dot: shape mismatch: lhs (3,4) X rhs (5,6) (transpose_a=0, transpose_b=0)");
  in[0] = OC_SHAPE(3), in[1] = OC_SHAPE(3);
  ck_assert_int_eq(infer("dot", "transpose_b=True", in, 2, out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "dot: cannot transpose vectors"));
  in[0] = OC_SCALAR;
  ck_assert_int_eq(infer("dot", "", in, 2, out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "dot: scalar inputs are not supported"));
  in[0] = OC_SHAPE(2, 2, 2, 2, 2), in[1] = OC_SHAPE(2, 2, 2, 2, 2, 2);
  ck_assert_int_eq(infer("dot", "", in, 2, out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "more than 8 dims"));
  /* _backward_dot: (ograd, lhs, rhs) -> (lhs grad, rhs grad) */
  in[0] = UNKNOWN, in[1] = OC_SHAPE(4, 3), in[2] = OC_SHAPE(4, 5);
  ck_assert_int_eq(infer("_backward_dot", "transpose_a=True", in, 3, out, 2), 0);
  ck_assert(mxr_shape_equal(&in[0], &OC_SHAPE(3, 5)));
  ck_assert(mxr_shape_equal(&out[0], &OC_SHAPE(4, 3)) && mxr_shape_equal(&out[1], &OC_SHAPE(4, 5)));
  in[0] = OC_SHAPE(3, 6), out[0] = out[1] = UNKNOWN;
  ck_assert_int_eq(infer("_backward_dot", "transpose_a=True", in, 3, out, 2), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "ograd: expected shape (3,5), got (3,6)"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("dot ops");
  TCase *tc = tcase_create("dot");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_dot);
  tcase_add_test(tc, test_dot_errors);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
