/*
 * Internal: the CUDA memory calls storage.c and ndarray.c need, with C
 * linkage (defined in cuda/memory.cu, built only with CUDA).  Each returns 0
 * or a negative status with the last error set by MXR_CUDA_CHECK, which
 * names the call, file and line.  Device memory calls make `dev` the
 * calling thread's current device for the call and restore the previous
 * one after it.
 */
#ifndef MXR_CUDA_MEMORY_H
#define MXR_CUDA_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cudaMalloc on `dev`; MXR_ENOMEM when the device is out of memory. */
int mxr__cuda_mem_alloc(int dev, size_t size, void **out);
int mxr__cuda_mem_free(int dev, void *ptr);
/* cudaMemGetInfo on `dev`. */
int mxr__cuda_mem_info(int dev, size_t *free_bytes, size_t *total_bytes);

/* Page-locked host memory (cudaHostAlloc, portable to every device). */
int mxr__cuda_host_alloc(size_t size, void **out);
int mxr__cuda_host_free(void *ptr);

/* Copy `size` bytes with cudaMemcpyDefault (unified addressing tells the
 * direction).  With a stream the copy is only queued on it (the caller
 * waits for the stream); without one (NULL) it has finished on return. */
int mxr__cuda_memcpy(void *dst, const void *src, size_t size, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MXR_CUDA_MEMORY_H */
