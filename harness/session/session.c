/* A whole run of a plan (session/session.h). */
#include "session/session.h"

#include <stdio.h>
#include <stdlib.h>

#include "judge/judge.h"
#include "run/run.h"

size_t mxcts_session_add_reruns(struct mxcts_plan *p, const json_t *results) {
  size_t first = p->njobs, nsuites = p->nsuites;
  for (size_t si = 0; si < nsuites; si++) {
    size_t *configs, n;
    mxcts_judge_rerun_configs(results, p, si, &configs, &n);
    if (n) mxcts_plan_add_rerun(p, si, configs, n);
    free(configs);
  }
  return first;
}

int mxcts_session_run(struct mxcts_plan *p, bool progress, FILE *note, json_t **results) {
  *results = NULL;
  int rc = mxcts_plan_write(p);
  if (!rc && note)
    fprintf(note, "mxcts run: %zu processes, seed %llu, results in %s\n", p->njobs,
            (unsigned long long)p->opt.seed, p->opt.out);
  if (!rc) rc = mxcts_plan_run_jobs(p, 0, progress);
  if (!rc) rc = mxcts_judge(p, results);
  size_t first = rc ? p->njobs : mxcts_session_add_reruns(p, *results);
  if (first == p->njobs) return rc;
  if (note)
    fprintf(note, "mxcts run: rerunning %zu processes of failed orderings with a new seed\n",
            p->njobs - first);
  json_decref(*results);
  *results = NULL;
  rc = mxcts_plan_write(p);
  if (!rc) rc = mxcts_plan_run_jobs(p, first, progress);
  if (!rc) rc = mxcts_judge(p, results);
  return rc;
}
