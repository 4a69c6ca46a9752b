/* sum and mean and their gradients against float64 references. */
#include "tensor_check.h"

/* ---------------------------------------------------------- sum, mean */

struct reduce_case {
  bool red[MXR_MAX_NDIM];
  bool mean;
};

/* Each input element adds into the output element named by its kept
 * coordinates, in row-major order of the kept dims. */
static void reduce_ref(REF_ARGS) {
  REF_UNUSED;
  const struct reduce_case *rc = user;
  const struct mxr_shape *s = &in_shapes[0];
  int64_t n = oc_size(s), nout_el = oc_size(&out_shapes[0]), c[MXR_MAX_NDIM];
  for (int64_t j = 0; j < nout_el; j++) out[0][j] = 0;
  for (int64_t i = 0; i < n; i++) {
    unravel(i, s, c);
    int64_t o = 0;
    for (int d = 0; d < s->ndim; d++)
      if (!rc->red[d]) o = o * s->dim[d] + c[d];
    out[0][o] += in[0][i];
  }
  if (rc->mean)
    for (int64_t j = 0; j < nout_el; j++) out[0][j] /= (double)(n / nout_el);
}

static void check_reduce(const char *op, const char *spec, struct mxr_shape in, struct mxr_shape want,
                         struct reduce_case rc, uint64_t seed) {
  expect_shape(op, spec, in, want);
  struct oc_case c = make_case(op, spec, reduce_ref, &rc);
  c.nin = 1;
  c.in_shapes[0] = in;
  oc_check(&c, seed, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, seed + 100, 1);
}

START_TEST(test_sum_and_mean) {
  for (int m = 0; m < 2; m++) {
    const char *op = m ? "mean" : "sum";
    struct reduce_case all = {{T, T, T}, m}, ax1 = {{F, T, F}, m}, ax02 = {{T, F, T}, m},
                       last = {{F, F, T}, m};
    check_reduce(op, "", OC_SHAPE(2, 3, 4), OC_SHAPE(1), all, 10);
    check_reduce(op, "axis=None;keepdims=True", OC_SHAPE(2, 3, 4), OC_SHAPE(1, 1, 1), all, 11);
    check_reduce(op, "axis=()", OC_SHAPE(2, 3, 4), OC_SHAPE(1), all, 12);
    check_reduce(op, "axis=1", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 4), ax1, 13);
    check_reduce(op, "axis=(0,2)", OC_SHAPE(2, 3, 4), OC_SHAPE(3), ax02, 14);
    check_reduce(op, "axis=(-1,0)", OC_SHAPE(2, 3, 4), OC_SHAPE(3), ax02, 15);
    check_reduce(op, "axis=-1;keepdims=1", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 1), last, 16);
    check_reduce(op, "axis=1;exclude=True", OC_SHAPE(2, 3, 4), OC_SHAPE(3), ax02, 17);
    check_reduce(op, "axis=(0,2);exclude=True;keepdims=True", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 1, 4),
                 ax1, 18);
    check_reduce(op, "axis=(0,1,2)", OC_SHAPE(2, 3, 4), OC_SHAPE(1), all, 19);
    check_reduce(op, "axis=1", OC_SHAPE(5, 6), OC_SHAPE(5), (struct reduce_case){{F, T}, m}, 20);
    check_reduce(op, "axis=0", OC_SHAPE(7), OC_SHAPE(1), (struct reduce_case){{T}, m}, 21);
  }
  /* aliases */
  struct reduce_case ax1 = {{F, T}, false};
  check_reduce("sum_axis", "axis=1", OC_SHAPE(3, 4), OC_SHAPE(3), ax1, 22);
  check_reduce("_sparse_sum", "axis=1", OC_SHAPE(3, 4), OC_SHAPE(3), ax1, 23);
  ax1.mean = true;
  check_reduce("_sparse_mean", "axis=1", OC_SHAPE(3, 4), OC_SHAPE(3), ax1, 24);
}
END_TEST

START_TEST(test_reduce_errors) {
  expect_parse_error("sum", "axis=x", "sum: parameter axis='x' is not valid");
  expect_parse_error("mean", "keepdims=maybe", "mean: parameter keepdims='maybe' is not valid");
  expect_parse_error("sum", "axes=1", "sum: unknown parameter 'axes'");
  expect_shape_error("sum", "axis=3", OC_SHAPE(2, 3, 4), "sum: axis 3 is out of range for input shape (2,3,4)");
  expect_shape_error("mean", "axis=-4", OC_SHAPE(2, 3, 4), "mean: axis -4 is out of range");
  expect_shape_error("sum", "axis=(1,-2)", OC_SHAPE(2, 3, 4), "sum: axis has duplicates");
  /* the backward op checks the ograd against the data gradient's shape */
  struct mxr_shape in = OC_SHAPE(2, 4), out = OC_SHAPE(2, 3, 4);
  ck_assert_int_eq(infer("_backward_sum", "axis=1", &in, 1, &out, 1), 0);
  in = OC_SHAPE(3, 4);
  ck_assert_int_eq(infer("_backward_mean", "axis=1", &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "_backward_mean: ograd: expected shape (2,4), got (3,4)"));
  in = UNKNOWN;
  ck_assert_int_eq(infer("_backward_sum", "axis=(0,2);keepdims=True", &in, 1, &out, 1), 0);
  ck_assert(mxr_shape_equal(&in, &OC_SHAPE(1, 3, 1)));
}
END_TEST

int main(void) {
  Suite *s = suite_create("reduce ops");
  TCase *tc = tcase_create("reduce");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_sum_and_mean);
  tcase_add_test(tc, test_reduce_errors);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
