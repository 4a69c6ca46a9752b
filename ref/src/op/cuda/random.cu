/*
 * CUDA kernel of the random fills (launch.h, op/random.c): the CPU
 * kernel's samples (op/random_fn.h), one thread per element.
 */
#include "config.h"

#include <cstdint>
#include <type_traits>

#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "mxref/base.h"
#include "op/cuda/kernel_util.cuh"
#include "op/cuda/launch.h"
#include "op/random_fn.h"

using namespace mxr_kernels;

namespace {

template <typename T>
__global__ void random_fill_kernel(T *out, int64_t n, int req, int normal, double a, double b,
                                   uint64_t seed) {
  for (int64_t i = first_index(); i < n; i += index_step())
    store_req(out, i, req, mxr__random_sample_at(seed, static_cast<uint64_t>(i), normal, a, b));
}

}  // namespace

extern "C" int mxr__gpu_random_fill(void *stream, void *out, int dtype, int64_t n, int req,
                                    int normal, double a, double b, uint64_t seed) {
  if (req == kNull || n == 0) return 0;
  return by_dtype("random fill", stream, dtype, req, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    random_fill_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<T *>(out), n, req, normal, a, b, seed);
  });
}
