/*
 * CUDA kernel of the dtype conversions (launch.h, op/cast.c): each element
 * read by its dtype and stored as the other, through int64 between integer
 * types and through double otherwise, as the CPU kernel does.
 */
#include "config.h"

#include <cstdint>

#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "mxref/base.h"
#include "op/cuda/kernel_util.cuh"
#include "op/cuda/launch.h"

using namespace mxr_kernels;

namespace {

__device__ inline bool is_int(int dt) {
  return dt == MXR_UINT8 || dt == MXR_INT32 || dt == MXR_INT8 || dt == MXR_INT64 || dt == MXR_BOOL;
}

__device__ inline double load_f(const void *p, int dt, int64_t i) {
  switch (dt) {
  case MXR_FLOAT32: return static_cast<const float *>(p)[i];
  case MXR_FLOAT64: return static_cast<const double *>(p)[i];
  case MXR_UINT8: return static_cast<const uint8_t *>(p)[i];
  case MXR_INT32: return static_cast<const int32_t *>(p)[i];
  case MXR_INT8: return static_cast<const int8_t *>(p)[i];
  case MXR_INT64: return static_cast<double>(static_cast<const int64_t *>(p)[i]);
  default: return static_cast<const uint8_t *>(p)[i] != 0; /* bool */
  }
}

__device__ inline int64_t load_i(const void *p, int dt, int64_t i) {
  switch (dt) {
  case MXR_UINT8: return static_cast<const uint8_t *>(p)[i];
  case MXR_INT32: return static_cast<const int32_t *>(p)[i];
  case MXR_INT8: return static_cast<const int8_t *>(p)[i];
  case MXR_INT64: return static_cast<const int64_t *>(p)[i];
  default: return static_cast<const uint8_t *>(p)[i] != 0; /* bool */
  }
}

template <typename T>
__device__ inline void put(void *p, int64_t i, int req, T v) {
  if (req == kAdd)
    static_cast<T *>(p)[i] += v;
  else
    static_cast<T *>(p)[i] = v;
}

__global__ void cast_kernel(const void *in, int in_dt, void *out, int out_dt, int64_t n, int req) {
  bool ints = is_int(in_dt) && is_int(out_dt);
  for (int64_t i = first_index(); i < n; i += index_step()) {
    double f = ints ? 0.0 : load_f(in, in_dt, i);
    int64_t k = ints ? load_i(in, in_dt, i) : static_cast<int64_t>(f);
    switch (out_dt) {
    case MXR_FLOAT32: put<float>(out, i, req, static_cast<float>(f)); break;
    case MXR_FLOAT64: put<double>(out, i, req, f); break;
    case MXR_UINT8: put<uint8_t>(out, i, req, static_cast<uint8_t>(k)); break;
    case MXR_INT32: put<int32_t>(out, i, req, static_cast<int32_t>(k)); break;
    case MXR_INT8: put<int8_t>(out, i, req, static_cast<int8_t>(k)); break;
    case MXR_INT64: put<int64_t>(out, i, req, k); break;
    default: put<uint8_t>(out, i, req, static_cast<uint8_t>(ints ? k != 0 : f != 0.0)); break;
    }
  }
}

}  // namespace

extern "C" int mxr__gpu_cast(void *stream, const void *in, int in_dtype, void *out, int out_dtype,
                             int64_t n, int req) {
  if (req == kNull || n == 0) return 0;
  if (in_dtype == MXR_FLOAT16 || out_dtype == MXR_FLOAT16)
    return mxr_set_error(MXR_ENOTIMPL, "Cast (GPU): float16 is not implemented by libmxref");
  cast_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(in, in_dtype, out, out_dtype, n, req);
  return finish_launch(stream);
}
