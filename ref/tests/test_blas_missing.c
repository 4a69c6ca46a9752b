/*
 * Without OpenBLAS (op/blas.h): this program defines dlopen and dlerror
 * itself, so that every OpenBLAS name libmxref tries fails to open, as on
 * a host without the library.  An op that needs BLAS then fails with a
 * message naming the op, each file tried and the loader's reason; ops
 * without BLAS still run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "check_tap.h"
#include "invoke_util.h"
#include "op/blas.h"

#define NO_BLAS "no OpenBLAS on this test's host"

static const char *pending_error; /* what dlerror reports next */

/* The C library's dlopen for everything but OpenBLAS. */
void *dlopen(const char *file, int flags) {
  if (file && strstr(file, "openblas")) {
    pending_error = NO_BLAS;
    return NULL;
  }
  void *(*real)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
  return real(file, flags);
}

char *dlerror(void) {
  if (pending_error) {
    const char *e = pending_error;
    pending_error = NULL;
    return (char *)e;
  }
  char *(*real)(void) = (char *(*)(void))dlsym(RTLD_NEXT, "dlerror");
  return real();
}

START_TEST(test_an_op_needing_blas_names_what_was_tried) {
  const float x[4] = {1, 2, 3, 4}, y[4] = {5, 6, 7, 8};
  mxr_ndarray *in[2] = {tu_vector(x, 4), tu_vector(y, 4)}, *d, *flipped;
  /* the error comes from the call or, once the kernel ran, from the read */
  int rc = tu_invoke("dot", NULL, NULL, 2, in, &d);
  float v;
  if (rc == 0) rc = mxr_ndarray_sync_copy_to_cpu(d, &v, 1);
  ck_assert_int_ne(rc, 0);
  const char *msg = mxr_last_error();
  ck_assert_msg(!strncmp(msg, "dot: OpenBLAS could not be loaded (tried ", 41) &&
                    strstr(msg, "libopenblas.so.0") && strstr(msg, NO_BLAS),
                "message: %s", msg);
  ck_assert_ptr_null(mxr__blas("test"));
  ck_assert(!mxr__blas_loaded());
  ck_assert_int_eq(tu_invoke("flip", "axis", "0", 1, in, &flipped), 0); /* needs no BLAS */
  float got[4];
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(flipped, got, 4), 0);
  ck_assert(got[0] == 4 && got[3] == 1);
  mxr_ndarray_free(flipped);
  if (d) mxr_ndarray_free(d);
  mxr_ndarray_free(in[0]);
  mxr_ndarray_free(in[1]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("blas_missing");
  TCase *tc = tcase_create("blas_missing");
  tcase_add_test(tc, test_an_op_needing_blas_names_what_was_tried);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
