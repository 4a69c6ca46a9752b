# The dependency engine (ref/src/engine): vars, the worker pools and queues,
# engine bulking.  It knows devices only through struct mxr_device_driver
# (mxref/engine.h).  Included from the top Makefile.am.

mxrefinclude_HEADERS += ref/include/mxref/engine.h

ref_libmxref_core_la_SOURCES += \
	ref/src/engine/engine_internal.h ref/src/engine/engine_lib.h \
	ref/src/engine/engine.c \
	ref/src/engine/var.c \
	ref/src/engine/workqueue.c ref/src/engine/workqueue.h \
	ref/src/engine/pool.c \
	ref/src/engine/bulk.c

# The engine tests: `make check-engine` runs them alone (the TSan build).
ENGINE_TESTS = \
	ref/tests/test_engine \
	ref/tests/test_engine_random \
	ref/tests/test_bulk \
	ref/tests/test_recycle
check_PROGRAMS += $(ENGINE_TESTS)
TESTS += $(ENGINE_TESTS)
ref_tests_test_engine_SOURCES = ref/tests/test_engine.c ref/tests/engine_util.h
ref_tests_test_engine_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_engine_LDADD = $(TEST_LIBS)
ref_tests_test_engine_random_SOURCES = ref/tests/test_engine_random.c ref/tests/engine_util.h
ref_tests_test_engine_random_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_engine_random_LDADD = $(TEST_LIBS)
ref_tests_test_bulk_SOURCES = ref/tests/test_bulk.c ref/tests/engine_util.h
ref_tests_test_bulk_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_bulk_LDADD = $(TEST_LIBS)
ref_tests_test_recycle_SOURCES = ref/tests/test_recycle.c
ref_tests_test_recycle_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_recycle_LDADD = $(TEST_LIBS)
