/* The JSON helpers of the harness (common/jsonv.h). */
#include "common/jsonv.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- documents ---------------------------------------------------------------------------- */

int mxcts_json_load(const char *path, json_t **out) { return mxcts_json_load_flags(path, 0, out); }

int mxcts_json_load_flags(const char *path, size_t flags, json_t **out) {
  json_error_t err;
  FILE *f = mxcts_open_regular(path);
  *out = NULL;
  if (!f) return MXR_EINVAL;
  *out = json_loadf(f, JSON_REJECT_DUPLICATES | flags, &err);
  fclose(f);
  if (*out) return 0;
  if (err.line < 1) return mxcts_set_error(MXR_EINVAL, "%s: %s", path, err.text);
  return mxcts_set_error(MXR_EINVAL, "%s:%d:%d: malformed JSON: %s", path, err.line,
                         err.column, err.text);
}

int mxcts_json_save(const char *path, const json_t *doc) {
  char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  if (!s) return mxcts_set_error(MXR_EINVAL, "%s: cannot serialise the document", path);
  struct mxcts_buf b = {0};
  mxcts_buf_puts(&b, s);
  mxcts_buf_puts(&b, "\n");
  free(s);
  int rc = mxcts_write_file(path, b.s, b.len);
  mxcts_buf_free(&b);
  return rc;
}

json_t *mxcts_json_path(json_t *root, const char *path) {
  json_t *cur = root;
  const char *p = path;
  while (cur && *p) {
    if (*p == '[') {
      char *end;
      long i = strtol(p + 1, &end, 10);
      if (*end != ']' || !json_is_array(cur) || i < 0) return NULL;
      cur = json_array_get(cur, (size_t)i);
      p = end + 1;
    } else {
      if (*p == '.') p++;
      size_t n = strcspn(p, ".[");
      if (n == 0 || !json_is_object(cur)) return NULL;
      char *key = mxcts_xstrndup(p, n);
      cur = json_object_get(cur, key);
      free(key);
      p += n;
    }
  }
  return cur;
}

const char *mxcts_json_type_name(const json_t *v) {
  if (!v) return "nothing";
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "object";
  case JSON_ARRAY: return "array";
  case JSON_STRING: return "string";
  case JSON_INTEGER: return "integer";
  case JSON_REAL: return "number";
  case JSON_TRUE:
  case JSON_FALSE: return "boolean";
  case JSON_NULL: return "null";
  }
  return "?";
}

json_t *mxcts_json_text(const char *s) {
  char *clean = mxcts_clean_text(s);
  json_t *v = json_string(clean);
  free(clean);
  return v ? v : json_string("");
}

char *mxcts_json_brief(const json_t *v) {
  if (!v) return mxcts_xstrdup("(missing)");
  char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
  if (!s) return mxcts_xstrdup("?");
  if (strlen(s) > 60) strcpy(s + 56, "...");
  char *r = mxcts_xstrdup(s);
  free(s);
  return r;
}

json_t *mxcts_json_real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

double mxcts_json_number_or_nan(const json_t *obj, const char *key) {
  json_t *v = obj ? json_object_get(obj, key) : NULL;
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* --- validating reads ---------------------------------------------------------------- */

char *mxcts_jpath_key(const char *base, const char *key) {
  if (!base || !*base) return mxcts_xstrdup(key);
  return mxcts_xasprintf("%s.%s", base, key);
}

char *mxcts_jpath_index(const char *base, size_t i) {
  return mxcts_xasprintf("%s[%zu]", base ? base : "", i);
}

static int vfail(const struct mxcts_jloc *at, const char *key, const char *fmt, va_list ap) {
  struct mxcts_buf b = {0};
  mxcts_buf_printf(&b, "%s: ", at->file ? at->file : "(input)");
  if (key && at->path && *at->path) mxcts_buf_printf(&b, "%s.%s: ", at->path, key);
  else if (key) mxcts_buf_printf(&b, "%s: ", key);
  else if (at->path && *at->path) mxcts_buf_printf(&b, "%s: ", at->path);
  else mxcts_buf_puts(&b, "(top level): ");
  mxcts_buf_vprintf(&b, fmt, ap);
  mxcts_set_error(MXR_EINVAL, "%s", mxcts_buf_str(&b));
  mxcts_buf_free(&b);
  return MXR_EINVAL;
}

int mxcts_jfail(const struct mxcts_jloc *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = vfail(at, NULL, fmt, ap);
  va_end(ap);
  return rc;
}

int mxcts_jfail_key(const struct mxcts_jloc *at, const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = vfail(at, key, fmt, ap);
  va_end(ap);
  return rc;
}

static int wrong_type(const struct mxcts_jloc *at, const char *key, json_t *v, const char *want) {
  char *brief = mxcts_json_brief(v);
  int rc = mxcts_jfail_key(at, key, "expected %s, got %s %s", want, mxcts_json_type_name(v), brief);
  free(brief);
  return rc;
}

int mxcts_jcheck_object(const struct mxcts_jloc *at, json_t *v, const char *const *known) {
  if (!json_is_object(v)) {
    char *brief = mxcts_json_brief(v);
    int rc = mxcts_jfail(at, "expected an object, got %s %s", mxcts_json_type_name(v), brief);
    free(brief);
    return rc;
  }
  const char *key;
  json_t *member;
  json_object_foreach(v, key, member) {
    bool ok = false;
    for (size_t i = 0; known[i] && !ok; i++) ok = strcmp(known[i], key) == 0;
    if (ok) continue;
    struct mxcts_buf list = {0};
    for (size_t i = 0; known[i]; i++) mxcts_buf_printf(&list, "%s%s", i ? ", " : "", known[i]);
    int rc = mxcts_jfail(at, "unknown field \"%s\" (known fields: %s)", key, mxcts_buf_str(&list));
    mxcts_buf_free(&list);
    return rc;
  }
  return 0;
}

static int member(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                  json_t **v) {
  *v = json_object_get(obj, key);
  if (!*v && required) return mxcts_jfail(at, "missing required field \"%s\"", key);
  return 0;
}

int mxcts_jget_string(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                      char **out) {
  json_t *v;
  int rc = member(at, obj, key, required, &v);
  if (rc || !v) return rc;
  if (!json_is_string(v)) return wrong_type(at, key, v, "a string");
  *out = mxcts_xstrdup(json_string_value(v));
  return 0;
}

int mxcts_jget_bool(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                    bool *out) {
  json_t *v;
  int rc = member(at, obj, key, required, &v);
  if (rc || !v) return rc;
  if (!json_is_boolean(v)) return wrong_type(at, key, v, "true or false");
  *out = json_is_true(v);
  return 0;
}

static int as_long(const struct mxcts_jloc *at, const char *key, json_t *v, long min, long max,
                   long *out) {
  if (!json_is_integer(v)) return wrong_type(at, key, v, "an integer");
  json_int_t x = json_integer_value(v);
  if (x < min || x > max)
    return mxcts_jfail_key(at, key, "%lld is out of range [%ld, %ld]", (long long)x, min, max);
  *out = (long)x;
  return 0;
}

int mxcts_jget_long(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                    long min, long max, long *out) {
  json_t *v;
  int rc = member(at, obj, key, required, &v);
  if (rc || !v) return rc;
  return as_long(at, key, v, min, max, out);
}

int mxcts_jas_long(const struct mxcts_jloc *at, json_t *v, long min, long max, long *out) {
  return as_long(at, NULL, v, min, max, out);
}

int mxcts_jget_double(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                      double min, double max, double *out) {
  json_t *v;
  int rc = member(at, obj, key, required, &v);
  if (rc || !v) return rc;
  if (!json_is_number(v)) return wrong_type(at, key, v, "a number");
  double x = json_number_value(v);
  if (!isfinite(x) || x < min || x > max)
    return mxcts_jfail_key(at, key, "%g is out of range [%g, %g]", x, min, max);
  *out = x;
  return 0;
}

int mxcts_jget_typed(const struct mxcts_jloc *at, json_t *obj, const char *key, bool required,
                     json_type type, json_t **out) {
  json_t *v;
  int rc = member(at, obj, key, required, &v);
  if (rc || !v) return rc;
  if (json_typeof(v) != type)
    return wrong_type(at, key, v, type == JSON_OBJECT ? "an object" : "an array");
  *out = v;
  return 0;
}

int mxcts_jas_scalar_string(const struct mxcts_jloc *at, json_t *v, char **out) {
  switch (json_typeof(v)) {
  case JSON_STRING: *out = mxcts_xstrdup(json_string_value(v)); return 0;
  case JSON_INTEGER: *out = mxcts_xasprintf("%lld", (long long)json_integer_value(v)); return 0;
  case JSON_REAL: *out = mxcts_xasprintf("%.15g", json_real_value(v)); return 0;
  case JSON_TRUE: *out = mxcts_xstrdup("1"); return 0;
  case JSON_FALSE: *out = mxcts_xstrdup("0"); return 0;
  default: return wrong_type(at, NULL, v, "a string, number or boolean");
  }
}
