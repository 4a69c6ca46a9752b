/* Suite files (suite/suite.h): a valid suite in detail, every malformed case with
 * the file and JSON path in its message, and the shipped suites/. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "common/common.h"
#include "suite/suite.h"

static const char valid[] =
    "{\"format\": 1, \"name\": \"demo\", \"description\": \"d\", \"workload\": \"symbolic_flip_chain\","
    " \"params\": {\"num_ops\": 1000, \"len\": \"10\", \"check\": true}, \"profile_params\": {\"iterations\": 1},"
    " \"margin\": 0.1, \"timeout\": 30, \"p1\": 0.75, \"max_rounds\": 60,"
    " \"configs\": ["
    "  {\"id\": \"off\", \"group\": \"none\", \"env\": {\"MXNET_EXEC_BULK_EXEC_TRAIN\": 0}},"
    "  {\"id\": \"f15\", \"tags\": [\"half\"], \"env\": {\"MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD\": \"15\"},"
    "   \"params\": {\"num_ops\": \"500\"}},"
    "  {\"id\": \"s7\", \"env\": {\"MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN\": 7}}],"
    " \"assertions\": ["
    "  {\"id\": \"o\", \"type\": \"ordering\", \"slower\": [\"group:none\"], \"faster\": [\"tag:half@timing.median\"]},"
    "  {\"id\": \"s\", \"type\": \"structure\", \"expect\": {"
    "    \"off\": {\"forward\": {\"single\": 1000, \"graph_launches\": 0}},"
    "    \"f15\": {\"forward\": {\"bulk\": [1000, 15], \"graph_launches\": 67, \"graph_captures\": 0},"
    "            \"backward\": {\"bulk\": [1000, 0], \"extra_ops\": 1}},"
    "    \"s7\": {\"forward\": {\"concat\": [{\"bulk\": [20, 7]}, {\"sizes\": [3, 4]}, {\"single\": 2}],"
    "            \"op\": \"reverse\"}, \"imperative\": {\"bulk\": [30, 15], \"bulked_events\": 2,"
    "            \"compare\": [\"engine_ops\", \"bulked_events\"]}}}},"
    "  {\"id\": \"c\", \"type\": \"checks\", \"configs\": [\"s7\"]}]}";

static int parse_text(const char *text, const char *file, struct mxcts_suite *s) {
  json_error_t err;
  json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &err);
  ck_assert_msg(doc != NULL, "test JSON: %s", err.text);
  int rc = mxcts_suite_parse(doc, file, false, s);
  json_decref(doc);
  return rc;
}

START_TEST(test_valid_suite) {
  struct mxcts_suite s;
  ck_assert_msg(parse_text(valid, "demo.json", &s) == 0, "%s", mxcts_last_error());
  ck_assert_str_eq(s.name, "demo");
  ck_assert_int_eq(s.rounds, MXCTS_DEFAULT_FIRST_BATCH); /* a suite with orderings */
  ck_assert_int_eq(s.batch, MXCTS_DEFAULT_BATCH);
  ck_assert_int_eq(s.max_rounds, 60);
  ck_assert(s.sprt.p0 == 0.5 && s.sprt.p1 == 0.75);
  ck_assert(s.sprt.alpha == 0.001 && s.sprt.beta == 0.001);
  ck_assert(s.timed);
  ck_assert(s.margin == 0.1);
  ck_assert_str_eq(mxcts_kvs_get(&s.configs[0].env, "MXNET_EXEC_BULK_EXEC_TRAIN"), "0");
  ck_assert_str_eq(mxcts_kvs_get(&s.configs[1].params, "num_ops"), "500");
  ck_assert_str_eq(mxcts_kvs_get(&s.configs[0].params, "num_ops"), "1000");
  ck_assert_str_eq(mxcts_kvs_get(&s.configs[0].params, "check"), "1");
  const struct mxcts_assertion *o = &s.asserts[0];
  ck_assert_int_eq(o->nslower, 1);
  ck_assert_int_eq(o->slower[0].config, 0);
  ck_assert_str_eq(o->slower[0].measure, "timing.median");
  ck_assert_int_eq(o->faster[0].config, 1);
  ck_assert(o->margin == 0.1);
  const struct mxcts_assertion *st = &s.asserts[1];
  ck_assert_int_eq(st->nstructs, 3);
  const struct mxcts_pass_expect *off = &st->structs[0].passes[0];
  ck_assert_int_eq(off->engine_ops, 1000);
  ck_assert_int_eq(off->nsizes, 1000);
  ck_assert_int_eq(off->sizes[999], 1);
  ck_assert_uint_eq(off->compare, MXCTS_CMP_ENGINE_OPS | MXCTS_CMP_SEGMENT_SIZES |
                                      MXCTS_CMP_GRAPH_LAUNCHES);
  ck_assert_int_eq(off->graph_launches, 0);
  ck_assert_int_eq(off->graph_captures, -1);
  const struct mxcts_pass_expect *fw = &st->structs[1].passes[0], *bw = &st->structs[1].passes[1];
  ck_assert_int_eq(fw->engine_ops, 67);
  ck_assert_int_eq(fw->nsizes, 67);
  ck_assert_int_eq(fw->sizes[0], 15);
  ck_assert_int_eq(fw->sizes[66], 10);
  ck_assert_str_eq(fw->summary,
                   "67 engine ops: 66x15 + 10; 67 CUDA graph launches; 0 CUDA graph captures");
  ck_assert(fw->compare & MXCTS_CMP_GRAPH_CAPTURES);
  ck_assert_int_eq(bw->graph_launches, -1);
  ck_assert(!(bw->compare & MXCTS_CMP_GRAPH_LAUNCHES));
  ck_assert_int_eq(bw->engine_ops, 1001); /* cap 0 bulks nothing: 1000 alone + 1 other */
  ck_assert_int_eq(bw->nsizes, 1000);
  const struct mxcts_pass_expect *cc = &st->structs[2].passes[0];
  ck_assert_int_eq(cc->nsizes, 3 + 2 + 2);
  ck_assert_int_eq(cc->sizes[2], 6);
  ck_assert_int_eq(cc->sizes[4], 4);
  ck_assert_int_eq(cc->sizes[6], 1);
  ck_assert(cc->compare & MXCTS_CMP_NAMES);
  ck_assert(mxcts_strv_contains(&cc->names, "[reverse,reverse,reverse]"));
  ck_assert(mxcts_strv_contains(&cc->names, "[reverse]"));
  const struct mxcts_pass_expect *imp = &st->structs[2].passes[1];
  ck_assert_uint_eq(imp->compare, MXCTS_CMP_ENGINE_OPS | MXCTS_CMP_BULKED_EVENTS);
  ck_assert_int_eq(imp->bulked_events, 2);
  /* who runs what */
  ck_assert(mxcts_suite_config_needs_rounds(&s, 0) && mxcts_suite_config_needs_profile(&s, 0));
  ck_assert(!mxcts_suite_config_needs_rounds(&s, 2) && mxcts_suite_config_needs_profile(&s, 2));
  /* --rounds */
  ck_assert_int_eq(mxcts_suite_set_rounds(&s, 10), 0);
  ck_assert_int_eq(s.rounds, 10);
  ck_assert_int_eq(s.max_rounds, 60);
  ck_assert_int_eq(mxcts_suite_set_rounds(&s, 80), 0); /* the budget grows with it */
  ck_assert_int_eq(s.max_rounds, 80);
  ck_assert_int_ne(mxcts_suite_set_rounds(&s, 0), 0);
  ck_assert_ptr_nonnull(strstr(mxcts_last_error(), "--rounds 0"));
  mxcts_suite_free(&s);
}
END_TEST

/* Each malformed suite: a JSON text and what the message must say. */
static const struct bad {
  const char *text, *message;
} bad[] = {
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\"", "malformed JSON"},
    {"[1, 2]", "expected an object"},
    {"{\"format\": 1, \"format\": 1}", "duplicate"},
    {"{\"format\": 1, \"name\": \"x\", \"colour\": 1}", "(top level): unknown field \"colour\""},
    {"{\"format\": 2, \"name\": \"x\"}", "format: format 2 is not supported"},
    {"{\"name\": \"x\"}", "missing required field \"format\""},
    {"{\"format\": 1, \"name\": \"x\", \"configs\": [], \"assertions\": []}", "missing required field \"workload\""},
    {"{\"format\": 1, \"name\": \"x y\", \"workload\": \"w\"}", "name: \"x y\" is not a valid suite name"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"requires\": [\"tpu\"]}",
     "requires: unknown requirement \"tpu\" (known: gpu)"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"requires\": \"gpu\"}", "requires"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"python\": \"../probe.py\"}",
     "python: \"../probe.py\" is not a plain file name"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"python\": 3}", "python: expected a string"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"rounds\": \"25\"}", "rounds: expected an integer, got string \"25\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"rounds\": 0}", "rounds: 0 is out of range"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"timed\": 1}", "timed: expected true or false"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"margin\": -1}", "margin: -1 is out of range"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"params\": [1]}", "params: expected an object"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"params\": {\"a\": [1]}}", "params.a: expected a string, number or boolean"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": []}", "configs: needs at least one config"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"env\": {}}]}", "configs[0]: missing required field \"id\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\", \"env\": {\"MXNET_X\": [1]}}]}",
     "configs[0].env.MXNET_X: expected a string, number or boolean, got array"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\", \"env\": {\"1BAD\": 1}}]}",
     "configs[0].env: \"1BAD\" is not a valid environment variable name"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\", \"envs\": {}}]}",
     "configs[0]: unknown field \"envs\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}, {\"id\": \"a\"}]}",
     "configs[1].id: duplicate config id \"a\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}]}", "missing required field \"assertions\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}], \"assertions\": [{\"id\": \"s\", \"type\": \"speed\"}]}",
     "assertions[0].type: unknown assertion type \"speed\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}], \"assertions\": [{\"type\": \"checks\"}]}",
     "assertions[0]: missing required field \"id\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}, {\"id\": \"b\"}],"
     " \"assertions\": [{\"id\": \"o\", \"type\": \"ordering\", \"slower\": [\"a\"], \"faster\": [\"c\"]}]}",
     "assertions[0].faster[0]: \"c\" names no config"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"o\", \"type\": \"ordering\", \"slower\": [\"a\"]}]}",
     "assertions[0]: missing required field \"faster\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"o\", \"type\": \"ordering\", \"slower\": [\"a\"], \"faster\": [\"a\"]}]}",
     "is both slower and faster"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"s\", \"type\": \"structure\", \"expect\": {\"a\": {\"forward\": {\"bulk\": [1000]}}}}]}",
     "assertions[0].expect.a.forward.bulk: expected [ops, cap]"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"s\", \"type\": \"structure\", \"expect\": {\"a\": {\"forward\": {\"bulk\": [10, \"15\"]}}}}]}",
     "assertions[0].expect.a.forward.bulk: expected an integer, got string"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"s\", \"type\": \"structure\", \"expect\": {\"a\": {\"forward\": {\"bulk\": [10, 1], \"single\": 3}}}}]}",
     "give one generator"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"s\", \"type\": \"structure\", \"expect\": {\"a\": {\"forward\": {\"extra\": 1}}}}]}",
     "assertions[0].expect.a.forward: unknown field \"extra\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"s\", \"type\": \"structure\", \"expect\": {\"a\": {\"forward\": {}}}}]}",
     "predicts nothing"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"s\", \"type\": \"structure\", \"expect\": {\"a\": {\"forward\": {\"single\": 3, \"compare\": [\"speed\"]}}}}]}",
     "compare: item 0 is not one of"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"s\", \"type\": \"structure\", \"expect\": {\"a\": {\"forward\": {\"single\": 3, \"compare\": [\"graph_launches\"]}}}}]}",
     "compares graph_launches, but none is given"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"s\", \"type\": \"structure\", \"expect\": {\"a\": {\"forward\": {\"bulk\": [30, 15], \"graph_launches\": 1, \"graph_captures\": 2}}}}]}",
     "assertions[0].expect.a.forward.graph_captures: 2 captures but only 1 launches"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"s\", \"type\": \"structure\", \"expect\": {\"a\": {\"forward\": {\"bulk\": [30, 15], \"graph_launches\": -1}}}}]}",
     "graph_launches: -1 is out of range"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"s\", \"type\": \"structure\", \"margin\": 1, \"expect\": {}}]}",
     "field \"margin\" does not belong to a structure assertion"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}, {\"id\": \"b\"}],"
     " \"assertions\": [{\"id\": \"c\", \"type\": \"checks\", \"configs\": [\"a\"]}]}",
     "config \"b\" is read by no assertion"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"c\", \"type\": \"checks\"}, {\"id\": \"c\", \"type\": \"checks\"}]}",
     "assertions[1].id: duplicate assertion id \"c\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"k\": 19, \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"c\", \"type\": \"checks\"}]}", "unknown field \"k\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"p0\": 0.8, \"p1\": 0.6, \"configs\": [{\"id\": \"a\"}, {\"id\": \"b\"}],"
     " \"assertions\": [{\"id\": \"o\", \"type\": \"ordering\", \"slower\": [\"a\"], \"faster\": [\"b\"]}]}",
     "SPRT: p1 = 0.6 (need p0 = 0.8 < p1 < 1)"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"rounds\": 30, \"max_rounds\": 20, \"configs\": [{\"id\": \"a\"}, {\"id\": \"b\"}],"
     " \"assertions\": [{\"id\": \"o\", \"type\": \"ordering\", \"slower\": [\"a\"], \"faster\": [\"b\"]}]}",
     "max_rounds: 20 is less than the first batch (rounds = 30)"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"alpha\": 0.5, \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"c\", \"type\": \"checks\"}]}", "alpha: 0.5 is out of range"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"timed\": false, \"configs\": [{\"id\": \"a\"}, {\"id\": \"b\"}],"
     " \"assertions\": [{\"id\": \"o\", \"type\": \"ordering\", \"slower\": [\"a\"], \"faster\": [\"b\"]}]}",
     "must be timed"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"v\", \"type\": \"value\"}]}", "assertions[0]: missing required field \"checks\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"v\", \"type\": \"value\", \"checks\": [\"c\"], \"in\": \"some\"}]}",
     "assertions[0].in: \"some\" is neither"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"c\", \"type\": \"checks\", \"depth\": \"deep\"}]}",
     "assertions[0].depth: \"deep\" is neither \"quick\" nor \"full\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"e\", \"type\": \"equal\", \"path\": \"values.*.digest\"}]}",
     "equal needs two configs or more"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"p\", \"type\": \"profile_file\", \"file\": \"../x\"}]}",
     "must be a plain file name"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}],"
     " \"assertions\": [{\"id\": \"o\", \"type\": \"ordering\", \"slower\": [\"a@\"], \"faster\": [\"a\"]}]}",
     "empty measure"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}, {\"id\": \"b\"}],"
     " \"assertions\": [{\"id\": \"g\", \"type\": \"greater\", \"path\": \"metrics.m\", \"greater\": [\"a\"]}]}",
     "assertions[0]: missing required field \"than\""},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}, {\"id\": \"b\"}],"
     " \"assertions\": [{\"id\": \"g\", \"type\": \"greater\", \"path\": \"metrics.m\", \"greater\": [\"a\", \"b\"],"
     " \"than\": [\"b\"]}]}",
     "config \"b\" is in both greater and than"},
    {"{\"format\": 1, \"name\": \"x\", \"workload\": \"w\", \"configs\": [{\"id\": \"a\"}, {\"id\": \"b\"}],"
     " \"assertions\": [{\"id\": \"g\", \"type\": \"greater\", \"path\": \"values.*.n\", \"greater\": [\"a\"],"
     " \"than\": [\"b\"]}]}",
     "assertions[0].path: \"values.*.n\" is not a JSON path to a number"},
};

START_TEST(test_malformed_suites) {
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    json_error_t err;
    json_t *doc = json_loads(bad[i].text, JSON_REJECT_DUPLICATES, &err);
    char msg[2048];
    struct mxcts_suite s;
    if (!doc) {
      snprintf(msg, sizeof msg, "x.json: malformed JSON: %s", err.text);
    } else {
      int rc = mxcts_suite_parse(doc, "x.json", false, &s);
      json_decref(doc);
      ck_assert_msg(rc != 0, "case %zu parsed: %s", i, bad[i].text);
      snprintf(msg, sizeof msg, "%s", mxcts_last_error());
      ck_assert_msg(strncmp(msg, "x.json: ", 8) == 0, "case %zu: message lacks the file: %s", i, msg);
    }
    ck_assert_msg(strstr(msg, bad[i].message), "case %zu: \"%s\" lacks \"%s\"", i, msg, bad[i].message);
  }
}
END_TEST

START_TEST(test_files) {
  const char *tmp = getenv("TMPDIR");
  char *dir = mxcts_xasprintf("%s/mxcts-suite.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char *path = mxcts_xasprintf("%s/other.json", dir);
  ck_assert_int_eq(mxcts_write_file(path, valid, strlen(valid)), 0);
  struct mxcts_suite s;
  ck_assert_int_ne(mxcts_suite_load(path, &s), 0);
  ck_assert_ptr_nonnull(strstr(mxcts_last_error(), "does not match the file name"));
  ck_assert_ptr_nonnull(strstr(mxcts_last_error(), path));
  const char *broken = "{\"format\": 1,\n \"name\": }";
  ck_assert_int_eq(mxcts_write_file(path, broken, strlen(broken)), 0);
  ck_assert_int_ne(mxcts_suite_load(path, &s), 0);
  ck_assert_msg(strstr(mxcts_last_error(), ":2:"), "%s", mxcts_last_error());
  struct mxcts_suite *all;
  size_t n;
  struct mxcts_strv only = {0};
  mxcts_strv_push(&only, "nosuch");
  ck_assert_int_ne(mxcts_suites_load_dir(dir, &only, &all, &n), 0);
  ck_assert_ptr_nonnull(strstr(mxcts_last_error(), "nosuch.json"));
  mxcts_strv_free(&only);
  remove(path);
  remove(dir);
  free(path);
  free(dir);
}
END_TEST

/* --assertion: the matching assertions stay with the configs they read,
 * in the parsed suite and in its source document. */
START_TEST(test_select) {
  struct mxcts_suite s;
  struct mxcts_strv pats = {0};
  ck_assert(parse_text(valid, "demo.json", &s) == 0);
  mxcts_strv_push(&pats, "demo/c");
  ck_assert_int_eq(mxcts_suite_select(&s, &pats), 1);
  ck_assert_int_eq(s.nasserts, 1);
  ck_assert_str_eq(s.asserts[0].id, "c");
  ck_assert_int_eq(s.nconfigs, 1);
  ck_assert_str_eq(s.configs[0].id, "s7");
  ck_assert_int_eq(s.asserts[0].configs[0], 0);
  ck_assert_int_eq(json_array_size(json_object_get(s.source, "configs")), 1);
  ck_assert_int_eq(json_array_size(json_object_get(s.source, "assertions")), 1);
  ck_assert(!s.timed); /* no ordering left */
  mxcts_suite_free(&s);
  mxcts_strv_free(&pats);
  ck_assert(parse_text(valid, "demo.json", &s) == 0);
  mxcts_strv_push(&pats, "other");
  mxcts_strv_push(&pats, "d?mo/[os]");
  ck_assert_int_eq(mxcts_suite_select(&s, &pats), 2);
  ck_assert_int_eq(s.nasserts, 2);
  ck_assert_int_eq(s.nconfigs, 3);
  ck_assert(s.timed);
  mxcts_suite_free(&s);
  mxcts_strv_free(&pats);
  ck_assert(parse_text(valid, "demo.json", &s) == 0);
  mxcts_strv_push(&pats, "demo/none*");
  ck_assert_int_eq(mxcts_suite_select(&s, &pats), 0); /* nothing: untouched */
  ck_assert_int_eq(s.nasserts, 3);
  mxcts_strv_free(&pats);
  ck_assert_int_eq(mxcts_suite_select(&s, &pats), 3); /* no patterns: everything */
  mxcts_suite_free(&s);
}
END_TEST

/* Every shipped suite parses, names its file, and reads every config. */
START_TEST(test_shipped_suites) {
  struct mxcts_suite *all;
  size_t n;
  int rc = mxcts_suites_load_dir(MXCTS_TEST_SRCDIR "/suites", NULL, &all, &n);
  ck_assert_msg(rc == 0, "%s", mxcts_last_error());
  ck_assert_int_ge(n, 8);
  /* Exactly the gpu-* suites need a GPU. */
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(all[i].needs_gpu == (strncmp(all[i].name, "gpu-", 4) == 0), "%s: needs_gpu %d",
                  all[i].name, all[i].needs_gpu);
  mxcts_suites_free(all, n);
}
END_TEST

int main(void) {
  Suite *s = suite_create("suite");
  TCase *tc = tcase_create("suite");
  tcase_add_test(tc, test_valid_suite);
  tcase_add_test(tc, test_malformed_suites);
  tcase_add_test(tc, test_files);
  tcase_add_test(tc, test_shipped_suites);
  tcase_add_test(tc, test_select);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
