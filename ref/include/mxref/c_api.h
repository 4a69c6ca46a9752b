/*
 * mxref/c_api.h: the subset of MXNet 1.9.1's C API that libmxref exports.
 *
 * Every declaration here has the exact type and calling signature of the
 * function of the same name in MXNet 1.9.1 (include/mxnet/c_api.h and, for
 * NNGetOpHandle, nnvm's c_api.h), so one program compiled against this
 * header runs unchanged on libmxref.so and on libmxnet.so.  The text is our
 * own; docs/c-api.md lists the surface with notes on each function.
 *
 * This header does not include any native mxref header: C API users see
 * only opaque handles.
 *
 * Conventions (as MXNet's):
 *   - Every int-returning function returns 0 on success and -1 on failure.
 *     After a failure MXGetLastError() describes it; the message belongs to
 *     the calling thread and stays until the next failing call on that
 *     thread (a success leaves it alone).
 *   - Arrays and strings a function hands back (names, shapes, handle
 *     lists, JSON text, statistics) live in buffers of the calling thread.
 *     They stay valid until the same thread makes another call that fills
 *     the same buffer (docs/c-api.md names which calls share one), or
 *     exits.  Copy what you want to keep.
 *   - Handles returned through an out parameter belong to the caller, who
 *     releases each exactly once with its matching free function
 *     (MXNDArrayFree, MXSymbolFree, MXExecutorFree, MXFreeCachedOp).  That
 *     includes the NDArray handles that MXImperativeInvokeEx and
 *     MXInvokeCachedOpEx create when the caller passes no outputs, and
 *     every handle MXExecutorOutputs returns (a new one per call).
 *   - Op handles (AtomicSymbolCreator, OpHandle) are never freed; they stay
 *     valid for the life of the process.
 *   - Sizes handed to the copy functions count elements, not bytes.
 *   - Shapes come back in MXNet's legacy convention: an unknown shape has
 *     ndim 0 and an unknown dimension is 0.
 */
#ifndef MXREF_C_API_H
#define MXREF_C_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ types */

typedef uint32_t mx_uint;  /* MXNet's unsigned int */
typedef float mx_float;
typedef int64_t dim_t;     /* one dimension of a large-tensor shape */
typedef unsigned int nn_uint; /* nnvm's unsigned int */

/* Opaque handles: all of them are plain pointers. */
typedef void *NDArrayHandle;       /* an NDArray */
typedef const void *FunctionHandle;
typedef void *AtomicSymbolCreator; /* an operator (the same object as OpHandle) */
typedef void *OpHandle;            /* an operator, as nnvm's C API names it */
typedef void *CachedOpHandle;      /* a cached op (a hybridized graph) */
typedef void *SymbolHandle;        /* a symbol */
typedef void *AtomicSymbolHandle;
typedef void *ExecutorHandle;      /* a bound executor */
typedef void *DataIterCreator;
typedef void *DataIterHandle;
typedef void *KVStoreHandle;
typedef void *RecordIOHandle;
typedef void *RtcHandle;
typedef void *CudaModuleHandle;
typedef void *CudaKernelHandle;
typedef void *ProfileHandle;
typedef void *DLManagedTensorHandle;

/* MXEnginePushSyncND's context handle points at one of these: MXNet's
 * Context, a device type (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared) and a
 * device id. */
typedef const void *ContextHandle;
/* MXEnginePushSyncND's property handle points at an int holding MXNet's
 * FnProperty: 0 normal, 1 copy from GPU, 2 copy to GPU, 3 CPU prioritized,
 * 4 async, 5 delete var, 6 GPU prioritized, 7 no skip.  NULL means 0. */
typedef const void *EngineFnPropertyHandle;
typedef void *EngineVarHandle;

/* The callbacks MXNet's engine push functions take.  The first argument of
 * a sync function is the run context: a pointer to a struct that starts
 * with the context the op runs on ({int dev_type; int dev_id;}) followed by
 * the device stream pointer and the auxiliary stream pointer (NULL on CPU).
 * The second is the param given at the push. */
typedef void (*EngineAsyncFunc)(void *, void *, void *);
typedef void (*EngineSyncFunc)(void *, void *);
/* Called once with the param when the engine is done with it. */
typedef void (*EngineFuncParamDeleter)(void *);

typedef void (*ExecutorMonitorCallback)(const char *, NDArrayHandle, void *);
typedef void (*CachedOpMonitorCallback)(const char *, const char *, NDArrayHandle);

/* One entry of MXLibInfoFeatures' table: a build feature and whether this
 * library has it. */
struct LibFeature {
  const char *name;
  bool enabled;
};

/* ----------------------------------------------------- errors and global */

/* The calling thread's last error message ("" before any error).  Valid
 * until the next failing call on this thread. */
const char *MXGetLastError(void);

/* The MXNet version whose behaviour the library implements, as
 * major * 10000 + minor * 100 + patch (10901). */
int MXGetVersion(int *out);

/* The build feature table: *size entries in MXNet's order, in static
 * storage. */
int MXLibInfoFeatures(const struct LibFeature **libFeature, size_t *size);

/* Number of GPUs the library can use (0 without CUDA or without a device). */
int MXGetGPUCount(int *out);

/* Give the cached blocks of a device's memory pool back to the device
 * (a no-op for host contexts).  Fails for a GPU that does not exist. */
int MXStorageEmptyCache(int dev_type, int dev_id);

/* Seed the random number generators of random ops. */
int MXRandomSeed(int seed);

/* Seed the random number generators of one device: dev_type 1 cpu, 2 gpu,
 * 3 cpu_pinned, 5 cpu_shared.  libmxref's devices share one seed, so this
 * reseeds every device, as MXRandomSeed does; it fails for an unknown
 * device type, a negative id or a GPU that does not exist. */
int MXRandomSeedContext(int seed, int dev_type, int dev_id);

/* Finish all pending engine work before the process exits.  Handles may
 * still be used (and freed) afterwards. */
int MXNotifyShutdown(void);

/* ----------------------------------------------------------------- engine */

/* Set the calling thread's engine bulk size (ops bulked into one engine op);
 * *prev_bulk_size receives the old value. */
int MXEngineSetBulkSize(int bulk_size, int *prev_bulk_size);

/* Push `sync_func(run_ctx, func_param)` to the engine, to run on the context
 * that ctx_handle points at after every earlier op that writes one of the
 * const arrays or reads or writes one of the mutable arrays, and before
 * later ones that depend on them the same way.  prop_handle: see
 * EngineFnPropertyHandle.  `opr_name` names the op in profiles (NULL:
 * unnamed); it is copied.  `deleter`, when not NULL, is called once with
 * func_param when the engine no longer needs it. */
int MXEnginePushSyncND(EngineSyncFunc sync_func, void *func_param, EngineFuncParamDeleter deleter,
                       ContextHandle ctx_handle, NDArrayHandle *const_nds_handle,
                       int num_const_nds, NDArrayHandle *mutable_nds_handle,
                       int num_mutable_nds, EngineFnPropertyHandle prop_handle, int priority,
                       const char *opr_name);

/* ---------------------------------------------------------------- NDArray */

/* Create an array of shape[0..ndim) with the given device (dev_type: 1 cpu,
 * 2 gpu, ...), dtype (MXNet's codes: 0 float32, 1 float64, 2 float16,
 * 3 uint8, 4 int32, 5 int8, 6 int64, 7 bool) and, when delay_alloc is
 * nonzero, memory allocated on first use. */
int MXNDArrayCreateEx(const uint32_t *shape, uint32_t ndim, int dev_type, int dev_id,
                      int delay_alloc, int dtype, NDArrayHandle *out);

/* An array with no shape, dtype or memory: a placeholder, e.g. an output an
 * imperative call fills in. */
int MXNDArrayCreateNone(NDArrayHandle *out);

/* Release a handle.  Memory is freed once no handle and no pending engine
 * op uses it. */
int MXNDArrayFree(NDArrayHandle handle);

/* Copy `size` elements (the array's element count) from host memory into
 * the array, or from the array into host memory, waiting as needed. */
int MXNDArraySyncCopyFromCPU(NDArrayHandle handle, const void *data, size_t size);
int MXNDArraySyncCopyToCPU(NDArrayHandle handle, void *data, size_t size);

/* Copy the data of handle_src into handle_dst (i = -1) and wait until the
 * copy is done.  The arrays must have the same shape and dtype; they may be
 * on different devices.  i >= 0 (an auxiliary array of a sparse
 * destination) fails: libmxref has no sparse storage. */
int MXNDArraySyncCopyFromNDArray(NDArrayHandle handle_dst, const NDArrayHandle handle_src, const int i);

/* Wait until pending writes (WaitToRead) or all pending accesses
 * (WaitToWrite) of the array are done; WaitAll waits for every pushed op.
 * An error raised by such an op is returned here. */
int MXNDArrayWaitToRead(NDArrayHandle handle);
int MXNDArrayWaitToWrite(NDArrayHandle handle);
int MXNDArrayWaitAll(void);

/* The shape: *out_dim dimensions at *out_pdata (a thread buffer). */
int MXNDArrayGetShapeEx(NDArrayHandle handle, int *out_dim, const int **out_pdata);

/* MXNet's NDArray list file (.params, docs/c-api.md): MXNDArraySave writes
 * args[0..num_args) with keys[i] as their names (keys may be NULL: no
 * names).  MXNDArrayLoad reads one onto cpu(0): *out_arr holds new handles
 * the caller frees with MXNDArrayFree, in a thread buffer valid until the
 * thread's next call that returns arrays; *out_names (0 names or one per
 * array) lives in a thread buffer until the next call that returns names. */
int MXNDArraySave(const char *fname, uint32_t num_args, NDArrayHandle *args, const char **keys);
int MXNDArrayLoad(const char *fname, uint32_t *out_size, NDArrayHandle **out_arr, uint32_t *out_name_size,
                  const char ***out_names);

/* The dtype code; -1 for a placeholder (MXNDArrayCreateNone). */
int MXNDArrayGetDType(NDArrayHandle handle, int *out_dtype);

/* The device; 0 and 0 for a placeholder. */
int MXNDArrayGetContext(NDArrayHandle handle, int *out_dev_type, int *out_dev_id);

/* The array's memory (allocated now if it was delayed); NULL for a
 * placeholder.  Wait for the array before touching it. */
int MXNDArrayGetData(NDArrayHandle handle, void **out_pdata);

/* Views: new handles to arrays that share the memory (and the engine
 * ordering) of the given one.  Slice: rows [slice_begin, slice_end) of the
 * first dimension; At: row idx (a vector's element stays 1-D, as in
 * MXNet); Reshape: the same elements in a new shape (codes 0 "keep" and
 * one -1 "infer"; reverse matches them from the right); Detach: the same
 * array without its autograd history. */
int MXNDArraySlice(NDArrayHandle handle, uint32_t slice_begin, uint32_t slice_end,
                   NDArrayHandle *out);
int MXNDArrayAt(NDArrayHandle handle, uint32_t idx, NDArrayHandle *out);
int MXNDArrayReshape(NDArrayHandle handle, int ndim, int *dims, NDArrayHandle *out);
int MXNDArrayReshape64(NDArrayHandle handle, int ndim, dim_t *dims, bool reverse,
                       NDArrayHandle *out);
int MXNDArrayDetach(NDArrayHandle handle, NDArrayHandle *out);

/* A second handle to the same array (the caller frees both). */
int MXShallowCopyNDArray(NDArrayHandle src, NDArrayHandle *out);

/* 0 (dense) for every array with a shape, -1 for a placeholder. */
int MXNDArrayGetStorageType(NDArrayHandle handle, int *out_storage_type);

/* A marked variable's gradient array (a new handle), or *out NULL for an
 * array that is not marked; its fresh flag (set by a backward that
 * computed it; 0 for arrays that are not marked). */
int MXNDArrayGetGrad(NDArrayHandle handle, NDArrayHandle *out);
int MXNDArrayGetGradState(NDArrayHandle handle, int *out);
int MXNDArraySetGradState(NDArrayHandle handle, int state);

/* -------------------------------------------------------------- operators */

/* Every operator name, aliases included. */
int MXListAllOpNames(uint32_t *out_size, const char ***out_array);

/* Look an operator up by name or alias; an alias gives the same handle as
 * the operator's own name. */
int NNGetOpHandle(const char *op_name, OpHandle *op_out);

/* Every operator once (no aliases). */
int MXSymbolListAtomicSymbolCreators(uint32_t *out_size, AtomicSymbolCreator **out_array);

/* An operator's own name (the canonical one for an alias). */
int MXSymbolGetAtomicSymbolName(AtomicSymbolCreator creator, const char **name);

/* An operator's name, description and arguments (inputs, then
 * parameters, with MXNet-style type strings such as "NDArray-or-Symbol" or
 * "int, required"), and the parameter holding a variadic op's input count
 * ("" when none).  *return_type is set to NULL when return_type is not
 * NULL.  Every string and array is static.  A name MXNet registers that
 * libmxref does not implement says so in its description. */
int MXSymbolGetAtomicSymbolInfo(AtomicSymbolCreator creator, const char **name,
                                const char **description, uint32_t *num_args,
                                const char ***arg_names, const char ***arg_type_infos,
                                const char ***arg_descriptions, const char **key_var_num_args,
                                const char **return_type);

/* ------------------------------------------------- frontend registries */

/* What a frontend such as MXNet's Python package enumerates at import.
 * libmxref has no packed functions or legacy NDArray functions: those
 * lists are empty (static) and lookups fail naming what was asked for. */
typedef void *MXNetFunctionHandle;
struct MXCallbackList;
typedef int (*CustomOpPropCreator)(const char *op_type, const int num_kwargs, const char **keys,
                                   const char **values, struct MXCallbackList *ret);

int MXNetFuncListGlobalNames(int *out_size, const char ***out_array);
int MXNetFuncGetGlobal(const char *name, MXNetFunctionHandle *out);
int MXListFunctions(uint32_t *out_size, FunctionHandle **out_array);
int MXFuncGetInfo(FunctionHandle fun, const char **name, const char **description,
                  uint32_t *num_args, const char ***arg_names, const char ***arg_type_infos,
                  const char ***arg_descriptions, const char **return_type);
int MXFuncDescribe(FunctionHandle fun, uint32_t *num_use_vars, uint32_t *num_scalars,
                   uint32_t *num_mutate_vars, int *type_mask);
int MXListDataIters(uint32_t *out_size, DataIterCreator **out_array);
int MXDataIterGetIterInfo(DataIterCreator creator, const char **name, const char **description,
                          uint32_t *num_args, const char ***arg_names,
                          const char ***arg_type_infos, const char ***arg_descriptions);
/* MXNet's nine data iterators are listed (CSVIter ... MNISTIter) but none
 * is implemented: creating one fails ("iterator X is not implemented by
 * libmxref"). */
int MXDataIterCreateIter(DataIterCreator handle, uint32_t num_param, const char **keys,
                         const char **vals, DataIterHandle *out);

/* Always a worker (*ret = 1): libmxref has no parameter server. */
int MXKVStoreIsWorkerNode(int *ret);

/* Accepts a Python custom op's registration (the frontend registers some
 * at import); the Custom operator itself is not implemented, so using one
 * fails. */
int MXCustomOpRegister(const char *op_type, CustomOpPropCreator creator);

/* NumPy shape semantics are not implemented: MXIsNumpyShape gives 0 and
 * MXSetIsNumpyShape accepts only 0 (*prev 0). */
int MXIsNumpyShape(int *curr);
int MXSetIsNumpyShape(int is_np_shape, int *prev);

/* The process environment (c_api_test.h): *out NULL when name is unset;
 * a NULL value unsets it.  libmxref reads its MXNET_* variables when it is
 * loaded, so later changes do not reconfigure it. */
int MXGetEnv(const char *name, const char **value);
int MXSetEnv(const char *name, const char *value);

/* ------------------------------------------------------------- imperative */

/* Run an operator on NDArrays now (pushed to the engine).  Parameters are
 * string pairs as MXNet's frontends pass them.  If *outputs is NULL the
 * outputs are created: *outputs then points at *num_outputs new handles
 * (a thread buffer holding handles the caller frees).  Otherwise
 * (*outputs)[0..*num_outputs) are written; placeholder arrays among them
 * receive the inferred shape.  *out_stypes receives the outputs' storage
 * types (0, dense). */
int MXImperativeInvokeEx(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle *inputs,
                         int *num_outputs, NDArrayHandle **outputs, int num_params,
                         const char **param_keys, const char **param_vals,
                         const int **out_stypes);

/* ---------------------------------------------------------------- symbols */

int MXSymbolCreateFromJSON(const char *json, SymbolHandle *out);
/* The symbol as MXNet's JSON; the text is a thread buffer. */
int MXSymbolSaveToJSON(SymbolHandle symbol, const char **out_json);
int MXSymbolCreateVariable(const char *name, SymbolHandle *out);
/* An operator node with its parameters and no inputs yet. */
int MXSymbolCreateAtomicSymbol(AtomicSymbolCreator creator, uint32_t num_param, const char **keys,
                               const char **vals, SymbolHandle *out);
/* Give an atomic symbol its inputs (positional when keys is NULL, else by
 * input name), in place; unnamed inputs become variables "<name>_<input>". */
int MXSymbolCompose(SymbolHandle sym, const char *name, uint32_t num_args, const char **keys,
                    SymbolHandle *args);
/* A symbol with the outputs of all the given ones. */
int MXSymbolCreateGroup(uint32_t num_symbols, SymbolHandle *symbols, SymbolHandle *out);
/* A copy to compose or free independently. */
int MXSymbolCopy(SymbolHandle symbol, SymbolHandle *out);
int MXSymbolFree(SymbolHandle symbol);

/* Names in MXNet's order, in a thread buffer shared by the three calls. */
int MXSymbolListArguments(SymbolHandle symbol, uint32_t *out_size, const char ***out_str_array);
int MXSymbolListOutputs(SymbolHandle symbol, uint32_t *out_size, const char ***out_str_array);
int MXSymbolListAuxiliaryStates(SymbolHandle symbol, uint32_t *out_size,
                                const char ***out_str_array);

/* Shape inference.  The known shapes: argument i has the dimensions
 * arg_shape_data[arg_ind_ptr[i] .. arg_ind_ptr[i+1]); keys[i] names it
 * (an argument or aux state), or with keys NULL it is the i-th argument.
 * Out: per argument, output and aux state the ndim and a pointer to the
 * dimensions (thread buffers); *complete is 1 when every shape is known. */
int MXSymbolInferShapeEx(SymbolHandle sym, uint32_t num_args, const char **keys,
                         const uint32_t *arg_ind_ptr, const int *arg_shape_data,
                         uint32_t *in_shape_size, const int **in_shape_ndim,
                         const int ***in_shape_data, uint32_t *out_shape_size,
                         const int **out_shape_ndim, const int ***out_shape_data,
                         uint32_t *aux_shape_size, const int **aux_shape_ndim,
                         const int ***aux_shape_data, int *complete);
/* The same call, reporting the result complete (as MXNet's partial call):
 * unknown shapes come back unknown (ndim 0). */
int MXSymbolInferShapePartialEx(SymbolHandle sym, uint32_t num_args, const char **keys,
                                const uint32_t *arg_ind_ptr, const int *arg_shape_data,
                                uint32_t *in_shape_size, const int **in_shape_ndim,
                                const int ***in_shape_data, uint32_t *out_shape_size,
                                const int **out_shape_ndim, const int ***out_shape_data,
                                uint32_t *aux_shape_size, const int **aux_shape_ndim,
                                const int ***aux_shape_data, int *complete);

/* Type inference from known dtypes (by name, or positional when keys is
 * NULL); -1 where still unknown, *complete 1 when none is (always, for the
 * partial call).  The arrays share MXSymbolInferShapeEx's ndim buffers. */
int MXSymbolInferType(SymbolHandle sym, uint32_t num_args, const char **keys,
                      const int *arg_type_data, uint32_t *in_type_size, const int **in_type_data,
                      uint32_t *out_type_size, const int **out_type_data, uint32_t *aux_type_size,
                      const int **aux_type_data, int *complete);
int MXSymbolInferTypePartial(SymbolHandle sym, uint32_t num_args, const char **keys,
                             const int *arg_type_data, uint32_t *in_type_size,
                             const int **in_type_data, uint32_t *out_type_size,
                             const int **out_type_data, uint32_t *aux_type_size,
                             const int **aux_type_data, int *complete);

/* The head node's name and attributes (*success 0 when the symbol has
 * several outputs or no such attribute).  Strings belong to the symbol. */
int MXSymbolGetName(SymbolHandle symbol, const char **out, int *success);
int MXSymbolGetAttr(SymbolHandle symbol, const char *key, const char **out, int *success);
/* Set an attribute on each output's node; on an op node a key that is not
 * __dunder__ must be one of its parameters. */
int MXSymbolSetAttr(SymbolHandle symbol, const char *key, const char *value);
/* 2 * *out_size strings, key then value: every node's attributes and
 * parameters with keys "<node>$<key>", or (Shallow) the head node's.  A
 * thread buffer, until the next of these calls. */
int MXSymbolListAttr(SymbolHandle symbol, uint32_t *out_size, const char ***out);
int MXSymbolListAttrShallow(SymbolHandle symbol, uint32_t *out_size, const char ***out);

/* New symbols (the caller frees them): output `index`; every output of
 * every node (get_internals); the head nodes' inputs (a symbol with no
 * outputs when there are none, as MXNet); a copy (MXShallowCopySymbol, and MXSymbolRemoveAmpCast:
 * libmxref inserts no casts). */
int MXSymbolGetNumOutputs(SymbolHandle symbol, uint32_t *output_count);
int MXSymbolGetOutput(SymbolHandle symbol, uint32_t index, SymbolHandle *out);
int MXSymbolGetInternals(SymbolHandle symbol, SymbolHandle *out);
int MXSymbolGetChildren(SymbolHandle symbol, SymbolHandle *out);
int MXShallowCopySymbol(SymbolHandle src, SymbolHandle *out);
int MXSymbolRemoveAmpCast(SymbolHandle sym_handle, SymbolHandle *ret_sym_handle);

/* The symbol's JSON (MXNet prints a text dump): a thread buffer, until the
 * next MXSymbolPrint or MXExecutorPrint. */
int MXSymbolPrint(SymbolHandle symbol, const char **out_str);

/* A symbol as JSON in a file, and back. */
int MXSymbolSaveToFile(SymbolHandle symbol, const char *fname);
int MXSymbolCreateFromFile(const char *fname, SymbolHandle *out);

/* nnvm's input names: option 0 every variable in graph order, 1 the
 * arguments, 2 the aux states (the name-list thread buffer). */
int NNSymbolListInputNames(SymbolHandle symbol, int option, nn_uint *out_size,
                           const char ***out_str_array);

/* nnvm's names for MXSymbolFree and MXSymbolCompose. */
int NNSymbolFree(SymbolHandle symbol);
int NNSymbolCompose(SymbolHandle sym, const char *name, nn_uint num_args, const char **keys,
                    SymbolHandle *args);

/* --------------------------------------------------------------- executor */

/* Bind a symbol to arrays on one device.  in_args[i] is argument i
 * (MXSymbolListArguments order); arg_grad_store[i] receives its gradient
 * as grad_req_type[i] asks (0 null, 1 write, 2 in place, 3 add), or is
 * NULL for none; aux_states[i] is aux state i.  The map_* arrays (MXNet's
 * group2ctx) may only name the bind device; shared_exec is accepted and
 * only checked. */
int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t num_map_keys,
                     const char **map_keys, const int *map_dev_types, const int *map_dev_ids,
                     uint32_t len, NDArrayHandle *in_args, NDArrayHandle *arg_grad_store,
                     uint32_t *grad_req_type, uint32_t aux_states_len, NDArrayHandle *aux_states,
                     ExecutorHandle shared_exec, ExecutorHandle *out);
int MXExecutorForward(ExecutorHandle handle, int is_train);
/* Backward with one head gradient per output (len 0: only loss outputs,
 * which need none). */
int MXExecutorBackwardEx(ExecutorHandle handle, uint32_t len, NDArrayHandle *head_grads,
                         int is_train);
/* New handles for the output arrays (thread buffer of handles the caller
 * frees). */
int MXExecutorOutputs(ExecutorHandle handle, uint32_t *out_size, NDArrayHandle **out);
int MXExecutorFree(ExecutorHandle handle);

/* Bind to arrays the library makes: shapes (and dtypes, float32 where
 * nothing decides) are inferred from the ones given, and every argument,
 * gradient (for grad_req other than "null") and aux state is a new
 * zero-filled array whose handle the caller owns.  grad_req: one for all
 * (list length 0), a list by position (names NULL), or by name.  Only
 * dense storage (stype 0 or -1) is accepted.  Plans share no memory, so
 * shared_arg_names are ignored and the shared buffer comes back as given
 * (new handles to the same arrays).  The returned handle arrays are
 * thread buffers, until the next call. */
int MXExecutorSimpleBindEx(
    SymbolHandle symbol_handle, int dev_type, int dev_id, const uint32_t num_g2c_keys,
    const char **g2c_keys, const int *g2c_dev_types, const int *g2c_dev_ids,
    const uint32_t provided_grad_req_list_len, const char **provided_grad_req_names,
    const char **provided_grad_req_types, const uint32_t num_provided_arg_shapes,
    const char **provided_arg_shape_names, const int *provided_arg_shape_data,
    const uint32_t *provided_arg_shape_idx, const uint32_t num_provided_arg_dtypes,
    const char **provided_arg_dtype_names, const int *provided_arg_dtypes,
    const uint32_t num_provided_arg_stypes, const char **provided_arg_stype_names,
    const int *provided_arg_stypes, const uint32_t num_shared_arg_names,
    const char **shared_arg_name_list, int *shared_buffer_len, const char **shared_buffer_name_list,
    NDArrayHandle *shared_buffer_handle_list, const char ***updated_shared_buffer_name_list,
    NDArrayHandle **updated_shared_buffer_handle_list, uint32_t *num_in_args,
    NDArrayHandle **in_args, NDArrayHandle **arg_grads, uint32_t *num_aux_states,
    NDArrayHandle **aux_states, ExecutorHandle shared_exec_handle, ExecutorHandle *out);

/* A summary of the executor's plan (MXNet prints its graph), ending with
 * MXNet's "Total N MB allocated" line: a thread buffer shared with
 * MXSymbolPrint, until the next of these calls. */
int MXExecutorPrint(ExecutorHandle handle, const char **out_str);

/* Not implemented (each fails with "... is not implemented by libmxref"):
 * autograd.Function, the symbol of a recorded computation, sparse arrays,
 * reshaping an executor, monitor callbacks, NDArray serialization. */
int MXCustomFunctionRecord(int num_inputs, NDArrayHandle *inputs, int num_outputs,
                           NDArrayHandle *outputs, struct MXCallbackList *callbacks);
int MXAutogradGetSymbol(NDArrayHandle handle, SymbolHandle *out);
int MXNDArrayCreateSparseEx(int storage_type, const uint32_t *shape, uint32_t ndim, int dev_type,
                            int dev_id, int delay_alloc, int dtype, uint32_t num_aux, int *aux_type,
                            uint32_t *aux_ndims, const uint32_t *aux_shape, NDArrayHandle *out);
int MXExecutorReshapeEx(int partial_shaping, int allow_up_sizing, int dev_type, int dev_id,
                        uint32_t num_map_keys, const char **map_keys, const int *map_dev_types,
                        const int *map_dev_ids, const uint32_t num_provided_arg_shapes,
                        const char **provided_arg_shape_names, const int *provided_arg_shape_data,
                        const uint32_t *provided_arg_shape_idx, uint32_t *num_in_args,
                        NDArrayHandle **in_args, NDArrayHandle **arg_grads,
                        uint32_t *num_aux_states, NDArrayHandle **aux_states,
                        ExecutorHandle shared_exec, ExecutorHandle *out);
int MXExecutorSetMonitorCallbackEX(ExecutorHandle handle, ExecutorMonitorCallback callback,
                                   void *callback_handle, bool monitor_all);
int MXCachedOpRegisterOpHook(NDArrayHandle handle, CachedOpMonitorCallback callback,
                             bool monitor_all);
int MXNDArraySaveRawBytes(NDArrayHandle handle, size_t *out_size, const char **out_buf);
int MXNDArrayLoadFromRawBytes(const void *buf, size_t size, NDArrayHandle *out);

/* --------------------------------------------------------------- autograd */

int MXAutogradSetIsRecording(int is_recording, int *prev);
int MXAutogradSetIsTraining(int is_training, int *prev);
int MXAutogradIsRecording(bool *curr);
int MXAutogradIsTraining(bool *curr);
/* Mark arrays as variables whose gradients backward writes into
 * grad_handles[i] with reqs_array[i] (0 null, 1 write, 3 add). */
int MXAutogradMarkVariables(uint32_t num_var, NDArrayHandle *var_handles, uint32_t *reqs_array,
                            NDArrayHandle *grad_handles);
/* Backward from recorded outputs; ograd_handles NULL (or NULL entries)
 * means ones. */
int MXAutogradBackwardEx(uint32_t num_output, NDArrayHandle *output_handles,
                         NDArrayHandle *ograd_handles, uint32_t num_variables,
                         NDArrayHandle *var_handles, int retain_graph, int create_graph,
                         int is_train, NDArrayHandle **grad_handles, int **grad_stypes);

/* ------------------------------------------------------------- cached ops */

int MXCreateCachedOpEx(SymbolHandle handle, int num_flags, const char **keys, const char **vals,
                       CachedOpHandle *out);
/* Inputs are the symbol's inputs in MXNet's order (arguments and aux
 * states as they appear).  Outputs as for MXImperativeInvokeEx. */
int MXInvokeCachedOpEx(CachedOpHandle handle, int num_inputs, NDArrayHandle *inputs,
                       int *num_outputs, NDArrayHandle **outputs, const int **out_stypes);
int MXFreeCachedOp(CachedOpHandle handle);

/* --------------------------------------------------------------- profiler */

int MXSetProfilerConfig(int num_params, const char *const *keys, const char *const *vals);
/* 0 stop, 1 run. */
int MXSetProfilerState(int state);
int MXProfilePause(int paused);
int MXDumpProfile(int finished);
/* The aggregate statistics as a table (a thread buffer). */
int MXAggregateProfileStatsPrint(const char **out_str, int reset);
/* format 0 table, 1 JSON; sort_by 0 total, 1 avg, 2 min, 3 max, 4 count. */
int MXAggregateProfileStatsPrintEx(const char **out_str, int reset, int format, int sort_by,
                                   int ascending);

/* The same calls for "this process" (profile_process 0, no kvstore);
 * profiling a kvstore server fails: libmxref has no distributed kvstore. */
int MXSetProcessProfilerConfig(int num_params, const char *const *keys, const char *const *vals,
                               KVStoreHandle kvstoreHandle);
int MXSetProcessProfilerState(int state, int profile_process, KVStoreHandle kvStoreHandle);
int MXDumpProcessProfile(int finished, int profile_process, KVStoreHandle kvStoreHandle);
int MXProcessProfilePause(int paused, int profile_process, KVStoreHandle kvStoreHandle);

/* Profiler objects (handles freed with MXProfileDestroyHandle).  A task,
 * frame or event records one span in the trace from its start to its stop,
 * under its name (category "operator" on the CPU's pid, not its domain's
 * name as in MXNet); counters keep their value and markers are checked and
 * accepted, but neither writes trace events. */
int MXProfileCreateDomain(const char *domain, ProfileHandle *out);
int MXProfileCreateTask(ProfileHandle domain, const char *task_name, ProfileHandle *out);
int MXProfileCreateFrame(ProfileHandle domain, const char *frame_name, ProfileHandle *out);
int MXProfileCreateEvent(const char *event_name, ProfileHandle *out);
int MXProfileCreateCounter(ProfileHandle domain, const char *counter_name, ProfileHandle *out);
int MXProfileDestroyHandle(ProfileHandle frame_handle);
int MXProfileDurationStart(ProfileHandle duration_handle);
int MXProfileDurationStop(ProfileHandle duration_handle);
int MXProfileSetCounter(ProfileHandle counter_handle, uint64_t value);
int MXProfileAdjustCounter(ProfileHandle counter_handle, int64_t value);
int MXProfileSetMarker(ProfileHandle domain, const char *instant_marker_name, const char *scope);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_C_API_H */
