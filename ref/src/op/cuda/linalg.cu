/*
 * Matrix products through cuBLAS, and the two small kernels that
 * FullyConnected needs around them: adding a bias row to every row, and
 * summing a matrix's rows into a bias gradient (launch.h).
 *
 * cuBLAS is column-major and our arrays are row-major.  A row-major m x n
 * matrix is, read column-major, its n x m transpose; so C = op(A) op(B)
 * is computed as C^T = op(B)^T op(A)^T, i.e. cuBLAS's gemm with the
 * operands swapped and the same leading dimensions.
 */
#include "config.h"

#include <climits>
#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "cuda/cublas.h"
#include "cuda/worker.h"
#include "mxref/engine.h"
#include "op/cuda/kernel_util.cuh"
#include "op/cuda/launch.h"

using namespace mxr_kernels;

namespace {

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* The gemm of a dtype, from the loaded API. */
template <typename T>
struct Gemm;
template <>
struct Gemm<float> {
  static decltype(MxrCublas::sgemm) of(const MxrCublas *b) { return b->sgemm; }
};
template <>
struct Gemm<double> {
  static decltype(MxrCublas::dgemm) of(const MxrCublas *b) { return b->dgemm; }
};

template <typename T>
int gemm_typed(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, const void *a, int lda,
               const void *b, int ldb, bool add, void *c) {
  const T alpha = 1, beta = add ? 1 : 0;
  auto gemm = Gemm<T>::of(mxr__cublas()); /* loaded: h exists */
  MXR_CUBLAS_CALL(gemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                       &alpha, static_cast<const T *>(b), ldb, static_cast<const T *>(a), lda,
                       &beta, static_cast<T *>(c), n));
  return 0;
}

/* The stream a handle queues on (NULL for the legacy default stream). */
int handle_stream(cublasHandle_t h, void **stream) {
  cudaStream_t s;
  MXR_CUBLAS_CALL(mxr__cublas()->get_stream(h, &s));
  *stream = s;
  return 0;
}

template <typename T>
__global__ void add_row_kernel(T *out, const T *row, int64_t m, int64_t n) {
  for (int64_t i = first_index(); i < m * n; i += index_step())
    out[i] += row[i % n];
}

/* One thread per column; the sum is kept in double and rounded to T before
 * it is stored or added, as the CPU's put() does. */
template <typename T>
__global__ void column_sums_kernel(const T *in, T *out, int64_t m, int64_t n, int req) {
  for (int64_t j = first_index(); j < n; j += index_step()) {
    double s = 0;
    for (int64_t i = 0; i < m; i++) s += static_cast<double>(in[i * n + j]);
    store_req(out, j, req, s);
  }
}

}  // namespace

extern "C" int mxr__gpu_gemm(const struct mxr_run_ctx *run, int dtype, bool ta, bool tb,
                             int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                             const void *b, int64_t ldb, int req, void *c) {
  if (req == kNull || m == 0 || n == 0) return 0;
  if (dtype != MXR_FLOAT32 && dtype != MXR_FLOAT64) return unsupported("gemm", dtype, req);
  if (!fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(lda) || !fits_int(ldb))
    return mxr_set_error(MXR_EINVAL, "gemm (GPU): matrix of %lld x %lld x %lld is too large for cuBLAS",
                         (long long)m, (long long)n, (long long)k);
  void *hv;
  int st = mxr__cuda_blas_handle(run, &hv);
  if (st) return st;
  cublasHandle_t h = static_cast<cublasHandle_t>(hv);
  void *stream;
  st = handle_stream(h, &stream);
  if (st) return st;
  bool add = req == kAdd;
  if (k == 0) { /* an empty sum: C = 0, or C unchanged */
    if (!add)
      MXR_CUDA_CALL(cudaMemsetAsync(c, 0, (size_t)(m * n) * mxr_dtype_size(dtype), as_stream(stream)));
    return finish_launch(stream);
  }
  st = dtype == MXR_FLOAT64
           ? gemm_typed<double>(h, ta, tb, (int)m, (int)n, (int)k, a, (int)lda, b, (int)ldb, add, c)
           : gemm_typed<float>(h, ta, tb, (int)m, (int)n, (int)k, a, (int)lda, b, (int)ldb, add, c);
  return st ? st : finish_launch(stream);
}

extern "C" int mxr__gpu_add_row(void *stream, void *out, const void *row, int64_t m, int64_t n,
                                int dtype) {
  if (m == 0 || n == 0) return 0;
  if (dtype == MXR_FLOAT32)
    add_row_kernel<float><<<blocks_for(m * n), kThreads, 0, as_stream(stream)>>>(
        static_cast<float *>(out), static_cast<const float *>(row), m, n);
  else if (dtype == MXR_FLOAT64)
    add_row_kernel<double><<<blocks_for(m * n), kThreads, 0, as_stream(stream)>>>(
        static_cast<double *>(out), static_cast<const double *>(row), m, n);
  else
    return unsupported("bias add", dtype, kAdd);
  return finish_launch(stream);
}

extern "C" int mxr__gpu_column_sums(void *stream, const void *in, void *out, int64_t m, int64_t n,
                                    int dtype, int req) {
  if (req == kNull || n == 0) return 0;
  if (dtype == MXR_FLOAT32)
    column_sums_kernel<float><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<const float *>(in), static_cast<float *>(out), m, n, req);
  else if (dtype == MXR_FLOAT64)
    column_sums_kernel<double><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<const double *>(in), static_cast<double *>(out), m, n, req);
  else
    return unsupported("column sums", dtype, req);
  return finish_launch(stream);
}
