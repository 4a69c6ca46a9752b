/*
 * CUDA kernels of Concat's moves (op/cuda/tensor.h): one thread per element
 * of a part, moved to or from its band of the whole as op/concat.c does.
 */
#include "config.h"

#include <cstdint>

#include <cuda_runtime_api.h>
#include <math_constants.h>

#include "cuda/check.h"
#include "mxref/base.h"
#include "op/cuda/kernel_util.cuh"
#include "op/cuda/tensor_kernels.cuh"
#include "op/cuda/tensor.h"

using namespace mxr_kernels;

namespace {

/* ------------------------------------------------------------- Concat */

/* A part's place in the whole: lead rows of `row` elements in the whole,
 * of `width` in the part, starting at column `offset` of the whole. */
struct Band {
  int64_t lead, row, offset, width;
};

/* Where element e of the part lies in the whole. */
__device__ inline int64_t whole_index(const Band &b, int64_t e) {
  return (e / b.width) * b.row + b.offset + e % b.width;
}

template <typename T>
__global__ void concat_kernel(const T *part, T *whole, Band b, bool add) {
  const int64_t n = b.lead * b.width;
  for (int64_t e = first_index(); e < n; e += index_step())
    assign(whole + whole_index(b, e), add, part[e]);
}

template <typename T>
__global__ void split_kernel(const T *whole, T *part, Band b, bool add) {
  const int64_t n = b.lead * b.width;
  for (int64_t e = first_index(); e < n; e += index_step())
    assign(part + e, add, whole[whole_index(b, e)]);
}

}  // namespace

extern "C" int mxr__gpu_concat_part(void *stream, const void *part, void *whole, int dtype,
                                    int64_t lead, int64_t row, int64_t offset, int64_t width,
                                    int req) {
  if (req == kNull || lead == 0 || width == 0) return 0;
  const Band b = {lead, row, offset, width};
  const bool add = req == kAdd;
  const bool ok = with_move_type(dtype, add, [&](auto type) {
    using T = decltype(type);
    concat_kernel<T><<<blocks_for(lead * width), kThreads, 0, as_stream(stream)>>>(
        static_cast<const T *>(part), static_cast<T *>(whole), b, add);
  });
  if (!ok) return unsupported("Concat", dtype, req);
  return finish_launch(stream);
}

extern "C" int mxr__gpu_split_part(void *stream, const void *whole, void *part, int dtype,
                                   int64_t lead, int64_t row, int64_t offset, int64_t width,
                                   int req) {
  if (req == kNull || lead == 0 || width == 0) return 0;
  const Band b = {lead, row, offset, width};
  const bool add = req == kAdd;
  const bool ok = with_move_type(dtype, add, [&](auto type) {
    using T = decltype(type);
    split_kernel<T><<<blocks_for(lead * width), kThreads, 0, as_stream(stream)>>>(
        static_cast<const T *>(whole), static_cast<T *>(part), b, add);
  });
  if (!ok) return unsupported("_backward_Concat", dtype, req);
  return finish_launch(stream);
}
