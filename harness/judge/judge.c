/* Judging a plan's processes (judge/judge.h): classification, process verdicts,
 * expectations and the results document.  The evaluators per assertion type
 * are in judge_eval.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "judge/judge_internal.h"

static const char *const verdict_names[MXCTS_NUM_VERDICTS] = {
    "pass", "fail", "crash", "timeout", "error", "skip", "xfail", "xpass", "inconclusive", "unsupported"};

const char *mxcts_verdict_name(enum mxcts_verdict v) {
  return (unsigned)v < MXCTS_NUM_VERDICTS ? verdict_names[v] : "?";
}

int mxcts_verdict_parse(const char *name) {
  for (int i = 0; i < MXCTS_NUM_VERDICTS; i++)
    if (name && !strcmp(name, verdict_names[i])) return i;
  return -1;
}

bool mxcts_verdict_is_failure(enum mxcts_verdict v) {
  return v == MXCTS_V_FAIL || v == MXCTS_V_CRASH || v == MXCTS_V_TIMEOUT || v == MXCTS_V_ERROR ||
         v == MXCTS_V_XPASS;
}

bool mxcts_assertion_fails(const json_t *a) {
  int v = mxcts_verdict_parse(json_string_value(json_object_get(a, "verdict")));
  if (v != MXCTS_V_UNSUPPORTED) return v < 0 || mxcts_verdict_is_failure((enum mxcts_verdict)v);
  const char *kind = json_string_value(json_object_get(json_object_get(a, "expectation"), "kind"));
  return !kind || strcmp(kind, "unsupported") != 0;
}

void mxcts__eval_note(struct mxcts_eval *e, const char *fmt, ...) {
  if (e->detail.len > 2000) return;
  if (e->detail.len) mxcts_buf_puts(&e->detail, "; ");
  va_list ap;
  va_start(ap, fmt);
  mxcts_buf_vprintf(&e->detail, fmt, ap);
  va_end(ap);
  if (e->detail.len > 2000) mxcts_buf_puts(&e->detail, "; ...");
}

/* --- classifying one process --------------------------------------------------- */

static char *with_stderr(const struct mxcts_job *job, char *msg) {
  char *path = mxcts_xasprintf("%s/stderr.txt", job->dir);
  char *tail = mxcts_file_tail(path, 300);
  free(path);
  if (!*tail) {
    free(tail);
    return msg;
  }
  char *r = mxcts_xasprintf("%s; stderr ends: %s", msg, tail);
  free(tail);
  free(msg);
  return r;
}

/* The seed a result says it ran with, which must be its job's: a result
 * another run (or another job) left behind is never judged as this one's. */
static bool seed_matches(const struct mxcts_job *job, const struct mxcts_result *r) {
  json_t *seed = json_object_get(r->root, "seed");
  return json_is_integer(seed) && json_integer_value(seed) == (json_int_t)job->seed;
}

static void classify_exit0(const struct mxcts_job *job, struct mxcts_evidence *ev) {
  char *path = mxcts_xasprintf("%s/result.json", job->dir);
  if (mxcts_result_load(path, &ev->result)) {
    ev->cls = MXCTS_P_ERROR;
    ev->detail = mxcts_xasprintf("malformed or missing result: %s", mxcts_last_error());
  } else if (!seed_matches(job, &ev->result)) {
    ev->cls = MXCTS_P_ERROR;
    char *seed = mxcts_json_brief(json_object_get(ev->result.root, "seed"));
    ev->detail = mxcts_xasprintf("%s is not this job's: its seed is %s, the job's %ld (another run "
                                 "wrote it)", path, seed, job->seed);
    free(seed);
    mxcts_result_free(&ev->result);
  } else {
    ev->has_result = true;
    if (!strcmp(ev->result.status, "unsupported")) {
      ev->cls = MXCTS_P_UNSUPPORTED;
      ev->detail = mxcts_xstrdup(ev->result.error ? ev->result.error : "unsupported (no message)");
    } else if (strcmp(ev->result.status, "ok")) {
      ev->cls = MXCTS_P_ERROR;
      ev->detail = mxcts_xasprintf("%s: probe status %s: %s", path, ev->result.status,
                                   ev->result.error ? ev->result.error : "(no message)");
    }
  }
  free(path);
}

/* A process that died on its way out after writing a complete result: keep
 * the result, and say so in the detail.  Whether that is tolerated is the
 * implementation's expectation file's business (exit-crash lines). */
static void keep_result_of_exit(const struct mxcts_job *job, struct mxcts_evidence *ev) {
  char *path = mxcts_xasprintf("%s/result.json", job->dir);
  if (mxcts_result_load(path, &ev->result) == 0 && !strcmp(ev->result.status, "ok")) {
    ev->has_result = ev->after_result = true;
    char *d = mxcts_xasprintf("after writing its result: %s", ev->detail);
    free(ev->detail);
    ev->detail = d;
  } else {
    mxcts_result_free(&ev->result);
  }
  free(path);
}

static bool outcome_missing(const struct mxcts_job *job) {
  char *path = mxcts_xasprintf("%s/outcome.json", job->dir);
  bool missing = access(path, F_OK) != 0 && errno == ENOENT;
  free(path);
  return missing;
}

/* "exited with status N", and the error its result gives (a library that
 * cannot be loaded says why there). */
static char *exit_detail(const struct mxcts_job *job, int code) {
  char *path = mxcts_xasprintf("%s/result.json", job->dir);
  struct mxcts_result r; /* zeroed when the load fails: free is safe */
  bool said = mxcts_result_load(path, &r) == 0 && r.error && *r.error;
  char *d = said ? mxcts_xasprintf("exited with status %d: %s", code, r.error)
                 : mxcts_xasprintf("exited with status %d", code);
  mxcts_result_free(&r);
  free(path);
  return d;
}

/* `interrupted`: the signal that stopped the run, or NULL. */
static void classify(const struct mxcts_job *job, const char *interrupted, struct mxcts_evidence *ev) {
  struct mxcts_outcome o;
  memset(ev, 0, sizeof *ev);
  if (interrupted && outcome_missing(job)) {
    ev->cls = MXCTS_P_INTERRUPTED;
    ev->detail = mxcts_xasprintf("not run: the run was interrupted by %s (mxcts run --resume "
                                 "continues it)", interrupted);
    return;
  }
  if (mxcts_outcome_load(job->dir, &o)) {
    ev->cls = MXCTS_P_ERROR;
    ev->detail = mxcts_xasprintf("the process did not run (%s)", mxcts_last_error());
    return;
  }
  switch (o.how) {
  case MXCTS_EXIT_TIMEOUT:
    ev->cls = MXCTS_P_TIMEOUT;
    ev->detail = mxcts_xasprintf("timeout: killed at its %gs deadline", o.timeout_s);
    break;
  case MXCTS_EXIT_SIGNAL:
    ev->cls = MXCTS_P_CRASH;
    ev->detail = with_stderr(job, mxcts_xasprintf("crashed: killed by %s",
                                                  mxcts_signal_name(o.signal)));
    break;
  case MXCTS_EXIT_SKIPPED: /* carries its group's crash or timeout */
    ev->cls = o.cause == MXCTS_EXIT_TIMEOUT ? MXCTS_P_TIMEOUT : MXCTS_P_CRASH;
    ev->skipped = true;
    ev->detail = mxcts_xstrdup(o.detail ? o.detail : "not run after its config failed");
    break;
  case MXCTS_EXIT_SPAWN:
    ev->cls = MXCTS_P_ERROR;
    ev->detail = mxcts_xstrdup(o.detail ? o.detail : "could not be started");
    break;
  case MXCTS_EXIT_CODE:
    if (o.code == 0) {
      classify_exit0(job, ev);
      break;
    }
    ev->cls = MXCTS_P_ERROR;
    ev->detail = with_stderr(job, exit_detail(job, o.code));
    break;
  }
  if (o.after_result && o.how != MXCTS_EXIT_SKIPPED) keep_result_of_exit(job, ev);
  mxcts_outcome_free(&o);
}

static void free_evidence(struct mxcts_evidence *ev) {
  free(ev->detail);
  if (ev->has_result) mxcts_result_free(&ev->result);
}

/* --- which processes an assertion reads -------------------------------------------- */

size_t mxcts__judge_jobs(const struct mxcts_judging *j, size_t suite, size_t config,
                         enum mxcts_job_kind kind, size_t **out) {
  const struct mxcts_plan *p = j->plan;
  size_t n = kind == MXCTS_JOB_PROFILE ? 1 : (size_t)mxcts_plan_rounds_run(p, suite);
  if (n == 0) n = 1;
  *out = mxcts_xmalloc(n * sizeof **out);
  for (size_t i = 0; i < n; i++) (*out)[i] = SIZE_MAX;
  size_t found = 0;
  for (size_t i = 0; i < p->njobs; i++) {
    const struct mxcts_job *job = &p->jobs[i];
    if (job->suite != suite || job->config != config || job->kind != kind) continue;
    size_t slot = kind == MXCTS_JOB_PROFILE ? 0 : (size_t)job->round - 1;
    if (slot < n && (*out)[slot] == SIZE_MAX) {
      (*out)[slot] = i;
      found++;
    }
  }
  return found;
}

static unsigned kinds_read(enum mxcts_assert_type t) {
  switch (t) {
  case MXCTS_A_STRUCTURE: return 1u << MXCTS_JOB_PROFILE;
  case MXCTS_A_ORDERING:
  case MXCTS_A_PROFILE_FILE:
  case MXCTS_A_GREATER: return 1u << MXCTS_JOB_ROUND;
  default: return (1u << MXCTS_JOB_ROUND) | (1u << MXCTS_JOB_PROFILE);
  }
}

static bool reads_config(const struct mxcts_assertion *a, size_t c) {
  for (size_t i = 0; i < a->nconfigs; i++)
    if (a->configs[i] == c) return true;
  return false;
}

/* What the processes an assertion reads (kinds mask) did: the worst class,
 * and how many ended badly.  With `tolerate_exit`, a process that died on its
 * way out after a complete result counts as ok (`exits` counts them). */
struct process_scan {
  enum mxcts_pclass worst;
  size_t worst_job, bad;
  size_t exits, first_exit_job;
};

static void scan_processes(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                           unsigned kinds, bool tolerate_exit, struct process_scan *s) {
  static const int rank[] = {[MXCTS_P_OK] = 0,      [MXCTS_P_INTERRUPTED] = 1, [MXCTS_P_ERROR] = 2,
                             [MXCTS_P_TIMEOUT] = 3, [MXCTS_P_CRASH] = 4,       [MXCTS_P_UNSUPPORTED] = 5};
  *s = (struct process_scan){.worst = MXCTS_P_OK};
  for (size_t i = 0; i < j->plan->njobs; i++) {
    const struct mxcts_job *job = &j->plan->jobs[i];
    if (job->suite != si || !(kinds & (1u << job->kind)) || !reads_config(a, job->config)) continue;
    enum mxcts_pclass c = j->ev[i].cls;
    if (c != MXCTS_P_OK && tolerate_exit && j->ev[i].after_result) {
      if (s->exits++ == 0) s->first_exit_job = i;
      continue;
    }
    if (c != MXCTS_P_OK) s->bad++;
    if (rank[c] > rank[s->worst]) {
      s->worst = c;
      s->worst_job = i;
    }
  }
}

/* Decide the verdict from how the processes ended, when one ended badly;
 * false when the results are to be evaluated.  `exit_line` is the
 * implementation's exit-crash expectation for the assertion, or NULL. */
static bool process_verdict(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                            unsigned kinds, const struct mxcts_expect_entry *exit_line,
                            struct mxcts_eval *e) {
  struct process_scan s;
  scan_processes(j, si, a, kinds, exit_line != NULL, &s);
  if (s.exits) {
    mxcts__eval_note(e, "%zu %s after writing %s (exit-crash, line %d: %s; the first: %s: %s)",
                     s.exits, s.exits == 1 ? "process ended badly" : "processes ended badly",
                     s.exits == 1 ? "its result" : "their results", exit_line->line, exit_line->reason,
                     j->plan->jobs[s.first_exit_job].id, j->ev[s.first_exit_job].detail);
    json_object_set_new(e->diag, "exit_crashes", json_integer((json_int_t)s.exits));
  }
  if (s.worst == MXCTS_P_OK) return false;
  static const enum mxcts_verdict map[] = {[MXCTS_P_OK] = MXCTS_V_PASS,
                                           [MXCTS_P_ERROR] = MXCTS_V_ERROR,
                                           [MXCTS_P_CRASH] = MXCTS_V_CRASH,
                                           [MXCTS_P_TIMEOUT] = MXCTS_V_TIMEOUT,
                                           [MXCTS_P_UNSUPPORTED] = MXCTS_V_UNSUPPORTED,
                                           [MXCTS_P_INTERRUPTED] = MXCTS_V_SKIP};
  e->verdict = map[s.worst];
  e->repro = &j->plan->jobs[s.worst_job];
  mxcts__eval_note(e, "%s: %s", j->plan->jobs[s.worst_job].id, j->ev[s.worst_job].detail);
  if (s.worst == MXCTS_P_UNSUPPORTED) {
    json_t *missing = json_object_get(j->ev[s.worst_job].result.root, "missing");
    json_object_set(e->diag, "missing", json_is_array(missing) ? missing : json_array());
    return true;
  }
  if (s.bad > 1) mxcts__eval_note(e, "%zu processes did not end well", s.bad);
  return true;
}

/* --- one assertion ------------------------------------------------------------------- */

static void evaluate(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                     struct mxcts_eval *e) {
  switch (a->type) {
  case MXCTS_A_STRUCTURE: mxcts__eval_structure(j, si, a, e); break;
  case MXCTS_A_ORDERING: mxcts__eval_ordering(j, si, a, e); break;
  case MXCTS_A_CHECKS: mxcts__eval_checks(j, si, a, e); break;
  case MXCTS_A_VALUE: mxcts__eval_value(j, si, a, e); break;
  case MXCTS_A_EQUAL: mxcts__eval_equal(j, si, a, e); break;
  case MXCTS_A_PROFILE_FILE: mxcts__eval_profile_file(j, si, a, e); break;
  case MXCTS_A_GREATER: mxcts__eval_greater(j, si, a, e); break;
  }
}

static void eval_reset(struct mxcts_eval *e) {
  mxcts_buf_free(&e->detail);
  json_decref(e->diag);
  memset(e, 0, sizeof *e);
  e->diag = json_object();
}

/* An undecided ordering asks for another batch while its suite's round
 * budget lasts. */
static void mark_more_rounds(const struct mxcts_judging *j, size_t si, struct mxcts_eval *e,
                             json_t *out) {
  const struct mxcts_suite *s = &j->plan->suites[si];
  int run = mxcts_plan_rounds_run(j->plan, si);
  if (e->verdict != MXCTS_V_INCONCLUSIVE) return;
  if (run < s->max_rounds) json_object_set_new(out, "more_rounds", json_true());
  else mxcts__eval_note(e, "the round budget (max_rounds = %d) is spent",
                        s->max_rounds);
}

static json_t *config_ids(const struct mxcts_suite *s, const struct mxcts_assertion *a) {
  json_t *arr = json_array();
  for (size_t i = 0; i < a->nconfigs; i++)
    json_array_append_new(arr, json_string(s->configs[a->configs[i]].id));
  return arr;
}

static const struct mxcts_job *first_job(const struct mxcts_judging *j, size_t si,
                                         const struct mxcts_assertion *a) {
  unsigned kinds = kinds_read(a->type);
  for (size_t i = 0; i < j->plan->njobs; i++) {
    const struct mxcts_job *job = &j->plan->jobs[i];
    if (job->suite == si && (kinds & (1u << job->kind)) && reads_config(a, job->config)) return job;
  }
  return NULL;
}

/* Apply an expectation to a raw verdict.  Inconclusive is neither a pass
 * nor a failure, so a fail or flaky expectation leaves it as it is;
 * unsupported stays unsupported (an unsupported line makes it expected:
 * mxcts_assertion_fails).  An unsupported line on an assertion that ran
 * and passed gives xpass, as a fail line does. */
static enum mxcts_verdict expected(enum mxcts_verdict raw, const struct mxcts_expect_entry *x) {
  if (!x) return raw;
  if (x->kind == MXCTS_EXPECT_SKIP) return MXCTS_V_SKIP;
  if (raw == MXCTS_V_INCONCLUSIVE || raw == MXCTS_V_UNSUPPORTED) return raw;
  if (x->kind == MXCTS_EXPECT_UNSUPPORTED) return raw == MXCTS_V_PASS ? MXCTS_V_XPASS : raw;
  if (raw == MXCTS_V_PASS) return x->kind == MXCTS_EXPECT_FAIL ? MXCTS_V_XPASS : MXCTS_V_PASS;
  return mxcts_verdict_is_failure(raw) ? MXCTS_V_XFAIL : raw;
}

static json_t *judge_assertion(const struct mxcts_judging *j, size_t si,
                               const struct mxcts_assertion *a, struct mxcts_expectations *ex) {
  const struct mxcts_suite *s = &j->plan->suites[si];
  json_t *out = json_pack("{s:s, s:s, s:s, s:s?, s:o}", "id", a->id, "name",
                          "", "type", mxcts_assert_type_name(a->type), "description",
                          a->description, "configs", config_ids(s, a));
  char *name = mxcts_xasprintf("%s/%s", s->name, a->id);
  json_object_set_new(out, "name", json_string(name));
  free(name);
  const struct mxcts_expect_entry *x = mxcts_expect_match(ex, s->name, a->id);
  const struct mxcts_expect_entry *exit_line = mxcts_expect_exit_crash(ex, s->name, a->id);
  struct mxcts_eval e = {0};
  eval_reset(&e);
  const char *skip = j->plan->skip_reason[si] ? j->plan->skip_reason[si] : a->skip_reason;
  if (skip || (x && x->kind == MXCTS_EXPECT_SKIP)) {
    e.verdict = MXCTS_V_SKIP;
    mxcts__eval_note(&e, "%s", skip ? skip : x->reason);
  } else if (!process_verdict(j, si, a, kinds_read(a->type), exit_line, &e)) {
    evaluate(j, si, a, &e);
    mark_more_rounds(j, si, &e, out);
  }
  enum mxcts_verdict v = expected(e.verdict, x);
  json_object_set_new(out, "verdict", json_string(mxcts_verdict_name(v)));
  json_object_set_new(out, "raw_verdict", json_string(mxcts_verdict_name(e.verdict)));
  json_object_set_new(out, "detail", mxcts_json_text(mxcts_buf_str(&e.detail)));
  if (x)
    json_object_set_new(out, "expectation",
                        json_pack("{s:s, s:s, s:i}", "kind", mxcts_expect_kind_name(x->kind),
                                  "reason", x->reason, "line", x->line));
  const struct mxcts_job *repro = e.repro ? e.repro : first_job(j, si, a);
  if (repro) {
    char *cmd = mxcts_job_command(repro);
    json_object_set_new(out, "command", mxcts_json_text(cmd));
    json_object_set_new(out, "command_job", json_string(repro->id));
    free(cmd);
  }
  json_object_set_new(out, "diag", e.diag);
  mxcts_buf_free(&e.detail);
  return out;
}

/* --- configs -------------------------------------------------------------------------- */

static json_t *kvs_json(const struct mxcts_kvs *l) {
  json_t *o = json_object();
  for (size_t i = 0; i < l->n; i++) json_object_set_new(o, l->v[i].key, json_string(l->v[i].value));
  return o;
}

/* Per round run so far: the median, or null where the config did not run
 * that round (a batch for other configs) or left no timing. */
static json_t *timings(const struct mxcts_judging *j, size_t si, size_t c, const char **unit) {
  size_t *jobs;
  size_t found = mxcts__judge_jobs(j, si, c, MXCTS_JOB_ROUND, &jobs);
  json_t *arr = json_array();
  for (int r = 0; found && r < mxcts_plan_rounds_run(j->plan, si); r++) {
    const struct mxcts_evidence *ev = jobs[r] == SIZE_MAX ? NULL : &j->ev[jobs[r]];
    bool ok = ev && ev->has_result && ev->result.has_median;
    json_array_append_new(arr, ok ? json_real(ev->result.median) : json_null());
    if (ok) *unit = ev->result.unit;
  }
  free(jobs);
  return arr;
}

/* The probe's figures over a config's timed rounds: each metric's median
 * (over the rounds that report it) and the largest peak RSS. */
static void round_figures(const struct mxcts_judging *j, size_t si, size_t c, json_t *o) {
  size_t *jobs;
  size_t found = mxcts__judge_jobs(j, si, c, MXCTS_JOB_ROUND, &jobs);
  int rounds = found ? mxcts_plan_rounds_run(j->plan, si) : 0;
  json_t *values = json_object(); /* metric name -> its values, round by round */
  double rss = 0, kb;
  for (int r = 0; r < rounds; r++) {
    const struct mxcts_evidence *ev = jobs[r] == SIZE_MAX ? NULL : &j->ev[jobs[r]];
    if (!ev || !ev->has_result) continue;
    if (mxcts_result_number(&ev->result, "peak_rss_kb", &kb) && kb > rss) rss = kb;
    const char *name;
    json_t *value;
    json_object_foreach(json_object_get(ev->result.root, "metrics"), name, value) {
      if (!json_is_number(value)) continue;
      if (!json_object_get(values, name)) json_object_set_new(values, name, json_array());
      json_array_append(json_object_get(values, name), value);
    }
  }
  json_t *metrics = json_object(), *arr;
  const char *name;
  double *v = mxcts_xcalloc((size_t)rounds + 1, sizeof *v);
  json_object_foreach(values, name, arr) {
    size_t i, n = json_array_size(arr);
    json_t *x;
    json_array_foreach(arr, i, x) v[i] = json_number_value(x);
    json_object_set_new(metrics, name, json_real(mxcts_median(v, n)));
  }
  free(v);
  json_decref(values);
  free(jobs);
  json_object_set_new(o, "metrics", metrics);
  json_object_set_new(o, "peak_rss_kb", rss > 0 ? json_integer((json_int_t)rss) : json_null());
}

static json_t *observed_structure(const struct mxcts_judging *j, size_t si, size_t c) {
  size_t *jobs;
  size_t found = mxcts__judge_jobs(j, si, c, MXCTS_JOB_PROFILE, &jobs);
  const struct mxcts_evidence *ev = found ? &j->ev[jobs[0]] : NULL;
  free(jobs);
  if (!ev || !ev->has_result || !ev->result.has_structure) return json_null();
  json_t *passes = json_array();
  for (size_t p = 0; p < ev->result.npasses; p++) {
    const struct mxcts_pass_result *pr = &ev->result.passes[p];
    json_t *sizes = json_array();
    for (size_t i = 0; i < pr->nsizes; i++) json_array_append_new(sizes, json_integer(pr->sizes[i]));
    json_array_append_new(passes, json_pack("{s:s, s:I, s:o}", "name", pr->name, "engine_ops",
                                            (json_int_t)pr->engine_ops, "segment_sizes", sizes));
  }
  return passes;
}

static json_t *process_counts(const struct mxcts_judging *j, size_t si, size_t c,
                              const struct mxcts_job **first) {
  size_t n[5] = {0}, skipped = 0, total = 0;
  *first = NULL;
  for (size_t i = 0; i < j->plan->njobs; i++) {
    if (j->plan->jobs[i].suite != si || j->plan->jobs[i].config != c) continue;
    if (!*first) *first = &j->plan->jobs[i];
    if (j->ev[i].skipped) skipped++;
    else n[j->ev[i].cls]++;
    total++;
  }
  return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "total", (json_int_t)total, "ok",
                   (json_int_t)n[MXCTS_P_OK], "error", (json_int_t)n[MXCTS_P_ERROR], "crash",
                   (json_int_t)n[MXCTS_P_CRASH], "timeout", (json_int_t)n[MXCTS_P_TIMEOUT],
                   "unsupported", (json_int_t)n[MXCTS_P_UNSUPPORTED], "skipped", (json_int_t)skipped);
}

static json_t *config_json(const struct mxcts_judging *j, size_t si, size_t c) {
  const struct mxcts_config *cf = &j->plan->suites[si].configs[c];
  const char *unit = "ms";
  const struct mxcts_job *first;
  json_t *o = json_pack("{s:s, s:s?, s:s?, s:o, s:o}", "id", cf->id, "description",
                        cf->description, "group", cf->group, "env", kvs_json(&cf->env), "params",
                        kvs_json(&cf->params));
  json_object_set_new(o, "timings", timings(j, si, c, &unit));
  json_object_set_new(o, "unit", json_string(unit));
  round_figures(j, si, c, o);
  json_object_set_new(o, "structure", observed_structure(j, si, c));
  json_object_set_new(o, "processes", process_counts(j, si, c, &first));
  if (first) {
    char *cmd = mxcts_job_command(first);
    json_object_set_new(o, "command", mxcts_json_text(cmd));
    free(cmd);
  }
  return o;
}

/* --- the document ------------------------------------------------------------------------- */

static json_t *suite_json(const struct mxcts_judging *j, size_t si, struct mxcts_expectations *ex) {
  const struct mxcts_suite *s = &j->plan->suites[si];
  json_t *o = json_pack("{s:s, s:s?, s:o, s:s, s:b, s:i, s:i, s:i, s:i, s:f, s:f, s:I, s:s?}",
                        "name", s->name, "description", s->description, "file", mxcts_json_text(s->file),
                        "workload", s->workload, "timed", s->timed, "rounds", s->rounds,
                        "rounds_run", mxcts_plan_rounds_run(j->plan, si), "batch", s->batch,
                        "max_rounds", s->max_rounds, "margin", s->margin, "timeout_s", s->timeout_s,
                        "seed", (json_int_t)j->plan->opt.seed, "skipped", j->plan->skip_reason[si]);
  json_object_set_new(o, "sprt", json_pack("{s:f, s:f, s:f, s:f, s:f}", "p0", s->sprt.p0, "p1",
                                           s->sprt.p1, "pf", s->sprt.pf, "alpha", s->sprt.alpha,
                                           "beta", s->sprt.beta));
  json_t *configs = json_array(), *asserts = json_array();
  for (size_t c = 0; c < s->nconfigs; c++) json_array_append_new(configs, config_json(j, si, c));
  for (size_t i = 0; i < s->nasserts; i++)
    json_array_append_new(asserts, judge_assertion(j, si, &s->asserts[i], ex));
  json_object_set_new(o, "configs", configs);
  json_object_set_new(o, "assertions", asserts);
  return o;
}

static json_t *impl_json(const struct mxcts_judging *j) {
  json_t *o = json_pack("{s:o, s:s?}", "path", mxcts_json_text(j->plan->opt.impl), "name",
                        j->plan->opt.impl_name);
  for (size_t i = 0; i < j->plan->njobs; i++) {
    if (!j->ev[i].has_result) continue;
    json_t *impl = json_object_get(j->ev[i].result.root, "impl");
    json_t *version = json_object_get(impl, "version"), *features = json_object_get(impl, "features");
    if (version) json_object_set(o, "version", version);
    if (json_is_object(features)) json_object_set(o, "features", features);
    if (version) break;
  }
  return o;
}

static json_t *summary_json(json_t *suites) {
  size_t counts[MXCTS_NUM_VERDICTS] = {0}, total = 0;
  size_t i, k;
  json_t *s, *a;
  json_array_foreach(suites, i, s) {
    json_array_foreach(json_object_get(s, "assertions"), k, a) {
      int v = mxcts_verdict_parse(json_string_value(json_object_get(a, "verdict")));
      if (v >= 0) counts[v]++;
      total++;
    }
  }
  json_t *o = json_pack("{s:I}", "total", (json_int_t)total);
  for (int v = 0; v < MXCTS_NUM_VERDICTS; v++)
    json_object_set_new(o, mxcts_verdict_name((enum mxcts_verdict)v), json_integer((json_int_t)counts[v]));
  return o;
}

static json_t *stale_json(const struct mxcts_expectations *ex) {
  json_t *arr = json_array();
  for (size_t i = 0; i < ex->n; i++)
    if (!ex->v[i].used)
      json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:i}", "kind",
                                           mxcts_expect_kind_name(ex->v[i].kind), "suite",
                                           ex->v[i].suite, "assertion", ex->v[i].assertion,
                                           "reason", ex->v[i].reason, "line", ex->v[i].line));
  return arr;
}

static json_t *document(const struct mxcts_judging *j, struct mxcts_expectations *ex) {
  json_t *suites = json_array();
  for (size_t si = 0; si < j->plan->nsuites; si++)
    json_array_append_new(suites, suite_json(j, si, ex));
  json_t *summary = summary_json(suites);
  bool failed = false;
  size_t i, k;
  json_t *s, *a;
  json_array_foreach(suites, i, s) {
    json_array_foreach(json_object_get(s, "assertions"), k, a) failed = failed || mxcts_assertion_fails(a);
  }
  bool inconclusive = json_integer_value(json_object_get(summary, "inconclusive")) > 0;
  json_t *ex_file = j->plan->opt.expectations ? mxcts_json_text(j->plan->opt.expectations) : json_null();
  return json_pack("{s:i, s:s, s:o, s:o, s:I, s:o, s:o, s:s, s:o, s:o}", "mxcts_results",
                   MXCTS_RESULTS_FORMAT, "generated_by", "mxcts " PACKAGE_VERSION, "impl",
                   impl_json(j), "probe", mxcts_json_text(j->plan->opt.probe), "seed",
                   (json_int_t)j->plan->opt.seed, "expectations", ex_file,
                   "stale_expectations", stale_json(ex), "status",
                   failed ? "fail" : inconclusive ? "inconclusive" : "pass",
                   "summary", summary, "suites", suites);
}

int mxcts_judge(const struct mxcts_plan *plan, json_t **out) {
  struct mxcts_expectations ex = {0};
  int rc = plan->opt.expectations ? mxcts_expect_load(plan->opt.expectations, &ex) : 0;
  if (rc) return rc;
  /* Suite-level skips were applied when planning; mark them used here too. */
  for (size_t si = 0; si < plan->nsuites; si++) mxcts_expect_skips_suite(&ex, plan->suites[si].name);
  struct mxcts_judging j = {plan, mxcts_xcalloc(plan->njobs + 1, sizeof *j.ev)};
  char *interrupted = mxcts_plan_interrupted(plan);
  for (size_t i = 0; i < plan->njobs; i++) classify(&plan->jobs[i], interrupted, &j.ev[i]);
  *out = document(&j, &ex);
  if (interrupted) {
    json_object_set_new(*out, "interrupted", json_string(interrupted));
    if (!strcmp(json_string_value(json_object_get(*out, "status")), "pass") ||
        !strcmp(json_string_value(json_object_get(*out, "status")), "inconclusive"))
      json_object_set_new(*out, "status", json_string("interrupted"));
  }
  free(interrupted);
  for (size_t i = 0; i < plan->njobs; i++) free_evidence(&j.ev[i]);
  free(j.ev);
  mxcts_expect_free(&ex);
  return 0;
}

void mxcts_judge_batch_configs(const json_t *results, const struct mxcts_plan *plan, size_t suite,
                               size_t **configs, size_t *n) {
  const struct mxcts_suite *s = &plan->suites[suite];
  *configs = mxcts_xcalloc(s->nconfigs, sizeof **configs);
  *n = 0;
  json_t *sj = json_array_get(json_object_get(results, "suites"), suite);
  size_t i, k;
  json_t *a, *id;
  json_array_foreach(json_object_get(sj, "assertions"), i, a) {
    if (!json_is_true(json_object_get(a, "more_rounds"))) continue;
    json_array_foreach(json_object_get(a, "configs"), k, id) {
      long c = mxcts_suite_find_config(s, json_string_value(id));
      bool dup = false;
      for (size_t m = 0; m < *n; m++) dup = dup || (*configs)[m] == (size_t)c;
      if (c >= 0 && !dup) (*configs)[(*n)++] = (size_t)c;
    }
  }
}
