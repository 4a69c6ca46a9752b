/*
 * The graph executor: bind (plan everything), forward, backward, free.
 * See executor_internal.h for the plan's layout.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_lib.h" /* mxr__engine_wait_vars_quiet */
#include "executor/executor_internal.h"
#include "mxref/config.h"
#include "mxref/profiler.h"
#include "ndarray/ndarray_internal.h" /* mxr__ndarray_refs */
#include "storage/storage_internal.h"

static int oom(void) { return mxr_set_error(MXR_ENOMEM, "executor: out of memory"); }

int mxr_exec_opts_from_config(struct mxr_exec_opts *o) {
  if (!o) return mxr_set_error(MXR_EINVAL, "mxr_exec_opts_from_config: NULL argument");
  int rc = mxr_config_status();
  if (rc) return rc;
  const struct mxr_config *c = mxr_config_get();
  memset(o, 0, sizeof *o);
  o->bulk_train = c->exec_bulk_exec_train;
  o->bulk_inference = c->exec_bulk_exec_inference;
  o->max_node_train_fwd = c->exec_bulk_exec_max_node_train_fwd;
  o->max_node_train_bwd = c->exec_bulk_exec_max_node_train_bwd;
  o->enable_inplace = c->exec_enable_inplace;
  o->match_range = c->exec_match_range;
  o->cuda_graphs = c->enable_cuda_graphs;
  /* MXNet turns training bulking off when aggregate statistics are being
   * collected at bind, so that every op gets its own entry. */
  o->aggregate_profiling = mxr_profiler_aggregate_running() != 0;
  return 0;
}

/* ------------------------------------------------------------- checks */

static bool same_device(struct mxr_context a, struct mxr_context b) {
  if (mxr_context_is_cpu(a) || mxr_context_is_cpu(b))
    return mxr_context_is_cpu(a) && mxr_context_is_cpu(b);
  return a.dev_id == b.dev_id;
}

static const char *device_name(struct mxr_context c) { return mxr_context_is_cpu(c) ? "cpu" : "gpu"; }

static int wrong_device(const char *what, const char *name, struct mxr_context have,
                        struct mxr_context want) {
  return mxr_set_error(MXR_EINVAL, "bind: %s '%s' is on %s(%d), but the executor runs on %s(%d)",
                       what, name, device_name(have), have.dev_id, device_name(want), want.dev_id);
}

static int check_bind_args(const mxr_symbol *sym, struct mxr_context ctx, int num_args,
                           mxr_ndarray *const *args, mxr_ndarray *const *grads,
                           const int *grad_req, int num_aux, mxr_ndarray *const *aux) {
  int n_args, n_aux;
  const char *const *arg_names, *const *aux_names;
  int rc = mxr_symbol_list_arguments(sym, &n_args, &arg_names);
  if (!rc) rc = mxr_symbol_list_auxiliary_states(sym, &n_aux, &aux_names);
  if (rc) return rc;
  if (num_args != n_args)
    return mxr_set_error(MXR_EINVAL, "bind: the symbol has %d arguments, %d arrays were given", n_args, num_args);
  if (num_aux != n_aux)
    return mxr_set_error(MXR_EINVAL, "bind: the symbol has %d aux states, %d arrays were given", n_aux, num_aux);
  for (int a = 0; a < num_args; a++) {
    if (!args || !args[a] || mxr_ndarray_is_none(args[a]))
      return mxr_set_error(MXR_EINVAL, "bind: no array for argument '%s'", arg_names[a]);
    int req = grad_req ? grad_req[a] : MXR_GRAD_NULL;
    if (req != MXR_GRAD_NULL && req != MXR_GRAD_WRITE && req != MXR_GRAD_ADD)
      return mxr_set_error(MXR_EINVAL, "bind: grad_req %d for '%s' is not null (0), write (1) or add (3)",
                           req, arg_names[a]);
    if (req != MXR_GRAD_NULL && (!grads || !grads[a] || mxr_ndarray_is_none(grads[a])))
      return mxr_set_error(MXR_EINVAL, "bind: argument '%s' asks for a gradient but has no gradient array",
                           arg_names[a]);
  }
  for (int a = 0; a < num_aux; a++)
    if (!aux || !aux[a] || mxr_ndarray_is_none(aux[a]))
      return mxr_set_error(MXR_EINVAL, "bind: no array for aux state '%s'", aux_names[a]);
  /* Kernels read and write bound arrays directly, so they must live where
   * the executor runs (host contexts are interchangeable). */
  for (int a = 0; a < num_args + num_aux; a++) {
    bool is_aux = a >= num_args;
    mxr_ndarray *arr = is_aux ? aux[a - num_args] : args[a];
    mxr_ndarray *grad = !is_aux && grads && grad_req && grad_req[a] != MXR_GRAD_NULL ? grads[a] : NULL;
    const char *name = is_aux ? aux_names[a - num_args] : arg_names[a];
    if (!same_device(mxr_ndarray_context(arr), ctx))
      return wrong_device(is_aux ? "aux state" : "argument", name, mxr_ndarray_context(arr), ctx);
    if (grad && !same_device(mxr_ndarray_context(grad), ctx))
      return wrong_device("gradient of", name, mxr_ndarray_context(grad), ctx);
  }
  return 0;
}

/* ------------------------------------------------------ shapes, dtypes */

static struct mxr_shape array_shape(mxr_ndarray *a) {
  struct mxr_shape s = {mxr_ndarray_ndim(a), {0}};
  for (int d = 0; d < s.ndim; d++) s.dim[d] = mxr_ndarray_shape(a)[d];
  return s;
}

struct plan_info {
  struct mxr_shape **shapes;
  int **dtypes;
};

static void free_info(const mxr_symbol *g, struct plan_info *pi) {
  for (int i = 0; i < g->num_nodes; i++) {
    if (pi->shapes) free(pi->shapes[i]);
    if (pi->dtypes) free(pi->dtypes[i]);
  }
  free(pi->shapes);
  free(pi->dtypes);
}

static int alloc_info(const mxr_symbol *g, struct plan_info *pi) {
  pi->shapes = calloc((size_t)g->num_nodes + 1, sizeof *pi->shapes);
  pi->dtypes = calloc((size_t)g->num_nodes + 1, sizeof *pi->dtypes);
  if (!pi->shapes || !pi->dtypes) return oom();
  for (int i = 0; i < g->num_nodes; i++) {
    int n = mxr__node_num_outputs(&g->nodes[i]);
    pi->shapes[i] = malloc((size_t)(n > 0 ? n : 1) * sizeof **pi->shapes);
    pi->dtypes[i] = malloc((size_t)(n > 0 ? n : 1) * sizeof **pi->dtypes);
    if (!pi->shapes[i] || !pi->dtypes[i]) return oom();
    for (int k = 0; k < n; k++) {
      pi->shapes[i][k].ndim = -1;
      pi->dtypes[i][k] = -1;
    }
  }
  return 0;
}

static int infer_all(const struct full_graph *fg, mxr_ndarray *const *args, mxr_ndarray *const *aux,
                     struct plan_info *pi) {
  const mxr_symbol *g = fg->g;
  for (int a = 0; a < fg->num_args; a++) {
    pi->shapes[fg->arg_nodes[a]][0] = array_shape(args[a]);
    pi->dtypes[fg->arg_nodes[a]][0] = mxr_ndarray_dtype(args[a]);
  }
  for (int a = 0; a < fg->num_aux; a++) {
    pi->shapes[fg->aux_nodes[a]][0] = array_shape(aux[a]);
    pi->dtypes[fg->aux_nodes[a]][0] = mxr_ndarray_dtype(aux[a]);
  }
  /* The forward region first; then gradients take the shapes and dtypes of
   * what they are gradients of, and head gradients those of the heads. */
  int rc = mxr__graph_infer_shapes_range(g, pi->shapes, 0, fg->num_fwd);
  if (!rc) rc = mxr__graph_infer_types_range(g, pi->dtypes, 0, fg->num_fwd);
  for (int m = 0; !rc && m < fg->num_mirrors; m++) {
    const struct mxr_entry *d = &fg->mirror_grad[m], *src = &fg->mirror_of[m];
    pi->shapes[d->node][d->index] = pi->shapes[src->node][src->index];
    pi->dtypes[d->node][d->index] = pi->dtypes[src->node][src->index];
  }
  for (int h = 0; !rc && fg->head_grad_nodes && h < g->num_heads; h++) {
    const struct mxr_entry *e = &g->heads[h];
    pi->shapes[fg->head_grad_nodes[h]][0] = pi->shapes[e->node][e->index];
    pi->dtypes[fg->head_grad_nodes[h]][0] = pi->dtypes[e->node][e->index];
  }
  if (!rc) rc = mxr__graph_infer_shapes(g, pi->shapes);
  if (!rc) rc = mxr__graph_infer_types(g, pi->dtypes);
  for (int i = 0; !rc && i < g->num_nodes; i++)
    for (int k = 0; k < mxr__node_num_outputs(&g->nodes[i]) && !rc; k++)
      if (!mxr__shape_complete(&pi->shapes[i][k]) || pi->dtypes[i][k] < 0)
        rc = mxr_set_error(MXR_EINVAL, "bind: cannot infer the %s of output %d of node %s",
                           !mxr__shape_complete(&pi->shapes[i][k]) ? "shape" : "dtype", k,
                           g->nodes[i].name);
  return rc;
}

/* -------------------------------------------------------------- values */

static bool value_is_read(const mxr_symbol *g, int node, int k) {
  for (int i = 0; i < g->num_nodes; i++)
    for (int j = 0; j < g->nodes[i].nin; j++)
      if (g->nodes[i].inputs[j].node == node && g->nodes[i].inputs[j].index == k) return true;
  for (int h = 0; h < g->num_heads; h++)
    if (g->heads[h].node == node && g->heads[h].index == k) return true;
  return false;
}

/* -------------------------------------------------------- memory plan */

/* The last node that reads each value (INT_MAX for heads, which outlive the
 * pass; the producer itself for values nobody reads). */
static int *last_uses(const struct mxr_executor *e) {
  const mxr_symbol *g = e->fg.g;
  int *last = malloc((size_t)(e->num_values + 1) * sizeof *last);
  if (!last) return NULL;
  for (int i = 0; i < g->num_nodes; i++)
    for (int k = 0; k < mxr__node_num_outputs(&g->nodes[i]); k++) last[e->row[i] + k] = i;
  for (int i = 0; i < g->num_nodes; i++)
    for (int j = 0; j < g->nodes[i].nin; j++) {
      const struct mxr_entry *in = &g->nodes[i].inputs[j];
      int v = e->row[in->node] + in->index;
      if (last[v] < i) last[v] = i;
    }
  for (int h = 0; h < g->num_heads; h++) last[e->row[g->heads[h].node] + g->heads[h].index] = INT_MAX;
  return last;
}

struct free_pool {
  int *values;           /* dead values whose memory can be reused */
  int n;
  mxr_ndarray **storage; /* per value: the array that owns its memory */
};

static bool same_layout(mxr_ndarray *a, const struct mxr_shape *s, int dtype) {
  struct mxr_shape as = array_shape(a);
  return mxr_shape_equal(&as, s) && mxr_ndarray_dtype(a) == dtype;
}

/* The pool entry whose memory a value of shape s and dtype takes: a dead
 * value of that very shape, else the one of that dtype with the least
 * memory that still holds s and is at most match_range times its size; -1
 * when none does. */
static int pool_pick(const struct mxr_executor *e, const struct free_pool *pool, const struct mxr_shape *s,
                     int dtype) {
  const int64_t need = mxr_shape_size(s);
  int best = -1;
  int64_t best_size = 0;
  for (int p = 0; p < pool->n; p++) {
    int u = pool->values[p];
    if (same_layout(e->values[u], s, dtype)) return p;
    mxr_ndarray *a = pool->storage[u];
    int64_t size = mxr_ndarray_size(a);
    if (need > 0 && mxr_ndarray_dtype(a) == dtype && size >= need && size <= need * e->opts.match_range &&
        (best < 0 || size < best_size)) {
      best = p;
      best_size = size;
    }
  }
  return best;
}

/* Output k of node i in an array of its own.  bytes_allocated counts op
 * outputs only: a head gradient (a variable node) is allocated beside the
 * plan, as MXNet's executor allocates it outside its memory plan, whose
 * storage_allocated_bytes MXExecutorPrint reports. */
static int new_array(struct mxr_executor *e, const struct plan_info *pi, int i, int k) {
  const struct mxr_shape *s = &pi->shapes[i][k];
  int v = e->row[i] + k;
  e->owned[v] = true;
  e->num_arrays++;
  if (!mxr__node_is_var(&e->fg.g->nodes[i]))
    e->bytes_allocated += (size_t)mxr_shape_size(s) * mxr_dtype_size(pi->dtypes[i][k]);
  return mxr_ndarray_create(e->eng, s->dim, s->ndim, e->ctx, pi->dtypes[i][k], 0, &e->values[v]);
}

/* Output k of node i: over a dying input (in-place hint), over a dead
 * value's memory (the same array, or a view of a larger one), or a new
 * array. */
static int place_output(struct mxr_executor *e, const struct plan_info *pi, const int *last,
                        struct free_pool *pool, int i, int k, bool *inplace_used) {
  const struct mxr_node *n = &e->fg.g->nodes[i];
  const struct mxr_shape *s = &pi->shapes[i][k];
  int dtype = pi->dtypes[i][k], v = e->row[i] + k;
  for (int h = 0; n->op && e->opts.enable_inplace && h < n->op->num_inplace; h++) {
    if (n->op->inplace[h].out != k) continue;
    const struct mxr_entry *in = &n->inputs[n->op->inplace[h].in];
    int u = e->row[in->node] + in->index;
    if (e->owned[u] && last[u] == i && !inplace_used[u] && same_layout(e->values[u], s, dtype)) {
      inplace_used[u] = true; /* its array lives on as v's */
      e->values[v] = mxr_ndarray_retain(e->values[u]);
      e->owned[v] = true;
      pool->storage[v] = pool->storage[u];
      return 0;
    }
  }
  e->owned[v] = true;
  int p = e->opts.match_range > 0 ? pool_pick(e, pool, s, dtype) : -1;
  if (p >= 0) {
    int u = pool->values[p];
    pool->values[p] = pool->values[--pool->n];
    pool->storage[v] = pool->storage[u];
    if (same_layout(e->values[u], s, dtype)) {
      e->values[v] = mxr_ndarray_retain(e->values[u]);
      return 0;
    }
    return mxr_ndarray_view(pool->storage[u], 0, s->dim, s->ndim, &e->values[v]);
  }
  int rc = new_array(e, pi, i, k);
  pool->storage[v] = e->values[v];
  return rc;
}

/* Values that die at node i give their arrays to the pool. */
static void release_dead(struct mxr_executor *e, const int *last, struct free_pool *pool, int i,
                         const bool *inplace_used) {
  const struct mxr_node *n = &e->fg.g->nodes[i];
  for (int j = 0; j < n->nin; j++) {
    const struct mxr_entry *in = &n->inputs[j];
    int u = e->row[in->node] + in->index;
    bool listed = false;
    for (int p = 0; p < pool->n && !listed; p++) listed = pool->values[p] == u;
    if (e->owned[u] && last[u] == i && !inplace_used[u] && !listed) pool->values[pool->n++] = u;
  }
  for (int k = 0; k < mxr__node_num_outputs(n); k++) {
    int v = e->row[i] + k;
    if (e->owned[v] && last[v] == i) pool->values[pool->n++] = v; /* read by nobody */
  }
}

/* Give every unbound value an array.  A value's memory is free again after
 * its last reader has run: a later value of the same dtype that fits in it
 * takes it, as the same array or a view of it (MXNET_EXEC_MATCH_RANGE 0
 * turns that off), and an op with an in-place hint
 * writes over an input that dies with it (MXNET_EXEC_ENABLE_INPLACE).  The
 * engine orders the reuse: the new writer waits for the old readers. */
static int plan_memory(struct mxr_executor *e, const struct plan_info *pi) {
  const mxr_symbol *g = e->fg.g;
  int *last = last_uses(e);
  struct free_pool pool = {malloc((size_t)(e->num_values + 1) * sizeof(int)), 0,
                           calloc((size_t)e->num_values + 1, sizeof(mxr_ndarray *))};
  bool *inplace_used = calloc((size_t)e->num_values + 1, sizeof *inplace_used);
  int rc = last && pool.values && pool.storage && inplace_used ? 0 : oom();
  for (int i = 0; i < g->num_nodes && !rc; i++) {
    const struct mxr_node *n = &g->nodes[i];
    for (int k = 0; k < mxr__node_num_outputs(n) && !rc; k++) {
      int v = e->row[i] + k;
      if (e->values[v]) continue;
      if (mxr__node_is_var(n)) { /* head gradients: never shared, they get rebound */
        rc = new_array(e, pi, i, k);
        last[v] = INT_MAX;
      } else if (e->opts.own_outputs && last[v] == INT_MAX) {
        rc = new_array(e, pi, i, k); /* handed out and renewed: shares nothing */
      } else {
        rc = place_output(e, pi, last, &pool, i, k, inplace_used);
      }
    }
    if (!rc && !mxr__node_is_var(n)) release_dead(e, last, &pool, i, inplace_used);
  }
  free(last);
  free(pool.values);
  free(pool.storage);
  free(inplace_used);
  return rc;
}

static const char *dtype_str(int dtype) { return mxr_dtype_name(dtype) ? mxr_dtype_name(dtype) : "unknown"; }

/* Kernels read and write bound arrays directly, as the inferred shapes and
 * dtypes say.  An argument or aux state has exactly its inferred shape
 * (one with a 0 dimension that inference filled would be read past its
 * end) and dtype. */
static int check_bound(const struct plan_info *pi, int node, mxr_ndarray *arr, const char *what, const char *name) {
  const struct mxr_shape want = pi->shapes[node][0], got = array_shape(arr);
  int want_dt = pi->dtypes[node][0], got_dt = mxr_ndarray_dtype(arr);
  if (mxr_shape_equal(&want, &got) && want_dt == got_dt) return 0;
  char w[96], h[96];
  return mxr_set_error(MXR_EINVAL, "bind: %s '%s' has shape %s and dtype %s, the graph infers %s and %s", what,
                       name, mxr_shape_str(&got, h, sizeof h), dtype_str(got_dt), mxr_shape_str(&want, w, sizeof w),
                       dtype_str(want_dt));
}

/* A gradient array has the dtype and the number of elements of the
 * gradient it receives, in any shape (MXNet 1.9.1 writes it flat; it
 * refuses other sizes where it copies the gradient in, and writes past
 * the end of a smaller array elsewhere). */
static int check_grad(const struct plan_info *pi, const struct mxr_entry *ge, mxr_ndarray *grad, const char *name) {
  const struct mxr_shape want = pi->shapes[ge->node][ge->index], got = array_shape(grad);
  int want_dt = pi->dtypes[ge->node][ge->index], got_dt = mxr_ndarray_dtype(grad);
  if (mxr_shape_size(&want) == mxr_shape_size(&got) && want_dt == got_dt) return 0;
  char w[96], h[96];
  return mxr_set_error(MXR_EINVAL, "bind: the gradient array of '%s' has shape %s and dtype %s, its gradient %s and %s",
                       name, mxr_shape_str(&got, h, sizeof h), dtype_str(got_dt), mxr_shape_str(&want, w, sizeof w),
                       dtype_str(want_dt));
}

/* Place every value in an array: bound arrays for arguments, aux states and
 * gradients; the memory plan for everything else. */
static int make_values(struct mxr_executor *e, mxr_ndarray *const *args, mxr_ndarray *const *grads,
                       mxr_ndarray *const *aux, const struct plan_info *pi) {
  const mxr_symbol *g = e->fg.g;
  e->row = malloc((size_t)(g->num_nodes + 1) * sizeof *e->row);
  if (!e->row) return oom();
  for (int i = 0; i < g->num_nodes; i++) {
    e->row[i] = e->num_values;
    e->num_values += mxr__node_num_outputs(&g->nodes[i]);
  }
  e->values = calloc((size_t)e->num_values + 1, sizeof *e->values);
  e->owned = calloc((size_t)e->num_values + 1, sizeof *e->owned);
  if (!e->values || !e->owned) return oom();
  for (int a = 0; a < e->fg.num_args; a++) {
    const char *name = g->nodes[e->fg.arg_nodes[a]].name;
    int rc = check_bound(pi, e->fg.arg_nodes[a], args[a], "argument", name);
    if (rc) return rc;
    e->values[e->row[e->fg.arg_nodes[a]]] = mxr_ndarray_retain(args[a]);
    if (e->fg.arg_grads && e->fg.arg_grads[a].node >= 0) {
      rc = check_grad(pi, &e->fg.arg_grads[a], grads[a], name);
      if (rc) return rc;
      e->values[e->row[e->fg.arg_grads[a].node] + e->fg.arg_grads[a].index] = mxr_ndarray_retain(grads[a]);
    }
  }
  for (int a = 0; a < e->fg.num_aux; a++) {
    int rc = check_bound(pi, e->fg.aux_nodes[a], aux[a], "aux state", g->nodes[e->fg.aux_nodes[a]].name);
    if (rc) return rc;
    e->values[e->row[e->fg.aux_nodes[a]]] = mxr_ndarray_retain(aux[a]);
  }
  return plan_memory(e, pi);
}

/* ---------------------------------------------------------- node plans */

static struct mxr_tensor tensor_of(mxr_ndarray *a) {
  struct mxr_tensor t = {mxr_ndarray_data(a), array_shape(a), mxr_ndarray_dtype(a)};
  return t;
}

static int grad_req_of(const struct mxr_executor *e, int v, const int *grad_req) {
  for (int a = 0; e->fg.arg_grads && a < e->fg.num_args; a++) {
    const struct mxr_entry *ge = &e->fg.arg_grads[a];
    if (ge->node >= 0 && e->row[ge->node] + ge->index == v) {
      return grad_req[a];
    }
  }
  return -1;
}

static mxr_var *val_var(const struct mxr_executor *e, int v) { return mxr_ndarray_var(e->values[v]); }

/* Reads: inputs; writes: outputs, aux states, inputs the op mutates. */
static int plan_vars(struct exec_node *n, struct mxr_executor *e) {
  free(n->reads);
  free(n->writes);
  n->nreads = n->nwrites = 0;
  n->reads = malloc((size_t)(n->nin + 1) * sizeof *n->reads);
  n->writes = malloc((size_t)(n->nout + n->naux + n->op->num_mutate_inputs + 2) * sizeof *n->writes);
  if (!n->reads || !n->writes) return oom();
  const int *in_val = n->val, *aux_val = n->val + n->nin, *out_val = aux_val + n->naux;
  for (int k = 0; k < n->nout; k++) n->writes[n->nwrites++] = val_var(e, out_val[k]);
  for (int k = 0; k < n->naux; k++) n->writes[n->nwrites++] = val_var(e, aux_val[k]);
  for (int m = 0; m < n->op->num_mutate_inputs; m++)
    n->writes[n->nwrites++] = val_var(e, in_val[n->op->mutate_inputs[m]]);
  if (n->workspace_size) n->writes[n->nwrites++] = mxr_ndarray_var(e->scratch);
  for (int k = 0; k < n->nin; k++) {
    mxr_var *v = val_var(e, in_val[k]);
    bool dup = false;
    for (int w = 0; w < n->nwrites && !dup; w++) dup = n->writes[w] == v;
    for (int r = 0; r < n->nreads && !dup; r++) dup = n->reads[r] == v;
    if (!dup) n->reads[n->nreads++] = v;
  }
  return 0;
}

static int plan_node(struct mxr_executor *e, int i, const int *grad_req, struct mxr_tensor **pool) {
  const struct mxr_node *gn = &e->fg.g->nodes[i];
  struct exec_node *n = &e->nodes[i];
  n->name = gn->name;
  n->seed = gn->uid * 0x9e3779b97f4a7c15ull;
  if (mxr__node_is_var(gn)) return 0;
  n->op = gn->op;
  n->params = mxr__op_params_struct(gn->params);
  n->nin = mxr__node_num_inputs(gn);
  n->naux = mxr__node_num_aux(gn);
  n->nout = mxr__node_num_outputs(gn);
  char who[160];
  snprintf(who, sizeof who, "bind (node %s)", gn->name);
  int rc = mxr__op_check_kernel(n->op, e->ctx, who);
  if (rc) return rc;
  n->in = *pool;
  n->out = n->in + n->nin;
  n->aux = n->out + n->nout;
  *pool = n->aux + n->naux;
  n->req = malloc((size_t)(n->nout + 1) * sizeof *n->req);
  n->val = malloc((size_t)(n->nin + n->naux + n->nout + 1) * sizeof *n->val);
  if (!n->req || !n->val) return oom();
  struct mxr_shape in_shapes[64];
  for (int k = 0; k < n->nin + n->naux; k++) {
    const struct mxr_entry *in = &gn->inputs[k];
    n->val[k] = e->row[in->node] + in->index;
    struct mxr_tensor t = tensor_of(e->values[n->val[k]]);
    if (k < n->nin) n->in[k] = t;
    else n->aux[k - n->nin] = t;
    if (k < 64) in_shapes[k] = t.shape;
  }
  for (int k = 0; k < n->nout; k++) {
    int v = e->row[i] + k;
    n->val[n->nin + n->naux + k] = v;
    n->out[k] = tensor_of(e->values[v]);
    int req = grad_req_of(e, v, grad_req);
    n->req[k] = req >= 0 ? req : value_is_read(e->fg.g, i, k) ? MXR_REQ_WRITE : MXR_REQ_NULL;
  }
  /* The tensors are consecutive: inputs, outputs, aux states. */
  rc = mxr__op_check_dtypes(n->op, n->in, n->nin + n->nout + n->naux, who);
  if (rc) return rc;
  /* workspace_bytes sizes a CPU kernel's scratch; GPU kernels take theirs
   * from their worker's device scratch (mxr__cuda_scratch). */
  if (n->op->workspace_bytes && mxr_context_is_cpu(e->ctx))
    n->workspace_size = n->op->workspace_bytes(n->params, in_shapes, n->nin < 64 ? n->nin : 64);
  return 0;
}

/* The scratch all CPU nodes share, sized for the largest request, then
 * every node's vars (which include the scratch's where it uses it). */
static int plan_scratch(struct mxr_executor *e) {
  size_t most = 0;
  for (int i = 0; i < e->num_nodes; i++)
    if (e->nodes[i].workspace_size > most) most = e->nodes[i].workspace_size;
  if (most) {
    const int64_t bytes = (int64_t)most;
    int rc = mxr_ndarray_create(e->eng, &bytes, 1, e->ctx, MXR_UINT8, 0, &e->scratch);
    if (rc) return rc;
  }
  for (int i = 0; i < e->num_nodes; i++) {
    struct exec_node *n = &e->nodes[i];
    if (!n->op) continue;
    if (n->workspace_size) n->workspace = mxr_ndarray_data(e->scratch);
    int rc = plan_vars(n, e);
    if (rc) return rc;
  }
  return 0;
}

static int plan_nodes(struct mxr_executor *e, const int *grad_req) {
  int slots = 0;
  for (int i = 0; i < e->num_nodes; i++) {
    const struct mxr_node *gn = &e->fg.g->nodes[i];
    slots += gn->nin + mxr__node_num_outputs(gn);
  }
  e->nodes = calloc((size_t)e->num_nodes + 1, sizeof *e->nodes);
  e->tensors = calloc((size_t)slots + 1, sizeof *e->tensors);
  e->node_calls = calloc(2 * (size_t)e->num_nodes + 1, sizeof *e->node_calls);
  if (!e->nodes || !e->tensors || !e->node_calls) return oom();
  struct mxr_tensor *pool = e->tensors;
  for (int i = 0; i < e->num_nodes; i++) {
    int rc = plan_node(e, i, grad_req, &pool);
    if (rc) return rc;
    for (int t = 0; t < 2; t++)
      e->node_calls[2 * i + t] =
          (struct exec_call){.exec = e, .first = i, .end = i + 1, .is_train = t == 1};
  }
  return plan_scratch(e);
}

/* The slots each value fills (struct value_use), for repoint. */
static int index_uses(struct mxr_executor *e) {
  e->use_start = calloc((size_t)e->num_values + 1, sizeof *e->use_start);
  if (!e->use_start) return oom();
  int total = 0;
  for (int i = 0; i < e->num_nodes; i++) {
    const struct exec_node *n = &e->nodes[i];
    if (!n->op) continue;
    for (int k = 0; k < n->nin + n->naux + n->nout; k++) e->use_start[n->val[k] + 1]++;
    total += n->nin + n->naux + n->nout;
  }
  for (int v = 0; v < e->num_values; v++) e->use_start[v + 1] += e->use_start[v];
  e->uses = malloc((size_t)(total + 1) * sizeof *e->uses);
  int *fill = malloc((size_t)(e->num_values + 1) * sizeof *fill);
  if (!e->uses || !fill) {
    free(fill);
    return oom();
  }
  memcpy(fill, e->use_start, (size_t)e->num_values * sizeof *fill);
  for (int i = 0; i < e->num_nodes; i++) {
    const struct exec_node *n = &e->nodes[i];
    if (!n->op) continue;
    for (int k = 0; k < n->nin + n->naux + n->nout; k++)
      e->uses[fill[n->val[k]]++] = (struct value_use){i, k};
  }
  free(fill);
  return 0;
}

/* The engine ops of the pass over [from, to): sizes and names. */
static int plan_pass(struct mxr_executor *e, int pass, int from, int to) {
  int cap = to - from + 1;
  e->pass_sizes[pass] = malloc((size_t)cap * sizeof(int));
  e->pass_names[pass] = malloc((size_t)cap * sizeof(char *));
  if (!e->pass_sizes[pass] || !e->pass_names[pass]) return oom();
  int n = 0;
  for (int i = from; i < to; i++) {
    struct exec_segment *s = e->seg_at[i];
    if (s && s->end <= to) {
      e->pass_sizes[pass][n] = s->num_ops;
      e->pass_names[pass][n++] = s->name;
      i = s->end - 1;
    } else if (e->nodes[i].op) {
      e->pass_sizes[pass][n] = 1;
      e->pass_names[pass][n++] = mxr_op_name(e->nodes[i].op);
    }
  }
  e->pass_len[pass] = n;
  return 0;
}

/* Element j of a host buffer of `dtype` set to one. */
static void set_one(void *buf, int dtype, int64_t j) {
  switch (dtype) {
    case MXR_FLOAT64: ((double *)buf)[j] = 1.0; break;
    case MXR_FLOAT32: ((float *)buf)[j] = 1.0f; break;
    case MXR_FLOAT16: ((uint16_t *)buf)[j] = 0x3c00u; break; /* 1.0 in IEEE half */
    case MXR_INT32: ((int32_t *)buf)[j] = 1; break;
    case MXR_INT64: ((int64_t *)buf)[j] = 1; break;
    default: ((uint8_t *)buf)[j] = 1; break; /* uint8, int8, bool */
  }
}

static int init_head_grads(struct mxr_executor *e) {
  if (!e->fg.head_grad_nodes) return 0;
  e->head_grads = calloc((size_t)e->num_heads + 1, sizeof *e->head_grads);
  if (!e->head_grads) return oom();
  for (int h = 0; h < e->num_heads; h++) {
    mxr_ndarray *a = e->values[e->row[e->fg.head_grad_nodes[h]]];
    e->head_grads[h] = a;
    int64_t n = mxr_ndarray_size(a);
    size_t bytes = (size_t)n * mxr_dtype_size(mxr_ndarray_dtype(a));
    void *ones = malloc(bytes ? bytes : 1);
    if (!ones) return oom();
    for (int64_t j = 0; j < n; j++) set_one(ones, mxr_ndarray_dtype(a), j);
    int rc = mxr_ndarray_sync_copy_from_cpu(a, ones, (size_t)n);
    free(ones);
    if (rc) return rc;
  }
  return 0;
}

static int init_outputs(struct mxr_executor *e) {
  const mxr_symbol *g = e->fg.g;
  e->num_heads = e->num_outputs = g->num_heads;
  e->outputs = calloc((size_t)g->num_heads + 1, sizeof *e->outputs);
  if (!e->outputs) return oom();
  for (int h = 0; h < g->num_heads; h++) e->outputs[h] = e->values[e->row[g->heads[h].node] + g->heads[h].index];
  return 0;
}

static void destroy(void *param);

static int bind_plan(struct mxr_executor *e, const mxr_symbol *sym, mxr_ndarray *const *args,
                     mxr_ndarray *const *grads, const int *grad_req, mxr_ndarray *const *aux) {
  int rc = mxr__gradient_graph(sym, grad_req, !e->opts.plain_head_grads, &e->fg);
  if (rc) return rc;
  e->num_nodes = e->fg.g->num_nodes;
  e->has_backward = e->fg.head_grad_nodes != NULL;
  struct plan_info pi = {0};
  rc = alloc_info(e->fg.g, &pi);
  if (!rc) rc = infer_all(&e->fg, args, aux, &pi);
  if (!rc) rc = make_values(e, args, grads, aux, &pi);
  free_info(e->fg.g, &pi);
  if (!rc) rc = plan_nodes(e, grad_req);
  if (!rc) rc = index_uses(e);
  if (!rc) rc = mxr__exec_make_segments(e);
  if (!rc) rc = plan_pass(e, 0, 0, e->fg.num_fwd);
  if (!rc) rc = plan_pass(e, 1, e->fg.num_fwd, e->num_nodes);
  if (!rc) rc = init_outputs(e);
  if (!rc) rc = init_head_grads(e);
  return rc;
}

int mxr_executor_bind(const mxr_symbol *sym, struct mxr_context ctx, int num_args,
                      mxr_ndarray *const *args, mxr_ndarray *const *grads, const int *grad_req,
                      int num_aux, mxr_ndarray *const *aux, const struct mxr_exec_opts *opts,
                      mxr_executor **out) {
  if (!sym || !out) return mxr_set_error(MXR_EINVAL, "mxr_executor_bind: NULL argument");
  *out = NULL;
  int rc = check_bind_args(sym, ctx, num_args, args, grads, grad_req, num_aux, aux);
  if (rc) return rc;
  struct mxr_executor *e = calloc(1, sizeof *e);
  if (!e) return oom();
  e->ctx = ctx;
  rc = opts ? (e->opts = *opts, 0) : mxr_exec_opts_from_config(&e->opts);
  if (!rc) rc = e->opts.engine ? (e->eng = e->opts.engine, 0) : mxr_engine_default(&e->eng);
  int *no_grads = NULL;
  if (!rc && !grad_req) {
    no_grads = calloc((size_t)num_args + 1, sizeof *no_grads);
    if (!no_grads) rc = oom();
    grad_req = no_grads;
  }
  if (!rc) rc = bind_plan(e, sym, args, grads, grad_req, aux);
  free(no_grads);
  if (rc) {
    char msg[MXR_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", mxr_last_error());
    destroy(e);
    return mxr_set_error(rc, "%s", msg);
  }
  *out = e;
  return 0;
}

/* ------------------------------------------------------------- running */

static int push_call(struct mxr_executor *e, struct exec_call *call, const char *name,
                     mxr_var **reads, int nreads, mxr_var **writes, int nwrites) {
  struct mxr_push req = {.sync_fn = mxr__exec_run_nodes, .param = call, .ctx = e->ctx,
                         .const_vars = reads, .num_const = nreads, .mutable_vars = writes,
                         .num_mutable = nwrites, .prop = MXR_PROP_NORMAL, .name = name,
                         .profile = MXR_PROFILE_SYMBOLIC, .no_bulk = true};
  return mxr_engine_push(e->eng, &req);
}

static int run_range(struct mxr_executor *e, int from, int to, bool is_train) {
  int t = is_train ? 1 : 0;
  for (int i = from; i < to; i++) {
    struct exec_segment *s = e->seg_at[i];
    int rc = 0;
    if (s && s->end <= to) {
      rc = push_call(e, &s->call[t], s->name, s->reads, s->nreads, s->writes, s->nwrites);
      i = s->end - 1;
    } else if (e->nodes[i].op) {
      struct exec_node *n = &e->nodes[i];
      rc = push_call(e, &e->node_calls[2 * i + t], mxr_op_name(n->op), n->reads, n->nreads,
                     n->writes, n->nwrites);
    }
    if (rc) return rc;
  }
  return 0;
}

int mxr_executor_forward(mxr_executor *e, bool is_train) {
  if (!e) return mxr_set_error(MXR_EINVAL, "mxr_executor_forward: NULL executor");
  return run_range(e, 0, e->fg.num_fwd, is_train);
}

struct copy_param {
  void *dst;
  const void *src;
  size_t bytes;
  struct mxr_context dst_ctx, src_ctx;
};

static int copy_fn(const struct mxr_run_ctx *rctx, void *param) {
  struct copy_param *c = param;
  return mxr__storage_copy(c->dst, c->dst_ctx, c->src, c->src_ctx, c->bytes, rctx->stream);
}

/* MXNet's names for the copy ops, by direction. */
static const char *copy_name(struct mxr_context from, struct mxr_context to) {
  bool from_gpu = !mxr_context_is_cpu(from), to_gpu = !mxr_context_is_cpu(to);
  return from_gpu ? (to_gpu ? "CopyGPU2GPU" : "CopyGPU2CPU") : (to_gpu ? "CopyCPU2GPU" : "CopyCPU2CPU");
}

/* Copy a head gradient into the executor's array, as an engine op on the
 * executor's context (so on a GPU executor, by its compute workers). */
static int push_head_grad_copy(struct mxr_executor *e, int h, mxr_ndarray *src) {
  mxr_ndarray *dst = e->head_grads[h];
  if (mxr_ndarray_size(src) != mxr_ndarray_size(dst) || mxr_ndarray_dtype(src) != mxr_ndarray_dtype(dst) ||
      mxr_ndarray_ndim(src) != mxr_ndarray_ndim(dst))
    return mxr_set_error(MXR_EINVAL, "backward: head gradient %d does not match output %d's shape or dtype", h, h);
  struct copy_param *c = malloc(sizeof *c);
  if (!c) return oom();
  c->dst = mxr_ndarray_data(dst);
  c->src = mxr_ndarray_data(src);
  c->bytes = (size_t)mxr_ndarray_size(src) * mxr_dtype_size(mxr_ndarray_dtype(src));
  c->dst_ctx = mxr_ndarray_context(dst);
  c->src_ctx = mxr_ndarray_context(src);
  if (!c->src || !c->dst) {
    free(c);
    return mxr_ndarray_size(src) == 0 ? 0 : mxr_set_error(MXR_EINVAL, "backward: head gradient %d has no memory", h);
  }
  mxr_var *r = mxr_ndarray_var(src), *w = mxr_ndarray_var(dst);
  if (r == w) {
    free(c);
    return 0;
  }
  struct mxr_push req = {.sync_fn = copy_fn, .param = c, .param_free = free, .ctx = e->ctx,
                         .const_vars = &r, .num_const = 1, .mutable_vars = &w, .num_mutable = 1,
                         .name = copy_name(c->src_ctx, c->dst_ctx), .profile = MXR_PROFILE_SYMBOLIC,
                         .no_bulk = true};
  return mxr_engine_push(e->eng, &req);
}

int mxr_executor_backward(mxr_executor *e, int num, mxr_ndarray *const *head_grads) {
  return mxr_executor_backward_ex(e, num, head_grads, true);
}

int mxr_executor_backward_ex(mxr_executor *e, int num, mxr_ndarray *const *head_grads, bool is_train) {
  if (!e) return mxr_set_error(MXR_EINVAL, "mxr_executor_backward: NULL executor");
  if (!e->has_backward)
    return mxr_set_error(MXR_ESTATE, "backward: the executor was bound without gradients");
  if (num != 0 && num != e->num_heads)
    return mxr_set_error(MXR_EINVAL, "backward: %d head gradients given for %d outputs", num, e->num_heads);
  for (int h = 0; h < num; h++) {
    if (!head_grads || !head_grads[h])
      return mxr_set_error(MXR_EINVAL, "backward: head gradient %d is NULL", h);
    int rc = push_head_grad_copy(e, h, head_grads[h]);
    if (rc) return rc;
  }
  return run_range(e, e->fg.num_fwd, e->num_nodes, is_train);
}

int mxr_executor_outputs(mxr_executor *e, int *num, mxr_ndarray *const **outs) {
  if (!e || !num || !outs) return mxr_set_error(MXR_EINVAL, "mxr_executor_outputs: NULL argument");
  *num = e->num_outputs;
  *outs = e->outputs;
  return 0;
}

int mxr_executor_info(const mxr_executor *e, struct mxr_exec_info *out) {
  if (!e || !out) return mxr_set_error(MXR_EINVAL, "mxr_executor_info: NULL argument");
  out->num_forward_nodes = e->fg.num_fwd;
  out->num_nodes = e->num_nodes;
  out->forward_engine_ops = e->pass_len[0];
  out->backward_engine_ops = e->pass_len[1];
  out->num_segments = e->num_segments;
  out->num_arrays = e->num_arrays;
  out->bytes_allocated = e->bytes_allocated;
  return 0;
}

int mxr_executor_pass_ops(const mxr_executor *e, int pass, int *num, const int **sizes,
                          const char *const **names) {
  if (!e || pass < 0 || pass > 1 || !num || !sizes || !names)
    return mxr_set_error(MXR_EINVAL, "mxr_executor_pass_ops: bad arguments");
  *num = e->pass_len[pass];
  *sizes = e->pass_sizes[pass];
  *names = e->pass_names[pass];
  return 0;
}

/* ------------------------------------------------------- rebinding */

static int slot_value(const struct mxr_executor *e, enum exec_slot slot, int i) {
  switch (slot) {
    case EXEC_ARG:
      return i >= 0 && i < e->fg.num_args ? e->row[e->fg.arg_nodes[i]] : -1;
    case EXEC_ARG_GRAD:
      if (i < 0 || i >= e->fg.num_args || !e->fg.arg_grads || e->fg.arg_grads[i].node < 0) return -1;
      return e->row[e->fg.arg_grads[i].node] + e->fg.arg_grads[i].index;
    case EXEC_HEAD_GRAD:
      return e->fg.head_grad_nodes && i >= 0 && i < e->num_heads ? e->row[e->fg.head_grad_nodes[i]] : -1;
    case EXEC_AUX:
      return i >= 0 && i < e->fg.num_aux ? e->row[e->fg.aux_nodes[i]] : -1;
  }
  return -1;
}

/* Wait, without taking errors, until the executor's pushed ops are done. */
static int quiesce(struct mxr_executor *e) {
  mxr_var **vars = malloc((size_t)(e->num_values + 1) * sizeof *vars);
  if (!vars) return oom();
  for (int v = 0; v < e->num_values; v++) vars[v] = mxr_ndarray_var(e->values[v]);
  int rc = mxr__engine_wait_vars_quiet(e->eng, vars, e->num_values);
  free(vars);
  return rc;
}

/* Point the node slot at `t`. */
static void set_slot(struct exec_node *n, int k, struct mxr_tensor t) {
  if (k < n->nin) n->in[k] = t;
  else if (k < n->nin + n->naux) n->aux[k - n->nin] = t;
  else n->out[k - n->nin - n->naux] = t;
}

/* The values vals[0..nvals) now hold `arr`: point the slots they fill at
 * it, and rebuild the var sets of those slots' nodes and of the segments
 * that hold them.  A cached op's frontend renews a held output on every
 * call, so this runs per call: it touches the values' uses (index_uses),
 * not the whole graph. */
static int repoint(struct mxr_executor *e, mxr_ndarray *arr, const int *vals, int nvals) {
  struct mxr_tensor t = tensor_of(arr);
  uint64_t epoch = ++e->arrays_epoch;
  for (int j = 0; j < nvals; j++) {
    for (int u = e->use_start[vals[j]]; u < e->use_start[vals[j] + 1]; u++) {
      struct exec_node *n = &e->nodes[e->uses[u].node];
      set_slot(n, e->uses[u].slot, t);
      if (n->repointed == epoch) continue;
      n->repointed = epoch;
      int rc = plan_vars(n, e); /* reads e->values, already updated */
      if (rc) return rc;
    }
  }
  /* Segments after their nodes: a merge reads every node's new sets. */
  for (int j = 0; j < nvals; j++) {
    for (int u = e->use_start[vals[j]]; u < e->use_start[vals[j] + 1]; u++) {
      int si = e->nodes[e->uses[u].node].segment;
      if (si < 0 || e->segments[si].remerged == epoch) continue;
      struct exec_segment *seg = &e->segments[si];
      seg->remerged = epoch;
      free(seg->reads);
      free(seg->writes);
      seg->reads = seg->writes = NULL;
      int rc = mxr__exec_merge_vars(e, seg->start, seg->end, &seg->reads, &seg->nreads,
                                    &seg->writes, &seg->nwrites);
      if (rc) return rc;
    }
  }
  return 0;
}

int mxr__executor_bind_array(struct mxr_executor *e, enum exec_slot slot, int i, mxr_ndarray *arr,
                             int grad_req) {
  int v = slot_value(e, slot, i);
  if (v < 0) return mxr_set_error(MXR_EINVAL, "executor: no such array slot (%d, %d)", (int)slot, i);
  mxr_ndarray *old = e->values[v];
  int out_index = -1, producer = -1;
  if (slot == EXEC_ARG_GRAD) {
    producer = e->fg.arg_grads[i].node;
    out_index = e->fg.arg_grads[i].index;
  }
  bool same_req = producer < 0 || e->nodes[producer].req[out_index] == grad_req;
  if (old == arr && same_req) return 0;
  struct mxr_shape a = array_shape(arr), b = array_shape(old);
  if (!mxr_shape_equal(&a, &b) || mxr_ndarray_dtype(arr) != mxr_ndarray_dtype(old)) {
    char sa[96], sb[96];
    return mxr_set_error(MXR_EINVAL, "executor: a %s array of shape %s does not fit a %s slot of shape %s",
                         mxr_dtype_name(mxr_ndarray_dtype(arr)), mxr_shape_str(&a, sa, sizeof sa),
                         mxr_dtype_name(mxr_ndarray_dtype(old)), mxr_shape_str(&b, sb, sizeof sb));
  }
  int rc = quiesce(e);
  if (rc) return rc;
  if (producer >= 0) e->nodes[producer].req[out_index] = grad_req;
  if (old == arr) return 0;
  e->values[v] = mxr_ndarray_retain(arr);
  e->owned[v] = false;
  for (int h = 0; h < e->num_outputs; h++)
    if (e->outputs[h] == old) e->outputs[h] = arr;
  if (slot == EXEC_HEAD_GRAD) e->head_grads[i] = arr;
  mxr_ndarray_free(old);
  return repoint(e, arr, &v, 1);
}

/* Value slots that hold `arr` (several when the memory plan shares it). */
static int slots_holding(const struct mxr_executor *e, const mxr_ndarray *arr) {
  int n = 0;
  for (int v = 0; v < e->num_values; v++) n += e->values[v] == arr;
  return n;
}

/* Put a new array of output h's shape, dtype and context in every slot
 * that holds its current one, so the memory plan's sharing is kept. */
static int renew_output(struct mxr_executor *e, int h) {
  mxr_ndarray *old = e->outputs[h], *fresh = NULL;
  int *vals = malloc((size_t)(e->num_values + 1) * sizeof *vals);
  if (!vals) return oom();
  int rc = mxr_ndarray_create(e->eng, mxr_ndarray_shape(old), mxr_ndarray_ndim(old), e->ctx,
                              mxr_ndarray_dtype(old), 0, &fresh);
  int nvals = 0;
  for (int v = 0; v < e->num_values && !rc; v++) {
    if (e->values[v] != old) continue;
    vals[nvals++] = v;
    e->values[v] = mxr_ndarray_retain(fresh);
    mxr_ndarray_free(old); /* the slot's reference; the holder keeps its own */
  }
  if (!rc) rc = repoint(e, fresh, vals, nvals);
  free(vals);
  for (int k = 0; k < e->num_outputs && !rc; k++)
    if (e->outputs[k] == old) e->outputs[k] = fresh;
  mxr_ndarray_free(fresh); /* the slots hold it now */
  return rc;
}

int mxr__executor_renew_held_outputs(struct mxr_executor *e) {
  bool waited = false;
  for (int h = 0; h < e->num_outputs; h++) {
    const struct mxr_entry *head = &e->fg.g->heads[h];
    mxr_ndarray *arr = e->outputs[h];
    if (!e->owned[e->row[head->node] + head->index]) continue; /* a bound array */
    /* nobody else holds it: one reference (the usual case, no scan), or
     * no more than the plan's slots that share it */
    const long refs = mxr__ndarray_refs(arr);
    if (refs <= 1 || refs <= slots_holding(e, arr)) continue;
    int rc = waited ? 0 : quiesce(e);
    waited = true;
    if (!rc) rc = renew_output(e, h);
    if (rc) return rc;
  }
  return 0;
}

int mxr__executor_backward_bound(struct mxr_executor *e) {
  if (!e->has_backward) return mxr_set_error(MXR_ESTATE, "backward: the executor was bound without gradients");
  return run_range(e, e->fg.num_fwd, e->num_nodes, true);
}

/* ------------------------------------------------------------ teardown */

static void destroy(void *param) {
  struct mxr_executor *e = param;
  for (int v = 0; e->values && v < e->num_values; v++) mxr_ndarray_free(e->values[v]);
  mxr_ndarray_free(e->scratch);
  for (int i = 0; e->nodes && i < e->num_nodes; i++) {
    free(e->nodes[i].req);
    free(e->nodes[i].val);
    free(e->nodes[i].reads);
    free(e->nodes[i].writes);
  }
  for (int s = 0; s < e->num_segments; s++) {
    free(e->segments[s].name);
    free(e->segments[s].reads);
    free(e->segments[s].writes);
#ifdef MXR_HAVE_CUDA
    for (int t = 0; t < 2; t++) mxr__cuda_graph_release(&e->segments[s].call[t].graph);
#endif
  }
  for (int p = 0; p < 2; p++) {
    free(e->pass_sizes[p]);
    free(e->pass_names[p]);
  }
  free(e->segments);
  free(e->seg_at);
  free(e->nodes);
  free(e->use_start);
  free(e->uses);
  free(e->node_calls);
  free(e->tensors);
  free(e->values);
  free(e->owned);
  free(e->row);
  free(e->outputs);
  free(e->head_grads);
  mxr__full_graph_free(&e->fg);
  free(e);
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

static int nothing(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  (void)param;
  return 0;
}

/* The executor's memory is referenced by its queued engine ops: free it
 * from an op that reads every value any of them writes, so it runs last. */
void mxr_executor_free(mxr_executor *e) {
  if (!e) return;
  mxr_var **vars = malloc((size_t)(e->num_values + 1) * sizeof *vars);
  if (!vars) { /* cannot order the free: wait instead */
    mxr_engine_wait_for_all(e->eng);
    destroy(e);
    return;
  }
  int n = 0;
  for (int v = 0; v < e->num_values; v++)
    if (e->values[v]) vars[n++] = mxr_ndarray_var(e->values[v]);
  qsort(vars, (size_t)n, sizeof *vars, cmp_ptr); /* one array may hold several values */
  int unique = 0;
  for (int i = 0; i < n; i++)
    if (i == 0 || vars[i] != vars[i - 1]) vars[unique++] = vars[i];
  n = unique;
  struct mxr_push req = {.sync_fn = nothing, .param = e, .param_free = destroy, .ctx = e->ctx,
                         .const_vars = vars, .num_const = n, .prop = MXR_PROP_NO_SKIP,
                         .name = "ExecutorFree"};
  if (mxr_engine_push(e->eng, &req) != 0) {
    /* param_free already ran on the failed push */
  }
  free(vars);
}
