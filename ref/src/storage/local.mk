# Storage (ref/src/storage): host memory, the GPU pools per device and their
# pooling policies, copies.  Device memory itself is cuda/memory.cu.
# Included from the top Makefile.am.

mxrefinclude_HEADERS += ref/include/mxref/storage.h

ref_libmxref_core_la_SOURCES += \
	ref/src/storage/storage.c ref/src/storage/storage_internal.h \
	ref/src/storage/mem_pool.c ref/src/storage/mem_pool.h

check_PROGRAMS += ref/tests/test_storage ref/tests/test_mem_pool
TESTS += ref/tests/test_storage ref/tests/test_mem_pool
ref_tests_test_storage_SOURCES = ref/tests/test_storage.c ref/tests/engine_util.h
ref_tests_test_storage_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_storage_LDADD = $(TEST_LIBS)
ref_tests_test_mem_pool_SOURCES = ref/tests/test_mem_pool.c
ref_tests_test_mem_pool_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_mem_pool_LDADD = $(TEST_LIBS)
