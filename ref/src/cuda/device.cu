/*
 * GPU discovery through the CUDA runtime, for device/device.c
 * (cuda/device.h).  Host code only.
 */
#include "config.h"

#include <cstdio>
#include <cstring>

#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "cuda/device.h"

/* Failures that describe the machine (no GPU, no or too old a driver, GPUs
 * busy or not ready) rather than a fault.  For these the reason is CUDA's
 * own sentence; anything else keeps the full call/file/line message. */
static bool means_no_usable_gpu(cudaError_t err) {
  switch (err) {
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorStubLibrary:
  case cudaErrorCallRequiresNewerDriver:
  case cudaErrorDevicesUnavailable:
  case cudaErrorSystemDriverMismatch:
  case cudaErrorCompatNotSupportedOnDevice:
  case cudaErrorSystemNotReady:
    return true;
  default:
    return false;
  }
}

extern "C" int mxr__cuda_device_count(int *count, char *reason, size_t reason_len) {
  int n = 0;
  cudaError_t err = MXR_CUDA_CHECK(cudaGetDeviceCount(&n));
  if (err != cudaSuccess) {
    *count = 0;
    std::snprintf(reason, reason_len, "%s",
                  means_no_usable_gpu(err) ? cudaGetErrorString(err) : mxr_last_error());
    return MXR_ECUDA;
  }
  *count = n > 0 ? n : 0;
  /* The runtime reports "no device" as an error, so a plain 0 should not
   * happen; keep the reason non-empty whenever the count is 0 all the same. */
  std::snprintf(reason, reason_len, "%s",
                n > 0 ? "" : "the CUDA runtime reports 0 devices");
  return 0;
}

extern "C" int mxr__cuda_device_info(int id, struct mxr_gpu_info *out) {
  cudaDeviceProp prop;
  MXR_CUDA_CALL(cudaGetDeviceProperties(&prop, id));
  std::memset(out, 0, sizeof *out);
  /* Both buffers are 256 bytes; the copy is bounded by ours regardless. */
  std::snprintf(out->name, sizeof out->name, "%.*s", (int)sizeof prop.name, prop.name);
  out->cc_major = prop.major;
  out->cc_minor = prop.minor;
  out->total_mem = prop.totalGlobalMem;
  out->multiprocessors = prop.multiProcessorCount;
  return 0;
}
