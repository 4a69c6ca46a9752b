/*
 * CUDA kernels of clip and _backward_clip (op/cuda/clip.h, op/clip.c):
 * the same comparisons as the CPU loops, in the data's dtype.
 */
#include "config.h"

#include <cstdint>
#include <type_traits>

#include <cuda_runtime_api.h>

#include "op/cuda/clip.h"
#include "op/cuda/kernel_util.cuh"

using namespace mxr_kernels;

namespace {

template <typename T>
__global__ void clip_kernel(int64_t n, const T *g, const T *x, T lo, T hi, T *out, int req) {
  for (int64_t i = first_index(); i < n; i += index_step()) {
    const T v = x[i];
    T r;
    if (g)
      r = v > hi || v < lo ? T(0) : g[i];
    else
      r = v > hi ? hi : (v < lo ? lo : v);
    if (req == kAdd)
      out[i] += r;
    else
      out[i] = r;
  }
}

}  // namespace

extern "C" int mxr__gpu_clip(void *stream, int dtype, int64_t n, const void *g, const void *x, double lo,
                             double hi, void *out, int req) {
  if (req == kNull || n == 0) return 0;
  return by_dtype(g ? "_backward_clip" : "clip", stream, dtype, req, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    clip_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        n, static_cast<const T *>(g), static_cast<const T *>(x), static_cast<T>(lo), static_cast<T>(hi),
        static_cast<T *>(out), req);
  });
}
