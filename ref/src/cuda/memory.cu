/*
 * CUDA device and pinned host memory (cuda/memory.h).  Host code only.
 */
#include "config.h"

#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "cuda/memory.h"

namespace {

/* Makes `dev` current for the scope and restores the caller's device. */
struct DeviceScope {
  int prev = -1;
  int status = 0;
  explicit DeviceScope(int dev) {
    if (MXR_CUDA_CHECK(cudaGetDevice(&prev)) != cudaSuccess) {
      status = MXR_ECUDA;
      return;
    }
    if (prev != dev && MXR_CUDA_CHECK(cudaSetDevice(dev)) != cudaSuccess) status = MXR_ECUDA;
  }
  ~DeviceScope() {
    if (status == 0 && prev >= 0) (void)MXR_CUDA_CHECK(cudaSetDevice(prev));
  }
};

}  // namespace

extern "C" int mxr__cuda_mem_alloc(int dev, size_t size, void **out) {
  *out = nullptr;
  DeviceScope scope(dev);
  if (scope.status) return scope.status;
  cudaError_t err = MXR_CUDA_CHECK(cudaMalloc(out, size));
  if (err == cudaErrorMemoryAllocation) return MXR_ENOMEM;
  return err == cudaSuccess ? 0 : MXR_ECUDA;
}

extern "C" int mxr__cuda_mem_free(int dev, void *ptr) {
  DeviceScope scope(dev);
  if (scope.status) return scope.status;
  MXR_CUDA_CALL(cudaFree(ptr));
  return 0;
}

extern "C" int mxr__cuda_mem_info(int dev, size_t *free_bytes, size_t *total_bytes) {
  DeviceScope scope(dev);
  if (scope.status) return scope.status;
  MXR_CUDA_CALL(cudaMemGetInfo(free_bytes, total_bytes));
  return 0;
}

extern "C" int mxr__cuda_host_alloc(size_t size, void **out) {
  *out = nullptr;
  cudaError_t err = MXR_CUDA_CHECK(cudaHostAlloc(out, size, cudaHostAllocPortable));
  if (err == cudaErrorMemoryAllocation) return MXR_ENOMEM;
  return err == cudaSuccess ? 0 : MXR_ECUDA;
}

extern "C" int mxr__cuda_host_free(void *ptr) {
  MXR_CUDA_CALL(cudaFreeHost(ptr));
  return 0;
}

extern "C" int mxr__cuda_memcpy(void *dst, const void *src, size_t size, void *stream) {
  if (size == 0) return 0;
  if (stream == nullptr) {
    MXR_CUDA_CALL(cudaMemcpy(dst, src, size, cudaMemcpyDefault));
    return 0;
  }
  MXR_CUDA_CALL(cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
  return 0;
}
