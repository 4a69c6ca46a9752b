/* The probe's result file (run/run.h). */
#include "run/run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonv.h"

#define MAX_COUNT 1000000000L

static int parse_sizes(const struct mxcts_jloc *at, json_t *a, struct mxcts_pass_result *p) {
  p->sizes = mxcts_xcalloc(json_array_size(a), sizeof *p->sizes);
  p->has_sizes = true;
  size_t i;
  json_t *x;
  json_array_foreach(a, i, x) {
    char *pi = mxcts_jpath_index(at->path, i);
    struct mxcts_jloc xat = {at->file, pi};
    int rc = mxcts_jas_long(&xat, x, -1, MAX_COUNT, &p->sizes[i]);
    free(pi);
    if (rc) return rc;
    p->nsizes = i + 1;
  }
  return 0;
}

static int parse_names(const struct mxcts_jloc *at, json_t *a, struct mxcts_pass_result *p) {
  p->has_names = true;
  size_t i;
  json_t *x;
  json_array_foreach(a, i, x) {
    if (!json_is_string(x)) {
      char *pi = mxcts_jpath_index(at->path, i);
      struct mxcts_jloc xat = {at->file, pi};
      int rc = mxcts_jfail(&xat, "expected a string, got %s", mxcts_json_type_name(x));
      free(pi);
      return rc;
    }
    mxcts_strv_push(&p->names, json_string_value(x));
  }
  return 0;
}

static int parse_pass(const struct mxcts_jloc *at, json_t *v, struct mxcts_pass_result *p) {
  p->engine_ops = p->bulked_events = p->graph_launches = p->graph_captures = -1;
  if (!json_is_object(v)) return mxcts_jfail(at, "expected an object, got %s", mxcts_json_type_name(v));
  json_t *sizes = NULL, *names = NULL;
  int rc = mxcts_jget_string(at, v, "name", true, &p->name);
  if (!rc) rc = mxcts_jget_long(at, v, "engine_ops", false, 0, MAX_COUNT, &p->engine_ops);
  if (!rc) rc = mxcts_jget_long(at, v, "bulked_events", false, 0, MAX_COUNT, &p->bulked_events);
  if (!rc) rc = mxcts_jget_long(at, v, "graph_launches", false, 0, MAX_COUNT, &p->graph_launches);
  if (!rc) rc = mxcts_jget_long(at, v, "graph_captures", false, 0, MAX_COUNT, &p->graph_captures);
  if (!rc) rc = mxcts_jget_typed(at, v, "segment_sizes", false, JSON_ARRAY, &sizes);
  if (!rc) rc = mxcts_jget_typed(at, v, "names", false, JSON_ARRAY, &names);
  char *sp = mxcts_jpath_key(at->path, "segment_sizes");
  struct mxcts_jloc sat = {at->file, sp};
  if (!rc && sizes) rc = parse_sizes(&sat, sizes, p);
  free(sp);
  char *np = mxcts_jpath_key(at->path, "names");
  struct mxcts_jloc nat = {at->file, np};
  if (!rc && names) rc = parse_names(&nat, names, p);
  free(np);
  return rc;
}

static int parse_structure(const struct mxcts_jloc *at, json_t *root, struct mxcts_result *r) {
  json_t *st = NULL, *passes = NULL;
  if (json_is_null(json_object_get(root, "structure"))) return 0;
  int rc = mxcts_jget_typed(at, root, "structure", false, JSON_OBJECT, &st);
  if (rc || !st) return rc;
  struct mxcts_jloc sat = {at->file, "structure"};
  rc = mxcts_jget_typed(&sat, st, "passes", true, JSON_ARRAY, &passes);
  if (rc) return rc;
  r->has_structure = true;
  r->passes = mxcts_xcalloc(json_array_size(passes), sizeof *r->passes);
  size_t i;
  json_t *v;
  json_array_foreach(passes, i, v) {
    char *pi = mxcts_jpath_index("structure.passes", i);
    struct mxcts_jloc pat = {at->file, pi};
    rc = parse_pass(&pat, v, &r->passes[i]);
    r->npasses = i + 1;
    for (size_t j = 0; !rc && j < i; j++)
      if (!strcmp(r->passes[j].name, r->passes[i].name))
        rc = mxcts_jfail(&pat, "duplicate pass name \"%s\"", r->passes[i].name);
    free(pi);
    if (rc) return rc;
  }
  return 0;
}

static int parse_check(const struct mxcts_jloc *at, json_t *v, struct mxcts_check_result *c) {
  if (!json_is_object(v)) return mxcts_jfail(at, "expected an object, got %s", mxcts_json_type_name(v));
  int rc = mxcts_jget_string(at, v, "name", true, &c->name);
  if (!rc) rc = mxcts_jget_bool(at, v, "pass", true, &c->pass);
  json_t *d = json_object_get(v, "detail");
  if (!rc && d && !json_is_null(d)) rc = mxcts_jget_string(at, v, "detail", false, &c->detail);
  if (!c->detail) c->detail = mxcts_xstrdup("");
  return rc;
}

static int parse_checks(const struct mxcts_jloc *at, json_t *root, struct mxcts_result *r) {
  json_t *a = NULL;
  int rc = mxcts_jget_typed(at, root, "checks", false, JSON_ARRAY, &a);
  if (rc || !a) return rc;
  r->checks = mxcts_xcalloc(json_array_size(a), sizeof *r->checks);
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) {
    char *pi = mxcts_jpath_index("checks", i);
    struct mxcts_jloc cat = {at->file, pi};
    rc = parse_check(&cat, v, &r->checks[i]);
    r->nchecks = i + 1;
    free(pi);
    if (rc) return rc;
  }
  return 0;
}

static int parse_timing(const struct mxcts_jloc *at, json_t *root, struct mxcts_result *r) {
  json_t *t = NULL, *iters = NULL;
  if (json_is_null(json_object_get(root, "timing"))) return 0;
  int rc = mxcts_jget_typed(at, root, "timing", false, JSON_OBJECT, &t);
  if (rc || !t) return rc;
  struct mxcts_jloc tat = {at->file, "timing"};
  rc = mxcts_jget_string(&tat, t, "unit", false, &r->unit);
  if (!rc) rc = mxcts_jget_typed(&tat, t, "iterations", false, JSON_ARRAY, &iters);
  size_t i;
  json_t *x;
  json_array_foreach(iters, i, x) {
    if (rc) break;
    if (!json_is_number(x) || !isfinite(json_number_value(x)) || json_number_value(x) < 0) {
      char *pi = mxcts_jpath_index("timing.iterations", i);
      struct mxcts_jloc xat = {at->file, pi};
      char *b = mxcts_json_brief(x);
      rc = mxcts_jfail(&xat, "expected a non-negative number, got %s", b);
      free(b);
      free(pi);
    }
  }
  if (!rc && json_object_get(t, "median")) {
    rc = mxcts_jget_double(&tat, t, "median", false, 0.0, 1e300, &r->median);
    r->has_median = rc == 0;
  }
  return rc;
}

static int parse_status(const struct mxcts_jloc *at, json_t *root, struct mxcts_result *r) {
  long version = 0;
  int rc = mxcts_jget_long(at, root, "probe_version", true, 1, 1000000, &version);
  if (!rc && version != MXCTS_PROBE_VERSION)
    rc = mxcts_jfail_key(at, "probe_version", "version %ld is not supported (this mxcts reads %d)",
                         version, MXCTS_PROBE_VERSION);
  if (!rc) rc = mxcts_jget_string(at, root, "status", true, &r->status);
  if (!rc && strcmp(r->status, "ok") && strcmp(r->status, "error") && strcmp(r->status, "usage") &&
      strcmp(r->status, "unsupported"))
    rc = mxcts_jfail_key(at, "status", "\"%s\" is not ok, error, usage or unsupported", r->status);
  json_t *e = json_object_get(root, "error");
  if (!rc && e && !json_is_null(e))
    r->error = json_is_string(e) ? mxcts_xstrdup(json_string_value(e))
                                 : json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
  return rc;
}

int mxcts_result_parse(json_t *root, const char *file, struct mxcts_result *out) {
  struct mxcts_result r = {0};
  r.file = mxcts_xstrdup(file ? file : "(result)");
  r.root = json_incref(root);
  struct mxcts_jloc at = {r.file, ""};
  int rc = json_is_object(root) ? 0
                                : mxcts_jfail(&at, "expected an object, got %s",
                                              mxcts_json_type_name(root));
  if (!rc) rc = parse_status(&at, root, &r);
  if (!rc) rc = parse_timing(&at, root, &r);
  if (!rc) rc = parse_structure(&at, root, &r);
  if (!rc) rc = parse_checks(&at, root, &r);
  if (!r.unit) r.unit = mxcts_xstrdup("ms");
  if (rc) {
    mxcts_result_free(&r);
    memset(out, 0, sizeof *out);
    return rc;
  }
  *out = r;
  return 0;
}

int mxcts_result_load(const char *path, struct mxcts_result *out) {
  json_t *root;
  memset(out, 0, sizeof *out);
  int rc = mxcts_json_load(path, &root);
  if (rc) return rc;
  rc = mxcts_result_parse(root, path, out);
  json_decref(root);
  return rc;
}

void mxcts_result_free(struct mxcts_result *r) {
  for (size_t i = 0; i < r->npasses; i++) {
    free(r->passes[i].name);
    free(r->passes[i].sizes);
    mxcts_strv_free(&r->passes[i].names);
  }
  free(r->passes);
  for (size_t i = 0; i < r->nchecks; i++) {
    free(r->checks[i].name);
    free(r->checks[i].detail);
  }
  free(r->checks);
  free(r->file);
  free(r->status);
  free(r->error);
  free(r->unit);
  json_decref(r->root);
  memset(r, 0, sizeof *r);
}

const struct mxcts_pass_result *mxcts_result_pass(const struct mxcts_result *r, const char *name) {
  for (size_t i = 0; i < r->npasses; i++)
    if (!strcmp(r->passes[i].name, name)) return &r->passes[i];
  return NULL;
}

const struct mxcts_check_result *mxcts_result_check(const struct mxcts_result *r,
                                                    const char *name) {
  for (size_t i = 0; i < r->nchecks; i++)
    if (!strcmp(r->checks[i].name, name)) return &r->checks[i];
  return NULL;
}

bool mxcts_result_number(const struct mxcts_result *r, const char *path, double *out) {
  json_t *v = mxcts_json_path(r->root, path);
  if (!json_is_number(v) || !isfinite(json_number_value(v))) return false;
  *out = json_number_value(v);
  return true;
}
