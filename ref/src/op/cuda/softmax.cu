/*
 * CUDA kernels of softmax and log_softmax and their gradients
 * (op/cuda/tensor.h), and mxr__gpu_zero.  Each kernel does what the CPU
 * loop of op/softmax.c does for one row, in the same arithmetic: values
 * are read as double, summed in double and rounded to the array's type
 * when stored.  A long row gets a block, which sums in a tree instead of
 * left to right; only the last bits of such sums can differ from the
 * CPU's.
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
 * (the first one wins; cuda/worker.h), and the row becomes NaN. */
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
