/*
 * harness/suite/suite_internal.h: what suite.c and suite_structure.c share.
 * Not part of the harness API (suite/suite.h is).
 */
#ifndef MXCTS_SUITE_INTERNAL_H
#define MXCTS_SUITE_INTERNAL_H

#include "common/jsonv.h"
#include "suite/suite.h"

/* Append the configs a reference ("ID", "group:G", "tag:T") names to
 * *idx / *n without duplicates; no match is an error naming `at`. */
int mxcts__suite_resolve_ref(const struct mxcts_jloc *at, const struct mxcts_suite *s,
                             const char *ref, size_t **idx, size_t *n);

/* The "expect" member of a structure assertion. */
int mxcts__suite_parse_structure(const struct mxcts_jloc *at, json_t *v,
                                 const struct mxcts_suite *s, struct mxcts_assertion *a);

void mxcts__suite_free_pass(struct mxcts_pass_expect *p);

#endif /* MXCTS_SUITE_INTERNAL_H */
