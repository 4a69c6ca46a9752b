/*
 * CUDA kernels of the 'tensor' group (op/gpu/tensor.h): sum and mean and
 * their gradients, transpose, Concat's moves, softmax and log_softmax and
 * their gradients.
 *
 * Each kernel does what the CPU loop of op/cpu/tensor.c, tensor_2.c or
 * transpose.c does for one element (or one output, or one row), in the same
 * arithmetic: values are read as double, summed in double and rounded to
 * the array's type when stored.  Work too large for one thread (a long
 * reduction, a long softmax row) gets a block, which sums in a tree instead
 * of left to right; only the last bits of such sums can differ from the
 * CPU's.
 */
#include "config.h"

#include <cstdint>

#include <cuda_runtime_api.h>
#include <math_constants.h>

#include "cuda/check.h"
#include "mxref/base.h"
#include "op/gpu/kernel_util.cuh"
#include "op/gpu/tensor.h"

using namespace mxr_kernels;

namespace {

/* ------------------------------------------------------------ helpers */

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

__device__ int64_t walk_offset(const Walk &w, int64_t i) {
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

/* ---------------------------------------------------------- transpose */

/* out[o] (req)= in[from(o)]: `from` walks out's dims with in's strides. */
template <typename T>
__global__ void gather_kernel(const T *in, T *out, int64_t n, Walk from, bool add) {
  for (int64_t o = first_index(); o < n; o += index_step())
    assign(out + o, add, in[walk_offset(from, o)]);
}

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

/* ----------------------------------------------- softmax, log_softmax */

/* outer x m x inner arrays; row r = o * inner + i starts at
 * o * m * inner + i, and its elements are inner apart. */
struct Rows {
  int64_t outer, m, inner;
};

__device__ inline int64_t row_start(const Rows &r, int64_t row) {
  return (row / r.inner) * r.m * r.inner + row % r.inner;
}

/* How many elements of the row take part: length[row], or all. */
__device__ inline int64_t row_length(const void *length, int length_dtype, int64_t row,
                                     int64_t m) {
  if (length == nullptr) return m;
  if (length_dtype == MXR_INT32) return static_cast<const int32_t *>(length)[row];
  return static_cast<const int64_t *>(length)[row];
}

/* A row whose length is outside [0, m]: recorded in the run's error slot
 * (the first one wins; device/cuda_worker.h), and the row becomes NaN. */
__device__ inline void report_bad_length(mxr_device_error *err, int64_t n, int64_t row,
                                         int64_t m) {
  if (err == nullptr || atomicCAS(&err->code, MXR_DEVERR_NONE, MXR_DEVERR_SOFTMAX_LENGTH) != 0)
    return;
  err->value = n;
  err->position = row;
  err->limit = m;
}

/* Element z = x / T - top of a row that takes part, given the row's sum of
 * exp(z) and its log. */
__device__ inline double softmax_value(double z, double sum, double logsum, bool log_out) {
  return log_out ? z - logsum : exp(z) / sum;
}

/* A thread per row: the CPU's loops, in their order. */
template <typename TI, typename TO>
__global__ void softmax_thread_kernel(const TI *x, const void *length, int length_dtype, TO *y,
                                      Rows r, double t, bool log_out, bool add,
                                      mxr_device_error *err) {
  const int64_t nrows = r.outer * r.inner;
  for (int64_t row = first_index(); row < nrows; row += index_step()) {
    const int64_t base = row_start(r, row), n = row_length(length, length_dtype, row, r.m);
    if (n < 0 || n > r.m) {
      report_bad_length(err, n, row, r.m);
      for (int64_t j = 0; j < r.m; j++)
        assign(y + base + j * r.inner, add, static_cast<TO>(CUDART_NAN));
      continue;
    }
    double top = -CUDART_INF, sum = 0;
    for (int64_t j = 0; j < n; j++)
      top = fmax(top, static_cast<double>(x[base + j * r.inner]) / t);
    for (int64_t j = 0; j < n; j++)
      sum += exp(static_cast<double>(x[base + j * r.inner]) / t - top);
    const double logsum = log(sum);
    for (int64_t j = 0; j < r.m; j++) {
      const int64_t at = base + j * r.inner;
      double v = 0;
      if (j < n) v = softmax_value(static_cast<double>(x[at]) / t - top, sum, logsum, log_out);
      assign(y + at, add, static_cast<TO>(v));
    }
  }
}

/* A block per row, for long contiguous rows. */
template <typename TI, typename TO>
__global__ void softmax_block_kernel(const TI *x, const void *length, int length_dtype, TO *y,
                                     Rows r, double t, bool log_out, bool add,
                                     mxr_device_error *err) {
  __shared__ double shared[kThreads / kWarp];
  const int64_t nrows = r.outer * r.inner;
  for (int64_t row = blockIdx.x; row < nrows; row += gridDim.x) {
    /* n is the same for the whole block, so every thread takes the same
     * branch and reaches the same block_reduce calls. */
    const int64_t base = row_start(r, row), n = row_length(length, length_dtype, row, r.m);
    if (n < 0 || n > r.m) {
      if (threadIdx.x == 0) report_bad_length(err, n, row, r.m);
      for (int64_t j = threadIdx.x; j < r.m; j += blockDim.x)
        assign(y + base + j * r.inner, add, static_cast<TO>(CUDART_NAN));
      continue;
    }
    double top = -CUDART_INF, sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      top = fmax(top, static_cast<double>(x[base + j * r.inner]) / t);
    top = block_reduce(top, shared, MaxOp(), -CUDART_INF);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      sum += exp(static_cast<double>(x[base + j * r.inner]) / t - top);
    sum = block_reduce(sum, shared, SumOp(), 0.0);
    const double logsum = log(sum);
    for (int64_t j = threadIdx.x; j < r.m; j += blockDim.x) {
      const int64_t at = base + j * r.inner;
      double v = 0;
      if (j < n) v = softmax_value(static_cast<double>(x[at]) / t - top, sum, logsum, log_out);
      assign(y + at, add, static_cast<TO>(v));
    }
  }
}

/* Element j of the gradient, given the row's sum of g * y (softmax) or of
 * g (log_softmax). */
__device__ inline double softmax_grad_value(double g, double y, double sum, double t,
                                            bool log_out) {
  return (log_out ? g - exp(y) * sum : y * (g - sum)) / t;
}

template <typename TI, typename TO>
__global__ void softmax_grad_thread_kernel(const TI *g, const TI *y, TO *dx, Rows r, double t,
                                           bool log_out, bool add) {
  const int64_t nrows = r.outer * r.inner;
  for (int64_t row = first_index(); row < nrows; row += index_step()) {
    const int64_t base = row_start(r, row);
    double sum = 0;
    for (int64_t j = 0; j < r.m; j++) {
      const int64_t at = base + j * r.inner;
      sum += static_cast<double>(g[at]) * (log_out ? 1.0 : static_cast<double>(y[at]));
    }
    for (int64_t j = 0; j < r.m; j++) {
      const int64_t at = base + j * r.inner;
      const double v = softmax_grad_value(g[at], y[at], sum, t, log_out);
      assign(dx + at, add, static_cast<TO>(v));
    }
  }
}

template <typename TI, typename TO>
__global__ void softmax_grad_block_kernel(const TI *g, const TI *y, TO *dx, Rows r, double t,
                                          bool log_out, bool add) {
  __shared__ double shared[kThreads / kWarp];
  const int64_t nrows = r.outer * r.inner;
  for (int64_t row = blockIdx.x; row < nrows; row += gridDim.x) {
    const int64_t base = row_start(r, row);
    double sum = 0;
    for (int64_t j = threadIdx.x; j < r.m; j += blockDim.x) {
      const int64_t at = base + j * r.inner;
      sum += static_cast<double>(g[at]) * (log_out ? 1.0 : static_cast<double>(y[at]));
    }
    sum = block_reduce(sum, shared, SumOp(), 0.0);
    for (int64_t j = threadIdx.x; j < r.m; j += blockDim.x) {
      const int64_t at = base + j * r.inner;
      const double v = softmax_grad_value(g[at], y[at], sum, t, log_out);
      assign(dx + at, add, static_cast<TO>(v));
    }
  }
}

/* A block per row pays off for contiguous rows (inner 1) of a warp's
 * worth or more; strided rows read coalesced with a thread per row. */
inline bool block_per_row(const Rows &r) { return r.inner == 1 && r.m >= kWarp; }

}  // namespace

/* ------------------------------------------------------------ launchers */

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

extern "C" int mxr__gpu_softmax(void *stream, const void *x, int x_dtype, const void *length,
                                int length_dtype, void *out, int out_dtype, int64_t outer,
                                int64_t m, int64_t inner, double temperature, bool log_out,
                                int req, struct mxr_device_error *err) {
  const char *op = log_out ? "log_softmax" : "softmax";
  if (!is_float_dtype(x_dtype)) return unsupported(op, x_dtype, req);
  if (!is_float_dtype(out_dtype)) return unsupported(op, out_dtype, req);
  if (length != nullptr && length_dtype != MXR_INT32 && length_dtype != MXR_INT64)
    return mxr_set_error(MXR_EINVAL, "%s (GPU): length must be int32 or int64", op);
  const Rows r = {outer, m, inner};
  const int64_t nrows = outer * inner;
  if (req == kNull || nrows == 0) return 0;
  const bool add = req == kAdd;
  with_float_type(x_dtype, [&](auto in_type) {
    with_float_type(out_dtype, [&](auto out_type) {
      using TI = decltype(in_type);
      using TO = decltype(out_type);
      const TI *xs = static_cast<const TI *>(x);
      TO *ys = static_cast<TO *>(out);
      if (block_per_row(r))
        softmax_block_kernel<TI, TO><<<blocks_for_rows(nrows), kThreads, 0, as_stream(stream)>>>(
            xs, length, length_dtype, ys, r, temperature, log_out, add, err);
      else
        softmax_thread_kernel<TI, TO><<<blocks_for(nrows), kThreads, 0, as_stream(stream)>>>(
            xs, length, length_dtype, ys, r, temperature, log_out, add, err);
    });
  });
  int st = finish_launch(stream);
  /* A worker's op_finish takes the error; a direct call has waited here. */
  if (!st && stream == nullptr && err != nullptr) st = mxr__cuda_error_take(nullptr);
  return st;
}

extern "C" int mxr__gpu_softmax_grad(void *stream, const void *ograd, const void *y, int y_dtype,
                                     void *grad, int grad_dtype, int64_t outer, int64_t m,
                                     int64_t inner, double temperature, bool log_out, int req) {
  const char *op = log_out ? "_backward_log_softmax" : "_backward_softmax";
  if (!is_float_dtype(y_dtype)) return unsupported(op, y_dtype, req);
  if (!is_float_dtype(grad_dtype)) return unsupported(op, grad_dtype, req);
  const Rows r = {outer, m, inner};
  const int64_t nrows = outer * inner;
  if (req == kNull || nrows == 0) return 0;
  const bool add = req == kAdd;
  with_float_type(y_dtype, [&](auto in_type) {
    with_float_type(grad_dtype, [&](auto out_type) {
      using TI = decltype(in_type);
      using TO = decltype(out_type);
      const TI *gs = static_cast<const TI *>(ograd), *ys = static_cast<const TI *>(y);
      TO *dxs = static_cast<TO *>(grad);
      if (block_per_row(r))
        softmax_grad_block_kernel<TI, TO><<<blocks_for_rows(nrows), kThreads, 0,
                                            as_stream(stream)>>>(gs, ys, dxs, r, temperature,
                                                                 log_out, add);
      else
        softmax_grad_thread_kernel<TI, TO><<<blocks_for(nrows), kThreads, 0, as_stream(stream)>>>(
            gs, ys, dxs, r, temperature, log_out, add);
    });
  });
  return finish_launch(stream);
}

extern "C" int mxr__gpu_zero(void *stream, void *out, size_t bytes) {
  if (bytes == 0) return 0;
  MXR_CUDA_CALL(cudaMemsetAsync(out, 0, bytes, as_stream(stream)));
  return finish_launch(stream);
}
