/*
 * Mock: an engine with one planted bug, picked by MOCK_ENGINE_BUG in the
 * probe's environment (test_mocks.c passes it through with --pass-env):
 *
 * - nowait: MXNDArrayWaitToRead and MXNDArrayWaitToWrite return at once,
 *   before the ops they should wait for have ended (MXNDArrayWaitAll still
 *   waits).  Its numbers are right wherever a caller waits with WaitAll;
 *   mxcts must report the engine suite's wait assertions as failures.
 * - serial: the engine runs pushed ops one at a time.  Every
 *   MXEnginePushSyncND also writes one hidden var of the mock's, so no two
 *   pushed ops ever run together, whatever the engine type and
 *   MXNET_CPU_WORKER_NTHREADS say.  Results are right (a serial order is a
 *   valid one); mxcts must report the engine suite's overlap assertions as
 *   failures.
 *
 * Unset or any other value: no bug.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mock.h"

enum { MAX_VARS = 64 };

static bool bug_is(const char *name) {
  const char *bug = getenv("MOCK_ENGINE_BUG");
  return bug && strcmp(bug, name) == 0;
}

int MXNDArrayWaitToRead(NDArrayHandle handle) {
  return bug_is("nowait") ? 0 : MOCK_REAL(MXNDArrayWaitToRead)(handle);
}

int MXNDArrayWaitToWrite(NDArrayHandle handle) {
  return bug_is("nowait") ? 0 : MOCK_REAL(MXNDArrayWaitToWrite)(handle);
}

static NDArrayHandle serial_var;

static int hidden_var(NDArrayHandle *out) {
  if (!serial_var) {
    uint32_t shape[] = {1};
    if (MOCK_REAL(MXNDArrayCreateEx)(shape, 1, 1, 0, 0, 0, &serial_var) != 0) return -1;
  }
  *out = serial_var;
  return 0;
}

/* The mutable vars plus the hidden one, into `out` (MAX_VARS + 1). */
static int with_hidden_var(NDArrayHandle *mutable_nds, int n, NDArrayHandle *out, const char *opr_name) {
  if (n < 0 || n > MAX_VARS) {
    fprintf(stderr, "mock_engine: %d mutable vars in %s (at most %d)\n", n, opr_name ? opr_name : "an op",
            MAX_VARS);
    return -1;
  }
  if (n) memcpy(out, mutable_nds, (size_t)n * sizeof *out);
  return hidden_var(&out[n]);
}

int MXEnginePushSyncND(EngineSyncFunc sync_func, void *func_param, EngineFuncParamDeleter deleter,
                       ContextHandle ctx_handle, NDArrayHandle *const_nds_handle, int num_const_nds,
                       NDArrayHandle *mutable_nds_handle, int num_mutable_nds,
                       EngineFnPropertyHandle prop_handle, int priority, const char *opr_name) {
  NDArrayHandle mutable_nds[MAX_VARS + 1];
  bool serial = bug_is("serial");
  if (serial && with_hidden_var(mutable_nds_handle, num_mutable_nds, mutable_nds, opr_name)) {
    if (deleter) deleter(func_param);
    return -1;
  }
  return MOCK_REAL(MXEnginePushSyncND)(sync_func, func_param, deleter, ctx_handle, const_nds_handle,
                                       num_const_nds, serial ? mutable_nds : mutable_nds_handle,
                                       num_mutable_nds + serial, prop_handle, priority, opr_name);
}
