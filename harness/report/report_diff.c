/* What changed between two results documents (report/report.h,
 * mxcts_report_diff): verdicts that regressed or were fixed, orderings newly
 * inconclusive, ordering ratios that moved beyond their intervals, and
 * assertions only one side judged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "judge/judge.h"
#include "report/report.h"

#define RATIO_CONFIDENCE 0.95

static const char *str(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

/* The verdict before expectations (a release's expectation file must not
 * hide that it changed), else the verdict. */
static enum mxcts_verdict raw_verdict(const json_t *a) {
  int v = mxcts_verdict_parse(str(a, "raw_verdict"));
  if (v < 0) v = mxcts_verdict_parse(str(a, "verdict"));
  return v < 0 ? MXCTS_V_ERROR : (enum mxcts_verdict)v;
}

static bool failing(enum mxcts_verdict v) {
  return mxcts_verdict_is_failure(v) || v == MXCTS_V_UNSUPPORTED;
}

/* Every assertion of a document by its name ("suite/id"), borrowed. */
static json_t *by_name(const json_t *doc) {
  json_t *index = json_object(), *s, *a;
  size_t i, k;
  json_array_foreach(json_object_get(doc, "suites"), i, s) {
    json_array_foreach(json_object_get(s, "assertions"), k, a) json_object_set(index, str(a, "name"), a);
  }
  return index;
}

static json_t *change(const json_t *a, const json_t *b, const char *name) {
  return json_pack("{s:s, s:s, s:s, s:s}", "name", name, "from", a ? mxcts_verdict_name(raw_verdict(a)) : "-",
                   "to", b ? mxcts_verdict_name(raw_verdict(b)) : "-", "detail", b ? str(b, "detail") : "");
}

/* Per paired round of an ordering's pair, slower / faster; their median and
 * its confidence interval.  false when too few rounds for an interval. */
static bool ratio_ci(const json_t *pair, double *median, double *lo, double *hi) {
  const json_t *s = json_object_get(pair, "slower_values"), *f = json_object_get(pair, "faster_values");
  size_t n = json_array_size(s) < json_array_size(f) ? json_array_size(s) : json_array_size(f), m = 0;
  double *r = mxcts_xcalloc(n + 1, sizeof *r);
  for (size_t i = 0; i < n; i++) {
    double x = json_number_value(json_array_get(s, i)), y = json_number_value(json_array_get(f, i));
    if (isfinite(x) && isfinite(y) && y > 0) r[m++] = x / y;
  }
  *median = mxcts_median(r, m);
  bool ok = mxcts_median_ci(r, m, RATIO_CONFIDENCE, lo, hi);
  free(r);
  return ok;
}

static const json_t *pair_named(const json_t *a, const char *slower, const char *faster) {
  size_t i;
  json_t *p;
  json_array_foreach(json_object_get(json_object_get(a, "diag"), "pairs"), i, p) {
    if (!strcmp(str(p, "slower"), slower) && !strcmp(str(p, "faster"), faster)) return p;
  }
  return NULL;
}

/* The pairs of an ordering judged on both sides whose slower/faster ratio
 * intervals do not overlap. */
static void moved_ratios(const json_t *a, const json_t *b, const char *name, json_t *out) {
  size_t i;
  json_t *pb;
  json_array_foreach(json_object_get(json_object_get(b, "diag"), "pairs"), i, pb) {
    const json_t *pa = pair_named(a, str(pb, "slower"), str(pb, "faster"));
    double ma, la, ha, mb, lb, hb;
    if (!pa || !ratio_ci(pa, &ma, &la, &ha) || !ratio_ci(pb, &mb, &lb, &hb) || (lb <= ha && la <= hb)) continue;
    json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "name", name, "slower",
                                         str(pb, "slower"), "faster", str(pb, "faster"), "from", ma, "from_low",
                                         la, "from_high", ha, "to", mb, "to_low", lb, "to_high", hb));
  }
}

json_t *mxcts_report_diff(const json_t *a, const json_t *b) {
  json_t *ia = by_name(a), *ib = by_name(b);
  json_t *regressions = json_array(), *fixes = json_array(), *inconclusive = json_array(),
         *moved = json_array(), *only_a = json_array(), *only_b = json_array();
  const char *name;
  json_t *vb, *va;
  json_object_foreach(ib, name, vb) {
    va = json_object_get(ia, name);
    if (!va) {
      json_array_append_new(only_b, change(NULL, vb, name));
      continue;
    }
    enum mxcts_verdict from = raw_verdict(va), to = raw_verdict(vb);
    if (from == MXCTS_V_PASS && failing(to)) json_array_append_new(regressions, change(va, vb, name));
    else if (failing(from) && to == MXCTS_V_PASS) json_array_append_new(fixes, change(va, vb, name));
    else if (to == MXCTS_V_INCONCLUSIVE && from != to) json_array_append_new(inconclusive, change(va, vb, name));
    if (!strcmp(str(vb, "type"), "ordering")) moved_ratios(va, vb, name, moved);
  }
  json_object_foreach(ia, name, va) {
    if (!json_object_get(ib, name)) json_array_append_new(only_a, change(va, NULL, name));
  }
  json_t *side_a = json_pack("{s:s, s:I}", "impl", str(json_object_get(a, "impl"), "name"), "seed",
                             json_integer_value(json_object_get(a, "seed")));
  json_t *side_b = json_pack("{s:s, s:I}", "impl", str(json_object_get(b, "impl"), "name"), "seed",
                             json_integer_value(json_object_get(b, "seed")));
  json_decref(ia);
  json_decref(ib);
  return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:f}", "a", side_a, "b", side_b, "regressions",
                   regressions, "fixes", fixes, "newly_inconclusive", inconclusive, "ratios_moved", moved,
                   "only_in_a", only_a, "only_in_b", only_b, "confidence", RATIO_CONFIDENCE);
}

bool mxcts_report_diff_regressed(const json_t *diff) {
  return json_array_size(json_object_get(diff, "regressions")) > 0;
}

/* --- rendering ------------------------------------------------------------------- */

struct section {
  const char *key, *title;
};

static const struct section sections[] = {
    {"regressions", "Regressions (pass before, failing now)"},
    {"fixes", "Fixes (failing before, pass now)"},
    {"newly_inconclusive", "Newly inconclusive"},
    {"only_in_a", "Judged only before"},
    {"only_in_b", "Judged only now"},
};

static char *side_name(const json_t *diff, const char *side) {
  const json_t *s = json_object_get(diff, side);
  return mxcts_xasprintf("%s (seed %lld)", str(s, "impl"), (long long)json_integer_value(json_object_get(s, "seed")));
}

static void md_changes(const json_t *list, FILE *f) {
  size_t i;
  json_t *c;
  fputs("| assertion | before | now | detail |\n|---|---|---|---|\n", f);
  json_array_foreach(list, i, c) {
    char *detail = mxcts_clean_text(str(c, "detail"));
    for (char *p = detail; *p; p++)
      if (*p == '|' || *p == '\n') *p = ' ';
    fprintf(f, "| %s | %s | %s | %.200s |\n", str(c, "name"), str(c, "from"), str(c, "to"), detail);
    free(detail);
  }
}

static void md_moved(const json_t *list, double conf, FILE *f) {
  size_t i;
  json_t *m;
  fprintf(f, "slower / faster, median over paired rounds [%.0f %% interval]\n\n", conf * 100);
  fputs("| ordering | pair | before | now |\n|---|---|---|---|\n", f);
  json_array_foreach(list, i, m) {
    fprintf(f, "| %s | %s vs %s | %.3f [%.3f, %.3f] | %.3f [%.3f, %.3f] |\n", str(m, "name"), str(m, "slower"),
            str(m, "faster"), json_number_value(json_object_get(m, "from")),
            json_number_value(json_object_get(m, "from_low")), json_number_value(json_object_get(m, "from_high")),
            json_number_value(json_object_get(m, "to")), json_number_value(json_object_get(m, "to_low")),
            json_number_value(json_object_get(m, "to_high")));
  }
}

int mxcts_report_diff_md(const json_t *diff, FILE *f) {
  char *a = side_name(diff, "a"), *b = side_name(diff, "b");
  fprintf(f, "# Changes from %s to %s\n\n", a, b);
  free(a);
  free(b);
  for (size_t i = 0; i < sizeof sections / sizeof *sections; i++) {
    const json_t *list = json_object_get(diff, sections[i].key);
    fprintf(f, "## %s: %zu\n\n", sections[i].title, json_array_size(list));
    if (json_array_size(list)) md_changes(list, f), fputc('\n', f);
  }
  const json_t *moved = json_object_get(diff, "ratios_moved");
  fprintf(f, "## Ordering ratios that moved beyond their intervals: %zu\n\n", json_array_size(moved));
  if (json_array_size(moved)) md_moved(moved, json_number_value(json_object_get(diff, "confidence")), f);
  return ferror(f) ? mxcts_set_error(MXR_ESYS, "cannot write the diff") : 0;
}

static void html_changes(const json_t *list, FILE *f) {
  size_t i;
  json_t *c;
  fputs("<table><tr><th>assertion</th><th>before</th><th>now</th><th>detail</th></tr>\n", f);
  json_array_foreach(list, i, c) {
    fputs("<tr><td>", f);
    mxcts_report_markup(f, str(c, "name"));
    fprintf(f, "</td><td class='%s'>%s</td><td class='%s'>%s</td><td>", str(c, "from"), str(c, "from"),
            str(c, "to"), str(c, "to"));
    mxcts_report_markup(f, str(c, "detail"));
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
}

int mxcts_report_diff_html(const json_t *diff, FILE *f) {
  char *a = side_name(diff, "a"), *b = side_name(diff, "b");
  fputs("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>mxcts diff</title><style>"
        "body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 8px;vertical-align:top}"
        ".pass{color:#1a7f37}.fail,.crash,.timeout,.error,.unsupported{color:#cf222e;font-weight:bold}"
        ".inconclusive{color:#9a6700}</style></head><body>\n<h1>Changes from ", f);
  mxcts_report_markup(f, a);
  fputs(" to ", f);
  mxcts_report_markup(f, b);
  fputs("</h1>\n", f);
  free(a);
  free(b);
  for (size_t i = 0; i < sizeof sections / sizeof *sections; i++) {
    const json_t *list = json_object_get(diff, sections[i].key);
    fprintf(f, "<h2>%s: %zu</h2>\n", sections[i].title, json_array_size(list));
    if (json_array_size(list)) html_changes(list, f);
  }
  size_t i;
  json_t *m;
  const json_t *moved = json_object_get(diff, "ratios_moved");
  fprintf(f, "<h2>Ordering ratios that moved beyond their intervals: %zu</h2>\n<table><tr><th>ordering</th>"
             "<th>pair</th><th>before</th><th>now</th></tr>\n", json_array_size(moved));
  json_array_foreach(moved, i, m) {
    fputs("<tr><td>", f);
    mxcts_report_markup(f, str(m, "name"));
    fputs("</td><td>", f);
    mxcts_report_markup(f, str(m, "slower"));
    fputs(" vs ", f);
    mxcts_report_markup(f, str(m, "faster"));
    fprintf(f, "</td><td>%.3f [%.3f, %.3f]</td><td>%.3f [%.3f, %.3f]</td></tr>\n",
            json_number_value(json_object_get(m, "from")), json_number_value(json_object_get(m, "from_low")),
            json_number_value(json_object_get(m, "from_high")), json_number_value(json_object_get(m, "to")),
            json_number_value(json_object_get(m, "to_low")), json_number_value(json_object_get(m, "to_high")));
  }
  fputs("</table>\n</body></html>\n", f);
  return ferror(f) ? mxcts_set_error(MXR_ESYS, "cannot write the diff") : 0;
}
