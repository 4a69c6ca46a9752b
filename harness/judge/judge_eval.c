/* One evaluator per assertion type (judge/judge_internal.h).  Each is called only
 * when every process it reads ended well (judge.c decides crash, timeout
 * and error first), and sets e->verdict to pass or fail. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "judge/judge_internal.h"

static const char *cfg_id(const struct mxcts_judging *j, size_t si, size_t c) {
  return j->plan->suites[si].configs[c].id;
}

static void fail(struct mxcts_eval *e) { e->verdict = MXCTS_V_FAIL; }

/* --- structure ---------------------------------------------------------------- */

static json_t *sizes_json(const long *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, json_integer(v[i]));
  return a;
}

static bool sizes_equal(const struct mxcts_pass_expect *x, const struct mxcts_pass_result *r,
                        struct mxcts_buf *why) {
  if (!r->has_sizes) return mxcts_buf_puts(why, "no segment_sizes reported"), false;
  if (r->nsizes != x->nsizes) {
    mxcts_buf_printf(why, "%zu engine ops in segment_sizes, expected %zu", r->nsizes, x->nsizes);
    return false;
  }
  for (size_t i = 0; i < x->nsizes; i++)
    if (r->sizes[i] != x->sizes[i] && r->sizes[i] != -1) { /* -1: the trace cannot tell */
      mxcts_buf_printf(why, "engine op %zu holds %ld ops, expected %ld", i + 1, r->sizes[i],
                       x->sizes[i]);
      return false;
    }
  return true;
}

static bool names_equal(const struct mxcts_pass_expect *x, const struct mxcts_pass_result *r,
                        struct mxcts_buf *why) {
  if (!r->has_names) return mxcts_buf_puts(why, "no segment names reported"), false;
  for (size_t i = 0; i < r->names.n; i++)
    if (!mxcts_strv_contains(&x->names, r->names.v[i])) {
      mxcts_buf_printf(why, "unexpected segment name \"%.80s\"", r->names.v[i]);
      return false;
    }
  for (size_t i = 0; i < x->names.n; i++)
    if (!mxcts_strv_contains(&r->names, x->names.v[i])) {
      mxcts_buf_printf(why, "segment name \"%.80s\" missing", x->names.v[i]);
      return false;
    }
  return true;
}

/* A predicted count against the result's (-1: the result has none). */
static bool count_equal(const char *what, long expected, long got, struct mxcts_buf *why) {
  if (got == expected) return true;
  if (got < 0) mxcts_buf_printf(why, "no count of %s reported", what);
  else mxcts_buf_printf(why, "%ld %s, expected %ld", got, what, expected);
  return false;
}

/* Compare one pass; returns a diag object; appends to why on mismatch. */
static json_t *compare_pass(const struct mxcts_pass_expect *x, const struct mxcts_pass_result *r,
                            struct mxcts_buf *why) {
  json_t *d = json_pack("{s:s, s:s, s:I, s:o}", "name", x->name, "expected", x->summary,
                        "expected_engine_ops", (json_int_t)x->engine_ops,
                        "expected_segment_sizes", sizes_json(x->sizes, x->nsizes));
  bool ok = r != NULL;
  if (!r) mxcts_buf_printf(why, "no pass named \"%s\" in the result", x->name);
  if (ok && (x->compare & MXCTS_CMP_ENGINE_OPS) && r->engine_ops != x->engine_ops) {
    if (r->engine_ops < 0) mxcts_buf_puts(why, "no engine_ops reported");
    else mxcts_buf_printf(why, "%ld engine ops, expected %ld", r->engine_ops, x->engine_ops);
    ok = false;
  }
  if (ok && (x->compare & MXCTS_CMP_SEGMENT_SIZES)) ok = sizes_equal(x, r, why);
  if (ok && (x->compare & MXCTS_CMP_BULKED_EVENTS) && r->bulked_events != x->bulked_events) {
    mxcts_buf_printf(why, "%ld bulked events, expected %ld", r->bulked_events, x->bulked_events);
    ok = false;
  }
  if (ok && (x->compare & MXCTS_CMP_NAMES)) ok = names_equal(x, r, why);
  if (ok && (x->compare & MXCTS_CMP_GRAPH_LAUNCHES))
    ok = count_equal("CUDA graph launches", x->graph_launches, r->graph_launches, why);
  if (ok && (x->compare & MXCTS_CMP_GRAPH_CAPTURES))
    ok = count_equal("CUDA graph captures", x->graph_captures, r->graph_captures, why);
  if (r) {
    json_object_set_new(d, "engine_ops", json_integer(r->engine_ops));
    json_object_set_new(d, "segment_sizes", r->has_sizes ? sizes_json(r->sizes, r->nsizes) : json_null());
    json_object_set_new(d, "bulked_events", json_integer(r->bulked_events));
    if (r->graph_launches >= 0)
      json_object_set_new(d, "graph_launches", json_integer(r->graph_launches));
    if (r->graph_captures >= 0)
      json_object_set_new(d, "graph_captures", json_integer(r->graph_captures));
  }
  json_object_set_new(d, "ok", json_boolean(ok));
  return d;
}

void mxcts__eval_structure(const struct mxcts_judging *j, size_t si,
                           const struct mxcts_assertion *a, struct mxcts_eval *e) {
  json_t *configs = json_array();
  e->verdict = MXCTS_V_PASS;
  for (size_t i = 0; i < a->nstructs; i++) {
    const struct mxcts_structure_expect *x = &a->structs[i];
    size_t *jobs;
    mxcts__judge_jobs(j, si, x->config, MXCTS_JOB_PROFILE, &jobs);
    const struct mxcts_evidence *ev = jobs[0] == SIZE_MAX ? NULL : &j->ev[jobs[0]];
    if (ev && !e->repro) e->repro = &j->plan->jobs[jobs[0]];
    free(jobs);
    json_t *passes = json_array();
    if (!ev || !ev->has_result || !ev->result.has_structure) {
      fail(e);
      mxcts__eval_note(e, "%s: no structure in the result (was it profiled?)", cfg_id(j, si, x->config));
    }
    for (size_t p = 0; ev && ev->has_result && ev->result.has_structure && p < x->npasses; p++) {
      struct mxcts_buf why = {0};
      const struct mxcts_pass_result *r = mxcts_result_pass(&ev->result, x->passes[p].name);
      json_array_append_new(passes, compare_pass(&x->passes[p], r, &why));
      if (why.len) {
        fail(e);
        mxcts__eval_note(e, "%s %s: %s (predicted %s)", cfg_id(j, si, x->config),
                         x->passes[p].name, mxcts_buf_str(&why), x->passes[p].summary);
      }
      mxcts_buf_free(&why);
    }
    json_array_append_new(configs, json_pack("{s:s, s:o}", "config", cfg_id(j, si, x->config),
                                             "passes", passes));
  }
  json_object_set_new(e->diag, "configs", configs);
}

/* --- ordering -------------------------------------------------------------------- */

/* Per-round values of one operand over every round run so far (NAN where
 * the config did not run that round), and how contended each process was
 * (sched.contention; 0 when the probe could not tell); false (with a note)
 * when a value is unusable or a round of the first batch is missing. */
static bool operand_values(const struct mxcts_judging *j, size_t si, const struct mxcts_operand *op,
                           int rounds, double *v, double *contention, struct mxcts_eval *e) {
  size_t *jobs;
  mxcts__judge_jobs(j, si, op->config, MXCTS_JOB_ROUND, &jobs);
  bool ok = true;
  for (int r = 0; r < rounds && ok; r++) {
    v[r] = NAN;
    contention[r] = 0;
    if (jobs[r] == SIZE_MAX) {
      if (r < j->plan->suites[si].rounds) {
        mxcts__eval_note(e, "%s round %d was not run", cfg_id(j, si, op->config), r + 1);
        ok = false;
      }
    } else if (!mxcts_result_number(&j->ev[jobs[r]].result, op->measure, &v[r]) || !(v[r] > 0)) {
      mxcts__eval_note(e, "%s: %s is missing or not a positive number",
                       j->ev[jobs[r]].result.file, op->measure);
      ok = false;
    } else if (!mxcts_result_number(&j->ev[jobs[r]].result, "sched.contention", &contention[r])) {
      contention[r] = 0;
    }
  }
  if (!e->repro && rounds > 0 && jobs[0] != SIZE_MAX) e->repro = &j->plan->jobs[jobs[0]];
  free(jobs);
  return ok;
}

/* One pair's rounds, in the order they ran: the rounds both configs ran,
 * with whether each counts (both processes at most `max` contended; every
 * round when max is 0). */
struct pair_rounds {
  int n;
  double *slower, *faster, *ratio;
  bool *counted;
};

static void pair_rounds_collect(const double *vs, const double *vf, const double *cs,
                                const double *cf, int rounds, double max, struct pair_rounds *pr) {
  pr->n = 0;
  pr->slower = mxcts_xcalloc((size_t)rounds + 1, sizeof *pr->slower);
  pr->faster = mxcts_xcalloc((size_t)rounds + 1, sizeof *pr->faster);
  pr->ratio = mxcts_xcalloc((size_t)rounds + 1, sizeof *pr->ratio);
  pr->counted = mxcts_xcalloc((size_t)rounds + 1, sizeof *pr->counted);
  for (int r = 0; r < rounds; r++) {
    if (isnan(vs[r]) || isnan(vf[r])) continue;
    pr->slower[pr->n] = vs[r];
    pr->faster[pr->n] = vf[r];
    pr->ratio[pr->n] = vs[r] / vf[r];
    pr->counted[pr->n++] = max <= 0 || (cs[r] <= max && cf[r] <= max);
  }
}

static void pair_rounds_free(struct pair_rounds *pr) {
  free(pr->slower);
  free(pr->faster);
  free(pr->ratio);
  free(pr->counted);
}

/* The values of the counted rounds up to the decision. */
static json_t *counted_json(const double *v, const struct pair_rounds *pr, int upto) {
  json_t *a = json_array();
  for (int i = 0; i < upto; i++)
    if (pr->counted[i]) json_array_append_new(a, json_real(v[i]));
  return a;
}

static double counted_median(const double *v, const struct pair_rounds *pr, int upto) {
  double *x = mxcts_xcalloc((size_t)upto + 1, sizeof *x);
  size_t n = 0;
  for (int i = 0; i < upto; i++)
    if (pr->counted[i]) x[n++] = v[i];
  double m = n ? mxcts_median(x, n) : NAN;
  free(x);
  return m;
}

static json_t *number_or_null(double x) { return isnan(x) ? json_null() : json_real(x); }

static json_t *pair_json(const char *slower, const char *faster, const struct mxcts_assertion *a,
                         size_t is, size_t jf, const struct pair_rounds *pr,
                         const struct mxcts_sprt *t) {
  int upto = t->decided_at ? t->decided_at : pr->n;
  json_t *d = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:i, s:i, s:i, s:i, s:i, s:f, s:f, s:f, s:f}",
                        "slower", slower, "faster", faster, "slower_measure", a->slower[is].measure,
                        "faster_measure", a->faster[jf].measure, "slower_median",
                        number_or_null(counted_median(pr->slower, pr, upto)), "faster_median",
                        number_or_null(counted_median(pr->faster, pr, upto)), "ratio_median",
                        number_or_null(counted_median(pr->ratio, pr, upto)), "wins", t->wins,
                        "rounds", t->counted, "rounds_left_out", t->left_out, "rounds_seen", pr->n,
                        "decided_at", t->decided_at, "llr", t->llr, "upper", t->upper,
                        "fail_llr", t->fail_llr, "fail_upper", t->fail_upper);
  json_object_set_new(d, "margin", json_real(a->margin));
  json_object_set_new(d, "decision", json_string(mxcts_sprt_decision_name(t->decision)));
  json_object_set_new(d, "slower_values", counted_json(pr->slower, pr, upto));
  json_object_set_new(d, "faster_values", counted_json(pr->faster, pr, upto));
  return d;
}

static void note_pair(struct mxcts_eval *e, const char *slower, const char *faster,
                      const struct mxcts_assertion *a, const struct mxcts_sprt *t) {
  if (t->decision == MXCTS_SPRT_ACCEPT_H0)
    mxcts__eval_note(e, "%s not slower than %s by more than %g%%: %d wins of %d rounds, fail LLR "
                     "%.2f reached its bound %.2f at round %d", slower, faster, a->margin * 100,
                     t->wins, t->counted, t->fail_llr, t->fail_upper, t->decided_at);
  else if (t->decision == MXCTS_SPRT_CONTINUE)
    mxcts__eval_note(e, "%s vs %s undecided: %d wins of %d counted rounds (%d left out as "
                     "contended), pass LLR %.2f below %.2f, fail LLR %.2f below %.2f", slower,
                     faster, t->wins, t->counted, t->left_out, t->llr, t->upper, t->fail_llr,
                     t->fail_upper);
}

static enum mxcts_sprt_decision judge_pair(const struct mxcts_judging *j, size_t si,
                                           const struct mxcts_assertion *a, size_t is, size_t jf,
                                           const double *vs, const double *vf, const double *cs,
                                           const double *cf, int rounds, json_t *pairs,
                                           struct mxcts_eval *e) {
  struct pair_rounds pr;
  pair_rounds_collect(vs, vf, cs, cf, rounds, a->max_contention, &pr);
  struct mxcts_sprt t;
  mxcts_sprt_init(&t, &j->plan->suites[si].sprt);
  mxcts_sprt_rounds(&t, pr.ratio, pr.counted, pr.n, a->margin);
  const char *slower = cfg_id(j, si, a->slower[is].config), *faster = cfg_id(j, si, a->faster[jf].config);
  json_array_append_new(pairs, pair_json(slower, faster, a, is, jf, &pr, &t));
  note_pair(e, slower, faster, a, &t);
  pair_rounds_free(&pr);
  return t.decision;
}

/* Every pair's SPRT: fail when any pair accepted H0, pass when every pair
 * accepted H1, inconclusive otherwise. */
static void judge_pairs(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                        const double *vs, const double *vf, const double *cs, const double *cf,
                        int n, struct mxcts_eval *e) {
  json_t *pairs = json_array();
  int failed = 0, undecided = 0;
  for (size_t is = 0; is < a->nslower; is++)
    for (size_t jf = 0; jf < a->nfaster; jf++) {
      size_t os = is * (size_t)n, of = jf * (size_t)n;
      enum mxcts_sprt_decision d =
          judge_pair(j, si, a, is, jf, vs + os, vf + of, cs + os, cf + of, n, pairs, e);
      failed += d == MXCTS_SPRT_ACCEPT_H0;
      undecided += d == MXCTS_SPRT_CONTINUE;
    }
  e->verdict = failed ? MXCTS_V_FAIL : undecided ? MXCTS_V_INCONCLUSIVE : MXCTS_V_PASS;
  e->undecided = undecided;
  json_object_set_new(e->diag, "pairs", pairs);
  json_object_set_new(e->diag, "undecided_pairs", json_integer(undecided));
}

void mxcts__eval_ordering(const struct mxcts_judging *j, size_t si,
                          const struct mxcts_assertion *a, struct mxcts_eval *e) {
  int n = mxcts_plan_rounds_run(j->plan, si);
  size_t m = (size_t)n + 1;
  double *vs = mxcts_xcalloc(a->nslower * m, sizeof *vs), *cs = mxcts_xcalloc(a->nslower * m, sizeof *cs);
  double *vf = mxcts_xcalloc(a->nfaster * m, sizeof *vf), *cf = mxcts_xcalloc(a->nfaster * m, sizeof *cf);
  bool ok = true;
  for (size_t i = 0; i < a->nslower; i++)
    ok &= operand_values(j, si, &a->slower[i], n, vs + i * (size_t)n, cs + i * (size_t)n, e);
  for (size_t i = 0; i < a->nfaster; i++)
    ok &= operand_values(j, si, &a->faster[i], n, vf + i * (size_t)n, cf + i * (size_t)n, e);
  if (ok) judge_pairs(j, si, a, vs, vf, cs, cf, n, e);
  else e->verdict = MXCTS_V_ERROR;
  json_object_set_new(e->diag, "rounds_run", json_integer(n));
  free(vs);
  free(vf);
  free(cs);
  free(cf);
}

/* --- checks and value ---------------------------------------------------------------- */

/* Every result (round and structure runs) of a config, in plan order. */
static size_t config_results(const struct mxcts_judging *j, size_t si, size_t c, size_t **out) {
  *out = mxcts_xcalloc(j->plan->njobs + 1, sizeof **out);
  size_t n = 0;
  for (size_t i = 0; i < j->plan->njobs; i++) {
    const struct mxcts_job *job = &j->plan->jobs[i];
    if (job->suite == si && job->config == c && j->ev[i].has_result)
      (*out)[n++] = i;
  }
  return n;
}

void mxcts__eval_checks(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                        struct mxcts_eval *e) {
  size_t results = 0, total = 0, failed = 0;
  e->verdict = MXCTS_V_PASS;
  for (size_t ci = 0; ci < a->nconfigs; ci++) {
    size_t *idx, n = config_results(j, si, a->configs[ci], &idx);
    if (n == 0) {
      fail(e);
      mxcts__eval_note(e, "%s: no results", cfg_id(j, si, a->configs[ci]));
    }
    for (size_t k = 0; k < n; k++) {
      const struct mxcts_result *r = &j->ev[idx[k]].result;
      results++;
      total += r->nchecks;
      if ((long)r->nchecks < a->min_checks) {
        fail(e);
        mxcts__eval_note(e, "%s: %zu checks, expected at least %ld", r->file, r->nchecks, a->min_checks);
      }
      for (size_t c = 0; c < r->nchecks; c++) {
        if (r->checks[c].pass) continue;
        failed++;
        fail(e);
        if (!e->repro) e->repro = &j->plan->jobs[idx[k]];
        mxcts__eval_note(e, "%s: check %s failed: %s", j->plan->jobs[idx[k]].id, r->checks[c].name,
                         r->checks[c].detail);
      }
    }
    free(idx);
  }
  json_object_set_new(e->diag, "results", json_integer((json_int_t)results));
  json_object_set_new(e->diag, "checks", json_integer((json_int_t)total));
  json_object_set_new(e->diag, "failed", json_integer((json_int_t)failed));
}

/* One named check over one config's results. */
static void value_one(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                      size_t c, const char *name, struct mxcts_eval *e) {
  size_t *idx, n = config_results(j, si, c, &idx), matched = 0;
  const char *want = a->expect_pass ? "pass" : "fail";
  for (size_t k = 0; k < n; k++) {
    const struct mxcts_check_result *ch = mxcts_result_check(&j->ev[idx[k]].result, name);
    bool ok = ch && ch->pass == a->expect_pass;
    matched += ok;
    if (ok || a->any_round) continue;
    fail(e);
    if (!e->repro) e->repro = &j->plan->jobs[idx[k]];
    if (!ch) mxcts__eval_note(e, "%s: no check named %s in the result", j->plan->jobs[idx[k]].id, name);
    else mxcts__eval_note(e, "%s: check %s did not %s: %s", j->plan->jobs[idx[k]].id, name, want,
                          ch->detail);
  }
  if (n == 0 || (a->any_round && matched == 0)) {
    fail(e);
    mxcts__eval_note(e, "%s: check %s did not %s in any of %zu results", cfg_id(j, si, c), name,
                     want, n);
  }
  free(idx);
}

void mxcts__eval_value(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                       struct mxcts_eval *e) {
  e->verdict = MXCTS_V_PASS;
  for (size_t ci = 0; ci < a->nconfigs; ci++)
    for (size_t k = 0; k < a->check_names.n; k++)
      value_one(j, si, a, a->configs[ci], a->check_names.v[k], e);
  json_object_set_new(e->diag, "checks", json_pack("{s:o, s:b, s:s}", "names",
                                                   json_array(), "pass", a->expect_pass, "in",
                                                   a->any_round ? "any" : "all"));
  for (size_t k = 0; k < a->check_names.n; k++)
    json_array_append_new(json_object_get(json_object_get(e->diag, "checks"), "names"),
                          json_string(a->check_names.v[k]));
}

/* --- equal ------------------------------------------------------------------------------ */

/* Expand a path with "*" members into (concrete path, value) pairs. */
static void expand(json_t *v, const char *rest, struct mxcts_buf *prefix, json_t *out) {
  if (!v) return;
  if (!*rest) {
    json_object_set(out, mxcts_buf_str(prefix), v);
    return;
  }
  size_t n = strcspn(rest, ".");
  const char *next = rest[n] ? rest + n + 1 : rest + n;
  size_t keep = prefix->len;
  if (n == 1 && rest[0] == '*') {
    const char *key;
    json_t *m;
    json_object_foreach(v, key, m) {
      mxcts_buf_printf(prefix, "%s%s", keep ? "." : "", key);
      expand(m, next, prefix, out);
      prefix->len = keep;
      if (prefix->s) prefix->s[keep] = '\0';
    }
    return;
  }
  char *seg = mxcts_xstrndup(rest, n);
  mxcts_buf_printf(prefix, "%s%s", keep ? "." : "", seg);
  expand(mxcts_json_path(v, seg), next, prefix, out);
  prefix->len = keep;
  if (prefix->s) prefix->s[keep] = '\0';
  free(seg);
}

static json_t *values_at(const struct mxcts_result *r, const char *path) {
  json_t *out = json_object();
  struct mxcts_buf prefix = {0};
  expand(r->root, path, &prefix, out);
  mxcts_buf_free(&prefix);
  return out;
}

/* Compare two jobs' values; note the first difference. */
static bool same_values(const struct mxcts_judging *j, size_t ref, size_t other, const char *path,
                        struct mxcts_eval *e) {
  json_t *a = values_at(&j->ev[ref].result, path), *b = values_at(&j->ev[other].result, path);
  bool ok = json_object_size(a) > 0 && json_equal(a, b);
  if (json_object_size(a) == 0) {
    mxcts__eval_note(e, "%s: nothing at %s", j->ev[ref].result.file, path);
  } else if (!ok) {
    char *x = mxcts_json_brief(a), *y = mxcts_json_brief(b);
    mxcts__eval_note(e, "%s has %s but %s has %s", j->plan->jobs[ref].id, x,
                     j->plan->jobs[other].id, y);
    free(x);
    free(y);
  }
  json_decref(a);
  json_decref(b);
  return ok;
}

void mxcts__eval_equal(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                       struct mxcts_eval *e) {
  const struct mxcts_plan *p = j->plan;
  size_t compared = 0, groups = 0;
  bool *seen = mxcts_xcalloc(p->njobs + 1, sizeof *seen);
  e->verdict = MXCTS_V_PASS;
  /* Group this assertion's results by probe seed (same inputs). */
  for (size_t i = 0; i < p->njobs; i++) {
    const struct mxcts_job *ji = &p->jobs[i];
    bool mine = false;
    for (size_t c = 0; c < a->nconfigs; c++) mine |= ji->config == a->configs[c];
    if (seen[i] || ji->suite != si || !mine || !j->ev[i].has_result) continue;
    size_t members = 0;
    for (size_t k = i; k < p->njobs; k++) {
      const struct mxcts_job *jk = &p->jobs[k];
      bool theirs = false;
      for (size_t c = 0; c < a->nconfigs; c++) theirs |= jk->config == a->configs[c];
      if (seen[k] || !theirs || jk->suite != si || jk->kind != ji->kind || jk->seed != ji->seed ||
          !j->ev[k].has_result)
        continue;
      seen[k] = true;
      members++;
      if (k == i) continue;
      compared++;
      if (!same_values(j, i, k, a->path, e)) {
        fail(e);
        if (!e->repro) e->repro = jk;
      }
    }
    groups += members > 1;
  }
  if (compared == 0) {
    fail(e);
    mxcts__eval_note(e, "no two configs ran with the same seed: nothing to compare");
  }
  json_object_set_new(e->diag, "path", json_string(a->path));
  json_object_set_new(e->diag, "seed_groups", json_integer((json_int_t)groups));
  json_object_set_new(e->diag, "comparisons", json_integer((json_int_t)compared));
  free(seen);
}

/* --- profile_file ------------------------------------------------------------------------ */

static bool check_trace(const char *path, const struct mxcts_assertion *a, struct mxcts_eval *e) {
  json_t *doc;
  if (mxcts_json_load_flags(path, JSON_DECODE_INT_AS_REAL, &doc)) {
    mxcts__eval_note(e, "%s", mxcts_last_error());
    return false;
  }
  json_t *events = json_object_get(doc, "traceEvents");
  bool ok = json_is_array(events);
  if (!ok) mxcts__eval_note(e, "%s: no traceEvents array", path);
  size_t valid = 0, i;
  json_t *ev;
  bool *found = mxcts_xcalloc(a->names_include.n + 1, sizeof *found);
  json_array_foreach(events, i, ev) {
    const char *name = json_string_value(json_object_get(ev, "name"));
    if (!name || !json_is_string(json_object_get(ev, "ph"))) continue;
    valid++;
    for (size_t k = 0; k < a->names_include.n; k++) found[k] |= strstr(name, a->names_include.v[k]) != NULL;
  }
  if (ok && (long)valid < a->min_events) {
    mxcts__eval_note(e, "%s: %zu events with a name and a phase, expected at least %ld", path, valid,
                     a->min_events);
    ok = false;
  }
  for (size_t k = 0; ok && k < a->names_include.n; k++)
    if (!found[k]) {
      mxcts__eval_note(e, "%s: no event name contains \"%s\"", path, a->names_include.v[k]);
      ok = false;
    }
  free(found);
  json_decref(doc);
  return ok;
}

void mxcts__eval_profile_file(const struct mxcts_judging *j, size_t si,
                              const struct mxcts_assertion *a, struct mxcts_eval *e) {
  size_t files = 0;
  e->verdict = MXCTS_V_PASS;
  for (size_t ci = 0; ci < a->nconfigs; ci++) {
    size_t *jobs;
    mxcts__judge_jobs(j, si, a->configs[ci], MXCTS_JOB_ROUND, &jobs);
    for (int r = 0; r < j->plan->suites[si].rounds; r++) {
      if (jobs[r] == SIZE_MAX) continue;
      char *path = mxcts_xasprintf("%s/%s", j->plan->jobs[jobs[r]].dir, a->file);
      files++;
      if (!check_trace(path, a, e)) {
        fail(e);
        if (!e->repro) e->repro = &j->plan->jobs[jobs[r]];
      }
      free(path);
    }
    free(jobs);
  }
  if (!files) {
    fail(e);
    mxcts__eval_note(e, "no process ran to leave %s", a->file);
  }
  json_object_set_new(e->diag, "file", json_string(a->file));
  json_object_set_new(e->diag, "files", json_integer((json_int_t)files));
}

/* --- greater ----------------------------------------------------------------------------- */

/* The number at the path in config c's process of round r (index r-1);
 * false, with a note, when that round did not run or has no number there. */
static bool round_number(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                         const size_t *jobs, size_t c, int r, double *out, struct mxcts_eval *e) {
  if (jobs[r] == SIZE_MAX) {
    mxcts__eval_note(e, "%s round %d was not run", cfg_id(j, si, c), r + 1);
    return false;
  }
  if (!e->repro) e->repro = &j->plan->jobs[jobs[r]];
  if (mxcts_result_number(&j->ev[jobs[r]].result, a->path, out)) return true;
  mxcts__eval_note(e, "%s: %s is missing or not a number", j->ev[jobs[r]].result.file, a->path);
  return false;
}

void mxcts__eval_greater(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                         struct mxcts_eval *e) {
  const int rounds = j->plan->suites[si].rounds;
  size_t **gj = mxcts_xcalloc(a->ngreater + 1, sizeof *gj), **tj = mxcts_xcalloc(a->nthan + 1, sizeof *tj);
  for (size_t g = 0; g < a->ngreater; g++) mxcts__judge_jobs(j, si, a->greater[g], MXCTS_JOB_ROUND, &gj[g]);
  for (size_t t = 0; t < a->nthan; t++) mxcts__judge_jobs(j, si, a->than[t], MXCTS_JOB_ROUND, &tj[t]);
  size_t compared = 0;
  e->verdict = MXCTS_V_PASS;
  for (int r = 0; r < rounds; r++)
    for (size_t g = 0; g < a->ngreater; g++)
      for (size_t t = 0; t < a->nthan; t++) {
        double x, y;
        if (!round_number(j, si, a, gj[g], a->greater[g], r, &x, e) ||
            !round_number(j, si, a, tj[t], a->than[t], r, &y, e)) {
          fail(e);
          continue;
        }
        compared++;
        if (x > y) continue;
        fail(e);
        e->repro = &j->plan->jobs[gj[g][r]];
        mxcts__eval_note(e, "round %d: %s has %s = %g, not more than %s's %g", r + 1,
                         cfg_id(j, si, a->greater[g]), a->path, x, cfg_id(j, si, a->than[t]), y);
      }
  if (compared == 0) {
    fail(e);
    mxcts__eval_note(e, "no round ran both sides: nothing to compare");
  }
  json_object_set_new(e->diag, "path", json_string(a->path));
  json_object_set_new(e->diag, "comparisons", json_integer((json_int_t)compared));
  for (size_t g = 0; g < a->ngreater; g++) free(gj[g]);
  for (size_t t = 0; t < a->nthan; t++) free(tj[t]);
  free(gj);
  free(tj);
}
