/*
 * harness/probe/probe_internal.h: what the files of mxcts-probe share.
 */
#ifndef MXCTS_PROBE_INTERNAL_H
#define MXCTS_PROBE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/common.h"
#include "mxref/c_api.h"

/*
 * The probe's view of an implementation: the MXNet C API subset resolved
 * with dlsym from a library given at run time.  The probe never links an
 * implementation; c_api.h only lends it the prototypes.
 */

/* X(name): the functions the probe calls, with 1.9.1's prototypes.  Each is
 * resolved when the library exports it and NULL otherwise; a workload runs
 * only when the library has every function it needs (common/capi_needs.h),
 * and checks the optional ones (MXLibInfoFeatures, MXNDArrayGetData,
 * MXNDArrayWaitToWrite, MXNDArrayGetDType, MXNDArrayLoad) before calling
 * them. */
#define MXCTS_CAPI_FUNCTIONS(X)                                                                \
  X(MXGetLastError) X(MXGetVersion) X(MXNotifyShutdown) X(MXRandomSeed)                     \
  X(MXEngineSetBulkSize) X(MXEnginePushSyncND) X(MXNDArrayCreateEx) X(MXNDArrayFree)         \
  X(MXNDArraySyncCopyFromCPU) X(MXNDArraySyncCopyToCPU) X(MXNDArrayWaitToRead)               \
  X(MXNDArrayWaitAll) X(MXNDArrayGetShapeEx) X(MXListAllOpNames) X(NNGetOpHandle)            \
  X(MXImperativeInvokeEx) X(MXSymbolCreateVariable) X(MXSymbolCreateAtomicSymbol)            \
  X(MXSymbolCompose) X(MXSymbolFree) X(MXSymbolListArguments) X(MXExecutorBindEX)            \
  X(MXExecutorForward) X(MXExecutorBackwardEx) X(MXExecutorOutputs) X(MXExecutorFree)        \
  X(MXAutogradSetIsRecording) X(MXAutogradSetIsTraining) X(MXAutogradMarkVariables)          \
  X(MXAutogradBackwardEx) X(MXCreateCachedOpEx) X(MXInvokeCachedOpEx) X(MXFreeCachedOp)      \
  X(MXSetProfilerConfig) X(MXSetProfilerState) X(MXDumpProfile) X(MXGetGPUCount)             \
  X(MXLibInfoFeatures) X(MXNDArrayGetData) X(MXNDArrayWaitToWrite) X(MXNDArrayGetDType)      \
  X(MXSymbolCreateFromJSON) X(MXSymbolListAuxiliaryStates) X(MXNDArrayLoad)                  \
  X(MXNDArraySlice) X(MXNDArrayAt) X(MXNDArrayReshape64)                                    \
  X(MXAggregateProfileStatsPrint) X(MXAggregateProfileStatsPrintEx) X(MXExecutorPrint)        \
  X(MXSymbolGetAtomicSymbolInfo) X(MXSymbolInferShapeEx) X(MXSymbolInferType)                \
  X(MXNDArrayGetGradState) X(MXNDArraySetGradState) X(MXNDArrayCreateNone)

/* Older entry points that 1.9.1 still has but libmxref does not declare,
 * with the prototypes of every release from 1.4.1 on (docs/c-api.md, "Older
 * releases"): the fallbacks of releases that lack the newer function.
 * MXEnginePushSync takes engine variables where MXEnginePushSyncND takes
 * arrays; the probe calls it only with none (the pass markers). */
typedef int mxcts_push_sync_fn(EngineSyncFunc fn, void *param, EngineFuncParamDeleter deleter, ContextHandle ctx,
                               void *const_vars, int num_const, void *mutable_vars, int num_mutable,
                               EngineFnPropertyHandle prop, int priority, const char *name);
/* mx_uint is uint32_t on every release */
typedef int mxcts_get_shape_fn(NDArrayHandle handle, uint32_t *out_dim, const uint32_t **out_pdata);

struct mxcts_capi {
  void *lib;
#define MXCTS_CAPI_FIELD(name) __typeof__(name) *name;
  MXCTS_CAPI_FUNCTIONS(MXCTS_CAPI_FIELD)
#undef MXCTS_CAPI_FIELD
  mxcts_push_sync_fn *MXEnginePushSync;
  mxcts_get_shape_fn *MXNDArrayGetShape;
};

/* dlopen `path` and resolve the functions it exports.  Returns 0, or -1
 * with a message naming the library when it cannot be loaded. */
int mxcts__capi_load(const char *path, struct mxcts_capi *api, char *err, size_t errlen);
/* Whether the loaded library exports `fn` (a name of common/capi_needs.h);
 * `api` is the struct mxcts_capi. */
bool mxcts__capi_has(const char *fn, void *api);
/* Push a var-less marker op named `name` (MXEnginePushSyncND, or
 * MXEnginePushSync where the library lacks it); returns the call's status. */
int mxcts__capi_push_marker(const struct mxcts_capi *api, EngineSyncFunc fn, int priority, const char *name);
/* An array's shape through MXNDArrayGetShapeEx, or MXNDArrayGetShape where
 * the library lacks it; *dims points into the library's buffer. */
int mxcts__capi_get_shape(const struct mxcts_capi *api, NDArrayHandle a, int *ndim, const int **dims);

/*
 * mxcts-probe internals: one workload, one process, one JSON result
 * (docs/probe-protocol.md).  Every C API return code is checked; a failure
 * stops the workload with status "error", the call and MXGetLastError's
 * text recorded.
 */

#define PROBE_MAX_PARAMS 32

struct probe {
  struct mxcts_capi api;
  const char *impl_path;
  const char *workload;
  const char *profile_dir; /* NULL: no structure run */
  int dev_type;            /* --param device=cpu|gpu: MXNet's 1 or 2, id 0 */
  uint64_t seed;
  int nparams;
  const char *keys[PROBE_MAX_PARAMS], *vals[PROBE_MAX_PARAMS];
  json_t *result;          /* the result object being filled */
  bool failed;             /* a C API call failed: status error */
  /* profiling: one session for all passes, each pass ended by a marker op
   * (MXNet's profiler cannot write two traces in one process) */
  bool profiling;
  int npasses;
  const char *passes[8];
};

/* Set the result's status ("error", "usage", "unsupported") and its error
 * text, made safe to show (mxcts_clean_text). */
void mxcts__probe_set_status(struct probe *p, const char *status, const char *error);
/* Record a failed call (status "error") and return -1. */
int mxcts__probe_fail(struct probe *p, const char *call);

/* Call a C API function; on -1 record it and return -1 from the caller. */
#define PROBE_CALL(p, fn, ...)                                   \
  do {                                                           \
    if ((p)->api.fn(__VA_ARGS__) != 0) return mxcts__probe_fail((p), #fn); \
  } while (0)

/* Parameters (--param k=v) with defaults. */
long mxcts__probe_param_long(const struct probe *p, const char *key, long def);
const char *mxcts__probe_param_str(const struct probe *p, const char *key, const char *def);

/* Result helpers. */
void mxcts__probe_set_timing(struct probe *p, const double *ms, int n);
void mxcts__probe_add_metric(struct probe *p, const char *name, double value);
void mxcts__probe_add_check(struct probe *p, const char *name, bool pass, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void mxcts__probe_add_values(struct probe *p, const char *name, const float *x, int64_t n);
/* Profile passes: begin starts the profiler (once) writing
 * <profile_dir>/profile.json; end waits for the pass's ops and pushes its
 * marker op; after the workload, main stops the profiler, dumps the trace,
 * parses it and adds every pass's structure. */
int mxcts__probe_profile_begin(struct probe *p, const char *pass);
int mxcts__probe_profile_end(struct probe *p, const char *pass);

/* --param pin=split: put the calling thread on one CPU and the process'
 * other threads on the rest (probe_pin.c); call before each timed
 * iteration.  Records "pinning" in the result.  No-op for pin=none. */
void mxcts__probe_pin_threads(struct probe *p);

/* A new float32 vector of `len` on the probe's device, holding `data` when
 * not NULL (probe_flip.c). */
int mxcts__probe_new_vector(struct probe *p, int len, const float *data, NDArrayHandle *out);
/* Invoke op `opname` imperatively on `nin` inputs with `nkv` parameters;
 * *out is its first output (probe_engine.c). */
int mxcts__probe_invoke1(struct probe *p, const char *opname, int nin, NDArrayHandle *in, int nkv, const char **k,
                         const char **v, NDArrayHandle *out);

/* A .params file (MXNet's NDArray list) read by the probe
 * (probe_params_file.c).  `data` points into `bytes`; both live until
 * mxcts__param_file_free. */
struct mxcts__param_array {
  char *name; /* "arg:NAME" or "aux:NAME" */
  int ndim;
  int64_t shape[8], size;
  const float *data;
};
struct mxcts__param_file {
  char *bytes;
  int n;
  struct mxcts__param_array *arrays;
};
/* 0, or -1 with a message in err naming the file, the byte offset and
 * what was wrong there. */
int mxcts__param_file_read(const char *path, struct mxcts__param_file *f, char *err, size_t errlen);
void mxcts__param_file_free(struct mxcts__param_file *f);

/* Monotonic time in milliseconds (mxcts_now). */
double mxcts__probe_now_ms(void);
/* CPU seconds this process (all its threads) has used (getrusage). */
double mxcts__probe_own_cpu_s(void);

/* Workloads: each returns 0 (ran to the end) or -1 (a call failed). */
int mxcts__probe_symbolic_flip_chain(struct probe *p);
int mxcts__probe_cachedop_flip_chain(struct probe *p);
int mxcts__probe_imperative_flips(struct probe *p);
int mxcts__probe_inference_flip_chain(struct probe *p);
int mxcts__probe_engine_random(struct probe *p);
int mxcts__probe_engine_dispatch(struct probe *p);
int mxcts__probe_async_dot(struct probe *p);
int mxcts__probe_numerics(struct probe *p);
int mxcts__probe_parity(struct probe *p); /* cpu(0) against gpu(0), same cases */
int mxcts__probe_numerics_symbolic(struct probe *p); /* the cases through executors */
int mxcts__probe_profiler_autostart(struct probe *p);
int mxcts__probe_knobs(struct probe *p); /* C API knobs (probe_knobs.c) */
int mxcts__probe_ndarray_views(struct probe *p); /* slices, rows, reshapes, copy sizes (probe_views.c) */
int mxcts__probe_shape_inference(struct probe *p); /* symbolic shape and type inference (probe_infer.c) */
int mxcts__probe_profiler_contract(struct probe *p); /* trace format, clock, statistics (probe_profiler.c) */
int mxcts__probe_op_info(struct probe *p); /* op info against MXNet 1.9.1's (probe_op_info.c) */
int mxcts__probe_priority_pool(struct probe *p); /* CPU-prioritized ops at once (probe_pools.c) */
int mxcts__probe_op_errors(struct probe *p); /* where a failed op's error surfaces (probe_errors.c) */
int mxcts__probe_network_inference(struct probe *p); /* probe_network.c */
int mxcts__probe_memory_plan(struct probe *p); /* memory plans and cache keys (probe_plan.c) */
int mxcts__probe_rejections(struct probe *p); /* invalid calls refused, process usable (probe_reject.c) */

/* engine_random's direct checks (probe_waits.c), on vars no other op uses:
 * WaitToRead / WaitToWrite of `a` return after the ops on it have ended;
 * ops writing `x` and `y` run at once.  Return 0 or -1 (a call failed). */
int mxcts__probe_check_waits(struct probe *p, NDArrayHandle a);
int mxcts__probe_check_overlap(struct probe *p, NDArrayHandle x, NDArrayHandle y);
/* Order of CPU-prioritized ops queued behind a held worker (probe_waits.c). */
int mxcts__probe_check_priority_order(struct probe *p);

#endif /* MXCTS_PROBE_INTERNAL_H */
