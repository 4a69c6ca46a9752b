# Devices (ref/src/device): which GPUs the build can use (the C side of
# cuda/device.cu), and the library's default engine, which plugs the CUDA
# driver into the engine's options.  Included from the top Makefile.am.

mxrefinclude_HEADERS += ref/include/mxref/device.h

ref_libmxref_core_la_SOURCES += \
	ref/src/device/device.c \
	ref/src/device/default_engine.c

check_PROGRAMS += ref/tests/test_device ref/tests/test_gpu
TESTS += ref/tests/test_device ref/tests/test_gpu
ref_tests_test_device_SOURCES = ref/tests/test_device.c
ref_tests_test_device_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_device_LDADD = $(TEST_LIBS)
ref_tests_test_gpu_SOURCES = ref/tests/test_gpu.c ref/tests/symbol_util.h
ref_tests_test_gpu_CFLAGS = $(TEST_CFLAGS) $(JANSSON_CFLAGS)
ref_tests_test_gpu_LDADD = $(TEST_LIBS) $(JANSSON_LIBS)
