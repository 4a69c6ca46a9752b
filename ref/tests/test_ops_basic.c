/* The basic ops (reverse/flip, _copy/identity, _zeros, _ones) against
 * float64 references, and reverse's axis checks. */
#include "config.h"

#include <string.h>

#include "check_tap.h"
#include "op_check.h"

static void reverse_ref(REF_ARGS) {
  REF_UNUSED;
  const bool *flip = user;
  const struct mxr_shape *s = &in_shapes[0];
  int64_t n = oc_size(s);
  for (int64_t o = 0; o < n; o++) {
    /* decompose o, mirror the flagged coordinates, recompose */
    int64_t rem = o, from = 0, mul = 1;
    for (int d = s->ndim - 1; d >= 0; d--) {
      int64_t i = rem % s->dim[d];
      rem /= s->dim[d];
      from += (flip[d] ? s->dim[d] - 1 - i : i) * mul;
      mul *= s->dim[d];
    }
    out[0][o] = in[0][from];
  }
}

START_TEST(test_reverse_against_reference) {
  static const bool flip0[MXR_MAX_NDIM] = {true}, flip02[MXR_MAX_NDIM] = {true, false, true},
                    flip1[MXR_MAX_NDIM] = {false, true};
  struct oc_case c = {.op = "flip", .nparams = 1, .keys = {"axis"}, .vals = {"0"}, .nin = 1,
                      .in_shapes = {OC_SHAPE(10)}, .forward_ref = reverse_ref, .user = flip0};
  oc_check(&c, 1, 3);
  c.in_shapes[0] = OC_SHAPE(3, 4, 5);
  c.vals[0] = "(0,2)";
  c.user = flip02;
  oc_check(&c, 2, 2);
  c.vals[0] = "1";
  c.user = flip1;
  oc_check(&c, 3, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, 4, 1);
}
END_TEST

START_TEST(test_reverse_rejects_bad_axis) {
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find("reverse", &op), 0);
  const char *k[] = {"axis"}, *v[] = {"2"}, *neg[] = {"-1"};
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_params_parse(op, 1, k, v, &p), 0);
  struct mxr_shape in = OC_SHAPE(3, 4), out = {-1, {0}};
  ck_assert_int_eq(mxr__op_infer_shape(op, p, &in, 1, &out, 1, NULL, 0), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "axis 2 is out of range for 2 dimensions"));
  mxr_op_params_free(p);
  /* MXNet 1.9.1's reverse takes no negative axes */
  ck_assert_int_eq(mxr_op_params_parse(op, 1, k, neg, &p), 0);
  ck_assert_int_eq(mxr__op_infer_shape(op, p, &in, 1, &out, 1, NULL, 0), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "no negative axes"));
  mxr_op_params_free(p);
}
END_TEST

static void copy_ref(REF_ARGS) {
  REF_UNUSED;
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) out[0][j] = in[0][j];
}

START_TEST(test_copy_against_reference) {
  struct oc_case c = {.op = "_copy", .nin = 1, .in_shapes = {OC_SHAPE(4, 3)}, .forward_ref = copy_ref};
  oc_check(&c, 5, 2);
  c.op = "identity";
  oc_check(&c, 6, 1);
}
END_TEST

static void fill_ref(REF_ARGS) {
  REF_UNUSED;
  for (int64_t j = 0; j < oc_size(&out_shapes[0]); j++) out[0][j] = *(const double *)user;
}

START_TEST(test_zeros_and_ones) {
  static const double zero = 0, one = 1;
  struct oc_case c = {.op = "_zeros", .nparams = 1, .keys = {"shape"}, .vals = {"(2,3)"},
                      .nin = 0, .forward_ref = fill_ref, .user = &zero};
  oc_check_forward(&c, 7);
  c.op = "_ones";
  c.user = &one;
  oc_check_forward(&c, 8);
}
END_TEST

int main(void) {
  Suite *s = suite_create("basic ops");
  TCase *tc = tcase_create("basic");
  tcase_add_test(tc, test_reverse_against_reference);
  tcase_add_test(tc, test_reverse_rejects_bad_axis);
  tcase_add_test(tc, test_copy_against_reference);
  tcase_add_test(tc, test_zeros_and_ones);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
