/*
 * Internal: what the CUDA launchers of ref/src/op/cuda/ share: launch
 * geometry and grid-stride loops, request codes and stores, dtype checks,
 * and the end of a launch (check it; on the legacy default stream, wait).
 * Include only from .cu files, after config.h.
 */
#ifndef MXR_OP_CUDA_KERNEL_UTIL_CUH
#define MXR_OP_CUDA_KERNEL_UTIL_CUH

#include <cstdint>

#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "mxref/base.h"
#include "mxref/error.h"

namespace mxr_kernels {

inline constexpr int kThreads = 256;
/* Enough blocks to fill the device; grid-stride loops cover the rest. */
inline constexpr int64_t kMaxBlocks = 4096;

enum Req { kNull = 0, kWrite = 1, kInplace = 2, kAdd = 3 };

inline int blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

inline cudaStream_t as_stream(void *s) { return static_cast<cudaStream_t>(s); }

/* Grid-stride loops, for grids of blocks_for(n):
 *   for (int64_t i = first_index(); i < n; i += index_step()) */
__device__ inline int64_t first_index() { return blockIdx.x * (int64_t)blockDim.x + threadIdx.x; }
__device__ inline int64_t index_step() { return (int64_t)gridDim.x * blockDim.x; }

/* out[i] = v (write, in place) or out[i] += v (add), v computed in double
 * and rounded once to T.  Callers skip null requests. */
template <typename T>
__device__ inline void store_req(T *out, int64_t i, int req, double v) {
  if (req == kAdd)
    out[i] += static_cast<T>(v);
  else
    out[i] = static_cast<T>(v);
}

inline bool is_float_dtype(int dtype) { return dtype == MXR_FLOAT32 || dtype == MXR_FLOAT64; }

/* Check the launch; on the legacy default stream (no worker stream), also
 * wait, so the caller gets a finished result. */
inline int finish_launch(void *stream) {
  MXR_CUDA_CALL(cudaGetLastError());
  if (stream == nullptr) MXR_CUDA_CALL(cudaStreamSynchronize(nullptr));
  return 0;
}

inline const char *dtype_str(int dtype) {
  switch (dtype) {
  case MXR_FLOAT32: return "float32";
  case MXR_FLOAT64: return "float64";
  case MXR_FLOAT16: return "float16";
  case MXR_UINT8: return "uint8";
  case MXR_INT32: return "int32";
  case MXR_INT8: return "int8";
  case MXR_INT64: return "int64";
  case MXR_BOOL: return "bool";
  default: return "?";
  }
}

inline int unsupported(const char *op, int dtype, int req) {
  return mxr_set_error(MXR_EINVAL, "%s (GPU): dtype %s with req %d is not supported", op,
                       dtype_str(dtype), req);
}

/* Launch KERNEL<float> or KERNEL<double> by `dtype` with `grid` blocks;
 * the arguments' pointers are cast by the caller's lambda. */
template <typename Launch>
int by_dtype(const char *what, void *stream, int dtype, int req, Launch launch) {
  if (!is_float_dtype(dtype)) return unsupported(what, dtype, req);
  if (dtype == MXR_FLOAT32)
    launch(static_cast<float *>(nullptr));
  else
    launch(static_cast<double *>(nullptr));
  return finish_launch(stream);
}

}  // namespace mxr_kernels

#endif /* MXR_OP_CUDA_KERNEL_UTIL_CUH */
