/* A whole run of a plan (run/run.h). */
#include "run/run_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "judge/judge.h"
#include "run/run.h"

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

int mxcts_session_save_plan(const struct mxcts_plan *p) {
  char *path = mxcts_xasprintf("%s/plan.json", p->opt.out);
  int rc = mxcts_mkdirs(p->opt.out);
  if (!rc) rc = mxcts__plan_save(p, path);
  if (!rc) rc = remove_group_files(p);
  free(path);
  return rc;
}

/* One runner group per (suite, config): its structure run and rounds repeat
 * one measurement, so a crash or timeout in one need not be repeated. */
static size_t *config_group_bases(const struct mxcts_plan *p) {
  size_t *base = mxcts_xcalloc(p->nsuites + 1, sizeof *base);
  for (size_t s = 0; s < p->nsuites; s++) base[s + 1] = base[s] + p->suites[s].nconfigs;
  return base;
}

static int run_jobs(struct mxcts_plan *p, size_t first, bool progress) {
  size_t n = p->njobs - first;
  struct mxcts_proc *procs = mxcts_xcalloc(n + 1, sizeof *procs);
  size_t *group_base = config_group_bases(p);
  for (size_t i = 0; i < n; i++) {
    const struct mxcts_job *j = &p->jobs[first + i];
    procs[i] = (struct mxcts_proc){j->id,        j->dir,   j->argv.v,
                                   j->env.v,     j->timeout_s, j->timed,
                                   group_base[j->suite] + j->config};
  }
  free(group_base);
  struct mxcts_progress pr;
  mxcts__progress_init(&pr, stderr, false);
  pr.enabled = pr.enabled && progress;
  mxcts__progress_add_total(&pr, n);
  struct mxcts_run_opts ro = {p->opt.jobs, p->opt.grace_s, p->opt.lock_file, &pr,
                              p->opt.keep_going, NULL};
  int rc = mxcts_run_procs(procs, n, &ro);
  mxcts__progress_finish(&pr);
  free(procs);
  return rc;
}

size_t mxcts_session_add_reruns(struct mxcts_plan *p, const json_t *results) {
  size_t first = p->njobs, nsuites = p->nsuites;
  for (size_t si = 0; si < nsuites; si++) {
    size_t *configs, n;
    mxcts_judge_rerun_configs(results, p, si, &configs, &n);
    if (n) mxcts__plan_add_rerun(p, si, configs, n);
    free(configs);
  }
  return first;
}

int mxcts_session_run(struct mxcts_plan *p, bool progress, FILE *note, json_t **results) {
  *results = NULL;
  int rc = mxcts_session_save_plan(p);
  if (!rc && note)
    fprintf(note, "mxcts run: %zu processes, seed %llu, results in %s\n", p->njobs,
            (unsigned long long)p->opt.seed, p->opt.out);
  if (!rc) rc = run_jobs(p, 0, progress);
  if (!rc) rc = mxcts_judge(p, results);
  size_t first = rc ? p->njobs : mxcts_session_add_reruns(p, *results);
  if (first == p->njobs) return rc;
  if (note)
    fprintf(note, "mxcts run: rerunning %zu processes of failed orderings with a new seed\n",
            p->njobs - first);
  json_decref(*results);
  *results = NULL;
  rc = mxcts_session_save_plan(p);
  if (!rc) rc = run_jobs(p, first, progress);
  if (!rc) rc = mxcts_judge(p, results);
  return rc;
}
