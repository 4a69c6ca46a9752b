/*
 * Test support: run a Check suite and report it as TAP on stdout.
 *
 * Each test runs in its own forked process (Check's default), so a crash
 * fails that test only.  Set CK_FORK=no to debug in one process.
 */
#ifndef MXR_TESTS_CHECK_TAP_H
#define MXR_TESTS_CHECK_TAP_H

#include <check.h>

/* Run `s` (takes ownership), print TAP, return the process exit status:
 * 0 when every test passed, 1 otherwise. */
int mxr_test_run(Suite *s);

/* Print a TAP skip plan with the reason and return 77 (exit with it). */
int mxr_test_skip_all(const char *reason);

#endif /* MXR_TESTS_CHECK_TAP_H */
