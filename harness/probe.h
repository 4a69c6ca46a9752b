/*
 * mxcts-probe internals: one workload, one process, one JSON result
 * (docs/probe-protocol.md).  Every C API return code is checked; a failure
 * stops the workload with status "error", the call and MXGetLastError's
 * text recorded.
 */
#ifndef MXCTS_PROBE_H
#define MXCTS_PROBE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "probe_capi.h"

#define PROBE_MAX_PARAMS 32

struct probe {
  struct mxcts_capi api;
  const char *impl_path;
  const char *workload;
  const char *profile_dir; /* NULL: no structure run */
  int dev_type;            /* --param device=cpu|gpu: MXNet's 1 or 2, id 0 */
  uint64_t seed;
  int nparams;
  const char *keys[PROBE_MAX_PARAMS], *vals[PROBE_MAX_PARAMS];
  json_t *result;          /* the result object being filled */
  bool failed;             /* a C API call failed: status error */
  /* profiling: one session for all passes, each pass ended by a marker op
   * (MXNet's profiler cannot write two traces in one process) */
  bool profiling;
  int npasses;
  const char *passes[8];
};

/* Record a failed call (status "error") and return -1. */
int probe_fail(struct probe *p, const char *call);

/* Call a C API function; on -1 record it and return -1 from the caller. */
#define PROBE_CALL(p, fn, ...)                                   \
  do {                                                           \
    if ((p)->api.fn(__VA_ARGS__) != 0) return probe_fail((p), #fn); \
  } while (0)

/* Parameters (--param k=v) with defaults. */
long probe_param_long(const struct probe *p, const char *key, long def);
const char *probe_param_str(const struct probe *p, const char *key, const char *def);

/* Result helpers. */
void probe_set_timing(struct probe *p, const double *ms, int n);
void probe_add_metric(struct probe *p, const char *name, double value);
void probe_add_check(struct probe *p, const char *name, bool pass, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void probe_add_values(struct probe *p, const char *name, const float *x, int64_t n);
/* Profile passes: begin starts the profiler (once) writing
 * <profile_dir>/profile.json; end waits for the pass's ops and pushes its
 * marker op; probe_profile_finish (run by main after the workload) stops,
 * dumps, parses and adds every pass's structure. */
int probe_profile_begin(struct probe *p, const char *pass);
int probe_profile_end(struct probe *p, const char *pass);
int probe_profile_finish(struct probe *p);

/* --param pin=split: put the calling thread on one CPU and the process'
 * other threads on the rest (probe_pin.c); call before each timed
 * iteration.  Records "pinning" in the result.  No-op for pin=none. */
void probe_pin_threads(struct probe *p);

double probe_now_ms(void);
/* CPU seconds this process (all its threads) has used (getrusage). */
double probe_own_cpu_s(void);
uint64_t probe_rand(uint64_t *state);
double probe_uniform(uint64_t *state);

/* Workloads: each returns 0 (ran to the end) or -1 (a call failed). */
int probe_symbolic_flip_chain(struct probe *p);
int probe_cachedop_flip_chain(struct probe *p);
int probe_imperative_flips(struct probe *p);
int probe_inference_flip_chain(struct probe *p);
int probe_engine_random(struct probe *p);
int probe_async_dot(struct probe *p);
int probe_numerics(struct probe *p);
int probe_parity(struct probe *p); /* cpu(0) against gpu(0), same cases */
int probe_profiler_autostart(struct probe *p);
int probe_gpu_count(struct probe *p);

#endif /* MXCTS_PROBE_H */
