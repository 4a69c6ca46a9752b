/*
 * CUDA kernel of transpose (op/cuda/tensor.h): one thread per output
 * element moves it as op/transpose.c does.
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

/* ---------------------------------------------------------- transpose */

/* out[o] (req)= in[from(o)]: `from` walks out's dims with in's strides. */
template <typename T>
__global__ void gather_kernel(const T *in, T *out, int64_t n, Walk from, bool add) {
  for (int64_t o = first_index(); o < n; o += index_step())
    assign(out + o, add, in[walk_offset(from, o)]);
}

}  // namespace

extern "C" int mxr__gpu_transpose(void *stream, const void *in, void *out, int dtype, int ndim,
                                  const int64_t *dims, const int *perm, int req) {
  if (req == kNull) return 0;
  int64_t in_stride[MXR_MAX_NDIM];
  row_major_strides(ndim, dims, in_stride);
  Walk from;
  from.ndim = ndim;
  for (int d = 0; d < ndim; d++) {
    from.dim[d] = dims[perm[d]];
    from.stride[d] = in_stride[perm[d]];
  }
  const int64_t n = walk_size(from);
  if (n == 0) return 0;
  const bool add = req == kAdd;
  const bool ok = with_move_type(dtype, add, [&](auto type) {
    using T = decltype(type);
    gather_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<const T *>(in), static_cast<T *>(out), n, from, add);
  });
  if (!ok) return unsupported("transpose", dtype, req);
  return finish_launch(stream);
}
