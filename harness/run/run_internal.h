/*
 * harness/run/run_internal.h: what the files of harness/run share and
 * nothing outside it calls: the progress line's updates, the names of job
 * kinds, the group file of a job's config and saving a plan.
 */
#ifndef MXCTS_RUN_INTERNAL_H
#define MXCTS_RUN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "run/run.h"

/* --- progress.c --------------------------------------------------------- */
/* Enabled when `out` is a terminal, or always when force is true. */
void mxcts__progress_init(struct mxcts_progress *p, FILE *out, bool force);
void mxcts__progress_add_total(struct mxcts_progress *p, size_t n);
/* A process started (`what` is shown). */
void mxcts__progress_start(struct mxcts_progress *p, const char *what);
/* A process finished. */
void mxcts__progress_step(struct mxcts_progress *p);
/* Show a note in place of the current process ("waiting for the lock"). */
void mxcts__progress_note(struct mxcts_progress *p, const char *note);
/* Print a plain progress line when heartbeat_s has passed since the last. */
void mxcts__progress_tick(struct mxcts_progress *p);
/* Seconds until the next plain line is due (a large number when none is). */
double mxcts__progress_next_tick(const struct mxcts_progress *p);
/* Clear the line. */
void mxcts__progress_finish(struct mxcts_progress *p);

/* --- plan.c ------------------------------------------------------------- */
const char *mxcts__job_kind_name(enum mxcts_job_kind k);
/* The file through which the separately run processes of j's config share
 * a crash or timeout (mxcts exec --group-file): in the config's directory,
 * one for all its batches.  Caller frees. */
char *mxcts__group_file(const struct mxcts_job *j);

#endif /* MXCTS_RUN_INTERNAL_H */
