/*
 * harness/judge/judge.h: from the files a plan's processes left behind to a
 * verdict per assertion, as one JSON results document.
 *
 * Each process is first classified from DIR/outcome.json and
 * DIR/result.json: ok, error (non-zero exit, no or malformed result, probe
 * status error/usage, could not start), crash (a signal, named) or timeout.
 * An assertion that reads a process that crashed, timed out or failed gets
 * that verdict (crash before timeout before error), never "fail" or
 * "slower"; one that reads a process the probe did not run because the
 * library lacks a function (probe status unsupported) gets `unsupported`,
 * before all of those, with the missing functions named.  Otherwise its type decides (docs/suites.md):
 *   structure     engine ops and segment sizes per pass equal the prediction
 *   ordering      every slower vs every faster operand: Wald's SPRT over the
 *                 interleaved rounds run so far (common/common.h): pass when
 *                 every pair accepted H1, fail when one accepted H0, else
 *                 inconclusive -- marked "more_rounds" while the suite's
 *                 round budget lasts
 *   checks        every probe check passes (at least `min` per result)
 *   value         the named checks are present and pass (or fail)
 *   equal         values at a path are identical across configs, per seed
 *   profile_file  a valid Chrome trace was left in the working directory
 *   greater       a number at a path is larger in some configs than in
 *                 others, in every round (a deterministic figure, no test)
 * Then the expectation file applies: fail -> xfail / xpass, flaky -> xfail
 * or pass, skip -> skip; inconclusive stays inconclusive under fail and
 * flaky (it is neither a failure nor a pass); unsupported stays unsupported,
 * and is expected (not a failure of the run) only under an unsupported
 * line.
 *
 * The results document is the one data model of every report (report/report.h);
 * its schema is in docs/harness.md.
 *
 * Ownership: *out is a new reference the caller releases (json_decref).
 */
#ifndef MXCTS_JUDGE_H
#define MXCTS_JUDGE_H

#include <stddef.h>

#include <jansson.h>

#include "run/run.h"

#define MXCTS_RESULTS_FORMAT 1

enum mxcts_verdict {
  MXCTS_V_PASS,
  MXCTS_V_FAIL,
  MXCTS_V_CRASH,
  MXCTS_V_TIMEOUT,
  MXCTS_V_ERROR,
  MXCTS_V_SKIP,
  MXCTS_V_XFAIL,
  MXCTS_V_XPASS,
  MXCTS_V_INCONCLUSIVE,   /* an ordering undecided when its round budget ran out */
  MXCTS_V_UNSUPPORTED,    /* the library lacks a C API function the assertion's
                             workload calls; a failure unless expected */
};
#define MXCTS_NUM_VERDICTS 10
const char *mxcts_verdict_name(enum mxcts_verdict v);
/* -1 for an unknown name. */
int mxcts_verdict_parse(const char *name);
/* Whether a verdict makes the run fail (fail, crash, timeout, error, xpass).
 * `unsupported` does too unless an expectation of kind unsupported covers
 * it: mxcts_assertion_fails decides for one assertion of a results
 * document. */
bool mxcts_verdict_is_failure(enum mxcts_verdict v);
bool mxcts_assertion_fails(const json_t *assertion);

/* Judge every assertion of the plan.  Loads the plan's expectation file
 * (an unreadable one is an error).  Missing or broken process files never
 * fail the call: they become verdicts. */
int mxcts_judge(const struct mxcts_plan *plan, json_t **out);

/* The configs of `suite` that its undecided orderings ("more_rounds" in
 * `results`) need another batch of.  *configs is the caller's. */
void mxcts_judge_batch_configs(const json_t *results, const struct mxcts_plan *plan, size_t suite,
                               size_t **configs, size_t *n);

#endif /* MXCTS_JUDGE_H */
