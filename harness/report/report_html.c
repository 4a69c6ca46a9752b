/*
 * The HTML report (report/report.h): one self-contained page, inline CSS and SVG,
 * no scripts or external resources.  Per suite: the assertions with their
 * verdicts, a strip + box plot of the per-round timings of every config
 * (rounds of later batches in another colour), and the segment structure of every
 * structure run as bars (one bar per pass, one block per segment).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "judge/judge.h"
#include "report/report.h"

static const char *str(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

static void h(FILE *f, const char *s) { mxcts_report_markup(f, s); }

static const char *const css =
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}"
    "h1 .pass,td.pass,span.pass{color:#1a7f37}h1 .fail,td.fail,td.crash,td.timeout,td.error,"
    "td.xpass{color:#cf222e;font-weight:bold}td.skip,td.xfail{color:#8250df}"
    "td.inconclusive,h1 .inconclusive{color:#9a6700;font-weight:bold}"
    "td.unsupported{color:#bc4c00;font-weight:bold}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
    "vertical-align:top;text-align:left;font-size:13px}th{background:#f3f3f3}"
    "td.detail{max-width:700px;word-break:break-word}code{font-size:12px;word-break:break-all}"
    "section{border-top:2px solid #ddd;margin-top:2em}svg{display:block;margin:.5em 0}"
    "svg text{font-size:11px;font-family:monospace}.meta{color:#555}";

/* --- timing plot --------------------------------------------------------------- */

struct series {
  double *v;
  size_t n;
  double *later;    /* rounds of the batches after the first */
  size_t nlater;
};

/* The finite numbers among arr[from, to). */
static size_t numbers(const json_t *arr, size_t from, size_t to, double **out) {
  *out = mxcts_xcalloc(json_array_size(arr) + 1, sizeof **out);
  size_t n = 0, i;
  json_t *x;
  json_array_foreach(arr, i, x) {
    if (i >= from && i < to && json_is_number(x) && isfinite(json_number_value(x)))
      (*out)[n++] = json_number_value(x);
  }
  return n;
}

static double nice_step(double range) {
  double raw = range / 5, mag = pow(10, floor(log10(raw))), r = raw / mag;
  return mag * (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10);
}

#define PLOT_LEFT 190.0
#define PLOT_WIDTH 640.0
#define ROW 28.0

static double xpos(double v, double lo, double hi) { return PLOT_LEFT + (v - lo) / (hi - lo) * PLOT_WIDTH; }

static void plot_row(FILE *f, const struct series *s, double y, double lo, double hi) {
  if (s->n) {
    double q1 = mxcts_quantile(s->v, s->n, .25), q3 = mxcts_quantile(s->v, s->n, .75);
    double med = mxcts_median(s->v, s->n);
    double mn = mxcts_quantile(s->v, s->n, 0), mx = mxcts_quantile(s->v, s->n, 1);
    fprintf(f, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#999'/>", xpos(mn, lo, hi),
            xpos(mx, lo, hi), y, y);
    fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='16' fill='#dbe9f6' stroke='#4a78a8'/>",
            xpos(q1, lo, hi), y - 8, xpos(q3, lo, hi) - xpos(q1, lo, hi));
    fprintf(f, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#1f4e79' stroke-width='2'/>",
            xpos(med, lo, hi), xpos(med, lo, hi), y - 8, y + 8);
  }
  for (size_t i = 0; i < s->n; i++)
    fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2.2' fill='#1f77b4' fill-opacity='.7'/>",
            xpos(s->v[i], lo, hi), y + ((double)(i % 5) - 2) * 2.5);
  for (size_t i = 0; i < s->nlater; i++)
    fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2.2' fill='#ff7f0e' fill-opacity='.8'/>",
            xpos(s->later[i], lo, hi), y + ((double)(i % 5) - 2) * 2.5);
}

static void plot_axis(FILE *f, double lo, double hi, double y, const char *unit) {
  double step = nice_step(hi - lo);
  fprintf(f, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#333'/>", PLOT_LEFT,
          PLOT_LEFT + PLOT_WIDTH, y, y);
  for (double t = ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
    double x = xpos(t, lo, hi);
    fprintf(f, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#333'/>", x, x, y, y + 4);
    fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle'>%g</text>", x, y + 16, t);
  }
  fprintf(f, "<text x='%.1f' y='%.1f'>", PLOT_LEFT + PLOT_WIDTH + 6, y + 4);
  h(f, unit);
  fprintf(f, "</text>");
}

static void timing_plot(FILE *f, const json_t *suite) {
  const json_t *configs = json_object_get(suite, "configs");
  size_t nc = json_array_size(configs), rows = 0;
  struct series *s = mxcts_xcalloc(nc + 1, sizeof *s);
  double lo = INFINITY, hi = -INFINITY;
  const char *unit = "ms";
  for (size_t c = 0; c < nc; c++) {
    const json_t *cj = json_array_get(configs, c);
    const json_t *t = json_object_get(cj, "timings");
    size_t first = (size_t)json_integer_value(json_object_get(suite, "rounds"));
    s[c].n = numbers(t, 0, first, &s[c].v);
    s[c].nlater = numbers(t, first, SIZE_MAX, &s[c].later);
    for (size_t i = 0; i < s[c].n; i++) lo = fmin(lo, s[c].v[i]), hi = fmax(hi, s[c].v[i]);
    for (size_t i = 0; i < s[c].nlater; i++) lo = fmin(lo, s[c].later[i]), hi = fmax(hi, s[c].later[i]);
    if (s[c].n) rows++, unit = str(cj, "unit");
  }
  if (rows) {
    double pad = (hi - lo) * 0.05 + (hi == lo ? fabs(hi) * 0.1 + 1e-9 : 0);
    lo = fmax(0, lo - pad), hi += pad;
    double height = (double)rows * ROW + 40;
    fprintf(f, "<h3>Timings per round</h3><svg width='%.0f' height='%.0f' role='img' "
            "aria-label='timing distributions'>", PLOT_LEFT + PLOT_WIDTH + 50, height);
    double y = 18;
    for (size_t c = 0; c < nc; c++) {
      if (!s[c].n) continue;
      fprintf(f, "<text x='4' y='%.1f'>", y + 4);
      h(f, str(json_array_get(configs, c), "id"));
      fprintf(f, "</text>");
      plot_row(f, &s[c], y, lo, hi);
      y += ROW;
    }
    plot_axis(f, lo, hi, y - 6, unit);
    fprintf(f, "</svg><p class='meta'>Blue: one point per round (the median of its timed "
            "iterations), box: quartiles, bar: median; orange: rounds of later batches.</p>");
  }
  for (size_t c = 0; c < nc; c++) free(s[c].v), free(s[c].later);
  free(s);
}

/* --- structure bars ------------------------------------------------------------------ */

static void rle(FILE *f, const json_t *sizes) {
  size_t n = json_array_size(sizes);
  const char *sep = "";
  for (size_t i = 0; i < n;) {
    json_int_t v = json_integer_value(json_array_get(sizes, i));
    size_t j = i;
    while (j < n && json_integer_value(json_array_get(sizes, j)) == v) j++;
    if (j - i > 1) fprintf(f, "%s%zu&#215;", sep, j - i);
    else fputs(sep, f);
    if (v < 0) fputs("?", f); /* the trace cannot tell */
    else fprintf(f, "%lld", (long long)v);
    sep = " + ";
    i = j;
  }
}

/* The ops one engine op holds (unknown, -1, drawn as 1). */
static double held(const json_t *sizes, size_t i) {
  json_int_t v = json_integer_value(json_array_get(sizes, i));
  return v < 1 ? 1.0 : (double)v;
}

static void pass_bar(FILE *f, const json_t *pass, double y, double scale) {
  const json_t *sizes = json_object_get(pass, "segment_sizes");
  json_int_t ops = json_integer_value(json_object_get(pass, "engine_ops"));
  size_t n = json_array_size(sizes);
  double x = PLOT_LEFT, in_segments = 0;
  if (n > 400) {
    for (size_t i = 0; i < n; i++) in_segments += held(sizes, i);
    fprintf(f, "<rect x='%.1f' y='%.1f' width='%.2f' height='14' fill='url(#hatch)'/>", x, y - 7,
            in_segments * scale);
    x += in_segments * scale;
  } else {
    for (size_t i = 0; i < n; i++) {
      double w = held(sizes, i) * scale;
      bool unknown = json_integer_value(json_array_get(sizes, i)) < 0;
      fprintf(f, "<rect x='%.2f' y='%.1f' width='%.2f' height='14' fill='%s'/>", x, y - 7, w,
              unknown ? "#999" : i % 2 ? "#6baed6" : "#2171b5");
      x += w;
      in_segments += held(sizes, i);
    }
  }
  double rest = (double)ops - (double)n; /* engine ops that are not segments */
  if (rest > 0)
    fprintf(f, "<rect x='%.2f' y='%.1f' width='%.2f' height='14' fill='#bbb'/>", x, y - 7, rest * scale);
  fprintf(f, "<text x='%.1f' y='%.1f'>%lld ops", PLOT_LEFT + PLOT_WIDTH + 8, y + 4, (long long)ops);
  if (n) {
    fprintf(f, ": ");
    rle(f, sizes);
  }
  fprintf(f, "</text>");
}

static void structure_plot(FILE *f, const json_t *suite) {
  const json_t *configs = json_object_get(suite, "configs");
  size_t rows = 0, c, p;
  double max_ops = 1;
  json_t *cj, *pass;
  json_array_foreach(configs, c, cj) {
    json_array_foreach(json_object_get(cj, "structure"), p, pass) {
      rows++;
      const json_t *sizes = json_object_get(pass, "segment_sizes");
      double in_seg = 0;
      for (size_t i = 0; i < json_array_size(sizes); i++) in_seg += held(sizes, i);
      double ops = (double)json_integer_value(json_object_get(pass, "engine_ops"));
      double width = in_seg + fmax(0, ops - (double)json_array_size(sizes));
      max_ops = fmax(max_ops, width);
    }
  }
  if (!rows) return;
  fprintf(f, "<h3>Segment structure (structure runs)</h3><svg width='%.0f' height='%.0f' "
          "role='img' aria-label='segment structure'><defs><pattern id='hatch' width='4' "
          "height='4' patternUnits='userSpaceOnUse'><rect width='2' height='4' fill='#2171b5'/>"
          "<rect x='2' width='2' height='4' fill='#6baed6'/></pattern></defs>",
          PLOT_LEFT + PLOT_WIDTH + 260, (double)rows * 22 + 10);
  double y = 14, scale = PLOT_WIDTH / max_ops;
  json_array_foreach(configs, c, cj) {
    json_array_foreach(json_object_get(cj, "structure"), p, pass) {
      fprintf(f, "<text x='4' y='%.1f'>", y + 4);
      h(f, str(cj, "id"));
      fprintf(f, " ");
      h(f, str(pass, "name"));
      fprintf(f, "</text>");
      pass_bar(f, pass, y, scale);
      y += 22;
    }
  }
  fprintf(f, "</svg><p class='meta'>Each block is one engine op, as wide as the ops it holds "
          "(a bulked segment holds many, an op pushed alone one); grey: size unknown to the "
          "trace, or ops outside the listed sizes.</p>");
}

/* --- tables -------------------------------------------------------------------------------- */

static void assertion_row(FILE *f, const json_t *a) {
  const char *v = str(a, "verdict");
  fprintf(f, "<tr><td>");
  h(f, str(a, "id"));
  fprintf(f, "</td><td>");
  h(f, str(a, "type"));
  fprintf(f, "</td><td class='%s'>", v);
  h(f, v);
  if (!strcmp(v, "unsupported") && !mxcts_assertion_fails(a)) fputs(" (expected)", f);
  fprintf(f, "</td><td class='detail'>");
  const char *sep = "";
  if (*str(a, "description")) {
    h(f, str(a, "description"));
    sep = "<br>";
  }
  if (*str(a, "detail")) {
    fprintf(f, "%s", sep);
    h(f, str(a, "detail"));
    sep = "<br>";
  }
  const json_t *x = json_object_get(a, "expectation");
  if (x) {
    fprintf(f, "%s<em>expected %s: ", sep, str(x, "kind"));
    sep = "<br>";
    h(f, str(x, "reason"));
    fprintf(f, "</em>");
  }
  size_t i;
  json_t *pair;
  json_array_foreach(json_object_get(json_object_get(a, "diag"), "pairs"), i, pair) {
    fprintf(f, "%s", sep);
    sep = "<br>";
    h(f, str(pair, "slower"));
    fprintf(f, " / ");
    h(f, str(pair, "faster"));
    fprintf(f, ": median ratio %.3f, %lld wins of %lld counted rounds (%lld left out as contended), "
            "%s; pass LLR %.2f of %.2f, fail LLR %.2f of %.2f",
            json_number_value(json_object_get(pair, "ratio_median")),
            (long long)json_integer_value(json_object_get(pair, "wins")),
            (long long)json_integer_value(json_object_get(pair, "rounds")),
            (long long)json_integer_value(json_object_get(pair, "rounds_left_out")),
            str(pair, "decision"),
            json_number_value(json_object_get(pair, "llr")),
            json_number_value(json_object_get(pair, "upper")),
            json_number_value(json_object_get(pair, "fail_llr")),
            json_number_value(json_object_get(pair, "fail_upper")));
  }
  fprintf(f, "</td></tr>\n");
}

static void config_table(FILE *f, const json_t *suite) {
  fprintf(f, "<details><summary>Configurations and commands</summary><table><tr><th>config</th>"
          "<th>environment</th><th>processes</th><th>reproduce one process</th></tr>");
  size_t c;
  json_t *cj;
  json_array_foreach(json_object_get(suite, "configs"), c, cj) {
    fprintf(f, "<tr><td>");
    h(f, str(cj, "id"));
    fprintf(f, "</td><td><code>");
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(cj, "env"), key, v) {
      h(f, key);
      fprintf(f, "=");
      h(f, json_string_value(v));
      fprintf(f, " ");
    }
    const json_t *pr = json_object_get(cj, "processes");
    fprintf(f, "</code></td><td>%lld ok of %lld</td><td><code>",
            (long long)json_integer_value(json_object_get(pr, "ok")),
            (long long)json_integer_value(json_object_get(pr, "total")));
    h(f, str(cj, "command"));
    fprintf(f, "</code></td></tr>");
  }
  fprintf(f, "</table></details>\n");
}

static void suite_section(FILE *f, const json_t *s) {
  fprintf(f, "<section id='suite-");
  h(f, str(s, "name"));
  fprintf(f, "'><h2>");
  h(f, str(s, "name"));
  fprintf(f, "</h2><p>");
  h(f, str(s, "description"));
  fprintf(f, "</p><p class='meta'>workload <code>");
  h(f, str(s, "workload"));
  const json_t *sprt = json_object_get(s, "sprt");
  fprintf(f, "</code>, %s, %lld rounds run (first batch %lld, budget %lld), SPRT p0 %g p1 %g "
          "pf %g alpha %g beta %g, margin %g%%", json_is_true(json_object_get(s, "timed")) ? "timed" : "untimed",
          (long long)json_integer_value(json_object_get(s, "rounds_run")),
          (long long)json_integer_value(json_object_get(s, "rounds")),
          (long long)json_integer_value(json_object_get(s, "max_rounds")),
          json_number_value(json_object_get(sprt, "p0")), json_number_value(json_object_get(sprt, "p1")),
          json_number_value(json_object_get(sprt, "pf")),
          json_number_value(json_object_get(sprt, "alpha")),
          json_number_value(json_object_get(sprt, "beta")),
          json_number_value(json_object_get(s, "margin")) * 100);
  if (json_is_string(json_object_get(s, "skipped"))) {
    fprintf(f, "; skipped: ");
    h(f, str(s, "skipped"));
  }
  fprintf(f, "</p><table><tr><th>assertion</th><th>type</th><th>verdict</th><th>detail</th></tr>\n");
  size_t i;
  json_t *a;
  json_array_foreach(json_object_get(s, "assertions"), i, a) assertion_row(f, a);
  fprintf(f, "</table>\n");
  timing_plot(f, s);
  structure_plot(f, s);
  config_table(f, s);
  fprintf(f, "</section>\n");
}

int mxcts_report_html(const json_t *results, FILE *f) {
  const json_t *impl = json_object_get(results, "impl");
  const char *status = str(results, "status");
  fprintf(f, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>mxcts: ");
  h(f, str(impl, "name"));
  fprintf(f, "</title><style>%s</style></head><body>\n<h1>mxcts: <span class='%s'>%s</span></h1>",
          css, status, !strcmp(status, "pass") ? "PASS" : !strcmp(status, "inconclusive") ? "INCONCLUSIVE" : "FAIL");
  fprintf(f, "<p class='meta'>implementation <code>");
  h(f, str(impl, "path"));
  fprintf(f, "</code> (");
  h(f, str(impl, "name"));
  fprintf(f, "), probe <code>");
  h(f, str(results, "probe"));
  fprintf(f, "</code>, seed %lld</p><p>",
          (long long)json_integer_value(json_object_get(results, "seed")));
  const json_t *sum = json_object_get(results, "summary");
  for (int v = 0; v < MXCTS_NUM_VERDICTS; v++) {
    const char *name = mxcts_verdict_name((enum mxcts_verdict)v);
    json_int_t n = json_integer_value(json_object_get(sum, name));
    if (n) fprintf(f, "%lld %s &nbsp; ", (long long)n, name);
  }
  fprintf(f, "</p><ul>");
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(results, "suites"), i, s) {
    fprintf(f, "<li><a href='#suite-");
    h(f, str(s, "name"));
    fprintf(f, "'>");
    h(f, str(s, "name"));
    fprintf(f, "</a></li>");
  }
  fprintf(f, "</ul>\n");
  json_array_foreach(json_object_get(results, "suites"), i, s) suite_section(f, s);
  fprintf(f, "</body></html>\n");
  return ferror(f) ? mxcts_set_error(MXR_ESYS, "write error") : 0;
}
