/*
 * libFuzzer target for plan files (harness/run/plan_load.c): `mxcts judge`,
 * `exec` and `run --resume` read OUT/plan.json, which a user can edit,
 * truncate or copy from another version, so nothing in it may crash or
 * hang mxcts.
 *
 * Each input is written as DIR/plan.json and loaded.  A failure must be a
 * negative status whose message names the file; a success must give a plan
 * whose jobs point at suites and configs it holds, with a directory and a
 * program each.  Nothing is run or written from the plan.
 *
 * Build and run: build-aux/run_fuzz.sh --target plan (docs/harness.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "run/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *msg) {
  fprintf(stderr, "fuzz_plan: %s (%s)\n", what, msg);
  abort();
}

static char plan_path[96];

static void check_plan(const struct mxcts_plan *p) {
  for (size_t i = 0; i < p->njobs; i++) {
    const struct mxcts_job *j = &p->jobs[i];
    if (j->suite >= p->nsuites) die("a job of no suite", j->id);
    if (j->config >= p->suites[j->suite].nconfigs) die("a job of no config", j->id);
    if (!j->dir || !j->argv.n || !j->argv.v[0]) die("a job without a directory or program", j->id);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!plan_path[0]) {
    const char *tmp = getenv("TMPDIR");
    char dir[64];
    snprintf(dir, sizeof dir, "%s/fuzz-plan-%ld", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    mkdir(dir, 0777);
    snprintf(plan_path, sizeof plan_path, "%s/plan.json", dir);
  }
  if (mxcts_write_file(plan_path, (const char *)data, size)) die("cannot write", plan_path);
  struct mxcts_plan p;
  int rc = mxcts_plan_load(plan_path, &p);
  if (rc) {
    if (rc >= 0) die("a failure with a non-negative status", mxcts_last_error());
    if (!strstr(mxcts_last_error(), "plan.json")) die("a message not naming the file", mxcts_last_error());
    return 0;
  }
  check_plan(&p);
  mxcts_plan_free(&p);
  return 0;
}
