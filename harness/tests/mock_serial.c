/*
 * Mock: the engine runs pushed ops one at a time.  Every MXEnginePushSyncND
 * also writes one hidden var of the mock's, so no two pushed ops ever run
 * together, whatever the engine type and MXNET_CPU_WORKER_NTHREADS say.
 * Results are right (a serial order is a valid one); mxcts must report the
 * engine suite's overlap assertions as failures.
 */
#include <string.h>

#include "mock.h"

enum { MAX_VARS = 64 };

static NDArrayHandle serial_var;

static int hidden_var(NDArrayHandle *out) {
  if (!serial_var) {
    uint32_t shape[] = {1};
    if (MOCK_REAL(MXNDArrayCreateEx)(shape, 1, 1, 0, 0, 0, &serial_var) != 0) return -1;
  }
  *out = serial_var;
  return 0;
}

int MXEnginePushSyncND(EngineSyncFunc sync_func, void *func_param, EngineFuncParamDeleter deleter,
                       ContextHandle ctx_handle, NDArrayHandle *const_nds_handle, int num_const_nds,
                       NDArrayHandle *mutable_nds_handle, int num_mutable_nds,
                       EngineFnPropertyHandle prop_handle, int priority, const char *opr_name) {
  NDArrayHandle mutable_nds[MAX_VARS + 1];
  if (num_mutable_nds < 0 || num_mutable_nds > MAX_VARS) {
    fprintf(stderr, "mock_serial: %d mutable vars in %s (at most %d)\n", num_mutable_nds,
            opr_name ? opr_name : "an op", MAX_VARS);
    if (deleter) deleter(func_param);
    return -1;
  }
  if (num_mutable_nds) memcpy(mutable_nds, mutable_nds_handle, (size_t)num_mutable_nds * sizeof *mutable_nds);
  if (hidden_var(&mutable_nds[num_mutable_nds])) {
    if (deleter) deleter(func_param);
    return -1;
  }
  return MOCK_REAL(MXEnginePushSyncND)(sync_func, func_param, deleter, ctx_handle, const_nds_handle,
                                       num_const_nds, mutable_nds, num_mutable_nds + 1, prop_handle,
                                       priority, opr_name);
}
