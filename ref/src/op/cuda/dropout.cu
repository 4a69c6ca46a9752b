/*
 * CUDA kernels of Dropout (dropout.h).  They follow the CPU kernel
 * (op/dropout.c) element for element: the same formula in double and the
 * same random draws (op/random_fn.h).  One thread per element.
 */
#include "config.h"

#include <climits>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "cuda/worker.h"
#include "mxref/base.h"
#include "mxref/engine.h"
#include "op/cuda/dropout.h"
#include "op/cuda/kernel_util.cuh"
#include "op/cuda/output.h"
#include "op/random_fn.h"

using namespace mxr_kernels;

namespace {

template <typename T>
__global__ void dropout_mask_kernel(int64_t n, bool active, uint64_t seed, float pkeep,
                                    float scale, T *mask, int req) {
  for (int64_t j = first_index(); j < n; j += index_step()) {
    double m = 1.0;
    if (active) m = mxr__uniformf_at(seed, static_cast<uint64_t>(j)) < pkeep ? (double)scale : 0.0;
    store_req(mask, j, req, m);
  }
}

/* The mask element of data element i. */
__device__ inline int64_t mask_index(const mxr_gpu_mask_layout &l, int64_t i) {
  int64_t j = 0;
  for (int d = l.ndim - 1; d >= 0; d--) {
    j += (i % l.dim[d]) * l.mstride[d];
    i /= l.dim[d];
  }
  return j;
}

template <typename T>
__global__ void dropout_apply_kernel(mxr_gpu_mask_layout l, int64_t n, const T *x, const T *mask,
                                     uint64_t seed, float pkeep, float scale, T *out, int req) {
  for (int64_t i = first_index(); i < n; i += index_step()) {
    const int64_t j = mask_index(l, i);
    double m;
    if (mask)
      m = static_cast<double>(mask[j]);
    else
      m = mxr__uniformf_at(seed, static_cast<uint64_t>(j)) < pkeep ? (double)scale : 0.0;
    store_req(out, i, req, static_cast<double>(x[i]) * m);
  }
}

}  // namespace

extern "C" int mxr__gpu_dropout_mask(void *stream, int dtype, int64_t n_mask, bool active,
                                     uint64_t seed, float pkeep, float scale, void *mask,
                                     int req) {
  if (req == kNull || n_mask == 0) return 0;
  return by_dtype("Dropout", stream, dtype, req, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    dropout_mask_kernel<T><<<blocks_for(n_mask), kThreads, 0, as_stream(stream)>>>(
        n_mask, active, seed, pkeep, scale, static_cast<T *>(mask), req);
  });
}

extern "C" int mxr__gpu_dropout_apply(void *stream, int dtype, const mxr_gpu_mask_layout *layout,
                                      int64_t n, const void *x, const void *mask, uint64_t seed,
                                      float pkeep, float scale, void *out, int req) {
  if (req == kNull || n == 0) return 0;
  return by_dtype("Dropout", stream, dtype, req, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    dropout_apply_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        *layout, n, static_cast<const T *>(x), static_cast<const T *>(mask), seed, pkeep, scale,
        static_cast<T *>(out), req);
  });
}
