/* Performance A/B between implementations (compare/compare.h). */
#include "compare/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonv.h"
#include "config.h"

#define DEFAULT_ROUNDS 10
#define CONFIDENCE 0.95

struct lib {
  const char *name;
  struct mxcts_plan plan;
  size_t *jobs; /* the plan's timed round jobs, in plan order */
  size_t njobs;
};

/* Every timed suite that needs no GPU and runs mxcts-probe (not a Python
 * workload): what compare runs by default. */
static int default_suites(const char *dir, struct mxcts_strv *out) {
  struct mxcts_suite *s;
  size_t n;
  struct mxcts_strv all = {0};
  int rc = mxcts_suites_load_dir(dir, &all, &s, &n);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++)
    if (s[i].timed && !s[i].needs_gpu && !s[i].python) mxcts_strv_push(out, s[i].name);
  mxcts_suites_free(s, n);
  return 0;
}

static int build_lib(const struct mxcts_compare_opts *o, const struct mxcts_strv *suites,
                     size_t i, struct lib *l) {
  struct mxcts_options opt = *o->base;
  opt.impl = o->impls->v[i];
  opt.impl_name = o->names->v[i];
  opt.out = mxcts_xasprintf("%s/%s", o->base->out, o->names->v[i]);
  opt.suites = *suites;
  opt.expectations = NULL;
  opt.tap = opt.junit = opt.json = opt.html = NULL;
  opt.time_every_config = true; /* a config no ordering reads is still a figure */
  if (!opt.rounds) opt.rounds = DEFAULT_ROUNDS;
  l->name = o->names->v[i];
  int rc = mxcts_plan_build(&opt, &l->plan);
  free(opt.out);
  if (rc) return rc;
  l->jobs = mxcts_xcalloc(l->plan.njobs + 1, sizeof *l->jobs);
  for (size_t k = 0; k < l->plan.njobs; k++) {
    const struct mxcts_job *j = &l->plan.jobs[k];
    if (j->kind == MXCTS_JOB_ROUND && j->timed) l->jobs[l->njobs++] = k;
  }
  return 0;
}

static void free_libs(struct lib *libs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (libs[i].jobs) mxcts_plan_free(&libs[i].plan);
    free(libs[i].jobs);
  }
  free(libs);
}

static int check_opts(const struct mxcts_compare_opts *o) {
  if (o->impls->n < 2 || o->names->n != o->impls->n)
    return mxcts_set_error(MXR_EINVAL, "compare needs two or more libraries, one name each");
  for (size_t i = 0; i < o->names->n; i++)
    for (size_t k = 0; k < i; k++)
      if (!strcmp(o->names->v[i], o->names->v[k]))
        return mxcts_set_error(MXR_EINVAL,
                               "two libraries are named '%s': give each its own --impl-name",
                               o->names->v[i]);
  return 0;
}

/* One plan per library; every plan has the same timed jobs. */
static int build_libs(const struct mxcts_compare_opts *o, struct lib **out) {
  struct mxcts_strv suites = {0};
  int rc = o->base->suites.n ? 0 : default_suites(o->base->suites_dir, &suites);
  const struct mxcts_strv *chosen = o->base->suites.n ? &o->base->suites : &suites;
  struct lib *libs = mxcts_xcalloc(o->impls->n, sizeof *libs);
  for (size_t i = 0; !rc && i < o->impls->n; i++) rc = build_lib(o, chosen, i, &libs[i]);
  if (!rc && libs[0].njobs == 0)
    rc = mxcts_set_error(MXR_EINVAL, "the chosen suites have no timed config to compare");
  for (size_t i = 1; !rc && i < o->impls->n; i++)
    if (libs[i].njobs != libs[0].njobs)
      rc = mxcts_set_error(MXR_EINVAL, "the plans of %s and %s differ", libs[0].name,
                           libs[i].name);
  mxcts_strv_free(&suites);
  if (rc) free_libs(libs, o->impls->n);
  else *out = libs;
  return rc;
}

/* Each job of the plan, every library's process for it in a seeded random
 * order of the libraries. */
static struct mxcts_proc *interleave(struct lib *libs, size_t nlibs, uint64_t seed, size_t *n) {
  size_t njobs = libs[0].njobs;
  struct mxcts_proc *procs = mxcts_xcalloc(njobs * nlibs + 1, sizeof *procs);
  size_t *order = mxcts_xcalloc(nlibs, sizeof *order);
  uint64_t rng = mxcts_hash_str(seed, "compare");
  *n = 0;
  for (size_t k = 0; k < njobs; k++) {
    for (size_t i = 0; i < nlibs; i++) order[i] = i;
    for (size_t i = nlibs - 1; i > 0; i--) { /* Fisher-Yates */
      size_t r = (size_t)mxcts_rng_below(&rng, i + 1), t = order[i];
      order[i] = order[r], order[r] = t;
    }
    for (size_t i = 0; i < nlibs; i++) {
      const struct lib *l = &libs[order[i]];
      const struct mxcts_job *j = &l->plan.jobs[l->jobs[k]];
      size_t group = (order[i] * l->plan.nsuites + j->suite) * 4096 + j->config;
      procs[(*n)++] = (struct mxcts_proc){j->id, j->dir, j->argv.v, j->env.v, j->timeout_s, true, group};
    }
  }
  free(order);
  return procs;
}

/* The timed median a finished job reported, or NaN when it did not finish
 * well (crash, timeout, error, no timing). */
static double job_median(const struct mxcts_job *j) {
  struct mxcts_outcome oc;
  if (mxcts_outcome_load(j->dir, &oc)) return NAN;
  bool ran = oc.how == MXCTS_EXIT_CODE && oc.code == 0;
  mxcts_outcome_free(&oc);
  if (!ran) return NAN;
  char *path = mxcts_xasprintf("%s/result.json", j->dir);
  struct mxcts_result r;
  int rc = mxcts_result_load(path, &r);
  free(path);
  if (rc) return NAN;
  double v = !strcmp(r.status, "ok") && r.has_median ? r.median : NAN;
  mxcts_result_free(&r);
  return v;
}

/* The finite values of x, compacted; returns how many. */
static size_t finite_only(const double *x, size_t n, double *out) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(x[i])) out[m++] = x[i];
  return m;
}

/* One library's rounds of a row: its median and how many rounds failed. */
static json_t *impl_json(const char *name, const double *v, size_t n) {
  double *ok = mxcts_xcalloc(n + 1, sizeof *ok);
  size_t m = finite_only(v, n, ok);
  json_t *j = json_pack("{s:s, s:o, s:I, s:I}", "name", name, "median",
                        mxcts_json_real_or_null(mxcts_median(ok, m)), "rounds", (json_int_t)m, "failed",
                        (json_int_t)(n - m));
  free(ok);
  return j;
}

/* time(b) / time(a) over the rounds both finished. */
static json_t *ratio_json(const char *a, const char *b, const double *va, const double *vb,
                          size_t n) {
  double *r = mxcts_xcalloc(n + 1, sizeof *r), lo, hi;
  size_t m = 0, faster = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(va[i]) || !isfinite(vb[i]) || va[i] <= 0) continue;
    r[m] = vb[i] / va[i];
    faster += r[m++] < 1.0;
  }
  bool ci = mxcts_median_ci(r, m, CONFIDENCE, &lo, &hi);
  json_t *j = json_pack("{s:s, s:s, s:o, s:o, s:o, s:I, s:I}", "impl", b, "baseline", a, "ratio",
                        mxcts_json_real_or_null(mxcts_median(r, m)), "ci_low",
                        ci ? json_real(lo) : json_null(), "ci_high", ci ? json_real(hi) : json_null(),
                        "faster_rounds", (json_int_t)faster, "paired_rounds", (json_int_t)m);
  free(r);
  return j;
}

/* values[lib][round-1] of one (suite, config); NaN where it failed. */
static double **row_values(const struct lib *libs, size_t nlibs, size_t suite, size_t config,
                           int rounds) {
  double **v = mxcts_xcalloc(nlibs, sizeof *v);
  for (size_t i = 0; i < nlibs; i++) {
    v[i] = mxcts_xcalloc((size_t)rounds, sizeof **v);
    for (int r = 0; r < rounds; r++) v[i][r] = NAN;
    for (size_t k = 0; k < libs[i].njobs; k++) {
      const struct mxcts_job *j = &libs[i].plan.jobs[libs[i].jobs[k]];
      if (j->suite == suite && j->config == config && j->round >= 1 && j->round <= rounds)
        v[i][j->round - 1] = job_median(j);
    }
  }
  return v;
}

static json_t *row_json(const struct lib *libs, size_t nlibs, size_t suite, size_t config) {
  const struct mxcts_suite *s = &libs[0].plan.suites[suite];
  int rounds = mxcts_plan_rounds_run(&libs[0].plan, suite);
  double **v = row_values(libs, nlibs, suite, config, rounds);
  json_t *impls = json_array(), *ratios = json_array();
  for (size_t i = 0; i < nlibs; i++) {
    json_array_append_new(impls, impl_json(libs[i].name, v[i], (size_t)rounds));
    if (i > 0)
      json_array_append_new(ratios, ratio_json(libs[0].name, libs[i].name, v[0], v[i], (size_t)rounds));
  }
  for (size_t i = 0; i < nlibs; i++) free(v[i]);
  free(v);
  return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "suite", s->name, "config",
                   s->configs[config].id, "workload", s->configs[config].workload, "unit", "ms",
                   "impls", impls, "ratios", ratios);
}

static bool has_timed_rounds(const struct lib *l, size_t suite, size_t config) {
  for (size_t k = 0; k < l->njobs; k++) {
    const struct mxcts_job *j = &l->plan.jobs[l->jobs[k]];
    if (j->suite == suite && j->config == config) return true;
  }
  return false;
}

/* Why a job gave no timing: its result's error, else how it ended. */
static char *job_failure(const struct mxcts_job *j) {
  char *path = mxcts_xasprintf("%s/result.json", j->dir);
  struct mxcts_result r; /* zeroed when the load fails: free is safe */
  struct mxcts_outcome oc;
  char *why = mxcts_result_load(path, &r) == 0 && r.error && *r.error ? mxcts_xstrdup(r.error) : NULL;
  if (!why && mxcts_outcome_load(j->dir, &oc) == 0) {
    why = oc.detail ? mxcts_xstrdup(oc.detail) : mxcts_xasprintf("exit %d, signal %d", oc.code, oc.signal);
    mxcts_outcome_free(&oc);
  }
  mxcts_result_free(&r);
  free(path);
  return why ? why : mxcts_xstrdup("it left no result");
}

/* {"name", "path", "ran": processes that gave a timing, "failure": why the
 * first that did not (absent when all did)}. */
static json_t *lib_json(const struct lib *l, const char *path) {
  size_t ran = 0;
  char *failure = NULL;
  for (size_t k = 0; k < l->njobs; k++) {
    const struct mxcts_job *j = &l->plan.jobs[l->jobs[k]];
    if (isfinite(job_median(j))) ran++;
    else if (!failure) failure = job_failure(j);
  }
  json_t *v = json_pack("{s:s, s:s, s:I, s:I}", "name", l->name, "path", path, "ran", (json_int_t)ran,
                        "processes", (json_int_t)l->njobs);
  if (failure) json_object_set_new(v, "failure", mxcts_json_text(failure));
  free(failure);
  return v;
}

static json_t *document(const struct lib *libs, size_t nlibs, const struct mxcts_compare_opts *o) {
  json_t *rows = json_array(), *impls = json_array();
  const struct mxcts_plan *p = &libs[0].plan;
  for (size_t si = 0; si < p->nsuites; si++)
    for (size_t c = 0; c < p->suites[si].nconfigs; c++)
      if (has_timed_rounds(&libs[0], si, c)) json_array_append_new(rows, row_json(libs, nlibs, si, c));
  for (size_t i = 0; i < nlibs; i++) json_array_append_new(impls, lib_json(&libs[i], o->impls->v[i]));
  return json_pack("{s:i, s:s, s:I, s:f, s:o, s:o}", "mxcts_compare", MXCTS_COMPARE_FORMAT,
                   "generated_by", "mxcts " PACKAGE_VERSION, "seed", (json_int_t)o->base->seed,
                   "confidence", CONFIDENCE, "impls", impls, "rows", rows);
}

int mxcts_compare_run(const struct mxcts_compare_opts *o, json_t **out) {
  *out = NULL;
  struct lib *libs;
  int rc = check_opts(o);
  if (!rc) rc = build_libs(o, &libs);
  if (rc) return rc;
  size_t nlibs = o->impls->n, nprocs;
  struct mxcts_proc *procs = interleave(libs, nlibs, o->base->seed, &nprocs);
  if (o->note)
    fprintf(o->note, "mxcts compare: %zu libraries, %zu processes, seed %llu, results in %s\n",
            nlibs, nprocs, (unsigned long long)o->base->seed, o->base->out);
  struct mxcts_run_opts ro = {1, o->base->grace_s, o->base->lock_file, NULL, false, NULL, NULL, NULL};
  rc = mxcts_run_procs(procs, nprocs, &ro);
  free(procs);
  if (!rc) {
    *out = document(libs, nlibs, o);
    if (o->targets) mxcts_targets_check(o->targets, o->targets_file, *out);
    char *path = mxcts_xasprintf("%s/compare.json", o->base->out);
    rc = mxcts_json_save(path, *out);
    free(path);
  }
  free_libs(libs, nlibs);
  return rc;
}
