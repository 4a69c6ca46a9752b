/*
 * capi_conformance: one program, two libraries.  It checks an
 * implementation of the MXNet 1.9.1 C API subset declared in
 * mxref/c_api.h, loading it with dlopen:
 *
 *     capi_conformance [LIB]
 *
 * LIB defaults to the in-tree libmxref.so (CAPI_DEFAULT_LIB, set by the
 * build).  The same binary runs against libmxnet.so from the mxnet==1.9.1
 * wheel (make check-mxnet), so every assertion is one both libraries
 * satisfy: results, counts, orders and error returns, never message text.
 *
 * Bad inputs that MXNet 1.9.1 does not guard against (NULL or freed
 * handles, NULL out pointers: MXNet dereferences them) are checked only
 * when the library is libmxref (it exports mxr_* symbols); against another
 * library those test points are reported as skipped.
 *
 * Output is TAP: one "ok"/"not ok" line per check, diagnostics as "#"
 * lines, the plan at the end.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mxref/c_api.h"

#ifndef CAPI_DEFAULT_LIB
#define CAPI_DEFAULT_LIB "libmxref.so"
#endif

/* Every function the program uses, resolved with dlsym. */
#define CAPI_FUNCTIONS(X)                                                    \
  X(MXGetLastError) X(MXGetVersion) X(MXLibInfoFeatures) X(MXGetGPUCount)    \
  X(MXRandomSeed) X(MXNotifyShutdown) X(MXEngineSetBulkSize)                 \
  X(MXEnginePushSyncND) X(MXNDArrayCreateEx) X(MXNDArrayCreateNone)          \
  X(MXNDArrayFree) X(MXNDArraySyncCopyFromCPU) X(MXNDArraySyncCopyToCPU)     \
  X(MXNDArrayWaitToRead) X(MXNDArrayWaitToWrite) X(MXNDArrayWaitAll)         \
  X(MXNDArrayGetShapeEx) X(MXNDArrayGetDType) X(MXNDArrayGetContext)         \
  X(MXNDArrayGetData) X(NNGetOpHandle) X(MXListAllOpNames)                   \
  X(MXSymbolListAtomicSymbolCreators) X(MXSymbolGetAtomicSymbolName)         \
  X(MXImperativeInvokeEx) X(MXSymbolCreateFromJSON) X(MXSymbolSaveToJSON)    \
  X(MXSymbolCreateVariable) X(MXSymbolCreateAtomicSymbol) X(MXSymbolCompose) \
  X(MXSymbolCreateGroup) X(MXSymbolCopy) X(MXSymbolFree)                     \
  X(MXSymbolListArguments) X(MXSymbolListOutputs)                            \
  X(MXSymbolListAuxiliaryStates) X(MXSymbolInferShapeEx) X(MXExecutorBindEX) \
  X(MXExecutorForward) X(MXExecutorBackwardEx) X(MXExecutorOutputs)         \
  X(MXExecutorFree) X(MXAutogradSetIsRecording) X(MXAutogradSetIsTraining)   \
  X(MXAutogradIsRecording) X(MXAutogradIsTraining)                           \
  X(MXAutogradMarkVariables) X(MXAutogradBackwardEx) X(MXCreateCachedOpEx)   \
  X(MXInvokeCachedOpEx) X(MXFreeCachedOp) X(MXSetProfilerConfig)             \
  X(MXSetProfilerState) X(MXProfilePause) X(MXDumpProfile)                   \
  X(MXAggregateProfileStatsPrint) X(MXAggregateProfileStatsPrintEx)          \
  X(MXStorageEmptyCache) X(MXSymbolGetAtomicSymbolInfo) X(MXListDataIters)    \
  X(MXDataIterGetIterInfo) X(MXKVStoreIsWorkerNode) X(MXNetFuncListGlobalNames) \
  X(MXListFunctions) X(MXNDArraySlice) X(MXNDArrayAt) X(MXNDArrayReshape64)    \
  X(MXNDArrayDetach) X(MXNDArrayGetStorageType) X(MXNDArrayGetGrad)            \
  X(MXSymbolGetName) X(MXSymbolSetAttr) X(MXSymbolGetAttr)                     \
  X(MXSymbolListAttrShallow) X(MXSymbolGetInternals) X(MXSymbolGetChildren)    \
  X(MXSymbolGetNumOutputs) X(MXSymbolInferType) X(NNSymbolListInputNames)      \
  X(MXSymbolSaveToFile) X(MXSymbolCreateFromFile) X(MXExecutorSimpleBindEx)    \
  X(MXProfileCreateDomain) X(MXProfileCreateTask) X(MXProfileDurationStart)    \
  X(MXProfileDurationStop) X(MXProfileDestroyHandle) X(MXGetEnv) X(MXSetEnv) \
  X(MXNDArraySave) X(MXNDArrayLoad) X(MXRandomSeedContext)                  \
  X(MXNDArraySyncCopyFromNDArray)

static struct {
#define CAPI_MEMBER(f) __typeof__(&f) f;
  CAPI_FUNCTIONS(CAPI_MEMBER)
#undef CAPI_MEMBER
} A;

/* ------------------------------------------------------------------ TAP */

static int num_tests, num_failed;
static int strict; /* the library guards inputs MXNet does not (libmxref) */

static void vreport(int pass, const char *directive, const char *fmt, va_list ap) {
  num_tests++;
  if (!pass) num_failed++;
  printf("%s %d - ", pass ? "ok" : "not ok", num_tests);
  vprintf(fmt, ap);
  if (directive) printf(" # %s", directive);
  printf("\n");
  fflush(stdout);
}

__attribute__((format(printf, 2, 3))) static int ok(int pass, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(pass, NULL, fmt, ap);
  va_end(ap);
  return pass;
}

__attribute__((format(printf, 2, 3))) static void skip(const char *why, const char *fmt, ...) {
  char directive[256];
  snprintf(directive, sizeof directive, "SKIP %s", why);
  va_list ap;
  va_start(ap, fmt);
  vreport(1, directive, fmt, ap);
  va_end(ap);
}

__attribute__((format(printf, 1, 2))) static void diag(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("# ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

/* The first line of a (possibly multi-line) error message, for diagnostics. */
static void diag_message(const char *what, const char *msg) {
  if (!msg) {
    diag("%s: (NULL message)", what);
    return;
  }
  int n = 0;
  while (msg[n] && msg[n] != '\n' && n < 300) n++;
  diag("%s: %.*s", what, n, msg);
}

/* ok() for a call that must succeed: reports the library's message if not. */
static int ok_call(int rc, const char *what) {
  int pass = ok(rc == 0, "%s", what);
  if (!pass) {
    diag("returned %d", rc);
    diag_message("last error", A.MXGetLastError());
  }
  return pass;
}

/*
 * Expected failures.  Before the bad call, arm() makes a failing call whose
 * message names a fresh marker (MXNet and libmxref both name an unknown op
 * in their message); afterwards the call must have returned -1 and left a
 * non-empty message without that marker, i.e. a message of its own.
 */
static char marker[64];
static int marker_seq;

static void arm(void) {
  OpHandle h = NULL;
  snprintf(marker, sizeof marker, "mxcts_no_such_op_%d", ++marker_seq);
  A.NNGetOpHandle(marker, &h);
}

static int expect_fail(int rc, const char *what) {
  const char *msg = A.MXGetLastError();
  int fresh = msg && msg[0] && !strstr(msg, marker);
  int pass = ok(rc == -1 && fresh, "%s fails with a message", what);
  if (rc != -1) diag("returned %d, expected -1", rc);
  else if (!fresh) diag_message("no new message; last error", msg);
  else diag_message("message", msg);
  return pass;
}

#define FAILS(what, call)         \
  do {                            \
    arm();                        \
    expect_fail((call), (what));  \
  } while (0)

/* A check of an input MXNet does not guard: run on libmxref only. */
#define GUARD(what, call)                                         \
  do {                                                            \
    if (strict) {                                                 \
      arm();                                                      \
      expect_fail((call), (what));                                \
    } else {                                                      \
      skip("MXNet 1.9.1 does not check this input", "%s", what); \
    }                                                             \
  } while (0)

/* ------------------------------------------------------------- helpers */

static int close_to(const float *got, const float *want, int n, double tol) {
  for (int i = 0; i < n; i++)
    if (!(fabs((double)got[i] - (double)want[i]) <= tol * (1.0 + fabs((double)want[i])))) {
      diag("element %d: got %g, expected %g", i, (double)got[i], (double)want[i]);
      return 0;
    }
  return 1;
}

/* A float32 cpu(0) array with the given contents (NULL: zeros). */
static NDArrayHandle make_array(int ndim, const uint32_t *shape, const float *data) {
  NDArrayHandle h = NULL;
  if (A.MXNDArrayCreateEx(shape, (uint32_t)ndim, 1, 0, 0, 0, &h) != 0) {
    diag_message("MXNDArrayCreateEx failed", A.MXGetLastError());
    return NULL;
  }
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float *buf = calloc(n ? n : 1, sizeof *buf);
  if (!buf) abort();
  if (data) memcpy(buf, data, n * sizeof *buf);
  if (A.MXNDArraySyncCopyFromCPU(h, buf, n) != 0) diag_message("copy failed", A.MXGetLastError());
  free(buf);
  return h;
}

static NDArrayHandle make1(uint32_t n, const float *data) { return make_array(1, &n, data); }

static NDArrayHandle make2(uint32_t a, uint32_t b, const float *data) {
  uint32_t s[2] = {a, b};
  return make_array(2, s, data);
}

/* Read `n` float32 elements; returns 0 on success. */
static int read_array(NDArrayHandle h, float *out, size_t n) {
  int rc = A.MXNDArraySyncCopyToCPU(h, out, n);
  if (rc) diag_message("MXNDArraySyncCopyToCPU failed", A.MXGetLastError());
  return rc;
}

/* Does the array have exactly this shape? */
static int has_shape(NDArrayHandle h, int ndim, const int *dims) {
  int got_ndim = -2;
  const int *got = NULL;
  if (A.MXNDArrayGetShapeEx(h, &got_ndim, &got) != 0) return 0;
  if (got_ndim != ndim) {
    diag("ndim %d, expected %d", got_ndim, ndim);
    return 0;
  }
  for (int i = 0; i < ndim; i++)
    if (got[i] != dims[i]) {
      diag("dim %d is %d, expected %d", i, got[i], dims[i]);
      return 0;
    }
  return 1;
}

static OpHandle op(const char *name) {
  OpHandle h = NULL;
  if (A.NNGetOpHandle(name, &h) != 0) diag_message(name, A.MXGetLastError());
  return h;
}

/* Invoke `opname` creating its outputs; returns the number of outputs (or
 * -1) and stores up to 4 handles. */
static int invoke(const char *opname, int nin, NDArrayHandle *in, int nparam, const char **keys,
                  const char **vals, NDArrayHandle *out) {
  int nout = 0;
  NDArrayHandle *outs = NULL;
  const int *stypes = NULL;
  int rc = A.MXImperativeInvokeEx(op(opname), nin, in, &nout, &outs, nparam, keys, vals, &stypes);
  if (rc) {
    diag_message(opname, A.MXGetLastError());
    return -1;
  }
  for (int i = 0; i < nout && i < 4; i++) out[i] = outs[i];
  return nout;
}

static int contains_name(const char **names, uint32_t n, const char *want) {
  for (uint32_t i = 0; i < n; i++)
    if (names[i] && strcmp(names[i], want) == 0) return 1;
  return 0;
}

/* Compare a returned name list with the expected one. */
static int names_are(const char **names, uint32_t n, const char *const *want, uint32_t nwant) {
  int same = n == nwant;
  for (uint32_t i = 0; same && i < n; i++) same = names[i] && strcmp(names[i], want[i]) == 0;
  if (!same) {
    diag("got %u names:", n);
    for (uint32_t i = 0; i < n; i++) diag("  %s", names[i] ? names[i] : "(NULL)");
    diag("expected %u:", nwant);
    for (uint32_t i = 0; i < nwant; i++) diag("  %s", want[i]);
  }
  return same;
}

/* How often `needle` occurs in `text` (0 for NULL text). */
static int count_of(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

/* Symbols: a variable, and an op composed over named inputs. */
static SymbolHandle var(const char *name) {
  SymbolHandle s = NULL;
  if (A.MXSymbolCreateVariable(name, &s) != 0) diag_message(name, A.MXGetLastError());
  return s;
}

static SymbolHandle compose(const char *opname, const char *name, int nparam, const char **pk,
                            const char **pv, int nargs, const char **keys, SymbolHandle *args) {
  SymbolHandle s = NULL;
  if (A.MXSymbolCreateAtomicSymbol(op(opname), (uint32_t)nparam, pk, pv, &s) != 0) {
    diag_message(opname, A.MXGetLastError());
    return NULL;
  }
  if (A.MXSymbolCompose(s, name, (uint32_t)nargs, keys, args) != 0) {
    diag_message(name, A.MXGetLastError());
    A.MXSymbolFree(s);
    return NULL;
  }
  return s;
}

/* fc = FullyConnected(data, num_hidden=4, name="fc1"). */
static SymbolHandle fc_symbol(void) {
  SymbolHandle data = var("data");
  const char *pk[] = {"num_hidden"}, *pv[] = {"4"};
  const char *keys[] = {"data"};
  SymbolHandle fc = compose("FullyConnected", "fc1", 1, pk, pv, 1, keys, &data);
  A.MXSymbolFree(data);
  return fc;
}

/* Reference FullyConnected: y[i][j] = sum_k x[i][k] w[j][k] + b[j]. */
static void fc_ref(const float *x, const float *w, const float *b, int n, int in, int hid, float *y) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < hid; j++) {
      double acc = b[j];
      for (int k = 0; k < in; k++) acc += (double)x[i * in + k] * w[j * in + k];
      y[i * hid + j] = (float)acc;
    }
}

/* Test data for the FullyConnected checks: x (8,5), w (4,5), b (4). */
static float X[40], W[20], B[4];

static void init_data(void) {
  for (int i = 0; i < 40; i++) X[i] = (float)((i * 7 % 11) - 5) / 4.0f;
  for (int i = 0; i < 20; i++) W[i] = (float)((i * 5 % 9) - 4) / 8.0f;
  for (int i = 0; i < 4; i++) B[i] = (float)i / 2.0f - 0.5f;
}

/* --------------------------------------------------------------- sections */

static const char *const feature_names[] = {
    "CUDA",       "CUDNN",      "NCCL",       "CUDA_RTC",   "TENSORRT",          "CPU_SSE",
    "CPU_SSE2",   "CPU_SSE3",   "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A",         "CPU_AVX",
    "CPU_AVX2",   "OPENMP",     "SSE",        "F16C",       "JEMALLOC",          "BLAS_OPEN",
    "BLAS_ATLAS", "BLAS_MKL",   "BLAS_APPLE", "LAPACK",     "MKLDNN",            "OPENCV",
    "CAFFE",      "PROFILER",   "DIST_KVSTORE", "CXX14",    "INT64_TENSOR_SIZE", "SIGNAL_HANDLER",
    "DEBUG",      "TVM_OP",
};

static int gpu_count;

struct thread_result {
  int rc;
  char msg[512];
  int marker_found;
};

static void *failing_thread(void *arg) {
  struct thread_result *r = arg;
  OpHandle h = NULL;
  r->rc = A.NNGetOpHandle("mxcts_thread_only_op", &h);
  const char *m = A.MXGetLastError();
  snprintf(r->msg, sizeof r->msg, "%s", m ? m : "");
  r->marker_found = m && strstr(m, "mxcts_thread_only_op") != NULL;
  return NULL;
}

static void test_global(void) {
  diag("--- library, version, features, errors");
  const char *m = A.MXGetLastError();
  ok(m != NULL, "MXGetLastError returns a string before any error");

  int version = 0;
  ok_call(A.MXGetVersion(&version), "MXGetVersion");
  ok(version == 10901, "MXGetVersion reports 10901 (got %d)", version);

  const struct LibFeature *feat = NULL;
  size_t nfeat = 0;
  ok_call(A.MXLibInfoFeatures(&feat, &nfeat), "MXLibInfoFeatures");
  size_t nwant = sizeof feature_names / sizeof feature_names[0];
  int same = feat && nfeat == nwant;
  for (size_t i = 0; same && i < nfeat; i++) same = feat[i].name && strcmp(feat[i].name, feature_names[i]) == 0;
  ok(same, "MXLibInfoFeatures lists MXNet 1.9.1's %zu features in its order (got %zu)", nwant, nfeat);
  int blas = 0, cuda = 0;
  for (size_t i = 0; feat && i < nfeat; i++) {
    if (strncmp(feat[i].name, "BLAS_", 5) == 0 && feat[i].enabled) blas++;
    if (strcmp(feat[i].name, "CUDA") == 0) cuda = feat[i].enabled;
    diag("feature %-18s %s", feat[i].name, feat[i].enabled ? "on" : "off");
  }
  ok(blas == 1, "exactly one BLAS_* feature is enabled (%d)", blas);

  ok_call(A.MXGetGPUCount(&gpu_count), "MXGetGPUCount");
  ok(gpu_count >= 0 && (cuda || gpu_count == 0), "GPU count %d is consistent with CUDA %s", gpu_count,
     cuda ? "on" : "off");

  ok_call(A.MXRandomSeed(42), "MXRandomSeed");

  OpHandle h = NULL;
  int rc = A.NNGetOpHandle("mxcts_unknown_operator", &h);
  m = A.MXGetLastError();
  ok(rc == -1 && m && strstr(m, "mxcts_unknown_operator"),
     "an unknown op fails and the message names it");

  /* Messages are per thread: another thread's failure does not touch ours. */
  char mine[256];
  snprintf(mine, sizeof mine, "%s", A.MXGetLastError());
  struct thread_result r = {0};
  pthread_t t;
  if (pthread_create(&t, NULL, failing_thread, &r) == 0) {
    pthread_join(t, NULL);
    ok(r.rc == -1 && r.marker_found, "a failure on another thread sets that thread's message");
    ok(strcmp(mine, A.MXGetLastError()) == 0, "and leaves this thread's message unchanged");
  } else {
    ok(0, "pthread_create");
    ok(0, "pthread_create");
  }

  /* Success does not clear the message. */
  ok_call(A.MXGetVersion(&version), "a successful call");
  ok(strcmp(mine, A.MXGetLastError()) == 0, "leaves the last error message in place");

  GUARD("MXGetVersion(NULL)", A.MXGetVersion(NULL));
  GUARD("MXGetGPUCount(NULL)", A.MXGetGPUCount(NULL));
  GUARD("MXLibInfoFeatures(NULL, NULL)", A.MXLibInfoFeatures(NULL, NULL));
}

static void test_ops(void) {
  diag("--- operators");
  OpHandle rev = op("reverse"), flip = op("flip"), fc = op("FullyConnected");
  ok(rev != NULL && fc != NULL, "NNGetOpHandle finds reverse and FullyConnected");
  ok(flip != NULL && flip == rev, "NNGetOpHandle resolves the alias flip to reverse's handle");
  const char *name = NULL;
  ok_call(A.MXSymbolGetAtomicSymbolName(flip, &name), "MXSymbolGetAtomicSymbolName");
  ok(name && strcmp(name, "reverse") == 0, "the alias's name is the op's own (%s)", name ? name : "NULL");
  name = NULL;
  A.MXSymbolGetAtomicSymbolName(fc, &name);
  ok(name && strcmp(name, "FullyConnected") == 0, "FullyConnected's name");

  uint32_t nnames = 0;
  const char **names = NULL;
  ok_call(A.MXListAllOpNames(&nnames, &names), "MXListAllOpNames");
  static const char *const wanted[] = {"reverse", "flip", "FullyConnected", "Activation",
                                       "elemwise_add", "elemwise_mul", "SoftmaxOutput",
                                       "BatchNorm", "Convolution", "_plus_scalar"};
  int all = names && nnames > 0;
  for (size_t i = 0; all && i < sizeof wanted / sizeof wanted[0]; i++)
    if (!contains_name(names, nnames, wanted[i])) {
      diag("missing %s", wanted[i]);
      all = 0;
    }
  ok(all, "MXListAllOpNames lists the ops and aliases the suites use (%u names)", nnames);

  uint32_t ncreators = 0;
  AtomicSymbolCreator *creators = NULL;
  ok_call(A.MXSymbolListAtomicSymbolCreators(&ncreators, &creators),
          "MXSymbolListAtomicSymbolCreators");
  ok(creators && ncreators > 0 && ncreators <= nnames,
     "there are fewer unique ops (%u) than names (%u)", ncreators, nnames);
  int consistent = creators != NULL, found_fc = 0;
  for (uint32_t i = 0; consistent && i < ncreators; i++) {
    const char *n = NULL;
    OpHandle back = NULL;
    consistent = A.MXSymbolGetAtomicSymbolName(creators[i], &n) == 0 && n &&
                 A.NNGetOpHandle(n, &back) == 0 && back == creators[i];
    if (!consistent) diag("creator %u (%s) does not round-trip", i, n ? n : "?");
    if (n && strcmp(n, "FullyConnected") == 0) found_fc = creators[i] == fc;
  }
  ok(consistent, "every creator's name looks up that creator");
  ok(found_fc, "FullyConnected's creator is its op handle");

  GUARD("NNGetOpHandle(NULL name)", A.NNGetOpHandle(NULL, &rev));
  GUARD("NNGetOpHandle(NULL out)", A.NNGetOpHandle("reverse", NULL));
  GUARD("MXSymbolGetAtomicSymbolName(NULL creator)", A.MXSymbolGetAtomicSymbolName(NULL, &name));
  static int not_an_op;
  GUARD("MXSymbolGetAtomicSymbolName(pointer that is no op)",
        A.MXSymbolGetAtomicSymbolName(&not_an_op, &name));
  GUARD("MXListAllOpNames(NULL, NULL)", A.MXListAllOpNames(NULL, NULL));
}

static void test_ndarray(void) {
  diag("--- NDArray");
  uint32_t shape[2] = {2, 3};
  NDArrayHandle a = NULL;
  ok_call(A.MXNDArrayCreateEx(shape, 2, 1, 0, 0, 0, &a), "MXNDArrayCreateEx float32 (2,3) on cpu(0)");
  int dims[2] = {2, 3};
  ok(has_shape(a, 2, dims), "MXNDArrayGetShapeEx gives (2,3)");
  int dtype = -5, dev_type = -5, dev_id = -5;
  ok(A.MXNDArrayGetDType(a, &dtype) == 0 && dtype == 0, "MXNDArrayGetDType gives 0 (float32)");
  ok(A.MXNDArrayGetContext(a, &dev_type, &dev_id) == 0 && dev_type == 1 && dev_id == 0,
     "MXNDArrayGetContext gives cpu(0)");

  float in[6] = {1, 2, 3, 4, 5, 6}, back[6] = {0};
  ok_call(A.MXNDArraySyncCopyFromCPU(a, in, 6), "MXNDArraySyncCopyFromCPU of 6 elements");
  /* After an allocation on cpu(0): MXNet 1.9.1 refuses to empty the cache
   * of a device it has not allocated on yet. */
  ok_call(A.MXStorageEmptyCache(1, 0), "MXStorageEmptyCache(cpu(0))");
  ok_call(A.MXNDArraySyncCopyToCPU(a, back, 6), "MXNDArraySyncCopyToCPU of 6 elements");
  ok(close_to(back, in, 6, 0), "the copy round-trips");
  FAILS("MXNDArraySyncCopyFromCPU of 5 elements into 6", A.MXNDArraySyncCopyFromCPU(a, in, 5));
  FAILS("MXNDArraySyncCopyFromCPU of 24 (bytes) into 6 elements",
        A.MXNDArraySyncCopyFromCPU(a, in, 24));
  FAILS("MXNDArraySyncCopyToCPU of 7 elements from 6", A.MXNDArraySyncCopyToCPU(a, back, 7));
  ok_call(A.MXNDArrayWaitToRead(a), "MXNDArrayWaitToRead");
  ok_call(A.MXNDArrayWaitToWrite(a), "MXNDArrayWaitToWrite");
  void *data = NULL;
  ok_call(A.MXNDArrayGetData(a, &data), "MXNDArrayGetData");
  ok(data && memcmp(data, in, sizeof in) == 0, "the data pointer shows the array's contents");

  /* Sizes count elements whatever the dtype. */
  uint32_t three = 3;
  NDArrayHandle d = NULL;
  double din[3] = {0.5, -1.25, 1e100}, dback[3] = {0};
  ok_call(A.MXNDArrayCreateEx(&three, 1, 1, 0, 1, 1, &d), "MXNDArrayCreateEx float64 (3,) delayed");
  ok(A.MXNDArrayGetDType(d, &dtype) == 0 && dtype == 1, "its dtype is 1 (float64)");
  ok(A.MXNDArraySyncCopyFromCPU(d, din, 3) == 0 && A.MXNDArraySyncCopyToCPU(d, dback, 3) == 0 &&
         memcmp(din, dback, sizeof din) == 0,
     "float64 copies count elements (3), not bytes");
  A.MXNDArrayFree(d);
  NDArrayHandle i32 = NULL;
  int iin[3] = {7, -8, 1 << 30}, iback[3] = {0};
  ok(A.MXNDArrayCreateEx(&three, 1, 1, 0, 0, 4, &i32) == 0 && A.MXNDArraySyncCopyFromCPU(i32, iin, 3) == 0 &&
         A.MXNDArraySyncCopyToCPU(i32, iback, 3) == 0 && memcmp(iin, iback, sizeof iin) == 0,
     "int32 arrays copy exactly");
  A.MXNDArrayFree(i32);

  NDArrayHandle none = NULL;
  ok_call(A.MXNDArrayCreateNone(&none), "MXNDArrayCreateNone");
  int nd = -5;
  const int *nshape = NULL;
  int rc = A.MXNDArrayGetShapeEx(none, &nd, &nshape);
  ok(rc == 0 && nd == 0, "a placeholder has ndim 0 (%d)", nd);
  dtype = -5;
  rc = A.MXNDArrayGetDType(none, &dtype);
  ok(rc == 0 && dtype == -1, "a placeholder has dtype -1 (%d)", dtype);
  ok(A.MXNDArrayGetContext(none, &dev_type, &dev_id) == 0 && dev_type == 0 && dev_id == 0,
     "a placeholder has context 0/0");
  if (strict) {
    data = &data;
    ok(A.MXNDArrayGetData(none, &data) == 0 && data == NULL, "a placeholder has no data");
  } else {
    skip("MXNet 1.9.1 (MKLDNN build) crashes on it", "a placeholder has no data");
  }
  ok_call(A.MXNDArrayFree(none), "MXNDArrayFree of a placeholder");

  uint32_t big[2] = {65536, 65536};
  NDArrayHandle h = NULL;
  FAILS("MXNDArrayCreateEx of 2^32 elements (no INT64_TENSOR_SIZE)",
        A.MXNDArrayCreateEx(big, 2, 1, 0, 0, 0, &h));
  FAILS("MXNDArrayCreateEx with dtype 99", A.MXNDArrayCreateEx(shape, 2, 1, 0, 0, 99, &h));
  if (gpu_count == 0)
    FAILS("MXNDArrayCreateEx on gpu(0) without a GPU", A.MXNDArrayCreateEx(shape, 2, 2, 0, 0, 0, &h));
  else
    skip("a GPU is present", "MXNDArrayCreateEx on gpu(0) without a GPU");
  ok_call(A.MXNDArrayWaitAll(), "MXNDArrayWaitAll");

  /* Inputs only libmxref checks. */
  GUARD("MXNDArrayCreateEx(NULL shape, ndim 2)", A.MXNDArrayCreateEx(NULL, 2, 1, 0, 0, 0, &h));
  GUARD("MXNDArrayCreateEx(NULL out)", A.MXNDArrayCreateEx(shape, 2, 1, 0, 0, 0, NULL));
  GUARD("MXNDArrayCreateEx on device type 9", A.MXNDArrayCreateEx(shape, 2, 9, 0, 1, 0, &h));
  GUARD("MXNDArrayCreateEx with ndim 9", A.MXNDArrayCreateEx(big, 9, 1, 0, 1, 0, &h));
  GUARD("MXNDArrayCreateNone(NULL)", A.MXNDArrayCreateNone(NULL));
  GUARD("MXNDArrayFree(NULL)", A.MXNDArrayFree(NULL));
  GUARD("MXNDArraySyncCopyFromCPU(NULL handle)", A.MXNDArraySyncCopyFromCPU(NULL, in, 6));
  GUARD("MXNDArraySyncCopyFromCPU(NULL data)", A.MXNDArraySyncCopyFromCPU(a, NULL, 6));
  GUARD("MXNDArraySyncCopyToCPU(NULL data)", A.MXNDArraySyncCopyToCPU(a, NULL, 6));
  GUARD("MXNDArrayWaitToRead(NULL)", A.MXNDArrayWaitToRead(NULL));
  GUARD("MXNDArrayWaitToWrite(NULL)", A.MXNDArrayWaitToWrite(NULL));
  GUARD("MXNDArrayGetShapeEx(NULL out)", A.MXNDArrayGetShapeEx(a, NULL, NULL));
  GUARD("MXNDArrayGetDType(NULL handle)", A.MXNDArrayGetDType(NULL, &dtype));
  GUARD("MXNDArrayGetContext(NULL out)", A.MXNDArrayGetContext(a, NULL, &dev_id));
  GUARD("MXNDArrayGetData(NULL out)", A.MXNDArrayGetData(a, NULL));
  SymbolHandle sym = var("not_an_array");
  GUARD("MXNDArrayGetDType(a symbol handle)", A.MXNDArrayGetDType(sym, &dtype));
  A.MXSymbolFree(sym);

  /* Many handles come and go (libmxref recycles freed wrappers). */
  int cycles_ok = 1;
  NDArrayHandle keep[8] = {0};
  for (int i = 0; i < 3000 && cycles_ok; i++) {
    NDArrayHandle t = NULL;
    float v = (float)i, got = -1;
    cycles_ok = A.MXNDArrayCreateEx(&three, 1, 1, 0, 1, 0, &t) == 0 &&
                A.MXNDArrayCreateEx(&three, 0, 1, 0, 0, 0, &keep[i % 8]) == 0 &&
                A.MXNDArraySyncCopyFromCPU(keep[i % 8], &v, 1) == 0 && A.MXNDArrayFree(t) == 0 &&
                A.MXNDArraySyncCopyToCPU(keep[i % 8], &got, 1) == 0 && got == v &&
                A.MXNDArrayFree(keep[i % 8]) == 0;
  }
  ok(cycles_ok, "3000 rounds of creating and freeing arrays");

  ok_call(A.MXNDArrayFree(a), "MXNDArrayFree");
  GUARD("MXNDArrayGetDType(freed handle)", A.MXNDArrayGetDType(a, &dtype));
  GUARD("MXNDArraySyncCopyToCPU(freed handle)", A.MXNDArraySyncCopyToCPU(a, back, 6));
  GUARD("MXNDArrayFree(freed handle) (double free)", A.MXNDArrayFree(a));
}

/* ------------------------------------------------- seeds, array copies */

#define NDRAW 16

/* Fill a new float32 (NDRAW,) array on (dev_type, 0) with _random_uniform
 * and read it back into out; 0 on success. */
static int draw_uniform(int dev_type, float *out) {
  uint32_t n = NDRAW;
  NDArrayHandle h = NULL;
  if (A.MXNDArrayCreateEx(&n, 1, dev_type, 0, 0, 0, &h) != 0) {
    diag_message("MXNDArrayCreateEx", A.MXGetLastError());
    return -1;
  }
  const char *keys[] = {"shape", "low", "high"}, *vals[] = {"(16,)", "0", "1"};
  NDArrayHandle outs[1] = {h}, *outp = outs;
  int nout = 1;
  const int *stypes = NULL;
  int rc = A.MXImperativeInvokeEx(op("_random_uniform"), 0, NULL, &nout, &outp, 3, keys, vals, &stypes);
  if (rc) diag_message("_random_uniform", A.MXGetLastError());
  if (!rc) rc = read_array(h, out, NDRAW);
  A.MXNDArrayFree(h);
  return rc;
}

static int same_floats(const float *a, const float *b, int n) { return memcmp(a, b, (size_t)n * sizeof *a) == 0; }

/* MXRandomSeedContext(seed, dev_type, 0) then one draw on that device. */
static int seeded_draw(int seed, int dev_type, float *out) {
  int rc = A.MXRandomSeedContext(seed, dev_type, 0);
  if (rc) diag_message("MXRandomSeedContext", A.MXGetLastError());
  return rc ? rc : draw_uniform(dev_type, out);
}

static void seed_context_on(int dev_type, const char *dev) {
  float a[NDRAW], b[NDRAW], c[NDRAW], next[NDRAW];
  int rc = seeded_draw(7, dev_type, a);
  ok(rc == 0 && draw_uniform(dev_type, next) == 0, "MXRandomSeedContext(7, %s) and two draws", dev);
  ok(!rc && !same_floats(a, next, NDRAW), "the draw after it gives other numbers (%s)", dev);
  int in_range = !rc;
  for (int i = 0; i < NDRAW && in_range; i++) in_range = a[i] >= 0.0f && a[i] < 1.0f;
  ok(in_range, "uniform draws on %s lie in [0, 1)", dev);
  ok(seeded_draw(7, dev_type, b) == 0 && same_floats(a, b, NDRAW),
     "the same seed on %s gives the same numbers", dev);
  ok(seeded_draw(8, dev_type, c) == 0 && !same_floats(a, c, NDRAW),
     "another seed on %s gives other numbers", dev);
}

static void test_random(void) {
  diag("--- MXRandomSeedContext");
  seed_context_on(1, "cpu(0)");
  if (gpu_count > 0) seed_context_on(2, "gpu(0)");
  else skip("no GPU", "MXRandomSeedContext on gpu(0)");

  /* MXNet takes any device type and a GPU it cannot see (a CPU build
   * seeds its CPU generators): libmxref refuses them. */
  GUARD("MXRandomSeedContext on device type 9", A.MXRandomSeedContext(7, 9, 0));
  if (strict)
    ok(strstr(A.MXGetLastError(), "device type 9") != NULL, "the refusal names device type 9");
  else
    skip("libmxref only", "the refusal names device type 9");
  GUARD("MXRandomSeedContext on cpu(-1)", A.MXRandomSeedContext(7, 1, -1));
  GUARD("MXRandomSeedContext on a GPU that does not exist",
        A.MXRandomSeedContext(7, 2, gpu_count));
}

static void test_copy_from_ndarray(void) {
  diag("--- MXNDArraySyncCopyFromNDArray");
  float in[6] = {1, 2, 3, 4, 5, 6}, back[6] = {0}, zeros[6] = {0};
  NDArrayHandle src = make2(2, 3, in), dst = make2(2, 3, NULL);
  ok_call(A.MXNDArraySyncCopyFromNDArray(dst, src, -1), "MXNDArraySyncCopyFromNDArray(i = -1) (2,3) to (2,3)");
  ok(read_array(dst, back, 6) == 0 && close_to(back, in, 6, 0), "the destination holds the source's data");
  float later[6] = {9, 9, 9, 9, 9, 9};
  A.MXNDArraySyncCopyFromCPU(src, later, 6);
  ok(read_array(dst, back, 6) == 0 && close_to(back, in, 6, 0), "it is a copy: writing the source later leaves it");
  ok_call(A.MXNDArraySyncCopyFromNDArray(src, src, -1), "a copy of an array onto itself does nothing");

  /* MXNet: an auxiliary array exists only in a sparse destination. */
  FAILS("MXNDArraySyncCopyFromNDArray(i = 0) into a dense array", A.MXNDArraySyncCopyFromNDArray(dst, src, 0));
  if (strict)
    ok(strstr(A.MXGetLastError(), "sparse storage is not implemented") != NULL,
       "the refusal says why: no sparse storage");
  else
    skip("libmxref only", "the refusal says why: no sparse storage");
  NDArrayHandle none = NULL;
  A.MXNDArrayCreateNone(&none);
  FAILS("MXNDArraySyncCopyFromNDArray from a placeholder", A.MXNDArraySyncCopyFromNDArray(dst, none, -1));
  FAILS("MXNDArraySyncCopyFromNDArray into a placeholder", A.MXNDArraySyncCopyFromNDArray(none, src, -1));
  A.MXNDArrayFree(none);

  /* MXNet reshapes (and regrows) the destination and casts between dtypes;
   * libmxref refuses, and a refused copy writes nothing. */
  NDArrayHandle wide = make2(3, 2, NULL), small = make1(4, NULL);
  GUARD("MXNDArraySyncCopyFromNDArray (2,3) into (3,2)", A.MXNDArraySyncCopyFromNDArray(wide, src, -1));
  if (strict)
    ok(strstr(A.MXGetLastError(), "(2,3)") && strstr(A.MXGetLastError(), "(3,2)"),
       "the refusal names both shapes");
  else
    skip("libmxref only", "the refusal names both shapes");
  GUARD("MXNDArraySyncCopyFromNDArray of 6 elements into 4", A.MXNDArraySyncCopyFromNDArray(small, src, -1));
  uint32_t eight = 8;
  float base_in[8] = {0}, base_back[8];
  NDArrayHandle base = make_array(1, &eight, base_in), head = NULL;
  A.MXNDArraySlice(base, 0, 2, &head);
  NDArrayHandle six = make1(6, in);
  GUARD("MXNDArraySyncCopyFromNDArray of 6 elements into a 2-element slice",
        A.MXNDArraySyncCopyFromNDArray(head, six, -1));
  if (strict)
    ok(read_array(base, base_back, 8) == 0 && close_to(base_back, base_in, 8, 0) &&
           read_array(wide, back, 6) == 0 && close_to(back, zeros, 6, 0),
       "refused copies wrote nothing (the slice's base and the (3,2) array are still zeros)");
  else
    skip("libmxref only", "refused copies wrote nothing");
  NDArrayHandle tail = NULL;
  A.MXNDArraySlice(base, 2, 4, &tail);
  GUARD("MXNDArraySyncCopyFromNDArray between two slices of one array (MXNet skips it)",
        A.MXNDArraySyncCopyFromNDArray(tail, head, -1));
  NDArrayHandle f64 = NULL;
  uint32_t shape[2] = {2, 3};
  A.MXNDArrayCreateEx(shape, 2, 1, 0, 0, 1, &f64);
  GUARD("MXNDArraySyncCopyFromNDArray float32 into float64", A.MXNDArraySyncCopyFromNDArray(f64, src, -1));
  GUARD("MXNDArraySyncCopyFromNDArray(i = -2)", A.MXNDArraySyncCopyFromNDArray(dst, src, -2));
  GUARD("MXNDArraySyncCopyFromNDArray(NULL source)", A.MXNDArraySyncCopyFromNDArray(dst, NULL, -1));
  GUARD("MXNDArraySyncCopyFromNDArray(NULL destination)", A.MXNDArraySyncCopyFromNDArray(NULL, src, -1));

  if (gpu_count > 0) {
    NDArrayHandle g = NULL, out = make2(2, 3, NULL);
    int rc = A.MXNDArrayCreateEx(shape, 2, 2, 0, 0, 0, &g);
    ok(rc == 0 && A.MXNDArraySyncCopyFromNDArray(g, dst, -1) == 0 &&
           A.MXNDArraySyncCopyFromNDArray(out, g, -1) == 0 && read_array(out, back, 6) == 0 &&
           close_to(back, in, 6, 0),
       "cpu(0) -> gpu(0) -> cpu(0) round-trips");
    if (g) A.MXNDArrayFree(g);
    A.MXNDArrayFree(out);
  } else {
    skip("no GPU", "cpu(0) -> gpu(0) -> cpu(0) round-trips");
  }
  NDArrayHandle all[] = {src, dst, wide, small, base, head, tail, six, f64};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) A.MXNDArrayFree(all[i]);
}

/* ----------------------------------------------------------- engine push */

struct push_log {
  pthread_mutex_t mu;
  int order[16];
  int count;
  int ctx_type, ctx_id;
  int deleted;
};

struct push_param {
  struct push_log *log;
  int seq;
  float *dst;   /* written by the op, or NULL */
  const float *src;
  int n;
};

/* A sync op: logs its sequence number and the context in its run context,
 * copies src to dst (or writes seq + 1). */
static void sync_op(void *rctx, void *param) {
  struct push_param *p = param;
  const int *ctx = rctx;
  pthread_mutex_lock(&p->log->mu);
  if (p->log->count < 16) p->log->order[p->log->count] = p->seq;
  p->log->count++;
  p->log->ctx_type = ctx[0];
  p->log->ctx_id = ctx[1];
  pthread_mutex_unlock(&p->log->mu);
  for (int i = 0; p->dst && i < p->n; i++) p->dst[i] = p->src ? p->src[i] * 2.0f : (float)(p->seq + 1);
}

static void delete_param(void *param) {
  struct push_param *p = param;
  pthread_mutex_lock(&p->log->mu);
  p->log->deleted++;
  pthread_mutex_unlock(&p->log->mu);
  free(p);
}

static void wait_deleted(struct push_log *log, int want) {
  for (int i = 0; i < 500; i++) {
    pthread_mutex_lock(&log->mu);
    int n = log->deleted;
    pthread_mutex_unlock(&log->mu);
    if (n >= want) return;
    usleep(10000);
  }
}

static struct push_param *new_param(struct push_log *log, int seq, float *dst, const float *src, int n) {
  struct push_param *p = calloc(1, sizeof *p);
  if (!p) abort();
  *p = (struct push_param){log, seq, dst, src, n};
  return p;
}

/* Both libraries read MXNET_ENGINE_TYPE; NaiveEngine keeps no bulk size. */
static int naive_engine(void) {
  const char *e = getenv("MXNET_ENGINE_TYPE");
  return e && strcmp(e, "NaiveEngine") == 0;
}

/* The bytes MXNet 1.9.1 writes for one float32 array (1.5, -2) of shape
 * (2,) on cpu(0) named "w": list magic, reserved, count; array magic,
 * dense storage, ndim, dims, device type and id, dtype, data; names. */
static size_t expected_file(unsigned char *b) {
  size_t n = 0;
#define PUT(type, v) (memcpy(b + n, &(type){v}, sizeof(type)), n += sizeof(type))
  PUT(uint64_t, 0x112), PUT(uint64_t, 0), PUT(uint64_t, 1);
  PUT(uint32_t, 0xF993FAC9u), PUT(int32_t, 0), PUT(int32_t, 1), PUT(int64_t, 2);
  PUT(int32_t, 1), PUT(int32_t, 0), PUT(int32_t, 0), PUT(float, 1.5f), PUT(float, -2.0f);
  PUT(uint64_t, 1), PUT(uint64_t, 1);
#undef PUT
  b[n++] = 'w';
  return n;
}

static int file_is(const char *path, const unsigned char *want, size_t n) {
  unsigned char got[256];
  FILE *f = fopen(path, "rb");
  size_t len = f ? fread(got, 1, sizeof got, f) : 0;
  if (f) fclose(f);
  if (len != n) diag("%s has %zu bytes, expected %zu", path, len, n);
  for (size_t i = 0; len == n && i < n; i++)
    if (got[i] != want[i]) {
      diag("byte %zu is 0x%02x, expected 0x%02x", i, got[i], want[i]);
      return 0;
    }
  return len == n;
}

static int write_bytes(const char *path, const unsigned char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  int rc = f && fwrite(b, 1, n, f) == n ? 0 : -1;
  if (f && fclose(f) != 0) rc = -1;
  return rc;
}

static void test_ndarray_file(void) {
  diag("--- NDArray files (MXNDArraySave, MXNDArrayLoad)");
  char path[64], bad[80];
  snprintf(path, sizeof path, "/tmp/capi-conformance-%ld.params", (long)getpid());
  snprintf(bad, sizeof bad, "%s.bad", path);
  float w[2] = {1.5f, -2.0f}, m[6] = {1, 2, 3, 4, 5, 6};
  NDArrayHandle arrs[2] = {make1(2, w), make2(2, 3, m)};
  const char *keys[2] = {"w", "aux:m"};
  unsigned char want[256];
  size_t n = expected_file(want);
  ok_call(A.MXNDArraySave(path, 1, arrs, keys), "MXNDArraySave of one float32 array named w");
  ok(file_is(path, want, n), "the file holds MXNet's layout byte for byte");
  ok_call(A.MXNDArraySave(path, 2, arrs, keys), "MXNDArraySave of two arrays with names");
  uint32_t na = 0, nn = 0;
  NDArrayHandle *out = NULL;
  const char **names = NULL;
  ok_call(A.MXNDArrayLoad(path, &na, &out, &nn, &names), "MXNDArrayLoad of that file");
  int dims[2] = {2, 3};
  float back[6] = {0};
  ok(na == 2 && nn == 2 && strcmp(names[0], "w") == 0 && strcmp(names[1], "aux:m") == 0,
     "two arrays, named w and aux:m, in order");
  ok(na == 2 && has_shape(out[1], 2, dims) && read_array(out[1], back, 6) == 0 && close_to(back, m, 6, 0),
     "the second array has its shape (2,3) and values");
  for (uint32_t i = 0; i < na; i++) A.MXNDArrayFree(out[i]);
  ok_call(A.MXNDArraySave(path, 2, arrs, NULL), "MXNDArraySave without names");
  ok(A.MXNDArrayLoad(path, &na, &out, &nn, &names) == 0 && na == 2 && nn == 0, "loads as two arrays, no names");
  for (uint32_t i = 0; i < na; i++) A.MXNDArrayFree(out[i]);
  want[0] = 0x13;
  ok(write_bytes(bad, want, n) == 0, "a file with a wrong list magic written");
  FAILS("MXNDArrayLoad of a file with a wrong magic", A.MXNDArrayLoad(bad, &na, &out, &nn, &names));
  want[0] = 0x12;
  ok(write_bytes(bad, want, n - 9) == 0, "a file cut inside its names written");
  FAILS("MXNDArrayLoad of a truncated file", A.MXNDArrayLoad(bad, &na, &out, &nn, &names));
  FAILS("MXNDArrayLoad of a missing file", A.MXNDArrayLoad("/nonexistent/x.params", &na, &out, &nn, &names));
  GUARD("MXNDArraySave(NULL fname)", A.MXNDArraySave(NULL, 1, arrs, keys));
  GUARD("MXNDArrayLoad(NULL out)", A.MXNDArrayLoad(path, NULL, &out, &nn, &names));
  remove(path), remove(bad);
  A.MXNDArrayFree(arrs[0]), A.MXNDArrayFree(arrs[1]);
}

static void test_engine(void) {
  diag("--- engine");
  int prev = -1, prev2 = -1;
  ok_call(A.MXEngineSetBulkSize(7, &prev), "MXEngineSetBulkSize(7)");
  int rc = A.MXEngineSetBulkSize(prev, &prev2);
  ok(rc == 0 && prev2 == (naive_engine() ? 0 : 7), "setting it back returns 7 (0 for NaiveEngine, which never bulks) (%d)",
     prev2);

  struct push_log log = {.mu = PTHREAD_MUTEX_INITIALIZER, .ctx_type = -1, .ctx_id = -1};
  NDArrayHandle a = make1(4, NULL), b = make1(4, NULL);
  float *pa = NULL, *pb = NULL;
  A.MXNDArrayWaitToWrite(a);
  A.MXNDArrayWaitToWrite(b);
  A.MXNDArrayGetData(a, (void **)&pa);
  A.MXNDArrayGetData(b, (void **)&pb);
  ok(pa && pb, "data pointers for the push tests");
  if (!pa || !pb) return;

  struct {
    int dev_type;
    int dev_id;
  } cpu0 = {1, 0};
  int normal = 0, prioritized = 3;
  rc = 0;
  /* Ten writes of `a`: the engine runs them one at a time, in push order. */
  for (int k = 0; k < 10 && !rc; k++)
    rc = A.MXEnginePushSyncND(sync_op, new_param(&log, k, pa, NULL, 4), delete_param, &cpu0, NULL, 0, &a,
                              1, &normal, 0, "mxcts_write");
  ok_call(rc, "MXEnginePushSyncND of ten writes");
  /* A read of `a` writing `b` runs after them. */
  ok_call(A.MXEnginePushSyncND(sync_op, new_param(&log, 10, pb, pa, 4), delete_param, &cpu0, &a, 1, &b, 1,
                               &prioritized, 1, "mxcts_read"),
          "MXEnginePushSyncND of a read (CPU_PRIORITIZED)");
  float got[4] = {0}, want[4] = {20, 20, 20, 20};
  ok(read_array(b, got, 4) == 0 && close_to(got, want, 4, 0), "the read saw the last write (b = 2 * 10)");
  ok_call(A.MXNDArrayWaitAll(), "MXNDArrayWaitAll after the pushes");
  int in_order = log.count == 11;
  for (int k = 0; in_order && k < 11; k++) in_order = log.order[k] == k;
  ok(in_order, "the ops ran in dependency order (%d ran)", log.count);
  ok(log.ctx_type == 1 && log.ctx_id == 0, "the run context starts with the op's context (%d, %d)", log.ctx_type,
     log.ctx_id);
  /* MXNet deletes a param when it drops the op, which may come a little
   * after the wait returned. */
  wait_deleted(&log, 11);
  ok(log.deleted == 11, "each param was deleted once (%d)", log.deleted);

  /* NULL property (normal), no deleter, no name, no arrays. */
  struct push_param *p = new_param(&log, 11, NULL, NULL, 0);
  ok_call(A.MXEnginePushSyncND(sync_op, p, NULL, &cpu0, NULL, 0, NULL, 0, NULL, 0, NULL),
          "MXEnginePushSyncND with no arrays, property, deleter or name");
  A.MXNDArrayWaitAll();
  ok(log.count == 12, "it ran");
  ok(log.deleted == 11, "and its param was not deleted (no deleter)");
  free(p);


  int bad_prop = 99;
  struct {
    int dev_type;
    int dev_id;
  } bad_ctx = {9, 0};
  int deleted_before = log.deleted;
  GUARD("MXEnginePushSyncND(NULL function)",
        A.MXEnginePushSyncND(NULL, new_param(&log, 90, NULL, NULL, 0), delete_param, &cpu0, NULL, 0, NULL, 0,
                             NULL, 0, NULL));
  GUARD("MXEnginePushSyncND(NULL context)",
        A.MXEnginePushSyncND(sync_op, new_param(&log, 91, NULL, NULL, 0), delete_param, NULL, NULL, 0, NULL,
                             0, NULL, 0, NULL));
  GUARD("MXEnginePushSyncND(device type 9)",
        A.MXEnginePushSyncND(sync_op, new_param(&log, 92, NULL, NULL, 0), delete_param, &bad_ctx, NULL, 0,
                             NULL, 0, NULL, 0, NULL));
  GUARD("MXEnginePushSyncND(property 99)",
        A.MXEnginePushSyncND(sync_op, new_param(&log, 93, NULL, NULL, 0), delete_param, &cpu0, NULL, 0, NULL,
                             0, &bad_prop, 0, NULL));
  /* MXNet deadlocks on an op that waits for itself. */
  GUARD("MXEnginePushSyncND with an array both read and written",
        A.MXEnginePushSyncND(sync_op, new_param(&log, 96, NULL, NULL, 0), delete_param, &cpu0, &a, 1, &a, 1,
                             &normal, 0, "mxcts_both"));
  GUARD("MXEnginePushSyncND with an array twice in the mutable set",
        A.MXEnginePushSyncND(sync_op, new_param(&log, 97, NULL, NULL, 0), delete_param, &cpu0, NULL, 0,
                             (NDArrayHandle[2]){a, a}, 2, &normal, 0, "mxcts_twice"));
  GUARD("MXEnginePushSyncND(-1 const arrays)",
        A.MXEnginePushSyncND(sync_op, new_param(&log, 94, NULL, NULL, 0), delete_param, &cpu0, &a, -1, NULL,
                             0, NULL, 0, NULL));
  NDArrayHandle with_null[2] = {a, NULL};
  GUARD("MXEnginePushSyncND(a NULL array in the mutable set)",
        A.MXEnginePushSyncND(sync_op, new_param(&log, 95, NULL, NULL, 0), delete_param, &cpu0, NULL, 0,
                             with_null, 2, NULL, 0, NULL));
  if (strict) {
    A.MXNDArrayWaitAll();
    ok(log.deleted == deleted_before + 8 && log.count == 12,
       "a refused push deletes its param once and runs nothing (%d deleted, %d ran)",
       log.deleted - deleted_before, log.count);
  } else {
    skip("MXNet 1.9.1 does not check these inputs", "a refused push deletes its param once");
  }
  GUARD("MXEngineSetBulkSize(NULL prev)", A.MXEngineSetBulkSize(1, NULL));
  A.MXNDArrayFree(a);
  A.MXNDArrayFree(b);
}

/* ------------------------------------------------------------ imperative */

static void test_imperative(void) {
  diag("--- imperative invoke");
  float av[6] = {1, -2, 3, -4, 5, -6}, bv[6] = {10, 20, 30, 40, 50, 60}, got[6];
  NDArrayHandle a = make2(2, 3, av), b = make2(2, 3, bv);
  NDArrayHandle in[2] = {a, b};
  int nout = 0;
  NDArrayHandle *outs = NULL;
  const int *stypes = NULL;
  ok_call(A.MXImperativeInvokeEx(op("elemwise_add"), 2, in, &nout, &outs, 0, NULL, NULL, &stypes),
          "MXImperativeInvokeEx elemwise_add creating its output");
  ok(nout == 1 && outs && outs[0] && stypes && stypes[0] == 0, "one dense output (%d)", nout);
  NDArrayHandle sum = nout == 1 && outs ? outs[0] : NULL;
  float want[6];
  for (int i = 0; i < 6; i++) want[i] = av[i] + bv[i];
  int dims[2] = {2, 3};
  ok(sum && has_shape(sum, 2, dims) && read_array(sum, got, 6) == 0 && close_to(got, want, 6, 0),
     "elemwise_add computes a + b with shape (2,3)");

  /* Into a given array; then into a placeholder, which gets the shape. */
  NDArrayHandle given = make2(2, 3, NULL);
  NDArrayHandle *given_p = &given;
  nout = 1;
  const char *relu_k[] = {"act_type"}, *relu_v[] = {"relu"};
  ok_call(A.MXImperativeInvokeEx(op("Activation"), 1, &a, &nout, &given_p, 1, relu_k, relu_v, &stypes),
          "MXImperativeInvokeEx Activation(relu) into a given array");
  for (int i = 0; i < 6; i++) want[i] = av[i] > 0 ? av[i] : 0;
  ok(read_array(given, got, 6) == 0 && close_to(got, want, 6, 0), "relu written into the given array");
  NDArrayHandle placeholder = NULL;
  A.MXNDArrayCreateNone(&placeholder);
  NDArrayHandle *ph_p = &placeholder;
  nout = 1;
  const char *flip_k[] = {"axis"}, *flip_v[] = {"1"};
  ok_call(A.MXImperativeInvokeEx(op("flip"), 1, &a, &nout, &ph_p, 1, flip_k, flip_v, &stypes),
          "MXImperativeInvokeEx flip(axis=1) into a placeholder");
  float flipped[6] = {3, -2, 1, -6, 5, -4};
  ok(has_shape(placeholder, 2, dims) && read_array(placeholder, got, 6) == 0 && close_to(got, flipped, 6, 0),
     "the placeholder received the shape and the result");

  /* FullyConnected with parameters, checked against a plain loop. */
  NDArrayHandle x = make2(8, 5, X), w = make2(4, 5, W), bias = make1(4, B);
  NDArrayHandle fin[3] = {x, w, bias}, fout[4] = {0};
  const char *fc_k[] = {"num_hidden"}, *fc_v[] = {"4"};
  float y[32], yref[32];
  fc_ref(X, W, B, 8, 5, 4, yref);
  ok(invoke("FullyConnected", 3, fin, 1, fc_k, fc_v, fout) == 1 && read_array(fout[0], y, 32) == 0 &&
         close_to(y, yref, 32, 1e-5),
     "FullyConnected(num_hidden=4) matches the reference");
  if (fout[0]) A.MXNDArrayFree(fout[0]);

  /* Bad inputs both libraries reject. */
  NDArrayHandle *none_out = NULL;
  nout = 0;
  FAILS("elemwise_add with one input",
        A.MXImperativeInvokeEx(op("elemwise_add"), 1, in, &nout, &none_out, 0, NULL, NULL, &stypes));
  const char *bad_v[] = {"no_such_activation"};
  none_out = NULL;
  FAILS("Activation with act_type=no_such_activation",
        A.MXImperativeInvokeEx(op("Activation"), 1, &a, &nout, &none_out, 1, relu_k, bad_v, &stypes));
  const char *unk_k[] = {"act_type", "mxcts_unknown_key"}, *unk_v[] = {"relu", "1"};
  none_out = NULL;
  FAILS("Activation with an unknown parameter",
        A.MXImperativeInvokeEx(op("Activation"), 1, &a, &nout, &none_out, 2, unk_k, unk_v, &stypes));
  none_out = NULL;
  FAILS("FullyConnected without num_hidden",
        A.MXImperativeInvokeEx(op("FullyConnected"), 3, fin, &nout, &none_out, 0, NULL, NULL, &stypes));
  const char *nan_v[] = {"four"};
  none_out = NULL;
  FAILS("FullyConnected with num_hidden=four",
        A.MXImperativeInvokeEx(op("FullyConnected"), 3, fin, &nout, &none_out, 1, fc_k, nan_v, &stypes));
  NDArrayHandle t = make2(3, 2, NULL);
  NDArrayHandle mismatch[2] = {a, t};
  none_out = NULL;
  FAILS("elemwise_add of (2,3) and (3,2)",
        A.MXImperativeInvokeEx(op("elemwise_add"), 2, mismatch, &nout, &none_out, 0, NULL, NULL, &stypes));
  NDArrayHandle wrong = make2(3, 3, NULL);
  NDArrayHandle *wrong_p = &wrong;
  nout = 1;
  FAILS("elemwise_add into a (3,3) output",
        A.MXImperativeInvokeEx(op("elemwise_add"), 2, in, &nout, &wrong_p, 0, NULL, NULL, &stypes));
  nout = 2;
  FAILS("elemwise_add given 2 outputs",
        A.MXImperativeInvokeEx(op("elemwise_add"), 2, in, &nout, &given_p, 0, NULL, NULL, &stypes));

  nout = 0;
  none_out = NULL;
  GUARD("MXImperativeInvokeEx(NULL creator)",
        A.MXImperativeInvokeEx(NULL, 2, in, &nout, &none_out, 0, NULL, NULL, &stypes));
  NDArrayHandle with_null[2] = {a, NULL};
  GUARD("MXImperativeInvokeEx(a NULL input)",
        A.MXImperativeInvokeEx(op("elemwise_add"), 2, with_null, &nout, &none_out, 0, NULL, NULL, &stypes));
  NDArrayHandle hole = NULL;
  A.MXNDArrayCreateNone(&hole);
  NDArrayHandle with_hole[2] = {a, hole};
  GUARD("MXImperativeInvokeEx(a placeholder input)",
        A.MXImperativeInvokeEx(op("elemwise_add"), 2, with_hole, &nout, &none_out, 0, NULL, NULL, &stypes));
  NDArrayHandle hole_out = NULL;
  A.MXNDArrayCreateNone(&hole_out);
  NDArrayHandle *hole_out_p = &hole_out;
  nout = 1;
  GUARD("MXImperativeInvokeEx(a placeholder input, a placeholder output)",
        A.MXImperativeInvokeEx(op("elemwise_add"), 2, with_hole, &nout, &hole_out_p, 0, NULL, NULL, &stypes));
  A.MXNDArrayFree(hole);
  A.MXNDArrayFree(hole_out);
  nout = 0;
  none_out = NULL;
  GUARD("MXImperativeInvokeEx(NULL num_outputs)",
        A.MXImperativeInvokeEx(op("elemwise_add"), 2, in, NULL, &none_out, 0, NULL, NULL, &stypes));
  GUARD("MXImperativeInvokeEx(NULL parameter key)",
        A.MXImperativeInvokeEx(op("Activation"), 1, &a, &nout, &none_out, 1, NULL, relu_v, &stypes));
  GUARD("MXImperativeInvokeEx(-1 inputs)",
        A.MXImperativeInvokeEx(op("elemwise_add"), -1, in, &nout, &none_out, 0, NULL, NULL, &stypes));

  NDArrayHandle all[] = {a, b, sum, given, placeholder, x, w, bias, t, wrong};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) A.MXNDArrayFree(all[i]);
}

/* --------------------------------------------------------------- symbols */

struct shapes {
  uint32_t nin, nout, naux;
  const int *in_ndim, *out_ndim, *aux_ndim;
  const int **in, **out, **aux;
  int complete;
};

static int infer(SymbolHandle s, uint32_t n, const char **keys, const uint32_t *ind, const int *data,
                 struct shapes *r) {
  memset(r, 0, sizeof *r);
  r->complete = -1;
  return A.MXSymbolInferShapeEx(s, n, keys, ind, data, &r->nin, &r->in_ndim, &r->in, &r->nout, &r->out_ndim,
                                &r->out, &r->naux, &r->aux_ndim, &r->aux, &r->complete);
}

static int shape_is(int ndim, const int *dims, int want_ndim, const int *want) {
  if (ndim != want_ndim) {
    diag("ndim %d, expected %d", ndim, want_ndim);
    return 0;
  }
  for (int i = 0; i < ndim; i++)
    if (dims[i] != want[i]) {
      diag("dim %d is %d, expected %d", i, dims[i], want[i]);
      return 0;
    }
  return 1;
}

/* relu over a variable v whose __shape__ is `text`, its shapes inferred
 * with `given` as v's shape (NULL: none given); the symbol is freed. */
static int infer_shape_attr(const char *text, const int *given, int ndim, struct shapes *r) {
  const char *k[] = {"act_type"}, *val[] = {"relu"}, *keys[] = {"v"};
  SymbolHandle v = var("v"), s = NULL;
  if (v && A.MXSymbolSetAttr(v, "__shape__", text) == 0)
    s = compose("Activation", "act", 1, k, val, 1, NULL, &v);
  uint32_t ind[2] = {0, (uint32_t)ndim};
  int rc = s ? infer(s, given ? 1 : 0, keys, ind, given, r) : -2;
  if (s) A.MXSymbolFree(s);
  if (v) A.MXSymbolFree(v);
  return rc;
}

static void test_symbols(void) {
  diag("--- symbols");
  uint32_t n = 0;
  const char **names = NULL;

  SymbolHandle fc = fc_symbol();
  ok(fc != NULL, "FullyConnected(num_hidden=4) composed over data as fc1");
  static const char *const fc_args[] = {"data", "fc1_weight", "fc1_bias"};
  ok(A.MXSymbolListArguments(fc, &n, &names) == 0 && names_are(names, n, fc_args, 3),
     "MXSymbolListArguments: data, fc1_weight, fc1_bias");
  static const char *const fc_outs[] = {"fc1_output"};
  ok(A.MXSymbolListOutputs(fc, &n, &names) == 0 && names_are(names, n, fc_outs, 1),
     "MXSymbolListOutputs: fc1_output");
  ok(A.MXSymbolListAuxiliaryStates(fc, &n, &names) == 0 && n == 0, "MXSymbolListAuxiliaryStates: none");

  /* relu(fc1) */
  const char *relu_k[] = {"act_type"}, *relu_v[] = {"relu"};
  SymbolHandle relu = compose("Activation", "relu1", 1, relu_k, relu_v, 1, NULL, &fc);
  static const char *const relu_outs[] = {"relu1_output"};
  ok(relu && A.MXSymbolListOutputs(relu, &n, &names) == 0 && names_are(names, n, relu_outs, 1),
     "Activation composed positionally: relu1_output");
  ok(relu && A.MXSymbolListArguments(relu, &n, &names) == 0 && names_are(names, n, fc_args, 3),
     "its arguments are fc1's");

  /* BatchNorm has aux states; positional compose with explicit variables. */
  SymbolHandle data = var("data"), gamma = var("g"), beta = var("b"), mean = var("m"), varn = var("v");
  SymbolHandle bn_in[5] = {data, gamma, beta, mean, varn};
  SymbolHandle bn = compose("BatchNorm", "bn", 0, NULL, NULL, 5, NULL, bn_in);
  static const char *const bn_args[] = {"data", "g", "b"}, *const bn_aux[] = {"m", "v"},
                           *const bn_outs[] = {"bn_output"};
  ok(bn && A.MXSymbolListArguments(bn, &n, &names) == 0 && names_are(names, n, bn_args, 3),
     "BatchNorm: arguments data, g, b");
  ok(bn && A.MXSymbolListAuxiliaryStates(bn, &n, &names) == 0 && names_are(names, n, bn_aux, 2),
     "BatchNorm: aux states m, v");
  ok(bn && A.MXSymbolListOutputs(bn, &n, &names) == 0 && names_are(names, n, bn_outs, 1),
     "BatchNorm: one visible output");
  SymbolHandle bn2 = compose("BatchNorm", "bn2", 0, NULL, NULL, 1, NULL, &data);
  static const char *const bn2_aux[] = {"bn2_moving_mean", "bn2_moving_var"};
  ok(bn2 && A.MXSymbolListAuxiliaryStates(bn2, &n, &names) == 0 && names_are(names, n, bn2_aux, 2),
     "unbound aux states become bn2_moving_mean, bn2_moving_var");

  /* Group. */
  SymbolHandle pair[2] = {relu, bn}, group = NULL;
  ok_call(A.MXSymbolCreateGroup(2, pair, &group), "MXSymbolCreateGroup");
  static const char *const group_outs[] = {"relu1_output", "bn_output"};
  ok(A.MXSymbolListOutputs(group, &n, &names) == 0 && names_are(names, n, group_outs, 2),
     "the group has both outputs");

  /* Copy and compose the copy: the original keeps its inputs. */
  SymbolHandle atom = NULL, copy = NULL;
  A.MXSymbolCreateAtomicSymbol(op("Activation"), 1, relu_k, relu_v, &atom);
  ok_call(A.MXSymbolCopy(atom, &copy), "MXSymbolCopy");
  SymbolHandle x = var("x");
  ok_call(A.MXSymbolCompose(copy, "act", 1, NULL, &x), "MXSymbolCompose of the copy");
  static const char *const copy_args[] = {"x"};
  ok(A.MXSymbolListArguments(copy, &n, &names) == 0 && names_are(names, n, copy_args, 1),
     "the copy's argument is x");

  /* A graph stacked on itself through a copy (Python's net(x=net)): the
   * copy's nodes are new, so the result reads the original's, over one x. */
  SymbolHandle net = compose("Activation", "stack", 1, relu_k, relu_v, 1, NULL, &x), net2 = NULL;
  ok(net && A.MXSymbolCopy(net, &net2) == 0, "MXSymbolCopy of a composed graph");
  const char *x_key[] = {"x"};
  ok_call(net2 ? A.MXSymbolCompose(net2, NULL, 1, x_key, &net) : -1,
          "MXSymbolCompose of that copy with the original as its x");
  const char *stack_json = NULL;
  ok(net2 && A.MXSymbolListArguments(net2, &n, &names) == 0 && names_are(names, n, copy_args, 1) &&
         A.MXSymbolSaveToJSON(net2, &stack_json) == 0 && count_of(stack_json, "\"Activation\"") == 2,
     "the stack has one argument, x, and two Activation nodes");
  char *stack_copy = stack_json ? strdup(stack_json) : NULL;
  SymbolHandle stack_loaded = NULL;
  ok(stack_copy && A.MXSymbolCreateFromJSON(stack_copy, &stack_loaded) == 0 &&
         A.MXSymbolListArguments(stack_loaded, &n, &names) == 0 && names_are(names, n, copy_args, 1),
     "its JSON loads back");
  free(stack_copy);
  /* Composed with itself, a symbol would be its own input: a cycle. */
  SymbolHandle self = NULL;
  A.MXSymbolCreateAtomicSymbol(op("Activation"), 1, relu_k, relu_v, &self);
  if (strict)
    FAILS("MXSymbolCompose of a symbol with itself", A.MXSymbolCompose(self, "self", 1, NULL, &self));
  else
    skip("MXNet 1.9.1 accepts it and makes a cycle", "MXSymbolCompose of a symbol with itself");

  /* Lists live in thread buffers, not in the symbol. */
  SymbolHandle tmp = fc_symbol();
  A.MXSymbolListArguments(tmp, &n, &names);
  A.MXSymbolFree(tmp);
  ok(names_are(names, n, fc_args, 3), "a returned name list outlives its symbol");

  /* JSON. */
  const char *json = NULL;
  ok_call(A.MXSymbolSaveToJSON(relu, &json), "MXSymbolSaveToJSON");
  ok(json && strstr(json, "\"nodes\"") && strstr(json, "\"fc1\"") && strstr(json, "\"relu1\""),
     "the JSON has nodes fc1 and relu1");
  char *json_copy = json ? strdup(json) : NULL;
  SymbolHandle loaded = NULL;
  ok_call(A.MXSymbolCreateFromJSON(json_copy ? json_copy : "", &loaded), "MXSymbolCreateFromJSON");
  ok(loaded && A.MXSymbolListArguments(loaded, &n, &names) == 0 && names_are(names, n, fc_args, 3),
     "the loaded symbol has the same arguments");
  ok(loaded && A.MXSymbolListOutputs(loaded, &n, &names) == 0 && names_are(names, n, relu_outs, 1),
     "and the same outputs");
  const char *json2 = NULL;
  ok(loaded && A.MXSymbolSaveToJSON(loaded, &json2) == 0 && json2 && json_copy && strcmp(json2, json_copy) == 0,
     "saving it again gives the same JSON");
  free(json_copy);

  /* Shape inference. */
  struct shapes r;
  const char *keys[] = {"data"};
  uint32_t ind[2] = {0, 2};
  int dshape[2] = {8, 5};
  ok_call(infer(relu, 1, keys, ind, dshape, &r), "MXSymbolInferShapeEx with data (8,5)");
  int wshape[2] = {4, 5}, bshape[1] = {4}, oshape[2] = {8, 4};
  ok(r.nin == 3 && r.nout == 1 && r.naux == 0 && r.complete == 1, "3 arguments, 1 output, complete");
  ok(r.nin == 3 && shape_is(r.in_ndim[0], r.in[0], 2, dshape) && shape_is(r.in_ndim[1], r.in[1], 2, wshape) &&
         shape_is(r.in_ndim[2], r.in[2], 1, bshape),
     "argument shapes (8,5) (4,5) (4,)");
  ok(r.nout == 1 && shape_is(r.out_ndim[0], r.out[0], 2, oshape), "output shape (8,4)");
  ok_call(infer(relu, 1, NULL, ind, dshape, &r), "MXSymbolInferShapeEx positionally");
  ok(r.nin == 3 && r.complete == 1 && shape_is(r.in_ndim[1], r.in[1], 2, wshape), "gives the same shapes");
  ok_call(infer(relu, 0, NULL, ind, dshape, &r), "MXSymbolInferShapeEx with nothing known");
  ok(r.complete == 0 && r.nin == 3 && r.in_ndim[0] == 0 && r.out_ndim[0] == 0,
     "is incomplete; unknown shapes have ndim 0");
  int zero_rows[2] = {0, 5}, zero_out[2] = {0, 4};
  ok_call(infer(relu, 1, keys, ind, zero_rows, &r), "MXSymbolInferShapeEx with data (0,5)");
  ok(r.complete == 0 && r.nout == 1 && shape_is(r.out_ndim[0], r.out[0], 2, zero_out) &&
         shape_is(r.in_ndim[1], r.in[1], 2, wshape),
     "a 0 dimension is unknown (legacy shapes): incomplete, output (0,4), weight (4,5)");
  int bnshape[4] = {2, 3, 4, 4}, cshape[1] = {3};
  uint32_t ind4[2] = {0, 4};
  ok_call(infer(bn2, 1, keys, ind4, bnshape, &r), "MXSymbolInferShapeEx of BatchNorm");
  ok(r.naux == 2 && r.complete == 1 && shape_is(r.aux_ndim[0], r.aux[0], 1, cshape) &&
         shape_is(r.aux_ndim[1], r.aux[1], 1, cshape),
     "aux state shapes (3,)");

  /* A variable's __shape__ is read as MXNet reads a TShape, where no whole
   * shape is given for it; text that is no shape fails the inference. */
  int two_three[2] = {2, 3}, five[1] = {5}, seven_three[2] = {7, 3};
  ok(infer_shape_attr("(2L, 3L)", NULL, 0, &r) == 0 && r.nin == 1 && shape_is(r.in_ndim[0], r.in[0], 2, two_three),
     "__shape__ (2L, 3L) is (2,3)");
  ok(infer_shape_attr(" 5", NULL, 0, &r) == 0 && r.nin == 1 && shape_is(r.in_ndim[0], r.in[0], 1, five),
     "__shape__ 5 is (5,)");
  ok(infer_shape_attr("[7, 3] and more", two_three, 2, &r) == 0 && r.nin == 1 &&
         shape_is(r.in_ndim[0], r.in[0], 2, two_three),
     "a whole shape given wins over __shape__");
  int partial[2] = {0, 3};
  ok(infer_shape_attr("[7, 3] and more", partial, 2, &r) == 0 && r.nin == 1 &&
         shape_is(r.in_ndim[0], r.in[0], 2, seven_three),
     "__shape__ [7, 3] wins over a partial (0,3) given");
  FAILS("MXSymbolInferShapeEx with __shape__ banana", infer_shape_attr("banana", NULL, 0, &r));
  FAILS("MXSymbolInferShapeEx with __shape__ (1e11, 1e11)", infer_shape_attr("(1e11, 1e11)", NULL, 0, &r));
  FAILS("MXSymbolInferShapeEx with __shape__ (99999999999999999999,)",
        infer_shape_attr("(99999999999999999999,)", NULL, 0, &r));
  FAILS("MXSymbolInferShapeEx with __shape__ (-2,3)", infer_shape_attr("(-2,3)", NULL, 0, &r));
  FAILS("MXSymbolInferShapeEx with __shape__ (2,3 and a partial shape given",
        infer_shape_attr("(2,3", partial, 2, &r));
  ok(infer_shape_attr("banana", two_three, 2, &r) == 0, "__shape__ banana is not read when (2,3) is given");
  if (strict)
    FAILS("MXSymbolInferShapeEx with __shape__ (100000000000, 100000000000)",
          infer_shape_attr("(100000000000, 100000000000)", NULL, 0, &r));
  else
    skip("MXNet 1.9.1 returns the dimensions cut to 32 bits",
         "MXSymbolInferShapeEx with __shape__ (100000000000, 100000000000)");
  const char *big_k[] = {"shape"}, *big_v[] = {"(3000000000,)"};
  SymbolHandle big = compose("_zeros", "big", 1, big_k, big_v, 0, NULL, NULL);
  FAILS("MXSymbolInferShapeEx of _zeros((3000000000,))", big ? infer(big, 0, NULL, ind, dshape, &r) : 0);
  if (big) A.MXSymbolFree(big);

  /* Frontend attribute keys (lr_mult, ...) are stored as __key__. */
  SymbolHandle attr = NULL;
  const char *ak[] = {"num_hidden", "lr_mult"}, *av[] = {"4", "2"};
  ok_call(A.MXSymbolCreateAtomicSymbol(op("FullyConnected"), 2, ak, av, &attr),
          "MXSymbolCreateAtomicSymbol with lr_mult");
  const char *attr_json = NULL;
  ok(attr && A.MXSymbolCompose(attr, "fca", 1, NULL, &x) == 0 && A.MXSymbolSaveToJSON(attr, &attr_json) == 0 &&
         attr_json && strstr(attr_json, "__lr_mult__"),
     "it is saved as __lr_mult__");
  const char *dk[] = {"num_hidden", "weight_lr_mult"};
  SymbolHandle depr = NULL;
  FAILS("MXSymbolCreateAtomicSymbol with weight_lr_mult (deprecated)",
        A.MXSymbolCreateAtomicSymbol(op("FullyConnected"), 2, dk, av, &depr));
  if (attr) A.MXSymbolFree(attr);

  /* Bad inputs both libraries reject. */
  const char *nokey[] = {"mxcts_no_such_argument"};
  FAILS("MXSymbolInferShapeEx with an unknown argument name", infer(relu, 1, nokey, ind, dshape, &r));
  const char *two_keys[] = {"data", "fc1_weight"};
  uint32_t ind2[3] = {0, 2, 4};
  int contradict[4] = {8, 5, 4, 6};
  FAILS("MXSymbolInferShapeEx with data (8,5) and fc1_weight (4,6)", infer(relu, 2, two_keys, ind2, contradict, &r));
  SymbolHandle bad = NULL;
  FAILS("MXSymbolCreateFromJSON of text that is not JSON", A.MXSymbolCreateFromJSON("{not json", &bad));
  const char *hid_k[] = {"num_hidden"}, *hid_v[] = {"four"};
  FAILS("MXSymbolCreateAtomicSymbol FullyConnected(num_hidden=four)",
        A.MXSymbolCreateAtomicSymbol(op("FullyConnected"), 1, hid_k, hid_v, &bad));
  const char *unk_k[] = {"mxcts_unknown_key"}, *unk_v[] = {"1"};
  FAILS("MXSymbolCreateAtomicSymbol Activation with an unknown parameter",
        A.MXSymbolCreateAtomicSymbol(op("Activation"), 1, unk_k, unk_v, &bad));
  SymbolHandle atom2 = NULL;
  A.MXSymbolCreateAtomicSymbol(op("Activation"), 1, relu_k, relu_v, &atom2);
  const char *kw[] = {"mxcts_no_such_input"};
  FAILS("MXSymbolCompose with an unknown keyword", A.MXSymbolCompose(atom2, "a2", 1, kw, &x));
  if (strict)
    FAILS("MXSymbolCompose of a variable", A.MXSymbolCompose(x, "xx", 1, NULL, &data));
  else
    skip("MXNet 1.9.1 accepts it and gives the variable inputs", "MXSymbolCompose of a variable");
  SymbolHandle three[3] = {x, x, x};
  SymbolHandle atom3 = NULL;
  A.MXSymbolCreateAtomicSymbol(op("Activation"), 1, relu_k, relu_v, &atom3);
  FAILS("MXSymbolCompose of Activation with 3 arguments", A.MXSymbolCompose(atom3, "a3", 3, NULL, three));

  GUARD("MXSymbolCreateVariable(NULL name)", A.MXSymbolCreateVariable(NULL, &bad));
  GUARD("MXSymbolCreateFromJSON(NULL)", A.MXSymbolCreateFromJSON(NULL, &bad));
  GUARD("MXSymbolCreateAtomicSymbol(NULL creator)", A.MXSymbolCreateAtomicSymbol(NULL, 0, NULL, NULL, &bad));
  GUARD("MXSymbolCreateAtomicSymbol(NULL keys, 1 param)",
        A.MXSymbolCreateAtomicSymbol(op("Activation"), 1, NULL, relu_v, &bad));
  GUARD("MXSymbolListArguments(NULL)", A.MXSymbolListArguments(NULL, &n, &names));
  GUARD("MXSymbolListOutputs(NULL out)", A.MXSymbolListOutputs(fc, NULL, &names));
  GUARD("MXSymbolSaveToJSON(NULL)", A.MXSymbolSaveToJSON(NULL, &json));
  GUARD("MXSymbolCompose(NULL argument)", A.MXSymbolCompose(atom2, "a2", 1, NULL, &bad));
  GUARD("MXSymbolCreateGroup(NULL entry)", A.MXSymbolCreateGroup(1, &bad, &group));
  GUARD("MXSymbolInferShapeEx(NULL symbol)", infer(NULL, 1, keys, ind, dshape, &r));
  GUARD("MXSymbolInferShapeEx(NULL shape data)", infer(relu, 1, keys, ind, NULL, &r));
  GUARD("MXSymbolInferShapeEx(negative dimension)", infer(relu, 1, keys, ind, (int[]){8, -5}, &r));
  NDArrayHandle arr = make1(2, NULL);
  GUARD("MXSymbolListArguments(an NDArray handle)", A.MXSymbolListArguments(arr, &n, &names));
  A.MXNDArrayFree(arr);

  SymbolHandle all[] = {fc, relu, data, gamma, beta, mean, varn, bn, bn2, group, atom, copy, x, loaded, atom2, atom3,
                        net, net2, stack_loaded, self};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) A.MXSymbolFree(all[i]);
  GUARD("MXSymbolListArguments(freed symbol)", A.MXSymbolListArguments(fc, &n, &names));
  GUARD("MXSymbolFree(freed symbol) (double free)", A.MXSymbolFree(fc));
}

/* --------------------------------------------------------------- executor */

static void test_executor(void) {
  diag("--- executor");
  SymbolHandle fc = fc_symbol();
  NDArrayHandle x = make2(8, 5, X), w = make2(4, 5, W), b = make1(4, B);
  NDArrayHandle gw = make2(4, 5, NULL), gb = make1(4, NULL);
  NDArrayHandle args[3] = {x, w, b}, grads[3] = {NULL, gw, gb};
  uint32_t reqs[3] = {0, 1, 1};
  ExecutorHandle ex = NULL;
  ok_call(A.MXExecutorBindEX(fc, 1, 0, 0, NULL, NULL, NULL, 3, args, grads, reqs, 0, NULL, NULL, &ex),
          "MXExecutorBindEX of fc1 with gradients for weight and bias");
  ok_call(A.MXExecutorForward(ex, 1), "MXExecutorForward");
  uint32_t nout = 0;
  NDArrayHandle *outs = NULL;
  ok_call(A.MXExecutorOutputs(ex, &nout, &outs), "MXExecutorOutputs");
  NDArrayHandle out = nout == 1 && outs ? outs[0] : NULL;
  float y[32], yref[32];
  fc_ref(X, W, B, 8, 5, 4, yref);
  int oshape[2] = {8, 4};
  ok(out && has_shape(out, 2, oshape) && read_array(out, y, 32) == 0 && close_to(y, yref, 32, 1e-5),
     "the output is (8,4) and matches the reference");
  NDArrayHandle out2 = NULL;
  ok(A.MXExecutorOutputs(ex, &nout, &outs) == 0 && nout == 1 && (out2 = outs[0]) != NULL && out2 != out,
     "each MXExecutorOutputs call returns new handles");
  float y2[32];
  ok(out2 && read_array(out2, y2, 32) == 0 && close_to(y2, yref, 32, 1e-5), "to the same array");

  float ones[32];
  for (int i = 0; i < 32; i++) ones[i] = 1;
  NDArrayHandle head = make2(8, 4, ones);
  ok_call(A.MXExecutorBackwardEx(ex, 1, &head, 1), "MXExecutorBackwardEx with a head gradient of ones");
  float gwv[20], gbv[4], gwref[20], gbref[4] = {8, 8, 8, 8};
  for (int j = 0; j < 4; j++)
    for (int k = 0; k < 5; k++) {
      double s = 0;
      for (int i = 0; i < 8; i++) s += X[i * 5 + k];
      gwref[j * 5 + k] = (float)s;
    }
  ok(read_array(gw, gwv, 20) == 0 && close_to(gwv, gwref, 20, 1e-5), "the weight gradient is sum over the batch of x");
  ok(read_array(gb, gbv, 4) == 0 && close_to(gbv, gbref, 4, 1e-6), "the bias gradient is the batch size");
  FAILS("MXExecutorBackwardEx without head gradients for a non-loss output",
        A.MXExecutorBackwardEx(ex, 0, NULL, 1));
  A.MXNDArrayFree(out);
  A.MXNDArrayFree(out2);
  ok_call(A.MXExecutorFree(ex), "MXExecutorFree");
  ok(read_array(gw, gwv, 20) == 0 && close_to(gwv, gwref, 20, 1e-5), "bound arrays outlive their executor");

  /* grad_req add accumulates. */
  reqs[1] = reqs[2] = 3;
  ExecutorHandle add = NULL;
  ok_call(A.MXExecutorBindEX(fc, 1, 0, 0, NULL, NULL, NULL, 3, args, grads, reqs, 0, NULL, NULL, &add),
          "MXExecutorBindEX with grad_req add");
  A.MXExecutorForward(add, 1);
  A.MXExecutorBackwardEx(add, 1, &head, 1);
  for (int i = 0; i < 20; i++) gwref[i] *= 2;
  ok(read_array(gw, gwv, 20) == 0 && close_to(gwv, gwref, 20, 1e-5), "a second backward adds to the gradient");
  A.MXExecutorFree(add);

  /* Without gradients backward does nothing; MXNet allows it. */
  ExecutorHandle inf = NULL;
  ok_call(A.MXExecutorBindEX(fc, 1, 0, 0, NULL, NULL, NULL, 3, args, (NDArrayHandle[3]){NULL, NULL, NULL},
                             (uint32_t[3]){0, 0, 0}, 0, NULL, NULL, &inf),
          "MXExecutorBindEX without gradients");
  ok_call(A.MXExecutorForward(inf, 0), "MXExecutorForward for inference");
  ok_call(A.MXExecutorBackwardEx(inf, 0, NULL, 0), "MXExecutorBackwardEx of an executor without gradients");
  A.MXExecutorFree(inf);

  /* A loss output needs no head gradient. */
  SymbolHandle label = var("label");
  SymbolHandle sm_in[2] = {fc, label};
  SymbolHandle sm = compose("SoftmaxOutput", "sm", 0, NULL, NULL, 2, NULL, sm_in);
  float lv[8] = {0, 1, 2, 3, 0, 1, 2, 3};
  NDArrayHandle lab = make1(8, lv);
  NDArrayHandle sargs[4] = {x, w, b, lab}, sgrads[4] = {NULL, gw, gb, NULL};
  uint32_t sreqs[4] = {0, 1, 1, 0};
  ExecutorHandle sx = NULL;
  ok_call(A.MXExecutorBindEX(sm, 1, 0, 0, NULL, NULL, NULL, 4, sargs, sgrads, sreqs, 0, NULL, NULL, &sx),
          "MXExecutorBindEX of SoftmaxOutput(fc1, label)");
  ok_call(A.MXExecutorForward(sx, 1), "forward");
  ok_call(A.MXExecutorBackwardEx(sx, 0, NULL, 1), "MXExecutorBackwardEx of a loss without head gradients");
  float p[32];
  ok(A.MXExecutorOutputs(sx, &nout, &outs) == 0 && nout == 1 && read_array(outs[0], p, 32) == 0,
     "the softmax output reads back");
  if (nout == 1 && outs) A.MXNDArrayFree(outs[0]);
  /* d loss / d bias = sum over the batch of (softmax - one hot). */
  float gbs[4] = {0};
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++) gbs[j] += p[i * 4 + j] - (j == (int)lv[i] ? 1.0f : 0.0f);
  ok(read_array(gb, gbv, 4) == 0 && close_to(gbv, gbs, 4, 1e-4), "the bias gradient is sum(softmax - onehot)");

  /* Bad binds both libraries reject. */
  ExecutorHandle bad = NULL;
  FAILS("MXExecutorBindEX with 2 of 3 arguments",
        A.MXExecutorBindEX(fc, 1, 0, 0, NULL, NULL, NULL, 2, args, grads, reqs, 0, NULL, NULL, &bad));
  NDArrayHandle wrong_w = make2(4, 6, NULL);
  NDArrayHandle wargs[3] = {x, wrong_w, b};
  FAILS("MXExecutorBindEX with a (4,6) weight for (8,5) data",
        A.MXExecutorBindEX(fc, 1, 0, 0, NULL, NULL, NULL, 3, wargs, grads, reqs, 0, NULL, NULL, &bad));

  GUARD("MXExecutorBindEX(NULL symbol)",
        A.MXExecutorBindEX(NULL, 1, 0, 0, NULL, NULL, NULL, 3, args, grads, reqs, 0, NULL, NULL, &bad));
  GUARD("MXExecutorBindEX(NULL argument array)",
        A.MXExecutorBindEX(fc, 1, 0, 0, NULL, NULL, NULL, 3, (NDArrayHandle[3]){x, NULL, b}, grads, reqs, 0,
                           NULL, NULL, &bad));
  GUARD("MXExecutorBindEX(grad_req 7)",
        A.MXExecutorBindEX(fc, 1, 0, 0, NULL, NULL, NULL, 3, args, grads, (uint32_t[3]){0, 7, 1}, 0, NULL, NULL,
                           &bad));
  GUARD("MXExecutorBindEX(NULL out)",
        A.MXExecutorBindEX(fc, 1, 0, 0, NULL, NULL, NULL, 3, args, grads, reqs, 0, NULL, NULL, NULL));
  GUARD("MXExecutorForward(NULL)", A.MXExecutorForward(NULL, 0));
  GUARD("MXExecutorBackwardEx(NULL head gradient)",
        A.MXExecutorBackwardEx(sx, 1, (NDArrayHandle[1]){NULL}, 1));
  GUARD("MXExecutorOutputs(NULL out)", A.MXExecutorOutputs(sx, NULL, NULL));
  GUARD("MXExecutorForward(a symbol handle)", A.MXExecutorForward(fc, 0));
  A.MXExecutorFree(sx);
  GUARD("MXExecutorForward(freed executor)", A.MXExecutorForward(sx, 0));
  GUARD("MXExecutorFree(freed executor) (double free)", A.MXExecutorFree(sx));

  NDArrayHandle arrays[] = {x, w, b, gw, gb, head, lab, wrong_w};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) A.MXNDArrayFree(arrays[i]);
  A.MXSymbolFree(fc);
  A.MXSymbolFree(label);
  A.MXSymbolFree(sm);
}

/* --------------------------------------------------------------- autograd */

static void test_autograd(void) {
  diag("--- autograd");
  float xv[3] = {1, 2, 3}, got[3];
  NDArrayHandle x = make1(3, xv), gx = make1(3, NULL);
  uint32_t req = 1;
  ok_call(A.MXAutogradMarkVariables(1, &x, &req, &gx), "MXAutogradMarkVariables");
  int prev = -1;
  ok(A.MXAutogradSetIsRecording(1, &prev) == 0 && prev == 0, "MXAutogradSetIsRecording(1): was 0");
  ok(A.MXAutogradSetIsTraining(1, &prev) == 0 && prev == 0, "MXAutogradSetIsTraining(1): was 0");
  bool cur = false;
  ok(A.MXAutogradIsRecording(&cur) == 0 && cur, "MXAutogradIsRecording: true");
  cur = false;
  ok(A.MXAutogradIsTraining(&cur) == 0 && cur, "MXAutogradIsTraining: true");
  NDArrayHandle xx[2] = {x, x}, y[4] = {0};
  ok(invoke("elemwise_mul", 2, xx, 0, NULL, NULL, y) == 1, "y = x * x recorded");
  ok(A.MXAutogradSetIsRecording(0, &prev) == 0 && prev == 1, "MXAutogradSetIsRecording(0): was 1");
  ok_call(A.MXAutogradBackwardEx(1, y, NULL, 0, NULL, 1, 0, 1, NULL, NULL), "MXAutogradBackwardEx (retain_graph)");
  float want[3] = {2, 4, 6};
  ok(read_array(gx, got, 3) == 0 && close_to(got, want, 3, 1e-6), "dy/dx = 2x");
  float half[3] = {0.5f, 0.5f, 0.5f};
  NDArrayHandle og = make1(3, half);
  ok_call(A.MXAutogradBackwardEx(1, y, &og, 0, NULL, 0, 0, 1, NULL, NULL), "MXAutogradBackwardEx with a head gradient");
  ok(read_array(gx, got, 3) == 0 && close_to(got, xv, 3, 1e-6), "0.5 * 2x = x (grad_req write)");
  FAILS("MXAutogradBackwardEx of an array that was not recorded",
        A.MXAutogradBackwardEx(1, &og, NULL, 0, NULL, 0, 0, 1, NULL, NULL));
  ok(A.MXAutogradSetIsTraining(0, &prev) == 0 && prev == 1, "MXAutogradSetIsTraining(0): was 1");

  GUARD("MXAutogradMarkVariables(NULL arrays)", A.MXAutogradMarkVariables(1, NULL, &req, &gx));
  GUARD("MXAutogradMarkVariables(NULL gradient)", A.MXAutogradMarkVariables(1, &x, &req, (NDArrayHandle[1]){NULL}));
  GUARD("MXAutogradBackwardEx(NULL output)", A.MXAutogradBackwardEx(1, (NDArrayHandle[1]){NULL}, NULL, 0, NULL, 0, 0, 1, NULL, NULL));
  GUARD("MXAutogradIsRecording(NULL)", A.MXAutogradIsRecording(NULL));
  A.MXNDArrayFree(y[0]);
  A.MXNDArrayFree(og);
  A.MXNDArrayFree(x);
  A.MXNDArrayFree(gx);
}

/* ------------------------------------------------------------- cached ops */

/* Each call without given outputs returns new arrays: a second call on other
 * inputs leaves the first call's output as it was. */
static void cached_op_outputs_are_new(CachedOpHandle cop, const char *how) {
  float x2[40], first[32], again[32], second[32], yref[32], y2ref[32];
  for (int i = 0; i < 40; i++) x2[i] = X[i] + 1;
  fc_ref(X, W, B, 8, 5, 4, yref);
  fc_ref(x2, W, B, 8, 5, 4, y2ref);
  NDArrayHandle x = make2(8, 5, X), xb = make2(8, 5, x2), w = make2(4, 5, W), b = make1(4, B);
  NDArrayHandle in1[3] = {x, w, b}, in2[3] = {xb, w, b};
  int n1 = 0, n2 = 0;
  NDArrayHandle *o = NULL, *o2 = NULL, out1 = NULL, out2 = NULL;
  const int *stypes = NULL;
  if (A.MXInvokeCachedOpEx(cop, 3, in1, &n1, &o, &stypes) == 0 && n1 == 1) out1 = o[0];
  if (out1 && A.MXInvokeCachedOpEx(cop, 3, in2, &n2, &o2, &stypes) == 0 && n2 == 1) out2 = o2[0];
  ok(out1 && out2 && out1 != out2 && read_array(out1, first, 32) == 0 && read_array(out2, second, 32) == 0 &&
         close_to(first, yref, 32, 1e-5) && close_to(second, y2ref, 32, 1e-5),
     "a cached op (%s) called twice returns a new output each time, the first unchanged", how);
  /* and the first output stays its own once the second is freed */
  if (out2) A.MXNDArrayFree(out2);
  ok(out1 && read_array(out1, again, 32) == 0 && close_to(again, yref, 32, 1e-5),
     "the first output (%s) outlives the second", how);
  if (out1) A.MXNDArrayFree(out1);
  A.MXNDArrayFree(x);
  A.MXNDArrayFree(xb);
  A.MXNDArrayFree(w);
  A.MXNDArrayFree(b);
}

static void test_cached_op(void) {
  diag("--- cached ops");
  SymbolHandle fc = fc_symbol();
  CachedOpHandle cop = NULL;
  ok_call(A.MXCreateCachedOpEx(fc, 0, NULL, NULL, &cop), "MXCreateCachedOpEx without flags");
  NDArrayHandle x = make2(8, 5, X), w = make2(4, 5, W), b = make1(4, B);
  NDArrayHandle in[3] = {x, w, b};
  int nout = 0;
  NDArrayHandle *outs = NULL;
  const int *stypes = NULL;
  ok_call(A.MXInvokeCachedOpEx(cop, 3, in, &nout, &outs, &stypes), "MXInvokeCachedOpEx creating the output");
  float y[32], yref[32];
  fc_ref(X, W, B, 8, 5, 4, yref);
  NDArrayHandle out = nout == 1 && outs ? outs[0] : NULL;
  ok(out && stypes && stypes[0] == 0 && read_array(out, y, 32) == 0 && close_to(y, yref, 32, 1e-5),
     "one dense output matching the reference");
  NDArrayHandle given = make2(8, 4, NULL);
  NDArrayHandle *given_p = &given;
  nout = 1;
  ok_call(A.MXInvokeCachedOpEx(cop, 3, in, &nout, &given_p, &stypes), "MXInvokeCachedOpEx into a given array");
  ok(read_array(given, y, 32) == 0 && close_to(y, yref, 32, 1e-5), "the given array holds the output");
  nout = 0;
  outs = NULL;
  FAILS("MXInvokeCachedOpEx with 2 of 3 inputs", A.MXInvokeCachedOpEx(cop, 2, in, &nout, &outs, &stypes));
  cached_op_outputs_are_new(cop, "without flags");

  /* Under autograd a cached op call is differentiable. */
  NDArrayHandle gw = make2(4, 5, NULL);
  uint32_t req = 1;
  A.MXAutogradMarkVariables(1, &w, &req, &gw);
  int prev;
  A.MXAutogradSetIsRecording(1, &prev);
  nout = 0;
  outs = NULL;
  int rc = A.MXInvokeCachedOpEx(cop, 3, in, &nout, &outs, &stypes);
  A.MXAutogradSetIsRecording(0, &prev);
  ok_call(rc, "MXInvokeCachedOpEx while recording");
  NDArrayHandle rec = rc == 0 && nout == 1 ? outs[0] : NULL;
  float ones[32];
  for (int i = 0; i < 32; i++) ones[i] = 1;
  NDArrayHandle head = make2(8, 4, ones);
  ok_call(A.MXAutogradBackwardEx(1, &rec, &head, 0, NULL, 0, 0, 1, NULL, NULL), "backward through the cached op");
  float gwv[20], gwref[20];
  for (int j = 0; j < 4; j++)
    for (int k = 0; k < 5; k++) {
      double s = 0;
      for (int i = 0; i < 8; i++) s += X[i * 5 + k];
      gwref[j * 5 + k] = (float)s;
    }
  ok(read_array(gw, gwv, 20) == 0 && close_to(gwv, gwref, 20, 1e-5), "the weight gradient matches");

  CachedOpHandle flagged = NULL;
  const char *fk[] = {"static_alloc", "static_shape"}, *fv[] = {"true", "true"};
  ok_call(A.MXCreateCachedOpEx(fc, 2, fk, fv, &flagged), "MXCreateCachedOpEx(static_alloc, static_shape)");
  nout = 0;
  outs = NULL;
  ok(A.MXInvokeCachedOpEx(flagged, 3, in, &nout, &outs, &stypes) == 0 && nout == 1 && read_array(outs[0], y, 32) == 0 &&
         close_to(y, yref, 32, 1e-5),
     "and it computes the same");
  if (nout == 1 && outs) A.MXNDArrayFree(outs[0]);
  cached_op_outputs_are_new(flagged, "with static_alloc");
  A.MXFreeCachedOp(flagged);
  CachedOpHandle bad = NULL;
  const char *bk[] = {"mxcts_no_such_flag"}, *bv[] = {"1"};
  FAILS("MXCreateCachedOpEx with an unknown flag", A.MXCreateCachedOpEx(fc, 1, bk, bv, &bad));

  GUARD("MXCreateCachedOpEx(NULL symbol)", A.MXCreateCachedOpEx(NULL, 0, NULL, NULL, &bad));
  GUARD("MXInvokeCachedOpEx(NULL handle)", A.MXInvokeCachedOpEx(NULL, 3, in, &nout, &outs, &stypes));
  GUARD("MXInvokeCachedOpEx(a NULL input)",
        A.MXInvokeCachedOpEx(cop, 3, (NDArrayHandle[3]){x, NULL, b}, &nout, &outs, &stypes));
  ok_call(A.MXFreeCachedOp(cop), "MXFreeCachedOp");
  GUARD("MXInvokeCachedOpEx(freed handle)", A.MXInvokeCachedOpEx(cop, 3, in, &nout, &outs, &stypes));
  GUARD("MXFreeCachedOp(freed handle) (double free)", A.MXFreeCachedOp(cop));

  NDArrayHandle arrays[] = {x, w, b, out, given, gw, rec, head};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    if (arrays[i]) A.MXNDArrayFree(arrays[i]);
  A.MXSymbolFree(fc);
}

/* --------------------------------------------------------------- profiler */

static char tmpdir[256];

static void test_profiler(void) {
  diag("--- profiler");
  char file[512];
  snprintf(file, sizeof file, "%s/profile.json", tmpdir);
  const char *keys[] = {"filename", "profile_all", "aggregate_stats", "continuous_dump"};
  const char *vals[] = {file, "true", "true", "false"};
  ok_call(A.MXSetProfilerConfig(4, keys, vals), "MXSetProfilerConfig(profile_all, aggregate_stats)");
  ok_call(A.MXSetProfilerState(1), "MXSetProfilerState(1)");
  float av[6] = {1, 2, 3, 4, 5, 6};
  NDArrayHandle a = make2(2, 3, av), out[4] = {0};
  NDArrayHandle in[2] = {a, a};
  for (int i = 0; i < 3; i++) {
    if (invoke("elemwise_add", 2, in, 0, NULL, NULL, out) == 1) A.MXNDArrayFree(out[0]);
  }
  /* Wait first: an op that runs while paused is not recorded. */
  ok_call(A.MXNDArrayWaitAll(), "MXNDArrayWaitAll while profiling");
  ok_call(A.MXProfilePause(1), "MXProfilePause(1)");
  ok_call(A.MXProfilePause(0), "MXProfilePause(0)");
  ok_call(A.MXSetProfilerState(0), "MXSetProfilerState(0)");
  ok_call(A.MXDumpProfile(1), "MXDumpProfile(1)");
  FILE *f = fopen(file, "r");
  char *text = NULL;
  if (f) {
    text = calloc(1 << 20, 1);
    if (text && fread(text, 1, (1 << 20) - 1, f) == 0) text[0] = 0;
    fclose(f);
  }
  ok(text && strstr(text, "traceEvents") && strstr(text, "elemwise_add"),
     "the trace file has traceEvents with elemwise_add");
  free(text);
  const char *stats = NULL;
  ok_call(A.MXAggregateProfileStatsPrint(&stats, 0), "MXAggregateProfileStatsPrint");
  ok(stats && strstr(stats, "elemwise_add"), "the statistics name elemwise_add");
  const char *json = NULL;
  ok_call(A.MXAggregateProfileStatsPrintEx(&json, 1, 1, 0, 0), "MXAggregateProfileStatsPrintEx as JSON, reset");
  ok(json && strchr(json, '{') && strstr(json, "elemwise_add"), "the JSON statistics name elemwise_add");

  const char *bad_k[] = {"mxcts_no_such_key"}, *bad_v[] = {"1"};
  FAILS("MXSetProfilerConfig with an unknown key", A.MXSetProfilerConfig(1, bad_k, bad_v));
  const char *bool_k[] = {"profile_all"}, *bool_v[] = {"maybe"};
  FAILS("MXSetProfilerConfig(profile_all=maybe)", A.MXSetProfilerConfig(1, bool_k, bool_v));
  FAILS("MXDumpProfile after the final dump", A.MXDumpProfile(1));
  GUARD("MXSetProfilerConfig(NULL key)", A.MXSetProfilerConfig(1, (const char *const[1]){NULL}, bad_v));
  GUARD("MXSetProfilerState(2)", A.MXSetProfilerState(2));
  GUARD("MXAggregateProfileStatsPrint(NULL)", A.MXAggregateProfileStatsPrint(NULL, 0));
  GUARD("MXAggregateProfileStatsPrintEx(format 5)", A.MXAggregateProfileStatsPrintEx(&stats, 0, 5, 0, 0));
  /* Back to the defaults, so nothing is written at exit. */
  const char *off_k[] = {"filename", "aggregate_stats"}, *off_v[] = {file, "false"};
  A.MXSetProfilerConfig(2, off_k, off_v);
  A.MXNDArrayFree(a);
  unlink(file);
}

/* ------------------------------------------------------------ bulk, shutdown */

static void test_bulk(void) {
  diag("--- engine bulking");
  int prev = 0;
  A.MXEngineSetBulkSize(4, &prev);
  float av[6] = {1, 2, 3, 4, 5, 6}, got[6], want[6];
  NDArrayHandle acc = make2(2, 3, av);
  /* acc = acc + acc, 6 times, bulked. */
  int good = 1;
  for (int k = 0; k < 6 && good; k++) {
    NDArrayHandle in[2] = {acc, acc}, out[4] = {0};
    good = invoke("elemwise_add", 2, in, 0, NULL, NULL, out) == 1;
    A.MXNDArrayFree(acc);
    acc = out[0];
  }
  int old = -1;
  A.MXEngineSetBulkSize(prev, &old);
  for (int i = 0; i < 6; i++) want[i] = av[i] * 64;
  ok(good && old == (naive_engine() ? 0 : 4) && read_array(acc, got, 6) == 0 && close_to(got, want, 6, 0),
     "six bulked additions give 64 a");
  A.MXNDArrayFree(acc);
}

struct worker {
  int id, good;
};

static void *worker_main(void *arg) {
  struct worker *w = arg;
  float v[6], got[6];
  for (int i = 0; i < 6; i++) v[i] = (float)(w->id * 10 + i);
  NDArrayHandle a = make2(2, 3, v);
  w->good = a != NULL;
  for (int k = 0; k < 50 && w->good; k++) {
    NDArrayHandle in[2] = {a, a}, out[4] = {0};
    w->good = invoke("elemwise_add", 2, in, 0, NULL, NULL, out) == 1 && read_array(out[0], got, 6) == 0;
    for (int i = 0; w->good && i < 6; i++) w->good = got[i] == 2 * v[i];
    A.MXNDArrayFree(out[0]);
    /* a failure of this thread's own */
    OpHandle h;
    char name[64];
    snprintf(name, sizeof name, "mxcts_worker_%d_%d", w->id, k);
    w->good = w->good && A.NNGetOpHandle(name, &h) == -1 && strstr(A.MXGetLastError(), name) != NULL;
  }
  A.MXNDArrayFree(a);
  return NULL;
}

static void test_threads(void) {
  diag("--- threads");
  struct worker w[4];
  pthread_t t[4];
  int started = 0;
  for (int i = 0; i < 4; i++) {
    w[i] = (struct worker){i, 0};
    if (pthread_create(&t[i], NULL, worker_main, &w[i]) == 0) started++;
  }
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
  int good = started == 4;
  for (int i = 0; i < started; i++) good = good && w[i].good;
  ok(good, "four threads invoking ops and failing calls concurrently see their own results and messages");
}

/* What MXNet's Python frontend uses beyond the functions above. */
static void test_frontend_registries(void) {
  diag("--- frontend: op info, registries");
  const char *name = NULL, *desc = NULL, *kvar = NULL, *ret = NULL;
  uint32_t nargs = 0;
  const char **names = NULL, **types = NULL, **descs = NULL;
  ok_call(A.MXSymbolGetAtomicSymbolInfo(op("FullyConnected"), &name, &desc, &nargs, &names, &types,
                                        &descs, &kvar, &ret),
          "MXSymbolGetAtomicSymbolInfo(FullyConnected)");
  int inputs_first = nargs >= 4 && names && types && strcmp(names[0], "data") == 0 &&
                     strncmp(types[0], "NDArray", 7) == 0 && strcmp(names[1], "weight") == 0 &&
                     strcmp(names[2], "bias") == 0;
  ok(inputs_first, "FullyConnected's arguments start with data, weight, bias (NDArray types)");
  ok(names && contains_name(names, nargs, "num_hidden"), "... and list num_hidden");
  ok(kvar && kvar[0] == '\0', "... with no key_var_num_args");
  A.MXSymbolGetAtomicSymbolInfo(op("Concat"), &name, &desc, &nargs, &names, &types, &descs, &kvar, &ret);
  ok(kvar && strcmp(kvar, "num_args") == 0 && nargs > 0 && strstr(types[0], "[]"),
     "Concat is variadic: one NDArray-or-Symbol[] argument, key_var_num_args num_args");

  uint32_t niters = 0;
  DataIterCreator *iters = NULL;
  ok_call(A.MXListDataIters(&niters, &iters), "MXListDataIters");
  int found = 0;
  for (uint32_t i = 0; i < niters; i++) {
    const char *iname = NULL;
    if (A.MXDataIterGetIterInfo(iters[i], &iname, &desc, &nargs, &names, &types, &descs) == 0 && iname &&
        strcmp(iname, "MNISTIter") == 0)
      found = 1;
  }
  ok(found, "MXListDataIters lists MNISTIter (%u iterators)", niters);
  int worker = -1;
  ok_call(A.MXKVStoreIsWorkerNode(&worker), "MXKVStoreIsWorkerNode");
  ok(worker == 1, "the process is a kvstore worker");
  int nglobal = -1;
  const char **global = NULL;
  ok_call(A.MXNetFuncListGlobalNames(&nglobal, &global), "MXNetFuncListGlobalNames");
  uint32_t nfun = 0;
  FunctionHandle *funs = NULL;
  ok_call(A.MXListFunctions(&nfun, &funs), "MXListFunctions");
  ok_call(A.MXSetEnv("MXCTS_CAPI_ENV", "on"), "MXSetEnv");
  const char *val = NULL;
  A.MXGetEnv("MXCTS_CAPI_ENV", &val);
  ok(val && strcmp(val, "on") == 0, "MXGetEnv reads what MXSetEnv set");
  if (strict) {
    NDArrayHandle a = make1(2, NULL), outs[4];
    arm();
    int nout = 0;
    NDArrayHandle *created = NULL;
    const int *stypes = NULL;
    expect_fail(A.MXImperativeInvokeEx(op("sin"), 1, &a, &nout, &created, 0, NULL, NULL, &stypes),
                "an op libmxref lists but does not implement (sin)");
    ok(strstr(A.MXGetLastError(), "operator sin is not implemented by libmxref") != NULL,
       "the refusal says the op is not implemented");
    (void)outs;
    A.MXNDArrayFree(a);
  } else {
    skip("libmxref only", "an op libmxref lists but does not implement fails");
  }
}

static void test_frontend_ndarray(void) {
  diag("--- frontend: views, gradients");
  const float v[6] = {0, 1, 2, 3, 4, 5};
  NDArrayHandle a = make2(3, 2, v), row = NULL, rows = NULL, flat = NULL;
  ok_call(A.MXNDArrayAt(a, 1, &row), "MXNDArrayAt(1)");
  ok_call(A.MXNDArraySlice(a, 1, 3, &rows), "MXNDArraySlice(1, 3)");
  dim_t dims[1] = {-1};
  ok_call(A.MXNDArrayReshape64(a, 1, dims, false, &flat), "MXNDArrayReshape64(-1)");
  int d2[1] = {2}, d22[2] = {2, 2}, d6[1] = {6};
  ok(has_shape(row, 1, d2) && has_shape(rows, 2, d22) && has_shape(flat, 1, d6), "the views' shapes");
  float got[4] = {0};
  read_array(rows, got, 4);
  ok(got[0] == 2 && got[3] == 5, "a slice reads the base's rows");
  const float w[2] = {10, 11};
  A.MXNDArraySyncCopyFromCPU(row, w, 2);
  float all[6] = {0};
  read_array(a, all, 6);
  ok(all[2] == 10 && all[3] == 11, "writing a view writes the base");
  NDArrayHandle det = NULL;
  ok_call(A.MXNDArrayDetach(a, &det), "MXNDArrayDetach");
  int stype = -2;
  ok_call(A.MXNDArrayGetStorageType(a, &stype), "MXNDArrayGetStorageType");
  ok(stype == 0, "dense storage (0)");
  NDArrayHandle grad = make2(3, 2, NULL), got_grad = (NDArrayHandle)1;
  uint32_t req = 1;
  A.MXNDArrayGetGrad(a, &got_grad);
  ok(got_grad == NULL, "MXNDArrayGetGrad of an unmarked array is NULL");
  A.MXAutogradMarkVariables(1, &a, &req, &grad);
  ok_call(A.MXNDArrayGetGrad(a, &got_grad), "MXNDArrayGetGrad of a marked array");
  ok(got_grad != NULL && has_shape(got_grad, 2, (int[]){3, 2}), "the gradient array has its shape");
  NDArrayHandle frees[] = {row, rows, flat, det, got_grad, grad, a};
  for (size_t i = 0; i < sizeof frees / sizeof frees[0]; i++)
    if (frees[i]) A.MXNDArrayFree(frees[i]);
}

static void test_frontend_symbol(void) {
  diag("--- frontend: symbols, simple bind");
  SymbolHandle fc = fc_symbol(), internals = NULL, children = NULL, loaded = NULL;
  const char *name = NULL;
  int success = 0;
  ok_call(A.MXSymbolGetName(fc, &name, &success), "MXSymbolGetName");
  ok(success && name && strcmp(name, "fc1") == 0, "the op node's name (fc1)");
  A.MXSymbolGetAttr(fc, "num_hidden", &name, &success);
  ok(success && name && strcmp(name, "4") == 0, "MXSymbolGetAttr reads a parameter");
  ok_call(A.MXSymbolSetAttr(fc, "__mood__", "calm"), "MXSymbolSetAttr(__mood__)");
  A.MXSymbolGetAttr(fc, "__mood__", &name, &success);
  ok(success && name && strcmp(name, "calm") == 0, "... and reads it back");
  uint32_t n = 0;
  const char **kv = NULL;
  ok_call(A.MXSymbolListAttrShallow(fc, &n, &kv), "MXSymbolListAttrShallow");
  ok(n >= 2, "two attributes or more (%u)", n);
  ok_call(A.MXSymbolGetInternals(fc, &internals), "MXSymbolGetInternals");
  uint32_t nout = 0;
  A.MXSymbolGetNumOutputs(internals, &nout);
  ok(nout == 4, "the internals of FullyConnected(data): data, weight, bias, output (%u)", nout);
  ok_call(A.MXSymbolGetChildren(fc, &children), "MXSymbolGetChildren");
  A.MXSymbolGetNumOutputs(children, &nout);
  ok(nout == 3, "FullyConnected's children are its three inputs (%u)", nout);
  const char **inputs = NULL;
  ok_call(A.NNSymbolListInputNames(fc, 0, &n, &inputs), "NNSymbolListInputNames(all)");
  ok(n == 3, "three inputs (%u)", n);
  const char *keys[] = {"data"};
  const int types[] = {0};
  uint32_t nin = 0, no = 0, na = 0;
  const int *tin = NULL, *tout = NULL, *taux = NULL;
  int complete = 0;
  ok_call(A.MXSymbolInferType(fc, 1, keys, types, &nin, &tin, &no, &tout, &na, &taux, &complete),
          "MXSymbolInferType(data float32)");
  ok(complete && nin == 3 && tin[1] == 0 && no == 1 && tout[0] == 0, "every type is float32");
  char path[600];
  snprintf(path, sizeof path, "%s/fc.json", tmpdir);
  ok_call(A.MXSymbolSaveToFile(fc, path), "MXSymbolSaveToFile");
  ok_call(A.MXSymbolCreateFromFile(path, &loaded), "MXSymbolCreateFromFile");
  remove(path);

  const char *shape_names[] = {"data"}, *req_types[] = {"write"};
  const int shape_data[] = {2, 3};
  const uint32_t shape_idx[] = {0, 2};
  int shared_len = -1;
  uint32_t nargs = 0, naux = 0;
  NDArrayHandle *args = NULL, *grads = NULL, *aux = NULL;
  ExecutorHandle exec = NULL;
  ok_call(A.MXExecutorSimpleBindEx(fc, 1, 0, 0, NULL, NULL, NULL, 0, NULL, req_types, 1, shape_names,
                                   shape_data, shape_idx, 0, NULL, NULL, 0, NULL, NULL, 0, NULL,
                                   &shared_len, NULL, NULL, NULL, NULL, &nargs, &args, &grads, &naux,
                                   &aux, NULL, &exec),
          "MXExecutorSimpleBindEx(data (2,3))");
  ok(nargs == 3 && has_shape(args[1], 2, (int[]){4, 3}) && grads[1] != NULL,
     "it made data, weight (4,3) and bias, with gradients");
  if (exec) {
    ok_call(A.MXExecutorForward(exec, 1), "forward of the simple-bound executor");
    NDArrayHandle keep[8];
    int k = 0;
    for (uint32_t i = 0; i < nargs && k < 8; i++) {
      keep[k++] = args[i];
      if (grads[i] && k < 8) keep[k++] = grads[i];
    }
    A.MXExecutorFree(exec);
    for (int i = 0; i < k; i++) A.MXNDArrayFree(keep[i]);
  }
  SymbolHandle syms[] = {fc, internals, children, loaded};
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
    if (syms[i]) A.MXSymbolFree(syms[i]);
}

static void test_frontend_profiler(void) {
  diag("--- frontend: profiler objects");
  ProfileHandle domain = NULL, task = NULL;
  ok_call(A.MXProfileCreateDomain("mxcts", &domain), "MXProfileCreateDomain");
  ok_call(A.MXProfileCreateTask(domain, "a task", &task), "MXProfileCreateTask");
  ok_call(A.MXProfileDurationStart(task), "MXProfileDurationStart");
  ok_call(A.MXProfileDurationStop(task), "MXProfileDurationStop");
  ok_call(A.MXProfileDestroyHandle(task), "MXProfileDestroyHandle(task)");
  ok_call(A.MXProfileDestroyHandle(domain), "MXProfileDestroyHandle(domain)");
}

static void test_shutdown(void) {
  diag("--- shutdown");
  float av[2] = {1, 2};
  NDArrayHandle a = make1(2, av);
  ok_call(A.MXNotifyShutdown(), "MXNotifyShutdown");
  ok_call(A.MXNDArrayFree(a), "MXNDArrayFree after MXNotifyShutdown (as Python does at exit)");
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : CAPI_DEFAULT_LIB;
  if (argc > 2 || (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))) {
    fprintf(stderr, "usage: %s [LIBRARY]   (default %s)\n", argv[0], CAPI_DEFAULT_LIB);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("Bail out! cannot load %s: %s\n", path, dlerror());
    return 1;
  }
  diag("library: %s", path);
  int missing = 0;
#define CAPI_RESOLVE(f)                                   \
  *(void **)&A.f = dlsym(lib, #f);                        \
  if (!A.f) {                                             \
    diag("missing symbol %s", #f);                        \
    missing++;                                            \
  }
  CAPI_FUNCTIONS(CAPI_RESOLVE)
#undef CAPI_RESOLVE
  ok(missing == 0, "every C API function resolves with dlsym");
  if (missing) {
    printf("Bail out! %d functions are missing\n", missing);
    return 1;
  }
  strict = dlsym(lib, "mxr_last_error") != NULL;
  diag("%s", strict ? "libmxref: inputs MXNet does not guard are checked too"
                    : "not libmxref: checks of inputs MXNet 1.9.1 does not guard are skipped");

  const char *base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/capi_conformance.XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(tmpdir)) {
    printf("Bail out! mkdtemp %s failed\n", tmpdir);
    return 1;
  }
  init_data();

  test_global();
  test_ops();
  test_ndarray();
  test_random();
  test_copy_from_ndarray();
  test_ndarray_file();
  test_engine();
  test_imperative();
  test_symbols();
  test_executor();
  test_autograd();
  test_cached_op();
  test_profiler();
  test_bulk();
  test_threads();
  test_frontend_registries();
  test_frontend_ndarray();
  test_frontend_symbol();
  test_frontend_profiler();
  test_shutdown();

  rmdir(tmpdir);
  printf("1..%d\n", num_tests);
  if (num_failed) diag("%d of %d checks failed", num_failed, num_tests);
  /* The library stays loaded: dlclose would hide its globals from leak
   * checkers and run its destructors before those of the process. */
  return num_failed ? 1 : 0;
}
