/*
 * harness/plan.h: suites x configs x rounds expanded into probe processes.
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
 * Reruns of failing orderings are appended later (mxcts_plan_add_rerun).
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
#ifndef MXCTS_PLAN_H
#define MXCTS_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "expect.h"
#include "suite.h"

#define MXCTS_PLAN_FORMAT 1

struct mxcts_options {
  char *impl;              /* the library under test (absolute) */
  char *impl_name;         /* e.g. "libmxref", "mxnet-1.9.1" */
  char *probe;             /* the probe executable (absolute) */
  char *suites_dir;
  struct mxcts_strv suites;     /* --suite; empty: every suite of suites_dir */
  char *out;               /* results directory (absolute) */
  char *expectations;      /* expectation file or NULL */
  char *tap, *junit, *json, *html;   /* report files or NULL */
  int rounds;              /* --rounds, 0: each suite's own */
  uint64_t seed;           /* the run seed, < 2^32 */
  int jobs;                /* parallel untimed processes */
  double grace_s;          /* SIGTERM -> SIGKILL at a deadline */
  double timeout_scale;    /* multiplies every suite's timeout */
  char *lock_file;         /* host-wide lock against concurrent timed work */
  struct mxcts_strv pass_env;   /* extra variable names passed through */
  char *self;              /* absolute path of the mxcts executable */
  bool keep_going;         /* --keep-going: run every round after a crash or timeout */
};
void mxcts_options_free(struct mxcts_options *o);
/* Default lock file: ${TMPDIR:-/tmp}/mxcts-<uid>.lock (caller frees). */
char *mxcts_default_lock_file(void);

enum mxcts_job_kind { MXCTS_JOB_ROUND, MXCTS_JOB_PROFILE, MXCTS_JOB_RERUN };
const char *mxcts_job_kind_name(enum mxcts_job_kind k);

struct mxcts_job {
  char *id;                /* "suite/config/r003", ".../profile", ".../rerun-r003" */
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

/* The file through which the separately run processes of j's config share
 * a crash or timeout (mxcts exec --group-file): in the config's directory,
 * one for the first pass and one for the rerun.  Caller frees. */
char *mxcts_group_file(const struct mxcts_job *j);

struct mxcts_rerun {
  size_t suite;
  long seed;               /* the rerun's seed (a new S for that suite) */
};

struct mxcts_plan {
  struct mxcts_options opt;
  struct mxcts_suite *suites;
  size_t nsuites;
  char **skip_reason;      /* per suite: non-NULL when expectations skip it */
  struct mxcts_job *jobs;
  size_t njobs, cap;
  struct mxcts_rerun *reruns;
  size_t nreruns;
};

/* Load the suites and expectations the options name and build every job.
 * Copies the options. */
int mxcts_plan_build(const struct mxcts_options *opt, struct mxcts_plan *out);
/* Append a rerun of `configs` of suite `suite` (R rounds, timed, new seed).
 * Returns the index of its first job. */
size_t mxcts_plan_add_rerun(struct mxcts_plan *p, size_t suite, const size_t *configs, size_t n);
/* The rerun of a suite, or NULL. */
const struct mxcts_rerun *mxcts_plan_rerun(const struct mxcts_plan *p, size_t suite);

int mxcts_plan_save(const struct mxcts_plan *p, const char *path);
int mxcts_plan_load(const char *path, struct mxcts_plan *out);
void mxcts_plan_free(struct mxcts_plan *p);

/* The shell command that reproduces one process by hand:
 *   cd DIR && env -i K=V ... PROBE ARGS...      (caller frees) */
char *mxcts_job_command(const struct mxcts_job *j);
/* Print jobs [first, njobs) as lines for GNU parallel: one untimed job a
 * line; each round of a timed suite one line (its processes joined with
 * &&, each under the exclusive lock). */
void mxcts_plan_print_lines(const struct mxcts_plan *p, size_t first, FILE *f);

#endif /* MXCTS_PLAN_H */
