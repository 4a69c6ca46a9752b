# The graph executor (ref/src/executor): gradient graph, plan, segments.
# Included from the top Makefile.am.

ref_libmxref_core_la_SOURCES += \
	ref/src/executor/executor_internal.h \
	ref/src/executor/gradient.c \
	ref/src/executor/segments.c \
	ref/src/executor/executor.c

mxrefinclude_HEADERS += ref/include/mxref/executor.h

EXECUTOR_TESTS = ref/tests/test_executor ref/tests/test_training
check_PROGRAMS += $(EXECUTOR_TESTS)
TESTS += $(EXECUTOR_TESTS)

ref_tests_test_executor_SOURCES = ref/tests/test_executor.c ref/tests/engine_util.h ref/tests/symbol_util.h
ref_tests_test_executor_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_executor_LDADD = $(TEST_LIBS)
ref_tests_test_training_SOURCES = ref/tests/test_training.c ref/tests/engine_util.h
ref_tests_test_training_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_training_LDADD = $(TEST_LIBS) -lm
