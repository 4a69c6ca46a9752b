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
 * Performance targets (`--targets F`; format in docs/harness.md,
 * "Performance targets") bound a library's figures: its median, its median
 * over another config's, or its ratio to the baseline, each at most or at
 * least a value.  Checked against the finished document, each is met,
 * missed, a known miss (missed, with the reason the file states) or
 * unmeasured.
 *
 * Ownership: the caller owns the options; the documents from
 * mxcts_compare_run and mxcts_targets_load are the caller's (json_decref).
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
  const json_t *targets;            /* from mxcts_targets_load, or NULL */
  const char *targets_file;         /* the file it came from */
};

/* Plan, run and measure, and check the targets when given; *out is the
 * comparison document (format in docs/harness.md), also written to
 * OUT/compare.json.  Each library's
 * processes live under OUT/NAME/.  Fails (a message naming the cause) on
 * bad options, a suite that cannot be loaded, no timed config in the chosen
 * suites, or a runner failure -- not on processes that crashed: their
 * rounds are counted as failed in the document. */
int mxcts_compare_run(const struct mxcts_compare_opts *o, json_t **out);

/* Load and validate a targets file for a comparison of the libraries
 * `names` (the first the baseline): every target names one of them, a
 * ratio target one after the first.  Fails (a message naming the file and
 * the place in it) on a file that cannot be read or is not valid. */
int mxcts_targets_load(const char *path, const struct mxcts_strv *names, json_t **out);

/* Check the loaded targets (from the file `path`) against the comparison
 * document: sets doc["targets"] to the results.  Returns how many were
 * missed without a stated reason or could not be measured. */
size_t mxcts_targets_check(const json_t *targets, const char *path, json_t *doc);

/* The table: one line per (suite, config) with each library's median and
 * each ratio with its interval; then the targets' results, when the
 * document has them. */
void mxcts_compare_print(const json_t *doc, FILE *f);

/* The same as one self-contained HTML page, the targets' table below. */
int mxcts_compare_html(const json_t *doc, FILE *f);

#endif /* MXCTS_COMPARE_H */
