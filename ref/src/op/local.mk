# Operators (ref/src/op): registry, parameter parser, CPU kernels, and the
# operator tests.  Included from the top Makefile.am.

ref_libmxref_core_la_SOURCES += \
	ref/src/op/op_internal.h \
	ref/src/op/registry.c \
	ref/src/op/params.c \
	ref/src/op/blas.c \
	ref/src/op/cpu/basic.c \
	ref/src/op/cpu/elemwise.c \
	ref/src/op/cpu/tensor.c \
	ref/src/op/cpu/tensor_2.c \
	ref/src/op/cpu/transpose.c \
	ref/src/op/cpu/tensor_common.h \
	ref/src/op/cpu/nn.c \
	ref/src/op/cpu/dropout.c \
	ref/src/op/cpu/batchnorm.c \
	ref/src/op/cpu/nn_common.h \
	ref/src/op/cpu/conv.c \
	ref/src/op/cpu/pooling.c \
	ref/src/op/cpu/conv_common.h \
	ref/src/op/cpu/optimizer.c

mxrefinclude_HEADERS += ref/include/mxref/op.h

# CUDA kernels and their launchers (compiled by the .cu rule of Makefile.am).
CUDA_SOURCES += \
	ref/src/op/gpu/basic.cu \
	ref/src/op/gpu/linalg.cu \
	ref/src/op/gpu/elemwise.cu \
	ref/src/op/gpu/nn.cu \
	ref/src/op/gpu/tensor.cu \
	ref/src/op/gpu/optimizer.cu \
	ref/src/op/gpu/conv.cu \
	ref/src/op/gpu/conv_gemm.cu \
	ref/src/op/gpu/norm.cu
CUDA_HEADER_FILES += \
	ref/src/op/gpu/launch.h \
	ref/src/op/gpu/kernel_util.cuh \
	ref/src/op/gpu/elemwise.h \
	ref/src/op/gpu/nn.h \
	ref/src/op/gpu/tensor.h \
	ref/src/op/gpu/optimizer.h \
	ref/src/op/gpu/conv.h \
	ref/src/op/gpu/conv_gemm.h \
	ref/src/op/gpu/norm.h

# Operator tests share the float64 reference checker.
noinst_LTLIBRARIES += ref/tests/libop_check.la
ref_tests_libop_check_la_SOURCES = ref/tests/op_check.c ref/tests/op_check.h
ref_tests_libop_check_la_CFLAGS = $(TEST_CFLAGS)
OP_TEST_LIBS = ref/tests/libop_check.la $(TEST_LIBS) -lm

OP_TESTS = \
	ref/tests/test_op_registry \
	ref/tests/test_ops_elemwise \
	ref/tests/test_ops_tensor \
	ref/tests/test_ops_nn \
	ref/tests/test_ops_conv \
	ref/tests/test_ops_optimizer
check_PROGRAMS += $(OP_TESTS)
TESTS += $(OP_TESTS)

ref_tests_test_op_registry_SOURCES = ref/tests/test_op_registry.c
ref_tests_test_op_registry_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_op_registry_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_elemwise_SOURCES = ref/tests/test_ops_elemwise.c
ref_tests_test_ops_elemwise_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_elemwise_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_tensor_SOURCES = ref/tests/test_ops_tensor.c
ref_tests_test_ops_tensor_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_tensor_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_nn_SOURCES = ref/tests/test_ops_nn.c
ref_tests_test_ops_nn_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_nn_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_conv_SOURCES = ref/tests/test_ops_conv.c
ref_tests_test_ops_conv_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_conv_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_optimizer_SOURCES = ref/tests/test_ops_optimizer.c
ref_tests_test_ops_optimizer_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_optimizer_LDADD = $(OP_TEST_LIBS)
