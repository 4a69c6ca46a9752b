/*
 * GPU storage, the CUDA engine driver and copies between host and device.
 * Needs a GPU: without one (or in a build without CUDA) the whole file is a
 * TAP skip (exit 77) that says why.
 */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_tap.h"
#include "cuda/graph.h"
#include "mxref/executor.h"
#include "mxref/imperative.h"
#include "mxref/mxref.h"
#include "mxref/profiler.h"
#include "mxref/symbol.h"
#include "symbol_util.h"

/* Engine options with the CUDA driver, for each engine type. */
static mxr_engine *gpu_engine(int type, int nstreams) {
  struct mxr_engine_opts o;
  ck_assert_int_eq(mxr_engine_opts_from_config(&o), 0);
  ck_assert_ptr_nonnull(o.gpu_driver);
  o.type = type;
  o.gpu_worker_nstreams = nstreams;
  mxr_engine *eng = NULL;
  ck_assert_msg(mxr_engine_create(&o, &eng) == 0, "%s", mxr_last_error());
  return eng;
}

static const int engine_types[] = {MXR_ENGINE_NAIVE, MXR_ENGINE_THREADED,
                                   MXR_ENGINE_THREADED_PER_DEVICE};
#define NUM_ENGINE_TYPES 3

START_TEST(gpu_storage_pool_reuses) {
  struct mxr_storage_pool_stats before, after;
  ck_assert_int_eq(mxr_storage_release_cache(mxr_gpu(0)), 0);
  ck_assert_int_eq(mxr_storage_pool_stats(mxr_gpu(0), &before), 0);
  struct mxr_storage a, b;
  ck_assert_msg(mxr_storage_alloc(mxr_gpu(0), 5000, &a) == 0, "%s", mxr_last_error());
  ck_assert_ptr_nonnull(a.dptr);
  ck_assert(mxr_context_equal(a.ctx, mxr_gpu(0)));
  void *first = a.dptr;
  mxr_storage_free(&a);
  ck_assert_ptr_null(a.dptr);
  /* The default pool (Naive) hands the same 8 KiB block to the next
   * request of that rounded size. */
  ck_assert_int_eq(mxr_storage_alloc(mxr_gpu(0), 6000, &b), 0);
  ck_assert_int_eq(mxr_storage_pool_stats(mxr_gpu(0), &after), 0);
  const struct mxr_config *cfg = mxr_config_get();
  if (cfg->gpu_mem_pool_type != MXR_GPU_POOL_UNPOOLED) {
    ck_assert_ptr_eq(b.dptr, first);
    ck_assert_uint_eq(after.reuses, before.reuses + 1);
  }
  mxr_storage_free(&b);
  ck_assert_int_eq(mxr_storage_release_cache(mxr_gpu(0)), 0);
  ck_assert_int_eq(mxr_storage_pool_stats(mxr_gpu(0), &after), 0);
  ck_assert_uint_eq(after.cached_bytes, 0);
  ck_assert_uint_eq(after.used_bytes, before.used_bytes);
  ck_assert_uint_eq(after.release_failures, 0);
}
END_TEST

START_TEST(gpu_storage_too_large) {
  struct mxr_gpu_info info;
  ck_assert_int_eq(mxr_gpu_get_info(0, &info), 0);
  struct mxr_storage s;
  ck_assert_int_eq(mxr_storage_alloc(mxr_gpu(0), info.total_mem * 2, &s), MXR_ENOMEM);
  ck_assert_ptr_null(s.dptr);
  ck_assert_msg(strstr(mxr_last_error(), "gpu(0)") != NULL, "%s", mxr_last_error());
}
END_TEST

START_TEST(gpu_pinned_host_memory) {
  struct mxr_context pinned = {MXR_DEV_CPU_PINNED, 0};
  struct mxr_storage s;
  ck_assert_msg(mxr_storage_alloc(pinned, 1 << 20, &s) == 0, "%s", mxr_last_error());
  memset(s.dptr, 0x5a, s.size); /* host-accessible */
  mxr_storage_free(&s);
}
END_TEST

/* Host -> gpu -> gpu -> host through copy ops, for each engine type. */
START_TEST(gpu_copy_round_trip) {
  mxr_engine *eng = gpu_engine(engine_types[_i], 1);
  enum { N = 100003 };
  float *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
  for (int i = 0; i < N; i++) in[i] = (float)i * 0.5f - 7.0f;
  const int64_t shape[] = {N};
  mxr_ndarray *h0, *g0, *g1, *h1;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 0, &h0), 0);
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_gpu(0), MXR_FLOAT32, 1, &g0), 0);
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_gpu(0), MXR_FLOAT32, 1, &g1), 0);
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 0, &h1), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(h0, in, N), 0);
  ck_assert_msg(mxr_ndarray_copy_to(h0, g0) == 0, "%s", mxr_last_error());
  ck_assert_msg(mxr_ndarray_copy_to(g0, g1) == 0, "%s", mxr_last_error());
  ck_assert_msg(mxr_ndarray_copy_to(g1, h1) == 0, "%s", mxr_last_error());
  ck_assert_msg(mxr_ndarray_sync_copy_to_cpu(h1, out, N) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(memcmp(in, out, N * sizeof *in), 0);
  /* And the direct host copies of a GPU array. */
  memset(out, 0, N * sizeof *out);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(g1, out, N), 0);
  ck_assert_int_eq(memcmp(in, out, N * sizeof *in), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(g1, in, N - 1), MXR_EINVAL); /* wrong count */
  mxr_ndarray_free(h0);
  mxr_ndarray_free(g0);
  mxr_ndarray_free(g1);
  mxr_ndarray_free(h1);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
  free(in);
  free(out);
}
END_TEST

/* Ops pushed for gpu(0) see their worker's streams. */
struct stream_seen {
  atomic_int ran, with_stream, with_aux;
};

static int record_streams(const struct mxr_run_ctx *rctx, void *param) {
  struct stream_seen *s = param;
  atomic_fetch_add(&s->ran, 1);
  if (rctx->stream) atomic_fetch_add(&s->with_stream, 1);
  if (rctx->aux_stream) atomic_fetch_add(&s->with_aux, 1);
  return 0;
}

START_TEST(gpu_ops_get_streams) {
  for (int nstreams = 1; nstreams <= 2; nstreams++) {
    mxr_engine *eng = gpu_engine(engine_types[_i], nstreams);
    struct stream_seen seen = {0};
    mxr_var *v;
    ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
    mxr_var *w[1] = {v};
    for (int k = 0; k < 20; k++)
      ck_assert_msg(mxr_engine_push_sync(eng, record_streams, &seen, NULL, mxr_gpu(0), NULL, 0, w,
                                         1, "gpu_op") == 0,
                    "%s", mxr_last_error());
    ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
    ck_assert_int_eq(atomic_load(&seen.ran), 20);
    ck_assert_int_eq(atomic_load(&seen.with_stream), 20);
    ck_assert_int_eq(atomic_load(&seen.with_aux), nstreams == 2 ? 20 : 0);
    ck_assert_int_eq(mxr_engine_delete_var(eng, v, NULL, NULL, NULL), 0);
    ck_assert_int_eq(mxr_engine_free(eng), 0);
  }
}
END_TEST

/* ------------------------------------------------------- op parity */

/* One op call on random inputs, run on the CPU and on gpu(0) through the
 * imperative API; the results must agree (these ops move or add values in
 * the same order on both, so to the last bit but for add_n's sums). */
struct parity_case {
  const char *op;
  const char *keys[2], *vals[2];
  int nparams, nin, dtype, ndim;
  int64_t shape[3];
};

static const struct parity_case parity_cases[] = {
    {"reverse", {"axis"}, {"0"}, 1, 1, MXR_FLOAT32, 1, {10}},
    {"reverse", {"axis"}, {"(0,2)"}, 1, 1, MXR_FLOAT32, 3, {3, 4, 5}},
    {"reverse", {"axis"}, {"1"}, 1, 1, MXR_FLOAT64, 2, {33, 65}},
    {"_backward_reverse", {"axis"}, {"0"}, 1, 1, MXR_FLOAT32, 2, {7, 3}},
    {"_copy", {NULL}, {NULL}, 0, 1, MXR_FLOAT32, 1, {100003}},
    {"add_n", {"num_args"}, {"3"}, 1, 3, MXR_FLOAT32, 2, {64, 65}},
    {"add_n", {"num_args"}, {"20"}, 1, 20, MXR_FLOAT64, 1, {1000}},
    {"zeros_like", {NULL}, {NULL}, 0, 1, MXR_FLOAT32, 1, {77}},
    {"ones_like", {NULL}, {NULL}, 0, 1, MXR_FLOAT64, 1, {77}},
};
#define NUM_PARITY ((int)(sizeof parity_cases / sizeof parity_cases[0]))

static mxr_ndarray *array_on(struct mxr_context ctx, const struct parity_case *c, const void *host) {
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_default(&eng), 0);
  mxr_ndarray *a;
  ck_assert_msg(mxr_ndarray_create(eng, c->shape, c->ndim, ctx, c->dtype, 0, &a) == 0, "%s",
                mxr_last_error());
  int64_t n = mxr_ndarray_size(a);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, host, (size_t)n), 0);
  return a;
}

/* Run the case on ctx; returns the output copied to a fresh host buffer. */
static void *run_case(struct mxr_context ctx, const struct parity_case *c, void *const *inputs,
                      size_t nbytes) {
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find(c->op, &op), 0);
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_params_parse(op, c->nparams, c->keys, c->vals, &p), 0);
  mxr_ndarray *in[32];
  for (int i = 0; i < c->nin; i++) in[i] = array_on(ctx, c, inputs[i]);
  int nout = 0;
  mxr_ndarray *out[4];
  ck_assert_msg(mxr_imperative_invoke(op, p, c->nin, in, &nout, out) == 0, "%s on %s: %s", c->op,
                mxr_context_is_cpu(ctx) ? "cpu" : "gpu", mxr_last_error());
  ck_assert_int_eq(nout, 1);
  ck_assert(mxr_context_equal(mxr_ndarray_context(out[0]), ctx));
  void *host = malloc(nbytes);
  ck_assert_msg(mxr_ndarray_sync_copy_to_cpu(out[0], host, nbytes / mxr_dtype_size(c->dtype)) == 0,
                "%s", mxr_last_error());
  for (int i = 0; i < c->nin; i++) mxr_ndarray_free(in[i]);
  mxr_ndarray_free(out[0]);
  mxr_op_params_free(p);
  return host;
}

START_TEST(gpu_op_parity) {
  const struct parity_case *c = &parity_cases[_i];
  int64_t n = 1;
  for (int d = 0; d < c->ndim; d++) n *= c->shape[d];
  size_t esize = mxr_dtype_size(c->dtype), nbytes = (size_t)n * esize;
  void *inputs[32] = {NULL};
  uint64_t seed = 0x2545f4914f6cdd1dull + (uint64_t)_i;
  for (int i = 0; i < c->nin; i++) {
    inputs[i] = malloc(nbytes);
    for (int64_t k = 0; k < n; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      double v = (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
      if (c->dtype == MXR_FLOAT32) ((float *)inputs[i])[k] = (float)v;
      else ((double *)inputs[i])[k] = v;
    }
  }
  void *want = run_case(mxr_cpu(0), c, inputs, nbytes);
  void *got = run_case(mxr_gpu(0), c, inputs, nbytes);
  for (int64_t k = 0; k < n; k++) {
    double w = c->dtype == MXR_FLOAT32 ? ((float *)want)[k] : ((double *)want)[k];
    double g = c->dtype == MXR_FLOAT32 ? ((float *)got)[k] : ((double *)got)[k];
    double tol = strcmp(c->op, "add_n") == 0 ? 1e-6 * (1 + (w < 0 ? -w : w)) : 0;
    ck_assert_msg((w - g <= tol) && (g - w <= tol), "%s case %d: element %lld: cpu %.17g gpu %.17g",
                  c->op, _i, (long long)k, w, g);
  }
  free(want);
  free(got);
  for (int i = 0; i < c->nin; i++) free(inputs[i]);
}
END_TEST

/* --------------------------------------------- matrix products (cuBLAS) */

/* dot and FullyConnected, forward and backward, on the CPU (OpenBLAS) and
 * on gpu(0) (cuBLAS) with the same random inputs.  The summation orders
 * differ, so float32 agrees to about 1e-6 here (k <= 300, values in
 * [-1, 1]); the tolerance of 1e-4 is loose for that but tight enough that
 * TF32 math (a 10-bit mantissa: errors near 1e-3 at these sizes) fails it,
 * which checks that float32 is full FP32 by default. */
struct mm_case {
  const char *op;
  const char *keys[8], *vals[8];
  int nparams, nin, dtype;
  int ndim[4];
  int64_t shape[4][5];
};

static const struct mm_case mm_cases[] = {
    {"dot", {NULL}, {NULL}, 0, 2, MXR_FLOAT32, {2, 2}, {{33, 257}, {257, 17}}},
    {"dot", {"transpose_a", "transpose_b"}, {"True", "True"}, 2, 2, MXR_FLOAT32, {2, 2},
     {{300, 5}, {7, 300}}},
    {"dot", {NULL}, {NULL}, 0, 2, MXR_FLOAT64, {1, 1}, {{1000}, {1000}}},
    {"dot", {"transpose_b"}, {"True"}, 1, 2, MXR_FLOAT64, {3, 2}, {{2, 3, 40}, {9, 40}}},
    {"_backward_dot", {NULL}, {NULL}, 0, 3, MXR_FLOAT32, {2, 2, 2}, {{16, 8}, {16, 100}, {100, 8}}},
    {"_backward_dot", {"transpose_a"}, {"True"}, 1, 3, MXR_FLOAT64, {2, 2, 2},
     {{16, 8}, {100, 16}, {100, 8}}},
    {"_backward_dot", {NULL}, {NULL}, 0, 3, MXR_FLOAT32, {1, 1, 1}, {{1}, {64}, {64}}},
    {"FullyConnected", {"num_hidden"}, {"24"}, 1, 3, MXR_FLOAT32, {2, 2, 1},
     {{32, 256}, {24, 256}, {24}}},
    {"FullyConnected", {"num_hidden", "no_bias"}, {"5", "True"}, 2, 2, MXR_FLOAT64, {4, 2},
     {{2, 3, 4, 5}, {5, 60}}},
    {"FullyConnected", {"num_hidden", "flatten"}, {"6", "False"}, 2, 3, MXR_FLOAT32, {3, 2, 1},
     {{2, 3, 50}, {6, 50}, {6}}},
    {"_backward_FullyConnected", {"num_hidden"}, {"24"}, 1, 4, MXR_FLOAT32, {2, 2, 2, 1},
     {{32, 24}, {32, 256}, {24, 256}, {24}}},
    {"_backward_FullyConnected", {"num_hidden", "no_bias"}, {"5", "True"}, 2, 3, MXR_FLOAT64,
     {2, 2, 2}, {{9, 5}, {9, 60}, {5, 60}}},
};
#define NUM_MM ((int)(sizeof mm_cases / sizeof mm_cases[0]))

static int64_t mm_size(const struct mm_case *c, int i) {
  int64_t n = 1;
  for (int d = 0; d < c->ndim[i]; d++) n *= c->shape[i][d];
  return n;
}

/* Run the case on ctx with inputs[]; its outputs go to fresh host buffers
 * in outs[] (returned: how many), their element counts to sizes[]. */
static int mm_run(struct mxr_context ctx, const struct mm_case *c, void *const *inputs,
                  void **outs, int64_t *sizes) {
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find(c->op, &op), 0);
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_params_parse(op, c->nparams, c->keys, c->vals, &p), 0);
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_default(&eng), 0);
  mxr_ndarray *in[4];
  for (int i = 0; i < c->nin; i++) {
    ck_assert_int_eq(mxr_ndarray_create(eng, c->shape[i], c->ndim[i], ctx, c->dtype, 0, &in[i]), 0);
    ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(in[i], inputs[i], (size_t)mm_size(c, i)), 0);
  }
  int nout = 0;
  mxr_ndarray *out[4];
  ck_assert_msg(mxr_imperative_invoke(op, p, c->nin, in, &nout, out) == 0, "%s on %s: %s", c->op,
                mxr_context_is_cpu(ctx) ? "cpu" : "gpu", mxr_last_error());
  for (int o = 0; o < nout; o++) {
    sizes[o] = mxr_ndarray_size(out[o]);
    outs[o] = malloc((size_t)sizes[o] * mxr_dtype_size(c->dtype) + 1);
    ck_assert_msg(mxr_ndarray_sync_copy_to_cpu(out[o], outs[o], (size_t)sizes[o]) == 0, "%s",
                  mxr_last_error());
    mxr_ndarray_free(out[o]);
  }
  for (int i = 0; i < c->nin; i++) mxr_ndarray_free(in[i]);
  mxr_op_params_free(p);
  return nout;
}

/* Case `ci` of `c`: CPU and GPU outputs agree within 1e-4 (float32) or
 * 1e-10 (float64), relative to 1 + |cpu|. */
static void check_mm_parity(const struct mm_case *c, int ci) {
  void *inputs[4] = {NULL};
  uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)ci;
  for (int i = 0; i < c->nin; i++) {
    int64_t n = mm_size(c, i);
    inputs[i] = malloc((size_t)n * mxr_dtype_size(c->dtype));
    for (int64_t k = 0; k < n; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      double v = (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
      if (c->dtype == MXR_FLOAT32) ((float *)inputs[i])[k] = (float)v;
      else ((double *)inputs[i])[k] = v;
    }
  }
  void *want[4], *got[4];
  int64_t nw[4], ng[4];
  int nout = mm_run(mxr_cpu(0), c, inputs, want, nw);
  ck_assert_int_eq(mm_run(mxr_gpu(0), c, inputs, got, ng), nout);
  const double tol = c->dtype == MXR_FLOAT32 ? 1e-4 : 1e-10;
  for (int o = 0; o < nout; o++) {
    ck_assert_int_eq(ng[o], nw[o]);
    for (int64_t k = 0; k < nw[o]; k++) {
      double w = c->dtype == MXR_FLOAT32 ? ((float *)want[o])[k] : ((double *)want[o])[k];
      double g = c->dtype == MXR_FLOAT32 ? ((float *)got[o])[k] : ((double *)got[o])[k];
      ck_assert_msg(fabs(w - g) <= tol * (1 + fabs(w)), "%s case %d output %d element %lld: cpu %.17g gpu %.17g",
                    c->op, ci, o, (long long)k, w, g);
    }
    free(want[o]);
    free(got[o]);
  }
  for (int i = 0; i < c->nin; i++) free(inputs[i]);
}

START_TEST(gpu_matmul_parity) { check_mm_parity(&mm_cases[_i], _i); }
END_TEST

/* ------------------------------- Convolution without cuDNN (cudnn_off) */

/* Convolution with cudnn_off=True runs the CPU kernel's method on the GPU
 * (im2col, cuBLAS products, col2im: op/cuda/convolution_gemm.cu), in every CUDA
 * build; it must agree with the CPU as the products above do.  2-D:
 * grouped, dilated, strided, padded, with a bias; 1-D: strided, dilated
 * and padded, and a grouped 1x1 kernel (the image is its own column
 * matrix); 3-D; forward and backward, float32 and float64. */
#define CONV2D_KEYS {"kernel", "num_filter", "num_group", "stride", "dilate", "pad", "cudnn_off"}
#define CONV2D_VALS {"(3,3)", "6", "2", "(2,2)", "(2,1)", "(1,2)", "True"}
#define CONV1D_KEYS {"kernel", "num_filter", "stride", "dilate", "pad", "cudnn_off"}
#define CONV1D_VALS {"(3,)", "5", "(2,)", "(2,)", "(1,)", "True"}
#define CONV1X1_KEYS {"kernel", "num_filter", "num_group", "no_bias", "cudnn_off"}
#define CONV1X1_VALS {"(1,)", "6", "3", "True", "True"}
#define CONV3D_KEYS {"kernel", "num_filter", "stride", "pad", "cudnn_off"}
#define CONV3D_VALS {"(2,2,3)", "3", "(1,2,1)", "(1,0,1)", "True"}
/* Through cuDNN with no workspace at all: what cuDNN has within that
 * limit, or the fallback to the path above when it has nothing; either
 * way the CPU's result. */
#define CONV_NOWS_KEYS {"kernel", "num_filter", "num_group", "stride", "dilate", "pad", "workspace", \
                        "cudnn_tune"}
#define CONV_NOWS_VALS {"(3,3)", "6", "2", "(2,2)", "(2,1)", "(1,2)", "0", "limited_workspace"}

static const struct mm_case conv_cases[] = {
    /* data (2, 4, 9, 10), weight (6, 2, 3, 3): output (2, 6, 4, 6) */
    {"Convolution", CONV2D_KEYS, CONV2D_VALS, 7, 3, MXR_FLOAT32, {4, 4, 1},
     {{2, 4, 9, 10}, {6, 2, 3, 3}, {6}}},
    {"Convolution", CONV2D_KEYS, CONV2D_VALS, 7, 3, MXR_FLOAT64, {4, 4, 1},
     {{2, 4, 9, 10}, {6, 2, 3, 3}, {6}}},
    {"_backward_Convolution", CONV2D_KEYS, CONV2D_VALS, 7, 4, MXR_FLOAT32, {4, 4, 4, 1},
     {{2, 6, 4, 6}, {2, 4, 9, 10}, {6, 2, 3, 3}, {6}}},
    {"_backward_Convolution", CONV2D_KEYS, CONV2D_VALS, 7, 4, MXR_FLOAT64, {4, 4, 4, 1},
     {{2, 6, 4, 6}, {2, 4, 9, 10}, {6, 2, 3, 3}, {6}}},
    /* data (3, 3, 17), weight (5, 3, 3): output (3, 5, 8) */
    {"Convolution", CONV1D_KEYS, CONV1D_VALS, 6, 3, MXR_FLOAT32, {3, 3, 1},
     {{3, 3, 17}, {5, 3, 3}, {5}}},
    {"_backward_Convolution", CONV1D_KEYS, CONV1D_VALS, 6, 4, MXR_FLOAT32, {3, 3, 3, 1},
     {{3, 5, 8}, {3, 3, 17}, {5, 3, 3}, {5}}},
    {"_backward_Convolution", CONV1D_KEYS, CONV1D_VALS, 6, 4, MXR_FLOAT64, {3, 3, 3, 1},
     {{3, 5, 8}, {3, 3, 17}, {5, 3, 3}, {5}}},
    /* data (2, 3, 11), weight (6, 1, 1): output (2, 6, 11) */
    {"Convolution", CONV1X1_KEYS, CONV1X1_VALS, 5, 2, MXR_FLOAT64, {3, 3},
     {{2, 3, 11}, {6, 1, 1}}},
    {"_backward_Convolution", CONV1X1_KEYS, CONV1X1_VALS, 5, 3, MXR_FLOAT32, {3, 3, 3},
     {{2, 6, 11}, {2, 3, 11}, {6, 1, 1}}},
    /* data (1, 2, 4, 5, 6), weight (3, 2, 2, 2, 3): output (1, 3, 5, 2, 6) */
    {"Convolution", CONV3D_KEYS, CONV3D_VALS, 5, 3, MXR_FLOAT32, {5, 5, 1},
     {{1, 2, 4, 5, 6}, {3, 2, 2, 2, 3}, {3}}},
    {"_backward_Convolution", CONV3D_KEYS, CONV3D_VALS, 5, 4, MXR_FLOAT64, {5, 5, 5, 1},
     {{1, 3, 5, 2, 6}, {1, 2, 4, 5, 6}, {3, 2, 2, 2, 3}, {3}}},
    {"Convolution", CONV_NOWS_KEYS, CONV_NOWS_VALS, 8, 3, MXR_FLOAT32, {4, 4, 1},
     {{2, 4, 9, 10}, {6, 2, 3, 3}, {6}}},
    {"_backward_Convolution", CONV_NOWS_KEYS, CONV_NOWS_VALS, 8, 4, MXR_FLOAT32, {4, 4, 4, 1},
     {{2, 6, 4, 6}, {2, 4, 9, 10}, {6, 2, 3, 3}, {6}}},
};
#define NUM_CONV ((int)(sizeof conv_cases / sizeof conv_cases[0]))

START_TEST(gpu_conv_gemm_parity) { check_mm_parity(&conv_cases[_i], 100 + _i); }
END_TEST

/* --------------------------------------------- executor: the flip chain */

/* The seed workload on the GPU, unbulked and bulked: 101 flips reverse X,
 * the gradient is the reversed head gradient; segment counts as planned. */
START_TEST(gpu_executor_flip_chain) {
  enum { OPS = 101, LEN = 10 };
  const int caps[2] = {0, 15};
  mxr_engine *eng = gpu_engine(MXR_ENGINE_THREADED_PER_DEVICE, 1);
  float x[LEN], dy[LEN], y[LEN], dx[LEN];
  for (int i = 0; i < LEN; i++) {
    x[i] = (float)i - 3.5f;
    dy[i] = 1.0f / (float)(i + 1);
  }
  const int64_t shape[] = {LEN};
  mxr_ndarray *X, *dX, *DY;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_gpu(0), MXR_FLOAT32, 0, &X), 0);
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_gpu(0), MXR_FLOAT32, 0, &dX), 0);
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_gpu(0), MXR_FLOAT32, 0, &DY), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(X, x, LEN), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(DY, dy, LEN), 0);
  mxr_symbol *sym = tu_flip_chain(OPS);
  for (int k = 0; k < 2; k++) {
    int req = MXR_GRAD_WRITE;
    struct mxr_exec_opts o = {.engine = eng, .bulk_train = true, .bulk_inference = true,
                              .max_node_train_fwd = caps[k], .max_node_train_bwd = caps[k]};
    mxr_executor *ex;
    ck_assert_msg(mxr_executor_bind(sym, mxr_gpu(0), 1, &X, &dX, &req, 0, NULL, &o, &ex) == 0,
                  "%s", mxr_last_error());
    int nops;
    const int *sizes;
    const char *const *names;
    ck_assert_int_eq(mxr_executor_pass_ops(ex, 0, &nops, &sizes, &names), 0);
    ck_assert_int_eq(nops, caps[k] ? (OPS + caps[k] - 1) / caps[k] : OPS);
    ck_assert_msg(mxr_executor_forward(ex, true) == 0, "%s", mxr_last_error());
    ck_assert_msg(mxr_executor_backward(ex, 1, &DY) == 0, "%s", mxr_last_error());
    int nout;
    mxr_ndarray *const *outs;
    ck_assert_int_eq(mxr_executor_outputs(ex, &nout, &outs), 0);
    ck_assert(mxr_context_equal(mxr_ndarray_context(outs[0]), mxr_gpu(0)));
    ck_assert_msg(mxr_ndarray_sync_copy_to_cpu(outs[0], y, LEN) == 0, "%s", mxr_last_error());
    ck_assert_msg(mxr_ndarray_sync_copy_to_cpu(dX, dx, LEN) == 0, "%s", mxr_last_error());
    for (int i = 0; i < LEN; i++) {
      ck_assert_float_eq(y[i], x[LEN - 1 - i]);
      ck_assert_float_eq(dx[i], dy[LEN - 1 - i]);
    }
    mxr_executor_free(ex);
  }
  mxr_symbol_free(sym);
  mxr_ndarray_free(X);
  mxr_ndarray_free(dX);
  mxr_ndarray_free(DY);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* A softmax length outside its row fails the op on the GPU as on the CPU,
 * with the CPU's message: the kernel records it in the worker's error slot
 * and op_finish reports it (on NaiveEngine, from the invoke itself). */
START_TEST(gpu_softmax_bad_length_fails) {
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_default(&eng), 0);
  const int64_t dshape[] = {2, 4}, lshape[] = {2};
  const float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const int32_t len[2] = {2, 9};
  mxr_ndarray *in[2], *out[1];
  ck_assert_int_eq(mxr_ndarray_create(eng, dshape, 2, mxr_gpu(0), MXR_FLOAT32, 0, &in[0]), 0);
  ck_assert_int_eq(mxr_ndarray_create(eng, lshape, 1, mxr_gpu(0), MXR_INT32, 0, &in[1]), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(in[0], x, 8), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(in[1], len, 2), 0);
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find("softmax", &op), 0);
  const char *keys[] = {"use_length", "axis"}, *vals[] = {"True", "-1"};
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_params_parse(op, 2, keys, vals, &p), 0);
  int nout = 0;
  int st = mxr_imperative_invoke(op, p, 2, in, &nout, out);
  if (st == 0) { /* threaded engines: the error arrives with the result */
    float y[8];
    st = mxr_ndarray_sync_copy_to_cpu(out[0], y, 8);
    mxr_ndarray_free(out[0]);
  }
  ck_assert_int_ne(st, 0);
  ck_assert_msg(strstr(mxr_last_error(), "softmax: length 9 at position 1 is outside [0, 4]"),
                "%s", mxr_last_error());
  mxr_op_params_free(p);
  mxr_ndarray_free(in[0]);
  mxr_ndarray_free(in[1]);
}
END_TEST

/* ------------------------------------------------------- CUDA graphs */
#ifdef MXR_HAVE_CUDA

/* A bulked inference segment with cuda_graphs on: on each worker, its
 * first run is plain, its second captures, later ones replay; every run
 * gives the right output for the values written into the input. */
START_TEST(gpu_cuda_graph_replays_segment) {
  enum { OPS = 51, LEN = 10, RUNS = 12 };
  mxr_engine *eng = gpu_engine(MXR_ENGINE_THREADED_PER_DEVICE, 1);
  float x[LEN], y[LEN];
  for (int i = 0; i < LEN; i++) x[i] = (float)i * 0.5f;
  const int64_t shape[] = {LEN};
  mxr_ndarray *X;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_gpu(0), MXR_FLOAT32, 0, &X), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(X, x, LEN), 0);
  mxr_symbol *sym = tu_flip_chain(OPS);
  struct mxr_exec_opts o = {.engine = eng, .bulk_inference = true, .cuda_graphs = true};
  mxr_executor *ex;
  ck_assert_msg(mxr_executor_bind(sym, mxr_gpu(0), 1, &X, NULL, NULL, 0, NULL, &o, &ex) == 0, "%s",
                mxr_last_error());
  struct mxr_cuda_graph_stats before, after;
  mxr__cuda_graph_stats(&before);
  int nout;
  mxr_ndarray *const *outs;
  ck_assert_int_eq(mxr_executor_outputs(ex, &nout, &outs), 0);
  for (int r = 0; r < RUNS; r++) {
    for (int i = 0; i < LEN; i++) x[i] = (float)(r * 100 + i); /* new values, same array */
    ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(X, x, LEN), 0);
    ck_assert_msg(mxr_executor_forward(ex, false) == 0, "%s", mxr_last_error());
    ck_assert_msg(mxr_ndarray_sync_copy_to_cpu(outs[0], y, LEN) == 0, "%s", mxr_last_error());
    for (int i = 0; i < LEN; i++) ck_assert_float_eq(y[i], x[LEN - 1 - i]); /* odd count: reversed */
  }
  mxr__cuda_graph_stats(&after);
  /* Each worker that runs the segment warms up once and captures once
   * (a graph replays only on its own worker); the rest are replays. */
  uint64_t captured = after.captures - before.captures, replayed = after.replays - before.replays;
  ck_assert_uint_eq(after.failures - before.failures, 0);
  ck_assert_uint_ge(captured, 1);
  ck_assert_uint_le(captured, MXR_CUDA_GRAPH_WORKERS);
  ck_assert_uint_le(replayed + 2 * captured, RUNS);
  ck_assert_uint_ge(replayed, 1); /* 12 runs on at most 4 workers: one ran 3 */
  mxr_executor_free(ex);
  mxr_symbol_free(sym);
  mxr_ndarray_free(X);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* B events of `name` in the trace at `path`, checking their category. */
static int span_events(const char *path, const char *name) {
  json_error_t err;
  json_t *root = json_load_file(path, 0, &err);
  ck_assert_msg(root != NULL, "%s: %s", path, err.text);
  int n = 0;
  size_t i;
  json_t *ev;
  json_array_foreach(json_object_get(root, "traceEvents"), i, ev) {
    const char *evname = json_string_value(json_object_get(ev, "name"));
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    if (!evname || !ph || strcmp(evname, name) != 0 || strcmp(ph, "B") != 0) continue;
    ck_assert_str_eq(json_string_value(json_object_get(ev, "cat")), "cuda_graph");
    n++;
  }
  json_decref(root);
  return n;
}

/* With one GPU worker a segment's three runs are plain, captured, replayed,
 * and the profiler shows the last two as spans (what gpu-cuda-graphs reads). */
START_TEST(gpu_cuda_graph_spans_in_trace) {
  struct mxr_engine_opts eo;
  ck_assert_int_eq(mxr_engine_opts_from_config(&eo), 0);
  eo.type = MXR_ENGINE_THREADED_PER_DEVICE;
  eo.gpu_worker_nthreads = 1;
  mxr_engine *eng = NULL;
  ck_assert_msg(mxr_engine_create(&eo, &eng) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(mxr_profiler_attach_engine(eng), 0);
  char dir[] = "/tmp/mxr-gpu-trace-XXXXXX", path[64];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/profile.json", dir);
  const char *keys[] = {"profile_symbolic", "filename"}, *vals[] = {"True", path};
  ck_assert_int_eq(mxr_profiler_set_config(2, keys, vals), 0);
  enum { LEN = 10 };
  const int64_t shape[] = {LEN};
  mxr_ndarray *X;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_gpu(0), MXR_FLOAT32, 0, &X), 0);
  mxr_symbol *sym = tu_flip_chain(20);
  struct mxr_exec_opts o = {.engine = eng, .bulk_inference = true, .cuda_graphs = true};
  mxr_executor *ex;
  ck_assert_msg(mxr_executor_bind(sym, mxr_gpu(0), 1, &X, NULL, NULL, 0, NULL, &o, &ex) == 0, "%s",
                mxr_last_error());
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  for (int r = 0; r < 3; r++)
    ck_assert_msg(mxr_executor_forward(ex, false) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_STOPPED), 0);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  ck_assert_int_eq(span_events(path, MXR_PROFILER_CUDA_GRAPH_CAPTURE), 1);
  ck_assert_int_eq(span_events(path, MXR_PROFILER_CUDA_GRAPH_LAUNCH), 1);
  remove(path);
  remove(dir);
  mxr_executor_free(ex);
  mxr_symbol_free(sym);
  mxr_ndarray_free(X);
  ck_assert_int_eq(mxr_profiler_detach_engine(eng), 0);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST
#endif

static Suite *gpu_suite(void) {
  Suite *s = suite_create("gpu");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 60); /* the first CUDA call of each forked test is slow */
  tcase_add_test(tc, gpu_storage_pool_reuses);
  tcase_add_test(tc, gpu_storage_too_large);
  tcase_add_test(tc, gpu_pinned_host_memory);
  tcase_add_loop_test(tc, gpu_copy_round_trip, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, gpu_ops_get_streams, 0, NUM_ENGINE_TYPES);
  tcase_add_loop_test(tc, gpu_op_parity, 0, NUM_PARITY);
  tcase_add_loop_test(tc, gpu_matmul_parity, 0, NUM_MM);
  tcase_add_loop_test(tc, gpu_conv_gemm_parity, 0, NUM_CONV);
  tcase_add_test(tc, gpu_executor_flip_chain);
  tcase_add_test(tc, gpu_softmax_bad_length_fails);
#ifdef MXR_HAVE_CUDA
  tcase_add_test(tc, gpu_cuda_graph_replays_segment);
  tcase_add_test(tc, gpu_cuda_graph_spans_in_trace);
#endif
  suite_add_tcase(s, tc);
  return s;
}

/* The number of GPUs, counted in a child process.  Check forks each test
 * from this process, and the CUDA runtime cannot be used in a child forked
 * after its parent initialised it, so the parent must not touch CUDA. */
static int gpu_count_in_child(void) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) _exit(mxr_gpu_count() > 0 ? 1 : 0);
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

int main(void) {
  int have_gpu = gpu_count_in_child();
  if (have_gpu < 0) {
    printf("Bail out! cannot count the GPUs in a child process\n");
    return 99;
  }
  if (have_gpu == 0) {
    char why[300];
    snprintf(why, sizeof why, "no GPU: %s", mxr_gpu_unavailable_reason());
    return mxr_test_skip_all(why);
  }
  return mxr_test_run(gpu_suite());
}
