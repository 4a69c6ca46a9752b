/*
 * GPU benchmark, on gpu(0); built with CUDA only.  Without a GPU
 * it says so and exits 0 (make bench goes on).
 *
 *  1. The seed workload on the GPU: 1000 chained flips on shape (10,) bound
 *     on gpu(0) with a gradient, forward+backward (2001 ops a pass pair),
 *     under the six bulking configurations and, fully bulked, with CUDA
 *     graphs (MXNET_ENABLE_CUDA_GRAPHS's executor option).  Printed: us per
 *     op, median of --reps runs of 20 timed iterations.
 *  2. One inference segment of the 1000 flips, bulked, without and with a
 *     CUDA graph: us per op.  Targets (H100): bulked at most 3 us per op,
 *     graph-replayed at most 1 us per op.
 *  3. The ceilings: a device-to-device copy of 256 MiB (GB/s) and a direct
 *     cuBLAS sgemm of 4096^3 in full FP32 (TFLOP/s).
 *  4. FullyConnected forward of the same size through the executor against
 *     that sgemm.  Target: within 10 %.
 *  5. With cuDNN: Convolution forward of a ResNet-like layer (batch 32,
 *     64 -> 64 channels, 56x56, 3x3 kernel, pad 1, float32, no bias)
 *     through the executor against a direct cudnnConvolutionForward of the
 *     same geometry, whose algorithm is chosen by the runtime's default
 *     policy (op/cuda/convolution.cu): MXNET_CUDNN_AUTOTUNE_DEFAULT (0 heuristic,
 *     1 measured within the workspace limit, 2 fastest measured), the op's
 *     default workspace limit of 1024 MB, FMA math unless TF32 is allowed
 *     (MXNET_CUDA_ALLOW_TENSOR_CORE and
 *     MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION).  Each timed run is
 *     CONV_ITERS forwards and one wait.  Target: within 10 %.
 *
 * --check makes a missed target exit 1.
 */
#include "config.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#ifdef MXR_HAVE_CUDNN
#include <cudnn.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "mxref/config.h"
#include "mxref/device.h"
#include "mxref/executor.h"
#include "mxref/mxref.h"
#include "mxref/symbol.h"

enum { NUM_OPS = 1000, LEN = 10, ITERS = 20, MAX_REPS = 15, GEMM = 4096 };

static void cuda_ok(cudaError_t e, const char *call) {
  if (e != cudaSuccess) {
    fprintf(stderr, "gpu_bench: %s: %s\n", call, cudaGetErrorString(e));
    exit(2);
  }
}

static void blas_ok(cublasStatus_t s, const char *call) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "gpu_bench: %s: cuBLAS status %d\n", call, (int)s);
    exit(2);
  }
}

static mxr_ndarray *gpu_array(mxr_engine *eng, int ndim, const int64_t *shape, float fill) {
  mxr_ndarray *a;
  if (mxr_ndarray_create(eng, shape, ndim, mxr_gpu(0), MXR_FLOAT32, 0, &a)) bench_die("array");
  int64_t n = mxr_ndarray_size(a);
  float *buf = malloc((size_t)n * sizeof *buf);
  for (int64_t i = 0; i < n; i++) buf[i] = fill + (float)(i % 7) * 0.01f;
  if (mxr_ndarray_sync_copy_from_cpu(a, buf, (size_t)n)) bench_die("copy");
  free(buf);
  return a;
}

static struct mxr_exec_opts opts_for(mxr_engine *eng, int fwd, int bwd, bool train, bool graphs) {
  struct mxr_exec_opts o;
  if (mxr_exec_opts_from_config(&o)) bench_die("config");
  o.engine = eng;
  o.max_node_train_fwd = fwd;
  o.max_node_train_bwd = bwd;
  o.bulk_train = train;
  o.bulk_inference = true;
  o.cuda_graphs = graphs;
  return o;
}

/* us per op of forward+backward passes of the seed workload. */
static double seed_us_per_op(mxr_engine *eng, mxr_symbol *sym, struct mxr_exec_opts o) {
  int64_t shape[] = {LEN};
  mxr_ndarray *x = gpu_array(eng, 1, shape, 0), *dx = gpu_array(eng, 1, shape, 0),
              *dy = gpu_array(eng, 1, shape, 1);
  int req = MXR_GRAD_WRITE;
  mxr_executor *ex;
  if (mxr_executor_bind(sym, mxr_gpu(0), 1, &x, &dx, &req, 0, NULL, &o, &ex)) bench_die("bind");
  double start = 0;
  for (int i = 0; i < ITERS + 2; i++) { /* two warm-ups: a graph is captured on the second */
    if (i == 2) start = bench_now_s();
    if (mxr_executor_forward(ex, true) || mxr_executor_backward(ex, 1, &dy)) bench_die("run");
    if (mxr_ndarray_wait_to_read(dx)) bench_die("wait");
  }
  double us = (bench_now_s() - start) * 1e6 / ITERS / (2 * NUM_OPS + 1);
  mxr_executor_free(ex);
  mxr_ndarray_free(x);
  mxr_ndarray_free(dx);
  mxr_ndarray_free(dy);
  if (mxr_engine_wait_for_all(eng)) bench_die("wait");
  return us;
}

/* us per op of one inference segment of the chain. */
static double segment_us_per_op(mxr_engine *eng, mxr_symbol *sym, bool graphs) {
  int64_t shape[] = {LEN};
  mxr_ndarray *x = gpu_array(eng, 1, shape, 0);
  struct mxr_exec_opts o = opts_for(eng, 15, 15, true, graphs);
  mxr_executor *ex;
  if (mxr_executor_bind(sym, mxr_gpu(0), 1, &x, NULL, NULL, 0, NULL, &o, &ex)) bench_die("bind");
  int n;
  mxr_ndarray *const *outs;
  if (mxr_executor_outputs(ex, &n, &outs)) bench_die("outputs");
  double start = 0;
  for (int i = 0; i < ITERS + 2; i++) {
    if (i == 2) start = bench_now_s();
    if (mxr_executor_forward(ex, false) || mxr_ndarray_wait_to_read(outs[0])) bench_die("run");
  }
  double us = (bench_now_s() - start) * 1e6 / ITERS / NUM_OPS;
  mxr_executor_free(ex);
  mxr_ndarray_free(x);
  if (mxr_engine_wait_for_all(eng)) bench_die("wait");
  return us;
}

/* GB/s of a device-to-device copy (read + write counted once each). */
static double d2d_gbps(int reps) {
  size_t bytes = (size_t)256 << 20;
  void *a, *b;
  cuda_ok(cudaMalloc(&a, bytes), "cudaMalloc");
  cuda_ok(cudaMalloc(&b, bytes), "cudaMalloc");
  double t[MAX_REPS];
  for (int r = 0; r < reps + 1; r++) {
    double t0 = bench_now_s();
    cuda_ok(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync");
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (r) t[r - 1] = bench_now_s() - t0;
  }
  cuda_ok(cudaFree(a), "cudaFree");
  cuda_ok(cudaFree(b), "cudaFree");
  return 2.0 * (double)bytes / bench_median(t, reps) * 1e-9;
}

/* TFLOP/s of a direct FP32 sgemm, C = A B^T (what FullyConnected computes). */
static double sgemm_tflops(int reps) {
  size_t bytes = (size_t)GEMM * GEMM * sizeof(float);
  float *a, *w, *c;
  cuda_ok(cudaMalloc((void **)&a, bytes), "cudaMalloc");
  cuda_ok(cudaMalloc((void **)&w, bytes), "cudaMalloc");
  cuda_ok(cudaMalloc((void **)&c, bytes), "cudaMalloc");
  cuda_ok(cudaMemset(a, 0, bytes), "cudaMemset");
  cuda_ok(cudaMemset(w, 0, bytes), "cudaMemset");
  cublasHandle_t h;
  blas_ok(cublasCreate(&h), "cublasCreate");
  blas_ok(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  const float one = 1, zero = 0;
  double t[MAX_REPS];
  for (int r = 0; r < reps + 1; r++) {
    double t0 = bench_now_s();
    /* Row-major C = A W^T is column-major C^T = W A^T. */
    blas_ok(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, GEMM, GEMM, GEMM, &one, w, GEMM, a, GEMM, &zero,
                        c, GEMM),
            "cublasSgemm");
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (r) t[r - 1] = bench_now_s() - t0;
  }
  blas_ok(cublasDestroy(h), "cublasDestroy");
  cuda_ok(cudaFree(a), "cudaFree");
  cuda_ok(cudaFree(w), "cudaFree");
  cuda_ok(cudaFree(c), "cudaFree");
  return 2.0 * GEMM * (double)GEMM * GEMM / bench_median(t, reps) * 1e-12;
}

/* Bind `sym` (one op of `data` and a weight: args[0], args[1]) on gpu(0),
 * and return the median over `reps` timed runs of the seconds that `iters`
 * forwards and one wait take; an untimed first run picks algorithms.  Frees
 * the arrays and both symbols. */
static double op_forward_seconds(mxr_engine *eng, mxr_symbol *sym, mxr_symbol *data,
                                 mxr_ndarray *args[2], int iters, int reps) {
  struct mxr_exec_opts o = opts_for(eng, 15, 15, true, false);
  mxr_executor *ex;
  if (mxr_executor_bind(sym, mxr_gpu(0), 2, args, NULL, NULL, 0, NULL, &o, &ex)) bench_die("bind");
  int n;
  mxr_ndarray *const *outs;
  if (mxr_executor_outputs(ex, &n, &outs)) bench_die("outputs");
  double t[MAX_REPS];
  for (int r = 0; r < reps + 1; r++) {
    double t0 = bench_now_s();
    for (int i = 0; i < iters; i++)
      if (mxr_executor_forward(ex, false)) bench_die("forward");
    if (mxr_ndarray_wait_to_read(outs[0])) bench_die("forward");
    if (r) t[r - 1] = bench_now_s() - t0;
  }
  mxr_executor_free(ex);
  mxr_ndarray_free(args[0]);
  mxr_ndarray_free(args[1]);
  mxr_symbol_free(sym);
  mxr_symbol_free(data);
  if (mxr_engine_wait_for_all(eng)) bench_die("wait");
  return bench_median(t, reps);
}

/* TFLOP/s of FullyConnected (no bias) of the sgemm's size on gpu(0). */
static double fc_tflops(mxr_engine *eng, int reps) {
  char hidden[16];
  snprintf(hidden, sizeof hidden, "%d", GEMM);
  const char *k[] = {"num_hidden", "no_bias"}, *v[] = {hidden, "True"};
  mxr_symbol *data;
  if (mxr_symbol_variable("data", &data)) bench_die("variable");
  mxr_symbol *sym = bench_op_symbol("FullyConnected", 2, k, v, data, "fc");
  int64_t shape[] = {GEMM, GEMM};
  mxr_ndarray *args[2] = {gpu_array(eng, 2, shape, 0.5f), gpu_array(eng, 2, shape, 0.25f)};
  const double s = op_forward_seconds(eng, sym, data, args, 1, reps);
  return 2.0 * GEMM * (double)GEMM * GEMM / s * 1e-12;
}

#ifdef MXR_HAVE_CUDNN
/* The convolution: a ResNet stage-1 3x3 layer (stride 1, so out = in). */
enum { CONV_N = 32, CONV_C = 64, CONV_F = 64, CONV_HW = 56, CONV_K = 3, CONV_PAD = 1,
       CONV_ITERS = 10, CONV_WORKSPACE_MB = 1024 /* Convolution's default `workspace` */ };

static double conv_flops(void) {
  return 2.0 * CONV_N * CONV_F * CONV_HW * CONV_HW * (double)CONV_C * CONV_K * CONV_K;
}

static void dnn_ok(cudnnStatus_t s, const char *call) {
  if (s != CUDNN_STATUS_SUCCESS) {
    fprintf(stderr, "gpu_bench: %s: %s\n", call, cudnnGetErrorString(s));
    exit(2);
  }
}

/* n floats on the device, filled as gpu_array fills. */
static float *device_filled(size_t n, float fill) {
  float *host = malloc(n * sizeof *host), *dev;
  if (!host) bench_die("malloc");
  for (size_t i = 0; i < n; i++) host[i] = fill + (float)(i % 7) * 0.01f;
  cuda_ok(cudaMalloc((void **)&dev, n * sizeof *dev), "cudaMalloc");
  cuda_ok(cudaMemcpy(dev, host, n * sizeof *dev, cudaMemcpyHostToDevice), "cudaMemcpy");
  free(host);
  return dev;
}

/* TFLOP/s of a direct cudnnConvolutionForward of the convolution, with the
 * algorithm the runtime would choose by default; `algo` describes it. */
static double cudnn_conv_tflops(int reps, char *algo, size_t algo_size) {
  const struct mxr_config *cfg = mxr_config_get();
  const bool tf32 = cfg->cuda_allow_tensor_core && cfg->cuda_tensor_op_math_allow_conversion;
  const int tune = cfg->cudnn_autotune_default;
  const size_t limit = (size_t)CONV_WORKSPACE_MB << 20;
  cudnnHandle_t h;
  dnn_ok(cudnnCreate(&h), "cudnnCreate");
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  dnn_ok(cudnnCreateTensorDescriptor(&xd), "cudnnCreateTensorDescriptor");
  dnn_ok(cudnnCreateTensorDescriptor(&yd), "cudnnCreateTensorDescriptor");
  dnn_ok(cudnnCreateFilterDescriptor(&wd), "cudnnCreateFilterDescriptor");
  dnn_ok(cudnnCreateConvolutionDescriptor(&cd), "cudnnCreateConvolutionDescriptor");
  dnn_ok(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, CONV_N, CONV_C,
                                    CONV_HW, CONV_HW),
         "cudnnSetTensor4dDescriptor");
  dnn_ok(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, CONV_N, CONV_F,
                                    CONV_HW, CONV_HW),
         "cudnnSetTensor4dDescriptor");
  dnn_ok(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CONV_F, CONV_C, CONV_K,
                                    CONV_K),
         "cudnnSetFilter4dDescriptor");
  dnn_ok(cudnnSetConvolution2dDescriptor(cd, CONV_PAD, CONV_PAD, 1, 1, 1, 1,
                                         CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
         "cudnnSetConvolution2dDescriptor");
  dnn_ok(cudnnSetConvolutionMathType(cd, tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
         "cudnnSetConvolutionMathType");
  const size_t nx = (size_t)CONV_N * CONV_C * CONV_HW * CONV_HW,
               ny = (size_t)CONV_N * CONV_F * CONV_HW * CONV_HW,
               nw = (size_t)CONV_F * CONV_C * CONV_K * CONV_K;
  float *x = device_filled(nx, 0.5f), *w = device_filled(nw, 0.25f), *y = device_filled(ny, 0);

  /* The policy of op/cuda/convolution.cu: cuDNN's heuristic order (tune 0) or its
   * measurements (1, 2); the first result that succeeded, runs with an
   * allowed math type and, unless tune is 2, fits the workspace limit. */
  int max = 0, got = 0;
  dnn_ok(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max),
         "cudnnGetConvolutionForwardAlgorithmMaxCount");
  cudnnConvolutionFwdAlgoPerf_t *perf = calloc(max > 0 ? (size_t)max : 1, sizeof *perf);
  if (!perf) bench_die("calloc");
  if (tune == 0)
    dnn_ok(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, max, &got, perf),
           "cudnnGetConvolutionForwardAlgorithm_v7");
  else
    dnn_ok(cudnnFindConvolutionForwardAlgorithm(h, xd, wd, cd, yd, max, &got, perf),
           "cudnnFindConvolutionForwardAlgorithm");
  int pick = -1;
  for (int i = 0; i < got && pick < 0; i++)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && (tf32 || perf[i].mathType == CUDNN_FMA_MATH) &&
        (tune == 2 || perf[i].memory <= limit))
      pick = i;
  if (pick < 0) {
    fprintf(stderr, "gpu_bench: cuDNN offers no forward algorithm for the convolution\n");
    exit(2);
  }
  const cudnnConvolutionFwdAlgo_t fwd = perf[pick].algo;
  const cudnnMathType_t math = perf[pick].mathType;
  size_t ws_bytes = perf[pick].memory, exact = 0;
  free(perf);
  dnn_ok(cudnnSetConvolutionMathType(cd, math), "cudnnSetConvolutionMathType");
  dnn_ok(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, fwd, &exact),
         "cudnnGetConvolutionForwardWorkspaceSize");
  if (exact > ws_bytes) ws_bytes = exact;
  void *ws = NULL;
  if (ws_bytes) cuda_ok(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  snprintf(algo, algo_size, "algo %d, %s math, tune %d", (int)fwd,
           math == CUDNN_FMA_MATH ? "FMA" : math == CUDNN_DEFAULT_MATH ? "default" : "tensor op",
           tune);

  const float one = 1, zero = 0;
  double t[MAX_REPS];
  for (int r = 0; r < reps + 1; r++) {
    double t0 = bench_now_s();
    for (int i = 0; i < CONV_ITERS; i++)
      dnn_ok(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, fwd, ws, ws_bytes, &zero, yd, y),
             "cudnnConvolutionForward");
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (r) t[r - 1] = bench_now_s() - t0;
  }
  if (ws) cuda_ok(cudaFree(ws), "cudaFree");
  cuda_ok(cudaFree(x), "cudaFree");
  cuda_ok(cudaFree(w), "cudaFree");
  cuda_ok(cudaFree(y), "cudaFree");
  dnn_ok(cudnnDestroyConvolutionDescriptor(cd), "cudnnDestroyConvolutionDescriptor");
  dnn_ok(cudnnDestroyFilterDescriptor(wd), "cudnnDestroyFilterDescriptor");
  dnn_ok(cudnnDestroyTensorDescriptor(xd), "cudnnDestroyTensorDescriptor");
  dnn_ok(cudnnDestroyTensorDescriptor(yd), "cudnnDestroyTensorDescriptor");
  dnn_ok(cudnnDestroy(h), "cudnnDestroy");
  return conv_flops() * CONV_ITERS / bench_median(t, reps) * 1e-12;
}

/* TFLOP/s of Convolution (no bias, default cudnn_tune and workspace) of the
 * same geometry on gpu(0), through the executor as FullyConnected. */
static double conv_tflops(mxr_engine *eng, int reps) {
  char kernel[32], pad[32], filters[16];
  snprintf(kernel, sizeof kernel, "(%d,%d)", CONV_K, CONV_K);
  snprintf(pad, sizeof pad, "(%d,%d)", CONV_PAD, CONV_PAD);
  snprintf(filters, sizeof filters, "%d", CONV_F);
  const char *k[] = {"kernel", "pad", "num_filter", "no_bias"},
             *v[] = {kernel, pad, filters, "True"};
  mxr_symbol *data;
  if (mxr_symbol_variable("data", &data)) bench_die("variable");
  mxr_symbol *sym = bench_op_symbol("Convolution", 4, k, v, data, "conv");
  int64_t xshape[] = {CONV_N, CONV_C, CONV_HW, CONV_HW}, wshape[] = {CONV_F, CONV_C, CONV_K, CONV_K};
  mxr_ndarray *args[2] = {gpu_array(eng, 4, xshape, 0.5f), gpu_array(eng, 4, wshape, 0.25f)};
  const double s = op_forward_seconds(eng, sym, data, args, CONV_ITERS, reps);
  return conv_flops() * CONV_ITERS / s * 1e-12;
}
#endif /* MXR_HAVE_CUDNN */

static int verdict(const char *what, double value, double target, bool at_most) {
  bool ok = at_most ? value <= target : value >= target;
  printf("%-48s %10.3f   target %s %.2f  %s\n", what, value, at_most ? "<=" : ">=", target,
         ok ? "ok" : "MISSED");
  return !ok;
}

int main(int argc, char **argv) {
  bench_prog = "gpu_bench";
  int reps = 5;
  bool check = false;
  int done = bench_parse_args(argc, argv, MAX_REPS, &reps, &check);
  if (done >= 0) return done;
  if (mxr_gpu_count() < 1) {
    printf("gpu_bench: no GPU, nothing measured\n");
    return 0;
  }
  struct cudaDeviceProp prop;
  cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  mxr_engine *eng;
  if (mxr_engine_default(&eng)) bench_die("engine");
  printf("device: %s; engine: %s; seed workload: %d chained flips on (%d,), median of %d runs\n",
         prop.name, mxr_engine_type_name(mxr_engine_type_of(eng)), NUM_OPS, LEN, reps);
  static const int configs[6][3] = {{0, 0, 1}, {1, 1, 1}, {15, 15, 0}, {15, 0, 1}, {0, 15, 1}, {15, 15, 1}};
  mxr_symbol *sym = bench_flip_chain(NUM_OPS);
  printf("%-22s %12s\n", "(fwd,bwd,train)", "us/op");
  for (int c = 0; c < 7; c++) {
    const int *cfg = configs[c < 6 ? c : 5];
    double t[MAX_REPS];
    for (int r = 0; r < reps; r++)
      t[r] = seed_us_per_op(eng, sym, opts_for(eng, cfg[0], cfg[1], cfg[2], c == 6));
    printf("(%d,%d,%d)%-14s %12.3f\n", cfg[0], cfg[1], cfg[2], c == 6 ? " + graphs" : "",
           bench_median(t, reps));
  }
  int missed = 0;
  double seg[MAX_REPS], graph[MAX_REPS];
  for (int r = 0; r < reps; r++) {
    seg[r] = segment_us_per_op(eng, sym, false);
    graph[r] = segment_us_per_op(eng, sym, true);
  }
  missed += verdict("us per op, one bulked segment (inference)", bench_median(seg, reps), 3.0, true);
  missed += verdict("us per op, the same segment as a CUDA graph", bench_median(graph, reps), 1.0, true);
  mxr_symbol_free(sym);
  printf("%-48s %10.1f\n", "device-to-device copy, 256 MiB (GB/s)", d2d_gbps(reps));
  double blas = sgemm_tflops(reps), fc = fc_tflops(eng, reps);
  printf("%-48s %10.2f\n", "direct cuBLAS sgemm 4096^3, FP32 (TFLOP/s)", blas);
  printf("%-48s %10.2f\n", "FullyConnected 4096^3 on gpu(0) (TFLOP/s)", fc);
  missed += verdict("FullyConnected / direct sgemm", fc / blas, 0.9, false);
#ifdef MXR_HAVE_CUDNN
  char algo[64];
  double dnn = cudnn_conv_tflops(reps, algo, sizeof algo), conv = conv_tflops(eng, reps);
  printf("Convolution: batch %d, %d -> %d channels, %dx%d, %dx%d kernel, pad %d, FP32, no bias; "
         "cuDNN %s\n",
         CONV_N, CONV_C, CONV_F, CONV_HW, CONV_HW, CONV_K, CONV_K, CONV_PAD, algo);
  printf("%-48s %10.2f\n", "direct cudnnConvolutionForward (TFLOP/s)", dnn);
  printf("%-48s %10.2f\n", "Convolution forward on gpu(0) (TFLOP/s)", conv);
  missed += verdict("Convolution / direct cuDNN forward", conv / dnn, 0.9, false);
#else
  printf("Convolution: this build has no cuDNN, not measured\n");
#endif
  printf("%d of the targets missed\n", missed);
  mxr_engine_shutdown_default();
  return check && missed ? 1 : 0;
}
