# Common (ref/src/common): status codes and the last error, contexts and
# dtypes, the MXNET_* variable table, checked pthread wrappers, the clock, the
# process seed.  Included from the top Makefile.am.

mxrefinclude_HEADERS += \
	ref/include/mxref/base.h \
	ref/include/mxref/error.h \
	ref/include/mxref/config.h

ref_libmxref_core_la_SOURCES += \
	ref/src/common/error.c \
	ref/src/common/base.c \
	ref/src/common/env.c \
	ref/src/common/threads.c ref/src/common/threads.h \
	ref/src/common/recycle.c ref/src/common/recycle.h \
	ref/src/common/random.c ref/src/common/random.h \
	ref/src/common/timer.h

check_PROGRAMS += ref/tests/test_error ref/tests/test_config
TESTS += ref/tests/test_error ref/tests/test_config
ref_tests_test_error_SOURCES = ref/tests/test_error.c
ref_tests_test_error_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_error_LDADD = $(TEST_LIBS)
ref_tests_test_config_SOURCES = ref/tests/test_config.c ref/tests/child_process.h
ref_tests_test_config_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_config_LDADD = $(TEST_LIBS)
