# Imperative mode (ref/src/imperative): invoke, autograd, cached ops.
# Included from the top Makefile.am.

ref_libmxref_core_la_SOURCES += \
	ref/src/imperative/imperative_internal.h \
	ref/src/imperative/invoke.c \
	ref/src/imperative/autograd.c \
	ref/src/imperative/cached_op.c

mxrefinclude_HEADERS += ref/include/mxref/imperative.h

IMPERATIVE_TESTS = ref/tests/test_imperative
check_PROGRAMS += $(IMPERATIVE_TESTS)
TESTS += $(IMPERATIVE_TESTS)

ref_tests_test_imperative_SOURCES = ref/tests/test_imperative.c ref/tests/symbol_util.h
ref_tests_test_imperative_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_imperative_LDADD = $(TEST_LIBS)
