/* The comparison document as a text table and as an HTML page
 * (compare/compare.h). */
#include "compare/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonv.h"

static double num(const json_t *o, const char *key) { return mxcts_json_number_or_nan(o, key); }

static const char *str(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "?";
}

/* "0.750 ms (10)", or "-- (0 of 10 ran)" */
static char *median_text(const json_t *impl) {
  double m = num(impl, "median");
  long ok = (long)json_integer_value(json_object_get(impl, "rounds"));
  long failed = (long)json_integer_value(json_object_get(impl, "failed"));
  if (!isfinite(m)) return mxcts_xasprintf("-- (0 of %ld ran)", ok + failed);
  if (failed) return mxcts_xasprintf("%.4g ms (%ld failed)", m, failed);
  return mxcts_xasprintf("%.4g ms", m);
}

/* How a ratio's interval reads: which side of 1 it lies on. */
static const char *ratio_word(const json_t *r) {
  double lo = num(r, "ci_low"), hi = num(r, "ci_high");
  if (!isfinite(lo) || !isfinite(hi)) return "too few rounds";
  if (hi < 1.0) return "faster";
  if (lo > 1.0) return "slower";
  return "no difference shown";
}

/* "0.21 [0.19, 0.24] faster, 10/10 rounds" */
static char *ratio_text(const json_t *r) {
  double q = num(r, "ratio"), lo = num(r, "ci_low"), hi = num(r, "ci_high");
  long w = (long)json_integer_value(json_object_get(r, "faster_rounds"));
  long n = (long)json_integer_value(json_object_get(r, "paired_rounds"));
  if (!isfinite(q)) return mxcts_xstrdup("--");
  if (!isfinite(lo)) return mxcts_xasprintf("%.3g (%s), faster in %ld/%ld", q, ratio_word(r), w, n);
  return mxcts_xasprintf("%.3g [%.3g, %.3g] %s, faster in %ld/%ld", q, lo, hi, ratio_word(r), w, n);
}

/* What a target measures: "engine-dispatch/independent on libmxref",
 * "bulking-cachedop/f0-b0 over bulking-symbolic/f0-b0 on libmxref" or
 * "bulking-symbolic/f0-b0, mxnet over the baseline". */
static char *target_subject(const json_t *r) {
  const char *over = json_string_value(json_object_get(r, "over_suite"));
  if (!strcmp(str(r, "measure"), "ratio"))
    return mxcts_xasprintf("%s/%s, %s over the baseline", str(r, "suite"), str(r, "config"), str(r, "impl"));
  if (over)
    return mxcts_xasprintf("%s/%s over %s/%s on %s", str(r, "suite"), str(r, "config"), over,
                           str(r, "over_config"), str(r, "impl"));
  return mxcts_xasprintf("%s/%s on %s", str(r, "suite"), str(r, "config"), str(r, "impl"));
}

/* "0.354 ms, at most 0.15" or "8.53x [7.9, 9.1], at least 10" */
static char *target_figure(const json_t *r) {
  double v = num(r, "figure"), lo = num(r, "ci_low"), hi = num(r, "ci_high");
  bool x = !strcmp(str(r, "unit"), "x");
  const char *bound = !strcmp(str(r, "bound"), "at_least") ? "at least" : "at most";
  char *ci = isfinite(lo) && isfinite(hi) ? mxcts_xasprintf(" [%.3g, %.3g]", lo, hi) : mxcts_xstrdup("");
  char *t = isfinite(v) ? mxcts_xasprintf("%.3g%s%s, %s %g", v, x ? "x" : " ms", ci, bound, num(r, "value"))
                        : mxcts_xasprintf("--, %s %g", bound, num(r, "value"));
  free(ci);
  return t;
}

/* "3 met, 2 known misses, 0 missed, 0 unmeasured" */
static char *targets_tally(const json_t *targets) {
  static const char *const outcomes[] = {"met", "known miss", "missed", "unmeasured"};
  size_t count[4] = {0}, i;
  json_t *r;
  json_array_foreach(json_object_get(targets, "results"), i, r) {
    for (size_t k = 0; k < 4; k++) count[k] += !strcmp(str(r, "outcome"), outcomes[k]);
  }
  return mxcts_xasprintf("%zu met, %zu known miss%s, %zu missed, %zu unmeasured", count[0], count[1],
                         count[1] == 1 ? "" : "es", count[2], count[3]);
}

static void print_targets(const json_t *targets, FILE *f) {
  if (!targets) return;
  char *tally = targets_tally(targets);
  fprintf(f, "\ntargets (%s): %s\n", str(targets, "file"), tally);
  free(tally);
  size_t i;
  json_t *r;
  json_array_foreach(json_object_get(targets, "results"), i, r) {
    char *subject = target_subject(r), *figure = target_figure(r);
    const char *reason = json_string_value(json_object_get(r, "reason"));
    fprintf(f, "  %-11s %s: %s: %s%s%s\n", str(r, "outcome"), str(r, "id"), subject, figure,
            reason ? "\n              " : "", reason ? reason : "");
    free(subject);
    free(figure);
  }
}

void mxcts_compare_print(const json_t *doc, FILE *f) {
  json_t *impls = json_object_get(doc, "impls"), *rows = json_object_get(doc, "rows"), *row, *v;
  size_t i, k;
  const char *base = str(json_array_get(impls, 0), "name");
  fprintf(f, "%-44s", "suite/config");
  json_array_foreach(impls, i, v) fprintf(f, "  %-20s", str(v, "name"));
  json_array_foreach(impls, i, v) if (i) fprintf(f, "  %s/%s [%.0f%% CI]", str(v, "name"), base,
                                                  100 * num(doc, "confidence"));
  fputc('\n', f);
  json_array_foreach(rows, k, row) {
    char *id = mxcts_xasprintf("%s/%s", str(row, "suite"), str(row, "config"));
    fprintf(f, "%-44s", id);
    free(id);
    json_array_foreach(json_object_get(row, "impls"), i, v) {
      char *t = median_text(v);
      fprintf(f, "  %-20s", t);
      free(t);
    }
    json_array_foreach(json_object_get(row, "ratios"), i, v) {
      char *t = ratio_text(v);
      fprintf(f, "  %s", t);
      free(t);
    }
    fputc('\n', f);
  }
  print_targets(json_object_get(doc, "targets"), f);
}

static void html_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

static void html_cell(FILE *f, const char *tag, const char *text, const char *cls) {
  fprintf(f, "<%s%s%s%s>", tag, cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
  html_escaped(f, text);
  fprintf(f, "</%s>", tag);
}

static void html_row(FILE *f, const json_t *row) {
  json_t *v;
  size_t i;
  char *id = mxcts_xasprintf("%s/%s", str(row, "suite"), str(row, "config"));
  fputs("<tr>", f);
  html_cell(f, "td", id, NULL);
  html_cell(f, "td", str(row, "workload"), NULL);
  free(id);
  json_array_foreach(json_object_get(row, "impls"), i, v) {
    char *t = median_text(v);
    html_cell(f, "td", t, "num");
    free(t);
  }
  json_array_foreach(json_object_get(row, "ratios"), i, v) {
    char *t = ratio_text(v);
    const char *w = ratio_word(v);
    html_cell(f, "td", t, !strcmp(w, "faster") ? "faster" : !strcmp(w, "slower") ? "slower" : NULL);
    free(t);
  }
  fputs("</tr>\n", f);
}

/* One target's row: outcome, id and what, what it measures, figure, reason. */
static void html_target_row(FILE *f, const json_t *r) {
  const char *outcome = str(r, "outcome"), *what = json_string_value(json_object_get(r, "what"));
  const char *reason = json_string_value(json_object_get(r, "reason"));
  char *name = what ? mxcts_xasprintf("%s: %s", str(r, "id"), what) : mxcts_xstrdup(str(r, "id"));
  char *subject = target_subject(r), *figure = target_figure(r);
  bool met = !strcmp(outcome, "met"), known = !strcmp(outcome, "known miss");
  fputs("<tr>", f);
  html_cell(f, "td", outcome, met ? "faster" : known ? NULL : "slower");
  html_cell(f, "td", name, NULL);
  html_cell(f, "td", subject, NULL);
  html_cell(f, "td", figure, "num");
  html_cell(f, "td", reason ? reason : "", NULL);
  fputs("</tr>\n", f);
  free(name);
  free(subject);
  free(figure);
}

static void html_targets(const json_t *targets, FILE *f) {
  if (!targets) return;
  char *tally = targets_tally(targets);
  fputs("<h2>Targets</h2>\n<p>", f);
  html_escaped(f, str(targets, "file"));
  fputs(": ", f);
  html_escaped(f, tally);
  free(tally);
  fputs("</p>\n<table>\n<tr><th>outcome</th><th>target</th><th>measures</th><th>figure</th>"
        "<th>reason</th></tr>\n", f);
  size_t i;
  json_t *r;
  json_array_foreach(json_object_get(targets, "results"), i, r) html_target_row(f, r);
  fputs("</table>\n", f);
}

int mxcts_compare_html(const json_t *doc, FILE *f) {
  json_t *impls = json_object_get(doc, "impls"), *v;
  size_t i;
  const char *base = str(json_array_get(impls, 0), "name");
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>mxcts compare</title>\n"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 8px}td.num{text-align:right}"
        ".faster{background:#dfd}.slower{background:#fdd}</style></head><body>\n"
        "<h1>mxcts compare</h1>\n<p>Median of each library's per-round medians; ratios are "
        "time(library) / time(",
        f);
  html_escaped(f, base);
  fprintf(f, ") per round, their median with the sign test's %.0f %% interval. Seed %lld.</p>\n",
          100 * num(doc, "confidence"), (long long)json_integer_value(json_object_get(doc, "seed")));
  fputs("<table>\n<tr><th>suite/config</th><th>workload</th>", f);
  json_array_foreach(impls, i, v) html_cell(f, "th", str(v, "name"), NULL);
  json_array_foreach(impls, i, v) if (i) {
    char *h = mxcts_xasprintf("%s / %s", str(v, "name"), base);
    html_cell(f, "th", h, NULL);
    free(h);
  }
  fputs("</tr>\n", f);
  json_array_foreach(json_object_get(doc, "rows"), i, v) html_row(f, v);
  fputs("</table>\n", f);
  html_targets(json_object_get(doc, "targets"), f);
  fputs("</body></html>\n", f);
  return ferror(f) ? mxcts_set_error(MXR_ESYS, "cannot write the HTML page") : 0;
}
