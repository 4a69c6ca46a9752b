/*
 * The probe's view of an implementation: the MXNet C API subset resolved
 * with dlsym from a library given at run time.  The probe never links an
 * implementation; c_api.h only lends it the prototypes.
 */
#ifndef MXCTS_PROBE_CAPI_H
#define MXCTS_PROBE_CAPI_H

#include <stddef.h>

#include "mxref/c_api.h"

/* X(name): functions every implementation must export. */
#define MXCTS_CAPI_REQUIRED(X)                                                                 \
  X(MXGetLastError) X(MXGetVersion) X(MXNotifyShutdown) X(MXRandomSeed)                     \
  X(MXEngineSetBulkSize) X(MXEnginePushSyncND) X(MXNDArrayCreateEx) X(MXNDArrayFree)         \
  X(MXNDArraySyncCopyFromCPU) X(MXNDArraySyncCopyToCPU) X(MXNDArrayWaitToRead)               \
  X(MXNDArrayWaitAll) X(MXNDArrayGetShapeEx) X(MXListAllOpNames) X(NNGetOpHandle)            \
  X(MXImperativeInvokeEx) X(MXSymbolCreateVariable) X(MXSymbolCreateAtomicSymbol)            \
  X(MXSymbolCompose) X(MXSymbolFree) X(MXSymbolListArguments) X(MXExecutorBindEX)            \
  X(MXExecutorForward) X(MXExecutorBackwardEx) X(MXExecutorOutputs) X(MXExecutorFree)        \
  X(MXAutogradSetIsRecording) X(MXAutogradSetIsTraining) X(MXAutogradMarkVariables)          \
  X(MXAutogradBackwardEx) X(MXCreateCachedOpEx) X(MXInvokeCachedOpEx) X(MXFreeCachedOp)      \
  X(MXSetProfilerConfig) X(MXSetProfilerState) X(MXDumpProfile) X(MXGetGPUCount)

/* X(name): functions used when present. */
#define MXCTS_CAPI_OPTIONAL(X) \
  X(MXLibInfoFeatures) X(MXNDArrayGetData) X(MXNDArrayWaitToWrite) X(MXNDArrayGetDType)

struct mxcts_capi {
  void *lib;
#define MXCTS_CAPI_FIELD(name) __typeof__(name) *name;
  MXCTS_CAPI_REQUIRED(MXCTS_CAPI_FIELD)
  MXCTS_CAPI_OPTIONAL(MXCTS_CAPI_FIELD)
#undef MXCTS_CAPI_FIELD
};

/* dlopen `path` and resolve the functions.  Returns 0, or -1 with a
 * message naming the library and the first missing function. */
int mxcts_capi_load(const char *path, struct mxcts_capi *api, char *err, size_t errlen);

#endif /* MXCTS_PROBE_CAPI_H */
