/* C API: the profiler (a thin layer over mxref/profiler.h). */
#include <stdlib.h>

#include "capi/capi_internal.h"
#include "mxref/profiler.h"

int MXSetProfilerConfig(int num_params, const char *const *keys, const char *const *vals) {
  static const char fn[] = "MXSetProfilerConfig";
  if (num_params < 0)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: negative number of parameters (%d)", fn, num_params));
  if (num_params > 0 && (!keys || !vals)) return capi_ret(mxr__capi_null(fn, "keys or vals"));
  return capi_ret(mxr_profiler_set_config(num_params, keys, vals));
}

int MXSetProfilerState(int state) { return capi_ret(mxr_profiler_set_state(state)); }

int MXProfilePause(int paused) { return capi_ret(mxr_profiler_pause(paused)); }

int MXDumpProfile(int finished) { return capi_ret(mxr_profiler_dump(finished)); }

/* The statistics text lives in the thread's buffer until the next call. */
static int keep_stats(char *text, const char **out_str) {
  struct capi_tls *t = mxr__capi_tls();
  if (!t) {
    free(text);
    return -1;
  }
  free(t->stats);
  t->stats = text;
  *out_str = text;
  return 0;
}

int MXAggregateProfileStatsPrint(const char **out_str, int reset) {
  if (!out_str) return capi_ret(mxr__capi_null("MXAggregateProfileStatsPrint", "out_str"));
  char *text = NULL;
  if (mxr_profiler_aggregate_print(reset, &text)) return -1;
  return keep_stats(text, out_str);
}

int MXAggregateProfileStatsPrintEx(const char **out_str, int reset, int format, int sort_by,
                                   int ascending) {
  if (!out_str) return capi_ret(mxr__capi_null("MXAggregateProfileStatsPrintEx", "out_str"));
  char *text = NULL;
  if (mxr_profiler_aggregate_print_ex(reset, format, sort_by, ascending, &text)) return -1;
  return keep_stats(text, out_str);
}

/* The process variants: profile_process 0 is this process (the worker);
 * 1, a kvstore server's, needs a distributed kvstore libmxref lacks. */
static int local_only(const char *fn, int profile_process, KVStoreHandle kv) {
  if (profile_process == 0 && !kv) return 0;
  return mxr_set_error(MXR_ENOTIMPL,
                       "%s: profiling a kvstore server (profile_process %d, kvstore %p) is not "
                       "implemented by libmxref",
                       fn, profile_process, kv);
}

int MXSetProcessProfilerConfig(int num_params, const char *const *keys, const char *const *vals,
                               KVStoreHandle kvstoreHandle) {
  if (local_only("MXSetProcessProfilerConfig", 0, kvstoreHandle)) return -1;
  return MXSetProfilerConfig(num_params, keys, vals);
}

int MXSetProcessProfilerState(int state, int profile_process, KVStoreHandle kvStoreHandle) {
  if (local_only("MXSetProcessProfilerState", profile_process, kvStoreHandle)) return -1;
  return MXSetProfilerState(state);
}

int MXDumpProcessProfile(int finished, int profile_process, KVStoreHandle kvStoreHandle) {
  if (local_only("MXDumpProcessProfile", profile_process, kvStoreHandle)) return -1;
  return MXDumpProfile(finished);
}

int MXProcessProfilePause(int paused, int profile_process, KVStoreHandle kvStoreHandle) {
  if (local_only("MXProcessProfilePause", profile_process, kvStoreHandle)) return -1;
  return MXProfilePause(paused);
}
