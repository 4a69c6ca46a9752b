/*
 * harness/common/capi_needs.h: which MXNet C API functions each probe
 * workload calls, so that a library lacking one is judged `unsupported`
 * for exactly the assertions that need it (docs/probe-protocol.md,
 * "Capabilities").  mxcts-probe checks a workload's needs before it runs
 * it; mxcts lists them (`mxcts list`).
 *
 * A need is a function name, or alternatives separated by '|' (the first
 * one the library exports is used; docs/c-api.md lists the prototypes of
 * each): "MXNDArrayGetShapeEx|MXNDArrayGetShape".
 *
 * Ownership: every returned pointer is static.
 */
#ifndef MXCTS_CAPI_NEEDS_H
#define MXCTS_CAPI_NEEDS_H

#include <stdbool.h>
#include <stddef.h>

/* The needs of workload `name`, NULL-terminated; NULL for an unknown
 * workload.  They include the calls every probe process makes. */
const char *const *mxcts_workload_needs(const char *name);
/* What a structure run (--profile) needs on top of its workload's. */
const char *const *mxcts_profile_needs(void);

/* Whether the library has a need: `has(fn, ctx)` for each alternative. */
bool mxcts_need_met(const char *need, bool (*has)(const char *fn, void *ctx), void *ctx);

/* Append the needs of `needs` that are not met to `missing` (a list of
 * `cap` slots, *n used), each once.  Returns the new count. */
size_t mxcts_needs_missing(const char *const *needs, bool (*has)(const char *fn, void *ctx), void *ctx,
                           const char **missing, size_t *n, size_t cap);

#endif /* MXCTS_CAPI_NEEDS_H */
