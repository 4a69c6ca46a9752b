/*
 * mxcts: the conformance harness' command line (docs/harness.md, mxcts(1)).
 *
 *   mxcts run     plan, execute, judge, report
 *   mxcts plan    write OUT/plan.json, print one job a line for GNU parallel
 *   mxcts exec    run one planned process (what the plan's lines call)
 *   mxcts judge   judge OUT (written by plan + exec), or print the next batch's jobs
 *   mxcts list    suites, configs, assertions
 *   mxcts report  re-render reports from a results file, or render several
 *                 as one matrix (--matrix) or throughput table (--throughput)
 *   mxcts compare performance A/B between implementations
 *
 * Exit status: 0 every assertion passed (xfail, skip and an expected
 * unsupported count as passed),
 * 1 some failed, 2 usage or internal error, 3 none failed but some
 * orderings were inconclusive.  Never 77 or 99 (automake's skip and hard
 * error).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "common/jsonv.h"
#include "compare/compare.h"
#include "config.h"
#include "judge/judge.h"
#include "report/report.h"
#include "run/run.h"
#include "session/session.h"

#define EXIT_PASS 0
#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_INCONCLUSIVE 3 /* no failure, some orderings undecided */
#define EXIT_INTERRUPTED 4  /* no failure in what finished: SIGINT, SIGTERM or SIGHUP stopped the run */

static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "mxcts %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nTry 'mxcts %s --help'.\n", cmd);
  va_end(ap);
  return EXIT_USAGE;
}

static int internal_error(const char *cmd) {
  fprintf(stderr, "mxcts %s: %s\n", cmd, mxcts_last_error());
  return EXIT_USAGE;
}

/* --- help texts --------------------------------------------------------------------- */

static const char help_main[] =
    "usage: mxcts COMMAND [OPTIONS]\n"
    "\n"
    "Conformance suites for MXNet-style engines: each (config, round) of each suite runs\n"
    "as a fresh mxcts-probe process against the library under test, and the results are\n"
    "judged (structure, sign-test orderings, numerics, equality) and reported.\n"
    "\n"
    "commands:\n"
    "  run      plan, execute, judge and report (the usual entry point)\n"
    "  plan     write OUT/plan.json and print one job a line for GNU parallel\n"
    "  exec     run one planned process (used by the lines `plan` prints)\n"
    "  judge    judge a results directory written by plan + its jobs\n"
    "  list     list suites, configurations and assertions\n"
    "  report   re-render reports from a JSON results file\n"
    "\n"
    "'mxcts COMMAND --help' describes each.  Exit status: 0 all assertions passed\n"
    "(xfail, skip and expected unsupported included), 1 some failed, 2 usage or\n"
    "internal error, 3 none failed but some orderings were inconclusive, 4 the run\n"
    "was interrupted (SIGINT, SIGTERM, SIGHUP) with no failure in what finished:\n"
    "'mxcts run --resume OUT' runs the rest.\n";

static const char help_run_opts[] =
    "  --impl LIB          library under test (default: the in-tree or installed libmxref.so)\n"
    "  --impl-name NAME    its name in reports and for suites/expectations/NAME.txt\n"
    "                      (default: the library's file name without .so, e.g. libmxref)\n"
    "  --probe PATH        the probe (default: mxcts-probe beside mxcts)\n"
    "  --suites DIR        suite directory (default: the in-tree or installed suites/)\n"
    "  --suite NAME        run only this suite (repeatable)\n"
    "  --assertion PAT     judge only the assertions matching SUITE/ASSERTION (fnmatch\n"
    "                      globs; repeatable) and run only the configs they read\n"
    "  --rounds N          rounds of each suite's first batch instead of its own\n"
    "                      (a suite's round budget grows to at least N)\n"
    "  --seed N            run seed (default: random; always reported)\n"
    "  --out DIR           results directory (default: ./mxcts-out)\n"
    "  --expectations F    expectation file (default: SUITES/expectations/NAME.txt if present;\n"
    "                      'none' for none)\n"
    "  --tap F, --junit F, --json F, --html F   reports to write ('-': stdout);\n"
    "                      OUT/results.json is always written\n"
    "  --jobs N            untimed processes at a time (default: the online CPUs; timed\n"
    "                      work always runs alone)\n"
    "  --pass-env NAME     also pass this variable through to the probe (repeatable)\n"
    "  --python PATH       the interpreter of suites with a Python workload (default:\n"
    "                      $MXCTS_PYTHON, else python3 on PATH); it must import mxnet,\n"
    "                      or those suites are skipped with the reason\n"
    "  --python-dir DIR    where their Python probe scripts are (default: the in-tree\n"
    "                      harness/probe/python or the installed one)\n"
    "  --no-python REASON  skip the suites with a Python workload, giving REASON (a\n"
    "                      script that knows no interpreter can import mxnet says why)\n"
    "  --depth quick|full  how far workloads sweep their parameter spaces (default quick;\n"
    "                      full: every generated case, for make check-full)\n"
    "  --expect-version V  refuse to judge a library whose MXGetVersion is not V\n"
    "                      (e.g. 1.9.1), asked once before planning\n"
    "  --expect-feature F  refuse one that does not enable feature F (MXLibInfoFeatures,\n"
    "                      e.g. CUDA; repeatable)\n"
    "  --timeout-scale X   multiply every suite's per-process timeout\n"
    "  --max-backoff S     longest wait before a batch while rounds run contended\n"
    "                      (default 30; 0: no wait)\n"
    "  --grace S           seconds between SIGTERM and SIGKILL at a deadline (default 2)\n"
    "  --keep-going        run every round of a config even after one crashed or timed\n"
    "                      out (default: its later processes are skipped, same verdict)\n"
    "  --lock-file F       host-wide lock against concurrent timed work\n"
    "                      (default ${TMPDIR:-/tmp}/mxcts-UID.lock; 'none' for none)\n"
    "  --no-progress       no progress line on a terminal\n";

static void print_help(const char *cmd) {
  if (!strcmp(cmd, "run")) {
    printf("usage: mxcts run [OPTIONS]\n       mxcts run --resume OUT [--no-progress]\n\n"
           "Plan every (suite, config, round), run each as a fresh probe process, judge,\n"
           "run further batches of rounds while orderings are undecided (up to each\n"
           "suite's max_rounds), and report.  SIGINT, SIGTERM or SIGHUP stop the probes,\n"
           "judge what finished and exit 4; --resume OUT runs what an interrupted run\n"
           "left undone, with its options.\n\n%s",
           help_run_opts);
  } else if (!strcmp(cmd, "plan")) {
    printf("usage: mxcts plan [OPTIONS]    (the options of 'mxcts run')\n\n"
           "Write OUT/plan.json and print one job a line on stdout.  Untimed processes are\n"
           "one line each; each round of a timed suite is one line (its processes joined\n"
           "with &&, each under the exclusive host lock).  Run them with GNU parallel, then\n"
           "judge:\n\n"
           "  mxcts plan --out OUT ... > jobs.txt\n"
           "  parallel --jobs 4 < jobs.txt\n"
           "  until mxcts judge --out OUT --next-batch > batch.txt; [ ! -s batch.txt ]; do\n"
           "    parallel < batch.txt; done\n"
           "  mxcts judge --out OUT\n\n"
           "On many hosts: parallel --sshloginfile HOSTS < jobs.txt, with OUT, the probe, mxcts\n"
           "and the library at the same paths on every host (a shared file system).\n"
           "harness/cli/mxcts-parallel does all of this.\n\n%s", help_run_opts);
  } else if (!strcmp(cmd, "exec")) {
    printf("usage: mxcts exec --dir DIR [--timeout S] [--grace S] [--lock shared|exclusive|none]\n"
           "                  [--lock-file F] [--group-file F] -- [NAME=VALUE ...] PROGRAM [ARGS ...]\n\n"
           "Run PROGRAM in DIR with exactly the NAME=VALUE environment (nothing inherited),\n"
           "stdout and stderr into DIR/stdout.txt and DIR/stderr.txt, killing its process\n"
           "group at the deadline, and record how it ended in DIR/outcome.json.  With\n"
           "--group-file (the plan's lines pass one per config unless --keep-going): if F\n"
           "names a process of the same config that crashed or timed out, PROGRAM is not\n"
           "run and the outcome is 'skipped' with that cause; if PROGRAM crashes or times\n"
           "out, F is made to name DIR.  Exit status 0 when the outcome was recorded\n"
           "(whatever the program did), 2 otherwise.\n");
  } else if (!strcmp(cmd, "judge")) {
    printf("usage: mxcts judge --out DIR [--next-batch] [--tap F] [--junit F] [--json F] [--html F]\n"
           "                   [--expectations F]\n\n"
           "Judge the processes of DIR/plan.json from the files they left, write\n"
           "DIR/results.json and the reports the plan asked for (or these options).\n"
           "--next-batch: instead, add the next batch of rounds of every suite whose\n"
           "orderings are undecided to the plan and print its job lines (nothing when none\n"
           "is needed or the round budgets are spent), after a bounded wait when their\n"
           "rounds ran contended.\n");
  } else if (!strcmp(cmd, "list")) {
    printf("usage: mxcts list [--suites DIR] [--suite NAME ...]\n\n"
           "Print each suite with its configurations (environment) and assertions, after\n"
           "validating the suite files.\n");
  } else if (!strcmp(cmd, "compare")) {
    printf("usage: mxcts compare --impl A --impl B [--impl C ...] [OPTIONS]\n\n"
           "Run the timed workloads of the chosen suites (default: every timed suite that\n"
           "needs no GPU) on each library, one fresh process per (library, config, round),\n"
           "interleaved in a seeded random order of the libraries, and print per (suite,\n"
           "config) each library's median and, for every library after the first, the\n"
           "median ratio time(library) / time(first) with its 95 %% confidence interval\n"
           "(the sign test's) and how many rounds it was faster.  With --targets, then\n"
           "each target of the file: met, missed, a known miss (the file says why) or\n"
           "unmeasured.  Exit status 0 when the table was made (and no target was missed\n"
           "without a reason or went unmeasured), 1 when one was, 2 on a usage or runner\n"
           "error.  OUT/compare.json holds the figures.\n\n"
           "  --impl LIB          a library (repeatable, at least two; the first is the baseline)\n"
           "  --impl-name NAME    names for the libraries, in order (default: file names)\n"
           "  --rounds N          rounds of each config (default 10)\n"
           "  --json F, --html F  also write the document / an HTML page ('-': stdout)\n"
           "  --targets F         performance targets to check (docs/harness.md)\n"
           "  --probe, --suites, --suite, --seed, --out, --pass-env, --timeout-scale,\n"
           "  --grace, --lock-file   as for 'mxcts run'\n");
  } else if (!strcmp(cmd, "report")) {
    printf("usage: mxcts report RESULTS.json [--tap F] [--junit F] [--json F] [--html F]\n"
           "       mxcts report --matrix [--markdown F] [--html F] [--omit-skipped] RESULTS.json...\n"
           "       mxcts report --throughput [--markdown F] RESULTS.json...\n"
           "       mxcts report --diff [--markdown F] [--html F] BEFORE.json NOW.json\n\n"
           "Re-render reports from a results file (OUT/results.json of a run); prints the\n"
           "summary.  Exit status as for run: 0 passed, 1 failed, 2 error, 3 inconclusive.\n"
           "--matrix: render several results files as one table, an assertion a row and an\n"
           "implementation (impl.name) a column, in Markdown (default: to stdout) and as one\n"
           "HTML page; --omit-skipped leaves out rows skipped everywhere.\n"
           "--throughput: seed 004's table from several results files (benchmark-score,\n"
           "network_inference): a row per suite, config and batch size, a column of images\n"
           "per second per implementation, their ratios to the first, and peak RSS, in\n"
           "Markdown.  Exit status 0, or 2 when a file cannot be read or written.\n"
           "--diff: what changed from BEFORE to NOW: regressions (pass before, failing or\n"
           "unsupported now, verdicts before expectations), fixes, newly inconclusive\n"
           "orderings, ordering ratios whose 95 %% intervals do not overlap, assertions\n"
           "judged on one side only; Markdown (default: to stdout) and HTML.  Exit status 1\n"
           "when something regressed, else 0 (2 when a file cannot be read or written).\n");
  } else {
    fputs(help_main, stdout);
  }
}

/* --- defaults --------------------------------------------------------------------------- */

/* Whether mxcts runs from this build tree (harness/ or harness/.libs/). */
static bool in_build_tree(const char *self_dir) {
  char *a = mxcts_xasprintf("%s/harness", MXCTS_BUILDDIR), *b = mxcts_xasprintf("%s/.libs", a);
  bool yes = self_dir && (!strcmp(self_dir, a) || !strcmp(self_dir, b));
  free(a);
  free(b);
  return yes;
}

static char *first_existing(const char *a, const char *b) {
  if (a && access(a, F_OK) == 0) return mxcts_xstrdup(a);
  if (b && access(b, F_OK) == 0) return mxcts_xstrdup(b);
  return NULL;
}

static char *default_probe(const char *self_dir) {
  if (!self_dir) return NULL;
  char *a = mxcts_xasprintf("%s/mxcts-probe", self_dir);
  char *b = mxcts_xasprintf("%s/../mxcts-probe", self_dir);
  char *r = mxcts_is_executable(a) ? mxcts_abspath(a) : mxcts_is_executable(b) ? mxcts_abspath(b) : NULL;
  free(a);
  free(b);
  return r;
}

static char *default_impl(bool tree) {
  char *a = mxcts_xasprintf("%s/ref/.libs/libmxref.so", MXCTS_BUILDDIR);
  char *b = mxcts_xasprintf("%s/libmxref.so", MXCTS_LIBDIR);
  char *r = first_existing(tree ? a : b, tree ? b : a);
  free(a);
  free(b);
  return r;
}

static char *default_suites(bool tree) {
  char *a = mxcts_xasprintf("%s/suites", MXCTS_SRCDIR), *b = mxcts_xasprintf("%s/suites", MXCTS_PKGDATADIR);
  char *r = first_existing(tree ? a : b, tree ? b : a);
  free(a);
  free(b);
  return r;
}

static char *default_python_dir(bool tree) {
  char *a = mxcts_xasprintf("%s/harness/probe/python", MXCTS_SRCDIR);
  char *b = mxcts_xasprintf("%s/python", MXCTS_PKGDATADIR);
  char *r = first_existing(tree ? a : b, tree ? b : a);
  free(a);
  free(b);
  return r;
}

static char *impl_name_of(const char *impl) {
  const char *base = strrchr(impl, '/');
  base = base ? base + 1 : impl;
  const char *so = strstr(base, ".so");
  return mxcts_xstrndup(base, so ? (size_t)(so - base) : strlen(base));
}

/* --- option parsing for run and plan ----------------------------------------------------- */

enum {
  OPT_IMPL = 256, OPT_IMPL_NAME, OPT_PROBE, OPT_SUITES, OPT_SUITE, OPT_ROUNDS, OPT_SEED, OPT_OUT,
  OPT_EXPECT, OPT_TAP, OPT_JUNIT, OPT_JSON, OPT_HTML, OPT_JOBS, OPT_PASS_ENV, OPT_TSCALE,
  OPT_GRACE, OPT_LOCK_FILE, OPT_NO_PROGRESS, OPT_HELP, OPT_NEXT_BATCH, OPT_DIR, OPT_TIMEOUT, OPT_LOCK,
  OPT_KEEP_GOING, OPT_GROUP_FILE, OPT_MAX_BACKOFF, OPT_ASSERTION, OPT_PYTHON, OPT_PYTHON_DIR, OPT_NO_PYTHON, OPT_TARGETS,
  OPT_DEPTH, OPT_EXPECT_VERSION, OPT_EXPECT_FEATURE
};

static const struct option run_longopts[] = {
    {"impl", required_argument, NULL, OPT_IMPL},
    {"impl-name", required_argument, NULL, OPT_IMPL_NAME},
    {"probe", required_argument, NULL, OPT_PROBE},
    {"suites", required_argument, NULL, OPT_SUITES},
    {"suite", required_argument, NULL, OPT_SUITE},
    {"assertion", required_argument, NULL, OPT_ASSERTION},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"out", required_argument, NULL, OPT_OUT},
    {"expectations", required_argument, NULL, OPT_EXPECT},
    {"tap", required_argument, NULL, OPT_TAP},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"json", required_argument, NULL, OPT_JSON},
    {"html", required_argument, NULL, OPT_HTML},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"pass-env", required_argument, NULL, OPT_PASS_ENV},
    {"python", required_argument, NULL, OPT_PYTHON},
    {"python-dir", required_argument, NULL, OPT_PYTHON_DIR},
    {"no-python", required_argument, NULL, OPT_NO_PYTHON},
    {"depth", required_argument, NULL, OPT_DEPTH},
    {"expect-version", required_argument, NULL, OPT_EXPECT_VERSION},
    {"expect-feature", required_argument, NULL, OPT_EXPECT_FEATURE},
    {"timeout-scale", required_argument, NULL, OPT_TSCALE},
    {"max-backoff", required_argument, NULL, OPT_MAX_BACKOFF},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"keep-going", no_argument, NULL, OPT_KEEP_GOING},
    {"lock-file", required_argument, NULL, OPT_LOCK_FILE},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"targets", required_argument, NULL, OPT_TARGETS},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0}};

static bool parse_long(const char *s, long min, long max, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < min || v > max) return false;
  *out = v;
  return true;
}

static bool parse_double(const char *s, double min, double max, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= min && v <= max)) return false;
  *out = v;
  return true;
}

struct cli {
  struct mxcts_options opt;
  bool seed_given, no_progress, no_lock, no_expect, backoff_given;
};

static void set_str(char **field, const char *v) {
  free(*field);
  *field = mxcts_xstrdup(v);
}

/* getopt_long with the checks every command shares: an unknown option, or
 * a value that is missing, empty or holds a control character (a path with
 * a newline would split the job lines `plan` prints) is a usage error.
 * Returns the option, or -1 at the end or on an error (*rc: its status). */
static int getopt_checked(const char *cmd, int argc, char **argv, const char *shortopts,
                          const struct option *opts, int *rc) {
  int c = getopt_long(argc, argv, shortopts, opts, NULL);
  int at = optind - 1 < argc ? optind - 1 : argc - 1;
  if (c != -1 && optarg && at >= 1 && argv[at] == optarg) at--; /* "--out X": the option is before X */
  const char *arg = argv[at];
  int len = (int)strcspn(arg, "="); /* --out=X names --out */
  if (c == '?') *rc = usage_error(cmd, "unknown option %s", arg);
  else if (c == ':') *rc = usage_error(cmd, "option %s needs a value", arg);
  else if (c != -1 && optarg && !*optarg) *rc = usage_error(cmd, "option %.*s: the value is empty", len, arg);
  else if (c != -1 && optarg)
    for (const char *p = optarg; *p && !*rc; p++)
      if ((unsigned char)*p < 0x20 || *p == 0x7f)
        *rc = usage_error(cmd, "option %.*s: the value holds a control character", len, arg);
  return *rc ? -1 : c;
}

/* One option of run/plan; 0, or the exit status of a usage error. */
static int run_option(const char *cmd, int c, const char *arg, struct cli *cl) {
  struct mxcts_options *o = &cl->opt;
  long n;
  switch (c) {
  case OPT_IMPL: set_str(&o->impl, arg); return 0;
  case OPT_IMPL_NAME:
    if (!mxcts_valid_id(arg)) return usage_error(cmd, "--impl-name %s: not a valid name", arg);
    set_str(&o->impl_name, arg);
    return 0;
  case OPT_PROBE: set_str(&o->probe, arg); return 0;
  case OPT_SUITES: set_str(&o->suites_dir, arg); return 0;
  case OPT_SUITE: mxcts_strv_push(&o->suites, arg); return 0;
  case OPT_ASSERTION: mxcts_strv_push(&o->assertions, arg); return 0;
  case OPT_ROUNDS:
    if (!parse_long(arg, 1, MXCTS_MAX_ROUNDS, &n))
      return usage_error(cmd, "--rounds %s: expected an integer in [1, %d]", arg, MXCTS_MAX_ROUNDS);
    o->rounds = (int)n;
    return 0;
  case OPT_SEED:
    if (!parse_long(arg, 0, 0xffffffffL, &n))
      return usage_error(cmd, "--seed %s: expected an integer in [0, 4294967295]", arg);
    o->seed = (uint64_t)n;
    cl->seed_given = true;
    return 0;
  case OPT_OUT: set_str(&o->out, arg); return 0;
  case OPT_EXPECT:
    cl->no_expect = !strcmp(arg, "none");
    set_str(&o->expectations, cl->no_expect ? NULL : arg);
    return 0;
  case OPT_TAP: set_str(&o->tap, arg); return 0;
  case OPT_JUNIT: set_str(&o->junit, arg); return 0;
  case OPT_JSON: set_str(&o->json, arg); return 0;
  case OPT_HTML: set_str(&o->html, arg); return 0;
  case OPT_JOBS:
    if (!parse_long(arg, 1, 1024, &n)) return usage_error(cmd, "--jobs %s: expected 1..1024", arg);
    o->jobs = (int)n;
    return 0;
  case OPT_PASS_ENV:
    if (!mxcts_valid_env_name(arg)) return usage_error(cmd, "--pass-env %s: not a variable name", arg);
    mxcts_strv_push(&o->pass_env, arg);
    return 0;
  case OPT_PYTHON:
    if (!*arg) return usage_error(cmd, "--python: empty path");
    set_str(&o->python, arg);
    return 0;
  case OPT_PYTHON_DIR: set_str(&o->python_dir, arg); return 0;
  case OPT_NO_PYTHON:
    if (!*arg) return usage_error(cmd, "--no-python: empty reason");
    set_str(&o->no_python, arg);
    return 0;
  case OPT_EXPECT_VERSION: set_str(&o->expect_version, arg); return 0;
  case OPT_EXPECT_FEATURE: mxcts_strv_push(&o->expect_features, arg); return 0;
  case OPT_DEPTH:
    if (strcmp(arg, "quick") && strcmp(arg, "full"))
      return usage_error(cmd, "--depth %s: expected quick or full", arg);
    set_str(&o->depth, strcmp(arg, "full") ? NULL : arg);
    return 0;
  case OPT_TSCALE:
    if (!parse_double(arg, 0.001, 1000, &o->timeout_scale))
      return usage_error(cmd, "--timeout-scale %s: expected a number in [0.001, 1000]", arg);
    return 0;
  case OPT_MAX_BACKOFF:
    if (!parse_double(arg, 0, 3600, &o->max_backoff_s))
      return usage_error(cmd, "--max-backoff %s: expected seconds in [0, 3600]", arg);
    cl->backoff_given = true;
    return 0;
  case OPT_GRACE:
    if (!parse_double(arg, 0, 3600, &o->grace_s))
      return usage_error(cmd, "--grace %s: expected seconds in [0, 3600]", arg);
    return 0;
  case OPT_LOCK_FILE:
    cl->no_lock = !strcmp(arg, "none");
    set_str(&o->lock_file, cl->no_lock ? NULL : arg);
    return 0;
  case OPT_NO_PROGRESS: cl->no_progress = true; return 0;
  case OPT_KEEP_GOING: o->keep_going = true; return 0;
  case OPT_TARGETS: return usage_error(cmd, "--targets is an option of 'mxcts compare'");
  default: return usage_error(cmd, "unknown option");
  }
}

/* Fill what the options left open and make every path absolute. */
/* The default --jobs: untimed processes need no machine of their own. */
static int online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

static int complete_options(const char *cmd, struct cli *cl) {
  struct mxcts_options *o = &cl->opt;
  char *self_dir = mxcts_self_dir();
  bool tree = in_build_tree(self_dir);
  char *tmp;
  if (!o->probe) o->probe = default_probe(self_dir);
  if (!o->impl) o->impl = default_impl(tree);
  if (!o->suites_dir) o->suites_dir = default_suites(tree);
  if (!o->python && getenv("MXCTS_PYTHON") && *getenv("MXCTS_PYTHON")) o->python = mxcts_xstrdup(getenv("MXCTS_PYTHON"));
  if (!o->python_dir) o->python_dir = default_python_dir(tree);
  int rc = 0;
  if (!o->probe) rc = usage_error(cmd, "no mxcts-probe beside %s: give --probe PATH", self_dir ? self_dir : "mxcts");
  else if (!o->impl) rc = usage_error(cmd, "no libmxref.so found (build tree or %s): give --impl LIB", MXCTS_LIBDIR);
  else if (!o->suites_dir) rc = usage_error(cmd, "no suites directory found: give --suites DIR");
  if (!rc && access(o->impl, R_OK) != 0) rc = usage_error(cmd, "--impl %s: %s", o->impl, strerror(errno));
  if (!rc && !mxcts_is_executable(o->probe)) rc = usage_error(cmd, "--probe %s: not an executable file", o->probe);
  if (rc) {
    free(self_dir);
    return rc;
  }
  tmp = o->impl, o->impl = mxcts_abspath(tmp), free(tmp);
  tmp = o->probe, o->probe = mxcts_abspath(tmp), free(tmp);
  tmp = o->suites_dir, o->suites_dir = mxcts_abspath(tmp), free(tmp);
  if (o->python_dir) tmp = o->python_dir, o->python_dir = mxcts_abspath(tmp), free(tmp);
  if (!o->impl_name) o->impl_name = impl_name_of(o->impl);
  if (!o->expectations && !cl->no_expect) {
    tmp = mxcts_xasprintf("%s/expectations/%s.txt", o->suites_dir, o->impl_name);
    if (access(tmp, R_OK) == 0) o->expectations = tmp;
    else free(tmp);
  } else if (o->expectations) {
    tmp = o->expectations, o->expectations = mxcts_abspath(tmp), free(tmp);
  }
  tmp = o->out ? o->out : mxcts_xstrdup("mxcts-out");
  o->out = mxcts_abspath(tmp);
  free(tmp);
  if (!cl->seed_given) o->seed = mxcts_random_seed() & 0xffffffffULL;
  if (!o->jobs) o->jobs = online_cpus();
  if (!o->grace_s) o->grace_s = 2.0;
  if (!cl->backoff_given) o->max_backoff_s = 30.0;
  if (!o->lock_file && !cl->no_lock) o->lock_file = mxcts_default_lock_file();
  char *self = self_dir ? mxcts_xasprintf("%s/mxcts", self_dir) : NULL;
  o->self = self && mxcts_is_executable(self) ? self : (free(self), mxcts_xstrdup("mxcts"));
  free(self_dir);
  return 0;
}

static int parse_run_args(const char *cmd, int argc, char **argv, struct cli *cl, bool *help) {
  int c, rc = 0;
  optind = 1;
  opterr = 0;
  while ((c = getopt_checked(cmd, argc, argv, ":", run_longopts, &rc)) != -1) {
    if (c == OPT_HELP) return *help = true, 0;
    rc = run_option(cmd, c, optarg, cl);
    if (rc) return rc;
  }
  if (rc) return rc;
  if (optind < argc) return usage_error(cmd, "unexpected argument %s", argv[optind]);
  return complete_options(cmd, cl);
}

/* --- run, plan, judge ---------------------------------------------------------------------- */

static int finish_reports(const char *cmd, const struct mxcts_plan *p, json_t *results) {
  char *main_json = mxcts_xasprintf("%s/results.json", p->opt.out);
  struct mxcts_report_files files = {p->opt.tap, p->opt.junit, main_json, p->opt.html};
  int rc = mxcts_report_write(results, &files);
  struct mxcts_report_files extra = {NULL, NULL, p->opt.json, NULL};
  if (!rc) rc = mxcts_report_write(results, &extra);
  free(main_json);
  if (rc) return internal_error(cmd);
  bool to_stdout = (p->opt.tap && !strcmp(p->opt.tap, "-")) || (p->opt.junit && !strcmp(p->opt.junit, "-")) ||
                   (p->opt.json && !strcmp(p->opt.json, "-")) || (p->opt.html && !strcmp(p->opt.html, "-"));
  mxcts_report_summary(results, to_stdout ? stderr : stdout);
  return mxcts_results_exit_status(results);
}

/* Run a plan to its end (or an interrupt), write the reports and say how
 * to continue an interrupted run. */
static int run_session(const char *cmd, struct mxcts_plan *p, bool progress) {
  json_t *results = NULL;
  mxcts_run_catch_interrupts();
  int rc = mxcts_session_run(p, progress, stderr, &results) ? internal_error(cmd)
                                                             : finish_reports(cmd, p, results);
  if (results && json_is_string(json_object_get(results, "interrupted")))
    fprintf(stderr, "mxcts run: interrupted by %s; what finished is judged above and kept: "
                    "'mxcts run --resume %s' runs the rest\n",
            json_string_value(json_object_get(results, "interrupted")), p->opt.out);
  json_decref(results);
  return rc;
}

/* mxcts run --resume OUT [--no-progress] (argv[0] is "run"): the plan in
 * OUT, without the processes that finished. */
static int cmd_resume(int argc, char **argv) {
  bool quiet = argc == 4 && !strcmp(argv[3], "--no-progress");
  if (argc < 3) return usage_error("run", "option --resume needs a value");
  if (argc > 3 && !quiet)
    return usage_error("run", "--resume OUT takes no other option than --no-progress (OUT/plan.json "
                              "holds the run's options)");
  char *path = mxcts_xasprintf("%s/plan.json", argv[2]);
  struct mxcts_plan p;
  int rc = mxcts_plan_load(path, &p);
  free(path);
  if (rc) return internal_error("run");
  int lock = mxcts_out_lock(p.opt.out);
  if (lock < 0) {
    mxcts_plan_free(&p);
    return internal_error("run");
  }
  p.resuming = true;
  rc = run_session("run", &p, !quiet);
  mxcts_plan_free(&p);
  close(lock);
  return rc;
}

static int cmd_run_or_plan(const char *cmd, int argc, char **argv) {
  if (!strcmp(cmd, "run") && argc >= 2 && !strcmp(argv[1], "--resume")) return cmd_resume(argc, argv);
  struct cli cl = {0};
  bool help = false;
  int rc = parse_run_args(cmd, argc, argv, &cl, &help);
  if (help) print_help(cmd);
  if (rc || help) {
    mxcts_options_free(&cl.opt);
    return rc;
  }
  int lock = mxcts_out_lock(cl.opt.out);
  if (lock < 0) {
    mxcts_options_free(&cl.opt);
    return internal_error(cmd);
  }
  struct mxcts_plan p;
  rc = mxcts_plan_build(&cl.opt, &p);
  mxcts_options_free(&cl.opt);
  if (rc) {
    close(lock);
    return internal_error(cmd);
  }
  if (!strcmp(cmd, "plan")) {
    if (mxcts_plan_write(&p)) {
      mxcts_plan_free(&p);
      return internal_error(cmd);
    }
    mxcts_plan_print_lines(&p, 0, stdout);
    fprintf(stderr, "mxcts plan: %zu processes, seed %llu, plan %s/plan.json\n", p.njobs,
            (unsigned long long)p.opt.seed, p.opt.out);
    mxcts_plan_free(&p);
    close(lock);
    return fflush(stdout) == 0 ? EXIT_PASS : EXIT_USAGE;
  }
  rc = run_session(cmd, &p, !cl.no_progress);
  mxcts_plan_free(&p);
  close(lock);
  return rc;
}

static const struct option judge_longopts[] = {
    {"out", required_argument, NULL, OPT_OUT},   {"next-batch", no_argument, NULL, OPT_NEXT_BATCH},
    {"tap", required_argument, NULL, OPT_TAP},   {"junit", required_argument, NULL, OPT_JUNIT},
    {"json", required_argument, NULL, OPT_JSON}, {"html", required_argument, NULL, OPT_HTML},
    {"expectations", required_argument, NULL, OPT_EXPECT},
    {"help", no_argument, NULL, OPT_HELP},       {NULL, 0, NULL, 0}};

static int judge_args(int argc, char **argv, struct cli *cl, bool *next_batch, bool *help) {
  int c, rc = 0;
  optind = 1;
  opterr = 0;
  while ((c = getopt_checked("judge", argc, argv, ":", judge_longopts, &rc)) != -1) {
    if (c == OPT_HELP) *help = true;
    else if (c == OPT_NEXT_BATCH) *next_batch = true;
    else if ((rc = run_option("judge", c, optarg, cl)) != 0) return rc;
  }
  if (rc) return rc;
  if (optind < argc) return usage_error("judge", "unexpected argument %s", argv[optind]);
  if (!*help && !cl->opt.out) return usage_error("judge", "--out DIR is required");
  return 0;
}

static void override(char **field, char *value) {
  if (!value) return;
  free(*field);
  *field = value;
}

/* The busy batches in a row so far, kept in OUT/busy-batches between the
 * calls of `judge --next-batch` (what session.c counts in memory). */
static int busy_batches_update(const char *out, bool busy) {
  char *path = mxcts_xasprintf("%s/busy-batches", out), *text = NULL;
  int n = 0;
  if (busy && mxcts_read_file(path, &text, NULL) == 0) n = atoi(text);
  n = busy ? n + 1 : 0;
  FILE *f = fopen(path, "w");
  if (f) fprintf(f, "%d\n", n), fclose(f);
  free(text);
  free(path);
  return n;
}

/* judge --next-batch: wait when the undecided rounds ran contended, add the
 * next batch to the plan and print its lines. */
static int print_next_batch(struct mxcts_plan *p, const json_t *results) {
  size_t first = mxcts_session_add_batches(p, results);
  if (first == p->njobs) return 0;
  if (mxcts_plan_write(p)) return internal_error("judge");
  bool busy = mxcts_session_backoff(results, 1, 1.0) > 0;
  double wait = mxcts_session_backoff(results, busy_batches_update(p->opt.out, busy),
                                      p->opt.max_backoff_s);
  if (wait > 0) {
    fprintf(stderr, "mxcts judge: rounds ran contended: waiting %gs before the next batch\n", wait);
    mxcts_sleep(wait);
  }
  mxcts_plan_print_lines(p, first, stdout);
  return 0;
}

static int cmd_judge(int argc, char **argv) {
  struct cli cl = {0};
  bool next_batch = false, help = false;
  int rc = judge_args(argc, argv, &cl, &next_batch, &help);
  if (help) print_help("judge");
  if (rc || help) return mxcts_options_free(&cl.opt), rc;
  struct mxcts_plan p;
  char *path = mxcts_xasprintf("%s/plan.json", cl.opt.out);
  rc = mxcts_plan_load(path, &p);
  free(path);
  if (rc) return mxcts_options_free(&cl.opt), internal_error("judge");
  override(&p.opt.tap, mxcts_xstrdup(cl.opt.tap));
  override(&p.opt.junit, mxcts_xstrdup(cl.opt.junit));
  override(&p.opt.json, mxcts_xstrdup(cl.opt.json));
  override(&p.opt.html, mxcts_xstrdup(cl.opt.html));
  if (cl.no_expect) {
    free(p.opt.expectations);
    p.opt.expectations = NULL;
  } else if (cl.opt.expectations) {
    override(&p.opt.expectations, mxcts_abspath(cl.opt.expectations));
  }
  override(&p.opt.out, mxcts_abspath(cl.opt.out));
  mxcts_options_free(&cl.opt);
  json_t *results = NULL;
  int lock = mxcts_out_lock(p.opt.out);
  if (lock < 0 || mxcts_judge(&p, &results)) rc = internal_error("judge");
  else if (next_batch) {
    rc = print_next_batch(&p, results);
  } else {
    rc = finish_reports("judge", &p, results);
  }
  if (lock >= 0) close(lock);
  json_decref(results);
  mxcts_plan_free(&p);
  return rc;
}

/* --- exec -------------------------------------------------------------------------------- */

static const struct option exec_longopts[] = {
    {"dir", required_argument, NULL, OPT_DIR},       {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"grace", required_argument, NULL, OPT_GRACE},   {"lock", required_argument, NULL, OPT_LOCK},
    {"lock-file", required_argument, NULL, OPT_LOCK_FILE},
    {"group-file", required_argument, NULL, OPT_GROUP_FILE},
    {"help", no_argument, NULL, OPT_HELP},           {NULL, 0, NULL, 0}};

struct exec_args {
  char *dir, *lock_file, *group_file;
  double timeout, grace;
  bool exclusive, no_lock, help;
};

static int exec_option(int c, const char *arg, struct exec_args *e) {
  switch (c) {
  case OPT_DIR: set_str(&e->dir, arg); return 0;
  case OPT_TIMEOUT:
    return parse_double(arg, 0.001, 1e7, &e->timeout) ? 0 : usage_error("exec", "--timeout %s: expected seconds", arg);
  case OPT_GRACE:
    return parse_double(arg, 0, 3600, &e->grace) ? 0 : usage_error("exec", "--grace %s: expected seconds", arg);
  case OPT_LOCK:
    if (strcmp(arg, "shared") && strcmp(arg, "exclusive") && strcmp(arg, "none"))
      return usage_error("exec", "--lock %s: expected shared, exclusive or none", arg);
    e->exclusive = !strcmp(arg, "exclusive");
    e->no_lock = !strcmp(arg, "none");
    return 0;
  case OPT_LOCK_FILE: set_str(&e->lock_file, arg); return 0;
  case OPT_GROUP_FILE: set_str(&e->group_file, arg); return 0;
  case OPT_HELP: e->help = true; return 0;
  case ':': return usage_error("exec", "option %s needs a value", "");
  default: return usage_error("exec", "unknown option");
  }
}

static int cmd_exec(int argc, char **argv) {
  struct exec_args e = {.timeout = 60, .grace = 2};
  int c, rc = 0;
  optind = 1;
  opterr = 0;
  while (!rc && (c = getopt_checked("exec", argc, argv, "+:", exec_longopts, &rc)) != -1) rc = exec_option(c, optarg, &e);
  if (!rc && e.help) print_help("exec");
  if (!rc && !e.help && !e.dir) rc = usage_error("exec", "--dir DIR is required");
  struct mxcts_strv env = {0};
  int i = optind;
  for (; !rc && !e.help && i < argc && strchr(argv[i], '=') && argv[i][0] != '/'; i++) mxcts_strv_push(&env, argv[i]);
  if (!rc && !e.help && i >= argc) rc = usage_error("exec", "no program to run");
  if (!rc && !e.help) {
    char *dir = mxcts_abspath(e.dir), *lock = e.no_lock ? NULL : e.lock_file ? mxcts_xstrdup(e.lock_file) : mxcts_default_lock_file();
    char *empty[] = {NULL};
    struct mxcts_proc proc = {dir,       dir,         argv + i,      env.n ? env.v : empty,
                              e.timeout, e.exclusive, e.group_file ? 0 : MXCTS_NO_GROUP};
    struct mxcts_run_opts ro = {1, e.grace, lock, NULL, false, e.group_file, NULL, NULL};
    rc = mxcts_run_procs(&proc, 1, &ro) ? internal_error("exec") : 0;
    free(dir);
    free(lock);
  }
  mxcts_strv_free(&env);
  free(e.dir);
  free(e.lock_file);
  free(e.group_file);
  return rc;
}

/* --- list and report ------------------------------------------------------------------------ */

static void list_suite(const struct mxcts_suite *s) {
  printf("%s: %s\n  workload %s, %s, %d rounds, batches of %d up to %d, SPRT p0 %g p1 %g "
         "pf %g alpha %g beta %g, margin %g, timeout %gs%s%s\n", s->name,
         s->description ? s->description : "", s->workload, s->timed ? "timed" : "untimed",
         s->rounds, s->batch, s->max_rounds, s->sprt.p0, s->sprt.p1, s->sprt.pf, s->sprt.alpha, s->sprt.beta,
         s->margin, s->timeout_s, s->python ? ", Python probe " : "", s->python ? s->python : "");
  for (size_t c = 0; c < s->nconfigs; c++) {
    printf("  config %s:", s->configs[c].id);
    for (size_t i = 0; i < s->configs[c].env.n; i++)
      printf(" %s=%s", s->configs[c].env.v[i].key, s->configs[c].env.v[i].value);
    printf("%s%s\n", mxcts_suite_config_needs_rounds(s, c) ? " [rounds]" : "",
           mxcts_suite_config_needs_profile(s, c) ? " [structure run]" : "");
  }
  for (size_t i = 0; i < s->nasserts; i++) {
    const struct mxcts_assertion *a = &s->asserts[i];
    printf("  assertion %s (%s):", a->id, mxcts_assert_type_name(a->type));
    for (size_t c = 0; c < a->nconfigs; c++) printf(" %s", s->configs[a->configs[c]].id);
    const char *needs[64];
    size_t n = mxcts_assertion_needs(s, a, needs, 64);
    printf("\n    needs:");
    for (size_t k = 0; k < n; k++) printf(" %s", needs[k]);
    printf("\n");
  }
}

static int cmd_list(int argc, char **argv) {
  struct cli cl = {0};
  bool help = false;
  int c, rc = 0;
  optind = 1;
  opterr = 0;
  while (!rc && (c = getopt_checked("list", argc, argv, ":", run_longopts, &rc)) != -1) {
    if (c == OPT_HELP) help = true;
    else if (c == OPT_SUITES || c == OPT_SUITE) run_option("list", c, optarg, &cl);
    else rc = usage_error("list", "unknown option %s", argv[optind - 1]);
  }
  if (help) print_help("list");
  if (!rc && !help && !cl.opt.suites_dir) {
    char *self_dir = mxcts_self_dir();
    cl.opt.suites_dir = default_suites(in_build_tree(self_dir));
    free(self_dir);
    if (!cl.opt.suites_dir) rc = usage_error("list", "no suites directory found: give --suites DIR");
  }
  struct mxcts_suite *suites = NULL;
  size_t n = 0;
  if (!rc && !help && mxcts_suites_load_dir(cl.opt.suites_dir, &cl.opt.suites, &suites, &n))
    rc = internal_error("list");
  for (size_t i = 0; i < n; i++) list_suite(&suites[i]);
  mxcts_suites_free(suites, n);
  mxcts_options_free(&cl.opt);
  return rc;
}

/* report --matrix [--markdown F] [--html F] [--omit-skipped] A.json B.json ...
 * report --throughput [--markdown F] A.json B.json ...
 * (argv[1] is the table's option) */
/* report --diff: exit 1 when something regressed. */
static int write_diff(const json_t *before, const json_t *now, const char *markdown, const char *html) {
  json_t *d = mxcts_report_diff(before, now);
  int rc = mxcts_report_diff_write(d, markdown, html) ? internal_error("report")
           : mxcts_report_diff_regressed(d)           ? EXIT_FAILED
                                                      : EXIT_PASS;
  json_decref(d);
  return rc;
}

static int cmd_report_tables(int argc, char **argv) {
  enum { M_MATRIX = 300, M_THROUGHPUT, M_DIFF, M_MARKDOWN, M_HTML, M_OMIT, M_HELP };
  static const struct option opts[] = {
      {"matrix", no_argument, NULL, M_MATRIX},        {"throughput", no_argument, NULL, M_THROUGHPUT},
      {"diff", no_argument, NULL, M_DIFF},
      {"markdown", required_argument, NULL, M_MARKDOWN}, {"html", required_argument, NULL, M_HTML},
      {"omit-skipped", no_argument, NULL, M_OMIT},    {"help", no_argument, NULL, M_HELP},
      {NULL, 0, NULL, 0}};
  const char *table = argv[1], *markdown = NULL, *html = NULL;
  const bool matrix = !strcmp(table, "--matrix"), diff = !strcmp(table, "--diff");
  bool omit = false;
  int c, rc = 0;
  optind = 1;
  opterr = 0;
  while (!rc && (c = getopt_checked("report", argc, argv, ":", opts, &rc)) != -1) {
    if (c == M_MARKDOWN) markdown = optarg;
    else if (c == M_HTML && (matrix || diff)) html = optarg;
    else if (c == M_OMIT && matrix) omit = true;
    else if (c == M_HELP) {
      print_help("report");
      return EXIT_PASS;
    }
    else if (c != (matrix ? M_MATRIX : diff ? M_DIFF : M_THROUGHPUT))
      rc = usage_error("report", "unknown option %s for %s", argv[optind - 1], table);
  }
  if (!rc && optind == argc) rc = usage_error("report", "%s expects one or more results files", table);
  if (!rc && diff && argc - optind != 2) rc = usage_error("report", "--diff expects two results files (before, now)");
  if (!markdown && !html) markdown = "-";
  size_t n = rc ? 0 : (size_t)(argc - optind);
  json_t **docs = mxcts_xcalloc(n + 1, sizeof *docs);
  for (size_t i = 0; i < n && !rc; i++)
    if (mxcts_json_load(argv[optind + (int)i], &docs[i]) || mxcts_results_check(docs[i], argv[optind + (int)i]))
      rc = internal_error("report");
  if (!rc && diff) rc = write_diff(docs[0], docs[1], markdown, html);
  else if (!rc && (matrix ? mxcts_report_matrix_write(docs, n, omit, markdown, html)
                          : mxcts_report_throughput_write(docs, n, markdown)))
    rc = internal_error("report");
  for (size_t i = 0; i < n; i++) json_decref(docs[i]);
  free(docs);
  return rc;
}

static int cmd_report(int argc, char **argv) {
  struct cli cl = {0};
  bool help = false;
  int c, rc = 0;
  optind = 1;
  opterr = 0;
  while (!rc && (c = getopt_checked("report", argc, argv, ":", run_longopts, &rc)) != -1) {
    if (c == OPT_HELP) help = true;
    else if (c == OPT_TAP || c == OPT_JUNIT || c == OPT_JSON || c == OPT_HTML) run_option("report", c, optarg, &cl);
    else rc = usage_error("report", "unknown option %s", argv[optind - 1]);
  }
  if (help) print_help("report");
  if (!rc && !help && optind != argc - 1) rc = usage_error("report", "expected one results file");
  json_t *doc = NULL;
  if (!rc && !help && (mxcts_json_load(argv[optind], &doc) || mxcts_results_check(doc, argv[optind])))
    rc = internal_error("report");
  if (!rc && doc) {
    struct mxcts_report_files files = {cl.opt.tap, cl.opt.junit, cl.opt.json, cl.opt.html};
    if (mxcts_report_write(doc, &files)) rc = internal_error("report");
    else {
      bool out = (cl.opt.tap && !strcmp(cl.opt.tap, "-")) || (cl.opt.junit && !strcmp(cl.opt.junit, "-")) ||
                 (cl.opt.json && !strcmp(cl.opt.json, "-")) || (cl.opt.html && !strcmp(cl.opt.html, "-"));
      mxcts_report_summary(doc, out ? stderr : stdout);
      rc = mxcts_results_exit_status(doc);
    }
  }
  json_decref(doc);
  mxcts_options_free(&cl.opt);
  return rc;
}

/* --- compare ------------------------------------------------------------------------------ */

struct compare_cli {
  struct cli cl;
  struct mxcts_strv impls, names;
  char *targets_file; /* --targets */
  json_t *targets;    /* its loaded document */
};

static int compare_option(int c, const char *arg, struct compare_cli *cc) {
  switch (c) {
  case OPT_IMPL: mxcts_strv_push(&cc->impls, arg); return 0;
  case OPT_IMPL_NAME:
    if (!mxcts_valid_id(arg)) return usage_error("compare", "--impl-name %s: not a valid name", arg);
    mxcts_strv_push(&cc->names, arg);
    return 0;
  case OPT_TARGETS: set_str(&cc->targets_file, arg); return 0;
  case OPT_EXPECT: case OPT_TAP: case OPT_JUNIT: case OPT_JOBS: case OPT_MAX_BACKOFF:
  case OPT_KEEP_GOING: case OPT_NO_PROGRESS:
    return usage_error("compare", "this option of 'mxcts run' means nothing to compare");
  default: return run_option("compare", c, arg, &cc->cl);
  }
}

/* Every library readable, each made absolute; one name each. */
static int complete_impls(struct compare_cli *cc) {
  if (cc->impls.n < 2) return usage_error("compare", "give two or more libraries (--impl LIB, repeated)");
  if (cc->names.n && cc->names.n != cc->impls.n)
    return usage_error("compare", "%zu --impl-name for %zu libraries: name all or none", cc->names.n,
                       cc->impls.n);
  for (size_t i = 0; i < cc->impls.n; i++) {
    if (access(cc->impls.v[i], R_OK) != 0)
      return usage_error("compare", "--impl %s: %s", cc->impls.v[i], strerror(errno));
    char *abs = mxcts_abspath(cc->impls.v[i]);
    free(cc->impls.v[i]);
    cc->impls.v[i] = abs;
    if (cc->names.n < cc->impls.n && i >= cc->names.n) mxcts_strv_push_take(&cc->names, impl_name_of(abs));
  }
  set_str(&cc->cl.opt.impl, cc->impls.v[0]);
  return complete_options("compare", &cc->cl);
}

static int compare_args(int argc, char **argv, struct compare_cli *cc, bool *help) {
  int c, rc = 0;
  optind = 1;
  opterr = 0;
  while ((c = getopt_checked("compare", argc, argv, ":", run_longopts, &rc)) != -1) {
    if (c == OPT_HELP) return *help = true, 0;
    if ((rc = compare_option(c, optarg, cc)) != 0) return rc;
  }
  if (rc) return rc;
  if (optind < argc) return usage_error("compare", "unexpected argument %s", argv[optind]);
  rc = complete_impls(cc);
  if (!rc && cc->targets_file && mxcts_targets_load(cc->targets_file, &cc->names, &cc->targets))
    rc = internal_error("compare");
  return rc;
}

/* Write the document or the page to PATH ("-": stdout). */
static int compare_output(const json_t *doc, const char *path, bool html) {
  if (!path) return 0;
  bool to_stdout = !strcmp(path, "-");
  FILE *f = to_stdout ? stdout : fopen(path, "w");
  if (!f) return mxcts_set_error(MXR_ESYS, "%s: cannot write: %s", path, strerror(errno));
  int rc = html ? mxcts_compare_html(doc, f) : json_dumpf(doc, f, JSON_INDENT(2)) ? MXR_ESYS : 0;
  if (!to_stdout && fclose(f) != 0 && !rc) rc = MXR_ESYS;
  return rc ? mxcts_set_error(MXR_ESYS, "%s: cannot write", path) : 0;
}

/* False, with a line naming each, when a library ran none of its
 * processes (it cannot be loaded, it lacks a function, ...). */
static bool every_library_ran(const json_t *doc) {
  bool all = true;
  size_t i;
  json_t *impl;
  json_array_foreach(json_object_get(doc, "impls"), i, impl) {
    if (json_integer_value(json_object_get(impl, "ran")) > 0) continue;
    fprintf(stderr, "mxcts compare: %s ran none of its %lld processes: %s\n",
            json_string_value(json_object_get(impl, "name")),
            (long long)json_integer_value(json_object_get(impl, "processes")),
            json_string_value(json_object_get(impl, "failure")));
    all = false;
  }
  return all;
}

static int cmd_compare(int argc, char **argv) {
  struct compare_cli cc = {0};
  bool help = false;
  int rc = compare_args(argc, argv, &cc, &help);
  if (help) print_help("compare");
  if (!rc && !help) {
    struct mxcts_compare_opts o = {&cc.cl.opt, &cc.impls, &cc.names, stderr, cc.targets, cc.targets_file};
    json_t *doc = NULL;
    rc = mxcts_compare_run(&o, &doc);
    json_int_t missed = json_integer_value(json_object_get(json_object_get(doc, "targets"), "missed"));
    if (!rc) rc = compare_output(doc, cc.cl.opt.json, false);
    if (!rc) rc = compare_output(doc, cc.cl.opt.html, true);
    bool quiet = (cc.cl.opt.json && !strcmp(cc.cl.opt.json, "-")) ||
                 (cc.cl.opt.html && !strcmp(cc.cl.opt.html, "-"));
    if (!rc) mxcts_compare_print(doc, quiet ? stderr : stdout);
    if (rc) rc = internal_error("compare");
    else if (missed || !every_library_ran(doc)) rc = EXIT_FAILED;
    json_decref(doc);
  }
  json_decref(cc.targets);
  free(cc.targets_file);
  mxcts_strv_free(&cc.impls);
  mxcts_strv_free(&cc.names);
  mxcts_options_free(&cc.cl.opt);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(help_main, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    print_help(argc > 2 ? argv[2] : "");
    return EXIT_PASS;
  }
  if (!strcmp(cmd, "--version")) {
    printf("mxcts %s\n", PACKAGE_VERSION);
    return EXIT_PASS;
  }
  int rc;
  if (!strcmp(cmd, "run") || !strcmp(cmd, "plan")) rc = cmd_run_or_plan(cmd, argc - 1, argv + 1);
  else if (!strcmp(cmd, "judge")) rc = cmd_judge(argc - 1, argv + 1);
  else if (!strcmp(cmd, "exec")) rc = cmd_exec(argc - 1, argv + 1);
  else if (!strcmp(cmd, "list")) rc = cmd_list(argc - 1, argv + 1);
  else if (!strcmp(cmd, "report"))
    rc = argc > 2 && (!strcmp(argv[2], "--matrix") || !strcmp(argv[2], "--throughput") ||
                      !strcmp(argv[2], "--diff"))
             ? cmd_report_tables(argc - 1, argv + 1)
             : cmd_report(argc - 1, argv + 1);
  else if (!strcmp(cmd, "compare")) rc = cmd_compare(argc - 1, argv + 1);
  else {
    fprintf(stderr, "mxcts: %s: unknown command (run, plan, exec, judge, list, report, compare)\n"
                    "Try 'mxcts --help'.\n", cmd);
    return EXIT_USAGE;
  }
  /* 0 to 4 only: never automake's 77 (skip) or 99 (hard error). */
  return rc == EXIT_PASS || rc == EXIT_FAILED || rc == EXIT_INCONCLUSIVE || rc == EXIT_INTERRUPTED
             ? rc
             : EXIT_USAGE;
}
