# The conformance harness (harness/, suites/): the mxcts library and
# program, its unit tests, the man page, the suites.  Included from the top
# Makefile.am.  See docs/harness.md.
#
# Harness tests never time anything real: the fake probe writes canned
# timings, so they may run beside other tests; the one real deadline (a
# process killed at its timeout) has a wide margin.

noinst_LTLIBRARIES += harness/libmxcts.la
harness_libmxcts_la_SOURCES = \
	harness/common.c harness/common.h \
	harness/jsonv.c harness/jsonv.h \
	harness/stats.c harness/stats.h \
	harness/suite.c harness/suite_structure.c harness/suite.h harness/suite_internal.h \
	harness/expect.c harness/expect.h \
	harness/result.c harness/result.h \
	harness/plan.c harness/plan_load.c harness/plan.h \
	harness/progress.c harness/progress.h \
	harness/runner.c harness/runner.h \
	harness/session.c harness/session.h \
	harness/judge.c harness/judge_eval.c harness/judge.h harness/judge_internal.h \
	harness/report.c harness/report_tap.c harness/report_junit.c harness/report_html.c \
	harness/report.h
harness_libmxcts_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/harness
harness_libmxcts_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
harness_libmxcts_la_LIBADD = $(JANSSON_LIBS) -lm

# bin_PROGRAMS is set later in the top Makefile.am, so mxcts gets its own
# directory variable (the same place, $(bindir)).
harnessbindir = $(bindir)
harnessbin_PROGRAMS = harness/mxcts
harness_mxcts_SOURCES = harness/mxcts.c
harness_mxcts_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/harness \
	-DMXCTS_BUILDDIR='"$(abs_top_builddir)"' -DMXCTS_SRCDIR='"$(abs_top_srcdir)"' \
	-DMXCTS_LIBDIR='"$(libdir)"' -DMXCTS_PKGDATADIR='"$(pkgdatadir)"'
harness_mxcts_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
harness_mxcts_LDADD = harness/libmxcts.la $(JANSSON_LIBS) -lm

dist_bin_SCRIPTS = harness/mxcts-parallel
dist_man1_MANS = harness/man/mxcts.1

# --- tests ------------------------------------------------------------------------
HARNESS_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/harness -I$(top_srcdir)/ref/tests \
	-DMXCTS_TEST_SRCDIR='"$(abs_top_srcdir)"' -DMXCTS_TEST_BUILDDIR='"$(abs_top_builddir)"'
HARNESS_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
HARNESS_TEST_LIBS = harness/libmxcts.la ref/tests/libcheck_tap.la $(CHECK_LIBS) $(JANSSON_LIBS) -lm

check_PROGRAMS += harness/tests/fake_probe
harness_tests_fake_probe_SOURCES = harness/tests/fake_probe.c
harness_tests_fake_probe_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
harness_tests_fake_probe_LDADD = $(JANSSON_LIBS) -lm

HARNESS_TESTS = \
	harness/tests/test_stats \
	harness/tests/test_suite \
	harness/tests/test_result \
	harness/tests/test_expect \
	harness/tests/test_runner \
	harness/tests/test_report \
	harness/tests/test_probe \
	harness/tests/test_probe_trace
check_PROGRAMS += $(HARNESS_TESTS)
TESTS += $(HARNESS_TESTS) harness/tests/test_cli.sh
EXTRA_DIST += harness/tests/test_cli.sh

harness_tests_test_stats_SOURCES = harness/tests/test_stats.c
harness_tests_test_stats_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_stats_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_stats_LDADD = $(HARNESS_TEST_LIBS)
harness_tests_test_suite_SOURCES = harness/tests/test_suite.c
harness_tests_test_suite_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_suite_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_suite_LDADD = $(HARNESS_TEST_LIBS)
harness_tests_test_result_SOURCES = harness/tests/test_result.c
harness_tests_test_result_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_result_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_result_LDADD = $(HARNESS_TEST_LIBS)
harness_tests_test_expect_SOURCES = harness/tests/test_expect.c
harness_tests_test_expect_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_expect_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_expect_LDADD = $(HARNESS_TEST_LIBS)
harness_tests_test_runner_SOURCES = harness/tests/test_runner.c harness/tests/harness_util.c \
	harness/tests/harness_util.h
harness_tests_test_runner_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_runner_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_runner_LDADD = $(HARNESS_TEST_LIBS)
harness_tests_test_report_SOURCES = harness/tests/test_report.c harness/tests/harness_util.c \
	harness/tests/harness_util.h
harness_tests_test_report_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_report_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_report_LDADD = $(HARNESS_TEST_LIBS)
harness_tests_test_probe_SOURCES = harness/tests/test_probe.c harness/tests/harness_util.c \
	harness/tests/harness_util.h
harness_tests_test_probe_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_probe_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_probe_LDADD = $(HARNESS_TEST_LIBS)
harness_tests_test_probe_trace_SOURCES = harness/tests/test_probe_trace.c \
	harness/tests/harness_util.c harness/tests/harness_util.h \
	harness/probe_trace.c harness/probe_trace.h
harness_tests_test_probe_trace_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_probe_trace_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_probe_trace_LDADD = $(HARNESS_TEST_LIBS)

# The harness tests alone.
check-harness:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(HARNESS_TESTS) harness/tests/test_cli.sh"

.PHONY: check-harness
