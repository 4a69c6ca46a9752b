/*
 * harness/common/workloads.h: the one list of probe workloads.
 *
 * Each row is X(NAME, FUNCTION, NEEDS...): the workload's name as suites
 * write it; the probe function that runs it (declared in
 * probe/probe_internal.h, or static in probe/probe.c; only mxcts-probe
 * expands this column); and the MXNet C API functions it calls
 * (common/capi_needs.h: a name, or alternatives separated by '|').  A workload that starts calling a
 * function must list it here, or a library lacking it would crash or fail
 * the workload instead of being judged unsupported.
 *
 * The list lives in common/ because mxcts reads the needs without linking
 * the probe.  The order is the order `mxcts-probe --help` prints.
 */
#ifndef MXCTS_WORKLOADS_H
#define MXCTS_WORKLOADS_H

/* Groups of needs that several workloads share. */
#define MXCTS_NEEDS_BASE "MXGetLastError", "MXRandomSeed", "MXNotifyShutdown"
#define MXCTS_NEEDS_NDARRAY                                                                  \
  "MXNDArrayCreateEx", "MXNDArrayFree", "MXNDArraySyncCopyFromCPU", "MXNDArraySyncCopyToCPU", \
      "MXNDArrayWaitToRead", "MXNDArrayWaitAll"
#define MXCTS_NEEDS_SYMBOL \
  "NNGetOpHandle", "MXSymbolCreateVariable", "MXSymbolCreateAtomicSymbol", "MXSymbolCompose", "MXSymbolFree"
#define MXCTS_NEEDS_EXECUTOR \
  "MXExecutorBindEX", "MXExecutorForward", "MXExecutorBackwardEx", "MXExecutorOutputs", "MXExecutorFree"
#define MXCTS_NEEDS_AUTOGRAD \
  "MXAutogradSetIsRecording", "MXAutogradSetIsTraining", "MXAutogradMarkVariables", "MXAutogradBackwardEx"
#define MXCTS_NEEDS_PROFILER "MXSetProfilerConfig", "MXSetProfilerState", "MXDumpProfile"
/* numerics and parity: the oracle's cases through imperative calls */
#define MXCTS_NEEDS_OPS_CASES                                                                    \
  MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_AUTOGRAD, "NNGetOpHandle", "MXImperativeInvokeEx", \
      "MXListAllOpNames", "MXNDArrayGetShapeEx|MXNDArrayGetShape"

/* clang-format off */
#define MXCTS_WORKLOADS(X)                                                                           \
  X(symbolic_flip_chain, mxcts__probe_symbolic_flip_chain,                                           \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_SYMBOL, MXCTS_NEEDS_EXECUTOR,                 \
    MXCTS_NEEDS_PROFILER)                                                                            \
  X(cachedop_flip_chain, mxcts__probe_cachedop_flip_chain,                                           \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_SYMBOL, MXCTS_NEEDS_AUTOGRAD,                 \
    "MXCreateCachedOpEx", "MXInvokeCachedOpEx", "MXFreeCachedOp")                                    \
  X(imperative_flips, mxcts__probe_imperative_flips,                                                 \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, "NNGetOpHandle", "MXImperativeInvokeEx",                  \
    "MXEngineSetBulkSize")                                                                           \
  X(inference_flip_chain, mxcts__probe_inference_flip_chain,                                         \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_SYMBOL, MXCTS_NEEDS_EXECUTOR,                 \
    MXCTS_NEEDS_PROFILER)                                                                            \
  X(engine_random, mxcts__probe_engine_random,                                                       \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, "MXEnginePushSyncND")                                     \
  X(engine_dispatch, mxcts__probe_engine_dispatch,                                                   \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, "MXEnginePushSyncND", "MXEngineSetBulkSize")              \
  X(async_dot, mxcts__probe_async_dot,                                                               \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, "NNGetOpHandle", "MXImperativeInvokeEx")                  \
  X(numerics, mxcts__probe_numerics, MXCTS_NEEDS_OPS_CASES)                                          \
  X(parity, mxcts__probe_parity, MXCTS_NEEDS_OPS_CASES)                                              \
  X(numerics_symbolic, mxcts__probe_numerics_symbolic,                                               \
    MXCTS_NEEDS_OPS_CASES, MXCTS_NEEDS_SYMBOL, MXCTS_NEEDS_EXECUTOR)                                 \
  X(profiler_autostart, mxcts__probe_profiler_autostart,                                             \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_SYMBOL, MXCTS_NEEDS_EXECUTOR)                 \
  X(knobs, mxcts__probe_knobs,                                                                       \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_SYMBOL, MXCTS_NEEDS_EXECUTOR,                 \
    MXCTS_NEEDS_AUTOGRAD, MXCTS_NEEDS_PROFILER, "MXImperativeInvokeEx", "MXEngineSetBulkSize",       \
    "MXCreateCachedOpEx", "MXInvokeCachedOpEx", "MXFreeCachedOp", "MXNDArrayGetGradState",          \
    "MXNDArraySetGradState")                                                                         \
  X(ndarray_views, mxcts__probe_ndarray_views,                                                       \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, "MXNDArraySlice", "MXNDArrayAt", "MXNDArrayReshape64",    \
    "MXNDArrayCreateNone", "NNGetOpHandle", "MXImperativeInvokeEx",                                  \
    "MXNDArrayGetShapeEx|MXNDArrayGetShape")                                                         \
  X(shape_inference, mxcts__probe_shape_inference,                                                   \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_SYMBOL, "MXSymbolCreateFromJSON", "MXSymbolListArguments",         \
    "MXSymbolListAuxiliaryStates", "MXSymbolInferShapeEx", "MXSymbolInferType")                      \
  X(profiler_contract, mxcts__probe_profiler_contract,                                               \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_PROFILER, "NNGetOpHandle",                    \
    "MXImperativeInvokeEx", "MXEnginePushSyncND", "MXAggregateProfileStatsPrint",                    \
    "MXAggregateProfileStatsPrintEx")                                                                \
  X(op_info, mxcts__probe_op_info,                                                                   \
    MXCTS_NEEDS_BASE, "MXListAllOpNames", "NNGetOpHandle", "MXSymbolGetAtomicSymbolInfo")            \
  X(priority_pool, mxcts__probe_priority_pool,                                                       \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, "MXEnginePushSyncND")                                     \
  X(op_errors, mxcts__probe_op_errors,                                                               \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_SYMBOL, "MXImperativeInvokeEx",               \
    "MXExecutorBindEX", "MXExecutorForward", "MXExecutorOutputs", "MXExecutorFree",                  \
    "MXEngineSetBulkSize",                                                                           \
    "MXCreateCachedOpEx", "MXInvokeCachedOpEx", "MXFreeCachedOp")                                    \
  X(memory_plan, mxcts__probe_memory_plan,                                                           \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_EXECUTOR, MXCTS_NEEDS_AUTOGRAD,               \
    "MXSymbolCreateFromJSON", "MXSymbolFree", "MXSymbolListArguments", "MXExecutorPrint",            \
    "MXNDArrayGetShapeEx|MXNDArrayGetShape", "MXCreateCachedOpEx", "MXInvokeCachedOpEx",             \
    "MXFreeCachedOp")                                                                                \
  X(rejections, mxcts__probe_rejections,                                                             \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_SYMBOL, MXCTS_NEEDS_EXECUTOR,                 \
    MXCTS_NEEDS_AUTOGRAD, "MXImperativeInvokeEx", "MXCreateCachedOpEx", "MXFreeCachedOp",            \
    "MXSymbolCreateFromJSON")                                                                        \
  /* MXNDArrayLoad is optional: without it the probe reads the .params file */                      \
  X(network_inference, mxcts__probe_network_inference,                                               \
    MXCTS_NEEDS_BASE, MXCTS_NEEDS_NDARRAY, MXCTS_NEEDS_EXECUTOR, "MXSymbolCreateFromJSON",           \
    "MXSymbolFree", "MXSymbolListArguments", "MXSymbolListAuxiliaryStates",                          \
    "MXNDArrayGetShapeEx|MXNDArrayGetShape")                                                         \
  X(gpu_count, gpu_count,                                                               \
    MXCTS_NEEDS_BASE, "MXGetGPUCount")
/* clang-format on */

#endif /* MXCTS_WORKLOADS_H */
