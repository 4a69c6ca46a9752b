/*
 * The gradient pass: append to a copy of the forward graph the nodes that
 * compute the gradients of the requested arguments.
 *
 * Forward nodes are visited in reverse order.  Every value collects the
 * gradient contributions of its consumers; a node that lies on a path from
 * a requested argument gets one backward node (its op's `backward`, inputs
 * per the convention in op_internal.h), fed with the sum of its outputs'
 * contributions (add_n when there are several, zeros_like when there are
 * none).  Each head gets a variable node holding the gradient given to
 * backward().  New nodes are appended in creation order, which is
 * topological, so the forward graph keeps its node ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/executor_internal.h"

/* Gradient contributions of one value. */
struct contribs {
  struct mxr_entry *e;
  int n, cap;
};

struct grad_state {
  mxr_symbol *g;
  int num_fwd;
  int *row;               /* value index of output 0 of each forward node */
  struct contribs *c;     /* per forward value */
  bool *needs;            /* per forward node: depends on a requested argument */
};

static int oom(void) { return mxr_set_error(MXR_ENOMEM, "gradient: out of memory"); }

static int contrib_add(struct contribs *c, struct mxr_entry e) {
  if (c->n == c->cap) {
    int ncap = c->cap ? 2 * c->cap : 2;
    struct mxr_entry *grown = realloc(c->e, (size_t)ncap * sizeof *grown);
    if (!grown) return oom();
    c->e = grown;
    c->cap = ncap;
  }
  c->e[c->n++] = e;
  return 0;
}

/* Append an op node; `kv` params are the source node's (may be NULL). */
static int add_op_node(struct grad_state *st, const char *opname, const mxr_op_params *src_params,
                       int nparams_extra, const char *const *keys_extra,
                       const char *const *vals_extra, const char *name,
                       const struct mxr_entry *inputs, int nin, int *index) {
  const mxr_op *op;
  int rc = mxr_op_find(opname, &op);
  if (rc) return rc;
  int n = mxr_op_params_count(src_params) + nparams_extra;
  const char **keys = calloc((size_t)n + 1, sizeof *keys), **vals = calloc((size_t)n + 1, sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return oom();
  }
  /* A backward op gets the forward node's parameters -- those it knows:
   * _plus_scalar's gradient is a plain _copy, which takes none. */
  int k = 0;
  for (int i = 0; i < mxr_op_params_count(src_params); i++) {
    const char *key = mxr_op_params_key(src_params, i);
    bool known = key[0] == '_' && key[1] == '_';
    for (int f = 0; f < op->num_fields && !known; f++) known = strcmp(op->fields[f].name, key) == 0;
    if (!known) continue;
    keys[k] = key;
    vals[k++] = mxr_op_params_value(src_params, i);
  }
  for (int i = 0; i < nparams_extra; i++, k++) {
    keys[k] = keys_extra[i];
    vals[k] = vals_extra[i];
  }
  struct mxr_node node = {.uid = mxr__node_uid(), .op = op, .nin = nin};
  rc = mxr_op_params_parse(op, k, keys, vals, &node.params);
  free(keys);
  free(vals);
  if (!rc) {
    node.name = strdup(name);
    node.inputs = malloc((size_t)(nin > 0 ? nin : 1) * sizeof *node.inputs);
    if (!node.name || !node.inputs) rc = oom();
    else memcpy(node.inputs, inputs, (size_t)nin * sizeof *inputs);
  }
  if (!rc && mxr_op_num_inputs(op, node.params) + mxr_op_num_aux(op, node.params) != nin)
    rc = mxr_set_error(MXR_EINVAL, "gradient: %s takes %d inputs, the gradient of %s gives it %d",
                       opname, mxr_op_num_inputs(op, node.params) + mxr_op_num_aux(op, node.params),
                       name, nin);
  if (!rc) rc = mxr__symbol_add_node(st->g, &node, index);
  if (rc) mxr__node_clear(&node);
  return rc;
}

/* The single gradient entry of a value: its contribution, their sum, or
 * zeros shaped like the value. */
static int aggregate(struct grad_state *st, struct mxr_entry value, const char *hint,
                     struct mxr_entry *out) {
  struct contribs *c = &st->c[st->row[value.node] + value.index];
  char name[600];
  int at;
  if (c->n == 1) {
    *out = c->e[0];
    return 0;
  }
  if (c->n == 0) {
    snprintf(name, sizeof name, "%s_zeros", hint);
    int rc = add_op_node(st, "zeros_like", NULL, 0, NULL, NULL, name, &value, 1, &at);
    if (!rc) *out = (struct mxr_entry){at, 0};
    return rc;
  }
  char num[16];
  snprintf(num, sizeof num, "%d", c->n);
  const char *k[] = {"num_args"}, *v[] = {num};
  snprintf(name, sizeof name, "%s_sum", hint);
  int rc = add_op_node(st, "add_n", NULL, 1, k, v, name, c->e, c->n, &at);
  if (!rc) *out = (struct mxr_entry){at, 0};
  return rc;
}

/* Is `e` read by any node, or the gradient of an argument other than a? */
static bool entry_shared(const struct grad_state *st, const struct full_graph *fg, int a,
                         struct mxr_entry e) {
  for (int i = 0; i < st->g->num_nodes; i++)
    for (int k = 0; k < st->g->nodes[i].nin; k++)
      if (st->g->nodes[i].inputs[k].node == e.node && st->g->nodes[i].inputs[k].index == e.index)
        return true;
  for (int b = 0; b < a; b++)
    if (fg->arg_grads[b].node == e.node && fg->arg_grads[b].index == e.index) return true;
  return false;
}

/* An argument's gradient is written straight into its gradient array, so
 * it must be a value of its own: produced by a backward-region op and read
 * by nobody else.  Otherwise (a head gradient passed through unchanged, a
 * value two arguments share) a _copy node gives it one. */
static int make_private(struct grad_state *st, struct full_graph *fg, int a) {
  struct mxr_entry e = fg->arg_grads[a];
  const struct mxr_node *producer = &st->g->nodes[e.node];
  if (e.node >= st->num_fwd && !mxr__node_is_var(producer) && !entry_shared(st, fg, a, e)) return 0;
  char name[600];
  snprintf(name, sizeof name, "%s_grad_copy", st->g->nodes[fg->arg_nodes[a]].name);
  int at;
  int rc = add_op_node(st, "_copy", NULL, 0, NULL, NULL, name, &e, 1, &at);
  if (!rc) fg->arg_grads[a] = (struct mxr_entry){at, 0};
  return rc;
}

/* Which forward nodes depend on a requested argument. */
static void mark_needs(struct grad_state *st, const struct full_graph *fg, const int *grad_req) {
  for (int a = 0; a < fg->num_args; a++)
    if (grad_req[a] != MXR_GRAD_NULL) st->needs[fg->arg_nodes[a]] = true;
  for (int i = 0; i < st->num_fwd; i++) {
    const struct mxr_node *n = &st->g->nodes[i];
    for (int k = 0; k < n->nin && !mxr__node_is_var(n); k++)
      if (st->needs[n->inputs[k].node]) st->needs[i] = true;
  }
}

static int add_mirror(struct full_graph *fg, struct mxr_entry grad, struct mxr_entry of) {
  if (fg->num_mirrors == fg->cap_mirrors) {
    int ncap = fg->cap_mirrors ? 2 * fg->cap_mirrors : 16;
    struct mxr_entry *a = realloc(fg->mirror_grad, (size_t)ncap * sizeof *a);
    if (!a) return oom();
    fg->mirror_grad = a;
    struct mxr_entry *b = realloc(fg->mirror_of, (size_t)ncap * sizeof *b);
    if (!b) return oom();
    fg->mirror_of = b;
    fg->cap_mirrors = ncap;
  }
  fg->mirror_grad[fg->num_mirrors] = grad;
  fg->mirror_of[fg->num_mirrors++] = of;
  return 0;
}

/* The backward node of forward node i. */
static int backward_of(struct grad_state *st, struct full_graph *fg, int i) {
  const struct mxr_node *n = &st->g->nodes[i];
  const mxr_op *op = n->op;
  int nin = mxr__node_num_inputs(n), naux = mxr__node_num_aux(n);
  int nvis = mxr__node_num_visible(n), nout = mxr__node_num_outputs(n);
  struct mxr_entry ograd[64], bin[256];
  if (nvis > 64 || nvis + nin + nout + naux > 256)
    return mxr_set_error(MXR_EINVAL, "gradient: node %s has too many inputs or outputs", n->name);
  for (int k = 0; k < nvis; k++) {
    int rc = aggregate(st, (struct mxr_entry){i, k}, n->name, &ograd[k]);
    if (rc) return rc;
    n = &st->g->nodes[i]; /* the node array may have moved */
  }
  if (op->grad_passthrough) {
    for (int k = 0; k < nin; k++) {
      int rc = contrib_add(&st->c[st->row[n->inputs[k].node] + n->inputs[k].index], ograd[0]);
      if (rc) return rc;
    }
    return 0;
  }
  int nb = 0;
  for (int k = 0; k < nvis; k++) bin[nb++] = ograd[k];
  if (op->grad_flags & MXR_GRAD_USE_INPUTS)
    for (int k = 0; k < nin; k++) bin[nb++] = n->inputs[k];
  if (op->grad_flags & MXR_GRAD_USE_OUTPUTS)
    for (int k = 0; k < nout; k++) bin[nb++] = (struct mxr_entry){i, k};
  for (int k = 0; k < naux; k++) bin[nb++] = n->inputs[nin + k];
  char name[600];
  snprintf(name, sizeof name, "%s_backward", n->name);
  int at;
  int rc = add_op_node(st, op->backward, n->params, 0, NULL, NULL, name, bin, nb, &at);
  n = &st->g->nodes[i];
  for (int k = 0; k < nin && !rc; k++) {
    rc = add_mirror(fg, (struct mxr_entry){at, k}, n->inputs[k]);
    if (!rc && st->needs[n->inputs[k].node])
      rc = contrib_add(&st->c[st->row[n->inputs[k].node] + n->inputs[k].index],
                       (struct mxr_entry){at, k});
  }
  return rc;
}

static int add_head_grads(struct grad_state *st, struct full_graph *fg, bool identity) {
  fg->head_grad_nodes = malloc((size_t)(st->g->num_heads + 1) * sizeof *fg->head_grad_nodes);
  if (!fg->head_grad_nodes) return oom();
  for (int h = 0; h < st->g->num_heads; h++) {
    char name[64];
    snprintf(name, sizeof name, "head_grad%d", h);
    struct mxr_node v = {.uid = mxr__node_uid(), .name = strdup(name)};
    if (!v.name) return oom();
    int rc = mxr__symbol_add_node(st->g, &v, &fg->head_grad_nodes[h]);
    if (rc) {
      mxr__node_clear(&v);
      return rc;
    }
    /* As MXNet's executor: the head gradient enters through an identity that
     * takes the head's attributes (one op at the start of the backward
     * pass).  MXNet's cached ops feed it in directly. */
    struct mxr_entry in[2] = {{fg->head_grad_nodes[h], 0}, st->g->heads[h]};
    char iname[80];
    snprintf(iname, sizeof iname, "head_grad%d_like", h);
    int at = fg->head_grad_nodes[h];
    if (identity) rc = add_op_node(st, "_identity_with_attr_like_rhs", NULL, 0, NULL, NULL, iname, in, 2, &at);
    if (!rc)
      rc = contrib_add(&st->c[st->row[st->g->heads[h].node] + st->g->heads[h].index],
                       (struct mxr_entry){at, 0});
    if (rc) return rc;
  }
  return 0;
}

static int find_args(struct full_graph *fg) {
  const mxr_symbol *g = fg->g;
  fg->arg_nodes = malloc((size_t)(g->num_nodes + 1) * sizeof *fg->arg_nodes);
  fg->aux_nodes = malloc((size_t)(g->num_nodes + 1) * sizeof *fg->aux_nodes);
  if (!fg->arg_nodes || !fg->aux_nodes) return oom();
  for (int i = 0; i < g->num_nodes; i++) {
    if (!mxr__node_is_var(&g->nodes[i])) continue;
    if (mxr__symbol_var_is_aux(g, i)) fg->aux_nodes[fg->num_aux++] = i;
    else fg->arg_nodes[fg->num_args++] = i;
  }
  return 0;
}

static int build(struct grad_state *st, struct full_graph *fg, const int *grad_req, bool identity) {
  int rc = add_head_grads(st, fg, identity);
  mark_needs(st, fg, grad_req);
  for (int i = st->num_fwd - 1; i >= 0 && !rc; i--) {
    const struct mxr_node *n = &st->g->nodes[i];
    if (!mxr__node_is_var(n) && st->needs[i] && (n->op->backward || n->op->grad_passthrough))
      rc = backward_of(st, fg, i);
  }
  fg->arg_grads = malloc((size_t)(fg->num_args + 1) * sizeof *fg->arg_grads);
  if (!rc && !fg->arg_grads) rc = oom();
  for (int a = 0; a < fg->num_args && !rc; a++) {
    fg->arg_grads[a] = (struct mxr_entry){-1, 0};
    if (grad_req[a] == MXR_GRAD_NULL) continue;
    rc = aggregate(st, (struct mxr_entry){fg->arg_nodes[a], 0}, st->g->nodes[fg->arg_nodes[a]].name,
                   &fg->arg_grads[a]);
    if (!rc) rc = make_private(st, fg, a);
  }
  return rc;
}

int mxr__gradient_graph(const mxr_symbol *fwd, const int *grad_req, bool head_identity,
                        struct full_graph *fg) {
  memset(fg, 0, sizeof *fg);
  int rc = mxr_symbol_copy(fwd, &fg->g);
  if (!rc) rc = find_args(fg);
  fg->num_fwd = fg->g ? fg->g->num_nodes : 0;
  bool any = false;
  for (int a = 0; !rc && grad_req && a < fg->num_args; a++) any |= grad_req[a] != MXR_GRAD_NULL;
  if (rc || !any) {
    if (rc) mxr__full_graph_free(fg);
    return rc;
  }
  struct grad_state st = {.g = fg->g, .num_fwd = fg->num_fwd};
  st.row = malloc((size_t)(st.num_fwd + 1) * sizeof *st.row);
  st.needs = calloc((size_t)st.num_fwd + 1, sizeof *st.needs);
  int nvalues = 0;
  for (int i = 0; st.row && i < st.num_fwd; i++) {
    st.row[i] = nvalues;
    nvalues += mxr__node_num_outputs(&fg->g->nodes[i]);
  }
  st.c = calloc((size_t)nvalues + 1, sizeof *st.c);
  rc = st.row && st.needs && st.c ? build(&st, fg, grad_req, head_identity) : oom();
  for (int v = 0; st.c && v < nvalues; v++) free(st.c[v].e);
  free(st.c);
  free(st.row);
  free(st.needs);
  if (rc) mxr__full_graph_free(fg);
  return rc;
}

void mxr__full_graph_free(struct full_graph *fg) {
  mxr_symbol_free(fg->g);
  free(fg->arg_nodes);
  free(fg->aux_nodes);
  free(fg->head_grad_nodes);
  free(fg->arg_grads);
  free(fg->mirror_grad);
  free(fg->mirror_of);
  memset(fg, 0, sizeof *fg);
}
