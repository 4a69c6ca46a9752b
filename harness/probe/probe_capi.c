/* Resolving the C API of an implementation (probe/probe_internal.h). */
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
#define MXCTS_CAPI_RESOLVE(name)                                                        \
  *(void **)(&api->name) = dlsym(api->lib, #name);                                      \
  if (!api->name) {                                                                     \
    snprintf(err, errlen, "%s does not export %s, which the probe needs", path, #name); \
    return -1;                                                                          \
  }
  MXCTS_CAPI_REQUIRED(MXCTS_CAPI_RESOLVE)
#undef MXCTS_CAPI_RESOLVE
#define MXCTS_CAPI_OPTIONAL_RESOLVE(name) *(void **)(&api->name) = dlsym(api->lib, #name);
  MXCTS_CAPI_OPTIONAL(MXCTS_CAPI_OPTIONAL_RESOLVE)
#undef MXCTS_CAPI_OPTIONAL_RESOLVE
  return 0;
}
