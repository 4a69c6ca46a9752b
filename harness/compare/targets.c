/* Performance targets checked against a comparison document
 * (compare/compare.h; the file format is in docs/harness.md, "Performance
 * targets"). */
#include "compare/compare.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonv.h"

#define TARGETS_FORMAT 1

static const char *str(const json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}

/* "impl" names one of the libraries compared. */
static int check_impl(const struct mxcts_jloc *at, json_t *t, const struct mxcts_strv *names) {
  for (size_t i = 0; i < names->n; i++)
    if (!strcmp(names->v[i], str(t, "impl"))) return 0;
  struct mxcts_buf list = {0};
  for (size_t i = 0; i < names->n; i++) mxcts_buf_printf(&list, "%s%s", i ? ", " : "", names->v[i]);
  int rc = mxcts_jfail_key(at, "impl", "'%s' is not one of the libraries compared (%s)",
                           str(t, "impl"), mxcts_buf_str(&list));
  mxcts_buf_free(&list);
  return rc;
}

/* A string member: required ones name something (no empty string). */
static int check_string(const struct mxcts_jloc *at, json_t *t, const char *key, bool required) {
  char *s = NULL;
  int rc = mxcts_jget_string(at, t, key, required, &s);
  if (!rc && required && !*s) rc = mxcts_jfail_key(at, key, "must not be empty");
  free(s);
  return rc;
}

/* "over": {"suite", "config"}, the row whose median divides this one's. */
static int check_over(const struct mxcts_jloc *at, json_t *t) {
  static const char *const known[] = {"suite", "config", NULL};
  json_t *over = NULL;
  int rc = mxcts_jget_typed(at, t, "over", false, JSON_OBJECT, &over);
  if (rc || !over) return rc;
  char *path = mxcts_jpath_key(at->path, "over");
  struct mxcts_jloc in = {at->file, path};
  rc = mxcts_jcheck_object(&in, over, known);
  if (!rc) rc = check_string(&in, over, "suite", true);
  if (!rc) rc = check_string(&in, over, "config", true);
  free(path);
  return rc;
}

/* "measure" is "median" (the default) or "ratio"; a ratio is to the
 * baseline, so it names a library after the first and divides by nothing
 * else. */
static int check_measure(const struct mxcts_jloc *at, json_t *t, const struct mxcts_strv *names) {
  const char *m = str(t, "measure");
  if (json_object_get(t, "measure") && !m)
    return mxcts_jfail_key(at, "measure", "expected a string (\"median\" or \"ratio\")");
  if (!m || !strcmp(m, "median")) return 0;
  if (strcmp(m, "ratio"))
    return mxcts_jfail_key(at, "measure", "\"%s\": expected \"median\" or \"ratio\"", m);
  if (!strcmp(str(t, "impl"), names->v[0]))
    return mxcts_jfail_key(at, "impl", "'%s' is the baseline: a ratio needs another library",
                           names->v[0]);
  if (json_object_get(t, "over"))
    return mxcts_jfail_key(at, "over", "a ratio is to the baseline: \"over\" goes with \"median\"");
  return 0;
}

/* Exactly one of "at_most" and "at_least", a positive number. */
static int check_bound(const struct mxcts_jloc *at, json_t *t) {
  bool most = json_object_get(t, "at_most") != NULL, least = json_object_get(t, "at_least") != NULL;
  if (most == least) return mxcts_jfail(at, "give exactly one of \"at_most\" and \"at_least\"");
  double v;
  return mxcts_jget_double(at, t, most ? "at_most" : "at_least", true, DBL_MIN, DBL_MAX, &v);
}

static int check_target(const char *file, json_t *t, size_t i, const struct mxcts_strv *names) {
  static const char *const known[] = {"id", "what", "suite", "config", "impl", "measure", "over",
                                      "at_most", "at_least", "known_miss", NULL};
  static const char *const strings[] = {"id", "suite", "config", "impl", "what", "known_miss"};
  char *path = mxcts_jpath_index("targets", i);
  struct mxcts_jloc at = {file, path};
  int rc = mxcts_jcheck_object(&at, t, known);
  for (size_t k = 0; !rc && k < 6; k++) rc = check_string(&at, t, strings[k], k < 4);
  if (!rc) rc = check_impl(&at, t, names);
  if (!rc) rc = check_over(&at, t);
  if (!rc) rc = check_measure(&at, t, names);
  if (!rc) rc = check_bound(&at, t);
  free(path);
  return rc;
}

static int check_ids_distinct(const char *file, json_t *list) {
  for (size_t i = 0; i < json_array_size(list); i++)
    for (size_t k = 0; k < i; k++)
      if (!strcmp(str(json_array_get(list, i), "id"), str(json_array_get(list, k), "id"))) {
        char *path = mxcts_jpath_index("targets", i);
        struct mxcts_jloc at = {file, path};
        int rc = mxcts_jfail_key(&at, "id", "'%s' is also the id of targets[%zu]",
                                 str(json_array_get(list, i), "id"), k);
        free(path);
        return rc;
      }
  return 0;
}

int mxcts_targets_load(const char *path, const struct mxcts_strv *names, json_t **out) {
  static const char *const known[] = {"mxcts_targets", "targets", NULL};
  json_t *doc, *list = NULL;
  int rc = mxcts_json_load(path, &doc);
  if (rc) return rc;
  struct mxcts_jloc top = {path, ""};
  long format;
  rc = mxcts_jcheck_object(&top, doc, known);
  if (!rc)
    rc = mxcts_jget_long(&top, doc, "mxcts_targets", true, TARGETS_FORMAT, TARGETS_FORMAT, &format);
  if (!rc) rc = mxcts_jget_typed(&top, doc, "targets", true, JSON_ARRAY, &list);
  if (!rc && json_array_size(list) == 0) rc = mxcts_jfail_key(&top, "targets", "lists no target");
  for (size_t i = 0; !rc && i < json_array_size(list); i++)
    rc = check_target(path, json_array_get(list, i), i, names);
  if (!rc) rc = check_ids_distinct(path, list);
  if (rc) json_decref(doc);
  else *out = doc;
  return rc;
}

/* --- checking ------------------------------------------------------------------------ */

static json_t *find_row(const json_t *doc, const char *suite, const char *config) {
  size_t i;
  json_t *row;
  json_array_foreach(json_object_get(doc, "rows"), i, row) {
    if (!strcmp(str(row, "suite"), suite) && !strcmp(str(row, "config"), config)) return row;
  }
  return NULL;
}

/* The member of row[list] whose `key` is `name`, or NULL. */
static json_t *find_entry(const json_t *row, const char *list, const char *key, const char *name) {
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(row, list), i, e) {
    if (!strcmp(str(e, key), name)) return e;
  }
  return NULL;
}

/* The row of (suite, config), or NULL with *why set. */
static json_t *row_or_why(const json_t *doc, const char *suite, const char *config, char **why) {
  json_t *row = find_row(doc, suite, config);
  if (!row) *why = mxcts_xasprintf("%s/%s is not a timed config of this comparison", suite, config);
  return row;
}

/* The library's median in (suite, config); NaN, with *why set, when the
 * row is not in the comparison or none of its rounds finished. */
static double median_of(const json_t *doc, const char *suite, const char *config, const char *impl,
                        char **why) {
  json_t *row = row_or_why(doc, suite, config, why);
  if (!row) return NAN;
  double m = mxcts_json_number_or_nan(find_entry(row, "impls", "name", impl), "median");
  if (!isfinite(m)) *why = mxcts_xasprintf("no round of %s/%s finished on %s", suite, config, impl);
  return m;
}

/* The library's median ratio to the baseline, its interval into r. */
static double ratio_of(const json_t *doc, const json_t *t, json_t *r, char **why) {
  const char *suite = str(t, "suite"), *config = str(t, "config"), *impl = str(t, "impl");
  json_t *row = row_or_why(doc, suite, config, why);
  json_t *q = row ? find_entry(row, "ratios", "impl", impl) : NULL;
  double v = mxcts_json_number_or_nan(q, "ratio");
  if (row && !isfinite(v))
    *why = mxcts_xasprintf("no paired round of %s/%s for %s", suite, config, impl);
  json_object_set_new(r, "ci_low", mxcts_json_real_or_null(mxcts_json_number_or_nan(q, "ci_low")));
  json_object_set_new(r, "ci_high", mxcts_json_real_or_null(mxcts_json_number_or_nan(q, "ci_high")));
  return v;
}

/* The figure a target names (its unit into r); NaN, with *why set, when it
 * cannot be measured. */
static double figure_of(const json_t *doc, const json_t *t, json_t *r, char **why) {
  const char *measure = str(t, "measure");
  json_t *over = json_object_get(t, "over");
  bool quotient = over || (measure && !strcmp(measure, "ratio"));
  json_object_set_new(r, "unit", json_string(quotient ? "x" : "ms"));
  if (measure && !strcmp(measure, "ratio")) return ratio_of(doc, t, r, why);
  double m = median_of(doc, str(t, "suite"), str(t, "config"), str(t, "impl"), why);
  if (!over || !isfinite(m)) return m;
  double d = median_of(doc, str(over, "suite"), str(over, "config"), str(t, "impl"), why);
  return isfinite(d) && d > 0 ? m / d : NAN;
}

/* "at_least" or "at_most": the bound a (valid) target gives. */
static const char *bound_key(const json_t *t) {
  return json_object_get(t, "at_least") ? "at_least" : "at_most";
}

/* "met", "known miss" (missed, with the reason the file gives), "missed",
 * or "unmeasured". */
static const char *outcome_of(const json_t *t, double figure) {
  bool at_least = !strcmp(bound_key(t), "at_least");
  double bound = mxcts_json_number_or_nan(t, bound_key(t));
  if (!isfinite(figure)) return "unmeasured";
  if (at_least ? figure >= bound : figure <= bound) return "met";
  return str(t, "known_miss") ? "known miss" : "missed";
}

/* The target as the results list it: what it names, its bound. */
static json_t *result_head(const json_t *t) {
  json_t *over = json_object_get(t, "over");
  const char *measure = str(t, "measure") ? str(t, "measure") : "median";
  return json_pack("{s:s, s:s?, s:s, s:s, s:s, s:s, s:s?, s:s?, s:s, s:O}", "id", str(t, "id"), "what",
                   str(t, "what"), "suite", str(t, "suite"), "config", str(t, "config"), "impl",
                   str(t, "impl"), "measure", measure, "over_suite", str(over, "suite"), "over_config",
                   str(over, "config"), "bound", bound_key(t), "value",
                   json_object_get(t, bound_key(t)));
}

static json_t *check_one(const json_t *doc, const json_t *t, size_t *missed) {
  json_t *r = result_head(t);
  char *why = NULL;
  double v = figure_of(doc, t, r, &why);
  const char *outcome = outcome_of(t, v);
  *missed += !strcmp(outcome, "missed") || !strcmp(outcome, "unmeasured");
  json_object_set_new(r, "figure", mxcts_json_real_or_null(v));
  json_object_set_new(r, "outcome", json_string(outcome));
  const char *reason = why ? why : !strcmp(outcome, "known miss") ? str(t, "known_miss") : NULL;
  json_object_set_new(r, "reason", reason ? mxcts_json_text(reason) : json_null());
  free(why);
  return r;
}

size_t mxcts_targets_check(const json_t *targets, const char *path, json_t *doc) {
  json_t *results = json_array(), *t;
  size_t i, missed = 0;
  json_array_foreach(json_object_get(targets, "targets"), i, t) {
    json_array_append_new(results, check_one(doc, t, &missed));
  }
  json_object_set_new(doc, "targets", json_pack("{s:o, s:o, s:I}", "file", mxcts_json_text(path),
                                                "results", results, "missed", (json_int_t)missed));
  return missed;
}
