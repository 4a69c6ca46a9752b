/*
 * The profiler_contract workload: what MXNet 1.9.1's profiler promises a
 * reader of its output, each judged by a check (docs/probe-protocol.md).
 *
 * - With no profiler call yet (and MXNET_PROFILER_AUTOSTART unset) the
 *   profiler has not run: MXDumpProfile is refused.
 * - One profiled session, aggregate statistics on: an op pushed through
 *   MXEnginePushSyncND that sleeps `sleep_ms` and times its own sleep,
 *   then `adds` elemwise_add and `dots` dot calls on independent outputs
 *   (so that several engine workers, each with its own statistics, run
 *   them); the probe reads the wall clock (CLOCK_REALTIME, MXNet's
 *   system_clock) before configuring and after the final dump.
 * - The trace is Chrome trace JSON: every event has the fields the format
 *   needs (probe.h, mxcts_trace_read_format).
 * - Its timestamps are microseconds since the epoch: every one lies within
 *   the wall-clock window of the session, give or take a second.
 * - Its durations are microseconds: the sleeping op's duration in the trace
 *   is between half and twice, plus 100 ms, the sleep the op timed itself.
 *   Nanoseconds or milliseconds miss by a factor of 1000; a busy machine
 *   stretches both measures alike, and the 100 ms cover a worker
 *   descheduled between the trace's begin and the op's own clock.
 * - MXAggregateProfileStatsPrint's table and MXAggregateProfileStatsPrintEx's
 *   JSON count each op as often as it was called.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe/probe.h"
#include "probe/probe_internal.h"

#define SLEEP_OP "mxcts-sleep"
#define TRACE_FILE "contract-profile.json" /* in the working directory */
#define WALL_SLACK_US 1e6
#define DUR_SLACK_US 100000.0

/* The ops whose statistics are checked, and how often each is called. */
struct counted {
  const char *name;
  long calls;
};

static double wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

struct sleeper {
  long ms;
  double slept_us; /* as the op measured it */
};

static void sleep_and_time(void *rctx, void *param) {
  (void)rctx;
  struct sleeper *s = param;
  struct timespec want = {s->ms / 1000, (s->ms % 1000) * 1000000L};
  double t0 = mono_us();
  while (nanosleep(&want, &want) != 0) {
  }
  s->slept_us = mono_us() - t0;
}

static void check_not_started(struct probe *p) {
  int rc = p->api.MXDumpProfile(0);
  mxcts__probe_add_check(p, "dump_refused_before_start", rc != 0,
                         "MXDumpProfile(0) before any profiler call returned %d (expected -1: the profiler has not "
                         "run, MXNET_PROFILER_AUTOSTART being unset)", rc);
}

static int start_session(struct probe *p) {
  const char *keys[] = {"filename", "continuous_dump", "aggregate_stats"};
  const char *vals[] = {TRACE_FILE, "false", "true"};
  PROBE_CALL(p, MXSetProfilerConfig, 3, keys, vals);
  PROBE_CALL(p, MXSetProfilerState, 1);
  return 0;
}

static int new_array(struct probe *p, uint32_t rows, uint32_t cols, NDArrayHandle *out) {
  uint32_t shape[] = {rows, cols};
  size_t n = (size_t)rows * cols;
  float *x = malloc(n * sizeof *x);
  if (!x) return mxcts__probe_fail(p, "malloc");
  for (size_t i = 0; i < n; i++) x[i] = (float)(i % 7) * 0.25f;
  int rc = p->api.MXNDArrayCreateEx(shape, 2, p->dev_type, 0, 0, 0, out) ? mxcts__probe_fail(p, "MXNDArrayCreateEx") : 0;
  if (!rc && p->api.MXNDArraySyncCopyFromCPU(*out, x, n)) rc = mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU");
  free(x);
  return rc;
}

/* `calls` x op(in, in), each into a new array, freed after the wait. */
static int call_n(struct probe *p, const char *op, long calls, NDArrayHandle in, NDArrayHandle *outs) {
  NDArrayHandle args[2] = {in, in};
  for (long i = 0; i < calls; i++)
    if (mxcts__probe_invoke1(p, op, 2, args, 0, NULL, NULL, &outs[i])) return -1;
  return 0;
}

/* The session's work: the sleeping op, then the counted calls. */
static int run_work(struct probe *p, struct sleeper *s, const struct counted *c, NDArrayHandle vec, NDArrayHandle mat) {
  int ctx[2] = {1, 0}, prop = 0; /* cpu(0), FnProperty::kNormal */
  PROBE_CALL(p, MXEnginePushSyncND, sleep_and_time, s, NULL, ctx, NULL, 0, NULL, 0, &prop, 0, SLEEP_OP);
  PROBE_CALL(p, MXNDArrayWaitAll);
  NDArrayHandle *outs = calloc((size_t)(c[0].calls + c[1].calls) + 1, sizeof *outs);
  if (!outs) return mxcts__probe_fail(p, "calloc");
  int rc = call_n(p, c[0].name, c[0].calls, vec, outs);
  if (!rc) rc = call_n(p, c[1].name, c[1].calls, mat, outs + c[0].calls);
  if (!rc && p->api.MXNDArrayWaitAll()) rc = mxcts__probe_fail(p, "MXNDArrayWaitAll");
  for (long i = 0; i < c[0].calls + c[1].calls; i++)
    if (outs[i]) p->api.MXNDArrayFree(outs[i]);
  free(outs);
  return rc;
}

static void check_trace(struct probe *p, double wall0, double wall1, const struct sleeper *s, const struct counted *c) {
  const char *ops[] = {c[0].name, c[1].name, NULL};
  struct mxcts_trace_format f;
  char err[512];
  if (mxcts_trace_read_format(TRACE_FILE, SLEEP_OP, ops, &f, err, sizeof err)) {
    mxcts__probe_add_check(p, "trace_format", false, "%s", err);
    return;
  }
  mxcts__probe_add_metric(p, "counted_op_threads", f.op_threads);
  mxcts__probe_add_check(p, "trace_format", f.malformed == 0 && f.timed > 0,
                         "%d events, %d with a ts, %d breaking the format%s%s", f.events, f.timed, f.malformed,
                         f.malformed ? ": " : "", f.first_malformed);
  bool inside = f.timed > 0 && f.min_ts >= wall0 - WALL_SLACK_US && f.max_ts <= wall1 + WALL_SLACK_US;
  mxcts__probe_add_check(p, "trace_ts_wall_clock_us", inside,
                         "ts from %.0f to %.0f; the session ran from %.0f to %.0f us since the epoch (1 s slack)",
                         f.min_ts, f.max_ts, wall0, wall1);
  bool fits = f.op_pairs == 1 && f.op_dur >= 0.5 * s->slept_us && f.op_dur <= 2 * s->slept_us + DUR_SLACK_US;
  mxcts__probe_add_check(p, "trace_duration_us", fits,
                         "%s: %d complete event(s), the first %.0f us long; the op timed its own sleep at %.0f us "
                         "(expected one event of 0.5x to 2x that, + 100 ms)",
                         SLEEP_OP, f.op_pairs, f.op_dur, s->slept_us);
}

/* The count of `name` in MXNet's table layout: the "operator" section's
 * rows are "NAME  COUNT  TOTAL  MIN  MAX  AVG".  -1 when absent. */
static long table_count(const char *table, const char *name) {
  const char *sec = strstr(table, "\noperator\n=================\n");
  if (!sec) return -1;
  for (const char *line = strchr(sec + 1, '\n') + 1; *line && *line != '\n'; line = strchr(line, '\n') + 1) {
    char row[256];
    long count;
    if (sscanf(line, "%255s %ld", row, &count) == 2 && strcmp(row, name) == 0) return count;
    if (!strchr(line, '\n')) break;
  }
  return -1;
}

/* The count of `name` in MXNet's JSON layout: Time.operator.NAME.Count. */
static long json_count(json_t *root, const char *name) {
  json_t *n = json_object_get(json_object_get(json_object_get(json_object_get(root, "Time"), "operator"), name), "Count");
  return json_is_number(n) ? (long)json_number_value(n) : -1;
}

static void report_counts(struct probe *p, const char *check, const struct counted *c, long got0, long got1,
                          const char *how) {
  mxcts__probe_add_check(p, check, got0 == c[0].calls && got1 == c[1].calls,
                         "%s: %s %ld, %s %ld (expected %ld and %ld, the calls made; -1: no row)", how, c[0].name,
                         got0, c[1].name, got1, c[0].calls, c[1].calls);
}

static int check_statistics(struct probe *p, const struct counted *c) {
  const char *table = NULL, *js = NULL;
  PROBE_CALL(p, MXAggregateProfileStatsPrint, &table, 0);
  report_counts(p, "aggregate_counts_table", c, table_count(table, c[0].name), table_count(table, c[1].name),
                "MXAggregateProfileStatsPrint's operator table");
  PROBE_CALL(p, MXAggregateProfileStatsPrintEx, &js, 1, 1, 0, 0); /* reset, JSON, by total, descending */
  json_error_t jerr;
  json_t *root = json_loads(js, JSON_DECODE_INT_AS_REAL, &jerr);
  if (!root)
    mxcts__probe_add_check(p, "aggregate_counts_json", false, "MXAggregateProfileStatsPrintEx(format 1): not JSON: %s",
                           jerr.text);
  else
    report_counts(p, "aggregate_counts_json", c, json_count(root, c[0].name), json_count(root, c[1].name),
                  "MXAggregateProfileStatsPrintEx's JSON, Time.operator");
  json_decref(root);
  return 0;
}

int mxcts__probe_profiler_contract(struct probe *p) {
  struct sleeper s = {mxcts__probe_param_long(p, "sleep_ms", 200), 0};
  const struct counted c[2] = {{"elemwise_add", mxcts__probe_param_long(p, "adds", 7)},
                               {"dot", mxcts__probe_param_long(p, "dots", 3)}};
  if (s.ms < 1 || s.ms > 10000 || c[0].calls < 1 || c[0].calls > 1000 || c[1].calls < 1 || c[1].calls > 1000) {
    mxcts__probe_add_check(p, "params", false, "sleep_ms 1..10000, adds and dots 1..1000");
    return -1;
  }
  check_not_started(p);
  NDArrayHandle vec, mat;
  if (new_array(p, 1, 100, &vec) || new_array(p, 64, 64, &mat)) return -1;
  PROBE_CALL(p, MXNDArrayWaitAll);
  double wall0 = wall_us();
  int rc = start_session(p);
  if (!rc) rc = run_work(p, &s, c, vec, mat);
  if (!rc && p->api.MXSetProfilerState(0)) rc = mxcts__probe_fail(p, "MXSetProfilerState");
  if (!rc && p->api.MXDumpProfile(1)) rc = mxcts__probe_fail(p, "MXDumpProfile");
  double wall1 = wall_us();
  p->api.MXNDArrayFree(vec);
  p->api.MXNDArrayFree(mat);
  if (rc) return rc;
  check_trace(p, wall0, wall1, &s, c);
  return check_statistics(p, c);
}
