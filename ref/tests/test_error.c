/* Status codes and the per-thread last-error message (mxref/error.h). */
#include <pthread.h>
#include <string.h>

#include "check_tap.h"
#include "mxref/error.h"

START_TEST(test_set_error_returns_status_and_stores_message) {
  ck_assert_int_eq(mxr_set_error(MXR_EINVAL, "bad %s %d", "shape", 3), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "bad shape 3");
}
END_TEST

static void *other_thread(void *arg) {
  (void)arg;
  ck_assert_str_eq(mxr_last_error(), ""); /* a new thread starts clean */
  mxr_set_error(MXR_ENOMEM, "from the other thread");
  return NULL;
}

START_TEST(test_message_is_per_thread) {
  mxr_set_error(MXR_EOP, "main thread message");
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, other_thread, NULL), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_str_eq(mxr_last_error(), "main thread message");
}
END_TEST

START_TEST(test_long_message_is_truncated) {
  char big[3 * MXR_ERROR_MAX];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  mxr_set_error(MXR_EINVAL, "%s", big);
  ck_assert_uint_eq(strlen(mxr_last_error()), MXR_ERROR_MAX - 1);
}
END_TEST

START_TEST(test_code_names_and_descriptions) {
  ck_assert_str_eq(mxr_err_name(MXR_OK), "MXR_OK");
  ck_assert_str_eq(mxr_err_name(MXR_EINVAL), "MXR_EINVAL");
  ck_assert_str_eq(mxr_err_name(MXR_ECONFIG), "MXR_ECONFIG");
  ck_assert_str_eq(mxr_strerror(MXR_ENOMEM), "out of memory");
  ck_assert_str_eq(mxr_strerror(-1000), "unknown status");
  ck_assert_str_eq(mxr_err_name(-1000), "MXR_E?");
  /* Every code in the table has a distinct name and a description. */
  for (int st = 0; st >= MXR_ECONFIG; st--) {
    ck_assert_str_ne(mxr_strerror(st), "unknown status");
    for (int other = st - 1; other >= MXR_ECONFIG; other--)
      ck_assert_str_ne(mxr_err_name(st), mxr_err_name(other));
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("error");
  TCase *tc = tcase_create("error");
  tcase_add_test(tc, test_set_error_returns_status_and_stores_message);
  tcase_add_test(tc, test_message_is_per_thread);
  tcase_add_test(tc, test_long_message_is_truncated);
  tcase_add_test(tc, test_code_names_and_descriptions);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
