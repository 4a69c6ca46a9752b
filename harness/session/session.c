/* A whole run of a plan, batch by batch (session/session.h). */
#include "session/session.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/judge.h"
#include "run/run.h"

/* The rounds of a suite's next batch: its batch size, within its budget. */
static int next_batch_rounds(const struct mxcts_plan *p, size_t si) {
  const struct mxcts_suite *s = &p->suites[si];
  int left = s->max_rounds - mxcts_plan_rounds_run(p, si);
  return left < s->batch ? left : s->batch;
}

size_t mxcts_session_add_batches(struct mxcts_plan *p, const json_t *results) {
  size_t first = p->njobs, nsuites = p->nsuites;
  for (size_t si = 0; si < nsuites; si++) {
    size_t *configs, n;
    mxcts_judge_batch_configs(results, p, si, &configs, &n);
    int rounds = next_batch_rounds(p, si);
    if (n && rounds > 0) mxcts_plan_add_batch(p, si, configs, n, rounds);
    free(configs);
  }
  return first;
}

/* The share of the undecided pairs' rounds that were left out as
 * contended. */
static double contended_share(const json_t *results) {
  double left_out = 0, seen = 0;
  size_t i, k, m;
  json_t *s, *a, *pair;
  json_array_foreach(json_object_get(results, "suites"), i, s) {
    json_array_foreach(json_object_get(s, "assertions"), k, a) {
      if (!json_is_true(json_object_get(a, "more_rounds"))) continue;
      json_array_foreach(json_object_get(json_object_get(a, "diag"), "pairs"), m, pair) {
        left_out += (double)json_integer_value(json_object_get(pair, "rounds_left_out"));
        seen += (double)json_integer_value(json_object_get(pair, "rounds_seen"));
      }
    }
  }
  return seen > 0 ? left_out / seen : 0;
}

double mxcts_session_backoff(const json_t *results, int busy_batches, double max_s) {
  if (contended_share(results) <= 0.25 || busy_batches < 1) return 0;
  double wait = ldexp(1.0, busy_batches - 1);
  return wait < max_s ? wait : max_s;
}

/* "NAME: 7 pass, 1 fail" for a suite of a results document; ", N
 * undecided (another batch)" for orderings that need more rounds. */
static char *suite_line(const json_t *suite) {
  size_t counts[MXCTS_NUM_VERDICTS] = {0}, undecided = 0, i;
  json_t *a;
  json_array_foreach(json_object_get(suite, "assertions"), i, a) {
    if (json_is_true(json_object_get(a, "more_rounds"))) {
      undecided++;
      continue;
    }
    int v = mxcts_verdict_parse(json_string_value(json_object_get(a, "verdict")));
    if (v >= 0) counts[v]++;
  }
  struct mxcts_buf b = {0};
  mxcts_buf_printf(&b, "mxcts: %s:", json_string_value(json_object_get(suite, "name")));
  const char *sep = " ";
  for (int v = 0; v < MXCTS_NUM_VERDICTS; v++)
    if (counts[v]) mxcts_buf_printf(&b, "%s%zu %s", sep, counts[v], mxcts_verdict_name(v)), sep = ", ";
  if (undecided) mxcts_buf_printf(&b, "%s%zu undecided (another batch)", sep, undecided);
  return mxcts_buf_take(&b);
}

/* The hook of mxcts_plan_run_jobs: judge the plan so far and give the
 * finished suite's line.  (The other suites' verdicts are not read.) */
static char *suite_done(void *ctx, struct mxcts_plan *p, size_t suite) {
  (void)ctx;
  json_t *results = NULL;
  if (mxcts_judge(p, &results)) return NULL; /* the final judging reports it */
  char *line = suite_line(json_array_get(json_object_get(results, "suites"), suite));
  json_decref(results);
  return line;
}

/* Run jobs [first, njobs) and judge all of them. */
static int run_and_judge(struct mxcts_plan *p, size_t first, bool progress, json_t **results) {
  json_decref(*results);
  *results = NULL;
  int rc = mxcts_plan_write(p);
  if (!rc) rc = mxcts_plan_run_jobs(p, first, progress, progress ? suite_done : NULL, NULL);
  int sig = mxcts_run_interrupted();
  if (!rc && sig) rc = mxcts_plan_mark_interrupted(p, sig);
  if (!rc) rc = mxcts_judge(p, results);
  return rc;
}

/* A run never reports an old results.json as its own: the previous one is
 * kept as results.previous.json until this run writes its own. */
static int set_aside_old_results(const struct mxcts_plan *p) {
  char *cur = mxcts_xasprintf("%s/results.json", p->opt.out);
  char *old = mxcts_xasprintf("%s/results.previous.json", p->opt.out);
  int rc = rename(cur, old) == 0 || errno == ENOENT
               ? 0
               : mxcts_set_error(MXR_ESYS, "%s: cannot move aside: %s", cur, strerror(errno));
  free(cur);
  free(old);
  return rc;
}

int mxcts_session_run(struct mxcts_plan *p, bool progress, FILE *note, json_t **results) {
  *results = NULL;
  if (note) {
    fprintf(note, "mxcts run: %zu processes, seed %llu, results in %s\n", p->njobs,
            (unsigned long long)p->opt.seed, p->opt.out);
    if (progress) /* the suites that will not run get their line now */
      for (size_t si = 0; si < p->nsuites; si++)
        if (p->skip_reason[si])
          fprintf(note, "mxcts: %s: %zu skip (%s)\n", p->suites[si].name, p->suites[si].nasserts,
                  p->skip_reason[si]);
  }
  mxcts_plan_clear_interrupted(p);
  int rc = set_aside_old_results(p), busy = 0;
  if (!rc) rc = run_and_judge(p, 0, progress, results);
  while (!rc && !mxcts_run_interrupted()) {
    size_t first = mxcts_session_add_batches(p, *results);
    if (first == p->njobs) break;
    busy = contended_share(*results) > 0.25 ? busy + 1 : 0;
    double wait = mxcts_session_backoff(*results, busy, p->opt.max_backoff_s);
    if (note)
      fprintf(note, "mxcts run: orderings undecided: another batch, %zu processes%s\n",
              p->njobs - first, wait > 0 ? " (after a wait: rounds ran contended)" : "");
    mxcts_sleep(wait);
    rc = run_and_judge(p, first, progress, results);
  }
  return rc;
}
