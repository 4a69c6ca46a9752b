/*
 * harness/progress.h: the one-line progress display on stderr.
 *
 * Only when stderr is a terminal (or when forced, for tests): a single line
 * rewritten in place ("\r...\033[K") with the processes done of the total,
 * the one running now, and the elapsed time; cleared at the end.
 * Otherwise every call does nothing.
 *
 * Ownership: the caller owns the struct; `current` is copied.
 */
#ifndef MXCTS_PROGRESS_H
#define MXCTS_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct mxcts_progress {
  bool enabled;
  FILE *out;
  size_t done, total;
  double started;
  char current[160];
  double last_draw;
};

/* Enabled when `out` is a terminal, or always when force is true. */
void mxcts_progress_init(struct mxcts_progress *p, FILE *out, bool force);
void mxcts_progress_add_total(struct mxcts_progress *p, size_t n);
/* A process started (`what` is shown). */
void mxcts_progress_start(struct mxcts_progress *p, const char *what);
/* A process finished. */
void mxcts_progress_step(struct mxcts_progress *p);
/* Show a note in place of the current process ("waiting for the lock"). */
void mxcts_progress_note(struct mxcts_progress *p, const char *note);
/* Clear the line. */
void mxcts_progress_finish(struct mxcts_progress *p);

#endif /* MXCTS_PROGRESS_H */
