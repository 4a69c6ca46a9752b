/*
 * CUDA kernels of the basic ops (launch.h): reverse, copy, fill, add_n.
 * They are as short as the CPU ones: in the bulking workloads, launch and
 * engine costs are what is measured.
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

/* ------------------------------------------------------------- reverse */

struct Dims {
  int ndim;
  int64_t dim[MXR_MAX_NDIM];
  int64_t stride[MXR_MAX_NDIM];
  bool flip[MXR_MAX_NDIM];
};

__device__ int64_t source_index(const Dims &d, int64_t o) {
  int64_t from = 0;
  for (int k = d.ndim - 1; k >= 0; k--) {
    int64_t i = o % d.dim[k];
    o /= d.dim[k];
    from += (d.flip[k] ? d.dim[k] - 1 - i : i) * d.stride[k];
  }
  return from;
}

template <typename T>
__global__ void reverse_kernel(const T *in, T *out, int64_t n, Dims d, bool add) {
  for (int64_t o = first_index(); o < n; o += index_step()) {
    T v = in[source_index(d, o)];
    if (add)
      out[o] += v;
    else
      out[o] = v;
  }
}

template <typename T>
void launch_reverse(void *stream, const void *in, void *out, int64_t n, const Dims &d, bool add) {
  reverse_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
      static_cast<const T *>(in), static_cast<T *>(out), n, d, add);
}

/* ---------------------------------------------------------- copy, fill */

template <typename T>
__global__ void add_kernel(const T *in, T *out, int64_t n) {
  for (int64_t i = first_index(); i < n; i += index_step())
    out[i] += in[i];
}

template <typename T>
__global__ void fill_kernel(T *out, int64_t n, T value, bool add) {
  for (int64_t i = first_index(); i < n; i += index_step()) {
    if (add)
      out[i] += value;
    else
      out[i] = value;
  }
}

template <typename T>
void launch_fill(void *stream, void *out, int64_t n, double value, bool add) {
  fill_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(static_cast<T *>(out), n,
                                                                    static_cast<T>(value), add);
}

/* --------------------------------------------------------------- add_n */

/* Up to this many inputs per launch; more take further passes.  A later
 * pass of a write carries on from the running sum in `out`, so the sum is
 * taken in the CPU's order; a later pass of an add adds its part. */
constexpr int kMaxAddInputs = 16;

template <typename T>
struct Inputs {
  const T *p[kMaxAddInputs];
  int n;
};

template <typename T>
__global__ void add_n_kernel(Inputs<T> in, T *out, int64_t n, bool add, bool carry) {
  for (int64_t i = first_index(); i < n; i += index_step()) {
    T acc = carry ? out[i] : T(0);
    for (int k = 0; k < in.n; k++) acc += in.p[k][i];
    if (add)
      out[i] += acc;
    else
      out[i] = acc;
  }
}

template <typename T>
void launch_add_n(void *stream, const void *const *in, int nin, void *out, int64_t n, bool add) {
  for (int first = 0; first < nin; first += kMaxAddInputs) {
    Inputs<T> batch;
    batch.n = nin - first < kMaxAddInputs ? nin - first : kMaxAddInputs;
    for (int k = 0; k < batch.n; k++) batch.p[k] = static_cast<const T *>(in[first + k]);
    add_n_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        batch, static_cast<T *>(out), n, add, !add && first > 0);
  }
}

}  // namespace

extern "C" int mxr__gpu_reverse(void *stream, const void *in, void *out, int dtype, int ndim,
                                const int64_t *dims, const bool *flip, int req) {
  if (req == kNull) return 0;
  Dims d;
  d.ndim = ndim;
  int64_t n = 1;
  for (int k = ndim - 1; k >= 0; k--) {
    d.dim[k] = dims[k];
    d.stride[k] = n;
    d.flip[k] = flip[k];
    n *= dims[k];
  }
  if (n == 0) return 0;
  bool add = req == kAdd;
  if (add && dtype == MXR_FLOAT32)
    launch_reverse<float>(stream, in, out, n, d, true);
  else if (add && dtype == MXR_FLOAT64)
    launch_reverse<double>(stream, in, out, n, d, true);
  else if (add)
    return unsupported("reverse", dtype, req);
  else {
    switch (mxr_dtype_size(dtype)) {
    case 1: launch_reverse<uint8_t>(stream, in, out, n, d, false); break;
    case 2: launch_reverse<uint16_t>(stream, in, out, n, d, false); break;
    case 4: launch_reverse<uint32_t>(stream, in, out, n, d, false); break;
    case 8: launch_reverse<uint64_t>(stream, in, out, n, d, false); break;
    default: return unsupported("reverse", dtype, req);
    }
  }
  return finish_launch(stream);
}

extern "C" int mxr__gpu_copy(void *stream, const void *in, void *out, int dtype, int64_t n,
                             int req) {
  if (req == kNull || n == 0 || (req != kAdd && in == out)) return 0;
  if (req != kAdd) {
    size_t bytes = static_cast<size_t>(n) * mxr_dtype_size(dtype);
    MXR_CUDA_CALL(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, as_stream(stream)));
    if (stream == nullptr) MXR_CUDA_CALL(cudaStreamSynchronize(nullptr));
    return 0;
  }
  if (dtype == MXR_FLOAT32)
    add_kernel<float><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<const float *>(in), static_cast<float *>(out), n);
  else if (dtype == MXR_FLOAT64)
    add_kernel<double><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<const double *>(in), static_cast<double *>(out), n);
  else
    return unsupported("_copy", dtype, req);
  return finish_launch(stream);
}

extern "C" int mxr__gpu_fill(void *stream, void *out, int dtype, int64_t n, int req, double value) {
  if (req == kNull || n == 0 || (req == kAdd && value == 0)) return 0;
  bool add = req == kAdd;
  switch (dtype) {
  case MXR_FLOAT32: launch_fill<float>(stream, out, n, value, add); break;
  case MXR_FLOAT64: launch_fill<double>(stream, out, n, value, add); break;
  case MXR_INT32: launch_fill<int32_t>(stream, out, n, value, add); break;
  case MXR_INT64: launch_fill<int64_t>(stream, out, n, value, add); break;
  default: return unsupported("fill", dtype, req);
  }
  return finish_launch(stream);
}

extern "C" int mxr__gpu_add_n(void *stream, const void *const *in, int nin, void *out, int dtype,
                              int64_t n, int req) {
  if (req == kNull || n == 0) return 0;
  if (nin < 1) return mxr_set_error(MXR_EINVAL, "add_n (GPU): no inputs");
  bool add = req == kAdd;
  if (dtype == MXR_FLOAT32)
    launch_add_n<float>(stream, in, nin, out, n, add);
  else if (dtype == MXR_FLOAT64)
    launch_add_n<double>(stream, in, nin, out, n, add);
  else
    return unsupported("add_n", dtype, req);
  return finish_launch(stream);
}
