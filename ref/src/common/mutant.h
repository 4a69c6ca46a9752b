/*
 * Internal: planted bugs for `make check-mutants` (docs/harness.md,
 * "Mutation testing").  A mutation point reads
 *
 *     if (MXR_MUTANT("wait-to-read-early")) return 0;
 *
 * In a build configured with --enable-mutants, MXR_MUTANT(name) is true
 * when the variable MXR_MUTANT names that mutant (read once per process);
 * harness/tests/mutants.txt lists every name and the assertion that must
 * catch it.  In every other build the macro is the constant false, so the
 * compiler drops the bug and the test costs nothing.
 */
#ifndef MXR_COMMON_MUTANT_H
#define MXR_COMMON_MUTANT_H

#include <stdbool.h>

#include "config.h"

#ifdef MXR_MUTANTS
/* Whether `name` is the mutant this process runs (thread-safe). */
bool mxr__mutant(const char *name);
#define MXR_MUTANT(name) mxr__mutant(name)
#else
#define MXR_MUTANT(name) false
#endif

#endif /* MXR_COMMON_MUTANT_H */
