/*
 * libFuzzer target for the suite-file parser (harness/suite/suite.c,
 * suite_structure.c) and the expectation-file parser (expect.c).
 *
 * Each input is read as JSON the way mxcts reads a suite (duplicate keys
 * rejected); a document that parses must be a suite whose configs, rounds
 * and k are consistent, and survive a --rounds override; one that does not
 * must fail with a negative status and a message naming the file.  The same
 * bytes are also parsed as an expectation file (it is text), with the same
 * rule for failures.
 *
 * Build and run: build-aux/run_fuzz.sh --target suite (docs/harness.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/common.h"
#include "suite/suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what) {
  fprintf(stderr, "fuzz_suite: %s (last error: %s)\n", what, mxcts_last_error());
  abort();
}

static void check_failure(int rc, const char *file) {
  if (rc >= 0) die("a failure with a non-negative status");
  if (!strstr(mxcts_last_error(), file)) die("a failure message that does not name the file");
}

static void check_suite(struct mxcts_suite *s) {
  if (!s->name || !s->workload || s->nconfigs == 0) die("a parsed suite without name/configs");
  if (s->rounds < 1 || (s->timed && (s->max_rounds < s->rounds || mxcts_sprt_check(&s->sprt))))
    die("a parsed suite with R < 1, or a timed one with a budget below R or bad SPRT settings");
  for (size_t c = 0; c < s->nconfigs; c++) {
    (void)mxcts_suite_config_needs_rounds(s, c);
    (void)mxcts_suite_config_needs_profile(s, c);
  }
  for (size_t a = 0; a < s->nasserts; a++)
    for (size_t i = 0; i < s->asserts[a].nconfigs; i++)
      if (s->asserts[a].configs[i] >= s->nconfigs) die("an assertion reading a config that is not there");
  int rc = mxcts_suite_set_rounds(s, 25);
  if (rc) check_failure(rc, s->file);
  else if (s->rounds != 25 || s->max_rounds < 25)
    die("--rounds 25 gave an inconsistent suite");
}

static void fuzz_expectations(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return;
  memcpy(text, data, size);
  text[size] = '\0';
  struct mxcts_expectations e;
  int rc = mxcts_expect_parse(text, "fuzz.txt", &e);
  if (rc) check_failure(rc, "fuzz.txt");
  else {
    (void)mxcts_expect_match(&e, "suite", "assertion");
    (void)mxcts_expect_skips_suite(&e, "suite");
    mxcts_expect_free(&e);
  }
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_expectations(data, size);
  json_error_t jerr;
  json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
  if (!doc) return 0;
  struct mxcts_suite s;
  int rc = mxcts_suite_parse(doc, "fuzz.json", false, &s);
  json_decref(doc);
  if (rc) {
    check_failure(rc, "fuzz.json");
    return 0;
  }
  check_suite(&s);
  mxcts_suite_free(&s);
  return 0;
}
