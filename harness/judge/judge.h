/*
 * harness/judge/judge.h: from the files a plan's processes left behind to a
 * verdict per assertion, as one JSON results document.
 *
 * Each process is first classified from DIR/outcome.json and
 * DIR/result.json: ok, error (non-zero exit, no or malformed result, probe
 * status error/usage, could not start), crash (a signal, named) or timeout.
 * An assertion that reads a process that crashed, timed out or failed gets
 * that verdict (crash before timeout before error), never "fail" or
 * "slower".  Otherwise its type decides (docs/suites.md):
 *   structure     engine ops and segment sizes per pass equal the prediction
 *   ordering      every slower vs every faster operand: the exact one-sided
 *                 sign test over the interleaved rounds (common/common.h); a
 *                 failure is judged again on the plan's rerun when there is
 *                 one: pass there is `pass` with flaky: true
 *   checks        every probe check passes (at least `min` per result)
 *   value         the named checks are present and pass (or fail)
 *   equal         values at a path are identical across configs, per seed
 *   profile_file  a valid Chrome trace was left in the working directory
 * Then the expectation file applies: fail -> xfail / xpass, flaky -> xfail
 * or pass, skip -> skip.
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
};
#define MXCTS_NUM_VERDICTS 8
const char *mxcts_verdict_name(enum mxcts_verdict v);
/* -1 for an unknown name. */
int mxcts_verdict_parse(const char *name);
/* Whether a verdict makes the run fail (fail, crash, timeout, error, xpass). */
bool mxcts_verdict_is_failure(enum mxcts_verdict v);

/* Judge every assertion of the plan.  Loads the plan's expectation file
 * (an unreadable one is an error).  Missing or broken process files never
 * fail the call: they become verdicts. */
int mxcts_judge(const struct mxcts_plan *plan, json_t **out);

/* The configs of `suite` that failed orderings want rerun (none when the
 * plan already has a rerun of that suite).  *configs is the caller's. */
void mxcts_judge_rerun_configs(const json_t *results, const struct mxcts_plan *plan, size_t suite,
                               size_t **configs, size_t *n);

#endif /* MXCTS_JUDGE_H */
