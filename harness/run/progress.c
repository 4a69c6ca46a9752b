/* The one-line progress display (run/run_internal.h). */
#include "run/run_internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"

void mxcts__progress_init(struct mxcts_progress *p, FILE *out, bool force) {
  memset(p, 0, sizeof *p);
  p->out = out;
  p->enabled = force || (out && isatty(fileno(out)));
  p->started = mxcts_now();
  p->last_line = p->started;
}

static void draw(struct mxcts_progress *p) {
  if (!p->enabled) return;
  int secs = (int)(mxcts_now() - p->started);
  fprintf(p->out, "\r[%zu/%zu] %d:%02d %.100s\033[K", p->done, p->total, secs / 60, secs % 60,
          p->current);
  fflush(p->out);
  p->last_draw = mxcts_now();
}

void mxcts__progress_add_total(struct mxcts_progress *p, size_t n) { p->total += n; }

void mxcts__progress_start(struct mxcts_progress *p, const char *what) {
  snprintf(p->current, sizeof p->current, "%s", what);
  draw(p);
}

void mxcts__progress_step(struct mxcts_progress *p) {
  p->done++;
  draw(p);
}

void mxcts__progress_note(struct mxcts_progress *p, const char *note) {
  snprintf(p->current, sizeof p->current, "(%s)", note);
  if (mxcts_now() - p->last_draw > 0.5) draw(p);
}

static bool plain(const struct mxcts_progress *p) { return !p->enabled && p->out && p->heartbeat_s > 0; }

void mxcts__progress_tick(struct mxcts_progress *p) {
  double now = mxcts_now();
  if (!plain(p) || now - p->last_line < p->heartbeat_s) return;
  int secs = (int)(now - p->started);
  fprintf(p->out, "mxcts: [%zu/%zu processes] %d:%02d, running %.100s\n", p->done, p->total, secs / 60,
          secs % 60, p->current[0] ? p->current : "-");
  fflush(p->out);
  p->last_line = now;
}

double mxcts__progress_next_tick(const struct mxcts_progress *p) {
  if (!plain(p)) return 1e9;
  double left = p->last_line + p->heartbeat_s - mxcts_now();
  return left > 0 ? left : 0;
}

void mxcts_progress_print(struct mxcts_progress *p, const char *line) {
  if (!p->out) return;
  fprintf(p->out, "%s%s\n", p->enabled ? "\r\033[K" : "", line);
  fflush(p->out);
  p->last_line = mxcts_now();
  if (p->enabled) draw(p);
}

void mxcts__progress_finish(struct mxcts_progress *p) {
  if (!p->enabled) return;
  fputs("\r\033[K", p->out);
  fflush(p->out);
}
