/*
 * harness/session/session.h: a whole run of a plan -- what `mxcts run` does
 * between planning and reporting, shared with the tests:
 *
 *   write OUT/plan.json; run every job; judge; when orderings failed on
 *   timing, add one rerun per suite (a new seed) to the plan, write it, run
 *   the rerun's jobs and judge again.
 *
 * It sits above run/ (plans and processes) and judge/ (verdicts), which do
 * not know it.
 *
 * Ownership: *results is a new reference (json_decref); the plan stays the
 * caller's and grows by the rerun jobs.
 */
#ifndef MXCTS_SESSION_H
#define MXCTS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "run/run.h"

/* Add reruns for the orderings that failed in `results`; returns the index
 * of the first new job (== njobs when none was needed). */
size_t mxcts_session_add_reruns(struct mxcts_plan *p, const json_t *results);
/* All of it.  `note` (may be NULL) gets one line per stage. */
int mxcts_session_run(struct mxcts_plan *p, bool progress, FILE *note, json_t **results);

#endif /* MXCTS_SESSION_H */
