# The CUDA runtime (ref/src/cuda): the engine's GPU driver, GPU discovery,
# device and pinned memory, CUDA graphs of bulked segments, cuBLAS and cuDNN
# loaded on first use, and the checks of their calls.  Compiled by the .cu
# rule of Makefile.am; the op kernels are in ref/src/op/local.mk.
CUDA_SOURCES += \
	ref/src/cuda/device.cu ref/src/cuda/driver.cu ref/src/cuda/memory.cu \
	ref/src/cuda/graph.cu ref/src/cuda/cublas.cu ref/src/cuda/cudnn.cu
# device.h, worker.h, memory.h and graph.h are C: C files include them too.
CUDA_HEADER_FILES += \
	ref/src/cuda/check.h ref/src/cuda/device.h ref/src/cuda/worker.h \
	ref/src/cuda/memory.h ref/src/cuda/graph.h ref/src/cuda/cublas.h \
	ref/src/cuda/cudnn.h ref/src/cuda/dl_library.h
