/* Suite files: parsing and validation (suite/suite.h; format in docs/suites.md). */
#include "suite/suite.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/capi_needs.h"
#include "common/common.h"
#include "common/jsonv.h"
#include "suite/suite_internal.h"

/* --- key/value lists ---------------------------------------------------------- */

void mxcts_kvs_set(struct mxcts_kvs *l, const char *key, const char *value) {
  for (size_t i = 0; i < l->n; i++) {
    if (strcmp(l->v[i].key, key) != 0) continue;
    free(l->v[i].value);
    l->v[i].value = mxcts_xstrdup(value);
    return;
  }
  mxcts_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v);
  l->v[l->n].key = mxcts_xstrdup(key);
  l->v[l->n].value = mxcts_xstrdup(value);
  l->n++;
}

const char *mxcts_kvs_get(const struct mxcts_kvs *l, const char *key) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i].key, key) == 0) return l->v[i].value;
  return NULL;
}

void mxcts_kvs_free(struct mxcts_kvs *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->v[i].key);
    free(l->v[i].value);
  }
  free(l->v);
  memset(l, 0, sizeof *l);
}

const char *mxcts_assert_type_name(enum mxcts_assert_type t) {
  switch (t) {
  case MXCTS_A_STRUCTURE: return "structure";
  case MXCTS_A_ORDERING: return "ordering";
  case MXCTS_A_CHECKS: return "checks";
  case MXCTS_A_VALUE: return "value";
  case MXCTS_A_EQUAL: return "equal";
  case MXCTS_A_PROFILE_FILE: return "profile_file";
  case MXCTS_A_GREATER: return "greater";
  }
  return "?";
}

/* --- small parsers ------------------------------------------------------------- */

/* An object of scalars into kvs; env names must be valid variable names. */
static int parse_kvs(const struct mxcts_jloc *at, json_t *obj, const char *key, bool env,
                     struct mxcts_kvs *out) {
  json_t *o = NULL;
  int rc = mxcts_jget_typed(at, obj, key, false, JSON_OBJECT, &o);
  if (rc || !o) return rc;
  char *path = mxcts_jpath_key(at->path, key);
  struct mxcts_jloc sub = {at->file, path};
  const char *name;
  json_t *v;
  json_object_foreach(o, name, v) {
    bool ok = env ? mxcts_valid_env_name(name) : mxcts_valid_env_name(name) || mxcts_valid_id(name);
    if (!ok) {
      rc = mxcts_jfail(&sub, "\"%s\" is not a valid %s name", name,
                       env ? "environment variable" : "parameter");
      break;
    }
    char *value = NULL;
    char *vpath = mxcts_jpath_key(path, name);
    struct mxcts_jloc vat = {at->file, vpath};
    rc = mxcts_jas_scalar_string(&vat, v, &value);
    free(vpath);
    if (rc) break;
    mxcts_kvs_set(out, name, value);
    free(value);
  }
  free(path);
  return rc;
}

static int parse_string_list(const struct mxcts_jloc *at, json_t *obj, const char *key,
                             bool required, struct mxcts_strv *out) {
  json_t *a = NULL;
  int rc = mxcts_jget_typed(at, obj, key, required, JSON_ARRAY, &a);
  if (rc || !a) return rc;
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) {
    if (!json_is_string(v) || !*json_string_value(v)) {
      char *p = mxcts_jpath_key(at->path, key);
      char *pi = mxcts_jpath_index(p, i);
      struct mxcts_jloc vat = {at->file, pi};
      char *brief = mxcts_json_brief(v);
      rc = mxcts_jfail(&vat, "expected a non-empty string, got %s", brief);
      free(brief);
      free(pi);
      free(p);
      return rc;
    }
    mxcts_strv_push(out, json_string_value(v));
  }
  return 0;
}

/* --- configs ----------------------------------------------------------------------- */

static const char *const config_keys[] = {"id", "description", "group", "tags", "workload", "env",
                                          "params", NULL};

static int parse_config(const struct mxcts_jloc *at, json_t *v, const struct mxcts_suite *s,
                        struct mxcts_config *c) {
  const struct mxcts_kvs *suite_params = &s->params;
  int rc = mxcts_jcheck_object(at, v, config_keys);
  if (!rc) rc = mxcts_jget_string(at, v, "id", true, &c->id);
  if (!rc && !mxcts_valid_id(c->id))
    rc = mxcts_jfail_key(at, "id", "\"%s\" is not a valid id ([A-Za-z0-9][A-Za-z0-9_.-]*, "
                         "at most 64 characters)", c->id);
  if (!rc) rc = mxcts_jget_string(at, v, "description", false, &c->description);
  if (!rc) rc = mxcts_jget_string(at, v, "group", false, &c->group);
  if (!rc && c->group && !mxcts_valid_id(c->group))
    rc = mxcts_jfail_key(at, "group", "\"%s\" is not a valid group name", c->group);
  if (!rc) rc = parse_string_list(at, v, "tags", false, &c->tags);
  if (!rc) rc = mxcts_jget_string(at, v, "workload", false, &c->workload);
  if (!rc && c->workload && !mxcts_valid_id(c->workload))
    rc = mxcts_jfail_key(at, "workload", "\"%s\" is not a valid workload name", c->workload);
  if (!rc && !c->workload) c->workload = mxcts_xstrdup(s->workload);
  if (!rc) rc = parse_kvs(at, v, "env", true, &c->env);
  for (size_t i = 0; !rc && i < suite_params->n; i++)
    mxcts_kvs_set(&c->params, suite_params->v[i].key, suite_params->v[i].value);
  if (!rc) rc = parse_kvs(at, v, "params", false, &c->params);
  return rc;
}

static int parse_configs(const struct mxcts_jloc *at, json_t *doc, struct mxcts_suite *s) {
  json_t *a = NULL;
  int rc = mxcts_jget_typed(at, doc, "configs", true, JSON_ARRAY, &a);
  if (rc) return rc;
  if (json_array_size(a) == 0) return mxcts_jfail_key(at, "configs", "needs at least one config");
  s->configs = mxcts_xcalloc(json_array_size(a), sizeof *s->configs);
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) {
    char *path = mxcts_jpath_index("configs", i);
    struct mxcts_jloc cat = {at->file, path};
    rc = parse_config(&cat, v, s, &s->configs[i]);
    s->nconfigs = i + 1;
    if (!rc && mxcts_suite_find_config(s, s->configs[i].id) != (long)i)
      rc = mxcts_jfail_key(&cat, "id", "duplicate config id \"%s\"", s->configs[i].id);
    free(path);
    if (rc) return rc;
  }
  return 0;
}

long mxcts_suite_find_config(const struct mxcts_suite *s, const char *id) {
  for (size_t i = 0; i < s->nconfigs; i++)
    if (s->configs[i].id && strcmp(s->configs[i].id, id) == 0) return (long)i;
  return -1;
}

/* --- references: "ID", "group:G", "tag:T" ---------------------------------------- */

static bool config_matches(const struct mxcts_config *c, const char *ref) {
  if (strncmp(ref, "group:", 6) == 0) return c->group && strcmp(c->group, ref + 6) == 0;
  if (strncmp(ref, "tag:", 4) == 0) return mxcts_strv_contains(&c->tags, ref + 4);
  return strcmp(c->id, ref) == 0;
}

/* Append the configs `ref` names to idx (no duplicates); 0 matches is an error. */
int mxcts__suite_resolve_ref(const struct mxcts_jloc *at, const struct mxcts_suite *s,
                             const char *ref, size_t **idx, size_t *n) {
  size_t found = 0, cap = *n;
  for (size_t c = 0; c < s->nconfigs; c++) {
    if (!config_matches(&s->configs[c], ref)) continue;
    found++;
    bool dup = false;
    for (size_t j = 0; j < *n && !dup; j++) dup = (*idx)[j] == c;
    if (dup) continue;
    mxcts_grow(idx, &cap, *n + 1, sizeof **idx);
    (*idx)[(*n)++] = c;
  }
  if (found) return 0;
  return mxcts_jfail(at, "\"%s\" names no config of this suite (use a config id, "
                     "\"group:NAME\" or \"tag:NAME\")", ref);
}

/* "configs": [...] of an assertion, or every config when absent. */
static int parse_selection(const struct mxcts_jloc *at, json_t *v, const struct mxcts_suite *s,
                           struct mxcts_assertion *a) {
  struct mxcts_strv refs = {0};
  int rc = parse_string_list(at, v, "configs", false, &refs);
  if (!rc && !json_object_get(v, "configs")) {
    a->configs = mxcts_xcalloc(s->nconfigs, sizeof *a->configs);
    for (size_t c = 0; c < s->nconfigs; c++) a->configs[a->nconfigs++] = c;
  }
  if (!rc && json_object_get(v, "configs") && refs.n == 0)
    rc = mxcts_jfail_key(at, "configs", "needs at least one config");
  char *path = mxcts_jpath_key(at->path, "configs");
  for (size_t i = 0; !rc && i < refs.n; i++) {
    char *pi = mxcts_jpath_index(path, i);
    struct mxcts_jloc rat = {at->file, pi};
    rc = mxcts__suite_resolve_ref(&rat, s, refs.v[i], &a->configs, &a->nconfigs);
    free(pi);
  }
  free(path);
  mxcts_strv_free(&refs);
  return rc;
}

static void add_config(struct mxcts_assertion *a, size_t c) {
  for (size_t i = 0; i < a->nconfigs; i++)
    if (a->configs[i] == c) return;
  a->configs = mxcts_xrealloc(a->configs, (a->nconfigs + 1) * sizeof *a->configs);
  a->configs[a->nconfigs++] = c;
}

/* --- ordering ------------------------------------------------------------------------ */

static int parse_operands(const struct mxcts_jloc *at, json_t *v, const char *key,
                          const struct mxcts_suite *s, struct mxcts_operand **out, size_t *n) {
  struct mxcts_strv refs = {0};
  int rc = parse_string_list(at, v, key, true, &refs);
  if (!rc && refs.n == 0) rc = mxcts_jfail_key(at, key, "needs at least one config");
  char *path = mxcts_jpath_key(at->path, key);
  for (size_t i = 0; !rc && i < refs.n; i++) {
    char *pi = mxcts_jpath_index(path, i);
    struct mxcts_jloc rat = {at->file, pi};
    char *at_sign = strchr(refs.v[i], '@');
    const char *measure = at_sign ? at_sign + 1 : MXCTS_DEFAULT_MEASURE;
    if (at_sign) *at_sign = '\0';
    if (!*measure) rc = mxcts_jfail(&rat, "empty measure after '@'");
    size_t *idx = NULL, nidx = 0;
    if (!rc) rc = mxcts__suite_resolve_ref(&rat, s, refs.v[i], &idx, &nidx);
    for (size_t j = 0; !rc && j < nidx; j++) {
      *out = mxcts_xrealloc(*out, (*n + 1) * sizeof **out);
      (*out)[*n].config = idx[j];
      (*out)[*n].measure = mxcts_xstrdup(measure);
      (*n)++;
    }
    free(idx);
    free(pi);
  }
  free(path);
  mxcts_strv_free(&refs);
  return rc;
}

static int parse_ordering(const struct mxcts_jloc *at, json_t *v, const struct mxcts_suite *s,
                          struct mxcts_assertion *a) {
  a->margin = s->margin;
  a->max_contention = s->max_contention;
  int rc = parse_operands(at, v, "slower", s, &a->slower, &a->nslower);
  if (!rc) rc = parse_operands(at, v, "faster", s, &a->faster, &a->nfaster);
  if (!rc) rc = mxcts_jget_double(at, v, "margin", false, -0.999999, 1e6, &a->margin);
  if (!rc) rc = mxcts_jget_double(at, v, "max_contention", false, 0, 1000, &a->max_contention);
  for (size_t i = 0; !rc && i < a->nslower; i++)
    for (size_t j = 0; !rc && j < a->nfaster; j++)
      if (a->slower[i].config == a->faster[j].config &&
          strcmp(a->slower[i].measure, a->faster[j].measure) == 0)
        rc = mxcts_jfail(at, "config \"%s\" (measure %s) is both slower and faster",
                         s->configs[a->slower[i].config].id, a->slower[i].measure);
  for (size_t i = 0; !rc && i < a->nslower; i++) add_config(a, a->slower[i].config);
  for (size_t j = 0; !rc && j < a->nfaster; j++) add_config(a, a->faster[j].config);
  return rc;
}

/* --- the other assertion types ---------------------------------------------------------- */

static int parse_value(const struct mxcts_jloc *at, json_t *v, struct mxcts_assertion *a) {
  a->expect_pass = true;
  int rc = parse_string_list(at, v, "checks", true, &a->check_names);
  if (!rc && a->check_names.n == 0) rc = mxcts_jfail_key(at, "checks", "needs at least one name");
  if (!rc) rc = mxcts_jget_bool(at, v, "pass", false, &a->expect_pass);
  char *in = NULL;
  if (!rc) rc = mxcts_jget_string(at, v, "in", false, &in);
  if (!rc && in && strcmp(in, "any") != 0 && strcmp(in, "all") != 0)
    rc = mxcts_jfail_key(at, "in", "\"%s\" is neither \"all\" nor \"any\"", in);
  a->any_round = in && strcmp(in, "any") == 0;
  free(in);
  return rc;
}

static int parse_equal(const struct mxcts_jloc *at, json_t *v, struct mxcts_assertion *a) {
  int rc = mxcts_jget_string(at, v, "path", true, &a->path);
  if (!rc && (!*a->path || strchr(a->path, ' ')))
    rc = mxcts_jfail_key(at, "path", "\"%s\" is not a JSON path like values.*.digest", a->path);
  if (!rc && a->nconfigs < 2) rc = mxcts_jfail_key(at, "configs", "equal needs two configs or more");
  return rc;
}

/* A list of config references ("greater", "than") into *idx, each config
 * also added to what the assertion reads. */
static int parse_config_list(const struct mxcts_jloc *at, json_t *v, const char *key,
                             const struct mxcts_suite *s, struct mxcts_assertion *a, size_t **idx,
                             size_t *n) {
  struct mxcts_strv refs = {0};
  int rc = parse_string_list(at, v, key, true, &refs);
  if (!rc && refs.n == 0) rc = mxcts_jfail_key(at, key, "needs at least one config");
  char *path = mxcts_jpath_key(at->path, key);
  for (size_t i = 0; !rc && i < refs.n; i++) {
    char *pi = mxcts_jpath_index(path, i);
    struct mxcts_jloc rat = {at->file, pi};
    rc = mxcts__suite_resolve_ref(&rat, s, refs.v[i], idx, n);
    free(pi);
  }
  free(path);
  mxcts_strv_free(&refs);
  for (size_t i = 0; !rc && i < *n; i++) add_config(a, (*idx)[i]);
  return rc;
}

/* greater: a number path, and two disjoint lists of configs. */
static int parse_greater(const struct mxcts_jloc *at, json_t *v, const struct mxcts_suite *s,
                         struct mxcts_assertion *a) {
  int rc = mxcts_jget_string(at, v, "path", true, &a->path);
  if (!rc && (!*a->path || strchr(a->path, ' ') || strchr(a->path, '*')))
    rc = mxcts_jfail_key(at, "path", "\"%s\" is not a JSON path to a number like metrics.plan_mb", a->path);
  if (!rc) rc = parse_config_list(at, v, "greater", s, a, &a->greater, &a->ngreater);
  if (!rc) rc = parse_config_list(at, v, "than", s, a, &a->than, &a->nthan);
  for (size_t i = 0; !rc && i < a->ngreater; i++)
    for (size_t k = 0; !rc && k < a->nthan; k++)
      if (a->greater[i] == a->than[k])
        rc = mxcts_jfail(at, "config \"%s\" is in both greater and than", s->configs[a->greater[i]].id);
  return rc;
}

static int parse_profile_file(const struct mxcts_jloc *at, json_t *v, struct mxcts_assertion *a) {
  a->min_events = 1;
  int rc = mxcts_jget_string(at, v, "file", false, &a->file);
  if (!rc && !a->file) a->file = mxcts_xstrdup("profile.json");
  if (!rc && (strchr(a->file, '/') || !mxcts_valid_id(a->file)))
    rc = mxcts_jfail_key(at, "file", "\"%s\" must be a plain file name", a->file);
  if (!rc) rc = mxcts_jget_long(at, v, "min_events", false, 0, 1000000000, &a->min_events);
  if (!rc) rc = parse_string_list(at, v, "names_include", false, &a->names_include);
  return rc;
}

static const char *const assert_keys[] = {
    "id", "type", "description", "depth", "configs", "expect", "slower", "faster", "margin",
    "max_contention", "min",
    "checks", "pass", "in", "path", "file", "min_events", "names_include", "greater", "than", NULL};

/* Which members each type takes (besides id, type, description). */
static const char *type_members(enum mxcts_assert_type t) {
  switch (t) {
  case MXCTS_A_STRUCTURE: return " expect ";
  case MXCTS_A_ORDERING: return " slower faster margin max_contention ";
  case MXCTS_A_CHECKS: return " configs min ";
  case MXCTS_A_VALUE: return " configs checks pass in ";
  case MXCTS_A_EQUAL: return " configs path ";
  case MXCTS_A_PROFILE_FILE: return " configs file min_events names_include ";
  case MXCTS_A_GREATER: return " path greater than ";
  }
  return " ";
}

static int parse_type(const struct mxcts_jloc *at, const char *name, enum mxcts_assert_type *t) {
  static const enum mxcts_assert_type all[] = {MXCTS_A_STRUCTURE, MXCTS_A_ORDERING, MXCTS_A_CHECKS,
                                               MXCTS_A_VALUE, MXCTS_A_EQUAL, MXCTS_A_PROFILE_FILE,
                                               MXCTS_A_GREATER};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (strcmp(name, mxcts_assert_type_name(all[i])) == 0) {
      *t = all[i];
      return 0;
    }
  return mxcts_jfail_key(at, "type", "unknown assertion type \"%s\" (known: structure, ordering, "
                         "checks, value, equal, profile_file, greater)", name);
}

static int check_members(const struct mxcts_jloc *at, json_t *v, enum mxcts_assert_type t) {
  const char *key;
  json_t *m;
  json_object_foreach(v, key, m) {
    if (!strcmp(key, "id") || !strcmp(key, "type") || !strcmp(key, "description") ||
        !strcmp(key, "depth"))
      continue;
    char *word = mxcts_xasprintf(" %s ", key);
    bool ok = strstr(type_members(t), word) != NULL;
    free(word);
    if (!ok)
      return mxcts_jfail(at, "field \"%s\" does not belong to a %s assertion (its fields:%s)", key,
                         mxcts_assert_type_name(t), type_members(t));
  }
  return 0;
}

/* "depth": "quick" (the default: every run judges it) or "full". */
static int parse_depth(const struct mxcts_jloc *at, json_t *v, struct mxcts_assertion *a) {
  char *depth = NULL;
  int rc = mxcts_jget_string(at, v, "depth", false, &depth);
  if (!rc && depth && strcmp(depth, "quick") && strcmp(depth, "full"))
    rc = mxcts_jfail_key(at, "depth", "\"%s\" is neither \"quick\" nor \"full\"", depth);
  a->full_depth = !rc && depth && !strcmp(depth, "full");
  free(depth);
  return rc;
}

static int parse_assertion(const struct mxcts_jloc *at, json_t *v, const struct mxcts_suite *s,
                           struct mxcts_assertion *a) {
  char *type = NULL;
  int rc = mxcts_jcheck_object(at, v, assert_keys);
  if (!rc) rc = mxcts_jget_string(at, v, "id", true, &a->id);
  if (!rc && !mxcts_valid_id(a->id))
    rc = mxcts_jfail_key(at, "id", "\"%s\" is not a valid id", a->id);
  if (!rc) rc = mxcts_jget_string(at, v, "type", true, &type);
  if (!rc) rc = parse_type(at, type, &a->type);
  free(type);
  if (!rc) rc = check_members(at, v, a->type);
  if (!rc) rc = mxcts_jget_string(at, v, "description", false, &a->description);
  if (!rc) rc = parse_depth(at, v, a);
  if (rc) return rc;
  switch (a->type) {
  case MXCTS_A_STRUCTURE: return mxcts__suite_parse_structure(at, v, s, a);
  case MXCTS_A_ORDERING: return parse_ordering(at, v, s, a);
  case MXCTS_A_CHECKS:
    a->min_checks = 1;
    rc = parse_selection(at, v, s, a);
    return rc ? rc : mxcts_jget_long(at, v, "min", false, 0, 1000000000, &a->min_checks);
  case MXCTS_A_VALUE:
    rc = parse_selection(at, v, s, a);
    return rc ? rc : parse_value(at, v, a);
  case MXCTS_A_EQUAL:
    rc = parse_selection(at, v, s, a);
    return rc ? rc : parse_equal(at, v, a);
  case MXCTS_A_PROFILE_FILE:
    rc = parse_selection(at, v, s, a);
    return rc ? rc : parse_profile_file(at, v, a);
  case MXCTS_A_GREATER: return parse_greater(at, v, s, a);
  }
  return 0;
}

static int parse_assertions(const struct mxcts_jloc *at, json_t *doc, struct mxcts_suite *s) {
  json_t *arr = NULL;
  int rc = mxcts_jget_typed(at, doc, "assertions", true, JSON_ARRAY, &arr);
  if (rc) return rc;
  if (json_array_size(arr) == 0)
    return mxcts_jfail_key(at, "assertions", "needs at least one assertion");
  s->asserts = mxcts_xcalloc(json_array_size(arr), sizeof *s->asserts);
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) {
    char *path = mxcts_jpath_index("assertions", i);
    struct mxcts_jloc aat = {at->file, path};
    rc = parse_assertion(&aat, v, s, &s->asserts[i]);
    s->nasserts = i + 1;
    for (size_t j = 0; !rc && j < i; j++)
      if (strcmp(s->asserts[j].id, s->asserts[i].id) == 0)
        rc = mxcts_jfail_key(&aat, "id", "duplicate assertion id \"%s\"", s->asserts[i].id);
    free(path);
    if (rc) return rc;
  }
  return 0;
}

/* --- suite-level rules ---------------------------------------------------------------------- */

static bool has_type(const struct mxcts_suite *s, enum mxcts_assert_type t) {
  for (size_t i = 0; i < s->nasserts; i++)
    if (s->asserts[i].type == t) return true;
  return false;
}

static bool reads_config(const struct mxcts_assertion *a, size_t c) {
  for (size_t i = 0; i < a->nconfigs; i++)
    if (a->configs[i] == c) return true;
  return false;
}

/* Does the assertion read config c in this run (not skipped by the plan)? */
static bool judges_config(const struct mxcts_assertion *a, size_t c) {
  return !a->skip_reason && reads_config(a, c);
}

bool mxcts_suite_config_needs_profile(const struct mxcts_suite *s, size_t c) {
  for (size_t i = 0; i < s->nasserts; i++)
    if (s->asserts[i].type == MXCTS_A_STRUCTURE && judges_config(&s->asserts[i], c)) return true;
  return false;
}

static bool has_fn(const char *fn, void *ctx) {
  (void)fn;
  (void)ctx;
  return false;
}

size_t mxcts_assertion_needs(const struct mxcts_suite *s, const struct mxcts_assertion *a, const char **out,
                             size_t cap) {
  size_t n = 0; /* every need "missing" from a library that has nothing: the union, each once */
  bool rounds_only = a->type == MXCTS_A_ORDERING || a->type == MXCTS_A_PROFILE_FILE || a->type == MXCTS_A_GREATER;
  for (size_t i = 0; i < a->nconfigs; i++) {
    size_t c = a->configs[i];
    mxcts_needs_missing(mxcts_workload_needs(s->configs[c].workload), has_fn, NULL, out, &n, cap);
    if (!rounds_only && mxcts_suite_config_needs_profile(s, c))
      mxcts_needs_missing(mxcts_profile_needs(), has_fn, NULL, out, &n, cap);
  }
  return n;
}

bool mxcts_suite_config_needs_rounds(const struct mxcts_suite *s, size_t c) {
  bool other = false;
  for (size_t i = 0; i < s->nasserts; i++) {
    const struct mxcts_assertion *a = &s->asserts[i];
    if (!judges_config(a, c)) continue;
    if (a->type == MXCTS_A_ORDERING || a->type == MXCTS_A_PROFILE_FILE || a->type == MXCTS_A_GREATER)
      return true;
    if (a->type != MXCTS_A_STRUCTURE) other = true;
  }
  return other && !mxcts_suite_config_needs_profile(s, c);
}

bool mxcts_suite_config_timed(const struct mxcts_suite *s, size_t c) {
  for (size_t i = 0; i < s->nasserts; i++)
    if (s->asserts[i].type == MXCTS_A_ORDERING && judges_config(&s->asserts[i], c)) return true;
  return false;
}

/* The SPRT settings and the round budget of a suite with orderings. */
static int check_sequential(const struct mxcts_jloc *at, const struct mxcts_suite *s) {
  if (mxcts_sprt_check(&s->sprt)) return mxcts_jfail(at, "%s", mxcts_last_error());
  if (s->max_rounds < s->rounds)
    return mxcts_jfail_key(at, "max_rounds", "%d is less than the first batch (rounds = %d)",
                           s->max_rounds, s->rounds);
  return 0;
}

static int check_suite(const struct mxcts_jloc *at, struct mxcts_suite *s, json_t *doc) {
  bool ordering = has_type(s, MXCTS_A_ORDERING);
  json_t *timed = json_object_get(doc, "timed");
  if (!timed) s->timed = ordering;
  if (ordering && !s->timed)
    return mxcts_jfail_key(at, "timed", "a suite with ordering assertions must be timed");
  for (size_t c = 0; c < s->nconfigs; c++) {
    bool used = false;
    for (size_t i = 0; i < s->nasserts && !used; i++) used = reads_config(&s->asserts[i], c);
    if (!used)
      return mxcts_jfail(at, "config \"%s\" is read by no assertion", s->configs[c].id);
  }
  if (!json_object_get(doc, "rounds") && ordering) s->rounds = MXCTS_DEFAULT_FIRST_BATCH;
  return ordering ? check_sequential(at, s) : 0;
}

void mxcts_suite_set_depth(struct mxcts_suite *s, bool full) {
  for (size_t i = 0; i < s->nasserts; i++) {
    struct mxcts_assertion *a = &s->asserts[i];
    free(a->skip_reason);
    a->skip_reason = a->full_depth && !full
                         ? mxcts_xstrdup("judged by --depth full only (mxcts run --depth full, "
                                         "make check-full)")
                         : NULL;
  }
}

int mxcts_suite_set_rounds(struct mxcts_suite *s, int rounds) {
  if (rounds < 1 || rounds > MXCTS_MAX_ROUNDS)
    return mxcts_set_error(MXR_EINVAL, "--rounds %d: out of range [1, %d]", rounds,
                           MXCTS_MAX_ROUNDS);
  s->rounds = rounds;
  if (s->max_rounds < rounds) s->max_rounds = rounds;
  return 0;
}

/* Whether "SUITE/ASSERTION" matches one of the patterns (fnmatch globs;
 * a pattern without '/' names whole suites). */
static bool assertion_selected(const char *suite, const char *id, const struct mxcts_strv *pats) {
  for (size_t i = 0; i < pats->n; i++) {
    const char *slash = strchr(pats->v[i], '/');
    if (!slash) {
      if (!fnmatch(pats->v[i], suite, 0)) return true;
      continue;
    }
    char *suite_pat = mxcts_xstrndup(pats->v[i], (size_t)(slash - pats->v[i]));
    bool hit = !fnmatch(suite_pat, suite, 0) && !fnmatch(slash + 1, id, 0);
    free(suite_pat);
    if (hit) return true;
  }
  return false;
}

/* The suite's document with only the flagged assertions and configs. */
static json_t *selected_doc(const struct mxcts_suite *s, const bool *keep_assert,
                            const bool *keep_config) {
  json_t *doc = json_copy(s->source), *asserts = json_array(), *configs = json_array();
  json_t *all_asserts = json_object_get(s->source, "assertions");
  json_t *all_configs = json_object_get(s->source, "configs");
  for (size_t a = 0; a < s->nasserts; a++)
    if (keep_assert[a]) json_array_append(asserts, json_array_get(all_asserts, a));
  for (size_t c = 0; c < s->nconfigs; c++)
    if (keep_config[c]) json_array_append(configs, json_array_get(all_configs, c));
  json_object_set_new(doc, "assertions", asserts);
  json_object_set_new(doc, "configs", configs);
  return doc;
}

int mxcts_suite_select(struct mxcts_suite *s, const struct mxcts_strv *patterns) {
  if (!patterns->n) return (int)s->nasserts;
  bool *keep_assert = mxcts_xcalloc(s->nasserts + 1, sizeof *keep_assert);
  bool *keep_config = mxcts_xcalloc(s->nconfigs + 1, sizeof *keep_config);
  int kept = 0;
  for (size_t a = 0; a < s->nasserts; a++) {
    if (!assertion_selected(s->name, s->asserts[a].id, patterns)) continue;
    keep_assert[a] = true;
    kept++;
    for (size_t k = 0; k < s->asserts[a].nconfigs; k++) keep_config[s->asserts[a].configs[k]] = true;
  }
  int rc = kept;
  if (kept && (size_t)kept < s->nasserts) {
    json_t *doc = selected_doc(s, keep_assert, keep_config);
    struct mxcts_suite narrowed;
    rc = mxcts_suite_parse(doc, s->file, false, &narrowed);
    json_decref(doc);
    if (!rc) {
      mxcts_suite_free(s);
      *s = narrowed;
      rc = kept;
    }
  }
  free(keep_assert);
  free(keep_config);
  return rc;
}

/* --- the document -------------------------------------------------------------------------------- */

static const char *const suite_keys[] = {
    "format", "name", "description", "workload", "params", "profile_params", "configs", "rounds",
    "batch", "max_rounds", "p0", "p1", "pf", "alpha", "beta", "margin", "max_contention", "timeout", "timed", "requires", "python", "assertions", NULL};

/* "requires": what the machine and implementation must have; "gpu" is the
 * only requirement so far. */
static int parse_requires(const struct mxcts_jloc *at, json_t *doc, struct mxcts_suite *s) {
  struct mxcts_strv req = {0};
  int rc = parse_string_list(at, doc, "requires", false, &req);
  for (size_t i = 0; !rc && i < req.n; i++) {
    if (strcmp(req.v[i], "gpu") == 0)
      s->needs_gpu = true;
    else
      rc = mxcts_jfail_key(at, "requires", "unknown requirement \"%s\" (known: gpu)", req.v[i]);
  }
  mxcts_strv_free(&req);
  return rc;
}

/* "python": the file name of a Python probe script (the directory of the
 * Python workloads holds it), run instead of mxcts-probe. */
static int parse_python(const struct mxcts_jloc *at, json_t *doc, struct mxcts_suite *s) {
  int rc = mxcts_jget_string(at, doc, "python", false, &s->python);
  if (!rc && s->python && !mxcts_valid_id(s->python))
    rc = mxcts_jfail_key(at, "python", "\"%s\" is not a plain file name", s->python);
  return rc;
}

static int base_name_matches(const char *file, const char *name) {
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  size_t n = strlen(base);
  return n > 5 && strcmp(base + n - 5, ".json") == 0 && strlen(name) == n - 5 &&
         strncmp(base, name, n - 5) == 0;
}

static int parse_header(const struct mxcts_jloc *at, json_t *doc, bool check_name,
                        struct mxcts_suite *s) {
  long format = 0, rounds = MXCTS_DEFAULT_ROUNDS, batch = MXCTS_DEFAULT_BATCH,
       max_rounds = MXCTS_DEFAULT_MAX_ROUNDS;
  int rc = mxcts_jcheck_object(at, doc, suite_keys);
  if (!rc) rc = mxcts_jget_long(at, doc, "format", true, 1, 1000, &format);
  if (!rc && format != MXCTS_SUITE_FORMAT)
    rc = mxcts_jfail_key(at, "format", "format %ld is not supported (this mxcts reads %d)", format,
                         MXCTS_SUITE_FORMAT);
  if (!rc) rc = mxcts_jget_string(at, doc, "name", true, &s->name);
  if (!rc && !mxcts_valid_id(s->name))
    rc = mxcts_jfail_key(at, "name", "\"%s\" is not a valid suite name", s->name);
  if (!rc && check_name && !base_name_matches(s->file, s->name))
    rc = mxcts_jfail_key(at, "name", "\"%s\" does not match the file name (expected %s.json)",
                         s->name, s->name);
  if (!rc) rc = mxcts_jget_string(at, doc, "description", false, &s->description);
  if (!rc) rc = mxcts_jget_string(at, doc, "workload", true, &s->workload);
  if (!rc && !mxcts_valid_id(s->workload))
    rc = mxcts_jfail_key(at, "workload", "\"%s\" is not a valid workload name", s->workload);
  if (!rc) rc = parse_kvs(at, doc, "params", false, &s->params);
  if (!rc) rc = parse_kvs(at, doc, "profile_params", false, &s->profile_params);
  if (!rc) rc = mxcts_jget_long(at, doc, "rounds", false, 1, MXCTS_MAX_ROUNDS, &rounds);
  if (!rc) rc = mxcts_jget_long(at, doc, "batch", false, 1, MXCTS_MAX_ROUNDS, &batch);
  if (!rc) rc = mxcts_jget_long(at, doc, "max_rounds", false, 1, MXCTS_MAX_ROUNDS, &max_rounds);
  if (!rc) rc = mxcts_jget_double(at, doc, "p0", false, 1e-6, 1 - 1e-6, &s->sprt.p0);
  if (!rc) rc = mxcts_jget_double(at, doc, "p1", false, 1e-6, 1 - 1e-6, &s->sprt.p1);
  if (!rc) rc = mxcts_jget_double(at, doc, "alpha", false, 1e-9, 0.49, &s->sprt.alpha);
  if (!rc) rc = mxcts_jget_double(at, doc, "beta", false, 1e-9, 0.49, &s->sprt.beta);
  s->sprt.pf = s->sprt.p1 < MXCTS_DEFAULT_PF ? s->sprt.p1 : MXCTS_DEFAULT_PF;
  if (!rc) rc = mxcts_jget_double(at, doc, "pf", false, 1e-6, 1 - 1e-6, &s->sprt.pf);
  if (!rc) rc = mxcts_jget_double(at, doc, "margin", false, -0.999999, 1e6, &s->margin);
  if (!rc) rc = mxcts_jget_double(at, doc, "max_contention", false, 0, 1000, &s->max_contention);
  if (!rc) rc = mxcts_jget_double(at, doc, "timeout", false, 0.001, 86400, &s->timeout_s);
  if (!rc) rc = mxcts_jget_bool(at, doc, "timed", false, &s->timed);
  if (!rc) rc = parse_requires(at, doc, s);
  if (!rc) rc = parse_python(at, doc, s);
  s->rounds = (int)rounds;
  s->batch = (int)batch;
  s->max_rounds = (int)max_rounds;
  return rc;
}

int mxcts_suite_parse(json_t *doc, const char *file, bool check_name, struct mxcts_suite *out) {
  struct mxcts_suite s = {0};
  s.file = mxcts_xstrdup(file ? file : "(suite)");
  s.sprt = (struct mxcts_sprt_params){MXCTS_DEFAULT_P0, MXCTS_DEFAULT_P1, MXCTS_DEFAULT_ALPHA,
                                      MXCTS_DEFAULT_BETA, MXCTS_DEFAULT_PF};
  s.margin = MXCTS_DEFAULT_MARGIN;
  s.timeout_s = MXCTS_DEFAULT_TIMEOUT;
  s.source = json_incref(doc);
  struct mxcts_jloc at = {s.file, ""};
  int rc = parse_header(&at, doc, check_name && file, &s);
  if (!rc) rc = parse_configs(&at, doc, &s);
  if (!rc) rc = parse_assertions(&at, doc, &s);
  if (!rc) rc = check_suite(&at, &s, doc);
  if (rc) {
    mxcts_suite_free(&s);
    memset(out, 0, sizeof *out);
    return rc;
  }
  *out = s;
  return 0;
}

int mxcts_suite_load(const char *path, struct mxcts_suite *out) {
  json_t *doc;
  memset(out, 0, sizeof *out);
  int rc = mxcts_json_load(path, &doc);
  if (rc) return rc;
  rc = mxcts_suite_parse(doc, path, true, out);
  json_decref(doc);
  return rc;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_dir(const char *dir, struct mxcts_strv *names) {
  DIR *d = opendir(dir);
  if (!d) return mxcts_set_error(MXR_ENOTFOUND, "%s: cannot open the suites directory", dir);
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n > 5 && e->d_name[0] != '.' && strcmp(e->d_name + n - 5, ".json") == 0)
      mxcts_strv_push_take(names, mxcts_xstrndup(e->d_name, n - 5));
  }
  closedir(d);
  if (names->n) qsort(names->v, names->n, sizeof *names->v, cmp_str);
  return 0;
}

int mxcts_suites_load_dir(const char *dir, const struct mxcts_strv *only, struct mxcts_suite **out,
                          size_t *n) {
  struct mxcts_strv names = {0};
  int rc = 0;
  if (only && only->n) {
    for (size_t i = 0; i < only->n; i++) mxcts_strv_push(&names, only->v[i]);
  } else {
    rc = list_dir(dir, &names);
    if (!rc && names.n == 0) rc = mxcts_set_error(MXR_ENOTFOUND, "%s: no *.json suite files", dir);
  }
  *out = mxcts_xcalloc(names.n, sizeof **out);
  *n = 0;
  for (size_t i = 0; !rc && i < names.n; i++) {
    if (!mxcts_valid_id(names.v[i])) {
      rc = mxcts_set_error(MXR_EINVAL, "--suite %s: not a valid suite name", names.v[i]);
      break;
    }
    char *path = mxcts_xasprintf("%s/%s.json", dir, names.v[i]);
    rc = mxcts_suite_load(path, &(*out)[i]);
    free(path);
    if (!rc) *n = i + 1;
  }
  mxcts_strv_free(&names);
  if (rc) {
    mxcts_suites_free(*out, *n);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

static void free_assertion(struct mxcts_assertion *a) {
  free(a->id);
  free(a->description);
  free(a->skip_reason);
  free(a->configs);
  for (size_t i = 0; i < a->nstructs; i++) {
    for (size_t p = 0; p < a->structs[i].npasses; p++)
      mxcts__suite_free_pass(&a->structs[i].passes[p]);
    free(a->structs[i].passes);
  }
  free(a->structs);
  for (size_t i = 0; i < a->nslower; i++) free(a->slower[i].measure);
  for (size_t i = 0; i < a->nfaster; i++) free(a->faster[i].measure);
  free(a->slower);
  free(a->faster);
  mxcts_strv_free(&a->check_names);
  free(a->path);
  free(a->greater);
  free(a->than);
  free(a->file);
  mxcts_strv_free(&a->names_include);
}

void mxcts_suite_free(struct mxcts_suite *s) {
  if (!s) return;
  free(s->file);
  free(s->name);
  free(s->description);
  free(s->workload);
  free(s->python);
  mxcts_kvs_free(&s->params);
  mxcts_kvs_free(&s->profile_params);
  for (size_t i = 0; i < s->nconfigs; i++) {
    struct mxcts_config *c = &s->configs[i];
    free(c->id);
    free(c->description);
    free(c->group);
    free(c->workload);
    mxcts_strv_free(&c->tags);
    mxcts_kvs_free(&c->env);
    mxcts_kvs_free(&c->params);
  }
  free(s->configs);
  for (size_t i = 0; i < s->nasserts; i++) free_assertion(&s->asserts[i]);
  free(s->asserts);
  json_decref(s->source);
  memset(s, 0, sizeof *s);
}

void mxcts_suites_free(struct mxcts_suite *s, size_t n) {
  for (size_t i = 0; i < n; i++) mxcts_suite_free(&s[i]);
  free(s);
}
