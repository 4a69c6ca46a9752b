# The profiler (ref/src/profiler): Chrome-trace recording of engine ops,
# aggregate statistics, autostart.  Included from the top Makefile.am.

mxrefinclude_HEADERS += ref/include/mxref/profiler.h

ref_libmxref_core_la_SOURCES += \
	ref/src/profiler/profiler_internal.h \
	ref/src/profiler/profiler.c \
	ref/src/profiler/recorder.c \
	ref/src/profiler/trace.c \
	ref/src/profiler/aggregate.c

check_PROGRAMS += ref/tests/test_profiler
TESTS += ref/tests/test_profiler

ref_tests_test_profiler_SOURCES = ref/tests/test_profiler.c ref/tests/engine_util.h
ref_tests_test_profiler_CFLAGS = $(TEST_CFLAGS) $(JANSSON_CFLAGS)
ref_tests_test_profiler_LDADD = $(TEST_LIBS) $(JANSSON_LIBS)
