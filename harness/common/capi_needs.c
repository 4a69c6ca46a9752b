/* The C API functions each probe workload calls (common/capi_needs.h).
 * Kept beside the probe's code by hand: a workload that starts calling a
 * function must list it here, or a library lacking it would crash or fail
 * the workload instead of being judged unsupported. */
#include "common/capi_needs.h"

#include <string.h>

#define BASE "MXGetLastError", "MXRandomSeed", "MXNotifyShutdown"
#define NDARRAY                                                                             \
  "MXNDArrayCreateEx", "MXNDArrayFree", "MXNDArraySyncCopyFromCPU", "MXNDArraySyncCopyToCPU", \
      "MXNDArrayWaitToRead", "MXNDArrayWaitAll"
#define SYMBOL "NNGetOpHandle", "MXSymbolCreateVariable", "MXSymbolCreateAtomicSymbol", "MXSymbolCompose", "MXSymbolFree"
#define EXECUTOR "MXExecutorBindEX", "MXExecutorForward", "MXExecutorBackwardEx", "MXExecutorOutputs", "MXExecutorFree"
#define AUTOGRAD \
  "MXAutogradSetIsRecording", "MXAutogradSetIsTraining", "MXAutogradMarkVariables", "MXAutogradBackwardEx"
#define PROFILER "MXSetProfilerConfig", "MXSetProfilerState", "MXDumpProfile"

static const char *const symbolic[] = {BASE, NDARRAY, SYMBOL, EXECUTOR, PROFILER, NULL};
static const char *const cachedop[] = {BASE, NDARRAY, SYMBOL, AUTOGRAD, "MXCreateCachedOpEx",
                                       "MXInvokeCachedOpEx", "MXFreeCachedOp", NULL};
static const char *const imperative[] = {BASE, NDARRAY, "NNGetOpHandle", "MXImperativeInvokeEx",
                                         "MXEngineSetBulkSize", NULL};
static const char *const engine[] = {BASE, NDARRAY, "MXEnginePushSyncND", NULL};
static const char *const dispatch[] = {BASE, NDARRAY, "MXEnginePushSyncND", "MXEngineSetBulkSize", NULL};
static const char *const async_dot[] = {BASE, NDARRAY, "NNGetOpHandle", "MXImperativeInvokeEx", NULL};
static const char *const numerics[] = {BASE, NDARRAY, AUTOGRAD, "NNGetOpHandle", "MXImperativeInvokeEx",
                                       "MXListAllOpNames", "MXNDArrayGetShapeEx|MXNDArrayGetShape", NULL};
static const char *const autostart[] = {BASE, NDARRAY, SYMBOL, EXECUTOR, NULL};
static const char *const knobs[] = {BASE, NDARRAY, SYMBOL, EXECUTOR, AUTOGRAD, PROFILER, "MXImperativeInvokeEx",
                                    "MXEngineSetBulkSize", "MXCreateCachedOpEx", "MXInvokeCachedOpEx",
                                    "MXFreeCachedOp", NULL};
static const char *const gpu_count[] = {BASE, "MXGetGPUCount", NULL};
/* MXNDArrayLoad is optional: without it the probe reads the .params file */
static const char *const network[] = {BASE, NDARRAY, EXECUTOR, "MXSymbolCreateFromJSON", "MXSymbolFree",
                                      "MXSymbolListArguments", "MXSymbolListAuxiliaryStates",
                                      "MXNDArrayGetShapeEx|MXNDArrayGetShape", NULL};
/* the pass markers: a var-less op through either push call */
static const char *const profile[] = {PROFILER, "MXNDArrayWaitAll", "MXEnginePushSyncND|MXEnginePushSync", NULL};

static const struct {
  const char *name;
  const char *const *needs;
} table[] = {
    {"symbolic_flip_chain", symbolic}, {"inference_flip_chain", symbolic},
    {"cachedop_flip_chain", cachedop}, {"imperative_flips", imperative},
    {"engine_random", engine},         {"engine_dispatch", dispatch},
    {"async_dot", async_dot},
    {"numerics", numerics},            {"parity", numerics},
    {"profiler_autostart", autostart}, {"knobs", knobs},
    {"gpu_count", gpu_count},          {"network_inference", network},
};

const char *const *mxcts_workload_needs(const char *name) {
  for (size_t i = 0; name && i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, name)) return table[i].needs;
  return NULL;
}

const char *const *mxcts_profile_needs(void) { return profile; }

bool mxcts_need_met(const char *need, bool (*has)(const char *fn, void *ctx), void *ctx) {
  char fn[128];
  for (const char *p = need; *p;) {
    size_t n = strcspn(p, "|");
    if (n < sizeof fn) {
      memcpy(fn, p, n);
      fn[n] = '\0';
      if (has(fn, ctx)) return true;
    }
    p += n + (p[n] == '|');
  }
  return false;
}

size_t mxcts_needs_missing(const char *const *needs, bool (*has)(const char *fn, void *ctx), void *ctx,
                           const char **missing, size_t *n, size_t cap) {
  for (size_t i = 0; needs && needs[i]; i++) {
    if (mxcts_need_met(needs[i], has, ctx)) continue;
    bool seen = false;
    for (size_t k = 0; k < *n; k++) seen = seen || !strcmp(missing[k], needs[i]);
    if (!seen && *n < cap) missing[(*n)++] = needs[i];
  }
  return *n;
}
