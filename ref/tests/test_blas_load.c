/*
 * OpenBLAS is loaded on first use (op/blas.h): a process that runs ops
 * without BLAS never maps it, the first dot loads it and computes through
 * it, and the threading policy divides the cores among the workers that
 * may run BLAS at once.
 */
#include <stdio.h>
#include <string.h>

#include "check_tap.h"
#include "invoke_util.h"
#include "op/blas.h"

/* The op's output; the call must succeed. */
static mxr_ndarray *invoke(const char *name, const char *key, const char *value, int nin,
                           mxr_ndarray **in) {
  mxr_ndarray *out;
  ck_assert_msg(tu_invoke(name, key, value, nin, in, &out) == 0, "%s", mxr_last_error());
  return out;
}

START_TEST(test_openblas_is_loaded_by_the_first_dot) {
  const float x[4] = {1, 2, 3, 4}, y[4] = {5, 6, 7, 8};
  ck_assert_msg(!mxr__blas_loaded(), "OpenBLAS is mapped before any op ran");
  mxr_ndarray *in[2] = {tu_vector(x, 4), tu_vector(y, 4)};
  mxr_ndarray *flipped = invoke("flip", "axis", "0", 1, in); /* needs no BLAS */
  float got[4];
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(flipped, got, 4), 0);
  ck_assert(got[0] == 4 && got[3] == 1);
  ck_assert_msg(!mxr__blas_loaded(), "OpenBLAS is mapped after an op without BLAS");
  mxr_ndarray *d = invoke("dot", NULL, NULL, 2, in);
  float v;
  ck_assert_msg(mxr_ndarray_sync_copy_to_cpu(d, &v, 1) == 0, "%s", mxr_last_error());
  ck_assert(v == 70.0f);
  ck_assert_msg(mxr__blas_loaded(), "dot ran, but OpenBLAS is not mapped");
  ck_assert_ptr_nonnull(mxr__blas("test"));
  mxr_ndarray_free(d);
  mxr_ndarray_free(flipped);
  mxr_ndarray_free(in[0]);
  mxr_ndarray_free(in[1]);
}
END_TEST

START_TEST(test_blas_threads_share_the_cores) {
  ck_assert_int_eq(mxr__blas_threads_for(8, 1), 8);  /* the naive engine */
  ck_assert_int_eq(mxr__blas_threads_for(8, 2), 4);  /* two CPU workers */
  ck_assert_int_eq(mxr__blas_threads_for(2, 16), 1); /* the pooled engine */
  ck_assert_int_eq(mxr__blas_threads_for(0, 0), 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("blas_load");
  TCase *tc = tcase_create("blas_load");
  tcase_add_test(tc, test_openblas_is_loaded_by_the_first_dot);
  tcase_add_test(tc, test_blas_threads_share_the_cores);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
