/*
 * Internal: helpers of the CUDA kernels of the tensor families
 * (reduce.cu, transpose.cu, concat.cu, softmax.cu): dtype dispatch, index
 * walks over strided arrays, and block-wide reductions in double.
 */
#ifndef MXR_OP_CUDA_TENSOR_KERNELS_CUH
#define MXR_OP_CUDA_TENSOR_KERNELS_CUH

#include <cstdint>

#include <cuda_runtime_api.h>

#include "mxref/base.h"
#include "op/cuda/kernel_util.cuh"

using namespace mxr_kernels;

namespace {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

/* Blocks for kernels that give each block one row (or output) at a time. */
inline int blocks_for_rows(int64_t rows) {
  return static_cast<int>(rows < 1 ? 1 : (rows > kMaxBlocks ? kMaxBlocks : rows));
}

template <typename T>
__device__ inline void assign(T *dst, bool add, T v) {
  if (add)
    *dst += v;
  else
    *dst = v;
}

/* Calls f(T()) with float or double for a float32 or float64 dtype.
 * false: another dtype. */
template <typename F>
bool with_float_type(int dtype, F f) {
  if (dtype == MXR_FLOAT32) {
    f(float());
    return true;
  }
  if (dtype == MXR_FLOAT64) {
    f(double());
    return true;
  }
  return false;
}

/* Calls f(T()) with the type that moves dtype's elements: their bits for
 * a write (any dtype), float or double for an add.  false: none. */
template <typename F>
bool with_move_type(int dtype, bool add, F f) {
  if (add) return with_float_type(dtype, f);
  switch (mxr_dtype_size(dtype)) {
  case 1: f(uint8_t()); return true;
  case 2: f(uint16_t()); return true;
  case 4: f(uint32_t()); return true;
  case 8: f(uint64_t()); return true;
  default: return false;
  }
}

/* An index space of ndim dims, each with the stride it has in the array it
 * addresses: index i (row-major over dim[]) is at offset(i) in that array.
 * ndim 0 is one index, at offset 0. */
struct Walk {
  int ndim;
  int64_t dim[MXR_MAX_NDIM];
  int64_t stride[MXR_MAX_NDIM];
};

__device__ inline int64_t walk_offset(const Walk &w, int64_t i) {
  int64_t off = 0;
  for (int d = w.ndim - 1; d >= 0; d--) {
    off += (i % w.dim[d]) * w.stride[d];
    i /= w.dim[d];
  }
  return off;
}

inline int64_t walk_size(const Walk &w) {
  int64_t n = 1;
  for (int d = 0; d < w.ndim; d++) n *= w.dim[d];
  return n;
}

inline void row_major_strides(int ndim, const int64_t *dims, int64_t *stride) {
  int64_t m = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    stride[d] = m;
    m *= dims[d];
  }
}

struct SumOp {
  __device__ double operator()(double a, double b) const { return a + b; }
};
struct MaxOp { /* fmax skips NaN, as the CPU kernel's fmax does */
  __device__ double operator()(double a, double b) const { return fmax(a, b); }
};

/* Every thread of the block calls this with its v; all get op over the
 * block.  blockDim.x must be a multiple of kWarp (we launch kThreads);
 * `shared` holds one slot per warp. */
template <typename Op>
__device__ double block_reduce(double v, double *shared, Op op, double identity) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int nwarps = blockDim.x / kWarp;
  for (int d = kWarp / 2; d > 0; d /= 2) v = op(v, __shfl_down_sync(kFullMask, v, d));
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < nwarps ? shared[lane] : identity;
    for (int d = kWarp / 2; d > 0; d /= 2) v = op(v, __shfl_down_sync(kFullMask, v, d));
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  v = shared[0];
  __syncthreads(); /* before the next call overwrites shared */
  return v;
}

}  // namespace

#endif /* MXR_OP_CUDA_TENSOR_KERNELS_CUH */
