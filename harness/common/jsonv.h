/*
 * harness/common/jsonv.h: the JSON part of common/ (it needs Jansson, so it
 * is a library of its own that the oracle does not link): loading, saving
 * and querying documents, and validating reads of them (suite files, probe
 * results, plans, results files).
 *
 * Every function names the place of a problem as "FILE: PATH: what", where
 * PATH is the JSON path inside the document ("configs[2].env.MXNET_X", or
 * "(top level)").  On success the value is stored; on failure the function
 * returns MXR_EINVAL with that message (common/common.h) and leaves *out alone.
 *
 * Ownership: `json_t *` results are borrowed from the parent document;
 * `char *` results are copies the caller frees; paths built with
 * mxcts_jpath_key / mxcts_jpath_index are the caller's.
 */
#ifndef MXCTS_JSONV_H
#define MXCTS_JSONV_H

#include <stdbool.h>

#include <jansson.h>

#include "common/common.h"

/* --- documents --------------------------------------------------------------- */
/* Load a JSON file; on error the message names the file, line and column. */
int mxcts_json_load(const char *path, json_t **out);
/* The same with extra jansson decoding flags (JSON_DECODE_INT_AS_REAL for
 * traces: MXNet writes thread ids as unsigned 64-bit hashes). */
int mxcts_json_load_flags(const char *path, size_t flags, json_t **out);
/* Write a JSON document (indent 2, keys in insertion order). */
int mxcts_json_save(const char *path, const json_t *doc);
/* Look up a dotted path with [i] indexes ("structure.passes[0].engine_ops").
 * Returns a borrowed reference or NULL. */
json_t *mxcts_json_path(json_t *root, const char *path);
/* The JSON type's name for messages ("string", "integer", ...). */
const char *mxcts_json_type_name(const json_t *v);
/* A JSON string of mxcts_clean_text(s) (common.h; new reference; "" for NULL), so
 * text from files can never make it fail. */
json_t *mxcts_json_text(const char *s);
/* A short rendering of a value for messages (caller frees). */
char *mxcts_json_brief(const json_t *v);
/* A JSON real of v, or null when v is not finite (new reference). */
json_t *mxcts_json_real_or_null(double v);
/* The number obj[key] (obj may be NULL), or NaN when it is absent or not a
 * number. */
double mxcts_json_number_or_nan(const json_t *obj, const char *key);

/* --- validating reads --------------------------------------------------- */
/* Where in which document: the prefix of every message. */
struct mxcts_jloc {
  const char *file;
  const char *path; /* "" for the top level */
};

/* "base.key" ("key" at the top level) and "base[i]"; caller frees. */
char *mxcts_jpath_key(const char *base, const char *key);
char *mxcts_jpath_index(const char *base, size_t i);

/* Fail with "FILE: PATH: <message>". */
int mxcts_jfail(const struct mxcts_jloc *at, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Fail with "FILE: PATH.key: <message>" (the member of an object). */
int mxcts_jfail_key(const struct mxcts_jloc *at, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* `v` must be an object with no members outside the NULL-terminated
 * `known` list. */
int mxcts_jcheck_object(const struct mxcts_jloc *at, json_t *v, const char *const *known);

/* Members of an object.  `required` false: a missing member leaves *out
 * unchanged and returns 0. */
int mxcts_jget_string(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                      char **out);
int mxcts_jget_bool(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                    bool *out);
int mxcts_jget_long(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                    long min, long max, long *out);
int mxcts_jget_double(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                      double min, double max, double *out);
/* A member of the given JSON type (JSON_OBJECT or JSON_ARRAY). */
int mxcts_jget_typed(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                     json_type type, json_t **out);

/* A value (not a member) as a long in [min, max]. */
int mxcts_jas_long(const struct mxcts_jloc *at, json_t *v, long min, long max, long *out);
/* A scalar (string, integer, real, boolean) rendered as the string a command
 * line would carry: "15", "0.5", "1" / "0" for booleans; caller frees. */
int mxcts_jas_scalar_string(const struct mxcts_jloc *at, json_t *v, char **out);

#endif /* MXCTS_JSONV_H */
