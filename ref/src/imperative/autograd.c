/*
 * Autograd: recording imperative calls and running their gradients.
 *
 * The record is a DAG whose references point upstream: an array holds its
 * `ag_value` (in its autograd slot), a value holds the node that produced
 * it, a node holds its input arrays (and values) and hidden outputs.  Only
 * nodes whose backward reads their visible outputs (USE_OUTPUTS ops, cached
 * ops) also hold those outputs, which closes a loop array -> value -> node
 * -> array: such a record lives until a backward() through it without
 * retain_graph drops it (MXNet's handles and chunks avoid that loop; our
 * arrays are both, see docs/architecture.md).  Gradient contributions to a
 * node's outputs are kept on the node, so a node never needs to find the
 * value objects that name its outputs.
 *
 * backward() collects the nodes behind the heads, counts the consumers of
 * every value, then visits the nodes in reverse order: each node's output
 * gradients are summed (add_n) or zero-filled (zeros_like), its backward op
 * runs, and the input gradients become contributions to the inputs -- or go
 * straight into a marked variable's gradient array when that variable has a
 * single consumer.  All pushes run with the engine bulk size set to the
 * backward bulk size, as MXNet's Imperative::Backward does.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imperative/imperative_internal.h"
#include "mxref/config.h"
#include "ndarray/ndarray_internal.h"

#define MAX_ARRAYS 64

static _Thread_local int recording, training;

int mxr_autograd_set_recording(int on, int *prev) {
  if (prev) *prev = recording;
  recording = on != 0;
  return 0;
}
int mxr_autograd_set_training(int on, int *prev) {
  if (prev) *prev = training;
  training = on != 0;
  return 0;
}
int mxr_autograd_is_recording(void) { return recording; }
int mxr_autograd_is_training(void) { return training; }

static int oom(void) { return mxr_set_error(MXR_ENOMEM, "autograd: out of memory"); }

/* ------------------------------------------------------------- record */

struct ag_node;

/* Gradient contributions to one value, during one backward(). */
struct contribs {
  mxr_ndarray **a;
  int n, cap;
  bool written; /* went straight into a variable's gradient array */
};

struct ag_value {
  atomic_int refs;
  struct ag_node *node; /* producer; NULL for a variable or a constant */
  int index;            /* output of the producer */
  mxr_ndarray *array;   /* weak: the array whose slot holds this value */
  bool is_var;
  mxr_ndarray *grad;    /* marked variables: where the gradient goes */
  int grad_req;
  bool fresh_grad;      /* a backward() wrote grad since the flag was cleared */
  /* scratch for one backward() (variables and constants) */
  int consumers;
  bool noted;
  struct contribs own;
};

enum node_kind { NODE_OP, NODE_CACHED };

struct ag_node {
  atomic_int refs;
  enum node_kind kind;
  const mxr_op *op;
  mxr_op_params *params;
  mxr_cached_op *cop;
  struct cop_state *state;
  int nin, naux, nvis, nhidden;
  struct ag_value **in_vals;  /* per input: its value (may be NULL: untracked) */
  mxr_ndarray **in_arrays;    /* inputs then aux, one reference each */
  mxr_ndarray **vis;          /* kept (a reference each) only if keeps_outputs */
  bool keeps_outputs;
  mxr_ndarray **hidden;       /* one reference each */
  bool freed;                 /* the record was dropped after a backward */
  /* scratch for one backward() */
  int order;
  bool needs;                 /* some input needs a gradient */
  struct contribs *out;       /* per visible output */
};

static void node_release(struct ag_node *n);

static void contribs_clear(struct contribs *c) {
  for (int k = 0; k < c->n; k++) mxr_ndarray_free(c->a[k]);
  c->n = 0;
  c->written = false;
}

static void value_release(void *p) {
  struct ag_value *v = p;
  if (!v || atomic_fetch_sub(&v->refs, 1) != 1) return;
  if (v->node) node_release(v->node);
  mxr_ndarray_free(v->grad);
  contribs_clear(&v->own);
  free(v->own.a);
  free(v);
}

static struct ag_value *value_retain(struct ag_value *v) {
  if (v) atomic_fetch_add(&v->refs, 1);
  return v;
}

/* Drop what a node holds upstream (after backward without retain_graph). */
static void node_drop_record(struct ag_node *n) {
  for (int i = 0; i < n->nin; i++) value_release(n->in_vals[i]);
  for (int i = 0; i < n->nin + n->naux; i++) mxr_ndarray_free(n->in_arrays[i]);
  for (int i = 0; i < n->nhidden; i++) mxr_ndarray_free(n->hidden[i]);
  for (int k = 0; n->keeps_outputs && k < n->nvis; k++) mxr_ndarray_free(n->vis[k]);
  n->keeps_outputs = false;
  n->nin = n->naux = n->nhidden = 0;
  n->freed = true;
}

static void node_release(struct ag_node *n) {
  if (!n || atomic_fetch_sub(&n->refs, 1) != 1) return;
  node_drop_record(n);
  mxr_op_params_free(n->params);
  if (n->cop) mxr_cached_op_free(n->cop);
  for (int k = 0; n->out && k < n->nvis; k++) {
    contribs_clear(&n->out[k]);
    free(n->out[k].a);
  }
  free(n->out);
  free(n->in_vals);
  free(n->in_arrays);
  free(n->vis);
  free(n->hidden);
  free(n);
}

static struct ag_value *value_of(mxr_ndarray *a) { return mxr__ndarray_autograd(a); }

static struct ag_value *variable_of(mxr_ndarray *a) {
  struct ag_value *v = a ? value_of(a) : NULL;
  return v && v->is_var ? v : NULL;
}

mxr_ndarray *mxr_autograd_get_grad(mxr_ndarray *arr) {
  struct ag_value *v = variable_of(arr);
  return v ? mxr_ndarray_retain(v->grad) : NULL;
}

int mxr_autograd_fresh_grad(mxr_ndarray *arr) {
  struct ag_value *v = variable_of(arr);
  return v && v->fresh_grad;
}

int mxr_autograd_set_fresh_grad(mxr_ndarray *arr, int fresh) {
  struct ag_value *v = variable_of(arr);
  if (!v) return mxr_set_error(MXR_EINVAL, "set_fresh_grad: the array is not a marked variable");
  v->fresh_grad = fresh != 0;
  return 0;
}

bool mxr__autograd_any_tracked(int n, mxr_ndarray *const *arrays) {
  for (int i = 0; i < n; i++)
    if (value_of(arrays[i])) return true;
  return false;
}

static struct ag_value *new_value(mxr_ndarray *a) {
  struct ag_value *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  atomic_init(&v->refs, 1);
  v->array = a;
  return v;
}

int mxr_autograd_mark_variables(int num, mxr_ndarray *const *vars, const int *reqs,
                                mxr_ndarray *const *grads) {
  if (num < 0 || (num > 0 && (!vars || !reqs || !grads)))
    return mxr_set_error(MXR_EINVAL, "mark_variables: NULL argument");
  for (int i = 0; i < num; i++) {
    if (!vars[i] || !grads[i]) return mxr_set_error(MXR_EINVAL, "mark_variables: variable %d or its gradient is NULL", i);
    if (reqs[i] != MXR_GRAD_NULL && reqs[i] != MXR_GRAD_WRITE && reqs[i] != MXR_GRAD_ADD)
      return mxr_set_error(MXR_EINVAL, "mark_variables: grad_req %d of variable %d is not 0, 1 or 3", reqs[i], i);
    if (mxr_ndarray_size(vars[i]) != mxr_ndarray_size(grads[i]) ||
        mxr_ndarray_dtype(vars[i]) != mxr_ndarray_dtype(grads[i]))
      return mxr_set_error(MXR_EINVAL, "mark_variables: gradient %d does not match its variable's shape or dtype", i);
  }
  for (int i = 0; i < num; i++) {
    struct ag_value *v = new_value(vars[i]);
    if (!v) return oom();
    v->is_var = true;
    v->grad = mxr_ndarray_retain(grads[i]);
    v->grad_req = reqs[i];
    mxr__ndarray_set_autograd(vars[i], v, value_release);
  }
  return 0;
}

static struct ag_node *new_node(int nin, int naux, int nvis, int nhidden) {
  struct ag_node *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  atomic_init(&n->refs, 1);
  n->in_vals = calloc((size_t)nin + 1, sizeof *n->in_vals);
  n->in_arrays = calloc((size_t)(nin + naux) + 1, sizeof *n->in_arrays);
  n->vis = calloc((size_t)nvis + 1, sizeof *n->vis);
  n->hidden = calloc((size_t)nhidden + 1, sizeof *n->hidden);
  n->out = calloc((size_t)nvis + 1, sizeof *n->out);
  n->nvis = nvis;
  if (!n->in_vals || !n->in_arrays || !n->vis || !n->hidden || !n->out) {
    node_release(n);
    return NULL;
  }
  return n;
}

/* Fill the node's inputs and give each visible output a value naming it. */
static int attach(struct ag_node *n, int nin, mxr_ndarray *const *in, int naux, mxr_ndarray *const *aux,
                  int nvis, mxr_ndarray *const *vis, int nhidden, mxr_ndarray *const *hidden) {
  for (int i = 0; i < nin; i++) {
    n->in_vals[i] = value_retain(value_of(in[i]));
    n->in_arrays[i] = mxr_ndarray_retain(in[i]);
  }
  for (int i = 0; i < naux; i++) n->in_arrays[nin + i] = mxr_ndarray_retain(aux[i]);
  for (int i = 0; i < nhidden; i++) n->hidden[i] = mxr_ndarray_retain(hidden[i]);
  n->nin = nin;
  n->naux = naux;
  n->nhidden = nhidden;
  n->nvis = nvis;
  for (int k = 0; k < nvis; k++) {
    n->vis[k] = n->keeps_outputs ? mxr_ndarray_retain(vis[k]) : NULL;
    struct ag_value *v = new_value(vis[k]);
    if (!v) return oom();
    atomic_fetch_add(&n->refs, 1);
    v->node = n;
    v->index = k;
    mxr__ndarray_set_autograd(vis[k], v, value_release);
  }
  return 0;
}

int mxr__autograd_record_op(const mxr_op *op, mxr_op_params *params, int nin, mxr_ndarray *const *in,
                            int naux, mxr_ndarray *const *aux, int nvis, mxr_ndarray *const *vis,
                            int nhidden, mxr_ndarray *const *hidden) {
  struct ag_node *n = new_node(nin, naux, nvis, nhidden);
  if (!n) return oom();
  n->kind = NODE_OP;
  n->op = op;
  n->params = mxr_op_params_retain(params);
  n->keeps_outputs = (op->grad_flags & MXR_GRAD_USE_OUTPUTS) != 0;
  int rc = attach(n, nin, in, naux, aux, nvis, vis, nhidden, hidden);
  node_release(n); /* the output values hold it now */
  return rc;
}

int mxr__autograd_record_cached(mxr_cached_op *cop, struct cop_state *st, int nin,
                                mxr_ndarray *const *in, int nout, mxr_ndarray *const *out) {
  struct ag_node *n = new_node(nin, 0, nout, 0);
  if (!n) return oom();
  n->kind = NODE_CACHED;
  n->cop = mxr__cached_op_retain(cop);
  n->state = st;
  n->keeps_outputs = true;
  int rc = attach(n, nin, in, 0, NULL, nout, out, 0, NULL);
  node_release(n);
  return rc;
}

/* ----------------------------------------------------------- backward */

struct walk {
  struct ag_node **nodes; /* topological: inputs' producers first */
  int n, cap;
  struct ag_value **vals; /* every value reached, for the scratch reset */
  int nvals, cap_vals;
};

static int push_ptr(void ***arr, int *n, int *cap, void *p) {
  if (*n == *cap) {
    int ncap = *cap ? 2 * *cap : 16;
    void **grown = realloc(*arr, (size_t)ncap * sizeof *grown);
    if (!grown) return oom();
    *arr = grown;
    *cap = ncap;
  }
  (*arr)[(*n)++] = p;
  return 0;
}

static int note_value(struct walk *w, struct ag_value *v) {
  if (v->noted) return 0;
  v->noted = true;
  return push_ptr((void ***)&w->vals, &w->nvals, &w->cap_vals, v);
}

/* Depth-first post-order over producers, iteratively (records can be long
 * chains). */
static int collect(struct walk *w, struct ag_value *const *heads, int nheads) {
  struct frame {
    struct ag_node *node;
    int next;
  } *stack = NULL;
  int top = -1, cap = 0, rc = 0;
  for (int h = 0; h < nheads && !rc; h++) {
    rc = note_value(w, heads[h]);
    struct ag_node *root = heads[h]->node;
    if (!root || root->order != 0) continue;
    if (root->freed) return mxr_set_error(MXR_ESTATE, "backward: the graph behind this array was freed by an earlier backward (use retain_graph)");
    if (++top == cap) {
      cap = cap ? 2 * cap : 64;
      void *grown = realloc(stack, (size_t)cap * sizeof *stack);
      if (!grown) { free(stack); return oom(); }
      stack = grown;
    }
    stack[top] = (struct frame){root, 0};
    root->order = -1; /* on the stack */
    while (top >= 0 && !rc) {
      struct frame *f = &stack[top];
      if (f->next < f->node->nin) {
        struct ag_value *v = f->node->in_vals[f->next++];
        if (!v) continue;
        rc = note_value(w, v);
        struct ag_node *p = v->node;
        if (!p || p->order != 0) continue;
        if (p->freed) rc = mxr_set_error(MXR_ESTATE, "backward: part of the graph was freed by an earlier backward (use retain_graph)");
        if (rc) break;
        if (++top == cap) {
          cap *= 2;
          void *grown = realloc(stack, (size_t)cap * sizeof *stack);
          if (!grown) { free(stack); return oom(); }
          stack = grown;
        }
        stack[top] = (struct frame){p, 0};
        p->order = -1;
        continue;
      }
      rc = push_ptr((void ***)&w->nodes, &w->n, &w->cap, f->node);
      f->node->order = w->n; /* 1-based position */
      top--;
    }
  }
  free(stack);
  return rc;
}

static bool value_needs(const struct ag_value *v) {
  if (!v) return false;
  return v->node ? v->node->needs : v->is_var && v->grad_req != MXR_GRAD_NULL;
}

/* Which nodes need their backward, and how many recorded consumers each
 * variable has (a variable with one consumer gets its gradient written
 * straight into its gradient array). */
static void count_needs(struct walk *w) {
  for (int i = 0; i < w->nvals; i++) w->vals[i]->consumers = 0;
  for (int k = 0; k < w->n; k++) {
    struct ag_node *n = w->nodes[k];
    n->needs = false;
    for (int i = 0; i < n->nin; i++) n->needs |= value_needs(n->in_vals[i]);
    for (int i = 0; i < n->nin && n->needs; i++)
      if (n->in_vals[i]) n->in_vals[i]->consumers++;
  }
}

static struct contribs *contribs_of(struct ag_value *v) {
  return v->node ? &v->node->out[v->index] : &v->own;
}

static int add_contrib(struct ag_value *v, mxr_ndarray *a) {
  struct contribs *c = contribs_of(v);
  if (c->n == c->cap) {
    int ncap = c->cap ? 2 * c->cap : 4;
    mxr_ndarray **grown = realloc(c->a, (size_t)ncap * sizeof *grown);
    if (!grown) return oom();
    c->a = grown;
    c->cap = ncap;
  }
  c->a[c->n++] = mxr_ndarray_retain(a);
  return 0;
}

static int invoke_named(const char *opname, int nkv, const char *const *k, const char *const *val,
                        int nin, mxr_ndarray *const *in, mxr_ndarray *out, int req) {
  const mxr_op *op;
  mxr_op_params *p;
  int rc = mxr_op_find(opname, &op);
  if (!rc) rc = mxr_op_params_parse(op, nkv, k, val, &p);
  if (rc) return rc;
  rc = mxr__imperative_push(op, p, nin, in, 1, &out, &req, 0, NULL, training);
  mxr_op_params_free(p);
  return rc;
}

/* The summed gradient into `out` (created when *out is NULL). */
static int sum_contribs(const struct contribs *c, mxr_ndarray *like, mxr_ndarray **out, int req) {
  int rc = 0;
  if (!*out) {
    if (c->n == 1 && req == MXR_REQ_WRITE) {
      *out = mxr_ndarray_retain(c->a[0]);
      return 0;
    }
    mxr_engine *eng;
    rc = mxr_engine_default(&eng);
    if (!rc) rc = mxr_ndarray_create(eng, mxr_ndarray_shape(like), mxr_ndarray_ndim(like),
                                     mxr_ndarray_context(like), mxr_ndarray_dtype(like), 0, out);
    if (rc) return rc;
  }
  if (c->n == 0) return invoke_named("zeros_like", 0, NULL, NULL, 1, &like, *out, req);
  char num[16];
  snprintf(num, sizeof num, "%d", c->n);
  const char *k[] = {"num_args"}, *val[] = {num};
  if (c->n == 1) return invoke_named("_copy", 0, NULL, NULL, 1, c->a, *out, req);
  return invoke_named("add_n", 1, k, val, c->n, c->a, *out, req);
}

/* Where input i of node n sends its gradient: straight into a variable's
 * gradient array, or a new array that becomes a contribution. */
static bool goes_direct(struct ag_value *v) {
  return v && !v->node && v->is_var && v->grad_req != MXR_GRAD_NULL && v->consumers == 1 &&
         v->own.n == 0 && !v->own.written;
}

static int backward_op_node(struct ag_node *n, mxr_ndarray *const *ograds) {
  const mxr_op *op = n->op;
  if (op->grad_passthrough) {
    for (int i = 0; i < n->nin; i++)
      if (value_needs(n->in_vals[i])) {
        int rc = add_contrib(n->in_vals[i], ograds[0]);
        if (rc) return rc;
      }
    return 0;
  }
  const mxr_op *bop;
  int rc = mxr_op_find(op->backward, &bop);
  if (rc) return rc;
  mxr_ndarray *bin[MAX_ARRAYS], *bout[MAX_ARRAYS];
  int nb = 0, req[MAX_ARRAYS];
  for (int k = 0; k < n->nvis; k++) bin[nb++] = ograds[k];
  if (op->grad_flags & MXR_GRAD_USE_INPUTS)
    for (int i = 0; i < n->nin; i++) bin[nb++] = n->in_arrays[i];
  if (op->grad_flags & MXR_GRAD_USE_OUTPUTS) {
    for (int k = 0; k < n->nvis; k++) {
      if (!n->vis[k])
        return mxr_set_error(MXR_ESTATE, "backward: output %d of %s, needed for its gradient, is gone", k, op->name);
      bin[nb++] = n->vis[k];
    }
    for (int k = 0; k < n->nhidden; k++) bin[nb++] = n->hidden[k];
  }
  mxr_engine *eng;
  rc = mxr_engine_default(&eng);
  for (int i = 0; i < n->nin && !rc; i++) {
    struct ag_value *v = n->in_vals[i];
    mxr_ndarray *x = n->in_arrays[i];
    if (goes_direct(v)) {
      bout[i] = mxr_ndarray_retain(v->grad);
      req[i] = v->grad_req;
      v->own.written = true; /* nothing left to sum */
      continue;
    }
    req[i] = value_needs(v) ? MXR_REQ_WRITE : MXR_REQ_NULL;
    rc = mxr_ndarray_create(eng, mxr_ndarray_shape(x), mxr_ndarray_ndim(x), mxr_ndarray_context(x),
                            mxr_ndarray_dtype(x), 0, &bout[i]);
  }
  if (!rc) rc = mxr__imperative_push(bop, n->params, nb, bin, n->nin, bout, req, n->naux,
                                     n->in_arrays + n->nin, training);
  for (int i = 0; i < n->nin; i++) {
    struct ag_value *v = n->in_vals[i];
    if (!rc && req[i] == MXR_REQ_WRITE && v && !(v->own.written && bout[i] == v->grad))
      rc = add_contrib(v, bout[i]);
    mxr_ndarray_free(bout[i]);
  }
  return rc;
}

static int backward_cached_node(struct ag_node *n, mxr_ndarray *const *ograds) {
  mxr_ndarray *direct[MAX_ARRAYS], *contrib[MAX_ARRAYS];
  int dreq[MAX_ARRAYS];
  bool needs[MAX_ARRAYS];
  for (int i = 0; i < n->nin; i++) {
    struct ag_value *v = n->in_vals[i];
    needs[i] = value_needs(v);
    direct[i] = goes_direct(v) ? v->grad : NULL;
    dreq[i] = direct[i] ? v->grad_req : MXR_REQ_WRITE;
    if (direct[i]) v->own.written = true;
  }
  int rc = mxr__cached_op_backward(n->cop, n->state, n->nvis, ograds, n->nin, direct, dreq, needs, contrib);
  for (int i = 0; i < n->nin; i++) {
    if (!rc && contrib[i]) rc = add_contrib(n->in_vals[i], contrib[i]);
    mxr_ndarray_free(contrib[i]);
  }
  return rc;
}

static int backward_node(struct ag_node *n) {
  bool any = false;
  for (int k = 0; k < n->nvis; k++) any |= n->out[k].n > 0;
  if (!any || !n->needs || n->nvis > MAX_ARRAYS || n->nin > MAX_ARRAYS) return 0;
  if (n->kind == NODE_OP && !n->op->backward && !n->op->grad_passthrough) return 0;
  mxr_ndarray *ograds[MAX_ARRAYS] = {0};
  int rc = 0;
  for (int k = 0; k < n->nvis && !rc; k++) {
    mxr_ndarray *like = n->out[k].n ? n->out[k].a[0] : n->vis[k];
    if (!like) return mxr_set_error(MXR_ESTATE, "backward: output %d of a recorded op is gone", k);
    rc = sum_contribs(&n->out[k], like, &ograds[k], MXR_REQ_WRITE);
  }
  if (!rc) rc = n->kind == NODE_OP ? backward_op_node(n, ograds) : backward_cached_node(n, ograds);
  for (int k = 0; k < n->nvis; k++) mxr_ndarray_free(ograds[k]);
  return rc;
}

/* Marked variables whose gradient was not written directly get the sum of
 * their contributions (zeros if none reached them). */
static int finish_variables(struct walk *w) {
  int rc = 0;
  for (int i = 0; i < w->nvals && !rc; i++) {
    struct ag_value *v = w->vals[i];
    if (v->node || !v->is_var || v->grad_req == MXR_GRAD_NULL) continue;
    v->fresh_grad = true;
    if (v->own.written) continue;
    mxr_ndarray *g = v->grad;
    rc = sum_contribs(&v->own, v->grad, &g, v->grad_req);
  }
  return rc;
}

static void reset_scratch(struct walk *w, bool drop) {
  for (int i = 0; i < w->nvals; i++) {
    struct ag_value *v = w->vals[i];
    contribs_clear(&v->own);
    v->consumers = 0;
    v->noted = false;
  }
  for (int k = 0; k < w->n; k++) {
    struct ag_node *n = w->nodes[k];
    n->order = 0;
    for (int j = 0; j < n->nvis; j++) contribs_clear(&n->out[j]);
    if (drop) node_drop_record(n);
  }
}

static int seed_heads(struct ag_value **hv, int num, mxr_ndarray *const *heads,
                      mxr_ndarray *const *head_grads) {
  for (int h = 0; h < num; h++) {
    mxr_ndarray *g = head_grads ? head_grads[h] : NULL;
    int rc = 0;
    if (!g) { /* ones shaped like the head */
      mxr_engine *eng;
      rc = mxr_engine_default(&eng);
      if (!rc) rc = mxr_ndarray_create(eng, mxr_ndarray_shape(heads[h]), mxr_ndarray_ndim(heads[h]),
                                       mxr_ndarray_context(heads[h]), mxr_ndarray_dtype(heads[h]), 0, &g);
      if (!rc) rc = invoke_named("ones_like", 0, NULL, NULL, 1, &heads[h], g, MXR_REQ_WRITE);
      if (!rc) rc = add_contrib(hv[h], g);
      mxr_ndarray_free(g);
    } else {
      rc = add_contrib(hv[h], g);
    }
    if (rc) return rc;
  }
  return 0;
}

static int backward_bulk_size(void) {
  const struct mxr_config *c = mxr_config_get();
  return c->exec_bulk_exec_train ? c->exec_bulk_exec_max_node_train_bwd : 0;
}

int mxr_autograd_backward(int num, mxr_ndarray *const *heads, mxr_ndarray *const *head_grads,
                          int retain_graph, int is_train) {
  if (num <= 0 || !heads) return mxr_set_error(MXR_EINVAL, "backward: no heads given");
  struct ag_value *hv[MAX_ARRAYS];
  if (num > MAX_ARRAYS) return mxr_set_error(MXR_EINVAL, "backward: too many heads (%d)", num);
  for (int h = 0; h < num; h++) {
    hv[h] = heads[h] ? value_of(heads[h]) : NULL;
    if (!hv[h])
      return mxr_set_error(MXR_EINVAL, "backward: head %d was not computed while recording (or needs no gradient)", h);
    if (head_grads && head_grads[h] && mxr_ndarray_size(head_grads[h]) != mxr_ndarray_size(heads[h]))
      return mxr_set_error(MXR_EINVAL, "backward: head gradient %d does not match its head", h);
  }
  mxr_engine *eng;
  int rc = mxr_engine_default(&eng);
  if (rc) return rc;
  int prev_train = training;
  training = is_train != 0;
  struct walk w = {0};
  rc = collect(&w, hv, num);
  if (!rc) {
    count_needs(&w);
    int prev_bulk = mxr_engine_set_bulk_size(eng, backward_bulk_size());
    rc = seed_heads(hv, num, heads, head_grads);
    for (int k = w.n - 1; k >= 0 && !rc; k--) rc = backward_node(w.nodes[k]);
    if (!rc) rc = finish_variables(&w);
    mxr_engine_set_bulk_size(eng, prev_bulk);
  }
  reset_scratch(&w, !rc && !retain_graph);
  free(w.nodes);
  free(w.vals);
  training = prev_train;
  return rc;
}
