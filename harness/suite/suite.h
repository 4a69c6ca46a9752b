/*
 * harness/suite/suite.h: suite files (suites/NAME.json): parsing,
 * validation, and the questions the planner and the judge ask about a
 * suite; and the expectation files of each implementation.
 *
 * The format is documented in docs/suites.md.  A suite names one probe
 * workload with its parameters, a list of environment configurations, the
 * rounds and the sequential test's settings (p0, p1, pf, alpha, beta, batches and
 * the round budget), and assertions of seven types: structure,
 * ordering, checks, value, equal, profile_file and greater.  Parsing rejects unknown
 * fields, wrong types, missing fields and dangling references with a message
 * that names the file and the JSON path.
 *
 * Ownership: a parsed struct mxcts_suite owns everything it points to, and
 * holds one reference to the source document; mxcts_suite_free releases it
 * all.  Indexes (size_t config) refer to suite->configs.
 */
#ifndef MXCTS_SUITE_H
#define MXCTS_SUITE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/common.h"

#define MXCTS_SUITE_FORMAT 1
#define MXCTS_DEFAULT_ROUNDS 25       /* rounds of a suite without orderings */
#define MXCTS_DEFAULT_FIRST_BATCH 15  /* first batch of a suite with orderings */
#define MXCTS_DEFAULT_BATCH 10        /* each further batch */
#define MXCTS_DEFAULT_MAX_ROUNDS 100  /* the round budget of an ordering */
#define MXCTS_DEFAULT_P0 0.5
#define MXCTS_DEFAULT_P1 0.8
#define MXCTS_DEFAULT_ALPHA 0.001
#define MXCTS_DEFAULT_BETA 0.001
/* The fail walk's alternative (common.h): a correct implementation's
 * ordering that noise has pulled down to 60 % wins still fails with
 * probability at most beta.  Capped at the suite's p1. */
#define MXCTS_DEFAULT_PF 0.6
#define MXCTS_DEFAULT_MARGIN 0.05
#define MXCTS_DEFAULT_TIMEOUT 60.0
#define MXCTS_MAX_ROUNDS 200
#define MXCTS_DEFAULT_MEASURE "timing.median"

/* key=value pairs in file order (environment, probe parameters). */
struct mxcts_kv {
  char *key;
  char *value;
};
struct mxcts_kvs {
  struct mxcts_kv *v;
  size_t n, cap;
};
/* Set key (replacing an existing value); copies both strings. */
void mxcts_kvs_set(struct mxcts_kvs *l, const char *key, const char *value);
const char *mxcts_kvs_get(const struct mxcts_kvs *l, const char *key);
void mxcts_kvs_free(struct mxcts_kvs *l);

struct mxcts_config {
  char *id;
  char *description;         /* may be NULL */
  char *group;               /* may be NULL */
  char *workload;            /* this config's probe workload (the suite's by default) */
  struct mxcts_strv tags;
  struct mxcts_kvs env;      /* the configuration's variables, file order */
  struct mxcts_kvs params;   /* the suite's params with this config's on top */
};

/* The structure assertion's prediction for one pass of one config. */
enum {
  MXCTS_CMP_ENGINE_OPS = 1,
  MXCTS_CMP_SEGMENT_SIZES = 2,
  MXCTS_CMP_BULKED_EVENTS = 4,
  MXCTS_CMP_NAMES = 8,
  MXCTS_CMP_GRAPH_LAUNCHES = 16,
  MXCTS_CMP_GRAPH_CAPTURES = 32,
};
struct mxcts_pass_expect {
  char *name;                /* "forward", "backward", ... */
  long engine_ops;           /* predicted engine ops of the pass */
  long *sizes;               /* ops held by each engine op, in order */
  size_t nsizes;
  long bulked_events;        /* predicted ImperativeBulk events, -1 if not given */
  long graph_launches;       /* predicted CUDA graph launches, -1 if not given */
  long graph_captures;       /* predicted CUDA graph captures, -1 if not given */
  unsigned compare;          /* MXCTS_CMP_* bits: what is compared */
  struct mxcts_strv names;   /* expected distinct segment names (CMP_NAMES) */
  char *summary;             /* "67 ops: 66x15 + 10" for reports */
};
struct mxcts_structure_expect {
  size_t config;
  struct mxcts_pass_expect *passes;
  size_t npasses;
};

/* One side of an ordering: a config and the number read from its results. */
struct mxcts_operand {
  size_t config;
  char *measure;             /* JSON path into the probe result */
};

enum mxcts_assert_type {
  MXCTS_A_STRUCTURE,
  MXCTS_A_ORDERING,
  MXCTS_A_CHECKS,
  MXCTS_A_VALUE,
  MXCTS_A_EQUAL,
  MXCTS_A_PROFILE_FILE,
  MXCTS_A_GREATER,
};
const char *mxcts_assert_type_name(enum mxcts_assert_type t);

struct mxcts_assertion {
  char *id;
  char *description;          /* may be NULL */
  enum mxcts_assert_type type;
  bool full_depth;            /* "depth": "full": judged only by a --depth full run */
  char *skip_reason;          /* why this run does not judge it (its configs run
                                 only for the others; mxcts_suite_set_depth); else NULL */
  size_t *configs;            /* every config the assertion reads */
  size_t nconfigs;
  /* structure */
  struct mxcts_structure_expect *structs;
  size_t nstructs;
  /* ordering: every slower operand against every faster one */
  struct mxcts_operand *slower, *faster;
  size_t nslower, nfaster;
  double margin;
  double max_contention;      /* > 0: rounds where a process' contention
                                 (sched.contention) exceeded it are left out */
  /* checks: every probe check passes, at least min_checks of them */
  long min_checks;
  /* value: the named probe checks are present and pass (or fail) */
  struct mxcts_strv check_names;
  bool expect_pass;
  bool any_round;             /* "in": "any" -- one result suffices */
  /* equal: values at path (with * wildcards) identical across configs;
   * greater: the number at path */
  char *path;
  /* greater: in every round, each `greater` config's number exceeds each
   * `than` config's */
  size_t *greater, *than;
  size_t ngreater, nthan;
  /* profile_file: a Chrome trace left in the process' working directory */
  char *file;
  long min_events;
  struct mxcts_strv names_include;
};

struct mxcts_suite {
  char *file;                 /* where it was read from */
  char *name;
  char *description;
  char *workload;
  char *python;               /* NULL, or the Python probe script that runs the
                                 workload instead of mxcts-probe ("python") */
  struct mxcts_kvs params;          /* probe --param for every process */
  struct mxcts_kvs profile_params;  /* on top of params for structure runs */
  struct mxcts_config *configs;
  size_t nconfigs;
  int rounds;                 /* rounds of the first batch (untimed suites: all) */
  int batch;                  /* rounds of each further batch (orderings undecided) */
  int max_rounds;             /* the round budget of the suite's orderings */
  struct mxcts_sprt_params sprt;   /* p0, p1, pf, alpha, beta of its orderings */
  double margin;              /* default margin of ordering assertions */
  double max_contention;      /* default of ordering assertions; 0: off */
  double timeout_s;           /* per process */
  bool timed;
  bool needs_gpu;             /* "requires": ["gpu"]: skipped when the
                                 implementation reports no GPU */
  struct mxcts_assertion *asserts;
  size_t nasserts;
  json_t *source;             /* the document (one reference) */
};

/* Parse and validate a suite document.  `file` names it in messages and,
 * when not NULL, "name" must equal its base name without ".json".  Takes a
 * new reference to doc.  On failure *out is left empty (nothing to free). */
int mxcts_suite_parse(json_t *doc, const char *file, bool check_name, struct mxcts_suite *out);
int mxcts_suite_load(const char *path, struct mxcts_suite *out);

/* Load every DIR/NAME.json (sorted by name), or only the named suites (each
 * must exist).  *out is the caller's, freed with mxcts_suites_free. */
int mxcts_suites_load_dir(const char *dir, const struct mxcts_strv *names,
                          struct mxcts_suite **out, size_t *n);
void mxcts_suites_free(struct mxcts_suite *s, size_t n);
void mxcts_suite_free(struct mxcts_suite *s);

/* Override the first batch (the --rounds option); the round budget grows
 * to at least that many rounds. */
int mxcts_suite_set_rounds(struct mxcts_suite *s, int rounds);
/* The run's depth (--depth full or not): a quick run gives each assertion
 * of "depth": "full" its skip_reason, and its configs run only for the
 * other assertions that read them. */
void mxcts_suite_set_depth(struct mxcts_suite *s, bool full);

/* Keep only the assertions whose "SUITE/ASSERTION" matches one of the
 * fnmatch(3) patterns (a pattern without '/' keeps a whole suite; the
 * --assertion option), and the configs they read; the suite's source
 * document is narrowed the same way, so a plan carries the selection.  No
 * patterns keep everything.  Returns how many assertions were kept (0: the
 * suite is untouched and the caller drops it) or a negative status. */
int mxcts_suite_select(struct mxcts_suite *s, const struct mxcts_strv *patterns);

/* Whether a config runs the R timed (or untimed) rounds, and whether it gets
 * a structure run (--profile).  A config in an ordering always runs rounds;
 * one that only a structure assertion reads gets only the structure run. */
bool mxcts_suite_config_needs_rounds(const struct mxcts_suite *s, size_t config);
/* Whether a config's rounds are timed (run alone): an ordering judged in
 * this run reads it.  The other rounds of a timed suite (for equal, value
 * or checks assertions) run beside other untimed processes. */
bool mxcts_suite_config_timed(const struct mxcts_suite *s, size_t config);
bool mxcts_suite_config_needs_profile(const struct mxcts_suite *s, size_t config);

/* The C API functions assertion `a` needs (common/capi_needs.h): the
 * needs of the workloads of the configs it reads, and a structure run's
 * where it reads one; each once, in table order, into `out` (cap slots).
 * Returns the count. */
size_t mxcts_assertion_needs(const struct mxcts_suite *s, const struct mxcts_assertion *a, const char **out,
                             size_t cap);

/* Index of a config by id, or -1. */
long mxcts_suite_find_config(const struct mxcts_suite *s, const char *id);

/*
 * Expectation files: per-implementation expectations
 * (suites/expectations/<impl>.txt; format in docs/suites.md).
 *
 * One entry a line:  KIND PATTERN REASON...
 *   KIND     fail   the assertion is known to fail: a failing verdict
 *                   (fail, crash, timeout, error) becomes xfail, a pass
 *                   becomes xpass (reported, and counted as a failure so the
 *                   baseline stays tight)
 *            flaky  it may fail: a failing verdict becomes xfail, a pass
 *                   stays a pass
 *            skip   it is not judged (verdict skip); a pattern that covers a
 *                   whole suite ("numerics", or "numerics/" followed by "*") does not run it
 *            unsupported  the library lacks a function the assertion needs:
 *                   the verdict stays unsupported but is expected (not a
 *                   failure of the run); a pass becomes xpass
 *            exit-crash  the library may crash, hang or exit non-zero on its
 *                   way out after its process wrote a complete result: the
 *                   assertion is judged on that result, and the detail
 *                   counts such processes.  Not a verdict expectation: it
 *                   combines with a fail, flaky, skip or unsupported line.
 *                   Without it such a process is a crash, timeout or error.
 *   PATTERN  SUITE/ASSERTION, each part an fnmatch(3) glob; "SUITE" alone
 *            means every assertion of SUITE
 *   REASON   the rest of the line: why (required)
 * Blank lines and lines starting with '#' are ignored.
 *
 * Ownership: struct mxcts_expectations owns its entries; the pointers that
 * mxcts_expect_match returns live as long as it.
 */

enum mxcts_expect_kind {
  MXCTS_EXPECT_FAIL,
  MXCTS_EXPECT_FLAKY,
  MXCTS_EXPECT_SKIP,
  MXCTS_EXPECT_UNSUPPORTED,
  MXCTS_EXPECT_EXIT_CRASH,
};

struct mxcts_expect_entry {
  enum mxcts_expect_kind kind;
  char *suite;      /* glob */
  char *assertion;  /* glob ("*" when the line named the suite alone) */
  char *reason;
  int line;
  bool used;        /* set by mxcts_expect_match when it matched */
};

struct mxcts_expectations {
  char *file;       /* NULL when there is none */
  struct mxcts_expect_entry *v;
  size_t n;
};

const char *mxcts_expect_kind_name(enum mxcts_expect_kind k);

/* Parse `text` (the contents of `file`, named in messages as FILE:LINE). */
int mxcts_expect_parse(const char *text, const char *file, struct mxcts_expectations *out);
int mxcts_expect_load(const char *path, struct mxcts_expectations *out);
void mxcts_expect_free(struct mxcts_expectations *e);

/* The first verdict entry (any kind but exit-crash) matching
 * suite/assertion, or NULL; marks it used. */
const struct mxcts_expect_entry *mxcts_expect_match(struct mxcts_expectations *e,
                                                    const char *suite, const char *assertion);
/* The first exit-crash entry matching suite/assertion, or NULL; marks it
 * used. */
const struct mxcts_expect_entry *mxcts_expect_exit_crash(struct mxcts_expectations *e,
                                                         const char *suite, const char *assertion);
/* A skip entry that covers the whole suite (the suite is not run), or NULL. */
const struct mxcts_expect_entry *mxcts_expect_skips_suite(struct mxcts_expectations *e,
                                                          const char *suite);

#endif /* MXCTS_SUITE_H */
