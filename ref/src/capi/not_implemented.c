/*
 * C API: MXNet 1.9.1 functions the Python frontend calls for features
 * libmxref does not have.  Each one checks nothing and fails with "<what>
 * is not implemented by libmxref" (MXR_ENOTIMPL), so a program that uses
 * the feature learns it from the library, never from a missing symbol or a
 * wrong result.
 */
#include "capi/capi_internal.h"

static int not_implemented(const char *fn, const char *what) {
  return capi_ret(mxr_set_error(MXR_ENOTIMPL, "%s: %s is not implemented by libmxref", fn, what));
}

int MXCustomFunctionRecord(int num_inputs, NDArrayHandle *inputs, int num_outputs,
                           NDArrayHandle *outputs, struct MXCallbackList *callbacks) {
  (void)num_inputs, (void)inputs, (void)num_outputs, (void)outputs, (void)callbacks;
  return not_implemented("MXCustomFunctionRecord", "autograd.Function (a custom backward)");
}

int MXAutogradGetSymbol(NDArrayHandle handle, SymbolHandle *out) {
  (void)handle, (void)out;
  return not_implemented("MXAutogradGetSymbol", "the symbol of a recorded computation");
}

int MXNDArrayCreateSparseEx(int storage_type, const uint32_t *shape, uint32_t ndim, int dev_type,
                            int dev_id, int delay_alloc, int dtype, uint32_t num_aux, int *aux_type,
                            uint32_t *aux_ndims, const uint32_t *aux_shape, NDArrayHandle *out) {
  (void)storage_type, (void)shape, (void)ndim, (void)dev_type, (void)dev_id, (void)delay_alloc,
      (void)dtype, (void)num_aux, (void)aux_type, (void)aux_ndims, (void)aux_shape, (void)out;
  return not_implemented("MXNDArrayCreateSparseEx", "sparse storage");
}

int MXExecutorReshapeEx(int partial_shaping, int allow_up_sizing, int dev_type, int dev_id,
                        uint32_t num_map_keys, const char **map_keys, const int *map_dev_types,
                        const int *map_dev_ids, const uint32_t num_provided_arg_shapes,
                        const char **provided_arg_shape_names, const int *provided_arg_shape_data,
                        const uint32_t *provided_arg_shape_idx, uint32_t *num_in_args,
                        NDArrayHandle **in_args, NDArrayHandle **arg_grads,
                        uint32_t *num_aux_states, NDArrayHandle **aux_states,
                        ExecutorHandle shared_exec, ExecutorHandle *out) {
  (void)partial_shaping, (void)allow_up_sizing, (void)dev_type, (void)dev_id, (void)num_map_keys,
      (void)map_keys, (void)map_dev_types, (void)map_dev_ids, (void)num_provided_arg_shapes,
      (void)provided_arg_shape_names, (void)provided_arg_shape_data, (void)provided_arg_shape_idx,
      (void)num_in_args, (void)in_args, (void)arg_grads, (void)num_aux_states, (void)aux_states,
      (void)shared_exec, (void)out;
  return not_implemented("MXExecutorReshapeEx", "reshaping a bound executor");
}

int MXExecutorSetMonitorCallbackEX(ExecutorHandle handle, ExecutorMonitorCallback callback,
                                   void *callback_handle, bool monitor_all) {
  (void)handle, (void)callback, (void)callback_handle, (void)monitor_all;
  return not_implemented("MXExecutorSetMonitorCallbackEX", "an executor monitor callback");
}

int MXCachedOpRegisterOpHook(NDArrayHandle handle, CachedOpMonitorCallback callback, bool monitor_all) {
  (void)handle, (void)callback, (void)monitor_all;
  return not_implemented("MXCachedOpRegisterOpHook", "a cached op monitor callback");
}

int MXNDArraySaveRawBytes(NDArrayHandle handle, size_t *out_size, const char **out_buf) {
  (void)handle, (void)out_size, (void)out_buf;
  return not_implemented("MXNDArraySaveRawBytes", "NDArray serialization (pickle, deepcopy)");
}

int MXNDArrayLoadFromRawBytes(const void *buf, size_t size, NDArrayHandle *out) {
  (void)buf, (void)size, (void)out;
  return not_implemented("MXNDArrayLoadFromRawBytes", "NDArray serialization (pickle, deepcopy)");
}
