/*
 * CUDA kernels of sum and mean and their gradients (op/cuda/tensor.h), as
 * the CPU loops of op/reduce.c compute them: values are read as double,
 * summed in double and rounded to the array's type when stored.  A long
 * reduction gets a block, which sums in a tree instead of left to right;
 * only the last bits of such sums can differ from the CPU's.
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

/* -------------------------------------------------------- sum, mean */

/* A thread per output: the CPU's loop, in its order. */
template <typename T>
__global__ void reduce_thread_kernel(const T *in, T *out, int64_t nout, Walk kept, Walk red,
                                     int64_t nred, bool mean, bool add) {
  for (int64_t o = first_index(); o < nout; o += index_step()) {
    const int64_t base = walk_offset(kept, o);
    double acc = 0;
    for (int64_t r = 0; r < nred; r++) acc += static_cast<double>(in[base + walk_offset(red, r)]);
    assign(out + o, add, static_cast<T>(mean ? acc / static_cast<double>(nred) : acc));
  }
}

/* A block per output, for long reductions. */
template <typename T>
__global__ void reduce_block_kernel(const T *in, T *out, int64_t nout, Walk kept, Walk red,
                                    int64_t nred, bool mean, bool add) {
  __shared__ double shared[kThreads / kWarp];
  for (int64_t o = blockIdx.x; o < nout; o += gridDim.x) {
    const int64_t base = walk_offset(kept, o);
    double acc = 0;
    for (int64_t r = threadIdx.x; r < nred; r += blockDim.x)
      acc += static_cast<double>(in[base + walk_offset(red, r)]);
    acc = block_reduce(acc, shared, SumOp(), 0.0);
    if (threadIdx.x == 0)
      assign(out + o, add, static_cast<T>(mean ? acc / static_cast<double>(nred) : acc));
  }
}

/* Splits the dims of an input of shape dims[0..ndim) into the kept ones and
 * the reduced ones, each with its stride in the input. */
void reduce_walks(int ndim, const int64_t *dims, const bool *reduced, Walk *kept, Walk *red) {
  int64_t stride[MXR_MAX_NDIM];
  row_major_strides(ndim, dims, stride);
  kept->ndim = 0;
  red->ndim = 0;
  for (int d = 0; d < ndim; d++) {
    Walk *w = reduced[d] ? red : kept;
    w->dim[w->ndim] = dims[d];
    w->stride[w->ndim] = stride[d];
    w->ndim++;
  }
}

/* Each output's elements spread over blocks; below a warp's worth, most of
 * a block would idle, so a thread per output does better. */
template <typename T>
void launch_reduce(void *stream, const void *in, void *out, const Walk &kept, const Walk &red,
                   bool mean, bool add) {
  const int64_t nout = walk_size(kept), nred = walk_size(red);
  const T *x = static_cast<const T *>(in);
  T *y = static_cast<T *>(out);
  if (nred >= kWarp)
    reduce_block_kernel<T><<<blocks_for_rows(nout), kThreads, 0, as_stream(stream)>>>(
        x, y, nout, kept, red, nred, mean, add);
  else
    reduce_thread_kernel<T><<<blocks_for(nout), kThreads, 0, as_stream(stream)>>>(
        x, y, nout, kept, red, nred, mean, add);
}

/* grad[i] (req)= ograd[the kept coordinates of i] * scale: `from` walks the
 * grad's dims with ograd's strides, 0 along the reduced dims. */
template <typename T>
__global__ void reduce_grad_kernel(const T *ograd, T *grad, int64_t n, Walk from, double scale,
                                   bool add) {
  for (int64_t i = first_index(); i < n; i += index_step())
    assign(grad + i, add, static_cast<T>(static_cast<double>(ograd[walk_offset(from, i)]) * scale));
}

}  // namespace

extern "C" int mxr__gpu_reduce(void *stream, const void *in, void *out, int dtype, int ndim,
                               const int64_t *dims, const bool *reduced, bool mean, int req) {
  if (req == kNull) return 0;
  Walk kept, red;
  reduce_walks(ndim, dims, reduced, &kept, &red);
  if (walk_size(kept) == 0) return 0;
  const bool add = req == kAdd;
  const bool ok = with_float_type(dtype, [&](auto type) {
    launch_reduce<decltype(type)>(stream, in, out, kept, red, mean, add);
  });
  if (!ok) return unsupported(mean ? "mean" : "sum", dtype, req);
  return finish_launch(stream);
}

extern "C" int mxr__gpu_reduce_grad(void *stream, const void *ograd, void *grad, int dtype,
                                    int ndim, const int64_t *dims, const bool *reduced,
                                    double scale, int req) {
  if (req == kNull) return 0;
  /* ograd's strides: row-major over the kept dims; 0 along reduced ones. */
  Walk from;
  from.ndim = ndim;
  int64_t m = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    from.dim[d] = dims[d];
    from.stride[d] = reduced[d] ? 0 : m;
    if (!reduced[d]) m *= dims[d];
  }
  const int64_t n = walk_size(from);
  if (n == 0) return 0;
  const bool add = req == kAdd;
  const bool ok = with_float_type(dtype, [&](auto type) {
    using T = decltype(type);
    reduce_grad_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<const T *>(ograd), static_cast<T *>(grad), n, from, scale, add);
  });
  if (!ok) return unsupported("_backward_sum/_backward_mean", dtype, req);
  return finish_launch(stream);
}
