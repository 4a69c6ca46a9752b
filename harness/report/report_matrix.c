/*
 * Tables of several results documents (report/report.h), an implementation
 * a column: the compatibility matrix (an assertion a row, in Markdown and as
 * one HTML page) and the throughput table (images per second per config and
 * batch size, in Markdown).  Documents of the same implementation (the
 * untimed and the timed part of one run) share a column.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "judge/judge.h"
#include "report/report.h"

static const char *str(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

/* A column's name: impl.name, else the library's path. */
static const char *impl_name(const json_t *doc) {
  const json_t *impl = json_object_get(doc, "impl");
  return *str(impl, "name") ? str(impl, "name") : str(impl, "path");
}

struct matrix {
  const char **cols;   /* implementation names, first appearance order */
  size_t ncols;
  const char **rows;   /* assertion names (suite/id), first appearance order */
  size_t nrows, cap;
  const json_t **cells; /* nrows x ncols, NULL where not run */
};

static size_t index_of(const char **v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(v[i], s)) return i;
  return n;
}

static void add_cell(struct matrix *m, size_t col, const json_t *a) {
  size_t r = index_of(m->rows, m->nrows, str(a, "name"));
  if (r == m->nrows) {
    if (m->nrows == m->cap) { /* rows and cells grow together */
      m->cap = m->cap ? 2 * m->cap : 64;
      m->rows = mxcts_xrealloc(m->rows, m->cap * sizeof *m->rows);
      m->cells = mxcts_xrealloc(m->cells, m->cap * m->ncols * sizeof *m->cells);
    }
    m->rows[m->nrows] = str(a, "name");
    for (size_t c = 0; c < m->ncols; c++) m->cells[m->nrows * m->ncols + c] = NULL;
    m->nrows++;
  }
  if (!m->cells[r * m->ncols + col]) m->cells[r * m->ncols + col] = a;
}

/* The implementations' names, first appearance order (the caller frees the
 * array, not the names). */
static const char **impl_columns(json_t *const *docs, size_t ndocs, size_t *ncols) {
  const char **cols = mxcts_xcalloc(ndocs + 1, sizeof *cols);
  *ncols = 0;
  for (size_t d = 0; d < ndocs; d++)
    if (index_of(cols, *ncols, impl_name(docs[d])) == *ncols) cols[(*ncols)++] = impl_name(docs[d]);
  return cols;
}

static void matrix_build(struct matrix *m, json_t *const *docs, size_t ndocs) {
  memset(m, 0, sizeof *m);
  m->cols = impl_columns(docs, ndocs, &m->ncols);
  for (size_t d = 0; d < ndocs; d++) {
    size_t col = index_of(m->cols, m->ncols, impl_name(docs[d])), i, k;
    json_t *s, *a;
    json_array_foreach(json_object_get(docs[d], "suites"), i, s) {
      json_array_foreach(json_object_get(s, "assertions"), k, a) add_cell(m, col, a);
    }
  }
}

static void matrix_free(struct matrix *m) {
  free(m->cols);
  free(m->rows);
  free(m->cells);
}

static bool skipped_row(const struct matrix *m, size_t r) {
  for (size_t c = 0; c < m->ncols; c++) {
    const json_t *a = m->cells[r * m->ncols + c];
    if (a && strcmp(str(a, "verdict"), "skip")) return false;
  }
  return true;
}

/* The first finding of a detail: up to its first "; ", at most 120 bytes. */
static char *first_line(const char *detail) {
  size_t n = strcspn(detail, "\n");
  const char *semi = strstr(detail, "; ");
  if (semi && (size_t)(semi - detail) < n) n = (size_t)(semi - detail);
  if (n <= 120) return mxcts_xstrndup(detail, n);
  char *s = mxcts_xstrndup(detail, 117);
  char *r = mxcts_xasprintf("%s...", s);
  free(s);
  return r;
}

/* Wins and ratio of an ordering: its one pair, or the weakest of several. */
static void ordering_figures(struct mxcts_buf *b, const json_t *a) {
  const json_t *pairs = json_object_get(json_object_get(a, "diag"), "pairs"), *p;
  size_t i, n = 0;
  long wins = -1, rounds = 0;
  double ratio = 0;
  json_array_foreach(pairs, i, p) {
    const json_t *r = json_object_get(p, "ratio_median");
    if (!json_is_number(r)) continue;
    long w = (long)json_integer_value(json_object_get(p, "wins"));
    if (wins < 0 || w < wins) wins = w;
    if (n == 0 || json_number_value(r) < ratio) ratio = json_number_value(r);
    rounds = (long)json_integer_value(json_object_get(p, "rounds"));
    n++;
  }
  if (n == 1) mxcts_buf_printf(b, ", %ld/%ld wins, ratio %.2f", wins, rounds, ratio);
  else if (n > 1) mxcts_buf_printf(b, ", %zu pairs, >= %ld/%ld wins, ratio >= %.2f", n, wins, rounds, ratio);
}

/* One cell: the verdict, for orderings wins and ratio, for anything not a
 * pass or skip the first line of its evidence (the missing functions of an
 * unsupported one). */
static char *cell_text(const json_t *a) {
  if (!a) return mxcts_xstrdup("not run");
  struct mxcts_buf b = {0};
  const char *v = str(a, "verdict"), *raw = str(a, "raw_verdict");
  mxcts_buf_puts(&b, v);
  if (!strcmp(v, "xfail") && *raw && strcmp(raw, "fail")) mxcts_buf_printf(&b, " (%s)", raw);
  if (!strcmp(v, "unsupported") && !mxcts_assertion_fails(a)) mxcts_buf_puts(&b, " (expected)");
  if (!strcmp(str(a, "type"), "ordering") && strcmp(v, "skip") && strcmp(v, "unsupported")) ordering_figures(&b, a);
  const json_t *missing = json_object_get(json_object_get(a, "diag"), "missing"), *fn;
  size_t i;
  if (!strcmp(v, "unsupported") && json_array_size(missing)) {
    mxcts_buf_puts(&b, ": no");
    json_array_foreach(missing, i, fn) mxcts_buf_printf(&b, "%s %s", i ? "," : "", json_string_value(fn));
  } else if (strcmp(v, "pass") && strcmp(v, "skip") && *str(a, "detail")) {
    char *line = first_line(str(a, "detail"));
    mxcts_buf_printf(&b, ": %s", line);
    free(line);
  }
  char *r = mxcts_xstrdup(mxcts_buf_str(&b));
  mxcts_buf_free(&b);
  return r;
}

static void md_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '|') fputs("\\|", f);
    else if (*s == '\n' || *s == '\r') fputc(' ', f);
    else fputc(*s, f);
  }
}

static void html_text(FILE *f, const char *s) { mxcts_report_markup(f, s); }

/* "30 pass, 4 xfail, 9 unsupported" over a column's cells. */
static char *column_counts(const struct matrix *m, size_t c) {
  size_t counts[MXCTS_NUM_VERDICTS] = {0};
  for (size_t r = 0; r < m->nrows; r++) {
    int v = mxcts_verdict_parse(str(m->cells[r * m->ncols + c], "verdict"));
    if (v >= 0) counts[v]++;
  }
  struct mxcts_buf b = {0};
  for (int v = 0; v < MXCTS_NUM_VERDICTS; v++)
    if (counts[v]) mxcts_buf_printf(&b, "%s%zu %s", b.len ? ", " : "", counts[v], mxcts_verdict_name((enum mxcts_verdict)v));
  char *r = mxcts_xstrdup(b.len ? mxcts_buf_str(&b) : "nothing run");
  mxcts_buf_free(&b);
  return r;
}

int mxcts_report_matrix_md(json_t *const *docs, size_t ndocs, bool omit_skipped, FILE *f) {
  struct matrix m;
  matrix_build(&m, docs, ndocs);
  fputs("| assertion |", f);
  for (size_t c = 0; c < m.ncols; c++) {
    fputc(' ', f);
    md_text(f, m.cols[c]);
    fputs(" |", f);
  }
  fputs("\n|---|", f);
  for (size_t c = 0; c < m.ncols; c++) fputs("---|", f);
  fputc('\n', f);
  size_t left_out = 0;
  for (size_t r = 0; r < m.nrows; r++) {
    if (omit_skipped && skipped_row(&m, r)) {
      left_out++;
      continue;
    }
    fputs("| `", f);
    md_text(f, m.rows[r]);
    fputs("` |", f);
    for (size_t c = 0; c < m.ncols; c++) {
      char *t = cell_text(m.cells[r * m.ncols + c]);
      fputc(' ', f);
      md_text(f, t);
      fputs(" |", f);
      free(t);
    }
    fputc('\n', f);
  }
  if (left_out) fprintf(f, "\n%zu assertions skipped everywhere are left out.\n", left_out);
  fputc('\n', f);
  for (size_t c = 0; c < m.ncols; c++) {
    char *counts = column_counts(&m, c);
    fputs("- ", f);
    md_text(f, m.cols[c]);
    fprintf(f, ": %s\n", counts);
    free(counts);
  }
  matrix_free(&m);
  return ferror(f) ? mxcts_set_error(MXR_ESYS, "write error") : 0;
}

static const char *const matrix_css =
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;vertical-align:top;"
    "text-align:left;font-size:13px;max-width:360px;word-break:break-word}th{background:#f3f3f3}"
    ".pass{color:#1a7f37}.fail,.crash,.timeout,.error,.xpass{color:#cf222e;font-weight:bold}"
    ".skip,.xfail{color:#8250df}.inconclusive{color:#9a6700;font-weight:bold}"
    ".unsupported{color:#bc4c00;font-weight:bold}";

int mxcts_report_matrix_html(json_t *const *docs, size_t ndocs, FILE *f) {
  struct matrix m;
  matrix_build(&m, docs, ndocs);
  fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>mxcts matrix</title>"
             "<style>%s</style></head><body>\n<h1>mxcts: assertions by implementation</h1>\n"
             "<table><tr><th>assertion</th>", matrix_css);
  for (size_t c = 0; c < m.ncols; c++) {
    char *counts = column_counts(&m, c);
    fputs("<th>", f);
    html_text(f, m.cols[c]);
    fputs("<br><small>", f);
    html_text(f, counts);
    fputs("</small></th>", f);
    free(counts);
  }
  fputs("</tr>\n", f);
  for (size_t r = 0; r < m.nrows; r++) {
    fputs("<tr><td><code>", f);
    html_text(f, m.rows[r]);
    fputs("</code></td>", f);
    for (size_t c = 0; c < m.ncols; c++) {
      const json_t *a = m.cells[r * m.ncols + c];
      char *t = cell_text(a);
      fputs("<td class='", f);
      html_text(f, a ? str(a, "verdict") : "");
      fputs("'>", f);
      html_text(f, t);
      fputs("</td>", f);
      free(t);
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n</body></html>\n", f);
  matrix_free(&m);
  return ferror(f) ? mxcts_set_error(MXR_ESYS, "write error") : 0;
}

/* --- the throughput table ----------------------------------------------------------------- */

struct tp_row {
  const json_t *suite, *config;
  long batch;
};

struct throughput {
  const char **cols;
  size_t ncols;
  struct tp_row *rows;
  size_t nrows, cap;
  double *ips, *rss; /* nrows x ncols; NaN where not measured */
};

static size_t tp_row_of(struct throughput *t, const json_t *suite, const json_t *config, long batch) {
  for (size_t r = 0; r < t->nrows; r++)
    if (!strcmp(str(t->rows[r].suite, "name"), str(suite, "name")) &&
        !strcmp(str(t->rows[r].config, "id"), str(config, "id")) && t->rows[r].batch == batch)
      return r;
  if (t->nrows == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 32;
    t->rows = mxcts_xrealloc(t->rows, t->cap * sizeof *t->rows);
    t->ips = mxcts_xrealloc(t->ips, t->cap * t->ncols * sizeof *t->ips);
    t->rss = mxcts_xrealloc(t->rss, t->cap * t->ncols * sizeof *t->rss);
  }
  t->rows[t->nrows] = (struct tp_row){suite, config, batch};
  for (size_t c = 0; c < t->ncols; c++) t->ips[t->nrows * t->ncols + c] = t->rss[t->nrows * t->ncols + c] = NAN;
  return t->nrows++;
}

/* Every config's bN_img_s metrics, a row per suite, config and N. */
static void throughput_build(struct throughput *t, json_t *const *docs, size_t ndocs) {
  memset(t, 0, sizeof *t);
  t->cols = impl_columns(docs, ndocs, &t->ncols);
  for (size_t d = 0; d < ndocs; d++) {
    size_t col = index_of(t->cols, t->ncols, impl_name(docs[d])), i, k;
    json_t *s, *c, *v;
    const char *name;
    json_array_foreach(json_object_get(docs[d], "suites"), i, s) {
      json_array_foreach(json_object_get(s, "configs"), k, c) {
        json_object_foreach(json_object_get(c, "metrics"), name, v) {
          long batch;
          int end = 0;
          if (sscanf(name, "b%ld_img_s%n", &batch, &end) != 1 || name[end] || !json_is_number(v)) continue;
          size_t r = tp_row_of(t, s, c, batch);
          t->ips[r * t->ncols + col] = json_number_value(v);
          const json_t *kb = json_object_get(c, "peak_rss_kb");
          if (json_is_number(kb)) t->rss[r * t->ncols + col] = json_number_value(kb) / 1024;
        }
      }
    }
  }
}

static void tp_cell(FILE *f, double v, const char *fmt) {
  fputs(" | ", f);
  if (isnan(v)) fputs("-", f);
  else fprintf(f, fmt, v);
}

int mxcts_report_throughput_md(json_t *const *docs, size_t ndocs, FILE *f) {
  struct throughput t;
  throughput_build(&t, docs, ndocs);
  fputs("| suite | config | network | batch", f);
  for (size_t c = 0; c < t.ncols; c++) fprintf(f, " | %s img/s", t.cols[c]);
  for (size_t c = 1; c < t.ncols; c++) fprintf(f, " | %s / %s", t.cols[c], t.cols[0]);
  for (size_t c = 0; c < t.ncols; c++) fprintf(f, " | %s peak RSS MB", t.cols[c]);
  fputs(" |\n|", f);
  for (size_t c = 0; c < 4 + 3 * t.ncols - 1; c++) fputs("---|", f);
  fputs("\n", f);
  for (size_t r = 0; r < t.nrows; r++) {
    const struct tp_row *row = &t.rows[r];
    const json_t *params = json_object_get(row->config, "params");
    fputs("| ", f);
    md_text(f, str(row->suite, "name"));
    fputs(" | ", f);
    md_text(f, str(row->config, "id"));
    fputs(" | ", f);
    md_text(f, *str(params, "net") ? str(params, "net") : "-");
    if (*str(params, "image")) fprintf(f, " at %s", str(params, "image"));
    fprintf(f, " | %ld", row->batch);
    const double *ips = &t.ips[r * t.ncols], *rss = &t.rss[r * t.ncols];
    for (size_t c = 0; c < t.ncols; c++) tp_cell(f, ips[c], "%.1f");
    for (size_t c = 1; c < t.ncols; c++) tp_cell(f, ips[c] / ips[0], "%.2f");
    for (size_t c = 0; c < t.ncols; c++) tp_cell(f, rss[c], "%.0f");
    fputs(" |\n", f);
  }
  fprintf(f, "\n%zu rows: images per second, the median over a config's timed rounds; `B / A`: B's "
             "images per second over A's; peak RSS: the largest of a config's rounds (one process "
             "runs all its batch sizes).\n", t.nrows);
  free(t.cols);
  free(t.rows);
  free(t.ips);
  free(t.rss);
  return ferror(f) ? mxcts_set_error(MXR_ESYS, "write error") : 0;
}
