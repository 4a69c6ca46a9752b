/*
 * harness/result.h: the probe's result file (docs/probe-protocol.md,
 * "Result object"), parsed and checked.
 *
 * Parsing is strict about the fields the judge reads (their types and
 * ranges) and lenient about the rest: unknown fields are kept (in `root`)
 * so that a newer probe can add some.  A malformed file is an error whose
 * message names the file and the JSON path; the judge turns it into an
 * `error` verdict.  Nothing in a result can crash or hang the parser.
 *
 * Ownership: struct mxcts_result owns all it points to, including one
 * reference to `root`; free it with mxcts_result_free.
 */
#ifndef MXCTS_RESULT_H
#define MXCTS_RESULT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common.h"

#define MXCTS_PROBE_VERSION 1

struct mxcts_pass_result {
  char *name;
  long engine_ops;           /* -1 when absent */
  long *sizes;               /* ops held by each engine op, in order; -1: unknown
                                (ImperativeBulk); has_sizes false when absent */
  size_t nsizes;
  bool has_sizes;
  long bulked_events;        /* -1 when absent */
  long graph_launches;       /* CUDA graph launches, -1 when absent */
  long graph_captures;       /* of which captures, -1 when absent */
  struct mxcts_strv names;   /* segment names; has_names false when absent */
  bool has_names;
};

struct mxcts_check_result {
  char *name;
  bool pass;
  char *detail;              /* "" when absent */
};

struct mxcts_result {
  char *file;
  json_t *root;
  char *status;              /* "ok", "error" or "usage" */
  char *error;               /* the implementation's error, rendered; NULL if none */
  bool has_median;
  double median;             /* timing.median */
  char *unit;                /* timing.unit ("ms" when absent) */
  bool has_structure;
  struct mxcts_pass_result *passes;
  size_t npasses;
  struct mxcts_check_result *checks;
  size_t nchecks;
};

/* Parse a result document (`file` names it in messages); takes a new
 * reference to root.  On failure *out is empty. */
int mxcts_result_parse(json_t *root, const char *file, struct mxcts_result *out);
/* Read and parse a result file. */
int mxcts_result_load(const char *path, struct mxcts_result *out);
void mxcts_result_free(struct mxcts_result *r);

/* The pass of that name, or NULL. */
const struct mxcts_pass_result *mxcts_result_pass(const struct mxcts_result *r, const char *name);
/* The check of that name, or NULL. */
const struct mxcts_check_result *mxcts_result_check(const struct mxcts_result *r,
                                                    const char *name);
/* A number at a JSON path (mxcts_json_path); false when absent or not a
 * finite number. */
bool mxcts_result_number(const struct mxcts_result *r, const char *path, double *out);

#endif /* MXCTS_RESULT_H */
