/*
 * harness/run/run.h: from options to finished processes: the plan of probe
 * processes, running them, their result files and the progress display.
 * Sections: progress, result, runner, plan.  (A whole run, judged batch by
 * batch, is session/session.h.)
 */
#ifndef MXCTS_RUN_H
#define MXCTS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "common/common.h"
#include "suite/suite.h"

/*
 * Progress: the progress display on stderr.
 *
 * On a terminal (or when forced, for tests): a single line rewritten in
 * place ("\r...\033[K") with the processes done of the total, the one
 * running now, and the elapsed time; cleared at the end.  Elsewhere (a log,
 * a CI job): the same facts as a plain line at most every `heartbeat_s`
 * seconds (0: never), so a long run is never silent.  Whole lines (a suite's
 * verdicts) go out through the display, which clears and redraws itself.
 *
 * Ownership: the caller owns the struct; `current` is copied.
 */

struct mxcts_progress {
  bool enabled;              /* the in-place line (a terminal) */
  FILE *out;
  size_t done, total;
  double started;
  char current[160];
  double last_draw;
  double heartbeat_s;        /* plain lines when not enabled; 0: none */
  double last_line;
};
/* Print `line` (and a newline) without breaking the in-place display. */
void mxcts_progress_print(struct mxcts_progress *p, const char *line);


/*
 * Result: the probe's result file (docs/probe-protocol.md, "Result
 * object"), parsed and checked.
 *
 * Parsing is strict about the fields the judge reads (their types and
 * ranges) and lenient about the rest: unknown fields are kept (in `root`)
 * so that a newer probe can add some.  A malformed file is an error whose
 * message names the file and the JSON path; the judge turns it into an
 * `error` verdict.  Nothing in a result can crash or hang the parser.
 *
 * Ownership: struct mxcts_result owns all it points to, including one
 * reference to `root`; free it with mxcts_result_free.
 */

#define MXCTS_PROBE_VERSION 1

struct mxcts_pass_result {
  char *name;
  long engine_ops;           /* -1 when absent */
  long *sizes;               /* ops held by each engine op, in order; -1: unknown
                                (ImperativeBulk); has_sizes false when absent */
  size_t nsizes;
  bool has_sizes;
  long bulked_events;        /* -1 when absent */
  long graph_launches;       /* CUDA graph launches, -1 when absent */
  long graph_captures;       /* of which captures, -1 when absent */
  struct mxcts_strv names;   /* segment names; has_names false when absent */
  bool has_names;
};

struct mxcts_check_result {
  char *name;
  bool pass;
  char *detail;              /* "" when absent */
};

struct mxcts_result {
  char *file;
  json_t *root;
  char *status;              /* "ok", "error", "usage" or "unsupported" (the
                                library lacks a function the workload calls:
                                root's "missing" lists them) */
  char *error;               /* the implementation's error, rendered; NULL if none */
  bool has_median;
  double median;             /* timing.median */
  char *unit;                /* timing.unit ("ms" when absent) */
  bool has_structure;
  struct mxcts_pass_result *passes;
  size_t npasses;
  struct mxcts_check_result *checks;
  size_t nchecks;
};

/* Parse a result document (`file` names it in messages); takes a new
 * reference to root.  On failure *out is empty. */
int mxcts_result_parse(json_t *root, const char *file, struct mxcts_result *out);
/* Read and parse a result file. */
int mxcts_result_load(const char *path, struct mxcts_result *out);
void mxcts_result_free(struct mxcts_result *r);

/* The pass of that name, or NULL. */
const struct mxcts_pass_result *mxcts_result_pass(const struct mxcts_result *r, const char *name);
/* The check of that name, or NULL. */
const struct mxcts_check_result *mxcts_result_check(const struct mxcts_result *r,
                                                    const char *name);
/* A number at a JSON path (mxcts_json_path); false when absent or not a
 * finite number. */
bool mxcts_result_number(const struct mxcts_result *r, const char *path, double *out);

/*
 * Runner: starting probe processes and recording how they ended.
 *
 * Each process is started (fork and exec) in its own process group, in its
 * own working directory, with exactly the environment it is given (the
 * runner's own environment is never read or changed here), stdin from
 * /dev/null, stdout and stderr into DIR/stdout.txt and DIR/stderr.txt, and
 * SIGKILL as its parent-death signal (it dies with mxcts, even on SIGKILL).
 * At its deadline the whole group gets SIGTERM, after the grace period
 * SIGKILL.  The runner makes mxcts a child subreaper: what a probe forked
 * and left behind (setsid included) is re-parented to mxcts and killed
 * once no probe runs, so nothing a probe started outlives the run.
 * When it ends, DIR/outcome.json records how: an exit status, a signal, the
 * deadline, or a failure to start.  What the outcome means (ok, error,
 * crash, timeout) is the judge's business (judge/judge.h), which also reads
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
 * Interrupts: after mxcts_run_catch_interrupts, SIGINT, SIGTERM and SIGHUP
 * stay blocked and are taken by the runner's wait (or by
 * mxcts_run_interrupted): the running probes' groups get SIGTERM, then
 * SIGKILL after the grace period, no outcome is recorded for them and
 * nothing more starts; mxcts_run_procs returns normally and the caller asks
 * mxcts_run_interrupted what happened.
 *
 * Ownership: the runner keeps no pointer to what it is given after a call
 * returns; struct mxcts_outcome owns `detail` (mxcts_outcome_free).
 */

enum mxcts_exit {
  MXCTS_EXIT_CODE,     /* exited with `code` */
  MXCTS_EXIT_SIGNAL,   /* killed by `signal` */
  MXCTS_EXIT_TIMEOUT,  /* killed at its deadline */
  MXCTS_EXIT_SPAWN,    /* could not be started: `detail` says why */
  MXCTS_EXIT_SKIPPED,  /* not started: an earlier process of its group crashed or timed
                          out (`cause`, `signal`, `detail` name it) */
};

struct mxcts_outcome {
  enum mxcts_exit how;
  int code;
  int signal;
  double wall_s;
  double timeout_s;
  enum mxcts_exit cause;   /* SKIPPED only: SIGNAL or TIMEOUT, what the group's
                              failed process did (`signal` is its signal) */
  char *detail;        /* may be NULL */
  bool after_result;   /* SIGNAL, TIMEOUT or a nonzero CODE of a process that had
                          written a complete result first (DIR/result.json with
                          status "ok"): it died on its way out.  Such a process
                          does not end its group. */
};
void mxcts_outcome_free(struct mxcts_outcome *o);
/* "SIGSEGV" (or "signal 42"); a static string or one valid until the next
 * call. */
const char *mxcts_signal_name(int sig);

/* Read DIR/outcome.json.  Loading a missing or malformed file fails with
 * a message naming it. */
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
  void (*done)(void *ctx, size_t proc); /* may be NULL: called after each
                                           process's outcome is recorded */
  void *done_ctx;
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
/* Hold the results folder OUT for this process: an exclusive lock on
 * OUT/mxcts.lock (created with OUT), which holds the holder's pid.  While a
 * run, plan or judge holds it, another is refused with a message naming
 * that pid.  Returns the lock's descriptor (close-on-exec; closing it, or
 * the process's end, releases the folder) or a negative status. */
int mxcts_out_lock(const char *out);
/* Block SIGINT, SIGTERM and SIGHUP for the process, to be taken as
 * interrupts (above).  Probes start with them unblocked. */
void mxcts_run_catch_interrupts(void);
/* The first of those signals received since then, or 0. */
int mxcts_run_interrupted(void);

/*
 * Plan: suites x configs x rounds expanded into probe processes.
 *
 * Every process of a plan is a job: a working directory under the results
 * directory, the exact argv of the probe and the exact environment (a clean
 * base -- PATH, HOME, LD_LIBRARY_PATH, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS
 * when set, plus --pass-env names -- with the config's variables on top).
 * Nothing here changes the planner's own environment.
 *
 * Jobs, in the order the runner starts them:
 *   1. structure runs (--profile), one per config that a structure assertion
 *      reads; untimed;
 *   2. the rounds of untimed suites, round by round;
 *   3. the rounds of timed suites, round by round, each round's configs in a
 *      seeded random order.
 * Further batches of rounds for undecided orderings are appended later
 * (mxcts_plan_add_batch), numbered on from the rounds already planned.
 *
 * Seeds: the run seed S (reported) gives each suite a stream
 * mix(S ^ hash(suite)); round r's probe seed and config order come from it,
 * so `--seed S --suite X` reproduces suite X alone.  All configs of one round
 * get the same probe seed (so their outputs can be compared); the structure
 * runs share one seed of their own.
 *
 * The plan is saved as OUT/plan.json (self-contained: options, the suite
 * documents, every job) so that `mxcts judge` can read results written by
 * jobs that GNU parallel ran anywhere.
 *
 * Ownership: struct mxcts_plan owns everything it points to
 * (mxcts_plan_free); struct mxcts_options owns its strings
 * (mxcts_options_free).
 */

#define MXCTS_PLAN_FORMAT 2

struct mxcts_options {
  char *impl;              /* the library under test (absolute) */
  char *impl_name;         /* e.g. "libmxref", "mxnet-1.9.1" */
  char *probe;             /* the probe executable (absolute) */
  char *suites_dir;
  struct mxcts_strv suites;     /* --suite; empty: every suite of suites_dir */
  struct mxcts_strv assertions; /* --assertion SUITE/GLOB; empty: every assertion */
  char *out;               /* results directory (absolute) */
  char *expectations;      /* expectation file or NULL */
  char *tap, *junit, *json, *html;   /* report files or NULL */
  int rounds;              /* --rounds, 0: each suite's own */
  uint64_t seed;           /* the run seed, < 2^32 */
  int jobs;                /* parallel untimed processes */
  double grace_s;          /* SIGTERM -> SIGKILL at a deadline */
  double timeout_scale;    /* multiplies every suite's timeout */
  double max_backoff_s;    /* the longest wait before a batch while rounds run contended */
  char *lock_file;         /* host-wide lock against concurrent timed work */
  struct mxcts_strv pass_env;   /* extra variable names passed through */
  char *self;              /* absolute path of the mxcts executable */
  char *python;            /* the interpreter of Python workloads: a path or a
                              name looked up on PATH at planning */
  char *python_dir;        /* where the suites' Python probe scripts are */
  char *no_python;         /* --no-python REASON: skip the Python workloads, giving REASON */
  char *depth;             /* --depth: "quick" (NULL) or "full", passed to every probe as depth= */
  bool keep_going;         /* --keep-going: run every round after a crash or timeout */
  bool time_every_config;  /* rounds for every config of a timed suite, not only those
                              an ordering reads (mxcts compare; not kept in plan.json) */
  char *expect_version;    /* --expect-version 1.9.1: the library must report it
                              (checked when planning; not kept in plan.json) */
  struct mxcts_strv expect_features; /* --expect-feature NAME: enabled in MXLibInfoFeatures */
};
void mxcts_options_free(struct mxcts_options *o);
/* Default lock file: ${TMPDIR:-/tmp}/mxcts-<uid>.lock (caller frees). */
char *mxcts_default_lock_file(void);

enum mxcts_job_kind { MXCTS_JOB_ROUND, MXCTS_JOB_PROFILE };

struct mxcts_job {
  char *id;                /* "suite/config/r003", ".../profile" */
  size_t suite, config;
  enum mxcts_job_kind kind;
  int round;               /* 1-based; 0 for structure runs */
  long seed;               /* the probe's --seed */
  bool timed;
  char *dir;               /* absolute working directory */
  struct mxcts_strv argv;  /* argv[0] is the probe */
  struct mxcts_strv env;   /* "K=V", exactly the process' environment */
  double timeout_s;
};

struct mxcts_plan {
  struct mxcts_options opt;
  struct mxcts_suite *suites;
  size_t nsuites;
  char **skip_reason;      /* per suite: non-NULL when expectations skip it */
  struct mxcts_job *jobs;
  size_t njobs, cap;
  bool resuming;           /* mxcts run --resume: jobs that left an outcome.json
                              are not run again */
};

/* Load the suites and expectations the options name and build every job.
 * Copies the options. */
int mxcts_plan_build(const struct mxcts_options *opt, struct mxcts_plan *out);
/* The rounds planned so far for a suite (its last round's number; 0 for a
 * suite without rounds). */
int mxcts_plan_rounds_run(const struct mxcts_plan *p, size_t suite);

/* Read a plan.json written by mxcts_plan_write.  When the folder it is in is
 * not the plan's OUT (the results were moved or copied), the paths inside
 * OUT are taken to be inside that folder. */
int mxcts_plan_load(const char *path, struct mxcts_plan *out);
void mxcts_plan_free(struct mxcts_plan *p);

/* The shell command that reproduces one process by hand:
 *   cd DIR && env -i K=V ... PROBE ARGS...      (caller frees) */
char *mxcts_job_command(const struct mxcts_job *j);
/* Print jobs [first, njobs) as lines for GNU parallel: one untimed job a
 * line; each round of a timed suite one line (its processes joined with
 * &&, each under the exclusive lock). */
void mxcts_plan_print_lines(const struct mxcts_plan *p, size_t first, FILE *f);

/* Write OUT/plan.json (creating OUT), and remove the group files an
 * earlier run left for the plan's configs (mxcts exec --group-file), so that
 * no failure of an old run skips the new run's jobs. */
int mxcts_plan_write(const struct mxcts_plan *p);

/* An interrupted run leaves OUT/interrupted, holding the signal's name,
 * until a resumed run starts: judging it calls the processes that left no
 * outcome interrupted (a skip), not failed. */
int mxcts_plan_mark_interrupted(const struct mxcts_plan *p, int sig);
/* The signal's name (the caller frees), or NULL when the run was not
 * interrupted. */
char *mxcts_plan_interrupted(const struct mxcts_plan *p);
void mxcts_plan_clear_interrupted(const struct mxcts_plan *p);
/* Append a batch of `rounds` rounds of `configs` of suite `suite`, numbered
 * on from the rounds planned so far (same stream of seeds and orders).
 * Returns the index of its first job. */
size_t mxcts_plan_add_batch(struct mxcts_plan *p, size_t suite, const size_t *configs, size_t n,
                            int rounds);
/* Called when the last of a suite's jobs in the batch has ended; returns a
 * line to print (caller of the hook frees) or NULL. */
typedef char *(*mxcts_suite_done_fn)(void *ctx, struct mxcts_plan *p, size_t suite);
/* Run the plan's jobs from index `first` on (mxcts_run_procs), one runner
 * group per (suite, config), with the progress line when `progress` (on a
 * terminal; elsewhere a plain line at least every 30 s).  `suite_done` may
 * be NULL. */
int mxcts_plan_run_jobs(struct mxcts_plan *p, size_t first, bool progress,
                        mxcts_suite_done_fn suite_done, void *ctx);

#endif /* MXCTS_RUN_H */
