/*
 * libFuzzer target for the parsers of what a probe process leaves behind:
 * its result file (harness/run/result.c) and the profiler trace the
 * implementation wrote (harness/probe/probe_trace.c).  Both come from code under
 * test, so nothing in them may crash or hang mxcts.
 *
 * The input is parsed as a result document: a success must give a result
 * whose lookups work; a failure a negative status and a message naming the
 * file.  The same bytes are then written to a file and read as a trace, in
 * one pass and as three marked passes: a failure must say why, naming the
 * file; a success gives counts that agree with the sizes it lists.
 *
 * Build and run: build-aux/run_fuzz.sh --target result (docs/harness.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/common.h"
#include "probe/probe.h"
#include "run/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *msg) {
  fprintf(stderr, "fuzz_result: %s (%s)\n", what, msg);
  abort();
}

static void fuzz_result(const uint8_t *data, size_t size) {
  json_error_t jerr;
  json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
  if (!doc) return;
  struct mxcts_result r;
  int rc = mxcts_result_parse(doc, "result.json", &r);
  json_decref(doc);
  if (rc) {
    if (rc >= 0) die("a failure with a non-negative status", mxcts_last_error());
    if (!strstr(mxcts_last_error(), "result.json")) die("a message not naming the file", mxcts_last_error());
    return;
  }
  double x;
  (void)mxcts_result_pass(&r, "forward");
  (void)mxcts_result_check(&r, "output_is_flipped_input");
  (void)mxcts_result_number(&r, "timing.median", &x);
  (void)mxcts_result_number(&r, "values.output.digest", &x);
  for (size_t i = 0; i < r.npasses; i++)
    if (r.passes[i].has_sizes && r.passes[i].nsizes && !r.passes[i].sizes) die("sizes missing", r.passes[i].name);
  mxcts_result_free(&r);
}

static char trace_path[64];

static void check_structure(const struct mxcts_pass_structure *s) {
  if (s->engine_ops < 0 || s->segments < 0 || s->bulks < 0 || s->helper_ops < 0)
    die("negative counts", trace_path);
  if (s->num_names != s->engine_ops) die("names and engine ops disagree", trace_path);
  for (int i = 0; i < s->engine_ops; i++)
    if (s->segment_sizes[i] < -1 || s->segment_sizes[i] == 0) die("a segment size below -1 or 0", s->names[i]);
}

static void fuzz_trace(const uint8_t *data, size_t size) {
  if (!trace_path[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(trace_path, sizeof trace_path, "%s/fuzz-trace-%ld.json", tmp && *tmp ? tmp : "/tmp",
             (long)getpid());
  }
  if (mxcts_write_file(trace_path, (const char *)data, size)) die("cannot write", trace_path);
  char err[512];
  struct mxcts_pass_structure one, three[3];
  if (mxcts_trace_read(trace_path, &one, err, sizeof err) == 0) {
    check_structure(&one);
    mxcts_trace_free(&one);
  } else if (!strstr(err, trace_path)) {
    die("a trace error not naming the file", err);
  }
  if (mxcts_trace_read_passes(trace_path, three, 3, err, sizeof err) == 0) {
    for (int i = 0; i < 3; i++) {
      check_structure(&three[i]);
      mxcts_trace_free(&three[i]);
    }
  } else if (!strstr(err, trace_path)) {
    die("a trace error not naming the file", err);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_result(data, size);
  fuzz_trace(data, size);
  return 0;
}
