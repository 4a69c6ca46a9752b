/*
 * Shape and dtype inference over a graph: repeated passes over the nodes in
 * order, each op's own inference filling what it can (outputs from inputs,
 * and inputs such as weights from data), until nothing changes.  Shapes
 * may be partial (a 0 dimension is an unknown size); a shape or a dimension
 * only goes from unknown to known, so the loop ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

#define MAX_SLOTS 64

static int node_error(const struct mxr_node *n, int st) {
  char msg[MXR_ERROR_MAX];
  snprintf(msg, sizeof msg, "%s", mxr_last_error());
  return mxr_set_error(st, "Error in operator %s (%s): %s", n->name, mxr_op_name(n->op), msg);
}

/* One node: gather its input shapes, infer, scatter back what became known
 * (whole shapes or single dimensions of partial ones); *changed is set when
 * anything did. */
static int infer_node_shapes(const mxr_symbol *s, int i, struct mxr_shape **shapes, bool *changed) {
  const struct mxr_node *n = &s->nodes[i];
  int nin = mxr__node_num_inputs(n), naux = mxr__node_num_aux(n), nout = mxr__node_num_outputs(n);
  if (n->nin > MAX_SLOTS || nout > MAX_SLOTS)
    return mxr_set_error(MXR_EINVAL, "Error in operator %s: too many inputs or outputs", n->name);
  struct mxr_shape in[MAX_SLOTS], out[MAX_SLOTS];
  for (int k = 0; k < n->nin; k++) {
    const struct mxr_entry *e = &n->inputs[k];
    in[k] = e->node >= 0 ? shapes[e->node][e->index] : (struct mxr_shape){-1, {0}};
  }
  for (int k = 0; k < nout; k++) out[k] = shapes[i][k];
  int st = mxr__op_infer_shape(n->op, n->params, in, nin, out, nout, in + nin, naux);
  if (st) return node_error(n, st);
  for (int k = 0; k < n->nin; k++) {
    const struct mxr_entry *e = &n->inputs[k];
    if (e->node >= 0 && mxr__shape_fill(&shapes[e->node][e->index], &in[k])) *changed = true;
  }
  for (int k = 0; k < nout; k++)
    if (mxr__shape_fill(&shapes[i][k], &out[k])) *changed = true;
  return 0;
}

int mxr__graph_infer_shapes(const mxr_symbol *s, struct mxr_shape **shapes) {
  return mxr__graph_infer_shapes_range(s, shapes, 0, s->num_nodes);
}

int mxr__graph_infer_shapes_range(const mxr_symbol *s, struct mxr_shape **shapes, int from, int to) {
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = from; i < to; i++) {
      if (mxr__node_is_var(&s->nodes[i])) continue;
      int st = infer_node_shapes(s, i, shapes, &changed);
      if (st) return st;
    }
  }
  return 0;
}

static int infer_node_types(const mxr_symbol *s, int i, int **dtypes, bool *changed) {
  const struct mxr_node *n = &s->nodes[i];
  int nin = mxr__node_num_inputs(n), naux = mxr__node_num_aux(n), nout = mxr__node_num_outputs(n);
  if (n->nin > MAX_SLOTS || nout > MAX_SLOTS)
    return mxr_set_error(MXR_EINVAL, "Error in operator %s: too many inputs or outputs", n->name);
  int in[MAX_SLOTS], out[MAX_SLOTS];
  for (int k = 0; k < n->nin; k++) {
    const struct mxr_entry *e = &n->inputs[k];
    in[k] = e->node >= 0 ? dtypes[e->node][e->index] : -1;
  }
  for (int k = 0; k < nout; k++) out[k] = dtypes[i][k];
  int st = mxr__op_infer_type(n->op, n->params, in, nin, out, nout, in + nin, naux);
  if (st) return node_error(n, st);
  for (int k = 0; k < n->nin; k++) {
    const struct mxr_entry *e = &n->inputs[k];
    if (e->node >= 0 && dtypes[e->node][e->index] < 0 && in[k] >= 0) {
      dtypes[e->node][e->index] = in[k];
      *changed = true;
    }
  }
  for (int k = 0; k < nout; k++)
    if (dtypes[i][k] < 0 && out[k] >= 0) {
      dtypes[i][k] = out[k];
      *changed = true;
    }
  return 0;
}

int mxr__graph_infer_types(const mxr_symbol *s, int **dtypes) {
  return mxr__graph_infer_types_range(s, dtypes, 0, s->num_nodes);
}

int mxr__graph_infer_types_range(const mxr_symbol *s, int **dtypes, int from, int to) {
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = from; i < to; i++) {
      if (mxr__node_is_var(&s->nodes[i])) continue;
      int st = infer_node_types(s, i, dtypes, &changed);
      if (st) return st;
    }
  }
  return 0;
}

/* ------------------------------------------------- public shape query */

/* Parse a variable's __shape__ attribute ("(2,3)" or "[2, 3]") if it has one; a 0 or
 * negative dimension is an unknown size, so "(1,0)" presets a partial shape
 * and "()" none. */
static void preset_from_attr(const struct mxr_node *n, struct mxr_shape *slot) {
  const char *text = mxr__node_attr(n, "__shape__");
  if (!text) return;
  const char *p = strpbrk(text, "([");
  if (!p) return;
  struct mxr_shape s = {0, {0}};
  for (p++; *p && *p != ')' && *p != ']' && s.ndim < MXR_MAX_NDIM;) {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p) break;
    s.dim[s.ndim++] = v > 0 ? v : 0;
    p = end;
    while (*p == ',' || *p == ' ') p++;
  }
  if (s.ndim > 0) *slot = s;
}

static struct mxr_shape **alloc_shapes(const mxr_symbol *s) {
  struct mxr_shape **shapes = calloc((size_t)s->num_nodes + 1, sizeof *shapes);
  if (!shapes) return NULL;
  for (int i = 0; i < s->num_nodes; i++) {
    int nout = mxr__node_num_outputs(&s->nodes[i]);
    shapes[i] = malloc((size_t)(nout > 0 ? nout : 1) * sizeof **shapes);
    if (!shapes[i]) {
      for (int k = 0; k < i; k++) free(shapes[k]);
      free(shapes);
      return NULL;
    }
    for (int k = 0; k < nout; k++) shapes[i][k].ndim = -1;
  }
  return shapes;
}

static void free_shapes(const mxr_symbol *s, struct mxr_shape **shapes) {
  for (int i = 0; shapes && i < s->num_nodes; i++) free(shapes[i]);
  free(shapes);
}

static int preset_known(const mxr_symbol *s, struct mxr_shape **shapes, int num_known,
                        const char *const *names, const struct mxr_shape *known) {
  for (int i = 0; i < s->num_nodes; i++)
    if (mxr__node_is_var(&s->nodes[i])) preset_from_attr(&s->nodes[i], &shapes[i][0]);
  for (int k = 0; k < num_known; k++) {
    bool found = false;
    for (int i = 0; i < s->num_nodes && !found; i++)
      if (mxr__node_is_var(&s->nodes[i]) && strcmp(s->nodes[i].name, names[k]) == 0) {
        if (known[k].ndim >= 0) shapes[i][0] = known[k]; /* ndim -1: given as unknown */
        found = true;
      }
    if (!found) return mxr_set_error(MXR_EINVAL, "infer_shape: the symbol has no argument named '%s'", names[k]);
  }
  return 0;
}

int mxr_symbol_infer_shape(const mxr_symbol *s, int num_known, const char *const *names,
                           const struct mxr_shape *known, struct mxr_shape *arg_shapes,
                           struct mxr_shape *out_shapes, struct mxr_shape *aux_shapes,
                           int *complete) {
  if (!s || (num_known > 0 && (!names || !known)) || !arg_shapes || !out_shapes || !aux_shapes || !complete)
    return mxr_set_error(MXR_EINVAL, "mxr_symbol_infer_shape: NULL argument");
  struct mxr_shape **shapes = alloc_shapes(s);
  if (!shapes) return mxr_set_error(MXR_ENOMEM, "infer_shape: out of memory");
  int st = preset_known(s, shapes, num_known, names, known);
  if (!st) st = mxr__graph_infer_shapes(s, shapes);
  if (st) {
    free_shapes(s, shapes);
    return st;
  }
  int na = 0, nx = 0;
  *complete = 1;
  for (int i = 0; i < s->num_nodes; i++) {
    if (!mxr__node_is_var(&s->nodes[i])) continue;
    struct mxr_shape sh = shapes[i][0];
    *complete &= mxr__shape_complete(&sh);
    if (mxr__symbol_var_is_aux(s, i)) aux_shapes[nx++] = sh;
    else arg_shapes[na++] = sh;
  }
  for (int h = 0; h < s->num_heads; h++) {
    out_shapes[h] = shapes[s->heads[h].node][s->heads[h].index];
    *complete &= mxr__shape_complete(&out_shapes[h]);
  }
  free_shapes(s, shapes);
  return 0;
}

/* -------------------------------------------------- public type query */

static int **alloc_types(const mxr_symbol *s) {
  int **types = calloc((size_t)s->num_nodes + 1, sizeof *types);
  if (!types) return NULL;
  for (int i = 0; i < s->num_nodes; i++) {
    int nout = mxr__node_num_outputs(&s->nodes[i]);
    types[i] = malloc((size_t)(nout > 0 ? nout : 1) * sizeof **types);
    if (!types[i]) {
      for (int k = 0; k < i; k++) free(types[k]);
      free(types);
      return NULL;
    }
    for (int k = 0; k < nout; k++) types[i][k] = -1;
  }
  return types;
}

static void free_types(const mxr_symbol *s, int **types) {
  for (int i = 0; types && i < s->num_nodes; i++) free(types[i]);
  free(types);
}

/* A variable's __dtype__ attribute (MXNet's dtype code) presets its type. */
static int preset_types(const mxr_symbol *s, int **types, int num_known, const char *const *names,
                        const int *known) {
  for (int i = 0; i < s->num_nodes; i++) {
    const char *text = mxr__node_is_var(&s->nodes[i]) ? mxr__node_attr(&s->nodes[i], "__dtype__") : NULL;
    if (text) types[i][0] = atoi(text);
  }
  for (int k = 0; k < num_known; k++) {
    bool found = false;
    for (int i = 0; i < s->num_nodes && !found; i++)
      if (mxr__node_is_var(&s->nodes[i]) && strcmp(s->nodes[i].name, names[k]) == 0) {
        types[i][0] = known[k];
        found = true;
      }
    if (!found) return mxr_set_error(MXR_EINVAL, "infer_type: the symbol has no argument named '%s'", names[k]);
  }
  return 0;
}

int mxr_symbol_infer_type(const mxr_symbol *s, int num_known, const char *const *names,
                          const int *known, int *arg_types, int *out_types, int *aux_types,
                          int *complete) {
  if (!s || (num_known > 0 && (!names || !known)) || !arg_types || !out_types || !aux_types || !complete)
    return mxr_set_error(MXR_EINVAL, "mxr_symbol_infer_type: NULL argument");
  int **types = alloc_types(s);
  if (!types) return mxr_set_error(MXR_ENOMEM, "infer_type: out of memory");
  int st = preset_types(s, types, num_known, names, known);
  if (!st) st = mxr__graph_infer_types(s, types);
  if (st) {
    free_types(s, types);
    return st;
  }
  int na = 0, nx = 0;
  *complete = 1;
  for (int i = 0; i < s->num_nodes; i++) {
    if (!mxr__node_is_var(&s->nodes[i])) continue;
    int t = types[i][0];
    *complete &= t >= 0;
    if (mxr__symbol_var_is_aux(s, i)) aux_types[nx++] = t;
    else arg_types[na++] = t;
  }
  for (int h = 0; h < s->num_heads; h++) {
    out_types[h] = types[s->heads[h].node][s->heads[h].index];
    *complete &= out_types[h] >= 0;
  }
  free_types(s, types);
  return 0;
}
