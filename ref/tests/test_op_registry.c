/* The op registry, the parameter parser, and the float64 reference
 * checker's ability to fail. */
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

/* A CUDA build runs every op on a GPU: each registered op
 * (backward ops included) has a GPU forward, with or without cuDNN; the
 * names listed as not implemented have none.  Checked without a device. */
START_TEST(test_every_op_has_a_gpu_kernel_in_a_cuda_build) {
#ifdef MXR_HAVE_CUDA
  char missing[2048] = "";
  for (size_t i = 0; i < mxr_op_name_count(); i++) {
    const mxr_op *op;
    ck_assert_int_eq(mxr_op_find(mxr_op_name_at(i), &op), 0);
    bool canonical = strcmp(mxr_op_name_at(i), op->name) == 0; /* aliases: once */
    /* MXNet's names that libmxref lists but does not implement have no
     * kernel anywhere, and must not claim one on the GPU. */
    if (op->not_implemented) {
      ck_assert_msg(op->forward_gpu == NULL, "%s is not implemented yet has a GPU forward", op->name);
      continue;
    }
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

/* A wrong reference for _copy: every element off by one. */
static void off_by_one_ref(REF_ARGS) {
  REF_UNUSED;
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) out[0][j] = in[0][j] + 1;
}

/* The checker must be able to fail: a wrong reference is caught. */
START_TEST(test_checker_catches_wrong_reference) {
  struct oc_case c = {.op = "_copy", .nin = 1, .in_shapes = {OC_SHAPE(5)}, .forward_ref = off_by_one_ref};
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
  tcase_add_exit_test(tc, test_checker_catches_wrong_reference, 1);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
