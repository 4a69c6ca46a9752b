# Mock implementations (harness/tests/mock_*.c) and the test that mxcts
# catches each of them (harness/tests/test_mocks.c).  Included from
# Makefile.am.
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
	harness/tests/mock_noisy.la

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
harness_tests_mock_noisy_la_CFLAGS = $(MOCK_CFLAGS)
harness_tests_mock_noisy_la_LDFLAGS = $(MOCK_LDFLAGS)
harness_tests_mock_noisy_la_LIBADD = $(MOCK_LIBS)

# The test times real work (orderings against the nobulk and noisy mocks):
# it starts after every other test except the conformance run, which in turn
# waits for it (harness/probe_local.mk), also under `make -j`.
check_PROGRAMS += harness/tests/test_mocks
TESTS += harness/tests/mocks.sh
EXTRA_DIST += harness/tests/mocks.sh
harness_tests_test_mocks_SOURCES = harness/tests/test_mocks.c harness/tests/harness_util.c \
	harness/tests/harness_util.h
harness_tests_test_mocks_CPPFLAGS = $(HARNESS_TEST_CPPFLAGS)
harness_tests_test_mocks_CFLAGS = $(HARNESS_TEST_CFLAGS)
harness_tests_test_mocks_LDADD = $(HARNESS_TEST_LIBS)
MOCKS_LOG = harness/tests/mocks.sh.log
MOCKS_AFTER = $(filter-out $(CONFORMANCE_LOG) $(CONFORMANCE_MXNET_LOG) $(MOCKS_LOG),$(TEST_LOGS))
$(MOCKS_LOG): $(MOCKS_AFTER)

# The mocks alone.
check-mocks:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=harness/tests/mocks.sh

.PHONY: check-mocks

# libFuzzer targets of the harness parsers (build-aux/run_fuzz.sh, `make fuzz`).
EXTRA_DIST += harness/tests/fuzz_suite.c harness/tests/fuzz_result.c \
	harness/tests/corpus harness/tests/data/fuzz_harness.dict
