# Operators (ref/src/op): registry, parameter parser, one file per op family
# (definitions and CPU kernels) and op/cuda/ (its CUDA kernels), and the
# operator tests.  Included from the top Makefile.am.

ref_libmxref_core_la_SOURCES += \
	ref/src/op/op_internal.h \
	ref/src/op/families.h \
	ref/src/op/registry.c \
	ref/src/op/mxnet_op_names.h \
	ref/src/op/mxnet_op_info.h \
	ref/src/op/info.c \
	ref/src/op/params.c \
	ref/src/op/blas.c ref/src/op/blas.h \
	ref/src/op/tensor_common.h \
	ref/src/op/nn_common.h \
	ref/src/op/conv_common.h \
	ref/src/op/elemwise_fn.h \
	ref/src/op/random_fn.h \
	ref/src/op/basic.c \
	ref/src/op/elemwise.c \
	ref/src/op/reduce.c \
	ref/src/op/dot.c \
	ref/src/op/reshape.c \
	ref/src/op/transpose.c \
	ref/src/op/concat.c \
	ref/src/op/softmax.c \
	ref/src/op/fully_connected.c \
	ref/src/op/output.c \
	ref/src/op/dropout.c \
	ref/src/op/batchnorm.c \
	ref/src/op/convolution.c \
	ref/src/op/pooling.c \
	ref/src/op/optimizer.c \
	ref/src/op/random.c \
	ref/src/op/cast.c \
	ref/src/op/clip.c

mxrefinclude_HEADERS += ref/include/mxref/op.h

# CUDA kernels and their launchers (compiled by the .cu rule of Makefile.am).
CUDA_SOURCES += \
	ref/src/op/cuda/basic.cu \
	ref/src/op/cuda/linalg.cu \
	ref/src/op/cuda/elemwise.cu \
	ref/src/op/cuda/reduce.cu \
	ref/src/op/cuda/transpose.cu \
	ref/src/op/cuda/concat.cu \
	ref/src/op/cuda/softmax.cu \
	ref/src/op/cuda/output.cu \
	ref/src/op/cuda/dropout.cu \
	ref/src/op/cuda/batchnorm.cu \
	ref/src/op/cuda/convolution.cu \
	ref/src/op/cuda/convolution_gemm.cu \
	ref/src/op/cuda/pooling.cu \
	ref/src/op/cuda/optimizer.cu \
	ref/src/op/cuda/random.cu \
	ref/src/op/cuda/cast.cu \
	ref/src/op/cuda/clip.cu
CUDA_HEADER_FILES += \
	ref/src/op/cuda/launch.h \
	ref/src/op/cuda/kernel_util.cuh \
	ref/src/op/cuda/tensor_kernels.cuh \
	ref/src/op/cuda/cudnn_util.cuh \
	ref/src/op/cuda/elemwise.h \
	ref/src/op/cuda/tensor.h \
	ref/src/op/cuda/output.h \
	ref/src/op/cuda/dropout.h \
	ref/src/op/cuda/batchnorm.h \
	ref/src/op/cuda/convolution.h \
	ref/src/op/cuda/convolution_gemm.h \
	ref/src/op/cuda/pooling.h \
	ref/src/op/cuda/optimizer.h \
	ref/src/op/cuda/clip.h

# Operator tests share the float64 reference checker.
noinst_LTLIBRARIES += ref/tests/libop_check.la
ref_tests_libop_check_la_SOURCES = ref/tests/op_check.c ref/tests/op_check.h \
	ref/tests/conv_check.h ref/tests/nn_check.h ref/tests/tensor_check.h
ref_tests_libop_check_la_CFLAGS = $(TEST_CFLAGS)
OP_TEST_LIBS = ref/tests/libop_check.la $(TEST_LIBS) -lm

OP_TESTS = \
	ref/tests/test_op_registry \
	ref/tests/test_ops_basic \
	ref/tests/test_ops_elemwise \
	ref/tests/test_ops_reduce \
	ref/tests/test_ops_dot \
	ref/tests/test_blas_load \
	ref/tests/test_blas_missing \
	ref/tests/test_ops_reshape \
	ref/tests/test_ops_transpose \
	ref/tests/test_ops_concat \
	ref/tests/test_ops_softmax \
	ref/tests/test_ops_tensor_families \
	ref/tests/test_ops_fully_connected \
	ref/tests/test_ops_output \
	ref/tests/test_ops_dropout \
	ref/tests/test_ops_batchnorm \
	ref/tests/test_ops_convolution \
	ref/tests/test_ops_pooling \
	ref/tests/test_ops_optimizer \
	ref/tests/test_ops_clip
check_PROGRAMS += $(OP_TESTS)
TESTS += $(OP_TESTS)

ref_tests_test_op_registry_SOURCES = ref/tests/test_op_registry.c
ref_tests_test_op_registry_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_op_registry_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_basic_SOURCES = ref/tests/test_ops_basic.c
ref_tests_test_ops_basic_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_basic_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_elemwise_SOURCES = ref/tests/test_ops_elemwise.c
ref_tests_test_ops_elemwise_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_elemwise_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_reduce_SOURCES = ref/tests/test_ops_reduce.c
ref_tests_test_ops_reduce_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_reduce_LDADD = $(OP_TEST_LIBS)
ref_tests_test_blas_load_SOURCES = ref/tests/test_blas_load.c ref/tests/invoke_util.h ref/tests/child_process.h
ref_tests_test_blas_load_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS)
ref_tests_test_blas_load_LDADD = $(TEST_LIBS)
# It defines dlopen and dlerror, which libmxref's calls then reach: a host
# without OpenBLAS.
ref_tests_test_blas_missing_SOURCES = ref/tests/test_blas_missing.c ref/tests/invoke_util.h
ref_tests_test_blas_missing_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_blas_missing_LDADD = $(TEST_LIBS)
ref_tests_test_ops_dot_SOURCES = ref/tests/test_ops_dot.c
ref_tests_test_ops_dot_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_dot_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_reshape_SOURCES = ref/tests/test_ops_reshape.c
ref_tests_test_ops_reshape_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_reshape_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_transpose_SOURCES = ref/tests/test_ops_transpose.c
ref_tests_test_ops_transpose_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_transpose_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_concat_SOURCES = ref/tests/test_ops_concat.c
ref_tests_test_ops_concat_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_concat_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_softmax_SOURCES = ref/tests/test_ops_softmax.c
ref_tests_test_ops_softmax_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_softmax_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_tensor_families_SOURCES = ref/tests/test_ops_tensor_families.c
ref_tests_test_ops_tensor_families_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_tensor_families_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_fully_connected_SOURCES = ref/tests/test_ops_fully_connected.c
ref_tests_test_ops_fully_connected_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_fully_connected_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_output_SOURCES = ref/tests/test_ops_output.c
ref_tests_test_ops_output_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_output_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_dropout_SOURCES = ref/tests/test_ops_dropout.c
ref_tests_test_ops_dropout_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_dropout_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_batchnorm_SOURCES = ref/tests/test_ops_batchnorm.c
ref_tests_test_ops_batchnorm_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_batchnorm_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_convolution_SOURCES = ref/tests/test_ops_convolution.c
ref_tests_test_ops_convolution_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_convolution_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_pooling_SOURCES = ref/tests/test_ops_pooling.c
ref_tests_test_ops_pooling_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_pooling_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_optimizer_SOURCES = ref/tests/test_ops_optimizer.c
ref_tests_test_ops_optimizer_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_optimizer_LDADD = $(OP_TEST_LIBS)
ref_tests_test_ops_clip_SOURCES = ref/tests/test_ops_clip.c
ref_tests_test_ops_clip_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_ops_clip_LDADD = $(OP_TEST_LIBS)
