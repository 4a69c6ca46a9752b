/*
 * fake_probe: a stand-in for mxcts-probe that speaks the probe protocol
 * (docs/probe-protocol.md) without loading any library, so the runner and
 * the judge can be tested on every outcome quickly and deterministically.
 *
 *   fake_probe --impl LIB --workload W [--param k=v ...] --seed S --out FILE
 *              [--profile DIR]
 *
 * Its behaviour comes from its environment (a suite config's env), so that
 * configs of one suite can differ:
 *   FAKE_MODE     ok (default) | crash (SIGSEGV) | hang (sleeps 60 s) |
 *                 error (status "error", exit 0) | exit (exit 3, no result) |
 *                 malformed (broken JSON, exit 0) | usage (exit 2) |
 *                 unsupported (status "unsupported", "missing": [MXFakeCall],
 *                 exit 0)
 *   FAKE_AT_EXIT  after writing a complete result: crash (SIGSEGV), hang
 *                 (sleeps 60 s) or status (exit 4); unset: exit 0
 *   FAKE_ID       a name mixed into the noise stream (give each config one)
 *   FAKE_MS       median of the timed iterations in ms (default 1)
 *   FAKE_NOISE    relative spread: the median is FAKE_MS * exp(NOISE * z)
 *   FAKE_OUTLIER  probability that a process is 3x slower (a noisy neighbour)
 *   FAKE_FLAKY_FILE, FAKE_FLAKY_COUNT, FAKE_MS_FIRST: the first COUNT runs
 *                 (counted in the file) report FAKE_MS_FIRST instead
 *   FAKE_CAP, FAKE_OPS   structure runs report forward and backward passes
 *                 of FAKE_OPS ops bulked with cap FAKE_CAP ("off": alone)
 *   FAKE_GRAPHS   structure runs report that many CUDA graph launches per
 *                 pass, none of them captures (absent: no graph counts)
 *   FAKE_SALT     changes the output digest (for "equal")
 *   FAKE_FAIL_CHECK  the name of a check to report as failing
 *   FAKE_TRACE    1: leave a valid profile.json in the working directory;
 *                 bad: leave a broken one
 *   FAKE_METRIC_A, FAKE_METRIC_B  numbers reported as metrics.a, metrics.b
 *   FAKE_SLEEP_MS how long the process lives (default 2 ms)
 *   FAKE_CONTENTION  reported as sched.contention (how busy the machine was)
 *   FAKE_BUSY_P   probability (seeded like the noise) that a process reports
 *                 a contention of 1.5 cores instead
 *   FAKE_GPUS     workload gpu_count: the count to report (default 0), or
 *                 "crash" (SIGSEGV)
 *   FAKE_ERROR_TEXT  the error text of FAKE_MODE=error
 *   FAKE_PID_DIR  at start, create DIR/PID (so a test can see it run)
 *   FAKE_HANG_UNLESS  a path: sleep 60 s first unless it exists
 *   FAKE_ORPHAN   1: fork a child that leaves the process group (setsid),
 *                 creates FAKE_PID_DIR/PID.orphan and sleeps 300 s
 * The --impl file may begin with "fake-scale X": every timing is then
 * multiplied by X (two such files stand for a slower and a faster library
 * in `mxcts compare`'s tests); any other file is ignored.
 * --probe PATH (what mxcts gives a Python probe script) is accepted and
 * recorded as "fake_probe_arg", so fake_probe also stands in for one.
 * The result also records the process' whole environment ("fake_environ")
 * and its start and end times ("fake_start", "fake_end", CLOCK_REALTIME s).
 */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"

/* Die by SIGSEGV in every build: a sanitizer's handler would turn the
 * signal into its report and an abort, so the default action is put back
 * first. */
static void crash(void) {
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
}

extern char **environ;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *env_or(const char *name, const char *def) {
  const char *v = getenv(name);
  return v && *v ? v : def;
}

static uint64_t hash(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return h;
}

static double uniform(uint64_t *state) {
  *state = mxcts_mix64(*state);
  return ((double)(*state >> 11) + 0.5) / 9007199254740992.0;
}

/* The number of earlier runs counted in FAKE_FLAKY_FILE (and count this one). */
static long flaky_count(void) {
  const char *file = getenv("FAKE_FLAKY_FILE");
  if (!file) return -1;
  FILE *f = fopen(file, "a+");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fputc('x', f);
  fclose(f);
  return n;
}

static double impl_scale = 1.0; /* from the --impl file */

static void read_impl_scale(const char *path) {
  FILE *f = fopen(path, "r");
  double x;
  if (f && fscanf(f, "fake-scale %lf", &x) == 1 && x > 0) impl_scale = x;
  if (f) fclose(f);
}

static double timing_ms(long seed) {
  double ms = impl_scale * atof(env_or("FAKE_MS", "1"));
  long first = atol(env_or("FAKE_FLAKY_COUNT", "0")), count = flaky_count();
  if (count >= 0 && count < first) ms = atof(env_or("FAKE_MS_FIRST", "1"));
  uint64_t state = hash(mxcts_mix64((uint64_t)seed), env_or("FAKE_ID", "-"));
  double u1 = uniform(&state), u2 = uniform(&state), u3 = uniform(&state);
  double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
  ms *= exp(atof(env_or("FAKE_NOISE", "0")) * z);
  if (u3 < atof(env_or("FAKE_OUTLIER", "0"))) ms *= 3;
  return ms;
}

static json_t *pass_json(const char *name, long ops, const char *cap_s) {
  json_t *sizes = json_array();
  long cap = strcmp(cap_s, "off") ? atol(cap_s) : 1;
  if (cap < 1) cap = 1;
  for (long done = 0; done < ops; done += cap)
    json_array_append_new(sizes, json_integer(ops - done < cap ? ops - done : cap));
  json_t *pass = json_pack("{s:s, s:I, s:o, s:i}", "name", name, "engine_ops",
                           (json_int_t)json_array_size(sizes), "segment_sizes", sizes,
                           "bulked_events", 0);
  const char *graphs = getenv("FAKE_GRAPHS");
  if (graphs) {
    json_object_set_new(pass, "graph_launches", json_integer(atol(graphs)));
    json_object_set_new(pass, "graph_captures", json_integer(0));
  }
  return pass;
}

static void leave_trace(void) {
  const char *t = getenv("FAKE_TRACE");
  if (!t) return;
  FILE *f = fopen("profile.json", "w");
  if (!f) return;
  if (!strcmp(t, "bad")) fputs("{\"traceEvents\": [", f);
  else fputs("{\"traceEvents\": [{\"name\": \"[reverse,reverse]\", \"ph\": \"B\", \"ts\": 1, "
             "\"pid\": 0, \"tid\": 0}, {\"name\": \"[reverse,reverse]\", \"ph\": \"E\", \"ts\": 2, "
             "\"pid\": 0, \"tid\": 0}], \"displayTimeUnit\": \"ms\"}\n", f);
  fclose(f);
}

static const char *probe_arg; /* --probe, when given */

static json_t *environ_json(void) {
  json_t *o = json_object();
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq) continue;
    char *key = strndup(*e, (size_t)(eq - *e));
    json_object_set_new(o, key, json_string(eq + 1));
    free(key);
  }
  return o;
}

static json_t *result(long seed, const char *workload, const char *profile, double start) {
  const char *mode = env_or("FAKE_MODE", "ok");
  json_t *r = json_pack("{s:i, s:s, s:I, s:s, s:n, s:{s:s, s:i, s:{s:b, s:b}}}", "probe_version", 1,
                        "workload", workload, "seed", (json_int_t)seed, "status", "ok", "error", "impl",
                        "path", "fake", "version", 10901, "features", "CPU_SSE", 1, "CUDA", 0);
  if (!strcmp(mode, "error")) {
    json_object_set_new(r, "status", json_string("error"));
    const char *text = getenv("FAKE_ERROR_TEXT"); /* e.g. control characters or a long text */
    json_object_set_new(r, "error", json_string(text ? text : "MXExecutorForward failed: fake failure"));
  }
  if (!strcmp(mode, "unsupported")) {
    json_object_set_new(r, "status", json_string("unsupported"));
    json_object_set_new(r, "error", json_string("fake does not export MXFakeCall, which workload fake calls"));
    json_object_set_new(r, "missing", json_pack("[s]", "MXFakeCall"));
  }
  double ms = timing_ms(seed);
  json_object_set_new(r, "timing", json_pack("{s:s, s:[f, f], s:f}", "unit", "ms", "iterations",
                                             ms, ms, "median", ms));
  char digest[64];
  snprintf(digest, sizeof digest, "fnv1a64:%016llx",
           (unsigned long long)hash(mxcts_mix64((uint64_t)seed), env_or("FAKE_SALT", "")));
  json_object_set_new(r, "values", json_pack("{s:{s:i, s:b, s:s}}", "output", "n", 10, "finite", 1,
                                             "digest", digest));
  const char *failing = env_or("FAKE_FAIL_CHECK", "");
  json_object_set_new(r, "checks", json_pack("[{s:s, s:b, s:s}, {s:s, s:b, s:s}]", "name",
                                             "output_is_flipped_input", "pass", strcmp(failing, "output_is_flipped_input") != 0,
                                             "detail", "max |diff| 0", "name", "second_check", "pass",
                                             strcmp(failing, "second_check") != 0, "detail", ""));
  json_object_set_new(r, "metrics", json_pack("{s:f, s:f}", "a", atof(env_or("FAKE_METRIC_A", "1")),
                                              "b", atof(env_or("FAKE_METRIC_B", "1"))));
  if (profile) {
    long ops = atol(env_or("FAKE_OPS", "100"));
    const char *cap = env_or("FAKE_CAP", "15");
    json_object_set_new(r, "structure", json_pack("{s:[o, o]}", "passes", pass_json("forward", ops, cap),
                                                  pass_json("backward", ops, cap)));
    json_object_del(r, "timing");
  }
  json_object_set_new(r, "fake_environ", environ_json());
  if (probe_arg) json_object_set_new(r, "fake_probe_arg", json_string(probe_arg));
  json_object_set_new(r, "fake_start", json_real(start));
  json_object_set_new(r, "fake_end", json_real(now_s()));
  return r;
}

/* Whether this process reports a busy machine (FAKE_BUSY_P). */
static bool busy(long seed) {
  uint64_t state = hash(mxcts_mix64((uint64_t)seed ^ 0x62757379ULL), env_or("FAKE_ID", "-"));
  return uniform(&state) < atof(env_or("FAKE_BUSY_P", "0"));
}

/* FAKE_AT_EXIT: how the process ends after its result is written. */
static int die_at_exit(void) {
  const char *how = env_or("FAKE_AT_EXIT", "");
  if (!strcmp(how, "crash")) crash();
  if (!strcmp(how, "hang")) sleep(60);
  return strcmp(how, "status") ? 0 : 4;
}

/* FAKE_PID_DIR/PID<suffix>, an empty file. */
static void leave_pid(long pid, const char *suffix) {
  const char *dir = getenv("FAKE_PID_DIR");
  if (!dir) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%ld%s", dir, pid, suffix);
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
}

/* FAKE_ORPHAN: a descendant that escapes the process group (its pid file
 * is written before the probe goes on, so a test always finds it). */
static void leave_orphan(void) {
  if (strcmp(env_or("FAKE_ORPHAN", "0"), "1") != 0) return;
  pid_t child = fork();
  if (child == 0) {
    setsid();
    sleep(300);
    _exit(0);
  }
  if (child > 0) leave_pid(child, ".orphan");
}

int main(int argc, char **argv) {
  double start = now_s();
  leave_pid(getpid(), "");
  leave_orphan();
  const char *hang_unless = getenv("FAKE_HANG_UNLESS");
  if (hang_unless && access(hang_unless, F_OK) != 0) sleep(60);
  const char *out = NULL, *workload = "fake", *profile = NULL;
  long seed = 0;
  static const struct option opts[] = {
      {"impl", required_argument, NULL, 'i'},  {"workload", required_argument, NULL, 'w'},
      {"param", required_argument, NULL, 'p'}, {"seed", required_argument, NULL, 's'},
      {"out", required_argument, NULL, 'o'},   {"profile", required_argument, NULL, 'P'},
      {"probe", required_argument, NULL, 'b'}, {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c == 'i') read_impl_scale(optarg);
    else if (c == 'w') workload = optarg;
    else if (c == 's') seed = atol(optarg);
    else if (c == 'o') out = optarg;
    else if (c == 'P') profile = optarg;
    else if (c == 'b') probe_arg = optarg;
    else if (c == '?') return 2;
  }
  const char *mode = env_or("FAKE_MODE", "ok");
  if (!out || !strcmp(mode, "usage")) return 2;
  if (!strcmp(mode, "crash")) crash();
  if (!strcmp(mode, "hang")) sleep(60);
  if (!strcmp(mode, "exit")) {
    fputs("fake_probe: exiting with status 3 as asked\n", stderr);
    return 3;
  }
  if (!strcmp(mode, "malformed")) {
    FILE *f = fopen(out, "w");
    if (f) fputs("{\"probe_version\": 1, \"status\": \"ok\", \"timing\": {\"median\": ", f), fclose(f);
    return 0;
  }
  leave_trace();
  usleep((useconds_t)(1000 * atof(env_or("FAKE_SLEEP_MS", "2"))));
  json_t *r = result(seed, workload, profile, start);
  const char *contention = getenv("FAKE_CONTENTION");
  if (contention && *contention)
    json_object_set_new(r, "sched", json_pack("{s:f}", "contention", atof(contention)));
  if (busy(seed)) json_object_set_new(r, "sched", json_pack("{s:f}", "contention", 1.5));
  if (strcmp(workload, "gpu_count") == 0) {
    const char *gpus = env_or("FAKE_GPUS", "0");
    if (strcmp(gpus, "crash") == 0) crash();
    json_object_set_new(r, "metrics", json_pack("{s:i}", "gpu_count", atoi(gpus)));
  }
  int rc = json_dump_file(r, out, JSON_INDENT(1));
  json_decref(r);
  return rc ? 1 : die_at_exit();
}
