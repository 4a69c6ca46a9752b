/*
 * harness/expect.h: per-implementation expectation files
 * (suites/expectations/<impl>.txt; format in docs/suites.md).
 *
 * One entry a line:  KIND PATTERN REASON...
 *   KIND     fail   the assertion is known to fail: a failing verdict
 *                   (fail, crash, timeout, error) becomes xfail, a pass
 *                   becomes xpass (reported, and counted as a failure so the
 *                   baseline stays tight)
 *            flaky  it may fail: a failing verdict becomes xfail, a pass
 *                   stays a pass
 *            skip   it is not judged (verdict skip); a pattern that covers a
 *                   whole suite ("numerics", or "numerics/" followed by "*") does not run it
 *   PATTERN  SUITE/ASSERTION, each part an fnmatch(3) glob; "SUITE" alone
 *            means every assertion of SUITE
 *   REASON   the rest of the line: why (required)
 * Blank lines and lines starting with '#' are ignored.
 *
 * Ownership: struct mxcts_expectations owns its entries; the pointers that
 * mxcts_expect_match returns live as long as it.
 */
#ifndef MXCTS_EXPECT_H
#define MXCTS_EXPECT_H

#include <stdbool.h>
#include <stddef.h>

enum mxcts_expect_kind { MXCTS_EXPECT_FAIL, MXCTS_EXPECT_FLAKY, MXCTS_EXPECT_SKIP };

struct mxcts_expect_entry {
  enum mxcts_expect_kind kind;
  char *suite;      /* glob */
  char *assertion;  /* glob ("*" when the line named the suite alone) */
  char *reason;
  int line;
  bool used;        /* set by mxcts_expect_match when it matched */
};

struct mxcts_expectations {
  char *file;       /* NULL when there is none */
  struct mxcts_expect_entry *v;
  size_t n;
};

const char *mxcts_expect_kind_name(enum mxcts_expect_kind k);

/* Parse `text` (the contents of `file`, named in messages as FILE:LINE). */
int mxcts_expect_parse(const char *text, const char *file, struct mxcts_expectations *out);
int mxcts_expect_load(const char *path, struct mxcts_expectations *out);
void mxcts_expect_free(struct mxcts_expectations *e);

/* The first entry matching suite/assertion, or NULL; marks it used. */
const struct mxcts_expect_entry *mxcts_expect_match(struct mxcts_expectations *e,
                                                    const char *suite, const char *assertion);
/* A skip entry that covers the whole suite (the suite is not run), or NULL. */
const struct mxcts_expect_entry *mxcts_expect_skips_suite(struct mxcts_expectations *e,
                                                          const char *suite);

#endif /* MXCTS_EXPECT_H */
