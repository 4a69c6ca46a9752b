/*
 * harness/judge/judge_internal.h: what judge.c (processes, expectations, the
 * document) and judge_eval.c (one evaluator per assertion type) share.
 * Not part of the harness API (judge/judge.h is).
 */
#ifndef MXCTS_JUDGE_INTERNAL_H
#define MXCTS_JUDGE_INTERNAL_H

#include "common/jsonv.h"
#include "judge/judge.h"
#include "run/run.h"

/* UNSUPPORTED: the probe did not run the workload because the library
 * lacks a function it calls (probe status "unsupported").  INTERRUPTED: it
 * left no outcome because mxcts was interrupted (OUT/interrupted). */
enum mxcts_pclass {
  MXCTS_P_OK,
  MXCTS_P_ERROR,
  MXCTS_P_CRASH,
  MXCTS_P_TIMEOUT,
  MXCTS_P_UNSUPPORTED,
  MXCTS_P_INTERRUPTED
};

/* What one process left behind. */
struct mxcts_evidence {
  enum mxcts_pclass cls;
  bool skipped;                /* not run: carries its config's crash or timeout */
  char *detail;                /* why it is not ok; NULL when ok */
  bool has_result;
  struct mxcts_result result;  /* parsed when has_result */
  bool after_result;           /* a crash, timeout or exit status after a complete
                                  result (which has_result holds) */
};

struct mxcts_judging {
  const struct mxcts_plan *plan;
  struct mxcts_evidence *ev;   /* one per plan job */
};

/* An evaluation: verdict pass or fail (orderings also inconclusive; the
 * process verdicts are decided before), a human detail, and type-specific
 * diagnostics. */
struct mxcts_eval {
  enum mxcts_verdict verdict;
  struct mxcts_buf detail;
  json_t *diag;                /* an object, owned */
  const struct mxcts_job *repro;   /* the process to show as the reproducer */
  int undecided;               /* ordering pairs whose SPRT has not decided */
};

/* Jobs of (suite, config) of one kind, in round order (round jobs: index
 * round-1, over every round planned so far).  *out is the caller's; missing
 * rounds are SIZE_MAX. */
size_t mxcts__judge_jobs(const struct mxcts_judging *j, size_t suite, size_t config,
                         enum mxcts_job_kind kind, size_t **out);

void mxcts__eval_structure(const struct mxcts_judging *j, size_t si,
                           const struct mxcts_assertion *a, struct mxcts_eval *e);
/* Every round run so far, each pair by the suite's SPRT (common/common.h). */
void mxcts__eval_ordering(const struct mxcts_judging *j, size_t si,
                          const struct mxcts_assertion *a, struct mxcts_eval *e);
void mxcts__eval_checks(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                        struct mxcts_eval *e);
void mxcts__eval_value(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                       struct mxcts_eval *e);
void mxcts__eval_equal(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                       struct mxcts_eval *e);
void mxcts__eval_profile_file(const struct mxcts_judging *j, size_t si,
                              const struct mxcts_assertion *a, struct mxcts_eval *e);
/* Round by round (the processes of a round share a probe seed), each
 * greater config's number at the path exceeds each than config's: for
 * deterministic figures such as a memory plan's size, never timings. */
void mxcts__eval_greater(const struct mxcts_judging *j, size_t si, const struct mxcts_assertion *a,
                         struct mxcts_eval *e);

/* Append "; " between findings; keeps the detail under ~2 KB. */
void mxcts__eval_note(struct mxcts_eval *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* MXCTS_JUDGE_INTERNAL_H */
