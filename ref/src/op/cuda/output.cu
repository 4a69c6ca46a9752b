/*
 * CUDA kernels of SoftmaxOutput and the regression outputs (output.h).
 * Each follows its CPU kernel (op/output.c) element for element: the same
 * formula in double, the same order of sums within a row.  Sizes here are
 * those of losses (a row per example), so the kernels favour plainness:
 * one thread per row or per element.  SoftmaxOutput's gradient with normalization "valid" first
 * counts the labels that count into a word of the run's device scratch
 * (cuda/worker.h), all blocks adding, then divides by it on the
 * device: the host never waits for the count.
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
#include "op/cuda/kernel_util.cuh"
#include "op/cuda/output.h"
#include "op/random_fn.h"

using namespace mxr_kernels;

namespace {

/* The CPU's label_int: static_cast<int> without undefined behaviour. */
__device__ inline int label_int(double v) {
  return v > (double)INT_MIN - 1.0 && v < (double)INT_MAX + 1.0 ? (int)v : INT_MIN;
}

/* --------------------------------------------------------------- softmax */

template <typename T>
__global__ void softmax_mid_kernel(int64_t outer, int64_t k, int64_t inner, const T *x, T *y,
                                   int req) {
  for (int64_t r = first_index(); r < outer * inner; r += index_step()) {
    const int64_t base = (r / inner) * k * inner + r % inner;
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < k; c++) mx = fmax(mx, static_cast<double>(x[base + c * inner]));
    for (int64_t c = 0; c < k; c++) sum += exp(static_cast<double>(x[base + c * inner]) - mx);
    for (int64_t c = 0; c < k; c++) {
      const int64_t j = base + c * inner;
      store_req(y, j, req, exp(static_cast<double>(x[j]) - mx) / sum);
    }
  }
}

/* ------------------------------------------------ SoftmaxOutput gradient */

/* With count_valid, the labels other than ignore_label, counted into
 * *count (zeroed before): a block reduction, then one atomic add a block.
 * The count is an integer, so the order of the adds does not matter. */
template <typename T>
__global__ void count_valid_kernel(int64_t n, int ignore_label, const T *label,
                                   unsigned long long *count) {
  __shared__ unsigned long long partial[kThreads];
  unsigned long long mine = 0;
  for (int64_t j = first_index(); j < n; j += index_step())
    mine += label_int(static_cast<double>(label[j])) != ignore_label;
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if ((int)threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0 && partial[0] != 0) atomicAdd(count, partial[0]);
}

/* valid_count: the count_valid_kernel's result when g.count_valid. */
template <typename T>
__global__ void smo_grad_kernel(mxr_smo_grad_plan g, const unsigned long long *valid_count,
                                const T *label, const T *y, T *dx, int req) {
  double scale = g.grad_scale;
  if (g.count_valid) {
    scale /= static_cast<double>(*valid_count == 0 ? 1 : *valid_count);
  } else {
    scale /= static_cast<double>(g.valid);
    if (g.divide_by_inner) scale /= static_cast<double>(g.inner);
  }
  for (int64_t j = first_index(); j < g.outer * g.k * g.inner; j += index_step()) {
    const int64_t i = j % g.inner, x = (j / g.inner) % g.k, o = j / (g.inner * g.k);
    const int cls = label_int(static_cast<double>(label[o * g.inner + i]));
    const double yj = static_cast<double>(y[j]);
    double v = 0;
    if (!(g.use_ignore && cls == g.ignore_label)) {
      v = yj - (x == cls ? 1.0 : 0.0);
      if (g.smooth) v += x == cls ? g.alpha : -g.off;
    }
    v *= scale;
    store_req(dx, j, req, g.out_grad ? v * yj : v);
  }
}

template <typename T>
__global__ void smo_grad_dense_kernel(int64_t n, double gs, bool out_grad, const T *label,
                                      const T *y, T *dx, int req) {
  for (int64_t j = first_index(); j < n; j += index_step()) {
    const double yj = static_cast<double>(y[j]);
    const double v = (yj - static_cast<double>(label[j])) * gs;
    store_req(dx, j, req, out_grad ? v * yj : v);
  }
}

template <typename T>
__global__ void sigmoid_kernel(int64_t n, const T *x, T *y, int req) {
  for (int64_t j = first_index(); j < n; j += index_step())
    store_req(y, j, req, 1.0 / (1.0 + exp(-static_cast<double>(x[j]))));
}

template <typename T>
__global__ void regression_grad_kernel(int64_t n, bool mae, double scale, const T *label,
                                       const T *y, T *dx, int req) {
  for (int64_t j = first_index(); j < n; j += index_step()) {
    const double d = static_cast<double>(y[j]) - static_cast<double>(label[j]);
    store_req(dx, j, req, (mae ? (d > 0 ? 1.0 : -1.0) : d) * scale);
  }
}


}  // namespace

extern "C" int mxr__gpu_softmax_mid(void *stream, int dtype, int64_t outer, int64_t k,
                                    int64_t inner, const void *x, void *y, int req) {
  const int64_t rows = outer * inner;
  if (req == kNull || rows == 0 || k == 0) return 0;
  return by_dtype("SoftmaxOutput", stream, dtype, req, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    softmax_mid_kernel<T><<<blocks_for(rows), kThreads, 0, as_stream(stream)>>>(
        outer, k, inner, static_cast<const T *>(x), static_cast<T *>(y), req);
  });
}

extern "C" int mxr__gpu_smo_grad(const struct mxr_run_ctx *run, int dtype,
                                 const mxr_smo_grad_plan *g, const void *label, const void *y,
                                 void *dx, int req) {
  const int64_t n = g->outer * g->k * g->inner, nlabels = g->outer * g->inner;
  if (req == kNull || n == 0) return 0;
  void *stream = run ? run->stream : nullptr;
  unsigned long long *count = nullptr;
  if (g->count_valid) {
    void *scratch = nullptr;
    const int st = mxr__cuda_scratch(run, sizeof *count, &scratch);
    if (st) return st;
    count = static_cast<unsigned long long *>(scratch);
    MXR_CUDA_CALL(cudaMemsetAsync(count, 0, sizeof *count, as_stream(stream)));
  }
  return by_dtype("_backward_SoftmaxOutput", stream, dtype, req, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (count)
      count_valid_kernel<T><<<blocks_for(nlabels), kThreads, 0, as_stream(stream)>>>(
          nlabels, g->ignore_label, static_cast<const T *>(label), count);
    smo_grad_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        *g, count, static_cast<const T *>(label), static_cast<const T *>(y),
        static_cast<T *>(dx), req);
  });
}

extern "C" int mxr__gpu_smo_grad_dense(void *stream, int dtype, int64_t n, double grad_scale,
                                       bool out_grad, const void *label, const void *y, void *dx,
                                       int req) {
  if (req == kNull || n == 0) return 0;
  return by_dtype("_backward_SoftmaxOutput", stream, dtype, req, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    smo_grad_dense_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        n, grad_scale, out_grad, static_cast<const T *>(label), static_cast<const T *>(y),
        static_cast<T *>(dx), req);
  });
}

extern "C" int mxr__gpu_sigmoid(void *stream, int dtype, int64_t n, const void *x, void *y,
                                int req) {
  if (req == kNull || n == 0) return 0;
  return by_dtype("LogisticRegressionOutput", stream, dtype, req, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    sigmoid_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        n, static_cast<const T *>(x), static_cast<T *>(y), req);
  });
}

extern "C" int mxr__gpu_regression_grad(void *stream, int dtype, int64_t n, bool mae, double scale,
                                        const void *label, const void *y, void *dx, int req) {
  if (req == kNull || n == 0) return 0;
  return by_dtype("regression output gradient", stream, dtype, req, [&](auto *tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    regression_grad_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        n, mae, scale, static_cast<const T *>(label), static_cast<const T *>(y),
        static_cast<T *>(dx), req);
  });
}
