/*
 * harness/report/report.h: rendering a results document (judge/judge.h; schema in
 * docs/harness.md) as TAP version 13, JUnit XML, JSON and a self-contained
 * HTML page, plus the summary printed at the end of a run.
 *
 * Every renderer reads only the results document, so `mxcts report` can
 * re-render any results file.  Renderers read defensively (a field of the
 * wrong type renders as empty); mxcts_results_check validates a document
 * read from disk first.
 *
 * Ownership: nothing is kept after a call; the FILE is the caller's.
 */
#ifndef MXCTS_REPORT_H
#define MXCTS_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* TAP version 13: one test point per assertion, YAML diagnostics. */
int mxcts_report_tap(const json_t *results, FILE *f);
/* JUnit XML: a <testsuite> per suite, a <testcase> per assertion. */
int mxcts_report_junit(const json_t *results, FILE *f);
/* HTML with inline CSS and SVG plots (no external resources). */
int mxcts_report_html(const json_t *results, FILE *f);

struct mxcts_report_files {
  const char *tap, *junit, *json, *html;   /* NULL: not wanted; "-": stdout */
};
/* Write every wanted report; the first failure is returned (and named). */
int mxcts_report_write(const json_t *results, const struct mxcts_report_files *files);

/* "mxcts: 31 assertions: 29 pass, 1 xfail, 1 inconclusive -- INCONCLUSIVE"
 * and one line per failing or inconclusive assertion. */
void mxcts_report_summary(const json_t *results, FILE *f);

/* The compatibility matrix of `n` results documents: a row per assertion
 * (suite/id, first appearance order), a column per implementation
 * (impl.name; documents of one implementation share a column).  A cell
 * gives the verdict, an ordering's wins and median ratio (the weakest pair
 * of several), and for anything but pass and skip the first finding of the
 * detail (the missing functions of an unsupported one); a last list counts
 * the verdicts per implementation.  omit_skipped leaves out rows skipped in
 * every column (and says how many). */
int mxcts_report_matrix_md(json_t *const *docs, size_t n, bool omit_skipped, FILE *f);
/* The same matrix as one self-contained HTML page. */
int mxcts_report_matrix_html(json_t *const *docs, size_t n, FILE *f);
/* Write the Markdown and the HTML matrix to these paths (NULL: not wanted;
 * "-": stdout), as mxcts_report_write writes reports. */
int mxcts_report_matrix_write(json_t *const *docs, size_t n, bool omit_skipped, const char *markdown,
                              const char *html);

/* Seed 004's throughput table of `n` results documents, in Markdown: a row
 * per suite, config and batch size N of a bN_img_s metric (the configs'
 * "metrics": medians over their timed rounds; the network_inference
 * workload reports them), an implementation a column of images per second,
 * then each implementation's speed over the first column's, then each
 * one's peak RSS in MB; "-" where a figure is missing. */
int mxcts_report_throughput_md(json_t *const *docs, size_t n, FILE *f);
/* Write it to `markdown` ("-": stdout), as mxcts_report_write writes. */
int mxcts_report_throughput_write(json_t *const *docs, size_t n, const char *markdown);

/* What changed from results document `a` to `b` (a new document, the
 * caller's): "regressions" (an assertion whose verdict before expectations
 * was pass and is now a failure or unsupported), "fixes" (the reverse),
 * "newly_inconclusive", "ratios_moved" (ordering pairs judged on both
 * sides whose slower/faster ratio intervals, 95 % over the paired rounds,
 * do not overlap), "only_in_a" and "only_in_b". */
json_t *mxcts_report_diff(const json_t *a, const json_t *b);
bool mxcts_report_diff_regressed(const json_t *diff);
/* The diff as Markdown or as a self-contained HTML page. */
int mxcts_report_diff_md(const json_t *diff, FILE *f);
int mxcts_report_diff_html(const json_t *diff, FILE *f);
/* Write them to these paths (NULL: not wanted; "-": stdout). */
int mxcts_report_diff_write(const json_t *diff, const char *markdown, const char *html);

/* Text into HTML or XML: & < > " ' as entities, and first mxcts_clean_text
 * (invalid UTF-8 and control characters as \xNN), so that nothing a
 * document holds reaches a page or a JUnit file raw. */
void mxcts_report_markup(FILE *f, const char *s);

/* Validate a results document read from `file` (the fields renderers use). */
int mxcts_results_check(json_t *doc, const char *file);
/* From the verdicts (never the stored status): 1 when an assertion fails,
 * else 4 when the run was interrupted ("interrupted" names the signal),
 * else 3 when an ordering is inconclusive, else 0. */
int mxcts_results_exit_status(const json_t *results);

#endif /* MXCTS_REPORT_H */
