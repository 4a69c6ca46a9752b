/*
 * Helpers of the harness tests: temporary directories, suite files written
 * from text, and whole runs against the fake probe (fake_probe.c).
 * Everything returned is the caller's (free / json_decref).
 */
#ifndef MXCTS_TESTS_HARNESS_UTIL_H
#define MXCTS_TESTS_HARNESS_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "run/run.h"

/* A fresh directory under ${TMPDIR:-/tmp}. */
char *hu_tmpdir(void);
/* Remove it and everything in it, and free the string. */
void hu_cleanup(char *dir);
/* Write DIR/NAME.json with `text`; returns the path. */
char *hu_write_suite(const char *dir, const char *name, const char *text);
/* Options for a run of the suites in `dir` with the fake probe. */
void hu_options(struct mxcts_options *o, const char *dir, uint64_t seed);
/* Plan, run, judge (with one rerun) the suites in `dir`; NULL on an internal
 * error (the test fails with the message). */
json_t *hu_run(const char *dir, uint64_t seed, int jobs);
/* The same with a caller-built options struct. */
json_t *hu_run_opts(struct mxcts_options *o);
/* The assertion object "suite/id" of a results document, or NULL. */
json_t *hu_assertion(const json_t *results, const char *name);
/* Its verdict ("" when missing). */
const char *hu_verdict(const json_t *results, const char *name);

#endif /* MXCTS_TESTS_HARNESS_UTIL_H */
