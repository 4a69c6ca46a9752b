/*
 * harness/runner.h: starting probe processes and recording how they ended.
 *
 * Each process is started with posix_spawn in its own process group, in its
 * own working directory, with exactly the environment it is given (the
 * runner's own environment is never read or changed here), stdin from
 * /dev/null, stdout and stderr into DIR/stdout.txt and DIR/stderr.txt.  At
 * its deadline the whole group gets SIGTERM, after the grace period SIGKILL.
 * When it ends, DIR/outcome.json records how: an exit status, a signal, the
 * deadline, or a failure to start.  What the outcome means (ok, error,
 * crash, timeout) is the judge's business (judge.h), which also reads
 * DIR/result.json.
 *
 * Timed processes run alone: mxcts_run_procs first runs the untimed ones (up
 * to `jobs` at a time), then the timed ones one after another, with nothing
 * else of its own running.  Across processes (other mxcts runs, jobs from
 * GNU parallel) a host-wide lock file keeps the same rule: untimed
 * processes hold it shared, timed ones exclusive.
 *
 * The runner blocks SIGCHLD while it waits (sigtimedwait), restores the mask
 * afterwards, and resets an ignored SIGCHLD to its default so that children
 * can be reaped.
 *
 * Ownership: the runner keeps no pointer to what it is given after a call
 * returns; struct mxcts_outcome owns `detail` (mxcts_outcome_free).
 */
#ifndef MXCTS_RUNNER_H
#define MXCTS_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#include "progress.h"

enum mxcts_exit {
  MXCTS_EXIT_CODE,     /* exited with `code` */
  MXCTS_EXIT_SIGNAL,   /* killed by `signal` */
  MXCTS_EXIT_TIMEOUT,  /* killed at its deadline */
  MXCTS_EXIT_SPAWN,    /* could not be started: `detail` says why */
  MXCTS_EXIT_SKIPPED,  /* not started: an earlier process of its group crashed or timed
                          out (`cause`, `signal`, `detail` name it) */
};
const char *mxcts_exit_name(enum mxcts_exit e);

struct mxcts_outcome {
  enum mxcts_exit how;
  int code;
  int signal;
  double wall_s;
  double timeout_s;
  enum mxcts_exit cause;   /* SKIPPED only: SIGNAL or TIMEOUT, what the group's
                              failed process did (`signal` is its signal) */
  char *detail;        /* may be NULL */
};
void mxcts_outcome_free(struct mxcts_outcome *o);
/* "SIGSEGV" (or "signal 42"); a static string or one valid until the next
 * call. */
const char *mxcts_signal_name(int sig);

/* Write / read DIR/outcome.json.  Loading a missing or malformed file fails
 * with a message naming it. */
int mxcts_outcome_save(const char *dir, const struct mxcts_outcome *o);
int mxcts_outcome_load(const char *dir, struct mxcts_outcome *o);

enum mxcts_lock_mode { MXCTS_LOCK_NONE, MXCTS_LOCK_SHARED, MXCTS_LOCK_EXCLUSIVE };

struct mxcts_proc {
  const char *id;            /* for progress and messages */
  const char *dir;           /* absolute; created if missing */
  char *const *argv;         /* NULL-terminated; argv[0] is a path */
  char *const *envp;         /* NULL-terminated: the whole environment */
  double timeout_s;
  bool timed;
  size_t group;              /* processes that repeat one measurement (a suite's
                                config); MXCTS_NO_GROUP for none */
};
#define MXCTS_NO_GROUP ((size_t)-1)

struct mxcts_run_opts {
  int jobs;                  /* untimed processes at a time (>= 1) */
  double grace_s;            /* SIGTERM -> SIGKILL */
  const char *lock_file;     /* NULL: no host-wide lock */
  struct mxcts_progress *progress;   /* may be NULL */
  bool keep_going;           /* run every process even after its group failed */
  const char *group_file;    /* NULL, or a file that processes of one group run by
                                separate calls share (mxcts exec): see below */
};

/* Run the processes (untimed first, in parallel; then timed, serially),
 * writing outcome.json for each.  Once a process crashes or times out, the
 * processes of its group that have not started yet are not started (unless
 * keep_going): their outcome is SKIPPED with the cause, because running them
 * would only repeat the failure -- a hanging implementation would otherwise
 * cost a full deadline per round.  Returns 0 when every outcome was
 * recorded, whatever the processes did; an error only when the runner
 * itself failed (a directory it cannot create, a file it cannot write).
 * Processes of one group may also be run by separate calls, as the lines of
 * `mxcts plan` do under GNU parallel: with a group_file, a call records its
 * group's failure there (the failed process's directory; the first failure
 * stays), and a call that finds the file skips its processes the same way.
 * All processes given must then be of one group. */
int mxcts_run_procs(const struct mxcts_proc *procs, size_t n, const struct mxcts_run_opts *o);

#endif /* MXCTS_RUNNER_H */
