/* Reading OUT/plan.json back (run/run.h: mxcts_plan_load). */
#include <stdlib.h>
#include <string.h>

#include "common/jsonv.h"
#include "run/run_internal.h"

static int opt_string(const struct mxcts_jloc *at, json_t *o, const char *key, char **out) {
  if (json_is_null(json_object_get(o, key))) return 0;
  return mxcts_jget_string(at, o, key, false, out);
}

static int opt_strv(const struct mxcts_jloc *at, json_t *o, const char *key,
                    struct mxcts_strv *out) {
  json_t *a = NULL;
  int rc = mxcts_jget_typed(at, o, key, false, JSON_ARRAY, &a);
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) {
    if (rc) break;
    if (!json_is_string(v)) rc = mxcts_jfail_key(at, key, "item %zu is not a string", i);
    else mxcts_strv_push(out, json_string_value(v));
  }
  return rc;
}

static int load_options(const struct mxcts_jloc *top, json_t *doc, struct mxcts_options *o) {
  json_t *v = NULL;
  int rc = mxcts_jget_typed(top, doc, "options", true, JSON_OBJECT, &v);
  if (rc) return rc;
  struct mxcts_jloc at = {top->file, "options"};
  long rounds = 0, seed = 0, jobs = 1;
  const char *const strings[] = {"impl", "impl_name", "probe", "suites_dir", "out", "expectations",
                                 "tap", "junit", "json", "html", "lock_file", "self", "python",
                                 "python_dir", "no_python", "depth"};
  char **fields[] = {&o->impl, &o->impl_name, &o->probe, &o->suites_dir, &o->out,
                     &o->expectations, &o->tap, &o->junit, &o->json, &o->html, &o->lock_file,
                     &o->self, &o->python, &o->python_dir, &o->no_python, &o->depth};
  for (size_t i = 0; !rc && i < sizeof fields / sizeof *fields; i++)
    rc = opt_string(&at, v, strings[i], fields[i]);
  if (!rc) rc = opt_strv(&at, v, "suites", &o->suites);
  if (!rc && json_object_get(v, "assertions")) rc = opt_strv(&at, v, "assertions", &o->assertions);
  if (!rc) rc = opt_strv(&at, v, "pass_env", &o->pass_env);
  if (!rc) rc = mxcts_jget_long(&at, v, "rounds", false, 0, MXCTS_MAX_ROUNDS, &rounds);
  if (!rc) rc = mxcts_jget_long(&at, v, "seed", false, 0, 0xffffffffL, &seed);
  if (!rc) rc = mxcts_jget_long(&at, v, "jobs", false, 1, 1024, &jobs);
  if (!rc) rc = mxcts_jget_double(&at, v, "grace_s", false, 0, 3600, &o->grace_s);
  if (!rc) rc = mxcts_jget_double(&at, v, "timeout_scale", false, 0, 1000, &o->timeout_scale);
  if (!rc) rc = mxcts_jget_double(&at, v, "max_backoff_s", false, 0, 3600, &o->max_backoff_s);
  o->rounds = (int)rounds;
  o->seed = (uint64_t)seed;
  o->jobs = (int)jobs;
  if (!rc && (!o->impl || !o->probe || !o->out))
    rc = mxcts_jfail(&at, "impl, probe and out are required");
  return rc;
}

static int load_suite(const struct mxcts_jloc *at, json_t *v, struct mxcts_plan *p, size_t i) {
  char *file = NULL, *skip = NULL;
  json_t *doc = NULL;
  int rc = mxcts_jget_string(at, v, "file", true, &file);
  if (!rc) rc = mxcts_jget_typed(at, v, "doc", true, JSON_OBJECT, &doc);
  if (!rc && !json_is_null(json_object_get(v, "skip")))
    rc = mxcts_jget_string(at, v, "skip", false, &skip);
  if (!rc && (rc = mxcts_suite_parse(doc, file, false, &p->suites[i])) != 0)
    mxcts_prefix_error(rc, "%s: %s.doc", at->file, at->path); /* the plan's copy is what is wrong */
  if (!rc) p->nsuites = i + 1;
  if (!rc && p->opt.rounds) rc = mxcts_suite_set_rounds(&p->suites[i], p->opt.rounds);
  if (!rc) mxcts_suite_set_depth(&p->suites[i], p->opt.depth != NULL);
  if (p->nsuites == i + 1) p->skip_reason[i] = skip; /* freed with the plan */
  else free(skip);
  free(file);
  return rc;
}

static int load_suites(const struct mxcts_jloc *top, json_t *doc, struct mxcts_plan *p) {
  json_t *a = NULL;
  int rc = mxcts_jget_typed(top, doc, "suites", true, JSON_ARRAY, &a);
  if (rc) return rc;
  p->suites = mxcts_xcalloc(json_array_size(a), sizeof *p->suites);
  p->skip_reason = mxcts_xcalloc(json_array_size(a) + 1, sizeof *p->skip_reason);
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) {
    char *path = mxcts_jpath_index("suites", i);
    struct mxcts_jloc at = {top->file, path};
    rc = json_is_object(v) ? load_suite(&at, v, p, i) : mxcts_jfail(&at, "expected an object");
    free(path);
    if (rc) return rc;
  }
  return 0;
}

static long find_suite(const struct mxcts_plan *p, const char *name) {
  for (size_t i = 0; i < p->nsuites; i++)
    if (!strcmp(p->suites[i].name, name)) return (long)i;
  return -1;
}

static int job_refs(const struct mxcts_jloc *at, json_t *v, const struct mxcts_plan *p,
                    struct mxcts_job *j) {
  char *suite = NULL, *config = NULL, *kind = NULL;
  int rc = mxcts_jget_string(at, v, "suite", true, &suite);
  if (!rc) rc = mxcts_jget_string(at, v, "config", true, &config);
  if (!rc) rc = mxcts_jget_string(at, v, "kind", true, &kind);
  long si = rc ? -1 : find_suite(p, suite);
  long ci = si < 0 ? -1 : mxcts_suite_find_config(&p->suites[si], config);
  if (!rc && ci < 0) rc = mxcts_jfail(at, "suite \"%s\" config \"%s\" is not in the plan", suite, config);
  int k = -1;
  for (int t = MXCTS_JOB_ROUND; !rc && t <= MXCTS_JOB_PROFILE; t++)
    if (!strcmp(kind, mxcts__job_kind_name((enum mxcts_job_kind)t))) k = t;
  if (!rc && k < 0) rc = mxcts_jfail_key(at, "kind", "\"%s\" is not round or profile", kind);
  if (!rc) {
    j->suite = (size_t)si;
    j->config = (size_t)ci;
    j->kind = (enum mxcts_job_kind)k;
  }
  free(suite);
  free(config);
  free(kind);
  return rc;
}

static int load_job(const struct mxcts_jloc *at, json_t *v, const struct mxcts_plan *p,
                    struct mxcts_job *j) {
  long round = 0;
  int rc = json_is_object(v) ? 0 : mxcts_jfail(at, "expected an object");
  if (!rc) rc = job_refs(at, v, p, j);
  if (!rc) rc = mxcts_jget_string(at, v, "id", true, &j->id);
  if (!rc) rc = mxcts_jget_string(at, v, "dir", true, &j->dir);
  if (!rc) rc = mxcts_jget_long(at, v, "round", true, 0, MXCTS_MAX_ROUNDS, &round);
  if (!rc) rc = mxcts_jget_long(at, v, "seed", true, 0, 0x7fffffffL, &j->seed);
  if (!rc) rc = mxcts_jget_bool(at, v, "timed", true, &j->timed);
  if (!rc) rc = mxcts_jget_double(at, v, "timeout_s", true, 0, 1e7, &j->timeout_s);
  if (!rc) rc = opt_strv(at, v, "argv", &j->argv);
  if (!rc) rc = opt_strv(at, v, "env", &j->env);
  if (!rc && j->argv.n == 0) rc = mxcts_jfail_key(at, "argv", "is empty");
  j->round = (int)round;
  return rc;
}

static int load_jobs(const struct mxcts_jloc *top, json_t *doc, struct mxcts_plan *p) {
  json_t *a = NULL;
  int rc = mxcts_jget_typed(top, doc, "jobs", true, JSON_ARRAY, &a);
  if (rc) return rc;
  p->jobs = mxcts_xcalloc(json_array_size(a), sizeof *p->jobs);
  p->cap = json_array_size(a);
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) {
    char *path = mxcts_jpath_index("jobs", i);
    struct mxcts_jloc at = {top->file, path};
    rc = load_job(&at, v, p, &p->jobs[i]);
    p->njobs = i + 1;
    free(path);
    if (rc) return rc;
  }
  return 0;
}

/* `s` with the prefix `from` (a whole path component) replaced by `to`. */
static void rebase_string(char **s, const char *from, const char *to) {
  size_t n = strlen(from);
  if (strncmp(*s, from, n) != 0 || ((*s)[n] != '/' && (*s)[n] != '\0')) return;
  char *moved = mxcts_xasprintf("%s%s", to, *s + n);
  free(*s);
  *s = moved;
}

/* A results folder that was moved or copied: the plan's paths inside the
 * old folder (out, the jobs' directories and probe arguments) are made to
 * point into the folder plan.json is in. */
static void rebase_out(struct mxcts_plan *p, const char *plan_path) {
  char *abs = mxcts_abspath(plan_path), *slash = strrchr(abs, '/');
  if (slash) *slash = '\0';
  if (slash && strcmp(abs, p->opt.out) != 0) {
    char *from = mxcts_xstrdup(p->opt.out);
    for (size_t i = 0; i < p->njobs; i++) {
      rebase_string(&p->jobs[i].dir, from, abs);
      for (size_t k = 0; k < p->jobs[i].argv.n; k++) rebase_string(&p->jobs[i].argv.v[k], from, abs);
    }
    rebase_string(&p->opt.out, from, abs);
    free(from);
  }
  free(abs);
}

int mxcts_plan_load(const char *path, struct mxcts_plan *out) {
  json_t *doc;
  memset(out, 0, sizeof *out);
  int rc = mxcts_json_load(path, &doc);
  if (rc) return rc;
  struct mxcts_jloc top = {path, ""};
  long format = 0;
  rc = json_is_object(doc) ? mxcts_jget_long(&top, doc, "mxcts_plan", true, 1, 1000, &format)
                           : mxcts_jfail(&top, "expected an object");
  if (!rc && format != MXCTS_PLAN_FORMAT)
    rc = mxcts_jfail_key(&top, "mxcts_plan", "format %ld is not supported", format);
  if (!rc) rc = load_options(&top, doc, &out->opt);
  if (!rc) rc = load_suites(&top, doc, out);
  if (!rc) rc = load_jobs(&top, doc, out);
  if (!rc) rebase_out(out, path);
  json_decref(doc);
  if (rc) mxcts_plan_free(out);
  return rc;
}
