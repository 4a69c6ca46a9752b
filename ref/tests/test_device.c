/*
 * Device discovery (mxref/device.h).  Runs on every machine: the checks that
 * need a GPU apply only when one is present, the rest always.
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "check_tap.h"
#include "mxref/mxref.h"

START_TEST(device_build_flags) {
#ifdef MXR_HAVE_CUDA
  ck_assert_int_eq(mxr_built_with_cuda(), 1);
#else
  ck_assert_int_eq(mxr_built_with_cuda(), 0);
  ck_assert_int_eq(mxr_built_with_cudnn(), 0); /* no cuDNN without CUDA */
#endif
#ifdef MXR_HAVE_CUDNN
  ck_assert_int_eq(mxr_built_with_cudnn(), 1);
#else
  ck_assert_int_eq(mxr_built_with_cudnn(), 0);
#endif
}
END_TEST

START_TEST(device_count_never_fails) {
  /* The probe must not disturb the caller's last error. */
  mxr_set_error(MXR_EINVAL, "marker before the probe");
  int n = mxr_gpu_count();
  ck_assert_int_ge(n, 0);
  ck_assert_str_eq(mxr_last_error(), "marker before the probe");
  /* Cached: the same answer every time. */
  ck_assert_int_eq(mxr_gpu_count(), n);
  const char *reason = mxr_gpu_unavailable_reason();
  ck_assert_ptr_nonnull(reason);
  if (n == 0) {
    ck_assert_msg(reason[0] != '\0', "0 GPUs needs a reason");
#ifndef MXR_HAVE_CUDA
    ck_assert_str_eq(reason, "built without CUDA");
#endif
  } else {
    ck_assert_str_eq(reason, "");
  }
}
END_TEST

START_TEST(device_info) {
  int n = mxr_gpu_count();
  struct mxr_gpu_info info;
  ck_assert_int_eq(mxr_gpu_get_info(0, NULL), MXR_EINVAL);
  ck_assert_int_eq(mxr_gpu_get_info(-1, &info), MXR_ENODEV);
  ck_assert_int_eq(mxr_gpu_get_info(n, &info), MXR_ENODEV);
  ck_assert_msg(strstr(mxr_last_error(), "not available") != NULL, "%s", mxr_last_error());
  if (n == 0) {
    ck_assert_int_eq(mxr_gpu_get_info(0, &info), MXR_ENODEV);
    /* The message carries the reason. */
    ck_assert_msg(strstr(mxr_last_error(), mxr_gpu_unavailable_reason()) != NULL, "%s",
                  mxr_last_error());
  }
  /* On a GPU machine, every device describes itself. */
  for (int id = 0; id < n; id++) {
    memset(&info, 0, sizeof info);
    ck_assert_msg(mxr_gpu_get_info(id, &info) == 0, "gpu(%d): %s", id, mxr_last_error());
    ck_assert_msg(info.name[0] != '\0', "gpu(%d) has no name", id);
    ck_assert_msg(memchr(info.name, '\0', sizeof info.name) != NULL, "name not terminated");
    ck_assert_msg(info.total_mem > 0, "gpu(%d) %s reports no memory", id, info.name);
    ck_assert_int_gt(info.cc_major, 0);
    ck_assert_int_gt(info.multiprocessors, 0);
  }
}
END_TEST

static Suite *device_suite(void) {
  Suite *s = suite_create("device");
  TCase *tc = tcase_create("device");
  tcase_set_timeout(tc, 30); /* the first CUDA call can be slow */
  tcase_add_test(tc, device_build_flags);
  tcase_add_test(tc, device_count_never_fails);
  tcase_add_test(tc, device_info);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return mxr_test_run(device_suite()); }
