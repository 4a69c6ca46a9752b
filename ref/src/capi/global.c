/*
 * C API: errors, version, build features, GPUs, seeding, shutdown and the
 * engine (bulk size, pushing C callbacks).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "capi/capi_internal.h"
#include "common/recycle.h"
#include "common/threads.h"
#include "mxref/device.h"
#include "mxref/engine.h"
#include "mxref/storage.h"

const char *MXGetLastError(void) { return mxr_last_error(); }

int MXGetVersion(int *out) {
  if (!out) return capi_ret(mxr__capi_null("MXGetVersion", "out"));
  *out = CAPI_MXNET_VERSION;
  return 0;
}

/* ------------------------------------------------------------ features */

/* MXNet 1.9.1's feature table, names and order (libinfo.h), with what this
 * build has.  Decided at run time only where the native API says so. */
enum {
  F_CUDA, F_CUDNN, F_NCCL, F_CUDA_RTC, F_TENSORRT, F_CPU_SSE, F_CPU_SSE2, F_CPU_SSE3,
  F_CPU_SSE4_1, F_CPU_SSE4_2, F_CPU_SSE4A, F_CPU_AVX, F_CPU_AVX2, F_OPENMP, F_SSE, F_F16C,
  F_JEMALLOC, F_BLAS_OPEN, F_BLAS_ATLAS, F_BLAS_MKL, F_BLAS_APPLE, F_LAPACK, F_MKLDNN,
  F_OPENCV, F_CAFFE, F_PROFILER, F_DIST_KVSTORE, F_CXX14, F_INT64_TENSOR_SIZE,
  F_SIGNAL_HANDLER, F_DEBUG, F_TVM_OP, F_COUNT
};

static struct LibFeature features[F_COUNT] = {
    {"CUDA", false},       {"CUDNN", false},        {"NCCL", false},
    {"CUDA_RTC", false},   {"TENSORRT", false},     {"CPU_SSE", false},
    {"CPU_SSE2", false},   {"CPU_SSE3", false},     {"CPU_SSE4_1", false},
    {"CPU_SSE4_2", false}, {"CPU_SSE4A", false},    {"CPU_AVX", false},
    {"CPU_AVX2", false},   {"OPENMP", false},       {"SSE", false},
    {"F16C", false},       {"JEMALLOC", false},     {"BLAS_OPEN", false},
    {"BLAS_ATLAS", false}, {"BLAS_MKL", false},     {"BLAS_APPLE", false},
    {"LAPACK", false},     {"MKLDNN", false},       {"OPENCV", false},
    {"CAFFE", false},      {"PROFILER", false},     {"DIST_KVSTORE", false},
    {"CXX14", false},      {"INT64_TENSOR_SIZE", false}, {"SIGNAL_HANDLER", false},
    {"DEBUG", false},      {"TVM_OP", false},
};
static pthread_once_t features_once = PTHREAD_ONCE_INIT;

static void fill_features(void) {
  features[F_CUDA].enabled = mxr_built_with_cuda() != 0;
  features[F_CUDNN].enabled = mxr_built_with_cudnn() != 0;
  /* What the compiler was allowed to use for the library's own code, as
   * MXNet derives it from the same macros. */
#ifdef __SSE__
  features[F_CPU_SSE].enabled = true;
#endif
#ifdef __SSE2__
  features[F_CPU_SSE2].enabled = true;
#endif
#ifdef __SSE3__
  features[F_CPU_SSE3].enabled = true;
#endif
#ifdef __SSE4_1__
  features[F_CPU_SSE4_1].enabled = true;
#endif
#ifdef __SSE4_2__
  features[F_CPU_SSE4_2].enabled = true;
#endif
#ifdef __SSE4A__
  features[F_CPU_SSE4A].enabled = true;
#endif
#ifdef __AVX__
  features[F_CPU_AVX].enabled = true;
#endif
#ifdef __AVX2__
  features[F_CPU_AVX2].enabled = true;
#endif
  features[F_BLAS_OPEN].enabled = true; /* configure requires OpenBLAS */
  features[F_PROFILER].enabled = true;  /* the Chrome-trace profiler is always built */
#ifndef NDEBUG
  features[F_DEBUG].enabled = true; /* assertions are compiled in */
#endif
  /* Off: no NCCL, runtime compilation, TensorRT, OpenMP, F16C conversions,
   * jemalloc, LAPACK, MKL-DNN, OpenCV, Caffe, distributed kvstore, C++,
   * signal handler or TVM ops; INT64_TENSOR_SIZE is off because the C API
   * keeps MXNet's 32-bit size limit and exports no ...64 functions. */
}

int MXLibInfoFeatures(const struct LibFeature **libFeature, size_t *size) {
  if (!libFeature || !size) return capi_ret(mxr__capi_null("MXLibInfoFeatures", "an out pointer"));
  MXR_PTHREAD_CHECK(pthread_once(&features_once, fill_features));
  *libFeature = features;
  *size = F_COUNT;
  return 0;
}

int MXGetGPUCount(int *out) {
  if (!out) return capi_ret(mxr__capi_null("MXGetGPUCount", "out"));
  *out = mxr_gpu_count();
  return 0;
}

/* MXNet releases the pool's cached blocks of that device; host contexts
 * have no pool, so they succeed doing nothing, as in MXNet. */
int MXStorageEmptyCache(int dev_type, int dev_id) {
  struct mxr_context ctx = {dev_type, dev_id};
  return capi_ret(mxr_storage_release_cache(ctx));
}

/* Random ops draw from per-call seeds derived from one process seed
 * (common/random.h), shared by every device: the draws are counter-based
 * and the same on CPU and GPU. */
int MXRandomSeed(int seed) { return mxr_random_seed(seed) == 0 ? 0 : -1; }

/* MXNet seeds the given device's generators (and, for a GPU, the CPU's as
 * well).  libmxref's devices share the one process seed, so seeding any
 * context reseeds them all; what a context-specific call adds is the check
 * that the context is one this process could draw on. */
int MXRandomSeedContext(int seed, int dev_type, int dev_id) {
  static const char fn[] = "MXRandomSeedContext";
  int st = mxr__capi_check_device(fn, dev_type, dev_id);
  if (!st && dev_type == MXR_DEV_GPU && dev_id >= mxr_gpu_count()) {
    int n = mxr_gpu_count();
    if (n == 0)
      st = mxr_set_error(MXR_ENODEV, "%s: gpu(%d) is not available: no GPUs (%s)", fn, dev_id,
                         mxr_gpu_unavailable_reason());
    else
      st = mxr_set_error(MXR_ENODEV, "%s: gpu(%d) is not available: %d GPU%s (0..%d)", fn, dev_id, n,
                         n == 1 ? "" : "s", n - 1);
  }
  if (!st) st = mxr_random_seed(seed);
  return capi_ret(st);
}

/* MXNet waits for all work here and keeps its engine; so do we, because
 * frontends free their handles after this call (Python at exit). */
int MXNotifyShutdown(void) {
  mxr_engine *eng;
  int st = mxr_engine_default(&eng);
  if (!st) st = mxr_engine_wait_for_all(eng);
  return capi_ret(st);
}

/* --------------------------------------------------------------- engine */

int MXEngineSetBulkSize(int bulk_size, int *prev_bulk_size) {
  if (!prev_bulk_size) return capi_ret(mxr__capi_null("MXEngineSetBulkSize", "prev_bulk_size"));
  mxr_engine *eng;
  int st = mxr_engine_default(&eng);
  if (st) return -1;
  *prev_bulk_size = mxr_engine_set_bulk_size(eng, bulk_size);
  return 0;
}

/* MXNet's Context, as MXEnginePushSyncND's context handle points at it. */
struct capi_context {
  int dev_type;
  int32_t dev_id;
};

/* What a pushed C callback owns. */
struct push_call {
  EngineSyncFunc fn;
  void *param;
  EngineFuncParamDeleter deleter;
  bool recycled; /* the block came from push_calls */
  char name[];   /* the op's name, "" when none was given */
};

/* Calls whose name fits a block this size reuse blocks the workers gave
 * back, without the allocator (common/recycle.h). */
#define PUSH_CALL_BLOCK 96
static struct mxr__recycler push_calls = MXR_RECYCLER_INIT(PUSH_CALL_BLOCK, 4096);

static struct push_call *new_push_call(size_t name_len) {
  bool small = offsetof(struct push_call, name) + name_len + 1 <= PUSH_CALL_BLOCK;
  struct push_call *c = small ? mxr__recycler_take(&push_calls)
                              : malloc(offsetof(struct push_call, name) + name_len + 1);
  if (c) c->recycled = small;
  return c;
}

static int run_push(const struct mxr_run_ctx *rctx, void *p) {
  struct push_call *c = p;
  /* struct mxr_run_ctx starts as MXNet's RunContext: context, stream,
   * auxiliary stream. */
  c->fn((void *)rctx, c->param);
  return 0;
}

static void free_push(void *p) {
  struct push_call *c = p;
  if (c->deleter) c->deleter(c->param);
  if (c->recycled)
    mxr__recycler_give(&push_calls, c);
  else
    free(c);
}

#define PUSH_SMALL 16

int MXEnginePushSyncND(EngineSyncFunc sync_func, void *func_param, EngineFuncParamDeleter deleter,
                       ContextHandle ctx_handle, NDArrayHandle *const_nds_handle,
                       int num_const_nds, NDArrayHandle *mutable_nds_handle,
                       int num_mutable_nds, EngineFnPropertyHandle prop_handle, int priority,
                       const char *opr_name) {
  static const char fn[] = "MXEnginePushSyncND";
  /* The param belongs to the call from here on: whatever happens, the
   * deleter runs exactly once (after the op, or before a refused call
   * returns). */
  size_t name_len = opr_name ? strlen(opr_name) : 0;
  struct push_call *c = new_push_call(name_len);
  if (!c) {
    if (deleter) deleter(func_param);
    return capi_ret(mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn));
  }
  c->fn = sync_func;
  c->param = func_param;
  c->deleter = deleter;
  memcpy(c->name, opr_name ? opr_name : "", name_len + 1);

  int st = 0, prop = MXR_PROP_NORMAL;
  struct mxr_context ctx = {0, 0};
  if (!sync_func) st = mxr__capi_null(fn, "sync_func");
  else if (!ctx_handle) st = mxr__capi_null(fn, "ctx_handle");
  else {
    const struct capi_context *cc = ctx_handle;
    ctx.dev_type = cc->dev_type;
    ctx.dev_id = cc->dev_id;
  }
  if (!st && prop_handle) prop = *(const int *)prop_handle;
  if (!st && (prop < MXR_PROP_NORMAL || prop >= MXR_PROP_COUNT))
    st = mxr_set_error(MXR_EINVAL, "%s: FnProperty %d is not one of 0..%d", fn, prop, MXR_PROP_COUNT - 1);
  if (!st && prop == MXR_PROP_DELETE_VAR)
    st = mxr_set_error(MXR_EINVAL,
                       "%s: FnProperty 5 (kDeleteVar) is the engine's own; it would free the "
                       "arrays' variables",
                       fn);
  if (!st && (num_const_nds < 0 || num_mutable_nds < 0))
    st = mxr_set_error(MXR_EINVAL, "%s: negative array count (%d const, %d mutable)", fn,
                       num_const_nds, num_mutable_nds);

  mxr_ndarray *small[PUSH_SMALL], **arrays = small;
  mxr_var *small_vars[PUSH_SMALL], **vars = small_vars;
  int n = st ? 0 : num_const_nds + num_mutable_nds;
  if (n > PUSH_SMALL) {
    arrays = malloc((size_t)n * sizeof *arrays);
    vars = malloc((size_t)n * sizeof *vars);
    if (!arrays || !vars) st = mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  }
  if (!st) st = mxr__capi_ndarrays(const_nds_handle, num_const_nds, fn, "const_nds_handle", arrays);
  if (!st)
    st = mxr__capi_ndarrays(mutable_nds_handle, num_mutable_nds, fn, "mutable_nds_handle",
                            arrays + num_const_nds);
  for (int i = 0; !st && i < n; i++) vars[i] = mxr_ndarray_var(arrays[i]);
  mxr_engine *eng = NULL;
  if (!st) st = mxr_engine_default(&eng);
  if (st) {
    free_push(c);
  } else {
    struct mxr_push req = {.sync_fn = run_push,
                           .param = c,
                           .param_free = free_push,
                           .ctx = ctx,
                           .const_vars = vars,
                           .num_const = num_const_nds,
                           .mutable_vars = vars + num_const_nds,
                           .num_mutable = num_mutable_nds,
                           .prop = prop,
                           .priority = priority,
                           .name = c->name[0] ? c->name : NULL,
                           .profile = MXR_PROFILE_IMPERATIVE};
    st = mxr_engine_push(eng, &req); /* frees c (once) also when it fails */
  }
  if (arrays != small) free(arrays);
  if (vars != small_vars) free(vars);
  return capi_ret(st);
}
