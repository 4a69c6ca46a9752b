# The float64 oracle of the numerics suite (harness/oracle*.c): a
# convenience library for mxcts-probe and its unit test.  Included from the
# top Makefile.am.  It depends on nothing in ref/ (docs/oracle.md).

noinst_LTLIBRARIES += harness/liboracle.la
harness_liboracle_la_SOURCES = \
	harness/oracle.h \
	harness/oracle.c \
	harness/oracle_params.c \
	harness/oracle_elemwise.c \
	harness/oracle_tensor.c \
	harness/oracle_nn.c \
	harness/oracle_conv.c \
	harness/oracle_cases.c
harness_liboracle_la_CPPFLAGS = -I$(top_srcdir)/harness
harness_liboracle_la_LIBADD = -lm

check_PROGRAMS += harness/tests/test_oracle
TESTS += harness/tests/test_oracle
harness_tests_test_oracle_SOURCES = harness/tests/test_oracle.c
harness_tests_test_oracle_CPPFLAGS = -I$(top_srcdir)/harness -I$(top_srcdir)/ref/tests
harness_tests_test_oracle_CFLAGS = $(TEST_CFLAGS)
harness_tests_test_oracle_LDADD = harness/liboracle.la ref/tests/libcheck_tap.la $(CHECK_LIBS) -lm
