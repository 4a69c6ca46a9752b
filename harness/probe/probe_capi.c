/* Resolving the C API of an implementation, and the entry points whose
 * prototype differs between MXNet releases (probe/probe_internal.h;
 * docs/c-api.md, "Older releases"). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "probe/probe_internal.h"

int mxcts__capi_load(const char *path, struct mxcts_capi *api, char *err, size_t errlen) {
  memset(api, 0, sizeof *api);
  /* RTLD_LOCAL: the implementation's own dependencies stay private to it */
  api->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!api->lib) {
    snprintf(err, errlen, "cannot load %s: %s", path, dlerror());
    return -1;
  }
#define MXCTS_CAPI_RESOLVE(name) *(void **)(&api->name) = dlsym(api->lib, #name);
  MXCTS_CAPI_FUNCTIONS(MXCTS_CAPI_RESOLVE)
  MXCTS_CAPI_RESOLVE(MXEnginePushSync)
  MXCTS_CAPI_RESOLVE(MXNDArrayGetShape)
#undef MXCTS_CAPI_RESOLVE
  return 0;
}

bool mxcts__capi_has(const char *fn, void *ctx) {
  const struct mxcts_capi *api = ctx;
#define MXCTS_CAPI_HAS(name) \
  if (!strcmp(fn, #name)) return api->name != NULL;
  MXCTS_CAPI_FUNCTIONS(MXCTS_CAPI_HAS)
  MXCTS_CAPI_HAS(MXEnginePushSync)
  MXCTS_CAPI_HAS(MXNDArrayGetShape)
#undef MXCTS_CAPI_HAS
  return false;
}

int mxcts__capi_push_marker(const struct mxcts_capi *api, EngineSyncFunc fn, int priority, const char *name) {
  int ctx[2] = {1, 0}, prop = 0; /* cpu(0); FnProperty kNormal */
  if (api->MXEnginePushSyncND)
    return api->MXEnginePushSyncND(fn, NULL, NULL, ctx, NULL, 0, NULL, 0, &prop, priority, name);
  return api->MXEnginePushSync(fn, NULL, NULL, ctx, NULL, 0, NULL, 0, &prop, priority, name);
}

int mxcts__capi_get_shape(const struct mxcts_capi *api, NDArrayHandle a, int *ndim, const int **dims) {
  if (api->MXNDArrayGetShapeEx) return api->MXNDArrayGetShapeEx(a, ndim, dims);
  uint32_t nd = 0;
  const uint32_t *d = NULL;
  int rc = api->MXNDArrayGetShape(a, &nd, &d);
  /* dims are below 2^31 (MXNet's 32-bit element limit): the same bits as int */
  *ndim = (int)nd;
  *dims = (const int *)(const void *)d;
  return rc;
}
