/*
 * The profiler: configuration parsing, what the engine hooks record, the
 * Chrome trace file (B/E pairs, pids, nesting, continuous dumps, dumps while
 * ops run), mode filtering, stop and pause, async ops, aggregate statistics,
 * autostart and the dump at exit (in child processes).
 *
 * Every test runs in its own forked process with its own temporary
 * directory as working directory (setup/teardown), so relative trace names
 * and the dump at exit stay inside it.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_tap.h"
#include "engine_util.h"
#include "mxref/profiler.h"

extern char **environ;

#define LANE_STRIDE ((json_int_t)1 << 24)

/* ---- per-test directory ------------------------------------------------------- */

static char tmpdir[512];
static char trace_path[600];

static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  char path[1024];
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

static void setup(void) {
  const char *base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/mxr-prof-XXXXXX", base && *base ? base : "/tmp");
  ck_assert_msg(mkdtemp(tmpdir) != NULL, "mkdtemp: %s", strerror(errno));
  ck_assert_int_eq(chdir(tmpdir), 0);
  snprintf(trace_path, sizeof trace_path, "%s/trace.json", tmpdir);
  mxr_profiler_reset();
}

static void teardown(void) {
  mxr_profiler_reset(); /* no dump at exit */
  ck_assert_int_eq(chdir("/"), 0);
  remove_tree(tmpdir);
}

/* ---- helpers ------------------------------------------------------------------- */

/* Configure from a NULL-terminated list of key, value pairs. */
static int cfg_list(const char *const *kv) {
  const char *keys[32], *vals[32];
  int n = 0;
  while (kv[2 * n]) {
    keys[n] = kv[2 * n];
    vals[n] = kv[2 * n + 1];
    n++;
  }
  return mxr_profiler_set_config(n, keys, vals);
}
#define CFG(...) cfg_list((const char *const[]){__VA_ARGS__, NULL})

/* The usual test configuration: everything, one file, no timer. */
static void cfg_plain(void) {
  ck_assert_int_eq(CFG("profile_all", "True", "filename", trace_path, "continuous_dump", "False"),
                   0);
}

static int noop(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  (void)param;
  return 0;
}

static int sleep_1ms(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  (void)param;
  tu_sleep_ms(1);
  return 0;
}

static void push_op(mxr_engine *eng, const char *name, unsigned profile, struct mxr_context ctx,
                    mxr_var *v) {
  struct mxr_push p = {0};
  p.sync_fn = noop;
  p.ctx = ctx;
  p.mutable_vars = &v;
  p.num_mutable = 1;
  p.name = name;
  p.profile = profile;
  ck_assert_msg(mxr_engine_push(eng, &p) == 0, "push %s: %s", name, mxr_last_error());
}

static mxr_engine *attached_engine(int config) {
  mxr_engine *eng = tu_engine(config);
  ck_assert_int_eq(mxr_profiler_attach_engine(eng), 0);
  return eng;
}

static mxr_var *new_var(mxr_engine *eng) {
  mxr_var *v = NULL;
  ck_assert_int_eq(mxr_engine_new_var(eng, &v), 0);
  return v;
}

/* ---- reading traces ------------------------------------------------------------ */

struct track {
  json_int_t pid, tid;
  double last_ts;
  const char **open;
  size_t n, cap;
};

/* Every B/E event has name, cat, a number ts (microseconds, fractional:
 * nanoseconds keep the order of short ops), integer pid/tid; per (pid, tid) the
 * timestamps never decrease in file order and B/E nest properly (each E
 * closes the innermost open B, with the same name); nothing stays open. */
static void check_well_formed(json_t *root) {
  json_t *evs = json_object_get(root, "traceEvents");
  struct track *tr = NULL;
  size_t ntr = 0, cap = 0;
  size_t i;
  json_t *e;
  json_array_foreach(evs, i, e) {
    ck_assert(json_is_object(e));
    const char *ph = json_string_value(json_object_get(e, "ph"));
    ck_assert_ptr_nonnull(ph);
    if (strcmp(ph, "M") == 0) {
      ck_assert(json_is_integer(json_object_get(e, "pid")));
      ck_assert(json_is_string(json_object_get(json_object_get(e, "args"), "name")));
      continue;
    }
    ck_assert_msg(strcmp(ph, "B") == 0 || strcmp(ph, "E") == 0, "unexpected ph '%s'", ph);
    const char *name = json_string_value(json_object_get(e, "name"));
    ck_assert_ptr_nonnull(name);
    ck_assert(json_is_string(json_object_get(e, "cat")));
    json_t *jts = json_object_get(e, "ts"), *jpid = json_object_get(e, "pid"),
           *jtid = json_object_get(e, "tid");
    ck_assert(json_is_number(jts) && json_is_integer(jpid) && json_is_integer(jtid));
    double ts = json_number_value(jts);
    json_int_t pid = json_integer_value(jpid), tid = json_integer_value(jtid);
    ck_assert(ts >= 0);
    struct track *t = NULL;
    for (size_t k = 0; k < ntr; k++)
      if (tr[k].pid == pid && tr[k].tid == tid) t = &tr[k];
    if (!t) {
      if (ntr == cap) {
        cap = cap ? 2 * cap : 8;
        tr = realloc(tr, cap * sizeof *tr);
        ck_assert_ptr_nonnull(tr);
      }
      t = &tr[ntr++];
      *t = (struct track){pid, tid, 0, NULL, 0, 0};
    }
    ck_assert_msg(ts >= t->last_ts, "pid %lld tid %lld: ts %.3f after %.3f (%s %s)",
                  (long long)pid, (long long)tid, ts, t->last_ts, ph, name);
    t->last_ts = ts;
    if (ph[0] == 'B') {
      if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 8;
        t->open = realloc(t->open, t->cap * sizeof *t->open);
        ck_assert_ptr_nonnull(t->open);
      }
      t->open[t->n++] = name;
    } else {
      ck_assert_msg(t->n > 0, "pid %lld tid %lld: E '%s' without a B", (long long)pid,
                    (long long)tid, name);
      ck_assert_msg(strcmp(t->open[t->n - 1], name) == 0,
                    "pid %lld tid %lld: E '%s' closes B '%s'", (long long)pid, (long long)tid,
                    name, t->open[t->n - 1]);
      t->n--;
    }
  }
  for (size_t k = 0; k < ntr; k++) {
    ck_assert_msg(tr[k].n == 0, "pid %lld tid %lld: %zu B events never closed",
                  (long long)tr[k].pid, (long long)tr[k].tid, tr[k].n);
    free(tr[k].open);
  }
  free(tr);
}

static json_t *load_trace(const char *path) {
  json_error_t err;
  json_t *root = json_load_file(path, 0, &err);
  ck_assert_msg(root != NULL, "%s: %s (line %d)", path, err.text, err.line);
  ck_assert(json_is_object(root));
  ck_assert_str_eq(json_string_value(json_object_get(root, "displayTimeUnit")), "ms");
  ck_assert(json_is_array(json_object_get(root, "traceEvents")));
  check_well_formed(root);
  return root;
}

static int count_events(json_t *root, const char *name, const char *ph) {
  int n = 0;
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
    const char *en = json_string_value(json_object_get(e, "name"));
    const char *ep = json_string_value(json_object_get(e, "ph"));
    if (en && ep && strcmp(en, name) == 0 && strcmp(ep, ph) == 0) n++;
  }
  return n;
}

/* The first event with that name and ph (borrowed), or NULL. */
static json_t *find_event(json_t *root, const char *name, const char *ph) {
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
    const char *en = json_string_value(json_object_get(e, "name"));
    const char *ep = json_string_value(json_object_get(e, "ph"));
    if (en && ep && strcmp(en, name) == 0 && strcmp(ep, ph) == 0) return e;
  }
  return NULL;
}

static double ts_field(json_t *e) {
  ck_assert_ptr_nonnull(e);
  json_t *v = json_object_get(e, "ts");
  ck_assert_msg(json_is_number(v), "field ts is not a number");
  return json_number_value(v);
}

static json_int_t int_field(json_t *e, const char *key) {
  ck_assert_ptr_nonnull(e);
  json_t *v = json_object_get(e, key);
  ck_assert_msg(json_is_integer(v), "field %s is not an integer", key);
  return json_integer_value(v);
}

/* The process_name of pid, or NULL; also counts process_name events. */
static const char *process_name(json_t *root, json_int_t pid, int *count) {
  const char *found = NULL;
  int n = 0;
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
    const char *ep = json_string_value(json_object_get(e, "ph"));
    const char *en = json_string_value(json_object_get(e, "name"));
    if (!ep || strcmp(ep, "M") != 0 || !en || strcmp(en, "process_name") != 0) continue;
    n++;
    if (int_field(e, "pid") == pid)
      found = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
  }
  if (count) *count = n;
  return found;
}

/* B and E of `name` exist exactly once each, on one pid and tid; returns it. */
static void pair_of(json_t *root, const char *name, json_int_t *pid, json_int_t *tid) {
  ck_assert_int_eq(count_events(root, name, "B"), 1);
  ck_assert_int_eq(count_events(root, name, "E"), 1);
  json_t *b = find_event(root, name, "B"), *e = find_event(root, name, "E");
  ck_assert_int_eq(int_field(b, "pid"), int_field(e, "pid"));
  ck_assert_int_eq(int_field(b, "tid"), int_field(e, "tid"));
  ck_assert(ts_field(b) <= ts_field(e));
  if (pid) *pid = int_field(b, "pid");
  if (tid) *tid = int_field(b, "tid");
}

static int available_cpus(void) {
  cpu_set_t set;
  ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
  return CPU_COUNT(&set);
}

/* ---- configuration ------------------------------------------------------------ */

START_TEST(test_config_keys_and_defaults) {
  struct mxr_profiler_config c;
  ck_assert_int_eq(mxr_profiler_get_config(&c), 0);
  const char *env_mode = getenv("MXNET_PROFILER_MODE");
  if (!env_mode || atoi(env_mode) == 0) /* MXNet's default: symbolic, api, memory */
    ck_assert_uint_eq(c.mode, MXR_PROFILE_SYMBOLIC | MXR_PROFILE_API | MXR_PROFILE_MEMORY);
  ck_assert(!c.continuous_dump);
  ck_assert_str_eq(c.filename, "profile.json");

  /* No keys: MXNet's ProfileConfigParam defaults. */
  ck_assert_int_eq(mxr_profiler_set_config(0, NULL, NULL), 0);
  ck_assert_int_eq(mxr_profiler_get_config(&c), 0);
  ck_assert_uint_eq(c.mode, MXR_PROFILE_ALL);
  ck_assert(c.continuous_dump);
  ck_assert(c.dump_period == 1.0);
  ck_assert(!c.aggregate_stats);
  ck_assert_str_eq(c.filename, "profile.json");

  /* Every bool spelling; every call starts from the defaults again. */
  ck_assert_int_eq(CFG("profile_symbolic", "False", "profile_imperative", "0", "profile_api",
                       "false", "profile_memory", "FALSE", "continuous_dump", "0"),
                   0);
  ck_assert_int_eq(mxr_profiler_get_config(&c), 0);
  ck_assert_uint_eq(c.mode, 0);
  ck_assert(!c.continuous_dump);
  ck_assert_int_eq(CFG("profile_symbolic", "False", "profile_imperative", "true", "profile_api",
                       "0", "profile_memory", "0"),
                   0);
  ck_assert_int_eq(mxr_profiler_get_config(&c), 0);
  ck_assert_uint_eq(c.mode, MXR_PROFILE_IMPERATIVE);
  ck_assert(c.continuous_dump); /* back to its default */
  ck_assert_int_eq(CFG("profile_all", "1", "profile_symbolic", "False", "profile_imperative",
                       "False", "profile_api", "False", "profile_memory", "False"),
                   0);
  ck_assert_int_eq(mxr_profiler_get_config(&c), 0);
  ck_assert_uint_eq(c.mode, MXR_PROFILE_ALL);
  ck_assert_int_eq(CFG("filename", "a.json", "dump_period", "0.25", "aggregate_stats", "True",
                       "profile_process", "worker", "filename", "b.json"),
                   0);
  ck_assert_int_eq(mxr_profiler_get_config(&c), 0);
  ck_assert_str_eq(c.filename, "b.json"); /* the last one wins */
  ck_assert(c.dump_period == 0.25);
  ck_assert(c.aggregate_stats);
  ck_assert(c.continuous_dump);
  /* dump_period 0 is fine without continuous dumps */
  ck_assert_int_eq(CFG("continuous_dump", "False", "dump_period", "0"), 0);
}
END_TEST

static void expect_einval(int st, const char *a, const char *b) {
  ck_assert_int_eq(st, MXR_EINVAL);
  const char *msg = mxr_last_error();
  ck_assert_msg(strstr(msg, a) != NULL, "'%s' not in: %s", a, msg);
  if (b) ck_assert_msg(strstr(msg, b) != NULL, "'%s' not in: %s", b, msg);
}

START_TEST(test_config_errors) {
  ck_assert_int_eq(CFG("filename", "keep.json", "continuous_dump", "False", "profile_api", "0"),
                   0);
  struct mxr_profiler_config before, after;
  ck_assert_int_eq(mxr_profiler_get_config(&before), 0);

  expect_einval(CFG("profile_everything", "True"), "profile_everything", "True");
  expect_einval(CFG("profile_api", "yes"), "profile_api", "yes");
  expect_einval(CFG("profile_all", ""), "profile_all", "''");
  expect_einval(CFG("aggregate_stats", "2"), "aggregate_stats", "'2'");
  expect_einval(CFG("continuous_dump", "True "), "continuous_dump", "'True '");
  expect_einval(CFG("dump_period", "abc"), "dump_period", "abc");
  expect_einval(CFG("dump_period", "1.5x"), "dump_period", "1.5x");
  expect_einval(CFG("dump_period", ""), "dump_period", "''");
  expect_einval(CFG("dump_period", "0"), "dump_period", "'0'"); /* continuous by default */
  expect_einval(CFG("continuous_dump", "True", "dump_period", "-1"), "dump_period", "-1");
  expect_einval(CFG("filename", ""), "filename", NULL);
  expect_einval(CFG("profile_process", "server"), "profile_process", "server");
  expect_einval(CFG("profile_process", "bogus"), "profile_process", "bogus");
  /* a good pair before a bad one changes nothing either */
  expect_einval(CFG("filename", "other.json", "profile_memory", "nope"), "profile_memory", "nope");

  const char *keys[] = {"profile_all"};
  const char *vals[] = {NULL};
  expect_einval(mxr_profiler_set_config(1, keys, vals), "profile_all", NULL);
  ck_assert_int_eq(mxr_profiler_set_config(-1, NULL, NULL), MXR_EINVAL);
  ck_assert_int_eq(mxr_profiler_set_config(1, NULL, NULL), MXR_EINVAL);

  ck_assert_int_eq(mxr_profiler_get_config(&after), 0);
  ck_assert_uint_eq(after.mode, before.mode);
  ck_assert_str_eq(after.filename, "keep.json");
  ck_assert(!after.continuous_dump);

  expect_einval(mxr_profiler_set_state(2), "state 2", NULL);
  char *out = NULL;
  ck_assert_int_eq(mxr_profiler_aggregate_print_ex(0, 2, 0, 0, &out), MXR_EINVAL);
  ck_assert_int_eq(mxr_profiler_aggregate_print_ex(0, 0, 5, 0, &out), MXR_EINVAL);
  ck_assert_int_eq(mxr_profiler_aggregate_print(0, NULL), MXR_EINVAL);
  ck_assert_int_eq(mxr_profiler_attach_engine(NULL), MXR_EINVAL);
}
END_TEST

/* ---- recording ----------------------------------------------------------------- */

static const char long_name[] =
    "[FullyConnected,Activation,FullyConnected,Activation,FullyConnected,Activation,"
    "FullyConnected,Activation,FullyConnected,Activation,FullyConnected,Activation,"
    "FullyConnected,Activation,SoftmaxOutput]";

START_TEST(test_trace_pairs_names_and_pids) {
  int i = _i;
  cfg_plain();
  mxr_engine *eng = attached_engine(i);
  bool naive = tu_engine_configs[i].opts.type == MXR_ENGINE_NAIVE;
  mxr_var *v = new_var(eng), *w = new_var(eng);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  ck_assert_int_eq(mxr_profiler_get_state(), MXR_PROFILER_RUNNING);
  for (int k = 0; k < 5; k++) push_op(eng, "alpha", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  for (int k = 0; k < 3; k++) push_op(eng, "beta", MXR_PROFILE_IMPERATIVE, mxr_cpu(0), w);
  push_op(eng, long_name, MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  push_op(eng, "_copy,_zeros", MXR_PROFILE_IMPERATIVE, mxr_cpu(0), v);
  push_op(eng, "quote\"back\\slash", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  push_op(eng, "Custom", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v); /* MXNet never profiles it */
  push_op(eng, "myop::fwd", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  bool two_cpus = mxr_profiler_device_pid(mxr_cpu(1)) == 1;
  if (two_cpus) push_op(eng, "on_cpu1", MXR_PROFILE_SYMBOLIC, mxr_cpu(1), w);
  if (!naive) { /* engine bulking: one ImperativeBulk op */
    atomic_int count = 0;
    mxr_engine_set_bulk_size(eng, 3);
    for (int k = 0; k < 3; k++)
      ck_assert_int_eq(mxr_engine_push_sync(eng, sleep_1ms, &count, NULL, mxr_cpu(0), NULL, 0,
                                            &v, 1, "incr"),
                       0);
    mxr_engine_set_bulk_size(eng, 0);
  }
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_STOPPED), 0);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);

  json_t *root = load_trace(trace_path);
  ck_assert_int_eq(count_events(root, "alpha", "B"), 5);
  ck_assert_int_eq(count_events(root, "alpha", "E"), 5);
  ck_assert_int_eq(count_events(root, "beta", "B"), 3);
  ck_assert_int_eq(count_events(root, "beta", "E"), 3);
  json_int_t pid;
  pair_of(root, long_name, &pid, NULL);
  ck_assert_int_eq(pid, 0);
  pair_of(root, "_copy,_zeros", NULL, NULL);
  pair_of(root, "quote\"back\\slash", NULL, NULL);
  ck_assert_int_eq(count_events(root, "Custom", "B"), 0);
  pair_of(root, "myop::fwd", NULL, NULL);
  ck_assert_str_eq(json_string_value(json_object_get(find_event(root, "myop::fwd", "B"), "cat")),
                   "Custom Operator");
  json_t *b = find_event(root, "alpha", "B");
  ck_assert_str_eq(json_string_value(json_object_get(b, "cat")), "operator");
  ck_assert_int_eq(int_field(b, "pid"), mxr_profiler_device_pid(mxr_cpu(0)));
  ck_assert_int_eq(int_field(b, "pid"), 0);
  ck_assert_str_eq(process_name(root, 0, NULL), "cpu/0");
  if (two_cpus) {
    pair_of(root, "on_cpu1", &pid, NULL);
    ck_assert_int_eq(pid, 1);
    ck_assert_str_eq(process_name(root, 1, NULL), "cpu/1");
  }
  ck_assert_int_eq(count_events(root, "incr", "B"), 0); /* untagged */
  if (!naive) pair_of(root, "ImperativeBulk", NULL, NULL);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_device_pids_and_process_names) {
  int cpus = available_cpus();
  ck_assert_int_eq(mxr_profiler_device_pid(mxr_cpu(0)), 0);
  ck_assert_int_eq(mxr_profiler_device_pid(mxr_cpu(cpus - 1)), cpus - 1);
  ck_assert_int_eq(mxr_profiler_device_pid(mxr_cpu(cpus)), -1);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "device table"));
  int gpus = mxr_profiler_device_pid(mxr_gpu(0)) >= 0 ? 32 : 0; /* CUDA builds: MXNet's 32 */
  if (gpus) {
    ck_assert_int_eq(mxr_profiler_device_pid(mxr_gpu(0)), cpus);
    ck_assert_int_eq(mxr_profiler_device_pid(mxr_gpu(31)), cpus + 31);
    ck_assert_int_eq(mxr_profiler_device_pid(mxr_gpu(32)), -1);
  }
  struct mxr_context pinned = {MXR_DEV_CPU_PINNED, 0}, shared = {MXR_DEV_CPU_SHARED, 0};
  ck_assert_int_eq(mxr_profiler_device_pid(pinned), cpus + gpus);
  ck_assert_int_eq(mxr_profiler_device_pid(shared), cpus + gpus + 1);
  struct mxr_context bad = {99, 0};
  ck_assert_int_eq(mxr_profiler_device_pid(bad), -1);

  /* The trace names every device's process; ops land on their pid. */
  cfg_plain();
  mxr_engine *eng = attached_engine(0); /* naive */
  mxr_var *v = new_var(eng);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  push_op(eng, "pinned_op", MXR_PROFILE_SYMBOLIC, pinned, v);
  push_op(eng, "shared_op", MXR_PROFILE_SYMBOLIC, shared, v);
  push_op(eng, "beyond_table", MXR_PROFILE_SYMBOLIC, mxr_cpu(cpus < 64 ? cpus : 0), v);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  json_t *root = load_trace(trace_path);
  int n = 0;
  ck_assert_str_eq(process_name(root, 0, &n), "cpu/0");
  ck_assert_int_eq(n, cpus + gpus + 2);
  char want[32];
  snprintf(want, sizeof want, "cpu/%d", cpus - 1);
  ck_assert_str_eq(process_name(root, cpus - 1, NULL), want);
  if (gpus) {
    ck_assert_str_eq(process_name(root, cpus, NULL), "gpu/0");
    ck_assert_str_eq(process_name(root, cpus + 31, NULL), "gpu/31");
  }
  ck_assert_str_eq(process_name(root, cpus + gpus, NULL), "cpu pinned/");
  ck_assert_str_eq(process_name(root, cpus + gpus + 1, NULL), "cpu shared/");
  json_int_t pid;
  pair_of(root, "pinned_op", &pid, NULL);
  ck_assert_int_eq(pid, cpus + gpus);
  pair_of(root, "shared_op", &pid, NULL);
  ck_assert_int_eq(pid, cpus + gpus + 1);
  if (cpus < 64) ck_assert_int_eq(count_events(root, "beyond_table", "B"), 0);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* A GPU op (mock driver) lands on gpu/0's pid; CUDA builds only, since
 * MXNet's table has no GPU slots otherwise. */
static int one_gpu(void *u) {
  (void)u;
  return 1;
}

START_TEST(test_gpu_op_pid) {
  int gpu_pid = mxr_profiler_device_pid(mxr_gpu(0));
  if (gpu_pid < 0) return; /* a build without CUDA: nothing to check */
  struct mxr_device_driver drv = {NULL, one_gpu, NULL, NULL, NULL, NULL};
  struct mxr_engine_opts o = tu_opts(MXR_ENGINE_THREADED_PER_DEVICE, 1);
  o.gpu_driver = &drv;
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_create(&o, &eng), 0);
  ck_assert_int_eq(mxr_profiler_attach_engine(eng), 0);
  mxr_var *v = new_var(eng);
  cfg_plain();
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  push_op(eng, "gpu_op", MXR_PROFILE_SYMBOLIC, mxr_gpu(0), v);
  push_op(eng, "cpu_op", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  json_t *root = load_trace(trace_path);
  json_int_t pid;
  pair_of(root, "gpu_op", &pid, NULL);
  ck_assert_int_eq(pid, gpu_pid);
  ck_assert_str_eq(process_name(root, pid, NULL), "gpu/0");
  pair_of(root, "cpu_op", &pid, NULL);
  ck_assert_int_eq(pid, 0);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_mode_filtering) {
  mxr_engine *eng = attached_engine(0);
  mxr_var *v = new_var(eng);
  /* symbolic only */
  ck_assert_int_eq(CFG("profile_symbolic", "True", "profile_imperative", "False", "profile_api",
                       "False", "profile_memory", "False", "continuous_dump", "False",
                       "filename", trace_path),
                   0);
  ck_assert_int_eq(mxr_profiler_is_profiling(MXR_PROFILE_SYMBOLIC), 0); /* not running yet */
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  ck_assert_int_ne(mxr_profiler_is_profiling(MXR_PROFILE_SYMBOLIC), 0);
  ck_assert_int_eq(mxr_profiler_is_profiling(MXR_PROFILE_IMPERATIVE), 0);
  ck_assert_int_eq(mxr_profiler_is_profiling(MXR_PROFILE_SYMBOLIC | MXR_PROFILE_IMPERATIVE), 0);
  ck_assert_int_eq(mxr_profiler_is_profiling(0), 0);
  ck_assert_uint_eq(mxr_profiler_mode(), MXR_PROFILE_SYMBOLIC);
  push_op(eng, "sym_op", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  push_op(eng, "imp_op", MXR_PROFILE_IMPERATIVE, mxr_cpu(0), v);
  push_op(eng, "api_op", MXR_PROFILE_API, mxr_cpu(0), v);
  push_op(eng, "untagged", 0, mxr_cpu(0), v);
  push_op(eng, "both", MXR_PROFILE_SYMBOLIC | MXR_PROFILE_IMPERATIVE, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  json_t *root = load_trace(trace_path);
  pair_of(root, "sym_op", NULL, NULL);
  pair_of(root, "both", NULL, NULL);
  ck_assert_int_eq(count_events(root, "imp_op", "B"), 0);
  ck_assert_int_eq(count_events(root, "api_op", "B"), 0);
  ck_assert_int_eq(count_events(root, "untagged", "B"), 0);
  json_decref(root);

  /* imperative only, then all */
  ck_assert_int_eq(CFG("profile_symbolic", "False", "profile_api", "False", "profile_memory",
                       "False", "continuous_dump", "False", "filename", trace_path),
                   0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  push_op(eng, "sym_op", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  push_op(eng, "imp_op", MXR_PROFILE_IMPERATIVE, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  root = load_trace(trace_path);
  ck_assert_int_eq(count_events(root, "sym_op", "B"), 0);
  pair_of(root, "imp_op", NULL, NULL);
  json_decref(root);
  ck_assert_int_eq(CFG("profile_all", "True", "profile_symbolic", "False", "profile_imperative",
                       "False", "continuous_dump", "False", "filename", trace_path),
                   0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  ck_assert_int_ne(mxr_profiler_is_profiling(MXR_PROFILE_ALL), 0);
  push_op(eng, "imp_op", MXR_PROFILE_IMPERATIVE, mxr_cpu(0), v);
  push_op(eng, "mem_op", MXR_PROFILE_MEMORY, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  root = load_trace(trace_path);
  pair_of(root, "imp_op", NULL, NULL);
  pair_of(root, "mem_op", NULL, NULL);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* A segment that "replays a graph": a span named at its end, a span of a
 * mode not profiled, and a begun span that ends unrecorded (a plain run). */
static int run_with_spans(const struct mxr_run_ctx *rctx, void *param) {
  (void)param;
  struct mxr_op_event ev = {.name = "placeholder", .ctx = rctx->ctx, .prop = MXR_PROP_NORMAL,
                            .profile = MXR_PROFILE_SYMBOLIC};
  uint64_t cookie = mxr_profiler_span_begin(&ev);
  ck_assert(cookie != 0);
  tu_sleep_ms(1);
  ev.name = MXR_PROFILER_CUDA_GRAPH_LAUNCH;
  mxr_profiler_span_end(&ev, cookie);
  struct mxr_op_event other = ev;
  other.profile = MXR_PROFILE_IMPERATIVE;
  mxr_profiler_span_end(&other, mxr_profiler_span_begin(&other));
  (void)mxr_profiler_span_begin(&ev); /* never ended: nothing recorded */
  return 0;
}

START_TEST(test_spans_nest_in_their_op) {
  mxr_engine *eng = attached_engine(0);
  mxr_var *v = new_var(eng);
  ck_assert_int_eq(CFG("profile_symbolic", "True", "profile_imperative", "False",
                       "continuous_dump", "False", "filename", trace_path),
                   0);
  struct mxr_op_event ev = {.name = MXR_PROFILER_CUDA_GRAPH_LAUNCH, .ctx = mxr_cpu(0),
                            .profile = MXR_PROFILE_SYMBOLIC};
  ck_assert(mxr_profiler_span_begin(&ev) == 0); /* not running: nothing */
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  struct mxr_push p = {.sync_fn = run_with_spans, .ctx = mxr_cpu(0), .mutable_vars = &v,
                       .num_mutable = 1, .name = "[a,b]", .profile = MXR_PROFILE_SYMBOLIC};
  ck_assert_int_eq(mxr_engine_push(eng, &p), 0);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  json_t *root = load_trace(trace_path);
  json_int_t op_tid, span_tid;
  pair_of(root, "[a,b]", NULL, &op_tid);
  pair_of(root, MXR_PROFILER_CUDA_GRAPH_LAUNCH, NULL, &span_tid);
  ck_assert_int_eq(op_tid, span_tid);
  ck_assert_int_eq(count_events(root, "placeholder", "B"), 0);
  json_t *sb = find_event(root, MXR_PROFILER_CUDA_GRAPH_LAUNCH, "B");
  json_t *se = find_event(root, MXR_PROFILER_CUDA_GRAPH_LAUNCH, "E");
  ck_assert_str_eq(json_string_value(json_object_get(sb, "cat")), "cuda_graph");
  ck_assert(ts_field(find_event(root, "[a,b]", "B")) <= ts_field(sb));
  ck_assert(ts_field(se) <= ts_field(find_event(root, "[a,b]", "E")));
  ck_assert(ts_field(se) - ts_field(sb) >= 900.0); /* the span's own time, in us */
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_stopped_and_paused_record_nothing) {
  mxr_engine *eng = attached_engine(4); /* per device, 1 worker */
  mxr_var *v = new_var(eng);
  cfg_plain();
  ck_assert_int_eq(mxr_profiler_get_state(), MXR_PROFILER_STOPPED);
  push_op(eng, "never_started", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(mxr_profiler_dump(1), MXR_ESTATE); /* has not run */
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "has not run"));

  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  push_op(eng, "running", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_STOPPED), 0);
  ck_assert_int_eq(mxr_profiler_get_state(), MXR_PROFILER_STOPPED);
  for (int k = 0; k < 10; k++) push_op(eng, "while_stopped", MXR_PROFILE_ALL, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  ck_assert_int_eq(mxr_profiler_pause(1), 0);
  push_op(eng, "while_paused", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(mxr_profiler_pause(0), 0);
  push_op(eng, "resumed", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  json_t *root = load_trace(trace_path);
  ck_assert_int_eq(count_events(root, "never_started", "B"), 0);
  pair_of(root, "running", NULL, NULL);
  ck_assert_int_eq(count_events(root, "while_stopped", "B"), 0);
  ck_assert_int_eq(count_events(root, "while_paused", "B"), 0);
  pair_of(root, "resumed", NULL, NULL);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* ---- async ops ------------------------------------------------------------------ */

struct async_job {
  mxr_engine *side;   /* a naive engine: its ops run on the calling thread */
  mxr_var *side_var;
  mxr_completion *done;
  pthread_t completer;
};

static void *complete_later(void *arg) {
  struct async_job *j = arg;
  tu_sleep_ms(5);
  push_op(j->side, "on_completer", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), j->side_var);
  mxr_engine_complete(j->done, 0);
  return NULL;
}

static void async_body(const struct mxr_run_ctx *rctx, void *param, mxr_completion *done) {
  (void)rctx;
  struct async_job *j = param;
  push_op(j->side, "on_beginner", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), j->side_var);
  j->done = done;
  ck_assert_int_eq(pthread_create(&j->completer, NULL, complete_later, j), 0);
}

/* An async op completed on another thread keeps B and E on the tid of the
 * thread that began it (where "on_beginner" ran), not the completer's. */
START_TEST(test_async_op_keeps_begin_tid) {
  int i = _i;
  cfg_plain();
  mxr_engine *eng = attached_engine(i);
  struct async_job job = {0};
  job.side = attached_engine(0);
  job.side_var = new_var(job.side);
  mxr_var *v = new_var(eng);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  struct mxr_push p = {0};
  p.async_fn = async_body;
  p.param = &job;
  p.ctx = mxr_cpu(0);
  p.mutable_vars = &v;
  p.num_mutable = 1;
  p.prop = MXR_PROP_ASYNC;
  p.name = "async_op";
  p.profile = MXR_PROFILE_IMPERATIVE;
  ck_assert_int_eq(mxr_engine_push(eng, &p), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(pthread_join(job.completer, NULL), 0);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  json_t *root = load_trace(trace_path);
  json_int_t tid_async, tid_begin, tid_complete;
  pair_of(root, "async_op", NULL, &tid_async);
  pair_of(root, "on_beginner", NULL, &tid_begin);
  pair_of(root, "on_completer", NULL, &tid_complete);
  ck_assert_int_eq(tid_async, tid_begin);
  ck_assert_int_ne(tid_async, tid_complete);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
  ck_assert_int_eq(mxr_engine_free(job.side), 0);
}
END_TEST

/* Deterministic overlap on one worker: the async op A begins, its function
 * returns, the worker begins B; A completes (elsewhere) while B runs; B ends
 * last.  A keeps the worker's tid; B cannot nest in A, so it moves to a lane
 * of that thread, and every tid stays properly nested. */
struct overlap {
  atomic_int b_started, a_done;
  mxr_completion *done;
  pthread_t completer;
};

static void *overlap_completer(void *arg) {
  struct overlap *o = arg;
  while (!atomic_load(&o->b_started)) tu_sleep_ms(1);
  tu_sleep_ms(2);
  mxr_engine_complete(o->done, 0);
  atomic_store(&o->a_done, 1);
  return NULL;
}

static void overlap_a(const struct mxr_run_ctx *rctx, void *param, mxr_completion *done) {
  (void)rctx;
  struct overlap *o = param;
  o->done = done;
  ck_assert_int_eq(pthread_create(&o->completer, NULL, overlap_completer, o), 0);
  tu_sleep_ms(2);
}

static int overlap_b(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  struct overlap *o = param;
  atomic_store(&o->b_started, 1);
  while (!atomic_load(&o->a_done)) tu_sleep_ms(1);
  tu_sleep_ms(2);
  return 0;
}

START_TEST(test_overlapping_async_op_gets_a_lane) {
  cfg_plain();
  struct mxr_engine_opts opts = tu_opts(MXR_ENGINE_THREADED_PER_DEVICE, 1);
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_create(&opts, &eng), 0);
  ck_assert_int_eq(mxr_profiler_attach_engine(eng), 0);
  mxr_var *va = new_var(eng), *vb = new_var(eng);
  struct overlap o;
  atomic_init(&o.b_started, 0);
  atomic_init(&o.a_done, 0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  /* NORMAL property: queued to the single worker, not run on the pusher. */
  struct mxr_push a = {.async_fn = overlap_a, .param = &o, .ctx = mxr_cpu(0),
                       .mutable_vars = &va, .num_mutable = 1, .name = "A",
                       .profile = MXR_PROFILE_SYMBOLIC};
  struct mxr_push b = {.sync_fn = overlap_b, .param = &o, .ctx = mxr_cpu(0),
                       .mutable_vars = &vb, .num_mutable = 1, .name = "B",
                       .profile = MXR_PROFILE_SYMBOLIC};
  ck_assert_int_eq(mxr_engine_push(eng, &a), 0);
  ck_assert_int_eq(mxr_engine_push(eng, &b), 0);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  ck_assert_int_eq(pthread_join(o.completer, NULL), 0);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  json_t *root = load_trace(trace_path); /* nesting per tid checked here */
  json_int_t tid_a, tid_b;
  pair_of(root, "A", NULL, &tid_a);
  pair_of(root, "B", NULL, &tid_b);
  ck_assert_int_eq(tid_b, tid_a + LANE_STRIDE);
  json_t *ea = find_event(root, "A", "E"), *bb = find_event(root, "B", "B");
  ck_assert(ts_field(bb) < ts_field(ea)); /* they do overlap */
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* ---- dumps ------------------------------------------------------------------------ */

START_TEST(test_continuous_dumps_append) {
  mxr_engine *eng = attached_engine(0);
  mxr_var *v = new_var(eng);
  ck_assert_int_eq(CFG("profile_all", "True", "filename", trace_path, "continuous_dump", "True",
                       "dump_period", "1000"),
                   0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  push_op(eng, "first", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_dump(0), 0);
  json_t *root = load_trace(trace_path);
  pair_of(root, "first", NULL, NULL);
  int n1 = 0;
  process_name(root, 0, &n1);
  json_decref(root);
  push_op(eng, "second", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_dump(0), 0);
  root = load_trace(trace_path);
  pair_of(root, "first", NULL, NULL); /* appended, not rewritten */
  pair_of(root, "second", NULL, NULL);
  int n2 = 0;
  process_name(root, 0, &n2);
  ck_assert_int_eq(n1, n2); /* the metadata is written once */
  json_decref(root);
  ck_assert_int_eq(mxr_profiler_dump(0), 0); /* nothing new: still complete */
  push_op(eng, "third", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  root = load_trace(trace_path);
  pair_of(root, "second", NULL, NULL);
  pair_of(root, "third", NULL, NULL);
  json_decref(root);
  ck_assert_int_eq(mxr_profiler_dump(0), MXR_ESTATE); /* finished */
  /* Running again starts a new file. */
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  push_op(eng, "fourth", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  root = load_trace(trace_path);
  ck_assert_int_eq(count_events(root, "first", "B"), 0);
  pair_of(root, "fourth", NULL, NULL);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_plain_dumps_rewrite) {
  mxr_engine *eng = attached_engine(0);
  mxr_var *v = new_var(eng);
  cfg_plain();
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  push_op(eng, "x", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_dump(0), 0);
  ck_assert_int_eq(mxr_profiler_dump(0), MXR_ESTATE); /* as MXNet: output ends */
  push_op(eng, "y", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v); /* still recording */
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  ck_assert_int_eq(mxr_profiler_dump(0), 0);
  json_t *root = load_trace(trace_path);
  ck_assert_int_eq(count_events(root, "x", "B"), 0);
  pair_of(root, "y", NULL, NULL);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_unwritable_file_keeps_records) {
  mxr_engine *eng = attached_engine(0);
  mxr_var *v = new_var(eng);
  const char *bad = "/nonexistent-mxr-dir/t.json";
  ck_assert_int_eq(CFG("profile_all", "True", "filename", bad, "continuous_dump", "False"), 0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  push_op(eng, "kept", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_dump(1), MXR_ESYS);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), bad));
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), strerror(ENOENT)));
  cfg_plain();
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  json_t *root = load_trace(trace_path);
  pair_of(root, "kept", NULL, NULL);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

struct pusher {
  mxr_engine *eng;
  mxr_var *vars[4];
  int n;
  atomic_int done;
};

static void *push_many(void *arg) {
  struct pusher *p = arg;
  for (int k = 0; k < p->n; k++) push_op(p->eng, "bg", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), p->vars[k % 4]);
  ck_assert_int_eq(mxr_engine_wait_for_all(p->eng), 0);
  atomic_store(&p->done, 1);
  return NULL;
}

/* Dumps while another thread pushes: every dump leaves a valid, well-formed
 * file, and in the end every op is there exactly once. */
START_TEST(test_dump_while_ops_run) {
  struct pusher p = {.n = 3000};
  atomic_init(&p.done, 0);
  p.eng = attached_engine(5); /* per device, 2 workers */
  for (int k = 0; k < 4; k++) p.vars[k] = new_var(p.eng);
  ck_assert_int_eq(CFG("profile_all", "True", "filename", trace_path, "continuous_dump", "True",
                       "dump_period", "1000"),
                   0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, push_many, &p), 0);
  int dumps = 0;
  while (!atomic_load(&p.done) || dumps < 3) {
    ck_assert_int_eq(mxr_profiler_dump(0), 0);
    json_decref(load_trace(trace_path));
    dumps++;
  }
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_STOPPED), 0);
  ck_assert_int_eq(mxr_profiler_dump(1), 0);
  json_t *root = load_trace(trace_path);
  ck_assert_int_eq(count_events(root, "bg", "B"), p.n);
  ck_assert_int_eq(count_events(root, "bg", "E"), p.n);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(p.eng), 0);
}
END_TEST

/* The continuous-dump timer writes the file on its own. */
START_TEST(test_dump_timer) {
  mxr_engine *eng = attached_engine(0);
  mxr_var *v = new_var(eng);
  ck_assert_int_eq(CFG("profile_all", "True", "filename", trace_path, "dump_period", "0.02"), 0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  push_op(eng, "timed", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  bool seen = false;
  for (int tries = 0; tries < 1000 && !seen; tries++) { /* up to ~10 s */
    tu_sleep_ms(10);
    json_t *root = json_load_file(trace_path, 0, NULL); /* may be mid-write: retry */
    if (root) seen = count_events(root, "timed", "E") == 1;
    json_decref(root);
  }
  ck_assert_msg(seen, "the timer never dumped");
  ck_assert_int_eq(mxr_profiler_dump(1), 0); /* stops the timer */
  json_t *root = load_trace(trace_path);
  pair_of(root, "timed", NULL, NULL);
  json_decref(root);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_reset) {
  ck_assert_int_eq(CFG("filename", trace_path, "aggregate_stats", "True"), 0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  mxr_profiler_reset();
  ck_assert_int_eq(mxr_profiler_get_state(), MXR_PROFILER_STOPPED);
  struct mxr_profiler_config c;
  ck_assert_int_eq(mxr_profiler_get_config(&c), 0);
  ck_assert_str_eq(c.filename, "profile.json");
  ck_assert(!c.continuous_dump);
  ck_assert(!c.aggregate_stats);
  ck_assert_int_eq(mxr_profiler_aggregate_running(), 0);
  ck_assert_int_eq(mxr_profiler_dump(1), MXR_ESTATE);
}
END_TEST

/* ---- aggregate statistics ---------------------------------------------------------- */

/* The row of `name` in a printed table: count and the four times. */
static bool table_row(const char *table, const char *name, unsigned long long *count,
                      double t[4], const char **where) {
  const char *line = table;
  size_t len = strlen(name);
  while (line && *line) {
    if (strncmp(line, name, len) == 0 && line[len] == ' ') {
      int got = sscanf(line + len, "%llu %lf %lf %lf %lf", count, &t[0], &t[1], &t[2], &t[3]);
      ck_assert_int_eq(got, 5);
      if (where) *where = line;
      return true;
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  return false;
}

START_TEST(test_aggregate_stats) {
  mxr_engine *eng = attached_engine(0);
  mxr_var *v = new_var(eng);
  ck_assert_int_eq(CFG("profile_all", "True", "filename", trace_path, "continuous_dump", "False",
                       "aggregate_stats", "True"),
                   0);
  ck_assert_int_eq(mxr_profiler_aggregate_running(), 0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  ck_assert_int_ne(mxr_profiler_aggregate_running(), 0);
  for (int k = 0; k < 3; k++) push_op(eng, "agg_a", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  for (int k = 0; k < 5; k++) push_op(eng, "agg_b", MXR_PROFILE_IMPERATIVE, mxr_cpu(0), v);
  for (int k = 0; k < 2; k++) push_op(eng, "my::sub", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_STOPPED), 0);

  char *s = NULL;
  ck_assert_int_eq(mxr_profiler_aggregate_print_ex(0, MXR_PROFILER_FORMAT_TABLE,
                                                   MXR_PROFILER_SORT_COUNT, 0, &s),
                   0);
  static const char head[] =
      "\nProfile Statistics:\n\tNote the difference in units for different entries.\n";
  ck_assert_msg(strncmp(s, head, sizeof head - 1) == 0, "table: %s", s);
  static const char columns[] =
      "Name                          Total Count        Time (ms)    Min Time (ms)    Max Time "
      "(ms)    Avg Time (ms)\n"
      "----                          -----------        ---------    -------------    "
      "-------------    -------------\n";
  ck_assert_msg(strstr(s, columns) != NULL, "table: %s", s);
  const char *op_section = strstr(s, "operator\n=================\n");
  const char *custom_section = strstr(s, "Custom Operator\n=================\n");
  ck_assert_ptr_nonnull(op_section);
  ck_assert_ptr_nonnull(custom_section);
  ck_assert(custom_section < op_section); /* categories in byte order */
  unsigned long long n;
  double t[4];
  const char *row_a, *row_b, *row_sub;
  ck_assert(table_row(s, "agg_a", &n, t, &row_a));
  ck_assert_uint_eq(n, 3);
  ck_assert(t[1] <= t[3] + 1e-4 && t[3] <= t[2] + 1e-4); /* min <= avg <= max */
  ck_assert(t[0] + 1e-3 >= t[3] * 3 - 1e-3 && t[0] <= t[3] * 3 + 1e-3);
  ck_assert(table_row(s, "agg_b", &n, t, &row_b));
  ck_assert_uint_eq(n, 5);
  ck_assert(table_row(s, "my::sub", &n, t, &row_sub));
  ck_assert_uint_eq(n, 2);
  ck_assert(row_b < row_a);           /* by count, descending */
  ck_assert(row_sub < op_section);    /* in its own category */
  ck_assert(row_a > op_section);
  free(s);

  ck_assert_int_eq(mxr_profiler_aggregate_print_ex(0, MXR_PROFILER_FORMAT_TABLE,
                                                   MXR_PROFILER_SORT_COUNT, 1, &s),
                   0);
  ck_assert(table_row(s, "agg_a", &n, t, &row_a) && table_row(s, "agg_b", &n, t, &row_b));
  ck_assert(row_a < row_b); /* ascending */
  free(s);

  ck_assert_int_eq(mxr_profiler_aggregate_print_ex(0, MXR_PROFILER_FORMAT_JSON,
                                                   MXR_PROFILER_SORT_TOTAL, 0, &s),
                   0);
  json_error_t err;
  json_t *j = json_loads(s, 0, &err);
  ck_assert_msg(j != NULL, "%s: %s", err.text, s);
  json_t *a = json_object_get(json_object_get(json_object_get(j, "Time"), "operator"), "agg_a");
  ck_assert_int_eq(json_integer_value(json_object_get(a, "Count")), 3);
  ck_assert(json_is_number(json_object_get(a, "Total")));
  json_t *sub =
      json_object_get(json_object_get(json_object_get(j, "Time"), "Custom Operator"), "my::sub");
  ck_assert_int_eq(json_integer_value(json_object_get(sub, "Count")), 2);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "Unit"), "Time")), "ms");
  json_decref(j);
  free(s);

  /* As MXNet, printing dumped the trace (output was enabled). */
  json_t *root = load_trace(trace_path);
  ck_assert_int_eq(count_events(root, "agg_b", "B"), 5);
  json_decref(root);

  /* reset: printed once more, then gone */
  ck_assert_int_eq(mxr_profiler_aggregate_print(1, &s), 0);
  ck_assert(table_row(s, "agg_a", &n, t, NULL));
  ck_assert_uint_eq(n, 3);
  free(s);
  ck_assert_int_eq(mxr_profiler_aggregate_print(0, &s), 0);
  ck_assert(!table_row(s, "agg_a", &n, t, NULL));
  ck_assert_ptr_null(strstr(s, "operator\n"));
  ck_assert_msg(strncmp(s, head, sizeof head - 1) == 0, "table: %s", s);
  free(s);

  /* more ops count again from zero */
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  push_op(eng, "agg_a", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_aggregate_print(0, &s), 0);
  ck_assert(table_row(s, "agg_a", &n, t, NULL));
  ck_assert_uint_eq(n, 1);
  free(s);

  /* aggregate_stats off: nothing kept, an empty string */
  ck_assert_int_eq(CFG("profile_all", "True", "filename", trace_path, "continuous_dump", "False"),
                   0);
  ck_assert_int_eq(mxr_profiler_aggregate_running(), 0);
  push_op(eng, "agg_a", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_profiler_aggregate_print(0, &s), 0);
  ck_assert_str_eq(s, "");
  free(s);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* Aggregates of threads that exited are kept. */
START_TEST(test_aggregate_survives_worker_exit) {
  ck_assert_int_eq(CFG("profile_all", "True", "filename", trace_path, "continuous_dump", "False",
                       "aggregate_stats", "True"),
                   0);
  ck_assert_int_eq(mxr_profiler_set_state(MXR_PROFILER_RUNNING), 0);
  mxr_engine *eng = attached_engine(5);
  mxr_var *v = new_var(eng);
  for (int k = 0; k < 7; k++) push_op(eng, "worker_op", MXR_PROFILE_SYMBOLIC, mxr_cpu(0), v);
  ck_assert_int_eq(mxr_engine_free(eng), 0); /* its workers exit */
  char *s = NULL;
  ck_assert_int_eq(mxr_profiler_aggregate_print(0, &s), 0);
  unsigned long long n;
  double t[4];
  ck_assert_msg(table_row(s, "worker_op", &n, t, NULL), "%s", s);
  ck_assert_uint_eq(n, 7);
  free(s);
  json_t *root = load_trace(trace_path);
  ck_assert_int_eq(count_events(root, "worker_op", "E"), 7);
  json_decref(root);
}
END_TEST

/* ---- autostart and the dump at exit (child processes) ------------------------------ */

/* In the child: push tagged ops on the default engine and exit normally. */
static int child_push_default_ops(void) {
  mxr_engine *eng;
  if (mxr_engine_default(&eng) != 0) return 2;
  mxr_var *v;
  if (mxr_engine_new_var(eng, &v) != 0) return 2;
  struct mxr_push p = {.sync_fn = noop, .ctx = mxr_cpu(0), .mutable_vars = &v, .num_mutable = 1};
  p.name = "auto_sym";
  p.profile = MXR_PROFILE_SYMBOLIC;
  if (mxr_engine_push(eng, &p) != 0) return 2;
  p.name = "auto_imp";
  p.profile = MXR_PROFILE_IMPERATIVE;
  if (mxr_engine_push(eng, &p) != 0) return 2;
  if (mxr_engine_wait_for_all(eng) != 0) return 2;
  return 0;
}

static int child_main(const char *mode) {
  if (strcmp(mode, "autostart") == 0) {
    if (mxr_profiler_get_state() != MXR_PROFILER_RUNNING) return 3;
    return child_push_default_ops();
  }
  if (strcmp(mode, "exit-dump") == 0) { /* started by hand, never dumped */
    if (CFG("profile_all", "True", "filename", "exit.json", "continuous_dump", "False") != 0)
      return 4;
    if (mxr_profiler_set_state(MXR_PROFILER_RUNNING) != 0) return 4;
    return child_push_default_ops();
  }
  return 5;
}

static char self_exe[4096];

/* Run this test program as a child in `mode` with extra environment
 * entries (NAME=value, NULL-terminated), in the current directory. */
static void run_child(const char *mode, const char *const *extra_env) {
  size_t n = 0;
  while (environ[n]) n++;
  size_t nextra = 0;
  while (extra_env[nextra]) nextra++;
  char **env = calloc(n + nextra + 1, sizeof *env);
  ck_assert_ptr_nonnull(env);
  size_t m = 0;
  for (size_t k = 0; k < n; k++)
    if (strncmp(environ[k], "MXNET_PROFILER_", 15) != 0) env[m++] = environ[k];
  for (size_t k = 0; k < nextra; k++) env[m++] = (char *)extra_env[k];
  env[m] = NULL;
  char *argv[] = {self_exe, (char *)"--child", (char *)mode, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, self_exe, NULL, NULL, argv, env);
  free(env);
  ck_assert_msg(rc == 0, "posix_spawn %s: %s", self_exe, strerror(rc));
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %s: status 0x%x", mode,
                status);
}

START_TEST(test_autostart_writes_profile_json_at_exit) {
  const char *env_default[] = {"MXNET_PROFILER_AUTOSTART=1", NULL};
  run_child("autostart", env_default);
  json_t *root = load_trace("profile.json"); /* in the child's working directory */
  pair_of(root, "auto_sym", NULL, NULL);
  ck_assert_int_eq(count_events(root, "auto_imp", "B"), 0); /* mode 0: MXNet's default */
  ck_assert_str_eq(process_name(root, 0, NULL), "cpu/0");
  json_decref(root);
  ck_assert_int_eq(unlink("profile.json"), 0);

  const char *env_imperative[] = {"MXNET_PROFILER_AUTOSTART=1", "MXNET_PROFILER_MODE=2", NULL};
  run_child("autostart", env_imperative);
  root = load_trace("profile.json");
  ck_assert_int_eq(count_events(root, "auto_sym", "B"), 0);
  pair_of(root, "auto_imp", NULL, NULL);
  json_decref(root);
  ck_assert_int_eq(unlink("profile.json"), 0);

  const char *env_all[] = {"MXNET_PROFILER_AUTOSTART=true", "MXNET_PROFILER_MODE=15", NULL};
  run_child("autostart", env_all);
  root = load_trace("profile.json");
  pair_of(root, "auto_sym", NULL, NULL);
  pair_of(root, "auto_imp", NULL, NULL);
  json_decref(root);
}
END_TEST

START_TEST(test_started_profiler_dumps_at_exit) {
  const char *env[] = {NULL};
  run_child("exit-dump", env);
  json_t *root = load_trace("exit.json");
  pair_of(root, "auto_sym", NULL, NULL);
  pair_of(root, "auto_imp", NULL, NULL);
  json_decref(root);
  struct stat sb;
  ck_assert_int_ne(stat("profile.json", &sb), 0); /* nothing else written */
}
END_TEST

/* ---- the suite ------------------------------------------------------------------- */

static Suite *profiler_suite(void) {
  Suite *s = suite_create("profiler");
  TCase *cfg = tcase_create("config");
  tcase_add_checked_fixture(cfg, setup, teardown);
  tcase_add_test(cfg, test_config_keys_and_defaults);
  tcase_add_test(cfg, test_config_errors);
  tcase_add_test(cfg, test_reset);
  suite_add_tcase(s, cfg);

  TCase *rec = tcase_create("recording");
  tcase_add_checked_fixture(rec, setup, teardown);
  tcase_set_timeout(rec, 60);
  tcase_add_loop_test(rec, test_trace_pairs_names_and_pids, 0, TU_NUM_ENGINE_CONFIGS);
  tcase_add_loop_test(rec, test_async_op_keeps_begin_tid, 0, TU_NUM_ENGINE_CONFIGS);
  tcase_add_test(rec, test_device_pids_and_process_names);
  tcase_add_test(rec, test_gpu_op_pid);
  tcase_add_test(rec, test_mode_filtering);
  tcase_add_test(rec, test_spans_nest_in_their_op);
  tcase_add_test(rec, test_stopped_and_paused_record_nothing);
  tcase_add_test(rec, test_overlapping_async_op_gets_a_lane);
  suite_add_tcase(s, rec);

  TCase *dump = tcase_create("dumps");
  tcase_add_checked_fixture(dump, setup, teardown);
  tcase_set_timeout(dump, 120);
  tcase_add_test(dump, test_continuous_dumps_append);
  tcase_add_test(dump, test_plain_dumps_rewrite);
  tcase_add_test(dump, test_unwritable_file_keeps_records);
  tcase_add_test(dump, test_dump_while_ops_run);
  tcase_add_test(dump, test_dump_timer);
  suite_add_tcase(s, dump);

  TCase *agg = tcase_create("aggregate");
  tcase_add_checked_fixture(agg, setup, teardown);
  tcase_set_timeout(agg, 60);
  tcase_add_test(agg, test_aggregate_stats);
  tcase_add_test(agg, test_aggregate_survives_worker_exit);
  suite_add_tcase(s, agg);

  TCase *exitc = tcase_create("exit");
  tcase_add_checked_fixture(exitc, setup, teardown);
  tcase_set_timeout(exitc, 120);
  tcase_add_test(exitc, test_autostart_writes_profile_json_at_exit);
  tcase_add_test(exitc, test_started_profiler_dumps_at_exit);
  suite_add_tcase(s, exitc);
  return s;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) return child_main(argv[2]);
  ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
  if (n <= 0) {
    perror("readlink /proc/self/exe");
    return 1;
  }
  self_exe[n] = '\0';
  return mxr_test_run(profiler_suite());
}
