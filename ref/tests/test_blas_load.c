/*
 * OpenBLAS is loaded on first use (op/blas.h): a process that runs ops
 * without BLAS never maps it, the first dot loads it and computes through
 * it, and the threading policy divides the cores among the workers that
 * may run BLAS at once, capped by MXNET_OMP_MAX_THREADS.  The cap is read
 * at library load, so those checks run this program again as a child with
 * the environment they need.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_tap.h"
#include "child_process.h"
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
  ck_assert_int_eq(mxr__blas_threads_for(8, 1, 0), 8);  /* the naive engine */
  ck_assert_int_eq(mxr__blas_threads_for(8, 2, 0), 4);  /* two CPU workers */
  ck_assert_int_eq(mxr__blas_threads_for(2, 16, 0), 1); /* the pooled engine */
  ck_assert_int_eq(mxr__blas_threads_for(0, 0, 0), 1);
}
END_TEST

START_TEST(test_omp_max_threads_caps_the_share) {
  ck_assert_int_eq(mxr__blas_threads_for(8, 1, 3), 3);
  ck_assert_int_eq(mxr__blas_threads_for(8, 2, 3), 3);
  ck_assert_int_eq(mxr__blas_threads_for(8, 4, 3), 2); /* below the cap: the share */
  ck_assert_int_eq(mxr__blas_threads_for(8, 1, 1), 1);
  ck_assert_int_eq(mxr__blas_threads_for(2, 16, 5), 1);
}
END_TEST

/* ---- in a process of its own --------------------------------------------- */

#define CHILD_FLAG "--child-blas-threads"


/* Runs in the child, outside any Check test (so without ck_assert and the
 * tu_ helpers that use it): one dot, then the threads OpenBLAS uses. */
static int child_main(void) {
  const float x[2] = {1, 2};
  int64_t len = 2;
  mxr_engine *eng;
  mxr_ndarray *in[2] = {NULL, NULL}, *out[1] = {NULL};
  const mxr_op *op;
  mxr_op_params *p = NULL;
  int nout = 0;
  float v = 0;
  int rc = mxr_engine_default(&eng);
  for (int i = 0; i < 2 && !rc; i++) {
    rc = mxr_ndarray_create(eng, &len, 1, mxr_cpu(0), MXR_FLOAT32, 0, &in[i]);
    if (!rc) rc = mxr_ndarray_sync_copy_from_cpu(in[i], x, 2);
  }
  if (!rc) rc = mxr_op_find("dot", &op);
  if (!rc) rc = mxr_op_params_parse(op, 0, NULL, NULL, &p);
  if (!rc) rc = mxr_imperative_invoke(op, p, 2, in, &nout, out);
  if (!rc) rc = mxr_ndarray_sync_copy_to_cpu(out[0], &v, 1);
  if (rc) {
    printf("error=%s\n", mxr_last_error());
    return 1;
  }
  printf("dot=%g\nthreads=%d\n", (double)v, mxr__blas_num_threads());
  mxr_op_params_free(p);
  mxr_ndarray_free(out[0]);
  mxr_ndarray_free(in[0]);
  mxr_ndarray_free(in[1]);
  return fflush(stdout) == 0 ? 0 : 1;
}

/* Run this program as a child with the NaiveEngine (the policy's share is
 * every core) and, of the variables that steer BLAS threads, only `add`
 * and `add2` (either may be NULL); returns the threads it reports. */
static int child_threads(const char *add, const char *add2) {
  static const char *const drop[] = {"MXNET_", "OMP_NUM_THREADS=", "OPENBLAS_NUM_THREADS=", NULL};
  const char *env[] = {"MXNET_ENGINE_TYPE=NaiveEngine", add, add2, NULL};
  if (!add) env[1] = add2, env[2] = NULL;
  char *argv[] = {"test_blas_load", CHILD_FLAG, NULL};
  char *out = tu_run_self(argv, drop, env);
  ck_assert_msg(strstr(out, "dot=5\n"), "%s", out);
  const char *t = strstr(out, "threads=");
  ck_assert_msg(t, "%s", out);
  int n = atoi(t + 8);
  free(out);
  return n;
}

static int cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (int)n;
}

START_TEST(test_omp_max_threads_in_a_process) {
  int all = child_threads(NULL, NULL);
  ck_assert_msg(all == cores(), "NaiveEngine without a cap: %d BLAS threads, %d cores", all, cores());
  ck_assert_int_eq(child_threads("MXNET_OMP_MAX_THREADS=1", NULL), 1);
  ck_assert_int_eq(child_threads("MXNET_OMP_MAX_THREADS=0", NULL), all);
  ck_assert_int_eq(child_threads("MXNET_OMP_MAX_THREADS=1000", NULL), all);
  if (cores() < 2) {
    printf("# one core: a cap above 1 and OMP_NUM_THREADS winning over it look alike here\n");
    return;
  }
  ck_assert_int_eq(child_threads("MXNET_OMP_MAX_THREADS=2", NULL), 2);
  /* OMP_NUM_THREADS is the user's explicit choice: OpenBLAS keeps it */
  ck_assert_int_eq(child_threads("MXNET_OMP_MAX_THREADS=1", "OMP_NUM_THREADS=2"), 2);
}
END_TEST

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], CHILD_FLAG) == 0) return child_main();
  Suite *s = suite_create("blas_load");
  TCase *tc = tcase_create("blas_load");
  tcase_add_test(tc, test_openblas_is_loaded_by_the_first_dot);
  tcase_add_test(tc, test_blas_threads_share_the_cores);
  tcase_add_test(tc, test_omp_max_threads_caps_the_share);
  tcase_add_test(tc, test_omp_max_threads_in_a_process);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
