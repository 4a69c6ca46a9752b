/* Report files, the summary, and checking a results document (report/report.h). */
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "common/jsonv.h"
#include "judge/judge.h"

typedef int (*renderer)(const json_t *, FILE *);

static int render_json(const json_t *doc, FILE *f) {
  return json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) == 0 &&
                 fputc('\n', f) != EOF
             ? 0
             : mxcts_set_error(MXR_ESYS, "cannot write JSON");
}

static int write_one(const json_t *doc, const char *path, renderer r) {
  if (!path) return 0;
  if (!strcmp(path, "-")) {
    int rc = r(doc, stdout);
    fflush(stdout);
    return rc;
  }
  char *tmp = mxcts_xasprintf("%s.tmp.XXXXXX", path); /* unique: two writers never share one */
  int fd = mkstemp(tmp);
  if (fd >= 0) fchmod(fd, 0644);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f && fd >= 0) close(fd);
  int rc = f ? r(doc, f) : mxcts_set_error(MXR_ESYS, "%s: cannot create: %s", tmp, strerror(errno));
  if (f && fclose(f) != 0 && !rc) rc = mxcts_set_error(MXR_ESYS, "%s: write error", tmp);
  if (!rc && rename(tmp, path) != 0)
    rc = mxcts_set_error(MXR_ESYS, "%s: cannot write: %s", path, strerror(errno));
  if (rc) {
    remove(tmp);
    mxcts_prefix_error(rc, "%s", path);
  }
  free(tmp);
  return rc;
}

/* The tables of several documents, rendered from {"docs": [...],
 * "omit_skipped": bool, "table": TABLE_*}, so that write_one writes them as
 * it writes the others. */
enum { TABLE_MATRIX_MD, TABLE_MATRIX_HTML, TABLE_THROUGHPUT };

static int render_table(const json_t *m, FILE *f) {
  const json_t *arr = json_object_get(m, "docs");
  size_t n = json_array_size(arr);
  json_t **docs = mxcts_xcalloc(n + 1, sizeof *docs);
  for (size_t i = 0; i < n; i++) docs[i] = json_array_get(arr, i);
  int rc;
  switch (json_integer_value(json_object_get(m, "table"))) {
    case TABLE_MATRIX_MD:
      rc = mxcts_report_matrix_md(docs, n, json_is_true(json_object_get(m, "omit_skipped")), f);
      break;
    case TABLE_MATRIX_HTML:
      rc = mxcts_report_matrix_html(docs, n, f);
      break;
    default:
      rc = mxcts_report_throughput_md(docs, n, f);
  }
  free(docs);
  return rc;
}

static int write_table(json_t *const *docs, size_t n, bool omit_skipped, int table, const char *path) {
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) json_array_append(arr, docs[i]);
  json_t *m = json_pack("{s:o, s:b, s:i}", "docs", arr, "omit_skipped", omit_skipped, "table", table);
  int rc = write_one(m, path, render_table);
  json_decref(m);
  return rc;
}

int mxcts_report_matrix_write(json_t *const *docs, size_t n, bool omit_skipped, const char *markdown,
                              const char *html) {
  int rc = write_table(docs, n, omit_skipped, TABLE_MATRIX_MD, markdown);
  return rc ? rc : write_table(docs, n, omit_skipped, TABLE_MATRIX_HTML, html);
}

int mxcts_report_throughput_write(json_t *const *docs, size_t n, const char *markdown) {
  return write_table(docs, n, false, TABLE_THROUGHPUT, markdown);
}

int mxcts_report_diff_write(const json_t *diff, const char *markdown, const char *html) {
  int rc = write_one(diff, markdown, mxcts_report_diff_md);
  return rc ? rc : write_one(diff, html, mxcts_report_diff_html);
}

int mxcts_report_write(const json_t *results, const struct mxcts_report_files *files) {
  int rc = write_one(results, files->json, render_json);
  if (!rc) rc = write_one(results, files->tap, mxcts_report_tap);
  if (!rc) rc = write_one(results, files->junit, mxcts_report_junit);
  if (!rc) rc = write_one(results, files->html, mxcts_report_html);
  return rc;
}

void mxcts_report_markup(FILE *f, const char *s) {
  char *clean = mxcts_clean_text(s);
  for (const char *p = clean; *p; p++) {
    switch (*p) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default: fputc(*p, f);
    }
  }
  free(clean);
}

static json_int_t count(const json_t *summary, const char *key) {
  return json_integer_value(json_object_get(summary, key));
}

void mxcts_report_summary(const json_t *results, FILE *f) {
  const json_t *summary = json_object_get(results, "summary");
  fprintf(f, "mxcts: %lld assertions:", (long long)count(summary, "total"));
  const char *sep = " ";
  for (int v = 0; v < MXCTS_NUM_VERDICTS; v++) {
    const char *name = mxcts_verdict_name((enum mxcts_verdict)v);
    if (!count(summary, name)) continue;
    fprintf(f, "%s%lld %s", sep, (long long)count(summary, name), name);
    sep = ", ";
  }
  static const char *const outcome[] = {"PASS", "FAIL", "ERROR", "INCONCLUSIVE", "INTERRUPTED"};
  fprintf(f, " -- %s (seed %lld)\n", outcome[mxcts_results_exit_status(results)],
          (long long)json_integer_value(json_object_get(results, "seed")));
  size_t i, k;
  json_t *s, *a;
  json_array_foreach(json_object_get(results, "suites"), i, s) {
    json_array_foreach(json_object_get(s, "assertions"), k, a) {
      int v = mxcts_verdict_parse(json_string_value(json_object_get(a, "verdict")));
      if (v < 0 || (!mxcts_assertion_fails(a) && v != MXCTS_V_INCONCLUSIVE && v != MXCTS_V_UNSUPPORTED))
        continue;
      fprintf(f, "  %s%s %s: %.400s\n", mxcts_verdict_name((enum mxcts_verdict)v),
              v == MXCTS_V_UNSUPPORTED && !mxcts_assertion_fails(a) ? " (expected)" : "",
              json_string_value(json_object_get(a, "name")),
              json_string_value(json_object_get(a, "detail")));
    }
  }
  json_array_foreach(json_object_get(results, "stale_expectations"), i, a)
    fprintf(f, "  note: expectation line %lld (%s %s/%s) matched nothing\n",
            (long long)json_integer_value(json_object_get(a, "line")),
            json_string_value(json_object_get(a, "kind")),
            json_string_value(json_object_get(a, "suite")),
            json_string_value(json_object_get(a, "assertion")));
}

int mxcts_results_exit_status(const json_t *results) {
  bool failed = false, inconclusive = false;
  size_t i, k;
  json_t *s, *a;
  json_array_foreach(json_object_get(results, "suites"), i, s) {
    json_array_foreach(json_object_get(s, "assertions"), k, a) {
      failed = failed || mxcts_assertion_fails(a);
      inconclusive = inconclusive || mxcts_verdict_parse(json_string_value(json_object_get(a, "verdict"))) ==
                                         MXCTS_V_INCONCLUSIVE;
    }
  }
  if (failed) return 1;
  if (json_is_string(json_object_get(results, "interrupted"))) return 4;
  return inconclusive ? 3 : 0;
}

/* --- validating a results document ------------------------------------------------ */

static int check_assertion(const struct mxcts_jloc *at, json_t *a) {
  char *s = NULL;
  int rc = json_is_object(a) ? 0 : mxcts_jfail(at, "expected an object");
  const char *const keys[] = {"id", "name", "type", "verdict", "detail"};
  for (size_t i = 0; !rc && i < sizeof keys / sizeof *keys; i++) {
    rc = mxcts_jget_string(at, a, keys[i], true, &s);
    if (!rc && i == 3 && mxcts_verdict_parse(s) < 0)
      rc = mxcts_jfail_key(at, "verdict", "\"%s\" is not a verdict", s);
    free(s);
    s = NULL;
  }
  return rc;
}

static int check_suite(const struct mxcts_jloc *at, json_t *s) {
  json_t *asserts = NULL, *configs = NULL;
  char *name = NULL;
  int rc = json_is_object(s) ? 0 : mxcts_jfail(at, "expected an object");
  if (!rc) rc = mxcts_jget_string(at, s, "name", true, &name);
  free(name);
  if (!rc) rc = mxcts_jget_typed(at, s, "configs", true, JSON_ARRAY, &configs);
  if (!rc) rc = mxcts_jget_typed(at, s, "assertions", true, JSON_ARRAY, &asserts);
  size_t i;
  json_t *a;
  json_array_foreach(asserts, i, a) {
    if (rc) break;
    char *base = mxcts_jpath_key(at->path, "assertions"), *p = mxcts_jpath_index(base, i);
    struct mxcts_jloc aat = {at->file, p};
    rc = check_assertion(&aat, a);
    free(p);
    free(base);
  }
  return rc;
}

int mxcts_results_check(json_t *doc, const char *file) {
  struct mxcts_jloc at = {file, ""};
  long format = 0;
  json_t *suites = NULL, *summary = NULL;
  char *status = NULL;
  int rc = json_is_object(doc) ? 0 : mxcts_jfail(&at, "expected an object");
  if (!rc) rc = mxcts_jget_long(&at, doc, "mxcts_results", true, 1, 1000, &format);
  if (!rc && format != MXCTS_RESULTS_FORMAT)
    rc = mxcts_jfail_key(&at, "mxcts_results", "format %ld is not supported", format);
  if (!rc) rc = mxcts_jget_string(&at, doc, "status", true, &status);
  if (!rc && strcmp(status, "pass") && strcmp(status, "fail") && strcmp(status, "inconclusive") &&
      strcmp(status, "interrupted"))
    rc = mxcts_jfail_key(&at, "status", "\"%s\" is not pass, fail, inconclusive or interrupted", status);
  if (!rc && json_object_get(doc, "interrupted") && !json_is_string(json_object_get(doc, "interrupted")))
    rc = mxcts_jfail_key(&at, "interrupted", "expected the name of a signal");
  free(status);
  if (!rc) rc = mxcts_jget_typed(&at, doc, "summary", true, JSON_OBJECT, &summary);
  if (!rc) rc = mxcts_jget_typed(&at, doc, "suites", true, JSON_ARRAY, &suites);
  size_t i;
  json_t *s;
  json_array_foreach(suites, i, s) {
    if (rc) break;
    char *p = mxcts_jpath_index("suites", i);
    struct mxcts_jloc sat = {file, p};
    rc = check_suite(&sat, s);
    free(p);
  }
  return rc;
}
