/* Expanding suites into probe processes (run/run.h). */
#include "run/run_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jsonv.h"
#include "run/run.h"

extern char **environ;

/* Variables passed through from the runner's environment when set.  The
 * sanitizers' options go through too, so that a sanitized probe (or
 * implementation) still dies by a signal on a crash, as abort_on_error asks,
 * instead of exiting with a status that reads as an error. */
static const char *const base_env_names[] = {"PATH", "HOME", "LD_LIBRARY_PATH", "OMP_NUM_THREADS",
                                             "OPENBLAS_NUM_THREADS", "ASAN_OPTIONS", "UBSAN_OPTIONS",
                                             "TSAN_OPTIONS", "LSAN_OPTIONS", NULL};

const char *mxcts__job_kind_name(enum mxcts_job_kind k) {
  switch (k) {
  case MXCTS_JOB_ROUND: return "round";
  case MXCTS_JOB_PROFILE: return "profile";
  }
  return "?";
}

char *mxcts_default_lock_file(void) {
  const char *tmp = getenv("TMPDIR");
  return mxcts_xasprintf("%s/mxcts-%ld.lock", tmp && *tmp ? tmp : "/tmp", (long)getuid());
}

void mxcts_options_free(struct mxcts_options *o) {
  free(o->impl);
  free(o->impl_name);
  free(o->probe);
  free(o->suites_dir);
  mxcts_strv_free(&o->suites);
  mxcts_strv_free(&o->assertions);
  free(o->out);
  free(o->expectations);
  free(o->tap);
  free(o->junit);
  free(o->json);
  free(o->html);
  free(o->lock_file);
  mxcts_strv_free(&o->pass_env);
  free(o->self);
  free(o->python);
  free(o->python_dir);
  free(o->no_python);
  free(o->depth);
  free(o->expect_version);
  mxcts_strv_free(&o->expect_features);
  memset(o, 0, sizeof *o);
}

static void copy_strv(struct mxcts_strv *to, const struct mxcts_strv *from) {
  for (size_t i = 0; i < from->n; i++) mxcts_strv_push(to, from->v[i]);
}

static void copy_options(struct mxcts_options *to, const struct mxcts_options *from) {
  *to = *from;
  to->impl = mxcts_xstrdup(from->impl);
  to->impl_name = mxcts_xstrdup(from->impl_name);
  to->probe = mxcts_xstrdup(from->probe);
  to->suites_dir = mxcts_xstrdup(from->suites_dir);
  to->out = mxcts_xstrdup(from->out);
  to->expectations = mxcts_xstrdup(from->expectations);
  to->tap = mxcts_xstrdup(from->tap);
  to->junit = mxcts_xstrdup(from->junit);
  to->json = mxcts_xstrdup(from->json);
  to->html = mxcts_xstrdup(from->html);
  to->lock_file = mxcts_xstrdup(from->lock_file);
  to->self = mxcts_xstrdup(from->self);
  to->python = mxcts_xstrdup(from->python);
  to->python_dir = mxcts_xstrdup(from->python_dir);
  to->no_python = mxcts_xstrdup(from->no_python);
  to->depth = mxcts_xstrdup(from->depth);
  to->expect_version = mxcts_xstrdup(from->expect_version);
  memset(&to->expect_features, 0, sizeof to->expect_features);
  copy_strv(&to->expect_features, &from->expect_features);
  memset(&to->suites, 0, sizeof to->suites);
  memset(&to->assertions, 0, sizeof to->assertions);
  memset(&to->pass_env, 0, sizeof to->pass_env);
  copy_strv(&to->suites, &from->suites);
  copy_strv(&to->assertions, &from->assertions);
  copy_strv(&to->pass_env, &from->pass_env);
}

/* --- seeds ---------------------------------------------------------------------- */

static uint64_t suite_stream(uint64_t run_seed, const char *suite) {
  return mxcts_mix64(run_seed ^ mxcts_hash_str(0, suite));
}

static long probe_seed(uint64_t stream, uint64_t salt) {
  return (long)(mxcts_mix64(stream + salt * 0x9e3779b97f4a7c15ULL) & 0x7fffffffULL);
}

/* A seeded permutation of 0..n-1 (Fisher-Yates). */
static void seeded_order(uint64_t stream, int round, size_t *idx, size_t n) {
  uint64_t state = mxcts_mix64(stream ^ ((uint64_t)round << 32) ^ 0x6f72646572ULL);
  for (size_t i = 0; i < n; i++) idx[i] = i;
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)mxcts_rng_below(&state, i);
    size_t t = idx[i - 1];
    idx[i - 1] = idx[j];
    idx[j] = t;
  }
}

/* --- jobs -------------------------------------------------------------------------- */

/* The base environment, the config's variables on top, and for a Python
 * workload MXNET_LIBRARY_PATH naming the library under test, which the
 * mxnet package then loads instead of its own. */
static void build_env(const struct mxcts_options *o, const struct mxcts_config *c, bool python,
                      struct mxcts_strv *env) {
  struct mxcts_kvs kv = {0};
  for (size_t i = 0; base_env_names[i]; i++) {
    const char *v = getenv(base_env_names[i]);
    if (v) mxcts_kvs_set(&kv, base_env_names[i], v);
  }
  for (size_t i = 0; i < o->pass_env.n; i++) {
    const char *v = getenv(o->pass_env.v[i]);
    if (v) mxcts_kvs_set(&kv, o->pass_env.v[i], v);
  }
  for (size_t i = 0; i < c->env.n; i++) mxcts_kvs_set(&kv, c->env.v[i].key, c->env.v[i].value);
  if (python) mxcts_kvs_set(&kv, "MXNET_LIBRARY_PATH", o->impl);
  for (size_t i = 0; i < kv.n; i++) mxcts_strv_pushf(env, "%s=%s", kv.v[i].key, kv.v[i].value);
  mxcts_kvs_free(&kv);
}

static void build_argv(const struct mxcts_plan *p, const struct mxcts_suite *s,
                       const struct mxcts_config *c, struct mxcts_job *j) {
  struct mxcts_strv *a = &j->argv;
  if (s->python) { /* the interpreter runs the script, which reads its trace with the probe */
    mxcts_strv_push(a, p->opt.python);
    mxcts_strv_pushf(a, "%s/%s", p->opt.python_dir, s->python);
    mxcts_strv_push(a, "--probe");
  }
  mxcts_strv_push(a, p->opt.probe);
  mxcts_strv_push(a, "--impl");
  mxcts_strv_push(a, p->opt.impl);
  mxcts_strv_push(a, "--workload");
  mxcts_strv_push(a, c->workload);
  struct mxcts_kvs params = {0};
  for (size_t i = 0; i < c->params.n; i++) mxcts_kvs_set(&params, c->params.v[i].key, c->params.v[i].value);
  if (j->kind == MXCTS_JOB_PROFILE)
    for (size_t i = 0; i < s->profile_params.n; i++)
      mxcts_kvs_set(&params, s->profile_params.v[i].key, s->profile_params.v[i].value);
  mxcts_kvs_set(&params, "depth", p->opt.depth ? p->opt.depth : "quick");
  for (size_t i = 0; i < params.n; i++) {
    mxcts_strv_push(a, "--param");
    mxcts_strv_pushf(a, "%s=%s", params.v[i].key, params.v[i].value);
  }
  mxcts_kvs_free(&params);
  mxcts_strv_push(a, "--seed");
  mxcts_strv_pushf(a, "%ld", j->seed);
  mxcts_strv_push(a, "--out");
  mxcts_strv_pushf(a, "%s/result.json", j->dir);
  if (j->kind == MXCTS_JOB_PROFILE) { /* the trace goes beside result.json */
    mxcts_strv_push(a, "--profile");
    mxcts_strv_push(a, j->dir);
  }
}

static void add_job(struct mxcts_plan *p, size_t si, size_t ci, enum mxcts_job_kind kind, int round,
                    long seed) {
  const struct mxcts_suite *s = &p->suites[si];
  const struct mxcts_config *c = &s->configs[ci];
  mxcts_grow(&p->jobs, &p->cap, p->njobs + 1, sizeof *p->jobs);
  struct mxcts_job *j = &p->jobs[p->njobs++];
  memset(j, 0, sizeof *j);
  j->suite = si;
  j->config = ci;
  j->kind = kind;
  j->round = round;
  j->seed = seed;
  j->timed = kind != MXCTS_JOB_PROFILE && s->timed &&
             (p->opt.time_every_config || mxcts_suite_config_timed(s, ci));
  j->timeout_s = s->timeout_s * (p->opt.timeout_scale > 0 ? p->opt.timeout_scale : 1.0);
  if (kind == MXCTS_JOB_PROFILE) j->id = mxcts_xasprintf("%s/%s/profile", s->name, c->id);
  else j->id = mxcts_xasprintf("%s/%s/r%03d", s->name, c->id, round);
  j->dir = mxcts_xasprintf("%s/%s", p->opt.out, j->id);
  build_env(&p->opt, c, s->python != NULL, &j->env);
  build_argv(p, s, c, j);
}

/* Rounds first..last of the configs flagged in `use`, each round in seeded
 * order; a round's seed and order depend only on the suite's stream and the
 * round's number, whichever batch it is in. */
static void add_rounds(struct mxcts_plan *p, size_t si, const bool *use, int first, int last) {
  const struct mxcts_suite *s = &p->suites[si];
  uint64_t stream = suite_stream(p->opt.seed, s->name);
  size_t *order = mxcts_xcalloc(s->nconfigs, sizeof *order);
  for (int r = first; r <= last; r++) {
    seeded_order(stream, r, order, s->nconfigs);
    long seed = probe_seed(stream, (uint64_t)r);
    for (size_t i = 0; i < s->nconfigs; i++)
      if (use[order[i]]) add_job(p, si, order[i], MXCTS_JOB_ROUND, r, seed);
  }
  free(order);
}

static void add_suite_profiles(struct mxcts_plan *p, size_t si) {
  const struct mxcts_suite *s = &p->suites[si];
  long seed = probe_seed(suite_stream(p->opt.seed, s->name), 0x70726f66ULL);
  for (size_t c = 0; c < s->nconfigs; c++)
    if (mxcts_suite_config_needs_profile(s, c)) add_job(p, si, c, MXCTS_JOB_PROFILE, 0, seed);
}

static void add_suite_rounds(struct mxcts_plan *p, size_t si) {
  const struct mxcts_suite *s = &p->suites[si];
  bool *use = mxcts_xcalloc(s->nconfigs, sizeof *use);
  for (size_t c = 0; c < s->nconfigs; c++)
    use[c] = (p->opt.time_every_config && s->timed) || mxcts_suite_config_needs_rounds(s, c);
  add_rounds(p, si, use, 1, s->rounds);
  free(use);
}

static void build_jobs(struct mxcts_plan *p) {
  for (size_t si = 0; si < p->nsuites; si++)
    if (!p->skip_reason[si]) add_suite_profiles(p, si);
  for (int timed = 0; timed <= 1; timed++)
    for (size_t si = 0; si < p->nsuites; si++)
      if (!p->skip_reason[si] && p->suites[si].timed == (timed == 1)) add_suite_rounds(p, si);
}

/* --- requirements ---------------------------------------------------------------- */

/* Run one preflight process, `argv` in OUT/preflight/NAME with the base
 * environment (and MXNET_LIBRARY_PATH for Python), under the runner's usual
 * deadline and lock.  Returns its directory (caller frees), or NULL when the
 * runner itself failed. */
static char *run_preflight(const struct mxcts_plan *p, const char *name, const char *const *argv,
                           bool python) {
  struct mxcts_config none = {0};
  struct mxcts_strv env = {0}, words = {0};
  build_env(&p->opt, &none, python, &env);
  for (size_t i = 0; argv[i]; i++) mxcts_strv_push(&words, argv[i]);
  char *id = mxcts_xasprintf("preflight/%s", name);
  char *dir = mxcts_xasprintf("%s/%s", p->opt.out, id);
  struct mxcts_proc proc = {id, dir, words.v, env.v,
                            MXCTS_DEFAULT_TIMEOUT * (p->opt.timeout_scale > 0 ? p->opt.timeout_scale : 1.0),
                            false, MXCTS_NO_GROUP};
  struct mxcts_run_opts ro = {1, p->opt.grace_s, p->opt.lock_file, NULL, false, NULL, NULL, NULL};
  if (mxcts_run_procs(&proc, 1, &ro) != 0) {
    free(dir);
    dir = NULL;
  }
  free(id);
  mxcts_strv_free(&words);
  mxcts_strv_free(&env);
  return dir;
}

/* How many GPUs the implementation reports, asked once through a probe
 * process (workload gpu_count) in OUT/preflight/gpu-count.  -1 when no
 * answer came: the GPU suites then run and their own processes show what
 * is wrong. */
/* The result of one preflight probe process (workload gpu_count, in
 * OUT/preflight/gpu-count): how many GPUs the implementation has and, as
 * every result, its identity (impl: version, features).  A new reference,
 * or NULL when no result came. */
static json_t *ask_implementation(const struct mxcts_plan *p) {
  char *result = mxcts_xasprintf("%s/preflight/gpu-count/result.json", p->opt.out);
  const char *argv[] = {p->opt.probe, "--impl", p->opt.impl, "--workload", "gpu_count",
                        "--seed", "1", "--out", result, NULL};
  char *dir = run_preflight(p, "gpu-count", argv, false);
  json_t *doc = NULL;
  if (dir && mxcts_json_load(result, &doc) != 0) doc = NULL;
  free(result);
  free(dir);
  return doc;
}

static int ask_gpu_count(const struct mxcts_plan *p) {
  json_t *doc = ask_implementation(p);
  int gpus = -1;
  json_t *n = json_object_get(json_object_get(doc, "metrics"), "gpu_count");
  const char *status = json_string_value(json_object_get(doc, "status"));
  if (status && strcmp(status, "ok") == 0 && json_is_number(n) && json_number_value(n) >= 0)
    gpus = (int)json_number_value(n);
  json_decref(doc);
  return gpus;
}

/* "1.9.1" as MXGetVersion reports it (10901); -1 when it is not a version. */
static long version_number(const char *text) {
  int major, minor, patch = 0, end = 0;
  int n = sscanf(text, "%d.%d%n.%d%n", &major, &minor, &end, &patch, &end);
  if (n < 2 || text[end] || major < 0 || minor < 0 || minor > 99 || patch < 0 || patch > 99) return -1;
  return major * 10000L + minor * 100L + patch;
}

/* --expect-version and --expect-feature: the library the run would judge is
 * the one named, or the plan is refused. */
static int check_identity(const struct mxcts_plan *p) {
  const struct mxcts_options *o = &p->opt;
  if (!o->expect_version && !o->expect_features.n) return 0;
  long want = o->expect_version ? version_number(o->expect_version) : 0;
  if (want < 0) return mxcts_set_error(MXR_EINVAL, "--expect-version %s: expected MAJOR.MINOR[.PATCH]", o->expect_version);
  json_t *doc = ask_implementation(p), *impl = json_object_get(doc, "impl");
  json_t *version = json_object_get(impl, "version"), *features = json_object_get(impl, "features");
  int rc = 0;
  if (!json_is_integer(version))
    rc = mxcts_set_error(MXR_EINVAL, "%s did not say which version it is (see %s/preflight/gpu-count): "
                         "--expect-version and --expect-feature cannot be checked", o->impl, o->out);
  else if (want && json_integer_value(version) != want)
    rc = mxcts_set_error(MXR_EINVAL, "%s reports version %lld (MXGetVersion), not %s (%ld): refusing to judge "
                         "another library than --expect-version names", o->impl,
                         (long long)json_integer_value(version), o->expect_version, want);
  for (size_t i = 0; !rc && i < o->expect_features.n; i++)
    if (!json_is_true(json_object_get(features, o->expect_features.v[i])))
      rc = mxcts_set_error(MXR_EINVAL, "%s does not enable feature %s (MXLibInfoFeatures): refusing to judge "
                           "it under --expect-feature %s", o->impl, o->expect_features.v[i], o->expect_features.v[i]);
  json_decref(doc);
  return rc;
}

/* `path` made absolute without resolving symbolic links: a virtual
 * environment's bin/python is a link to the base interpreter, and only the
 * link's own place makes it use the environment's packages. */
static char *absolute_unresolved(const char *path) {
  if (path[0] == '/') return mxcts_xstrdup(path);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return mxcts_xstrdup(path);
  return mxcts_xasprintf("%s/%s", cwd, path);
}

/* The interpreter named by --python / MXCTS_PYTHON as an absolute path: a
 * name without a slash is looked up on PATH.  NULL, with *why set (caller
 * frees), when there is none. */
static char *find_python(const char *name, char **why) {
  if (strchr(name, '/')) {
    if (mxcts_is_executable(name)) return absolute_unresolved(name);
    *why = mxcts_xasprintf("no Python interpreter: %s is not an executable file (--python or MXCTS_PYTHON)", name);
    return NULL;
  }
  const char *path = getenv("PATH");
  for (const char *d = path ? path : ""; *d;) {
    size_t n = strcspn(d, ":");
    char *cand = mxcts_xasprintf("%.*s/%s", (int)n, n ? d : ".", name);
    if (mxcts_is_executable(cand)) {
      char *abs = absolute_unresolved(cand);
      free(cand);
      return abs;
    }
    free(cand);
    d += n + (d[n] == ':');
  }
  *why = mxcts_xasprintf("no Python interpreter: %s is not on PATH (give --python PATH or set MXCTS_PYTHON)", name);
  return NULL;
}

/* The last non-empty line of a process' stderr (caller frees), or "". */
static char *stderr_last_line(const char *dir) {
  char *file = mxcts_xasprintf("%s/stderr.txt", dir);
  char *tail = mxcts_file_tail(file, 400);
  free(file);
  if (!tail) return mxcts_xstrdup("");
  size_t n = strlen(tail);
  while (n && (tail[n - 1] == '\n' || tail[n - 1] == '\r' || tail[n - 1] == ' ')) tail[--n] = '\0';
  char *nl = strrchr(tail, '\n');
  char *line = mxcts_xstrdup(nl ? nl + 1 : tail);
  free(tail);
  return line;
}

/* How a preflight process ended, when not with status 0 (caller frees);
 * NULL when it did. */
static char *preflight_failure(const char *dir) {
  struct mxcts_outcome o;
  if (mxcts_outcome_load(dir, &o)) return mxcts_xstrdup(mxcts_last_error());
  char *why = NULL, *line = stderr_last_line(dir);
  if (o.how == MXCTS_EXIT_CODE && o.code != 0)
    why = mxcts_xasprintf("exited with status %d%s%s", o.code, *line ? ": " : "", line);
  else if (o.how == MXCTS_EXIT_SIGNAL)
    why = mxcts_xasprintf("killed by %s%s%s", mxcts_signal_name(o.signal), *line ? ": " : "", line);
  else if (o.how == MXCTS_EXIT_TIMEOUT)
    why = mxcts_xasprintf("no answer within %gs", o.timeout_s);
  else if (o.how != MXCTS_EXIT_CODE)
    why = mxcts_xstrdup(o.detail ? o.detail : "could not be started");
  free(line);
  mxcts_outcome_free(&o);
  return why;
}

/* Why the suites' Python workloads cannot run (caller frees), or NULL when
 * they can: the interpreter is found and imports mxnet with the library
 * under test (one process, OUT/preflight/python).  Resolves p->opt.python
 * to an absolute path. */
static char *python_unusable(struct mxcts_plan *p) {
  char *why = NULL;
  char *python = find_python(p->opt.python ? p->opt.python : "python3", &why);
  if (!python) return why;
  free(p->opt.python);
  p->opt.python = python;
  const char *argv[] = {python, "-c", "import mxnet", NULL};
  char *dir = run_preflight(p, "python", argv, true);
  char *failure = dir ? preflight_failure(dir) : mxcts_xstrdup(mxcts_last_error());
  if (failure)
    why = mxcts_xasprintf("%s cannot import mxnet with MXNET_LIBRARY_PATH=%s (%s)", python,
                          p->opt.impl, failure);
  free(failure);
  free(dir);
  return why;
}

/* Why suite si's Python probe script cannot run (caller frees), or NULL. */
static char *python_script_missing(const struct mxcts_plan *p, size_t si) {
  const struct mxcts_suite *s = &p->suites[si];
  char *script = mxcts_xasprintf("%s/%s", p->opt.python_dir ? p->opt.python_dir : ".", s->python);
  char *why = NULL;
  if (!p->opt.python_dir || access(script, R_OK) != 0)
    why = mxcts_xasprintf("the Python probe %s cannot be read (--python-dir)", script);
  free(script);
  return why;
}

/* Skip the suites that need a GPU when the implementation has none, and
 * the suites with a Python workload when it cannot run (no interpreter, no
 * mxnet package, no script), each with the reason. */
static void check_requirements(struct mxcts_plan *p) {
  int gpus = -2; /* not asked yet */
  char *no_python = NULL;
  bool python_checked = false;
  for (size_t si = 0; si < p->nsuites; si++) {
    if (p->skip_reason[si]) continue;
    if (p->suites[si].python) {
      if (!python_checked)
        no_python = p->opt.no_python ? mxcts_xasprintf("no Python: %s (--no-python)", p->opt.no_python)
                                     : python_unusable(p);
      python_checked = true;
      p->skip_reason[si] = no_python ? mxcts_xstrdup(no_python) : python_script_missing(p, si);
    }
    if (p->skip_reason[si] || !p->suites[si].needs_gpu) continue;
    if (gpus == -2) gpus = ask_gpu_count(p);
    if (gpus == 0)
      p->skip_reason[si] = mxcts_xasprintf("needs a GPU; %s reports none (MXGetGPUCount: 0)",
                                           p->opt.impl_name ? p->opt.impl_name : p->opt.impl);
  }
  free(no_python);
}

static int apply_options(struct mxcts_plan *p) {
  struct mxcts_expectations ex = {0};
  int rc = p->opt.expectations ? mxcts_expect_load(p->opt.expectations, &ex) : 0;
  p->skip_reason = mxcts_xcalloc(p->nsuites ? p->nsuites : 1, sizeof *p->skip_reason);
  for (size_t si = 0; !rc && si < p->nsuites; si++) {
    if (p->opt.rounds) rc = mxcts_suite_set_rounds(&p->suites[si], p->opt.rounds);
    mxcts_suite_set_depth(&p->suites[si], p->opt.depth != NULL);
    const struct mxcts_expect_entry *e = mxcts_expect_skips_suite(&ex, p->suites[si].name);
    if (e) p->skip_reason[si] = mxcts_xstrdup(e->reason);
  }
  mxcts_expect_free(&ex);
  return rc;
}

/* --assertion: narrow each suite to the selected assertions and drop the
 * suites left with none. */
static int select_assertions(struct mxcts_plan *p) {
  size_t kept = 0;
  int rc = 0;
  for (size_t si = 0; si < p->nsuites; si++) {
    int n = rc ? 0 : mxcts_suite_select(&p->suites[si], &p->opt.assertions);
    if (n < 0) rc = n;
    if (n > 0) p->suites[kept++] = p->suites[si];
    else mxcts_suite_free(&p->suites[si]);
  }
  p->nsuites = kept;
  if (!rc && !kept)
    rc = mxcts_set_error(MXR_EINVAL, "--assertion: no assertion of the selected suites matches");
  return rc;
}

int mxcts_plan_build(const struct mxcts_options *opt, struct mxcts_plan *out) {
  memset(out, 0, sizeof *out);
  copy_options(&out->opt, opt);
  int rc = mxcts_suites_load_dir(opt->suites_dir, &opt->suites, &out->suites, &out->nsuites);
  if (!rc && opt->assertions.n) rc = select_assertions(out);
  if (!rc) rc = apply_options(out);
  if (!rc) rc = check_identity(out);
  if (!rc) check_requirements(out);
  if (!rc) build_jobs(out);
  if (rc) mxcts_plan_free(out);
  return rc;
}

int mxcts_plan_rounds_run(const struct mxcts_plan *p, size_t suite) {
  int rounds = 0;
  for (size_t i = 0; i < p->njobs; i++)
    if (p->jobs[i].suite == suite && p->jobs[i].kind == MXCTS_JOB_ROUND && p->jobs[i].round > rounds)
      rounds = p->jobs[i].round;
  return rounds;
}

size_t mxcts_plan_add_batch(struct mxcts_plan *p, size_t si, const size_t *configs, size_t n,
                            int rounds) {
  const struct mxcts_suite *s = &p->suites[si];
  bool *use = mxcts_xcalloc(s->nconfigs, sizeof *use);
  for (size_t i = 0; i < n; i++) use[configs[i]] = true;
  size_t first = p->njobs;
  int done = mxcts_plan_rounds_run(p, si);
  add_rounds(p, si, use, done + 1, done + rounds);
  free(use);
  return first;
}

void mxcts_plan_free(struct mxcts_plan *p) {
  for (size_t i = 0; i < p->njobs; i++) {
    free(p->jobs[i].id);
    free(p->jobs[i].dir);
    mxcts_strv_free(&p->jobs[i].argv);
    mxcts_strv_free(&p->jobs[i].env);
  }
  free(p->jobs);
  for (size_t i = 0; p->skip_reason && i < p->nsuites; i++) free(p->skip_reason[i]);
  free(p->skip_reason);
  mxcts_suites_free(p->suites, p->nsuites);
  mxcts_options_free(&p->opt);
  memset(p, 0, sizeof *p);
}

/* --- commands ------------------------------------------------------------------------- */

static void quote_words(struct mxcts_buf *b, const struct mxcts_strv *l) {
  for (size_t i = 0; i < l->n; i++) {
    mxcts_buf_puts(b, " ");
    mxcts_shell_quote(b, l->v[i]);
  }
}

char *mxcts_job_command(const struct mxcts_job *j) {
  struct mxcts_buf b = {0};
  mxcts_buf_puts(&b, "cd ");
  mxcts_shell_quote(&b, j->dir);
  mxcts_buf_puts(&b, " && env -i");
  quote_words(&b, &j->env);
  quote_words(&b, &j->argv);
  return mxcts_buf_take(&b);
}

char *mxcts__group_file(const struct mxcts_job *j) {
  const char *slash = strrchr(j->dir, '/');
  int len = slash ? (int)(slash - j->dir) : 0;
  return mxcts_xasprintf("%.*s/group-failed", len, j->dir);
}

static void exec_line(const struct mxcts_plan *p, const struct mxcts_job *j, struct mxcts_buf *b) {
  mxcts_shell_quote(b, p->opt.self ? p->opt.self : "mxcts");
  mxcts_buf_puts(b, " exec --dir ");
  mxcts_shell_quote(b, j->dir);
  mxcts_buf_printf(b, " --timeout %g --grace %g --lock %s", j->timeout_s, p->opt.grace_s,
                   j->timed ? "exclusive" : "shared");
  if (p->opt.lock_file) {
    mxcts_buf_puts(b, " --lock-file ");
    mxcts_shell_quote(b, p->opt.lock_file);
  }
  if (!p->opt.keep_going) {
    /* the config's processes share it, over every batch, as in run */
    char *file = mxcts__group_file(j);
    mxcts_buf_puts(b, " --group-file ");
    mxcts_shell_quote(b, file);
    free(file);
  }
  mxcts_buf_puts(b, " --");
  quote_words(b, &j->env);
  quote_words(b, &j->argv);
}

static bool same_round(const struct mxcts_job *a, const struct mxcts_job *b) {
  return a->timed && b->timed && a->suite == b->suite && a->kind == b->kind && a->round == b->round;
}

void mxcts_plan_print_lines(const struct mxcts_plan *p, size_t first, FILE *f) {
  struct mxcts_buf b = {0};
  for (size_t i = first; i < p->njobs; i++) {
    if (i > first && same_round(&p->jobs[i - 1], &p->jobs[i])) mxcts_buf_puts(&b, " && ");
    else if (b.len) {
      fprintf(f, "%s\n", b.s);
      b.len = 0;
      b.s[0] = '\0';
    }
    exec_line(p, &p->jobs[i], &b);
  }
  if (b.len) fprintf(f, "%s\n", b.s);
  mxcts_buf_free(&b);
}

/* --- plan.json ------------------------------------------------------------------------- */

static json_t *str_or_null(const char *s) { return s ? mxcts_json_text(s) : json_null(); }

static json_t *strv_json(const struct mxcts_strv *l) {
  json_t *a = json_array();
  for (size_t i = 0; i < l->n; i++) json_array_append_new(a, mxcts_json_text(l->v[i]));
  return a;
}

static json_t *options_json(const struct mxcts_options *o) {
  return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:I, s:i,"
                   " s:f, s:f, s:f, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                   "impl", str_or_null(o->impl), "impl_name", str_or_null(o->impl_name), "probe",
                   str_or_null(o->probe), "suites_dir", str_or_null(o->suites_dir), "suites",
                   strv_json(&o->suites), "assertions", strv_json(&o->assertions), "out",
                   str_or_null(o->out), "expectations",
                   str_or_null(o->expectations), "tap", str_or_null(o->tap), "junit",
                   str_or_null(o->junit), "json", str_or_null(o->json), "html",
                   str_or_null(o->html), "rounds", o->rounds, "seed", (json_int_t)o->seed, "jobs",
                   o->jobs, "grace_s", o->grace_s, "timeout_scale", o->timeout_scale,
                   "max_backoff_s", o->max_backoff_s,
                   "lock_file", str_or_null(o->lock_file), "pass_env", strv_json(&o->pass_env),
                   "self", str_or_null(o->self), "python", str_or_null(o->python),
                   "python_dir", str_or_null(o->python_dir), "no_python", str_or_null(o->no_python),
                   "depth", str_or_null(o->depth));
}

static json_t *job_json(const struct mxcts_plan *p, const struct mxcts_job *j) {
  return json_pack("{s:s, s:s, s:s, s:s, s:i, s:I, s:b, s:o, s:f, s:o, s:o}", "id", j->id, "suite",
                   p->suites[j->suite].name, "config", p->suites[j->suite].configs[j->config].id,
                   "kind", mxcts__job_kind_name(j->kind), "round", j->round, "seed",
                   (json_int_t)j->seed, "timed", j->timed, "dir", mxcts_json_text(j->dir), "timeout_s",
                   j->timeout_s, "argv", strv_json(&j->argv), "env", strv_json(&j->env));
}

static int plan_save(const struct mxcts_plan *p, const char *path) {
  json_t *suites = json_array(), *jobs = json_array();
  for (size_t i = 0; i < p->nsuites; i++)
    json_array_append_new(suites, json_pack("{s:o, s:O, s:o}", "file", mxcts_json_text(p->suites[i].file), "doc",
                                            p->suites[i].source, "skip",
                                            str_or_null(p->skip_reason[i])));
  for (size_t i = 0; i < p->njobs; i++) json_array_append_new(jobs, job_json(p, &p->jobs[i]));
  json_t *doc = json_pack("{s:i, s:o, s:o, s:o}", "mxcts_plan", MXCTS_PLAN_FORMAT, "options",
                          options_json(&p->opt), "suites", suites, "jobs", jobs);
  int rc = doc ? mxcts_json_save(path, doc)
               : mxcts_set_error(MXR_EINVAL, "%s: cannot build the plan document", path);
  json_decref(doc);
  return rc;
}

/* A plan's jobs start afresh: no group file (mxcts__group_file) of an
 * earlier run in the same directory may skip them. */
static int remove_group_files(const struct mxcts_plan *p) {
  int rc = 0;
  for (size_t i = 0; i < p->njobs && !rc; i++) {
    char *file = mxcts__group_file(&p->jobs[i]);
    if (unlink(file) != 0 && errno != ENOENT)
      rc = mxcts_set_error(MXR_ESYS, "%s: cannot remove: %s", file, strerror(errno));
    free(file);
  }
  return rc;
}

int mxcts_plan_write(const struct mxcts_plan *p) {
  char *path = mxcts_xasprintf("%s/plan.json", p->opt.out);
  int rc = mxcts_mkdirs(p->opt.out);
  if (!rc) rc = plan_save(p, path);
  if (!rc) rc = remove_group_files(p);
  free(path);
  return rc;
}

static char *interrupted_path(const struct mxcts_plan *p) {
  return mxcts_xasprintf("%s/interrupted", p->opt.out);
}

int mxcts_plan_mark_interrupted(const struct mxcts_plan *p, int sig) {
  char *path = interrupted_path(p);
  const char *name = mxcts_signal_name(sig);
  int rc = mxcts_write_file(path, name, strlen(name));
  free(path);
  return rc;
}

char *mxcts_plan_interrupted(const struct mxcts_plan *p) {
  char *path = interrupted_path(p), *text = NULL;
  size_t n;
  if (access(path, F_OK) == 0 && mxcts_read_file(path, &text, &n) == 0) text[strcspn(text, "\n")] = '\0';
  free(path);
  return text;
}

void mxcts_plan_clear_interrupted(const struct mxcts_plan *p) {
  char *path = interrupted_path(p);
  unlink(path);
  free(path);
}

static bool has_outcome(const struct mxcts_job *j) {
  char *path = mxcts_xasprintf("%s/outcome.json", j->dir);
  bool yes = access(path, F_OK) == 0;
  free(path);
  return yes;
}

/* One runner group per (suite, config): its structure run and rounds repeat
 * one measurement, so a crash or timeout in one need not be repeated. */
static size_t *config_group_bases(const struct mxcts_plan *p) {
  size_t *base = mxcts_xcalloc(p->nsuites + 1, sizeof *base);
  for (size_t s = 0; s < p->nsuites; s++) base[s + 1] = base[s] + p->suites[s].nconfigs;
  return base;
}

/* What mxcts_plan_run_jobs tracks while a batch runs: the jobs of each
 * suite still to end, and the hook to call when a suite's have. */
struct batch_watch {
  struct mxcts_plan *plan;
  const size_t *job_of; /* per process: its job */
  size_t *left; /* per suite */
  struct mxcts_progress *progress;
  mxcts_suite_done_fn suite_done;
  void *ctx;
};

static void job_done(void *ctx, size_t proc) {
  struct batch_watch *w = ctx;
  size_t suite = w->plan->jobs[w->job_of[proc]].suite;
  if (--w->left[suite] > 0 || !w->suite_done) return;
  char *line = w->suite_done(w->ctx, w->plan, suite);
  if (line) mxcts_progress_print(w->progress, line);
  free(line);
}

int mxcts_plan_run_jobs(struct mxcts_plan *p, size_t first, bool progress,
                        mxcts_suite_done_fn suite_done, void *ctx) {
  size_t n = 0;
  struct mxcts_proc *procs = mxcts_xcalloc(p->njobs - first + 1, sizeof *procs);
  size_t *job_of = mxcts_xcalloc(p->njobs - first + 1, sizeof *job_of);
  size_t *group_base = config_group_bases(p);
  size_t *left = mxcts_xcalloc(p->nsuites + 1, sizeof *left);
  for (size_t i = first; i < p->njobs; i++) {
    const struct mxcts_job *j = &p->jobs[i];
    if (p->resuming && has_outcome(j)) continue;
    job_of[n] = i;
    procs[n++] = (struct mxcts_proc){j->id,        j->dir,   j->argv.v,
                                     j->env.v,     j->timeout_s, j->timed,
                                     group_base[j->suite] + j->config};
    left[j->suite]++;
  }
  free(group_base);
  struct mxcts_progress pr;
  mxcts__progress_init(&pr, stderr, false);
  pr.enabled = pr.enabled && progress;
  pr.heartbeat_s = progress ? 30 : 0;
  mxcts__progress_add_total(&pr, n);
  struct batch_watch w = {p, job_of, left, &pr, suite_done, ctx};
  struct mxcts_run_opts ro = {p->opt.jobs, p->opt.grace_s, p->opt.lock_file, &pr,
                              p->opt.keep_going, NULL, job_done, &w};
  int rc = mxcts_run_procs(procs, n, &ro);
  mxcts__progress_finish(&pr);
  free(left);
  free(job_of);
  free(procs);
  return rc;
}
