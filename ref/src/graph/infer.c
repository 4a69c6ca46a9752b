/*
 * Shape and dtype inference over a graph: repeated passes over the nodes in
 * order, each op's own inference filling what it can (outputs from inputs,
 * and inputs such as weights from data), until nothing changes.  Shapes
 * may be partial (a 0 dimension is an unknown size); a shape or a dimension
 * only goes from unknown to known, so the loop ends.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
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

/* An integer as a C++ stream reads one (MXNet parses its attributes so):
 * spaces, an optional sign, decimal digits.  False when there are no
 * digits or the value overflows int64. */
static bool read_integer(const char **p, int64_t *v) {
  const char *s = *p;
  while (isspace((unsigned char)*s)) s++;
  int sign = *s == '+' || *s == '-';
  if (!isdigit((unsigned char)s[sign])) return false;
  errno = 0;
  char *end;
  long long x = strtoll(s, &end, 10);
  if (errno == ERANGE) return false;
  *v = x;
  *p = end;
  return true;
}

static const char *skip_spaces(const char *p) {
  while (isspace((unsigned char)*p)) p++;
  return p;
}

/* The integers of a tuple after its opening bracket, as MXNet's Tuple
 * reads them: each may end in L; a comma before the closing bracket is
 * allowed.  -1: not a tuple; -2: more dimensions than MXR_MAX_NDIM. */
static int read_tuple(const char *p, struct mxr_shape *s) {
  p = skip_spaces(p);
  s->ndim = 0;
  if (*p == ')' || *p == ']') return 0;
  for (;;) {
    int64_t v;
    if (!read_integer(&p, &v)) return -1;
    if (s->ndim == MXR_MAX_NDIM) return -2;
    s->dim[s->ndim++] = v;
    p = skip_spaces(p);
    if (*p == 'L') p++;
    if (*p == ')' || *p == ']') return 0;
    if (*p != ',') return -1;
    p = skip_spaces(p + 1);
    if (*p == ')' || *p == ']') return 0;
  }
}

/* MXNet's TShape text: "None" (ndim -1), one integer (one dimension), or a
 * tuple in () or []; what follows is ignored, as MXNet does. */
static int read_tshape(const char *text, struct mxr_shape *s) {
  const char *p = skip_spaces(text);
  int64_t v;
  if (isdigit((unsigned char)*p) || *p == '-') {
    if (!read_integer(&p, &v)) return -1;
    *s = (struct mxr_shape){1, {v}};
    return 0;
  }
  if (strncmp(p, "None", 4) == 0 && (!p[4] || isspace((unsigned char)p[4]))) {
    s->ndim = -1;
    return 0;
  }
  return *p == '(' || *p == '[' ? read_tuple(p + 1, s) : -1;
}

/* A variable's __shape__ as a partial shape: -1 and 0 are unknown sizes
 * (MXNet's legacy shapes), and "()" or "None" an unknown shape (ndim -1).
 * Text MXNet would not read as a shape, a size below -1, or one of 2^31
 * or more fails naming the variable and the text. */
static int shape_attr(const struct mxr_node *n, const char *text, struct mxr_shape *out) {
  struct mxr_shape s;
  int st = read_tshape(text, &s);
  if (st == -2)
    return mxr_set_error(MXR_EINVAL,
                         "infer_shape: the __shape__ of variable '%s' is \"%s\": more than %d dimensions, "
                         "the most libmxref supports",
                         n->name, text, MXR_MAX_NDIM);
  for (int d = 0; !st && d < s.ndim; d++) {
    if (s.dim[d] < -1 || s.dim[d] > INT32_MAX) st = -1;
    else if (s.dim[d] < 0) s.dim[d] = 0;
  }
  if (st)
    return mxr_set_error(MXR_EINVAL,
                         "infer_shape: the __shape__ of variable '%s' is \"%s\", not a shape: a tuple of "
                         "integers from -1 (unknown) to 2^31 - 1, such as (2,3) or [2, 3]",
                         n->name, text);
  if (s.ndim == 0) s.ndim = -1;
  *out = s;
  return 0;
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

/* Given shapes first; then, as MXNet, a variable whose shape is not given
 * whole takes its __shape__ instead when that has a rank. */
static int preset_known(const mxr_symbol *s, struct mxr_shape **shapes, int num_known,
                        const char *const *names, const struct mxr_shape *known) {
  for (int k = 0; k < num_known; k++) {
    bool found = false;
    for (int i = 0; i < s->num_nodes && !found; i++)
      if (mxr__node_is_var(&s->nodes[i]) && strcmp(s->nodes[i].name, names[k]) == 0) {
        if (known[k].ndim >= 0) shapes[i][0] = known[k]; /* ndim -1: given as unknown */
        found = true;
      }
    if (!found) return mxr_set_error(MXR_EINVAL, "infer_shape: the symbol has no argument named '%s'", names[k]);
  }
  for (int i = 0; i < s->num_nodes; i++) {
    const char *text = mxr__node_is_var(&s->nodes[i]) ? mxr__node_attr(&s->nodes[i], "__shape__") : NULL;
    if (!text || mxr__shape_complete(&shapes[i][0])) continue;
    struct mxr_shape attr;
    int st = shape_attr(&s->nodes[i], text, &attr);
    if (st) return st;
    if (attr.ndim >= 0) shapes[i][0] = attr;
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

/* A variable's __dtype__ (MXNet's dtype code, read as an int the way a
 * C++ stream reads one) presets its type where none is given. */
static int dtype_attr(const struct mxr_node *n, const char *text, int *out) {
  const char *p = text;
  int64_t v;
  if (!read_integer(&p, &v) || v < INT_MIN || v > INT_MAX)
    return mxr_set_error(MXR_EINVAL, "infer_type: the __dtype__ of variable '%s' is \"%s\", not a dtype code",
                         n->name, text);
  *out = (int)v;
  return 0;
}

static int preset_types(const mxr_symbol *s, int **types, int num_known, const char *const *names,
                        const int *known) {
  for (int k = 0; k < num_known; k++) {
    bool found = false;
    for (int i = 0; i < s->num_nodes && !found; i++)
      if (mxr__node_is_var(&s->nodes[i]) && strcmp(s->nodes[i].name, names[k]) == 0) {
        types[i][0] = known[k];
        found = true;
      }
    if (!found) return mxr_set_error(MXR_EINVAL, "infer_type: the symbol has no argument named '%s'", names[k]);
  }
  for (int i = 0; i < s->num_nodes; i++) {
    const char *text = mxr__node_is_var(&s->nodes[i]) ? mxr__node_attr(&s->nodes[i], "__dtype__") : NULL;
    int st = text && types[i][0] < 0 ? dtype_attr(&s->nodes[i], text, &types[i][0]) : 0;
    if (st) return st;
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
