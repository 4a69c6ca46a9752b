/*
 * harness/session/session.h: a whole run of a plan -- what `mxcts run` does
 * between planning and reporting, shared with the tests:
 *
 *   write OUT/plan.json; run every job; judge; while orderings are
 *   undecided (their SPRT has crossed no bound) and their suite's round
 *   budget lasts, add a batch of rounds of the configs they read (numbered
 *   on, interleaved and seeded as the first), write the plan, run the batch
 *   and judge again.  When the undecided pairs' rounds ran contended, a
 *   bounded wait comes before the next batch.
 *
 * It sits above run/ (plans and processes) and judge/ (verdicts), which do
 * not know it.
 *
 * Ownership: *results is a new reference (json_decref); the plan stays the
 * caller's and grows by the batches' jobs.
 */
#ifndef MXCTS_SESSION_H
#define MXCTS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "run/run.h"

/* Add the next batch for every suite whose orderings are marked
 * "more_rounds" in `results`; returns the index of the first new job
 * (== njobs when no batch was needed or the budgets are spent). */
size_t mxcts_session_add_batches(struct mxcts_plan *p, const json_t *results);
/* Seconds to wait before the next batch: 0 unless more than a quarter of
 * the undecided pairs' rounds were left out as contended; then 1, 2, 4, ...
 * for the 1st, 2nd, 3rd busy batch in a row, at most max_s. */
double mxcts_session_backoff(const json_t *results, int busy_batches, double max_s);
/* All of it.  `note` (may be NULL) gets one line per stage.  A previous
 * OUT/results.json is first renamed results.previous.json.  After an
 * interrupt (mxcts_run_interrupted) no batch follows: what finished is
 * judged, with OUT/interrupted naming the signal (p->resuming: the jobs
 * that left an outcome are not run again). */
int mxcts_session_run(struct mxcts_plan *p, bool progress, FILE *note, json_t **results);

#endif /* MXCTS_SESSION_H */
