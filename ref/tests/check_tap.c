/* Test support: Check suites reported as TAP (check_tap.h). */
#include <stdio.h>

#include "check_tap.h"

int mxr_test_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  fflush(stdout);
  srunner_set_tap(sr, "-"); /* "-" is stdout in Check */
  srunner_run_all(sr, CK_SILENT);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}

int mxr_test_skip_all(const char *reason) {
  printf("1..0 # SKIP %s\n", reason);
  fflush(stdout);
  return 77;
}
