/*
 * mock_old: libmxref with the C API of an MXNet release before 1.5
 * (docs/c-api.md, "Older releases").  It is built from libmxref's objects
 * with a version script (mock_old.map) that leaves MXEnginePushSyncND,
 * MXNDArrayGetShapeEx and MXLibInfoFeatures unexported, and adds the older
 * entry points MXNet 1.4.1 has in their place, with 1.4.1's prototypes:
 *
 *   MXEnginePushSync   engine variables instead of arrays; only calls with
 *                      none are taken here (the probe's pass markers)
 *   MXNDArrayGetShape  mx_uint (uint32_t) dims instead of int
 *
 * mxcts must judge the engine suite unsupported (it needs
 * MXEnginePushSyncND), and run everything else through the older calls.
 * Unlike the other mocks it does not link libmxref.so, which exports the
 * hidden functions: a dlsym through the mock would find them there.
 */
#include <stdint.h>

#include "mxref/c_api.h"
#include "mxref/error.h"

int MXEnginePushSync(EngineSyncFunc fn, void *param, EngineFuncParamDeleter deleter, ContextHandle ctx,
                     void *const_vars, int num_const, void *mutable_vars, int num_mutable,
                     EngineFnPropertyHandle prop, int priority, const char *name);
int MXNDArrayGetShape(NDArrayHandle handle, uint32_t *out_dim, const uint32_t **out_pdata);

int MXEnginePushSync(EngineSyncFunc fn, void *param, EngineFuncParamDeleter deleter, ContextHandle ctx,
                     void *const_vars, int num_const, void *mutable_vars, int num_mutable,
                     EngineFnPropertyHandle prop, int priority, const char *name) {
  (void)const_vars;
  (void)mutable_vars;
  if (num_const != 0 || num_mutable != 0) {
    if (deleter) deleter(param);
    mxr_set_error(MXR_EINVAL, "mock_old: MXEnginePushSync takes no engine variables here (%d, %d given)",
                  num_const, num_mutable);
    return -1;
  }
  return MXEnginePushSyncND(fn, param, deleter, ctx, NULL, 0, NULL, 0, prop, priority, name);
}

int MXNDArrayGetShape(NDArrayHandle handle, uint32_t *out_dim, const uint32_t **out_pdata) {
  static _Thread_local uint32_t dims[8];
  int nd;
  const int *d;
  if (MXNDArrayGetShapeEx(handle, &nd, &d) != 0) return -1;
  for (int i = 0; i < nd && i < 8; i++) dims[i] = (uint32_t)d[i];
  *out_dim = (uint32_t)nd;
  *out_pdata = dims;
  return 0;
}
