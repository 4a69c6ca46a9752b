/*
 * harness/compare/compare.h: performance A/B between implementations
 * (`mxcts compare`, docs/harness.md "Comparing implementations").
 *
 * The timed workloads of the chosen suites run against two or more
 * libraries: one plan per library (the same seed, so the same configs,
 * probe seeds and round order), and their processes interleaved: for each
 * (suite, round, config) of the plan, every library's process, in a seeded
 * random order of the libraries, one fresh process each, alone on the
 * machine as every timed process is.  No verdict: per (suite, config) each
 * library's median of its rounds' medians, and for every library after the
 * first, the median of the per-round ratios time(library) / time(first)
 * with the sign test's 95 % confidence interval (mxcts_median_ci), and how
 * many rounds it was the faster.
 *
 * Ownership: the caller owns the options; the document from
 * mxcts_compare_run is the caller's (json_decref).
 */
#ifndef MXCTS_COMPARE_H
#define MXCTS_COMPARE_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "common/common.h"
#include "run/run.h"

#define MXCTS_COMPARE_FORMAT 1

struct mxcts_compare_opts {
  /* Everything but impl and impl_name: probe, suites_dir, suites, out,
   * rounds (0: 10), seed, pass_env, timeout_scale, grace, lock file. */
  const struct mxcts_options *base;
  const struct mxcts_strv *impls;   /* absolute paths, at least two */
  const struct mxcts_strv *names;   /* one distinct name each */
  FILE *note;                       /* a line per step, or NULL */
};

/* Plan, run and measure; *out is the comparison document (format in
 * docs/harness.md), also written to OUT/compare.json.  Each library's
 * processes live under OUT/NAME/.  Fails (a message naming the cause) on
 * bad options, a suite that cannot be loaded, no timed config in the chosen
 * suites, or a runner failure -- not on processes that crashed: their
 * rounds are counted as failed in the document. */
int mxcts_compare_run(const struct mxcts_compare_opts *o, json_t **out);

/* The table: one line per (suite, config) with each library's median and
 * each ratio with its interval. */
void mxcts_compare_print(const json_t *doc, FILE *f);

/* The same as one self-contained HTML page. */
int mxcts_compare_html(const json_t *doc, FILE *f);

#endif /* MXCTS_COMPARE_H */
