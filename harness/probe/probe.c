/*
 * mxcts-probe: run one workload against one implementation, in the
 * environment this process was started with, and write the JSON result of
 * docs/probe-protocol.md.
 */
#include <errno.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/capi_needs.h"
#include "common/workloads.h"
#include "probe/probe.h"
#include "probe/probe_internal.h"

extern char **environ;

/* ------------------------------------------------------------- helpers */

double mxcts__probe_now_ms(void) { return mxcts_now() * 1e3; }

void mxcts__probe_set_status(struct probe *p, const char *status, const char *error) {
  char *clean = mxcts_clean_text(error);
  json_object_set_new(p->result, "status", json_string(status));
  json_object_set_new(p->result, "error", json_string(clean));
  free(clean);
}

int mxcts__probe_fail(struct probe *p, const char *call) {
  if (!p->failed) {
    const char *msg = p->api.MXGetLastError ? p->api.MXGetLastError() : "";
    char *text = mxcts_xasprintf("%s failed: %s", call, msg ? msg : "");
    mxcts__probe_set_status(p, "error", text);
    free(text);
    p->failed = true;
  }
  return -1;
}

const char *mxcts__probe_param_str(const struct probe *p, const char *key, const char *def) {
  for (int i = p->nparams - 1; i >= 0; i--)
    if (strcmp(p->keys[i], key) == 0) return p->vals[i];
  return def;
}

long mxcts__probe_param_long(const struct probe *p, const char *key, long def) {
  const char *v = mxcts__probe_param_str(p, key, NULL);
  return v ? strtol(v, NULL, 10) : def;
}

/* Run-queue delay of every thread of this process so far, in ns: how long
 * they were ready to run but waited for a CPU (field 2 of
 * /proc/self/task/TID/schedstat).  False where the kernel does not say. */
static bool run_delay_ns(double *out) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return false;
  double sum = 0;
  bool any = false;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%.20s/schedstat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue; /* the thread has just exited */
    unsigned long long run, delay;
    if (fscanf(f, "%llu %llu", &run, &delay) == 2) {
      sum += (double)delay;
      any = true;
    }
    fclose(f);
  }
  closedir(d);
  *out = sum;
  return any;
}

/* CPU seconds the whole machine has been busy (user, nice, system, irq,
 * softirq, and steal: time the hypervisor gave our CPUs to someone else),
 * from the first line of /proc/stat.  False where it cannot be read. */
static bool machine_busy_s(double *out) {
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return false;
  unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
  int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle,
                 &iowait, &irq, &softirq, &steal);
  fclose(f);
  long hz = sysconf(_SC_CLK_TCK);
  if (n != 8 || hz <= 0) return false;
  *out = (double)(user + nice + sys + irq + softirq + steal) / (double)hz;
  return true;
}

double mxcts__probe_own_cpu_s(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

struct sched_mark {
  double wall_ms, delay_ns, busy_s, own_s;
  bool have_delay, have_busy;
};

static void sched_mark(struct sched_mark *m) {
  m->wall_ms = mxcts__probe_now_ms();
  m->have_delay = run_delay_ns(&m->delay_ns);
  m->have_busy = machine_busy_s(&m->busy_s);
  m->own_s = mxcts__probe_own_cpu_s();
}

/* How busy the machine was around this process while the workload ran:
 * `contention`, the CPU time everything else used meanwhile, in cores (0 on
 * an otherwise idle machine, about 1 with a CPU hog on one core; /proc/stat
 * counts in clock ticks, so short workloads read it to about +-0.2), and
 * `run_delay_ms`, how long this process' threads waited for a CPU
 * (informational: an implementation's own spinning threads add to it).
 * The judge can leave contended rounds out of timing comparisons. */
static void add_sched(struct probe *p, const struct sched_mark *m0) {
  struct sched_mark m1;
  sched_mark(&m1);
  double wall_ms = m1.wall_ms - m0->wall_ms;
  if (!(wall_ms > 0)) return;
  json_t *o = json_pack("{s:f}", "wall_ms", wall_ms);
  if (m0->have_delay && m1.have_delay)
    json_object_set_new(o, "run_delay_ms",
                        json_real(m1.delay_ns > m0->delay_ns ? (m1.delay_ns - m0->delay_ns) / 1e6 : 0));
  if (m0->have_busy && m1.have_busy) {
    double elsewhere_s = (m1.busy_s - m0->busy_s) - (m1.own_s - m0->own_s);
    json_object_set_new(o, "contention", json_real(elsewhere_s > 0 ? elsewhere_s * 1e3 / wall_ms : 0));
  }
  json_object_set_new(o, "cpu_ms", json_real((m1.own_s - m0->own_s) * 1e3));
  json_object_set_new(p->result, "sched", o);
}

/* How many GPUs the implementation reports: mxcts asks once before it
 * plans suites that need a GPU. */
static int gpu_count(struct probe *p) {
  int n = 0;
  PROBE_CALL(p, MXGetGPUCount, &n);
  mxcts__probe_add_metric(p, "gpu_count", n);
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void mxcts__probe_set_timing(struct probe *p, const double *ms, int n) {
  json_t *t = json_object(), *arr = json_array();
  double *sorted = malloc((size_t)(n > 0 ? n : 1) * sizeof *sorted);
  for (int i = 0; i < n; i++) {
    json_array_append_new(arr, json_real(ms[i]));
    sorted[i] = ms[i];
  }
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
  double median = n == 0 ? 0 : n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  free(sorted);
  json_object_set_new(t, "unit", json_string("ms"));
  json_object_set_new(t, "iterations", arr);
  json_object_set_new(t, "median", json_real(median));
  json_object_set_new(p->result, "timing", t);
}

void mxcts__probe_add_metric(struct probe *p, const char *name, double value) {
  json_t *m = json_object_get(p->result, "metrics");
  if (!m) {
    m = json_object();
    json_object_set_new(p->result, "metrics", m);
  }
  json_object_set_new(m, name, json_real(value));
}

void mxcts__probe_add_check(struct probe *p, const char *name, bool pass, const char *fmt, ...) {
  struct mxcts_buf detail = {0};
  va_list ap;
  va_start(ap, fmt);
  mxcts_buf_vprintf(&detail, fmt, ap);
  va_end(ap);
  char *clean = mxcts_clean_text(mxcts_buf_str(&detail)); /* it may quote the library's messages */
  json_t *c = json_object();
  json_object_set_new(c, "name", json_string(name));
  json_object_set_new(c, "pass", json_boolean(pass));
  json_object_set_new(c, "detail", json_string(clean));
  json_array_append_new(json_object_get(p->result, "checks"), c);
  free(clean);
  mxcts_buf_free(&detail);
}

void mxcts__probe_add_values(struct probe *p, const char *name, const float *x, int64_t n) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 over the bytes */
  const unsigned char *b = (const unsigned char *)x;
  bool finite = true;
  for (int64_t i = 0; i < n * (int64_t)sizeof(float); i++) h = (h ^ b[i]) * 0x100000001b3ull;
  json_t *sample = json_array();
  for (int64_t i = 0; i < n; i++) {
    finite &= x[i] == x[i] && x[i] - x[i] == 0;
    if (i < 8) json_array_append_new(sample, json_real(x[i]));
  }
  char digest[40];
  snprintf(digest, sizeof digest, "fnv1a64:%016llx", (unsigned long long)h);
  json_t *v = json_object();
  json_object_set_new(v, "n", json_integer(n));
  json_object_set_new(v, "finite", json_boolean(finite));
  json_object_set_new(v, "digest", json_string(digest));
  json_object_set_new(v, "sample", sample);
  json_object_set_new(json_object_get(p->result, "values"), name, v);
}

/* ------------------------------------------------------------ profiling */

int mxcts__probe_profile_begin(struct probe *p, const char *pass) {
  (void)pass;
  if (p->profiling) return 0;
  if (mkdir(p->profile_dir, 0777) != 0 && errno != EEXIST) {
    char msg[PATH_MAX + 64];
    snprintf(msg, sizeof msg, "cannot create the profile directory %s: %s", p->profile_dir, strerror(errno));
    mxcts__probe_set_status(p, "error", msg);
    p->failed = true;
    return -1;
  }
  char file[PATH_MAX];
  snprintf(file, sizeof file, "%s/profile.json", p->profile_dir);
  const char *keys[] = {"profile_all", "filename", "continuous_dump", "aggregate_stats"};
  const char *vals[] = {"true", file, "false", "false"};
  PROBE_CALL(p, MXSetProfilerConfig, 4, keys, vals);
  PROBE_CALL(p, MXSetProfilerState, 1);
  p->profiling = true;
  return 0;
}

static void marker_op(void *rctx, void *param) {
  (void)rctx;
  (void)param;
}

int mxcts__probe_profile_end(struct probe *p, const char *pass) {
  if (p->npasses == (int)(sizeof p->passes / sizeof p->passes[0])) return mxcts__probe_fail(p, "too many passes");
  PROBE_CALL(p, MXNDArrayWaitAll);
  char name[64];
  snprintf(name, sizeof name, "%s%s", MXCTS_PASS_MARKER, pass);
  /* priority 1: never bulked into an ImperativeBulk, so its name shows */
  if (mxcts__capi_push_marker(&p->api, marker_op, 1, name) != 0)
    return mxcts__probe_fail(p, p->api.MXEnginePushSyncND ? "MXEnginePushSyncND" : "MXEnginePushSync");
  PROBE_CALL(p, MXNDArrayWaitAll);
  p->passes[p->npasses++] = pass;
  return 0;
}

/* The "passes" array of a result's structure: one object per pass read
 * from a trace (mxcts_trace_read_passes), named by `names`.  Frees the
 * structures. */
static json_t *passes_json(struct mxcts_pass_structure *s, const char *const *names, int n) {
  json_t *passes = json_array();
  for (int k = 0; k < n; k++) {
    json_t *pass_obj = json_object(), *sizes = json_array(), *ops = json_array();
    for (int i = 0; i < s[k].num_names; i++) {
      json_array_append_new(sizes, json_integer(s[k].segment_sizes[i]));
      if (i < 64) json_array_append_new(ops, json_string(s[k].names[i]));
    }
    json_object_set_new(pass_obj, "name", json_string(names[k]));
    json_object_set_new(pass_obj, "engine_ops", json_integer(s[k].engine_ops));
    json_object_set_new(pass_obj, "segments", json_integer(s[k].segments));
    json_object_set_new(pass_obj, "bulked_events", json_integer(s[k].bulks));
    json_object_set_new(pass_obj, "helper_ops", json_integer(s[k].helper_ops));
    json_object_set_new(pass_obj, "graph_launches", json_integer(s[k].graph_launches));
    json_object_set_new(pass_obj, "graph_captures", json_integer(s[k].graph_captures));
    json_object_set_new(pass_obj, "segment_sizes", sizes);
    json_object_set_new(pass_obj, "names", ops);
    json_array_append_new(passes, pass_obj);
    mxcts_trace_free(&s[k]);
  }
  return passes;
}

static int profile_finish(struct probe *p) {
  if (!p->profiling) return 0;
  p->profiling = false;
  PROBE_CALL(p, MXSetProfilerState, 0);
  PROBE_CALL(p, MXDumpProfile, 1);
  char file[PATH_MAX], err[512];
  snprintf(file, sizeof file, "%s/profile.json", p->profile_dir);
  struct mxcts_pass_structure s[8];
  if (mxcts_trace_read_passes(file, s, p->npasses, err, sizeof err) != 0) {
    mxcts__probe_set_status(p, "error", err);
    p->failed = true;
    return -1;
  }
  json_t *structure = json_object();
  json_object_set_new(structure, "passes", passes_json(s, p->passes, p->npasses));
  json_object_set_new(p->result, "structure", structure);
  return 0;
}

/* mxcts-probe --read-trace FILE --passes A,B,...: the structure of a trace
 * that another probe (the Python workloads, harness/probe/python) wrote
 * with its pass markers, printed as {"passes": [...]} on stdout, read as a
 * structure run reads its own trace.  Exit status 0, or 1 with the reason
 * on stderr. */
static int read_trace(const char *file, const char *list) {
  char buf[512];
  const char *names[8];
  int n = 0;
  snprintf(buf, sizeof buf, "%s", list ? list : "");
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (n == 8) {
      fprintf(stderr, "mxcts-probe: --passes %s: at most 8 passes\n", list);
      return 1;
    }
    names[n++] = t;
  }
  if (n == 0) {
    fprintf(stderr, "mxcts-probe: --read-trace needs --passes NAME[,NAME...]\n");
    return 1;
  }
  struct mxcts_pass_structure s[8];
  char err[512];
  if (mxcts_trace_read_passes(file, s, n, err, sizeof err) != 0) {
    fprintf(stderr, "mxcts-probe: %s\n", err);
    return 1;
  }
  json_t *doc = json_object();
  json_object_set_new(doc, "passes", passes_json(s, names, n));
  int rc = json_dumpf(doc, stdout, JSON_COMPACT) == 0 && fputc('\n', stdout) != EOF ? 0 : 1;
  json_decref(doc);
  return rc;
}

/* ---------------------------------------------------------------- main */

struct workload {
  const char *name;
  int (*run)(struct probe *p);
};

static const struct workload workloads[] = {
#define WORKLOAD_ROW(name, fn, ...) {#name, fn},
    MXCTS_WORKLOADS(WORKLOAD_ROW)
#undef WORKLOAD_ROW
};
#define NUM_WORKLOADS ((int)(sizeof workloads / sizeof workloads[0]))

static void usage(FILE *f) {
  fprintf(f,
          "usage: mxcts-probe --impl LIB --workload NAME [--param KEY=VALUE ...] [--seed S]\n"
          "                   [--out FILE] [--profile DIR]\n"
          "       mxcts-probe --read-trace FILE --passes NAME[,NAME...]\n"
          "Runs one workload against the MXNet C API exported by LIB and writes the JSON\n"
          "result (docs/probe-protocol.md) to FILE (default: stdout).  --read-trace prints\n"
          "the structure of a trace holding those passes, each ended by its marker op.\n"
          "Workloads:");
  for (int i = 0; i < NUM_WORKLOADS; i++) fprintf(f, " %s", workloads[i].name);
  fprintf(f, "\n");
}

static json_t *new_result(const struct probe *p) {
  json_t *r = json_object(), *params = json_object(), *env = json_object();
  for (int i = 0; i < p->nparams; i++) json_object_set_new(params, p->keys[i], json_string(p->vals[i]));
  for (char **e = environ; *e; e++) {
    if (strncmp(*e, "MXNET_", 6) != 0) continue;
    const char *eq = strchr(*e, '=');
    if (!eq) continue;
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
    json_object_set_new(env, key, json_string(eq + 1));
  }
  json_object_set_new(r, "probe_version", json_integer(1));
  json_object_set_new(r, "workload", json_string(p->workload ? p->workload : ""));
  json_object_set_new(r, "params", params);
  json_object_set_new(r, "seed", json_integer((json_int_t)p->seed));
  json_object_set_new(r, "status", json_string("ok"));
  json_object_set_new(r, "error", json_null());
  json_object_set_new(r, "env", env);
  json_object_set_new(r, "values", json_object());
  json_object_set_new(r, "checks", json_array());
  return r;
}

static void add_identity(struct probe *p) {
  json_t *impl = json_object(), *features = json_object();
  int version = 0;
  if (p->api.MXGetVersion && p->api.MXGetVersion(&version) == 0)
    json_object_set_new(impl, "version", json_integer(version));
  const struct LibFeature *f;
  size_t n;
  if (p->api.MXLibInfoFeatures && p->api.MXLibInfoFeatures(&f, &n) == 0)
    for (size_t i = 0; i < n; i++) json_object_set_new(features, f[i].name, json_boolean(f[i].enabled));
  json_object_set_new(impl, "path", json_string(p->impl_path));
  json_object_set_new(impl, "features", features);
  json_object_set_new(p->result, "impl", impl);
}

/* The needs of this process (its workload's, and a structure run's) that
 * the library does not meet: status "unsupported", the missing functions
 * listed, and the workload is not run.  Returns true when some are missing. */
static bool unsupported(struct probe *p) {
  const char *missing[64];
  size_t n = 0;
  mxcts_needs_missing(mxcts_workload_needs(p->workload), mxcts__capi_has, &p->api, missing, &n, 64);
  if (p->profile_dir) mxcts_needs_missing(mxcts_profile_needs(), mxcts__capi_has, &p->api, missing, &n, 64);
  if (n == 0) return false;
  json_t *arr = json_array();
  struct mxcts_buf msg = {0};
  mxcts_buf_printf(&msg, "%s does not export ", p->impl_path);
  for (size_t i = 0; i < n; i++) {
    json_array_append_new(arr, json_string(missing[i]));
    mxcts_buf_printf(&msg, "%s%s", i ? ", " : "", missing[i]);
  }
  mxcts_buf_printf(&msg, ", which workload %s%s calls", p->workload, p->profile_dir ? " (profiled)" : "");
  mxcts__probe_set_status(p, "unsupported", mxcts_buf_str(&msg));
  json_object_set_new(p->result, "missing", arr);
  mxcts_buf_free(&msg);
  return true;
}

static int write_result(const struct probe *p, const char *out) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0) json_object_set_new(p->result, "peak_rss_kb", json_integer(ru.ru_maxrss));
  int rc = out ? json_dump_file(p->result, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER)
               : json_dumpf(p->result, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
  if (rc != 0) fprintf(stderr, "mxcts-probe: cannot write the result to %s\n", out ? out : "stdout");
  return rc;
}

static int usage_error(struct probe *p, const char *out, const char *msg) {
  fprintf(stderr, "mxcts-probe: %s\n", msg);
  mxcts__probe_set_status(p, "usage", msg);
  write_result(p, out);
  json_decref(p->result);
  p->result = NULL;
  return 2;
}

static int add_param(struct probe *p, char *arg) {
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg || p->nparams == PROBE_MAX_PARAMS) return -1;
  *eq = '\0';
  p->keys[p->nparams] = arg;
  p->vals[p->nparams++] = eq + 1;
  return 0;
}

int main(int argc, char **argv) {
  struct probe p = {0};
  const char *out = NULL;
  char bad[512] = "";
  static const struct option longopts[] = {
      {"impl", required_argument, NULL, 'i'},    {"workload", required_argument, NULL, 'w'},
      {"param", required_argument, NULL, 'p'},   {"seed", required_argument, NULL, 's'},
      {"out", required_argument, NULL, 'o'},     {"profile", required_argument, NULL, 'P'},
      {"read-trace", required_argument, NULL, 'T'}, {"passes", required_argument, NULL, 'A'},
      {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
  const char *trace = NULL, *pass_list = NULL;
  for (int c; (c = getopt_long(argc, argv, "i:w:p:s:o:P:h", longopts, NULL)) != -1;) {
    switch (c) {
      case 'i': p.impl_path = optarg; break;
      case 'w': p.workload = optarg; break;
      case 'p':
        if (add_param(&p, optarg)) snprintf(bad, sizeof bad, "bad --param '%s' (want KEY=VALUE)", optarg);
        break;
      case 's': p.seed = strtoull(optarg, NULL, 10); break;
      case 'o': out = optarg; break;
      case 'P': p.profile_dir = optarg; break;
      case 'T': trace = optarg; break;
      case 'A': pass_list = optarg; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (trace) return read_trace(trace, pass_list);
  p.result = new_result(&p);
  if (*bad) return usage_error(&p, out, bad);
  if (!p.impl_path || !p.workload) return usage_error(&p, out, "--impl and --workload are required");
  const char *device = mxcts__probe_param_str(&p, "device", "cpu");
  if (strcmp(device, "cpu") != 0 && strcmp(device, "gpu") != 0) {
    snprintf(bad, sizeof bad, "bad --param device=%s (want cpu or gpu)", device);
    return usage_error(&p, out, bad);
  }
  p.dev_type = strcmp(device, "gpu") == 0 ? 2 : 1;
  const char *pin = mxcts__probe_param_str(&p, "pin", "none");
  if (strcmp(pin, "none") != 0 && strcmp(pin, "split") != 0) {
    snprintf(bad, sizeof bad, "bad --param pin=%s (want none or split)", pin);
    return usage_error(&p, out, bad);
  }
  const struct workload *w = NULL;
  for (int i = 0; i < NUM_WORKLOADS && !w; i++)
    if (strcmp(workloads[i].name, p.workload) == 0) w = &workloads[i];
  if (!w) {
    snprintf(bad, sizeof bad, "unknown workload '%s'", p.workload);
    return usage_error(&p, out, bad);
  }
  char err[1024];
  if (mxcts__capi_load(p.impl_path, &p.api, err, sizeof err) != 0) {
    mxcts__probe_set_status(&p, "error", err);
    write_result(&p, out);
    json_decref(p.result);
    return 1;
  }
  add_identity(&p);
  if (unsupported(&p)) {
    int rc = write_result(&p, out);
    json_decref(p.result);
    return rc ? 1 : 0;
  }
  if (p.api.MXRandomSeed((int)(p.seed & 0x7fffffff)) != 0) mxcts__probe_fail(&p, "MXRandomSeed");
  struct sched_mark m0;
  sched_mark(&m0);
  if (!p.failed) w->run(&p);
  add_sched(&p, &m0);
  if (!p.failed) profile_finish(&p);
  /* Finish as MXNet's frontends do at exit (Python's atexit hook): drain
   * the engine, then stop it, before the process unwinds.  Releases before
   * 1.8.0 do not drain in MXNotifyShutdown (apache/mxnet#18768 added it),
   * so ops still queued -- the workload's frees among them -- would run
   * during static destruction.  The drain's status is not the workload's:
   * an error it surfaces was already judged or is judged by the trace. */
  if (!p.failed) {
    if (p.api.MXNDArrayWaitAll) (void)p.api.MXNDArrayWaitAll();
    if (p.api.MXNotifyShutdown() != 0) mxcts__probe_fail(&p, "MXNotifyShutdown");
  }
  int rc = write_result(&p, out);
  json_decref(p.result);
  /* Leave the library loaded: its threads may still be winding down. */
  return rc ? 1 : 0;
}
