/* The C API functions each probe workload calls (common/capi_needs.h),
 * from the workload list of common/workloads.h. */
#include "common/capi_needs.h"
#include "common/workloads.h"

#include <string.h>

/* the pass markers: a var-less op through either push call */
static const char *const profile[] = {MXCTS_NEEDS_PROFILER, "MXNDArrayWaitAll",
                                      "MXEnginePushSyncND|MXEnginePushSync", NULL};

#define NEEDS_ARRAY(name, fn, ...) static const char *const needs_##name[] = {__VA_ARGS__, NULL};
MXCTS_WORKLOADS(NEEDS_ARRAY)
#undef NEEDS_ARRAY

static const struct {
  const char *name;
  const char *const *needs;
} table[] = {
#define NEEDS_ROW(name, fn, ...) {#name, needs_##name},
    MXCTS_WORKLOADS(NEEDS_ROW)
#undef NEEDS_ROW
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
