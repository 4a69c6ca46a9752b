/* The op registry, the parameter parser, and the basic ops (reverse/flip,
 * _copy, _zeros, _ones) against float64 references. */
#include "config.h"

#include <string.h>

#include "check_tap.h"
#include "op_check.h"

START_TEST(test_find_canonical_and_alias) {
  const mxr_op *a, *b;
  ck_assert_int_eq(mxr_op_find("reverse", &a), 0);
  ck_assert_int_eq(mxr_op_find("flip", &b), 0);
  ck_assert_ptr_eq(a, b);
  ck_assert_str_eq(mxr_op_name(b), "reverse");
  ck_assert_int_eq(mxr_op_find("no_such_op", &a), MXR_ENOTFOUND);
  ck_assert_str_eq(mxr_last_error(), "unknown operator 'no_such_op'");
  ck_assert_ptr_null(a);
}
END_TEST

START_TEST(test_names_sorted_unique_and_findable) {
  size_t n = mxr_op_name_count();
  ck_assert_uint_gt(n, 4);
  for (size_t i = 0; i < n; i++) {
    const mxr_op *op;
    ck_assert_int_eq(mxr_op_find(mxr_op_name_at(i), &op), 0);
    if (i) ck_assert_int_lt(strcmp(mxr_op_name_at(i - 1), mxr_op_name_at(i)), 0);
    /* every op with a gradient names a registered backward op */
    if (op->backward) {
      const mxr_op *bop;
      ck_assert_msg(mxr_op_find(op->backward, &bop) == 0, "%s: %s", op->name, mxr_last_error());
    }
  }
  ck_assert_ptr_null(mxr_op_name_at(n));
}
END_TEST

/* A CUDA build runs every op on a GPU (issue 6): each registered op
 * (backward ops included) has a GPU forward, with or without cuDNN.
 * Checked without a device. */
START_TEST(test_every_op_has_a_gpu_kernel_in_a_cuda_build) {
#ifdef MXR_HAVE_CUDA
  char missing[2048] = "";
  for (size_t i = 0; i < mxr_op_name_count(); i++) {
    const mxr_op *op;
    ck_assert_int_eq(mxr_op_find(mxr_op_name_at(i), &op), 0);
    bool canonical = strcmp(mxr_op_name_at(i), op->name) == 0; /* aliases: once */
    if (canonical && !op->forward_gpu && strlen(missing) + strlen(op->name) + 2 < sizeof missing) {
      strcat(missing, " ");
      strcat(missing, op->name);
    }
  }
  ck_assert_msg(missing[0] == '\0', "ops without a GPU kernel:%s", missing);
#else
  /* Without CUDA no op may claim a GPU kernel (MXR_GPU_FORWARD is NULL). */
  for (size_t i = 0; i < mxr_op_name_count(); i++) {
    const mxr_op *op;
    ck_assert_int_eq(mxr_op_find(mxr_op_name_at(i), &op), 0);
    ck_assert_msg(op->forward_gpu == NULL, "%s has a GPU forward in a build without CUDA", op->name);
  }
#endif
}
END_TEST

static mxr_op_params *parse(const char *op, int n, const char *const *k, const char *const *v, int want) {
  const mxr_op *o;
  ck_assert_int_eq(mxr_op_find(op, &o), 0);
  mxr_op_params *p = NULL;
  ck_assert_int_eq(mxr_op_params_parse(o, n, k, v, &p), want);
  return p;
}

START_TEST(test_param_parsing) {
  const char *k1[] = {"axis"}, *v1[] = {"0"};
  mxr_op_params *p = parse("flip", 1, k1, v1, 0);
  ck_assert_int_eq(mxr_op_params_count(p), 1);
  ck_assert_str_eq(mxr_op_params_key(p, 0), "axis");
  ck_assert_str_eq(mxr_op_params_value(p, 0), "0");
  mxr_op_params_free(p);
  const char *v2[] = {"(0, 1)"};
  mxr_op_params_free(parse("reverse", 1, k1, v2, 0));
  const char *v3[] = {"zero"};
  ck_assert_ptr_null(parse("reverse", 1, k1, v3, MXR_EINVAL));
  ck_assert_str_eq(mxr_last_error(), "reverse: parameter axis='zero' is not valid: expected a tuple such as (2,2)");
  ck_assert_ptr_null(parse("reverse", 0, NULL, NULL, MXR_EINVAL));
  ck_assert_str_eq(mxr_last_error(), "reverse: required parameter 'axis' is missing");
  const char *k4[] = {"axis", "axes"}, *v4[] = {"0", "1"};
  ck_assert_ptr_null(parse("reverse", 2, k4, v4, MXR_EINVAL));
  ck_assert_str_eq(mxr_last_error(), "reverse: unknown parameter 'axes' (value '1')");
  /* graph attributes of the form __x__ are kept, not parsed */
  const char *k5[] = {"axis", "__shape__"}, *v5[] = {"0", "(10,)"};
  p = parse("reverse", 2, k5, v5, 0);
  ck_assert_int_eq(mxr_op_params_count(p), 2);
  mxr_op_params_free(p);
  const char *k6[] = {"shape", "dtype"}, *v6[] = {"(2,3)", "float64"}, *v7[] = {"(2,3)", "float65"};
  mxr_op_params_free(parse("_zeros", 2, k6, v6, 0));
  ck_assert_ptr_null(parse("_zeros", 2, k6, v7, MXR_EINVAL));
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "dtype='float65'"));
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "one of float32, float64"));
  const char *v8[] = {"(2,-3)", "float32"};
  ck_assert_ptr_null(parse("_ones", 2, k6, v8, MXR_EINVAL));
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "negative dimension"));
}
END_TEST

/* ------------------------------------------------------------ references */

static void reverse_ref(const void *user, const double *const *in, const struct mxr_shape *in_shapes,
                        int nin, double *const *out, const struct mxr_shape *out_shapes, int nout,
                        double *const *aux, int naux) {
  (void)nin;
  (void)out_shapes;
  (void)nout;
  (void)aux;
  (void)naux;
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

static void copy_ref(const void *user, const double *const *in, const struct mxr_shape *in_shapes,
                     int nin, double *const *out, const struct mxr_shape *out_shapes, int nout,
                     double *const *aux, int naux) {
  (void)user;
  (void)nin;
  (void)out_shapes;
  (void)nout;
  (void)aux;
  (void)naux;
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) out[0][j] = in[0][j];
}

START_TEST(test_copy_against_reference) {
  struct oc_case c = {.op = "_copy", .nin = 1, .in_shapes = {OC_SHAPE(4, 3)}, .forward_ref = copy_ref};
  oc_check(&c, 5, 2);
  c.op = "identity";
  oc_check(&c, 6, 1);
}
END_TEST

static void fill_ref(const void *user, const double *const *in, const struct mxr_shape *in_shapes,
                     int nin, double *const *out, const struct mxr_shape *out_shapes, int nout,
                     double *const *aux, int naux) {
  (void)in;
  (void)in_shapes;
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
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

/* The checker must be able to fail: a wrong reference is caught. */
START_TEST(test_checker_catches_wrong_reference) {
  struct oc_case c = {.op = "_copy", .nin = 1, .in_shapes = {OC_SHAPE(5)}, .forward_ref = reverse_ref,
                      .user = (const bool[MXR_MAX_NDIM]){true}};
  oc_check_forward(&c, 9); /* expected to fail */
}
END_TEST

int main(void) {
  Suite *s = suite_create("op registry");
  TCase *tc = tcase_create("registry");
  tcase_add_test(tc, test_find_canonical_and_alias);
  tcase_add_test(tc, test_names_sorted_unique_and_findable);
  tcase_add_test(tc, test_every_op_has_a_gpu_kernel_in_a_cuda_build);
  tcase_add_test(tc, test_param_parsing);
  tcase_add_test(tc, test_reverse_against_reference);
  tcase_add_test(tc, test_reverse_rejects_bad_axis);
  tcase_add_test(tc, test_copy_against_reference);
  tcase_add_test(tc, test_zeros_and_ones);
  tcase_add_exit_test(tc, test_checker_catches_wrong_reference, 1);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
