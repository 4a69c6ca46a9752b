/* The probe's result file (run/run.h): a full result, and malformed ones,
 * each an error naming the file and the JSON path. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check_tap.h"
#include "common/common.h"
#include "run/run.h"

static const char full[] =
    "{\"probe_version\": 1, \"workload\": \"symbolic_flip_chain\", \"seed\": 5, \"status\": \"ok\","
    " \"error\": null, \"impl\": {\"version\": 10901}, \"future_field\": [1, 2],"
    " \"timing\": {\"unit\": \"ms\", \"iterations\": [0.41, 0.40], \"median\": 0.405},"
    " \"structure\": {\"passes\": [{\"name\": \"forward\", \"engine_ops\": 67, \"segment_sizes\": [15, 10],"
    "   \"names\": [\"[reverse]\"], \"segments\": 2, \"graph_launches\": 2, \"graph_captures\": 1},"
    "   {\"name\": \"imperative\", \"engine_ops\": 2,"
    "   \"segment_sizes\": [-1, -1], \"bulked_events\": 2}]},"
    " \"values\": {\"output\": {\"digest\": \"fnv1a64:5f\"}},"
    " \"checks\": [{\"name\": \"output_is_flipped_input\", \"pass\": true, \"detail\": \"ok\"},"
    "             {\"name\": \"other\", \"pass\": false}],"
    " \"metrics\": {\"dot_push_ms\": 0.5}}";

static int parse(const char *text, struct mxcts_result *r) {
  json_t *doc = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(doc);
  int rc = mxcts_result_parse(doc, "r.json", r);
  json_decref(doc);
  return rc;
}

START_TEST(test_full_result) {
  struct mxcts_result r;
  ck_assert_msg(parse(full, &r) == 0, "%s", mxcts_last_error());
  ck_assert_str_eq(r.status, "ok");
  ck_assert(r.has_median && r.median == 0.405);
  ck_assert_int_eq(r.npasses, 2);
  const struct mxcts_pass_result *f = mxcts_result_pass(&r, "forward");
  ck_assert_int_eq(f->engine_ops, 67);
  ck_assert_int_eq(f->nsizes, 2);
  ck_assert_int_eq(f->bulked_events, -1);
  ck_assert_int_eq(f->graph_launches, 2);
  ck_assert_int_eq(f->graph_captures, 1);
  ck_assert_int_eq(mxcts_result_pass(&r, "imperative")->graph_launches, -1);
  ck_assert(f->has_names);
  ck_assert_int_eq(mxcts_result_pass(&r, "imperative")->sizes[0], -1);
  ck_assert_ptr_null(mxcts_result_pass(&r, "backward"));
  ck_assert(!mxcts_result_check(&r, "other")->pass);
  ck_assert_str_eq(mxcts_result_check(&r, "other")->detail, "");
  double v;
  ck_assert(mxcts_result_number(&r, "metrics.dot_push_ms", &v) && v == 0.5);
  ck_assert(mxcts_result_number(&r, "structure.passes[0].engine_ops", &v) && v == 67);
  ck_assert(!mxcts_result_number(&r, "values.output.digest", &v));
  ck_assert(!mxcts_result_number(&r, "structure.passes[9].engine_ops", &v));
  mxcts_result_free(&r);
}
END_TEST

START_TEST(test_error_results) {
  struct mxcts_result r;
  ck_assert_int_eq(parse("{\"probe_version\": 1, \"status\": \"error\", \"error\": \"MXExecutorForward failed: x\"}", &r), 0);
  ck_assert_str_eq(r.error, "MXExecutorForward failed: x");
  mxcts_result_free(&r);
  ck_assert_int_eq(parse("{\"probe_version\": 1, \"status\": \"error\", \"error\": {\"call\": \"MXA\"}}", &r), 0);
  ck_assert_ptr_nonnull(strstr(r.error, "MXA"));
  mxcts_result_free(&r);
}
END_TEST

static const struct bad {
  const char *text, *message;
} bad[] = {
    {"[]", "r.json: (top level): expected an object, got array"},
    {"{\"status\": \"ok\"}", "missing required field \"probe_version\""},
    {"{\"probe_version\": 2, \"status\": \"ok\"}", "probe_version: version 2 is not supported"},
    {"{\"probe_version\": 1}", "missing required field \"status\""},
    {"{\"probe_version\": 1, \"status\": \"fine\"}", "status: \"fine\" is not ok, error, usage or unsupported"},
    {"{\"probe_version\": 1, \"status\": 0}", "status: expected a string, got integer"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"timing\": [1]}", "timing: expected an object"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"timing\": {\"median\": \"fast\"}}", "timing.median: expected a number"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"timing\": {\"median\": -1}}", "timing.median: -1 is out of range"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"timing\": {\"iterations\": [1, null]}}", "timing.iterations[1]: expected a non-negative number"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"structure\": {}}", "structure: missing required field \"passes\""},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"structure\": {\"passes\": [3]}}", "structure.passes[0]: expected an object"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"structure\": {\"passes\": [{\"engine_ops\": 1}]}}",
     "structure.passes[0]: missing required field \"name\""},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"structure\": {\"passes\": [{\"name\": \"f\", \"engine_ops\": \"67\"}]}}",
     "structure.passes[0].engine_ops: expected an integer"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"structure\": {\"passes\": [{\"name\": \"f\", \"segment_sizes\": [1, -2]}]}}",
     "structure.passes[0].segment_sizes[1]: -2 is out of range"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"structure\": {\"passes\": [{\"name\": \"f\", \"graph_launches\": -3}]}}",
     "structure.passes[0].graph_launches: -3 is out of range"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"structure\": {\"passes\": [{\"name\": \"f\", \"names\": [1]}]}}",
     "structure.passes[0].names[0]: expected a string"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"structure\": {\"passes\": [{\"name\": \"f\"}, {\"name\": \"f\"}]}}",
     "structure.passes[1]: duplicate pass name \"f\""},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"checks\": {}}", "checks: expected an array"},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"checks\": [{\"name\": \"c\"}]}", "checks[0]: missing required field \"pass\""},
    {"{\"probe_version\": 1, \"status\": \"ok\", \"checks\": [{\"name\": \"c\", \"pass\": \"yes\"}]}", "checks[0].pass: expected true or false"},
};

/* Outside text is kept whole and made safe: invalid UTF-8 and control
 * characters (but newline and tab) become \xNN; valid UTF-8 stays. */
START_TEST(test_clean_text) {
  char *c = mxcts_clean_text("caf\xe9 \x1b[2J ok\tnl\n \xc3\xa9 \xed\xa0\x80 \xe2\x82");
  ck_assert_str_eq(c, "caf\\xe9 \\x1b[2J ok\tnl\n \xc3\xa9 \\xed\\xa0\\x80 \\xe2\\x82");
  free(c);
  char *long_text = mxcts_xcalloc(5001, 1);
  memset(long_text, 'x', 5000);
  mxcts_set_error(MXR_EINVAL, "%s", long_text);
  ck_assert_uint_eq(strlen(mxcts_last_error()), 5000); /* a long reason is never cut */
  free(long_text);
}
END_TEST

START_TEST(test_malformed_results) {
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct mxcts_result r;
    ck_assert_msg(parse(bad[i].text, &r) != 0, "case %zu parsed", i);
    ck_assert_msg(strstr(mxcts_last_error(), bad[i].message) && !strncmp(mxcts_last_error(), "r.json: ", 8),
                  "case %zu: \"%s\" lacks \"%s\"", i, mxcts_last_error(), bad[i].message);
  }
}
END_TEST

START_TEST(test_files) {
  struct mxcts_result r;
  ck_assert_int_ne(mxcts_result_load("/nonexistent/result.json", &r), 0);
  ck_assert_ptr_nonnull(strstr(mxcts_last_error(), "/nonexistent/result.json"));
  char path[] = "/tmp/mxcts-result.XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  const char *cut = "{\"probe_version\": 1, \"status\": \"ok\", \"timing\": {\"median\": ";
  ck_assert_int_eq(mxcts_write_file(path, cut, strlen(cut)), 0);
  ck_assert_int_ne(mxcts_result_load(path, &r), 0);
  ck_assert_ptr_nonnull(strstr(mxcts_last_error(), path));
  ck_assert_ptr_nonnull(strstr(mxcts_last_error(), "malformed JSON"));
  ck_assert_int_eq(mxcts_write_file(path, "", 0), 0);
  ck_assert_int_ne(mxcts_result_load(path, &r), 0);
  remove(path);
}
END_TEST

int main(void) {
  Suite *s = suite_create("result");
  TCase *tc = tcase_create("result");
  tcase_add_test(tc, test_full_result);
  tcase_add_test(tc, test_error_results);
  tcase_add_test(tc, test_malformed_results);
  tcase_add_test(tc, test_clean_text);
  tcase_add_test(tc, test_files);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
