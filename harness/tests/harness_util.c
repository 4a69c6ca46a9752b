/* Helpers of the harness tests (harness_util.h). */
#include "harness_util.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "judge/judge.h"
#include "run/run.h"
#include "session/session.h"

char *hu_tmpdir(void) {
  const char *tmp = getenv("TMPDIR");
  char *templ = mxcts_xasprintf("%s/mxcts-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(templ));
  return templ;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

void hu_cleanup(char *dir) {
  if (!getenv("MXCTS_TEST_KEEP")) nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
  free(dir);
}

char *hu_write_suite(const char *dir, const char *name, const char *text) {
  char *path = mxcts_xasprintf("%s/%s.json", dir, name);
  ck_assert_int_eq(mxcts_write_file(path, text, strlen(text)), 0);
  return path;
}

void hu_options(struct mxcts_options *o, const char *dir, uint64_t seed) {
  memset(o, 0, sizeof *o);
  o->impl = mxcts_xstrdup(MXCTS_TEST_BUILDDIR "/harness/tests/fake_probe");
  o->impl_name = mxcts_xstrdup("fake");
  o->probe = mxcts_xstrdup(MXCTS_TEST_BUILDDIR "/harness/tests/fake_probe");
  o->suites_dir = mxcts_xstrdup(dir);
  o->out = mxcts_xasprintf("%s/out", dir);
  o->seed = seed;
  o->jobs = 1;
  o->grace_s = 0.2;
  o->lock_file = mxcts_xasprintf("%s/lock", dir);
}

json_t *hu_run_opts(struct mxcts_options *o) {
  struct mxcts_plan p;
  json_t *results = NULL;
  int rc = mxcts_plan_build(o, &p);
  ck_assert_msg(rc == 0, "plan: %s", mxcts_last_error());
  rc = mxcts_session_run(&p, false, NULL, &results);
  ck_assert_msg(rc == 0, "run: %s", mxcts_last_error());
  mxcts_plan_free(&p);
  mxcts_options_free(o);
  return results;
}

json_t *hu_run(const char *dir, uint64_t seed, int jobs) {
  struct mxcts_options o;
  hu_options(&o, dir, seed);
  o.jobs = jobs;
  return hu_run_opts(&o);
}

json_t *hu_assertion(const json_t *results, const char *name) {
  size_t i, k;
  json_t *s, *a;
  json_array_foreach(json_object_get(results, "suites"), i, s) {
    json_array_foreach(json_object_get(s, "assertions"), k, a) {
      if (!strcmp(json_string_value(json_object_get(a, "name")), name)) return a;
    }
  }
  return NULL;
}

const char *hu_verdict(const json_t *results, const char *name) {
  const char *v = json_string_value(json_object_get(hu_assertion(results, name), "verdict"));
  return v ? v : "";
}
