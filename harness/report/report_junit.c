/*
 * JUnit XML (report/report.h): <testsuites> with one <testsuite> per suite and one
 * <testcase> per assertion.  fail, xpass and unsupported are <failure>;
 * crash, timeout and error are <error> (type names the verdict); skip,
 * xfail, inconclusive and an expected unsupported are <skipped> with the
 * reason.  Text is escaped for XML 1.0, and characters
 * XML 1.0 forbids are replaced by '?'.
 */
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "judge/judge.h"
#include "report/report.h"

static void xml_text(FILE *f, const char *s) { mxcts_report_markup(f, s); }

static const char *str(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

struct tally {
  size_t tests, failures, errors, skipped;
};

static int verdict_of(const json_t *a) { return mxcts_verdict_parse(str(a, "verdict")); }

/* <failure>: fail, xpass and unsupported unless expected; <error>: crash,
 * timeout, error; <skipped>: skip, xfail, inconclusive, expected
 * unsupported. */
enum junit_kind { J_PASS, J_FAILURE, J_ERROR, J_SKIPPED };

static enum junit_kind junit_kind(const json_t *a) {
  int v = verdict_of(a);
  if (v == MXCTS_V_FAIL || v == MXCTS_V_XPASS) return J_FAILURE;
  if (v == MXCTS_V_UNSUPPORTED) return mxcts_assertion_fails(a) ? J_FAILURE : J_SKIPPED;
  if (v == MXCTS_V_CRASH || v == MXCTS_V_TIMEOUT || v == MXCTS_V_ERROR || v < 0) return J_ERROR;
  if (v == MXCTS_V_SKIP || v == MXCTS_V_XFAIL || v == MXCTS_V_INCONCLUSIVE) return J_SKIPPED;
  return J_PASS;
}

static void add(struct tally *t, const json_t *a) {
  enum junit_kind k = junit_kind(a);
  t->tests++;
  t->failures += k == J_FAILURE;
  t->errors += k == J_ERROR;
  t->skipped += k == J_SKIPPED;
}

static void testcase(FILE *f, const json_t *suite, const json_t *a) {
  int v = verdict_of(a);
  const char *reason = str(json_object_get(a, "expectation"), "reason");
  fprintf(f, "    <testcase classname=\"mxcts.");
  xml_text(f, str(suite, "name"));
  fprintf(f, "\" name=\"");
  xml_text(f, str(a, "id"));
  fprintf(f, "\" time=\"0\">\n");
  enum junit_kind kind = junit_kind(a);
  const char *tag = kind == J_FAILURE ? "failure" : kind == J_ERROR ? "error" : NULL;
  if (tag) {
    fprintf(f, "      <%s type=\"%s\" message=\"", tag, v < 0 ? "error" : mxcts_verdict_name((enum mxcts_verdict)v));
    xml_text(f, v == MXCTS_V_XPASS ? "unexpected pass" : str(a, "detail"));
    fprintf(f, "\">");
    xml_text(f, str(a, "detail"));
    fprintf(f, "\nreproduce: ");
    xml_text(f, str(a, "command"));
    fprintf(f, "</%s>\n", tag);
  } else if (kind == J_SKIPPED) {
    fprintf(f, "      <skipped message=\"");
    if (v == MXCTS_V_XFAIL) fputs("expected failure: ", f);
    if (v == MXCTS_V_UNSUPPORTED) fputs("expected unsupported: ", f);
    if (v == MXCTS_V_INCONCLUSIVE) fputs("inconclusive: ", f);
    xml_text(f, v == MXCTS_V_XFAIL ? reason : str(a, "detail"));
    fprintf(f, "\"/>\n");
  }
  fprintf(f, "      <system-out>verdict: %s\ndetail: ", str(a, "verdict"));
  xml_text(f, str(a, "detail"));
  fprintf(f, "\ncommand: ");
  xml_text(f, str(a, "command"));
  fprintf(f, "</system-out>\n    </testcase>\n");
}

static void testsuite(FILE *f, const json_t *results, const json_t *s, struct tally *all) {
  struct tally t = {0};
  size_t k;
  json_t *a;
  json_array_foreach(json_object_get(s, "assertions"), k, a) add(&t, a);
  all->tests += t.tests;
  all->failures += t.failures;
  all->errors += t.errors;
  all->skipped += t.skipped;
  fprintf(f, "  <testsuite name=\"");
  xml_text(f, str(s, "name"));
  fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"0\">\n",
          t.tests, t.failures, t.errors, t.skipped);
  fprintf(f, "    <properties>\n      <property name=\"seed\" value=\"%lld\"/>\n",
          (long long)json_integer_value(json_object_get(results, "seed")));
  fprintf(f, "      <property name=\"impl\" value=\"");
  xml_text(f, str(json_object_get(results, "impl"), "path"));
  fprintf(f, "\"/>\n      <property name=\"workload\" value=\"");
  xml_text(f, str(s, "workload"));
  fprintf(f, "\"/>\n    </properties>\n");
  json_array_foreach(json_object_get(s, "assertions"), k, a) testcase(f, s, a);
  fprintf(f, "  </testsuite>\n");
}

int mxcts_report_junit(const json_t *results, FILE *f) {
  struct tally all = {0}, pre = {0};
  size_t i, k;
  json_t *s, *a;
  json_array_foreach(json_object_get(results, "suites"), i, s) {
    json_array_foreach(json_object_get(s, "assertions"), k, a) add(&pre, a);
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(f, "<testsuites name=\"mxcts\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
          "skipped=\"%zu\">\n", pre.tests, pre.failures, pre.errors, pre.skipped);
  json_array_foreach(json_object_get(results, "suites"), i, s) testsuite(f, results, s, &all);
  fprintf(f, "</testsuites>\n");
  return ferror(f) ? mxcts_set_error(MXR_ESYS, "write error") : 0;
}
