/*
 * The structure assertion's predictions (docs/suites.md, "structure"): a
 * small generator language for the engine ops and segment sizes of a pass.
 *
 *   {"bulk": [n, c]}   n ops bulked with cap c: ceil(n / max(c, 1)) segments
 *                      of c ops, the last one shorter (MXNet 1.9.1 BulkOpSegs
 *                      on a region of n sync ops)
 *   {"single": n}      n ops pushed one by one (bulking off): n engine ops of 1
 *
 * The prediction is the list of engine ops of the pass with the ops each
 * holds, in order (an op pushed alone holds 1): the probe's segment_sizes.
 *   {"sizes": [a, b]}  explicit segments
 *   {"concat": [g...]} the generators one after the other
 *
 * Beside the generator a pass may predict counts of its own: engine_ops,
 * bulked_events (ImperativeBulk events), graph_launches and graph_captures
 * (CUDA graph spans in the trace, mxref/profiler.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/suite_internal.h"

#define MAX_SEGMENTS 1000000L
#define MAX_OPS 100000000L

struct gen {
  long *sizes;
  size_t n, cap;
};

static int gen_parse(const struct mxcts_jloc *at, json_t *v, struct gen *g, int depth);

static int push_sizes(const struct mxcts_jloc *at, struct gen *g, long size, long count) {
  if ((long)g->n + count > MAX_SEGMENTS)
    return mxcts_jfail(at, "more than %ld segments predicted", MAX_SEGMENTS);
  mxcts_grow(&g->sizes, &g->cap, g->n + (size_t)count, sizeof *g->sizes);
  for (long i = 0; i < count; i++) g->sizes[g->n++] = size;
  return 0;
}

static int gen_bulk(const struct mxcts_jloc *at, json_t *a, struct gen *g) {
  long n, c;
  if (!json_is_array(a) || json_array_size(a) != 2)
    return mxcts_jfail_key(at, "bulk", "expected [ops, cap], two integers");
  char *p = mxcts_jpath_key(at->path, "bulk");
  struct mxcts_jloc bat = {at->file, p};
  int rc = mxcts_jas_long(&bat, json_array_get(a, 0), 0, MAX_OPS, &n);
  if (!rc) rc = mxcts_jas_long(&bat, json_array_get(a, 1), 0, MAX_OPS, &c);
  free(p);
  if (rc) return rc;
  long cap = c < 1 ? 1 : c;
  rc = push_sizes(at, g, cap, n / cap);
  if (!rc && n % cap) rc = push_sizes(at, g, n % cap, 1);
  return rc;
}

static int gen_sizes(const struct mxcts_jloc *at, json_t *a, struct gen *g) {
  if (!json_is_array(a)) return mxcts_jfail_key(at, "sizes", "expected an array of integers");
  char *p = mxcts_jpath_key(at->path, "sizes");
  int rc = 0;
  size_t i;
  json_t *x;
  json_array_foreach(a, i, x) {
    char *pi = mxcts_jpath_index(p, i);
    struct mxcts_jloc xat = {at->file, pi};
    long size;
    rc = mxcts_jas_long(&xat, x, 1, MAX_OPS, &size);
    if (!rc) rc = push_sizes(&xat, g, size, 1);
    free(pi);
    if (rc) break;
  }
  free(p);
  return rc;
}

static int gen_concat(const struct mxcts_jloc *at, json_t *a, struct gen *g, int depth) {
  if (!json_is_array(a) || json_array_size(a) == 0)
    return mxcts_jfail_key(at, "concat", "expected a non-empty array of generators");
  if (depth > 8) return mxcts_jfail_key(at, "concat", "nested too deeply");
  char *p = mxcts_jpath_key(at->path, "concat");
  int rc = 0;
  size_t i;
  json_t *x;
  json_array_foreach(a, i, x) {
    char *pi = mxcts_jpath_index(p, i);
    struct mxcts_jloc xat = {at->file, pi};
    rc = gen_parse(&xat, x, g, depth + 1);
    free(pi);
    if (rc) break;
  }
  free(p);
  return rc;
}

static const char *const gen_keys[] = {"bulk", "single", "sizes", "concat", NULL};

/* The one generator member of v (v may hold other, non-generator members). */
static int gen_parse(const struct mxcts_jloc *at, json_t *v, struct gen *g, int depth) {
  if (!json_is_object(v)) return mxcts_jfail(at, "expected a generator object");
  const char *which = NULL;
  for (size_t i = 0; gen_keys[i]; i++) {
    if (!json_object_get(v, gen_keys[i])) continue;
    if (which)
      return mxcts_jfail(at, "give one generator, not both \"%s\" and \"%s\"", which, gen_keys[i]);
    which = gen_keys[i];
  }
  if (!which) {
    if (depth == 0) return 0; /* a pass may give engine_ops alone */
    return mxcts_jfail(at, "expected one of bulk, single, sizes, concat");
  }
  if (depth > 0 && json_object_size(v) != 1)
    return mxcts_jfail(at, "a nested generator has exactly one member");
  json_t *x = json_object_get(v, which);
  if (!strcmp(which, "bulk")) return gen_bulk(at, x, g);
  if (!strcmp(which, "sizes")) return gen_sizes(at, x, g);
  if (!strcmp(which, "concat")) return gen_concat(at, x, g, depth);
  long n;
  char *p = mxcts_jpath_key(at->path, "single");
  struct mxcts_jloc sat = {at->file, p};
  int rc = mxcts_jas_long(&sat, x, 0, MAX_OPS, &n);
  free(p);
  if (!rc) rc = push_sizes(at, g, 1, n);
  return rc;
}

/* "66x15 + 10": run lengths of the sizes. */
static void summarise(struct mxcts_pass_expect *p, long extra) {
  struct mxcts_buf b = {0};
  mxcts_buf_printf(&b, "%ld engine ops", p->engine_ops);
  const char *sep = ": ";
  for (size_t i = 0; i < p->nsizes;) {
    size_t j = i;
    while (j < p->nsizes && p->sizes[j] == p->sizes[i]) j++;
    if (j - i > 1) mxcts_buf_printf(&b, "%s%zux%ld", sep, j - i, p->sizes[i]);
    else mxcts_buf_printf(&b, "%s%ld", sep, p->sizes[i]);
    sep = " + ";
    i = j;
  }
  if (extra) mxcts_buf_printf(&b, "%s%ld other ops", sep, extra);
  if (p->graph_launches >= 0) mxcts_buf_printf(&b, "; %ld CUDA graph launches", p->graph_launches);
  if (p->graph_captures >= 0) mxcts_buf_printf(&b, "; %ld CUDA graph captures", p->graph_captures);
  p->summary = mxcts_buf_take(&b);
}

static int parse_compare(const struct mxcts_jloc *at, json_t *v, unsigned *mask) {
  json_t *a = json_object_get(v, "compare");
  if (!a) return 0;
  /* in the order of the MXCTS_CMP_* bits */
  static const char *const names[] = {"engine_ops",    "segment_sizes",  "bulked_events",
                                      "names",         "graph_launches", "graph_captures"};
  enum { NNAMES = sizeof names / sizeof names[0] };
  if (!json_is_array(a) || json_array_size(a) == 0)
    return mxcts_jfail_key(at, "compare", "expected a non-empty array of field names");
  *mask = 0;
  size_t i;
  json_t *x;
  json_array_foreach(a, i, x) {
    unsigned bit = 0;
    for (unsigned j = 0; j < NNAMES && json_is_string(x); j++)
      if (!strcmp(json_string_value(x), names[j])) bit = 1u << j;
    if (!bit)
      return mxcts_jfail_key(at, "compare", "item %zu is not one of engine_ops, segment_sizes, "
                             "bulked_events, names, graph_launches, graph_captures", i);
    *mask |= bit;
  }
  return 0;
}

static char *segment_name(const char *op, const char *style, long size) {
  if (!strcmp(style, "imperative")) return mxcts_xstrdup("ImperativeBulk");
  struct mxcts_buf b = {0};
  bool bracket = !strcmp(style, "bracket");
  if (bracket) mxcts_buf_puts(&b, "[");
  for (long i = 0; i < size; i++) mxcts_buf_printf(&b, "%s%s", i ? "," : "", op);
  if (bracket) mxcts_buf_puts(&b, "]");
  return mxcts_buf_take(&b);
}

static int parse_names(const struct mxcts_jloc *at, json_t *v, struct mxcts_pass_expect *p) {
  char *op = NULL, *style = NULL;
  int rc = mxcts_jget_string(at, v, "op", false, &op);
  if (!rc) rc = mxcts_jget_string(at, v, "name_style", false, &style);
  if (!rc && style && strcmp(style, "bracket") && strcmp(style, "plain") &&
      strcmp(style, "imperative"))
    rc = mxcts_jfail_key(at, "name_style", "\"%s\" is not bracket, plain or imperative", style);
  if (!rc && style && !op && strcmp(style, "imperative"))
    rc = mxcts_jfail_key(at, "name_style", "needs \"op\"");
  if (!rc && (op || style)) {
    for (size_t i = 0; i < p->nsizes; i++) {
      char *name = segment_name(op ? op : "", style ? style : "bracket", p->sizes[i]);
      if (!mxcts_strv_contains(&p->names, name)) mxcts_strv_push(&p->names, name);
      free(name);
    }
    p->compare |= MXCTS_CMP_NAMES;
  }
  free(op);
  free(style);
  return rc;
}

static const char *const pass_keys[] = {"bulk",          "single",         "sizes",
                                        "concat",        "extra_ops",      "engine_ops",
                                        "bulked_events", "graph_launches", "graph_captures",
                                        "compare",       "op",             "name_style",
                                        NULL};

static int parse_pass(const struct mxcts_jloc *at, const char *name, json_t *v,
                      struct mxcts_pass_expect *p) {
  struct gen g = {0};
  long extra = 0, ops = -1, bulked = -1, launches = -1, captures = -1;
  int rc = mxcts_jcheck_object(at, v, pass_keys);
  if (!rc) rc = gen_parse(at, v, &g, 0);
  if (!rc) rc = mxcts_jget_long(at, v, "extra_ops", false, 0, MAX_OPS, &extra);
  if (!rc) rc = mxcts_jget_long(at, v, "engine_ops", false, 0, MAX_OPS, &ops);
  if (!rc) rc = mxcts_jget_long(at, v, "bulked_events", false, 0, MAX_OPS, &bulked);
  if (!rc) rc = mxcts_jget_long(at, v, "graph_launches", false, 0, MAX_OPS, &launches);
  if (!rc) rc = mxcts_jget_long(at, v, "graph_captures", false, 0, MAX_OPS, &captures);
  p->name = mxcts_xstrdup(name);
  p->sizes = g.sizes;
  p->nsizes = g.n;
  p->engine_ops = ops >= 0 ? ops : (long)g.n + extra;
  p->bulked_events = bulked;
  p->graph_launches = launches;
  p->graph_captures = captures;
  p->compare = MXCTS_CMP_ENGINE_OPS | MXCTS_CMP_SEGMENT_SIZES;
  if (bulked >= 0) p->compare |= MXCTS_CMP_BULKED_EVENTS;
  if (launches >= 0) p->compare |= MXCTS_CMP_GRAPH_LAUNCHES;
  if (captures >= 0) p->compare |= MXCTS_CMP_GRAPH_CAPTURES;
  if (!rc) rc = parse_names(at, v, p);
  if (!rc) rc = parse_compare(at, v, &p->compare);
  if (!rc && ops < 0 && !g.n && !extra)
    rc = mxcts_jfail(at, "predicts nothing: give a generator (bulk, single, sizes, concat) or "
                     "engine_ops");
  if (!rc && (p->compare & MXCTS_CMP_BULKED_EVENTS) && bulked < 0)
    rc = mxcts_jfail_key(at, "compare", "compares bulked_events, but none is given");
  if (!rc && (p->compare & MXCTS_CMP_GRAPH_LAUNCHES) && launches < 0)
    rc = mxcts_jfail_key(at, "compare", "compares graph_launches, but none is given");
  if (!rc && (p->compare & MXCTS_CMP_GRAPH_CAPTURES) && captures < 0)
    rc = mxcts_jfail_key(at, "compare", "compares graph_captures, but none is given");
  if (!rc && launches >= 0 && captures > launches)
    rc = mxcts_jfail_key(at, "graph_captures", "%ld captures but only %ld launches: every "
                         "capture launches its graph", captures, launches);
  if (!rc) summarise(p, extra);
  return rc;
}

static int parse_passes(const struct mxcts_jloc *at, json_t *v, struct mxcts_structure_expect *e) {
  if (!json_is_object(v) || json_object_size(v) == 0)
    return mxcts_jfail(at, "expected an object of passes, e.g. {\"forward\": {\"bulk\": [1000, 15]}}");
  e->passes = mxcts_xcalloc(json_object_size(v), sizeof *e->passes);
  const char *name;
  json_t *pv;
  json_object_foreach(v, name, pv) {
    char *p = mxcts_jpath_key(at->path, name);
    struct mxcts_jloc pat = {at->file, p};
    int rc = mxcts_valid_id(name) ? 0 : mxcts_jfail(&pat, "\"%s\" is not a valid pass name", name);
    if (!rc) rc = parse_pass(&pat, name, pv, &e->passes[e->npasses++]);
    free(p);
    if (rc) return rc;
  }
  return 0;
}

/* One "expect" member: a config reference and its passes, copied to every
 * config the reference names. */
static int parse_expect_entry(const struct mxcts_jloc *at, const char *ref, json_t *v,
                              const struct mxcts_suite *s, struct mxcts_assertion *a) {
  size_t *idx = NULL, n = 0;
  int rc = mxcts__suite_resolve_ref(at, s, ref, &idx, &n);
  for (size_t i = 0; !rc && i < n; i++) {
    for (size_t j = 0; j < a->nconfigs && !rc; j++)
      if (a->configs[j] == idx[i])
        rc = mxcts_jfail(at, "config \"%s\" is predicted twice", s->configs[idx[i]].id);
    if (rc) break;
    a->structs = mxcts_xrealloc(a->structs, (a->nstructs + 1) * sizeof *a->structs);
    struct mxcts_structure_expect *e = &a->structs[a->nstructs++];
    memset(e, 0, sizeof *e);
    e->config = idx[i];
    a->configs = mxcts_xrealloc(a->configs, (a->nconfigs + 1) * sizeof *a->configs);
    a->configs[a->nconfigs++] = idx[i];
    rc = parse_passes(at, v, e);
  }
  free(idx);
  return rc;
}

int mxcts__suite_parse_structure(const struct mxcts_jloc *at, json_t *v,
                                 const struct mxcts_suite *s, struct mxcts_assertion *a) {
  json_t *expect = NULL;
  int rc = mxcts_jget_typed(at, v, "expect", true, JSON_OBJECT, &expect);
  if (rc) return rc;
  if (json_object_size(expect) == 0)
    return mxcts_jfail_key(at, "expect", "needs at least one config");
  char *p = mxcts_jpath_key(at->path, "expect");
  const char *ref;
  json_t *ev;
  json_object_foreach(expect, ref, ev) {
    char *pr = mxcts_jpath_key(p, ref);
    struct mxcts_jloc eat = {at->file, pr};
    rc = parse_expect_entry(&eat, ref, ev, s, a);
    free(pr);
    if (rc) break;
  }
  free(p);
  return rc;
}

void mxcts__suite_free_pass(struct mxcts_pass_expect *p) {
  free(p->name);
  free(p->sizes);
  mxcts_strv_free(&p->names);
  free(p->summary);
}
