# The harness tests (harness/tests): unit tests, mock implementations, and
# the conformance runs.  Included from the top Makefile.am.
#
# Harness unit tests never time anything real: the fake probe writes canned
# timings, so they may run beside other tests; the one real deadline (a
# process killed at its timeout) has a wide margin.

HARNESS_TEST_CPPFLAGS = $(HARNESS_CPPFLAGS) -I$(top_srcdir)/ref/tests \
	-DMXCTS_TEST_SRCDIR='"$(abs_top_srcdir)"' -DMXCTS_TEST_BUILDDIR='"$(abs_top_builddir)"'
HARNESS_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
HARNESS_TEST_LIBS = harness/libmxcts.la ref/tests/libcheck_tap.la $(CHECK_LIBS) $(JANSSON_LIBS) -lm

check_PROGRAMS += harness/tests/fake_probe
harness_tests_fake_probe_SOURCES = harness/tests/fake_probe.c
harness_tests_fake_probe_CPPFLAGS = $(HARNESS_CPPFLAGS)
harness_tests_fake_probe_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
harness_tests_fake_probe_LDADD = harness/common/libmxcts_common.la $(JANSSON_LIBS) -lm

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
TESTS += $(HARNESS_TESTS) harness/tests/test_cli.sh harness/tests/test_compare.sh \
	harness/tests/test_python.sh harness/tests/test_mutants.sh harness/tests/test_interrupts.sh
EXTRA_DIST += harness/tests/test_cli.sh harness/tests/test_compare.sh harness/tests/tap_util.sh \
	harness/tests/test_python.sh harness/tests/fake_python.sh harness/tests/test_mutants.sh \
	harness/tests/test_interrupts.sh

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
	harness/probe/probe_trace.c harness/probe/probe.h
harness_tests_test_probe_trace_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_probe_trace_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_probe_trace_LDADD = $(HARNESS_TEST_LIBS)

# The harness tests alone.
check-harness:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(HARNESS_TESTS) harness/tests/test_cli.sh harness/tests/test_compare.sh harness/tests/test_python.sh harness/tests/test_interrupts.sh"

.PHONY: check-harness

# The oracle's unit test (no Jansson: the oracle and libmxcts_common only).
check_PROGRAMS += harness/tests/test_oracle
TESTS += harness/tests/test_oracle
harness_tests_test_oracle_SOURCES = harness/tests/test_oracle.c
harness_tests_test_oracle_CPPFLAGS = $(HARNESS_CPPFLAGS) -I$(top_srcdir)/ref/tests
harness_tests_test_oracle_CFLAGS = $(TEST_CFLAGS)
harness_tests_test_oracle_LDADD = harness/oracle/liboracle.la harness/common/libmxcts_common.la \
	ref/tests/libcheck_tap.la $(CHECK_LIBS) -lm

# Mock implementations (harness/tests/mock_*.c) and the test that mxcts
# catches each of them (harness/tests/test_mocks.c).
#
# Each mock is a shared library linking libmxref.so and replacing a few C
# API functions; -rpath makes libtool build a real shared library, which
# check_LTLIBRARIES alone would not.

MOCK_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath /nowhere
MOCK_LIBS = ref/libmxref.la -ldl
MOCK_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/harness/tests

check_LTLIBRARIES = \
	harness/tests/mock_crash.la \
	harness/tests/mock_hang.la \
	harness/tests/mock_nobulk.la \
	harness/tests/mock_badgrad.la \
	harness/tests/mock_noisy.la \
	harness/tests/mock_engine.la \
	harness/tests/mock_old.la

harness_tests_mock_crash_la_SOURCES = harness/tests/mock_crash.c harness/tests/mock.h
harness_tests_mock_crash_la_CFLAGS = $(MOCK_CFLAGS)
harness_tests_mock_crash_la_LDFLAGS = $(MOCK_LDFLAGS)
harness_tests_mock_crash_la_LIBADD = $(MOCK_LIBS)
harness_tests_mock_hang_la_SOURCES = harness/tests/mock_hang.c harness/tests/mock.h
harness_tests_mock_hang_la_CFLAGS = $(MOCK_CFLAGS)
harness_tests_mock_hang_la_LDFLAGS = $(MOCK_LDFLAGS)
harness_tests_mock_hang_la_LIBADD = $(MOCK_LIBS)
harness_tests_mock_nobulk_la_SOURCES = harness/tests/mock_nobulk.c harness/tests/mock.h
harness_tests_mock_nobulk_la_CFLAGS = $(MOCK_CFLAGS)
harness_tests_mock_nobulk_la_LDFLAGS = $(MOCK_LDFLAGS)
harness_tests_mock_nobulk_la_LIBADD = $(MOCK_LIBS)
harness_tests_mock_badgrad_la_SOURCES = harness/tests/mock_badgrad.c harness/tests/mock.h
harness_tests_mock_badgrad_la_CFLAGS = $(MOCK_CFLAGS)
harness_tests_mock_badgrad_la_LDFLAGS = $(MOCK_LDFLAGS)
harness_tests_mock_badgrad_la_LIBADD = $(MOCK_LIBS)
harness_tests_mock_noisy_la_SOURCES = harness/tests/mock_noisy.c harness/tests/mock.h
harness_tests_mock_noisy_la_CPPFLAGS = $(HARNESS_CPPFLAGS)
harness_tests_mock_noisy_la_CFLAGS = $(MOCK_CFLAGS)
harness_tests_mock_noisy_la_LDFLAGS = $(MOCK_LDFLAGS)
harness_tests_mock_noisy_la_LIBADD = harness/common/libmxcts_common.la $(MOCK_LIBS)
# engine: one planted engine bug, by MOCK_ENGINE_BUG (nowait, serial)
harness_tests_mock_engine_la_SOURCES = harness/tests/mock_engine.c harness/tests/mock.h
harness_tests_mock_engine_la_CFLAGS = $(MOCK_CFLAGS)
harness_tests_mock_engine_la_LDFLAGS = $(MOCK_LDFLAGS)
harness_tests_mock_engine_la_LIBADD = $(MOCK_LIBS)
# old: an older release's C API, built from libmxref's objects (not libmxref.so,
# which exports what this mock hides) with its own version script
harness_tests_mock_old_la_SOURCES = harness/tests/mock_old.c
harness_tests_mock_old_la_CFLAGS = $(MOCK_CFLAGS)
harness_tests_mock_old_la_LDFLAGS = $(MOCK_LDFLAGS) \
	-Wl,--version-script=$(top_srcdir)/harness/tests/mock_old.map
harness_tests_mock_old_la_LIBADD = ref/libmxref_core.la
harness_tests_mock_old_la_DEPENDENCIES = ref/libmxref_core.la $(top_srcdir)/harness/tests/mock_old.map
EXTRA_DIST += harness/tests/mock_old.map

# The test times real work (orderings against the nobulk and noisy mocks):
# it starts after every other test except the conformance run, which in turn
# waits for it (below), also under `make -j`.
check_PROGRAMS += harness/tests/test_mocks
TESTS += harness/tests/mocks.sh
EXTRA_DIST += harness/tests/mocks.sh
harness_tests_test_mocks_SOURCES = harness/tests/test_mocks.c harness/tests/harness_util.c \
	harness/tests/harness_util.h
harness_tests_test_mocks_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_mocks_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_mocks_LDADD = $(HARNESS_TEST_LIBS)
MOCKS_LOG = harness/tests/mocks.sh.log
MOCKS_AFTER = $(filter-out $(CONFORMANCE_LOG) $(CONFORMANCE_MXNET_LOG) $(MXNET_MATRIX_LOG) $(MOCKS_LOG),$(TEST_LOGS))
$(MOCKS_LOG): $(MOCKS_AFTER)

# The mocks alone.
check-mocks:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=harness/tests/mocks.sh

.PHONY: check-mocks

# Mutation testing: each patch of harness/tests/mutants/ applied in turn to
# a copy of the tree, built, and judged by the assertions its header names
# (build-aux/check-mutants.sh); prints the kill rate.  Not part of
# `make check` (minutes); test_mutants.sh checks there that every patch still
# applies.  MUTANTS="NAME ..." runs only those.
check-mutants: all
	$(SHELL) $(top_srcdir)/build-aux/check-mutants.sh $(abs_top_srcdir) $(abs_top_builddir) $(MUTANTS)

# The generated mutation score (build-aux/check-mutants-generated.sh):
# N mutants per folder of ref/src (engine, executor, imperative, op) made by
# universalmutator, sampled, built and judged by the folder's suites.
N = 10
check-mutants-generated: all
	N=$(N) $(SHELL) $(top_srcdir)/build-aux/check-mutants-generated.sh $(abs_top_srcdir) $(abs_top_builddir)

.PHONY: check-mutants check-mutants-generated
EXTRA_DIST += build-aux/check-mutants.sh build-aux/check-mutants-generated.sh build-aux/mutants-lib.sh \
	harness/tests/mutants

# libFuzzer targets of the harness parsers (build-aux/run_fuzz.sh, `make fuzz`).
EXTRA_DIST += harness/tests/fuzz_suite.c harness/tests/fuzz_result.c harness/tests/fuzz_plan.c \
	harness/tests/corpus harness/tests/data/fuzz_harness.dict

# The conformance suites against libmxref.so, as one TAP test.  It times
# work, so it starts only after every other test has finished, also under
# `make -j` (automake runs test logs as make targets; this orders them).
TESTS += harness/tests/conformance.sh
EXTRA_DIST += harness/tests/conformance.sh harness/tests/conformance_util.sh \
	harness/tests/sanitized-expectations.txt suites
# (A script's log is NAME.sh.log, .sh not being in TEST_EXTENSIONS.  The
# target is named through a variable: automake owns the rule of a test's log,
# and would replace one that names it literally, prerequisites and all.)
CONFORMANCE_LOG = harness/tests/conformance.sh.log
CONFORMANCE_AFTER = $(filter-out $(CONFORMANCE_LOG) $(CONFORMANCE_MXNET_LOG) $(MXNET_MATRIX_LOG),$(TEST_LOGS))
$(CONFORMANCE_LOG): $(CONFORMANCE_AFTER)
CLEANFILES += -r harness/tests/conformance.out

# The same suites against MXNet 1.9.1's libmxnet.so: skipped in `make check`,
# run by `make check-mxnet` (ref/src/capi/local.mk), after everything else.
TESTS += harness/tests/conformance_mxnet.sh
EXTRA_DIST += harness/tests/conformance_mxnet.sh
CONFORMANCE_MXNET_LOG = harness/tests/conformance_mxnet.sh.log
$(CONFORMANCE_MXNET_LOG): $(filter-out $(CONFORMANCE_MXNET_LOG) $(MXNET_MATRIX_LOG),$(TEST_LOGS))
CLEANFILES += -r harness/tests/conformance-mxnet.out

# Every MXNet release of ci/mxnet-matrix.sh, judged with its expectation
# file: skipped in `make check`; `make check-mxnet-matrix` runs all suites,
# `make check-mxnet-matrix-untimed` the untimed ones (the part ci/check.sh
# runs).  Wheels are cached in ~/.cache/mxcts/wheels ($MXCTS_WHEEL_CACHE).
TESTS += harness/tests/mxnet_matrix.sh
EXTRA_DIST += harness/tests/mxnet_matrix.sh ci/mxnet-matrix.sh
MXNET_MATRIX_LOG = harness/tests/mxnet_matrix.sh.log
$(MXNET_MATRIX_LOG): $(filter-out $(MXNET_MATRIX_LOG),$(TEST_LOGS))
CLEANFILES += -r harness/tests/mxnet-matrix.out harness/tests/mxnet-matrix.out.log \
	harness/tests/mxnet-matrix.out.fetch-failures

check-mxnet-matrix: all
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=harness/tests/mxnet_matrix.sh \
	  TESTS_ENVIRONMENT="MXNET_MATRIX_PARTS=all"
check-mxnet-matrix-untimed: all
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=harness/tests/mxnet_matrix.sh \
	  TESTS_ENVIRONMENT="MXNET_MATRIX_PARTS=untimed"

.PHONY: check-mxnet-matrix check-mxnet-matrix-untimed
