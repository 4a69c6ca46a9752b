/* Expectation files (suite/suite.h). */
#include <check.h>
#include <string.h>

#include "check_tap.h"
#include "common/common.h"
#include "suite/suite.h"

START_TEST(test_parse_and_match) {
  const char *text = "# MXNet 1.9.1\n\n"
                     "fail  bulking-symbolic/half-*   the half-bulked configs are not faster on 2 cores\n"
                     "  flaky async/push-returns-early  noisy on a shared machine  \n"
                     "skip numerics                   no oracle for this build\n"
                     "unsupported engine              no MXEnginePushSyncND before 1.5.0\n"
                     "exit-crash async/*              dies at exit after its result\n";
  struct mxcts_expectations e;
  ck_assert_msg(mxcts_expect_parse(text, "x.txt", &e) == 0, "%s", mxcts_last_error());
  ck_assert_int_eq(e.n, 5);
  /* exit-crash lines combine with verdict lines: each lookup sees its own */
  ck_assert_int_eq(mxcts_expect_exit_crash(&e, "async", "push-returns-early")->line, 7);
  ck_assert_ptr_null(mxcts_expect_exit_crash(&e, "numerics", "anything"));
  ck_assert_ptr_null(mxcts_expect_match(&e, "async", "wait-once"));
  const struct mxcts_expect_entry *m = mxcts_expect_match(&e, "bulking-symbolic", "half-vs-none");
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(m->kind, MXCTS_EXPECT_FAIL);
  ck_assert_int_eq(m->line, 3);
  ck_assert_str_eq(m->reason, "the half-bulked configs are not faster on 2 cores");
  ck_assert_ptr_null(mxcts_expect_match(&e, "bulking-symbolic", "full-vs-half"));
  ck_assert_int_eq(mxcts_expect_match(&e, "async", "push-returns-early")->kind, MXCTS_EXPECT_FLAKY);
  ck_assert_str_eq(mxcts_expect_match(&e, "async", "push-returns-early")->reason, "noisy on a shared machine");
  ck_assert_ptr_nonnull(mxcts_expect_skips_suite(&e, "numerics"));
  ck_assert_ptr_null(mxcts_expect_skips_suite(&e, "async"));
  ck_assert_int_eq(mxcts_expect_match(&e, "numerics", "anything")->kind, MXCTS_EXPECT_SKIP);
  ck_assert_int_eq(mxcts_expect_match(&e, "engine", "reads-overlap")->kind, MXCTS_EXPECT_UNSUPPORTED);
  ck_assert_ptr_null(mxcts_expect_skips_suite(&e, "engine")); /* unsupported still runs the suite */
  mxcts_expect_free(&e);
  ck_assert_int_eq(mxcts_expect_parse("", "empty.txt", &e), 0);
  ck_assert_int_eq(e.n, 0);
  mxcts_expect_free(&e);
}
END_TEST

static const struct bad {
  const char *text, *message;
} bad[] = {
    {"xfail a/b reason\n", "x.txt:1: unknown kind \"xfail\" (known: fail, flaky, skip, unsupported, exit-crash)"},
    {"# c\nfail a/b\n", "x.txt:2: expected \"fail SUITE/ASSERTION REASON...\" (the reason is missing)"},
    {"fail\n", "x.txt:1: expected \"fail SUITE/ASSERTION REASON...\" (a pattern is missing)"},
    {"fail a/b/c why\n", "x.txt:1: \"a/b/c\" is not a SUITE/ASSERTION pattern"},
    {"fail a$/b why\n", "is not a SUITE/ASSERTION pattern"},
};

START_TEST(test_malformed) {
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct mxcts_expectations e;
    ck_assert_msg(mxcts_expect_parse(bad[i].text, "x.txt", &e) != 0, "case %zu parsed", i);
    ck_assert_msg(strstr(mxcts_last_error(), bad[i].message), "case %zu: \"%s\" lacks \"%s\"", i,
                  mxcts_last_error(), bad[i].message);
  }
  struct mxcts_expectations e;
  ck_assert_int_ne(mxcts_expect_load("/nonexistent.txt", &e), 0);
  ck_assert_ptr_nonnull(strstr(mxcts_last_error(), "/nonexistent.txt"));
}
END_TEST

/* The shipped expectation files parse. */
START_TEST(test_shipped) {
  const char *files[] = {MXCTS_TEST_SRCDIR "/suites/expectations/libmxref.txt",
                         MXCTS_TEST_SRCDIR "/suites/expectations/mxnet-1.4.1.txt",
                         MXCTS_TEST_SRCDIR "/suites/expectations/mxnet-1.5.1.txt",
                         MXCTS_TEST_SRCDIR "/suites/expectations/mxnet-1.6.0.txt",
                         MXCTS_TEST_SRCDIR "/suites/expectations/mxnet-1.7.0.post2.txt",
                         MXCTS_TEST_SRCDIR "/suites/expectations/mxnet-1.8.0.post0.txt",
                         MXCTS_TEST_SRCDIR "/suites/expectations/mxnet-native-1.8.0.post0.txt",
                         MXCTS_TEST_SRCDIR "/suites/expectations/mxnet-1.9.1.txt"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    struct mxcts_expectations e;
    ck_assert_msg(mxcts_expect_load(files[i], &e) == 0, "%s", mxcts_last_error());
    mxcts_expect_free(&e);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("expect");
  TCase *tc = tcase_create("expect");
  tcase_add_test(tc, test_parse_and_match);
  tcase_add_test(tc, test_malformed);
  tcase_add_test(tc, test_shipped);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
