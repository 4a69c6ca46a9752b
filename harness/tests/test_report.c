/* The reporters (report/report.h) on a real results document from the fake probe:
 * TAP 13 that parses, well-formed JUnit XML (xmllint when installed, and a
 * small checker here), JSON that validates, self-contained HTML. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_tap.h"
#include "common/common.h"
#include "harness_util.h"
#include "judge/judge.h"
#include "report/report.h"

static const char suite[] =
    "{\"format\": 1, \"name\": \"rep\", \"workload\": \"fake\", \"rounds\": 9, \"timeout\": 5,"
    " \"description\": \"a <suite> & its \\\"quotes\\\" # not a directive\","
    " \"configs\": ["
    "  {\"id\": \"slow\", \"env\": {\"FAKE_ID\": \"s\", \"FAKE_MS\": \"2\", \"FAKE_NOISE\": \"0.1\", \"FAKE_CAP\": \"off\", \"FAKE_OPS\": \"30\"}},"
    "  {\"id\": \"fast\", \"env\": {\"FAKE_ID\": \"f\", \"FAKE_MS\": \"1\", \"FAKE_NOISE\": \"0.1\", \"FAKE_CAP\": \"7\", \"FAKE_OPS\": \"30\"}},"
    "  {\"id\": \"crash\", \"env\": {\"FAKE_MODE\": \"crash\"}}],"
    " \"assertions\": ["
    "  {\"id\": \"order\", \"type\": \"ordering\", \"slower\": [\"slow\"], \"faster\": [\"fast\"],"
    "   \"description\": \"slow <is> slower & #1\"},"
    "  {\"id\": \"structure\", \"type\": \"structure\", \"expect\": {"
    "    \"slow\": {\"forward\": {\"single\": 30}, \"backward\": {\"single\": 30}},"
    "    \"fast\": {\"forward\": {\"bulk\": [30, 7]}, \"backward\": {\"bulk\": [30, 7]}}}},"
    "  {\"id\": \"crash\", \"type\": \"checks\", \"configs\": [\"crash\"]},"
    "  {\"id\": \"xfail\", \"type\": \"checks\", \"configs\": [\"crash\"]},"
    "  {\"id\": \"skipped\", \"type\": \"checks\", \"configs\": [\"slow\"]}]}";

static json_t *results(void) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "rep", suite));
  char *ex = mxcts_xasprintf("%s/fake.txt", dir);
  const char *text = "fail rep/xfail crashes <on purpose> & more\nskip rep/skipped not # here\n";
  ck_assert_int_eq(mxcts_write_file(ex, text, strlen(text)), 0);
  struct mxcts_options o;
  hu_options(&o, dir, 99);
  o.expectations = ex;
  json_t *r = hu_run_opts(&o);
  hu_cleanup(dir);
  return r;
}

static char *render(int (*fn)(const json_t *, FILE *), const json_t *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_int_eq(fn(r, f), 0);
  fclose(f);
  return buf;
}

/* A TAP 13 reader: version, plan, numbered points, YAML blocks. */
static void check_tap(const char *tap, size_t expect_points) {
  char *copy = mxcts_xstrdup(tap), *save = NULL;
  char *line = strtok_r(copy, "\n", &save);
  ck_assert_str_eq(line, "TAP version 13");
  line = strtok_r(NULL, "\n", &save);
  size_t plan = 0;
  ck_assert_int_eq(sscanf(line, "1..%zu", &plan), 1);
  ck_assert_uint_eq(plan, expect_points);
  size_t n = 0;
  bool in_yaml = false, yaml_seen = false;
  while ((line = strtok_r(NULL, "\n", &save))) {
    if (in_yaml) {
      if (!strcmp(line, "  ...")) in_yaml = false;
      else ck_assert_msg(!strncmp(line, "  ", 2) && strlen(line) > 2, "bad YAML line: %s", line);
      continue;
    }
    if (!strcmp(line, "  ---")) {
      ck_assert_msg(!yaml_seen && n > 0, "a YAML block must follow its test point");
      in_yaml = yaml_seen = true;
      continue;
    }
    size_t num = 0;
    int used = 0;
    if (!strncmp(line, "ok ", 3)) sscanf(line + 3, "%zu%n", &num, &used);
    else if (!strncmp(line, "not ok ", 7)) sscanf(line + 7, "%zu%n", &num, &used);
    ck_assert_msg(num == n + 1, "expected test point %zu: %s", n + 1, line);
    n++;
    yaml_seen = false;
  }
  ck_assert(!in_yaml);
  ck_assert_uint_eq(n, plan);
  free(copy);
}

/* Well-formed XML: balanced tags, quoted attributes, escaped text. */
static void check_xml(const char *x) {
  char stack[32][64];
  int depth = 0;
  const char *p = x;
  ck_assert(!strncmp(p, "<?xml ", 6));
  p = strstr(p, "?>") + 2;
  while (*p) {
    if (*p == '&') {
      ck_assert_msg(!strncmp(p, "&amp;", 5) || !strncmp(p, "&lt;", 4) || !strncmp(p, "&gt;", 4) ||
                        !strncmp(p, "&quot;", 6) || !strncmp(p, "&apos;", 6) || !strncmp(p, "&#39;", 5),
                    "raw & at %.20s", p);
      p++;
      continue;
    }
    if (*p != '<') {
      ck_assert_msg(*p != '>', "raw > in text");
      p++;
      continue;
    }
    bool close = p[1] == '/';
    const char *name = p + 1 + close;
    size_t len = strcspn(name, " />\n");
    ck_assert(len > 0 && len < 64);
    const char *end = name + len;
    bool quoted = false;
    while (*end && (quoted || *end != '>')) {
      if (*end == '"') quoted = !quoted;
      ck_assert_msg(quoted || *end != '<', "< inside a tag");
      end++;
    }
    ck_assert(*end == '>');
    bool self = end[-1] == '/';
    if (close) {
      ck_assert(depth > 0);
      depth--;
      ck_assert_msg(strlen(stack[depth]) == len && !strncmp(stack[depth], name, len), "mismatched </%.*s>", (int)len, name);
    } else if (!self) {
      ck_assert(depth < 32);
      memcpy(stack[depth], name, len);
      stack[depth++][len] = '\0';
    }
    p = end + 1;
  }
  ck_assert_int_eq(depth, 0);
}

static int summary_of(const json_t *r, FILE *f) {
  mxcts_report_summary(r, f);
  return 0;
}

START_TEST(test_reports) {
  json_t *r = results();
  ck_assert_str_eq(hu_verdict(r, "rep/order"), "pass");
  ck_assert_str_eq(hu_verdict(r, "rep/crash"), "crash");
  ck_assert_str_eq(hu_verdict(r, "rep/xfail"), "xfail");
  ck_assert_str_eq(hu_verdict(r, "rep/skipped"), "skip");
  ck_assert_str_eq(hu_verdict(r, "rep/structure"), "pass");

  char *tap = render(mxcts_report_tap, r);
  check_tap(tap, 5);
  ck_assert_ptr_nonnull(strstr(tap, "not ok 3 - rep/crash (crash)"));
  ck_assert_ptr_nonnull(strstr(tap, "not ok 4 - rep/xfail # TODO expected failure: crashes <on purpose> & more"));
  ck_assert_ptr_nonnull(strstr(tap, "ok 5 - rep/skipped # SKIP not \\# here"));
  ck_assert_ptr_nonnull(strstr(tap, "  pairs:\n    - {\"slower\": \"slow\", \"faster\": \"fast\""));
  ck_assert_ptr_nonnull(strstr(tap, "\"decision\": \"pass\""));
  ck_assert_ptr_nonnull(strstr(tap, "\"wins\": 15")); /* 9 rounds, then a batch: decided at 15 */
  ck_assert_ptr_nonnull(strstr(tap, "  rounds_run: 19\n"));
  ck_assert_ptr_nonnull(strstr(tap, "  sprt: {\"p0\": 0.5"));
  ck_assert_ptr_nonnull(strstr(tap, "  seed: 99\n"));
  ck_assert_ptr_nonnull(strstr(tap, "  command: \"cd "));
  ck_assert_ptr_nonnull(strstr(tap, "    \"slow\": {\"env\": {\"FAKE_ID\": \"s\""));

  char *xml = render(mxcts_report_junit, r);
  check_xml(xml);
  ck_assert_ptr_nonnull(strstr(xml, "<error type=\"crash\""));
  ck_assert_ptr_nonnull(strstr(xml, "<skipped message=\"expected failure: crashes &lt;on purpose&gt; &amp; more\"/>"));
  ck_assert_ptr_nonnull(strstr(xml, "tests=\"5\" failures=\"0\" errors=\"1\" skipped=\"2\""));
  char path[] = "/tmp/mxcts-junit.XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert(write(fd, xml, strlen(xml)) == (ssize_t)strlen(xml));
  close(fd);
  if (system("command -v xmllint >/dev/null 2>&1") == 0) {
    char *cmd = mxcts_xasprintf("xmllint --noout %s", path);
    ck_assert_msg(system(cmd) == 0, "xmllint rejects the JUnit XML");
    free(cmd);
  }
  remove(path);

  char *html = render(mxcts_report_html, r);
  ck_assert(!strncmp(html, "<!DOCTYPE html>", 15));
  ck_assert_ptr_nonnull(strstr(html, "</html>"));
  ck_assert_ptr_nonnull(strstr(html, "<circle"));          /* timing points */
  ck_assert_ptr_nonnull(strstr(html, "4&#215;7 + 2"));      /* fast: 30 = 4x7 + 2 */
  ck_assert_ptr_nonnull(strstr(html, "a &lt;suite&gt; &amp; its &quot;quotes&quot;"));
  ck_assert_ptr_null(strstr(html, "src="));                 /* self-contained */
  ck_assert_ptr_null(strstr(html, "http"));
  ck_assert_ptr_null(strstr(html, "<script"));

  /* the JSON file round-trips and validates */
  struct mxcts_report_files files = {NULL, NULL, "/tmp/mxcts-report-test.json", NULL};
  ck_assert_int_eq(mxcts_report_write(r, &files), 0);
  json_t *back = json_load_file(files.json, JSON_REJECT_DUPLICATES, NULL);
  ck_assert_ptr_nonnull(back);
  ck_assert_msg(mxcts_results_check(back, files.json) == 0, "%s", mxcts_last_error());
  ck_assert_int_eq(mxcts_results_exit_status(back), 1);
  char *tap2 = render(mxcts_report_tap, back);
  ck_assert_str_eq(tap, tap2); /* report re-renders the same */
  remove(files.json);
  json_decref(back);
  free(tap);
  free(tap2);
  free(xml);
  free(html);
  json_decref(r);
}
END_TEST

/* An inconclusive ordering: a TAP skip saying so, a JUnit <skipped>, its
 * own colour in HTML, a line in the summary, and exit status 3 when
 * nothing failed. */
START_TEST(test_inconclusive_reports) {
  json_t *r = results();
  json_t *a = hu_assertion(r, "rep/order");
  json_object_set_new(a, "verdict", json_string("inconclusive"));
  json_object_set_new(a, "detail", json_string("slow vs fast undecided: 9 wins of 12 counted rounds"));
  char *tap = render(mxcts_report_tap, r);
  check_tap(tap, 5);
  ck_assert_ptr_nonnull(strstr(tap, "ok 1 - rep/order # SKIP inconclusive: slow vs fast undecided"));
  ck_assert_ptr_null(strstr(tap, "not ok 1 "));
  char *xml = render(mxcts_report_junit, r);
  check_xml(xml);
  ck_assert_ptr_nonnull(strstr(xml, "<skipped message=\"inconclusive: slow vs fast undecided"));
  char *html = render(mxcts_report_html, r);
  ck_assert_ptr_nonnull(strstr(html, "<td class='inconclusive'>inconclusive"));
  json_object_set_new(r, "status", json_string("inconclusive"));
  ck_assert_int_eq(mxcts_results_exit_status(r), 1); /* rep/crash still fails */
  json_object_set_new(hu_assertion(r, "rep/crash"), "verdict", json_string("pass"));
  ck_assert_int_eq(mxcts_results_exit_status(r), 3);
  char *summary = render(summary_of, r);
  ck_assert_ptr_nonnull(strstr(summary, "-- INCONCLUSIVE"));
  ck_assert_ptr_nonnull(strstr(summary, "  inconclusive rep/order: slow vs fast undecided"));
  free(tap);
  free(xml);
  free(html);
  free(summary);
  json_decref(r);
}
END_TEST

/* The exit status comes from the verdicts, whatever the stored status says;
 * an interrupted run with no failure exits 4. */
START_TEST(test_exit_status_from_verdicts) {
  json_t *r = results();
  json_object_set_new(r, "status", json_string("pass"));
  ck_assert_int_eq(mxcts_results_exit_status(r), 1); /* rep/crash */
  json_object_set_new(hu_assertion(r, "rep/crash"), "verdict", json_string("skip"));
  ck_assert_int_eq(mxcts_results_exit_status(r), 0);
  json_object_set_new(r, "interrupted", json_string("SIGINT"));
  json_object_set_new(r, "status", json_string("interrupted"));
  ck_assert_int_eq(mxcts_results_exit_status(r), 4);
  ck_assert_int_eq(mxcts_results_check(r, "r.json"), 0);
  char *summary = render(summary_of, r);
  ck_assert_ptr_nonnull(strstr(summary, "-- INTERRUPTED"));
  free(summary);
  json_decref(r);
}
END_TEST

/* report --diff: a regression, a fix, a newly inconclusive ordering and a
 * ratio that moved, each found; a document against itself changes nothing. */
START_TEST(test_diff) {
  json_t *a = results(), *b = json_deep_copy(a);
  json_t *same = mxcts_report_diff(a, a);
  ck_assert(!mxcts_report_diff_regressed(same));
  ck_assert_uint_eq(json_array_size(json_object_get(same, "ratios_moved")), 0);
  ck_assert_uint_eq(json_array_size(json_object_get(same, "fixes")), 0);
  json_decref(same);
  json_object_set_new(hu_assertion(b, "rep/structure"), "raw_verdict", json_string("fail"));
  json_object_set_new(hu_assertion(b, "rep/crash"), "raw_verdict", json_string("pass"));
  json_t *pair = json_array_get(json_object_get(json_object_get(hu_assertion(b, "rep/order"), "diag"), "pairs"), 0);
  json_t *slower = json_object_get(pair, "slower_values");
  for (size_t i = 0; i < json_array_size(slower); i++)
    json_array_set_new(slower, i, json_real(5 * json_number_value(json_array_get(slower, i))));
  json_t *d = mxcts_report_diff(a, b);
  ck_assert(mxcts_report_diff_regressed(d));
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(d, "regressions"), 0), "name")),
                   "rep/structure");
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(d, "fixes"), 0), "name")),
                   "rep/crash");
  ck_assert_uint_eq(json_array_size(json_object_get(d, "ratios_moved")), 1);
  char *md = render(mxcts_report_diff_md, d), *html = render(mxcts_report_diff_html, d);
  ck_assert_ptr_nonnull(strstr(md, "## Regressions (pass before, failing now): 1"));
  ck_assert_ptr_nonnull(strstr(md, "| rep/order | slow vs fast |"));
  ck_assert_ptr_nonnull(strstr(html, "<h2>Fixes (failing before, pass now): 1</h2>"));
  free(md);
  free(html);
  json_decref(d);
  json_object_set_new(hu_assertion(b, "rep/order"), "raw_verdict", json_string("inconclusive"));
  d = mxcts_report_diff(a, b);
  ck_assert_uint_eq(json_array_size(json_object_get(d, "newly_inconclusive")), 1);
  json_decref(d);
  json_decref(a);
  json_decref(b);
}
END_TEST

static const char uns_suite[] =
    "{\"format\": 1, \"name\": \"uns\", \"workload\": \"fake\", \"rounds\": 1, \"timeout\": 5,"
    " \"configs\": [{\"id\": \"has\"}, {\"id\": \"lacks\", \"env\": {\"FAKE_MODE\": \"unsupported\"}}],"
    " \"assertions\": ["
    "  {\"id\": \"ok\", \"type\": \"checks\", \"configs\": [\"has\"]},"
    "  {\"id\": \"needs\", \"type\": \"checks\", \"configs\": [\"lacks\"]},"
    "  {\"id\": \"needs-expected\", \"type\": \"checks\", \"configs\": [\"has\", \"lacks\"]}]}";

/* A run of uns_suite against the fake probe, whose "lacks" config reports
 * MXFakeCall missing, with `expect` as the expectation file's text. */
static json_t *unsupported_results(const char *name, const char *expect) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "uns", uns_suite));
  char *ex = mxcts_xasprintf("%s/fake.txt", dir);
  ck_assert_int_eq(mxcts_write_file(ex, expect, strlen(expect)), 0);
  struct mxcts_options o;
  hu_options(&o, dir, 7);
  o.expectations = ex;
  free(o.impl_name);
  o.impl_name = mxcts_xstrdup(name);
  json_t *r = hu_run_opts(&o);
  hu_cleanup(dir);
  return r;
}

/* unsupported: the missing function named in every format; a failure of
 * the run unless an unsupported line expects it (then TAP's TODO, JUnit's
 * skipped); never a pass or a skip. */
START_TEST(test_unsupported_reports) {
  json_t *r = unsupported_results("fake", "unsupported uns/needs-expected the fake has no MXFakeCall\n");
  ck_assert_str_eq(hu_verdict(r, "uns/ok"), "pass");
  ck_assert_str_eq(hu_verdict(r, "uns/needs"), "unsupported");
  ck_assert_str_eq(hu_verdict(r, "uns/needs-expected"), "unsupported");
  ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "fail");
  ck_assert_int_eq(mxcts_results_exit_status(r), 1);
  json_t *missing = json_object_get(json_object_get(hu_assertion(r, "uns/needs"), "diag"), "missing");
  ck_assert_str_eq(json_string_value(json_array_get(missing, 0)), "MXFakeCall");
  ck_assert(mxcts_assertion_fails(hu_assertion(r, "uns/needs")));
  ck_assert(!mxcts_assertion_fails(hu_assertion(r, "uns/needs-expected")));

  char *tap = render(mxcts_report_tap, r);
  check_tap(tap, 3);
  ck_assert_ptr_nonnull(strstr(tap, "not ok 2 - uns/needs (unsupported)\n"));
  ck_assert_ptr_nonnull(strstr(tap, "not ok 3 - uns/needs-expected (unsupported) # TODO expected unsupported: the fake"));
  ck_assert_ptr_nonnull(strstr(tap, "  missing: [\"MXFakeCall\"]\n"));
  char *xml = render(mxcts_report_junit, r);
  check_xml(xml);
  ck_assert_ptr_nonnull(strstr(xml, "<failure type=\"unsupported\" message=\"uns/lacks/r001: fake does not export MXFakeCall"));
  ck_assert_ptr_nonnull(strstr(xml, "<skipped message=\"expected unsupported: uns/lacks/r001: fake does not export MXFakeCall"));
  ck_assert_ptr_nonnull(strstr(xml, "tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
  char *html = render(mxcts_report_html, r);
  ck_assert_ptr_nonnull(strstr(html, "<td class='unsupported'>unsupported (expected)</td>"));
  ck_assert_ptr_nonnull(strstr(html, "MXFakeCall"));
  char *summary = render(summary_of, r);
  ck_assert_ptr_nonnull(strstr(summary, "1 pass, 2 unsupported -- FAIL"));
  ck_assert_ptr_nonnull(strstr(summary, "  unsupported uns/needs: uns/lacks/r001: fake does not export MXFakeCall"));
  json_decref(r);

  /* every unsupported one expected: the run passes, and they stay unsupported */
  r = unsupported_results("fake", "unsupported uns/needs* the fake has no MXFakeCall\n");
  ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "pass");
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "summary"), "unsupported")), 2);
  json_decref(r);
  /* an unsupported line on an assertion that ran and passed: xpass */
  r = unsupported_results("fake", "unsupported uns/ok it used to lack MXFakeCall\n");
  ck_assert_str_eq(hu_verdict(r, "uns/ok"), "xpass");
  json_decref(r);
  free(tap);
  free(xml);
  free(html);
  free(summary);
}
END_TEST

static char *render_matrix(json_t **docs, size_t n, bool omit, bool html) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_int_eq(html ? mxcts_report_matrix_html(docs, n, f) : mxcts_report_matrix_md(docs, n, omit, f), 0);
  fclose(f);
  return buf;
}

/* The matrix: a column per implementation (two documents of one share it),
 * a row per assertion, verdicts with wins and ratio, evidence and the
 * missing functions, counts per column. */
START_TEST(test_matrix) {
  json_t *docs[3] = {results(), unsupported_results("fake-old", "unsupported uns/needs-expected no MXFakeCall\n"),
                     unsupported_results("fake", "")};
  char *md = render_matrix(docs, 3, false, false);
  ck_assert_ptr_nonnull(strstr(md, "| assertion | fake | fake-old |\n|---|---|---|\n"));
  ck_assert_ptr_nonnull(strstr(md, "| `rep/order` | pass, 15/15 wins, ratio "));
  ck_assert_ptr_nonnull(strstr(md, "| `rep/crash` | crash: rep/crash/r001: crashed: killed by SIGSEGV"));
  ck_assert_ptr_nonnull(strstr(md, "| `rep/skipped` | skip | not run |\n"));
  ck_assert_ptr_nonnull(strstr(md, "| `uns/needs` | unsupported: no MXFakeCall | unsupported: no MXFakeCall |\n"));
  ck_assert_ptr_nonnull(strstr(md, "| `uns/needs-expected` | unsupported: no MXFakeCall | unsupported (expected): no MXFakeCall |\n"));
  ck_assert_ptr_nonnull(strstr(md, "- fake: 3 pass, 1 crash, 1 skip, 1 xfail, 2 unsupported\n"));
  ck_assert_ptr_nonnull(strstr(md, "- fake-old: 1 pass, 2 unsupported\n"));
  char *omitted = render_matrix(docs, 3, true, false);
  ck_assert_ptr_null(strstr(omitted, "rep/skipped"));
  ck_assert_ptr_nonnull(strstr(omitted, "\n1 assertions skipped everywhere are left out.\n"));
  char *html = render_matrix(docs, 3, false, true);
  ck_assert(!strncmp(html, "<!DOCTYPE html>", 15));
  ck_assert_ptr_nonnull(strstr(html, "<td class='unsupported'>unsupported (expected): no MXFakeCall</td>"));
  ck_assert_ptr_nonnull(strstr(html, "<th>fake-old<br><small>1 pass, 2 unsupported</small></th>"));
  ck_assert_ptr_null(strstr(html, "<script"));
  free(md);
  free(omitted);
  free(html);
  for (int i = 0; i < 3; i++) json_decref(docs[i]);
}
END_TEST

/* The throughput table: a row per suite, config and batch of a bN_img_s
 * metric, images per second per implementation, ratios to the first, peak
 * RSS; "-" where one has no figure.  And the judge's per-config figures it
 * reads: each metric's median over the rounds. */
START_TEST(test_throughput) {
  const char *a = "{\"impl\": {\"name\": \"A\"}, \"suites\": [{\"name\": \"bs\", \"configs\": [{\"id\": \"one\","
                  " \"params\": {\"net\": \"resnet-50\", \"image\": \"32\"}, \"metrics\": {\"b1_ms\": 10,"
                  " \"b1_img_s\": 100, \"b2_img_s\": 150, \"b2_img_s_x\": 1, \"depth\": 5}, \"peak_rss_kb\": 204800}]}]}";
  const char *b = "{\"impl\": {\"name\": \"B\"}, \"suites\": [{\"name\": \"bs\", \"configs\": [{\"id\": \"one\","
                  " \"params\": {\"net\": \"resnet-50\", \"image\": \"32\"}, \"metrics\": {\"b1_img_s\": 50},"
                  " \"peak_rss_kb\": 102400}, {\"id\": \"plain\", \"metrics\": {\"b4_img_s\": 7}}]}]}";
  json_t *docs[2] = {json_loads(a, 0, NULL), json_loads(b, 0, NULL)};
  ck_assert(docs[0] && docs[1]);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_int_eq(mxcts_report_throughput_md(docs, 2, f), 0);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(buf, "| suite | config | network | batch | A img/s | B img/s | B / A | A peak RSS MB | "
                                    "B peak RSS MB |\n|---|---|---|---|---|---|---|---|---|\n"));
  ck_assert_ptr_nonnull(strstr(buf, "| bs | one | resnet-50 at 32 | 1 | 100.0 | 50.0 | 0.50 | 200 | 100 |\n"));
  ck_assert_ptr_nonnull(strstr(buf, "| bs | one | resnet-50 at 32 | 2 | 150.0 | - | - | 200 | - |\n"));
  ck_assert_ptr_nonnull(strstr(buf, "| bs | plain | - | 4 | - | 7.0 | - | - | - |\n"));
  ck_assert_ptr_nonnull(strstr(buf, "\n3 rows: "));
  free(buf);
  for (int i = 0; i < 2; i++) json_decref(docs[i]);

  json_t *r = results();
  const json_t *slow = json_array_get(json_object_get(json_array_get(json_object_get(r, "suites"), 0), "configs"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(slow, "id")), "slow");
  ck_assert(json_real_value(json_object_get(json_object_get(slow, "metrics"), "a")) == 1.0);
  ck_assert(json_real_value(json_object_get(json_object_get(slow, "metrics"), "b")) == 1.0);
  json_decref(r);
}
END_TEST

START_TEST(test_results_check_rejects) {
  const char *bad[] = {
      "[]",
      "{\"mxcts_results\": 2}",
      "{\"mxcts_results\": 1, \"status\": \"maybe\"}",
      "{\"mxcts_results\": 1, \"status\": \"pass\", \"summary\": {}, \"suites\": [{\"name\": \"s\"}]}",
      "{\"mxcts_results\": 1, \"status\": \"pass\", \"summary\": {}, \"suites\": [{\"name\": \"s\", "
      "\"configs\": [], \"assertions\": [{\"id\": \"a\", \"name\": \"s/a\", \"type\": \"x\", "
      "\"verdict\": \"great\", \"detail\": \"\"}]}]}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    json_t *doc = json_loads(bad[i], 0, NULL);
    ck_assert_ptr_nonnull(doc);
    ck_assert_msg(mxcts_results_check(doc, "r.json") != 0, "case %zu accepted", i);
    ck_assert(!strncmp(mxcts_last_error(), "r.json: ", 8));
    json_decref(doc);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("report");
  TCase *tc = tcase_create("report");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_reports);
  tcase_add_test(tc, test_inconclusive_reports);
  tcase_add_test(tc, test_exit_status_from_verdicts);
  tcase_add_test(tc, test_diff);
  tcase_add_test(tc, test_results_check_rejects);
  tcase_add_test(tc, test_unsupported_reports);
  tcase_add_test(tc, test_matrix);
  tcase_add_test(tc, test_throughput);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
