/*
 * Cached ops: a symbol run through an executor plan that is built once per
 * mode (recording or not) and input signature, and reused call after call.
 *
 * As MXNet's CachedOp with static_alloc and static_shape: the plan's
 * internal arrays are allocated once; the inputs, head gradients and
 * variable gradients are bound to the plan (rebinding only when a caller
 * passes different arrays); forward and backward push op segments of
 * forward_bulk_size / backward_bulk_size nodes named "op1,op2,...".
 * A call's outputs are the plan's output arrays; when a caller still holds
 * those of an earlier call, the plan gets new ones first, so every call
 * returns arrays of its own (as MXNet's) while a loop that frees its
 * outputs pays nothing for it.
 * Without static_alloc/static_shape the same plan is used (the reference
 * has no dynamic-memory variant); the flags are accepted and kept.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/threads.h"
#include "imperative/imperative_internal.h"
#include "mxref/config.h"

#define MAX_INPUTS 256

struct cop_state {
  mxr_executor *exec;
  mxr_ndarray *own_grads[MAX_INPUTS]; /* the plan's gradient arrays, per argument */
  int num_args;
  bool recording;
  int ninputs;
  struct mxr_shape shapes[MAX_INPUTS];
  int dtypes[MAX_INPUTS];
};

struct mxr_cached_op {
  atomic_int refs;
  mxr_symbol *sym;
  bool static_alloc, static_shape;
  int forward_bulk_size, backward_bulk_size;
  int num_inputs;
  /* input i of a call is argument slot[i] or aux slot[i] */
  bool is_aux[MAX_INPUTS];
  int slot[MAX_INPUTS];
  pthread_mutex_t mu; /* the plans are built and rebound under it */
  struct cop_state states[2]; /* [recording] */
};

static int oom(void) { return mxr_set_error(MXR_ENOMEM, "cached op: out of memory"); }

static int parse_flag(mxr_cached_op *c, const char *key, const char *val) {
  char *end;
  if (strcmp(key, "static_alloc") == 0 || strcmp(key, "static_shape") == 0) {
    bool on;
    if (!strcmp(val, "True") || !strcmp(val, "true") || !strcmp(val, "1")) on = true;
    else if (!strcmp(val, "False") || !strcmp(val, "false") || !strcmp(val, "0")) on = false;
    else return mxr_set_error(MXR_EINVAL, "cached op: flag %s='%s' is not True or False", key, val);
    if (key[7] == 'a') c->static_alloc = on;
    else c->static_shape = on;
    return 0;
  }
  if (strcmp(key, "forward_bulk_size") == 0 || strcmp(key, "backward_bulk_size") == 0) {
    long v = strtol(val, &end, 10);
    if (end == val || *end || v < 0 || v > 1000000000)
      return mxr_set_error(MXR_EINVAL, "cached op: flag %s='%s' is not a count", key, val);
    if (key[0] == 'f') c->forward_bulk_size = (int)v;
    else c->backward_bulk_size = (int)v;
    return 0;
  }
  static const char *const accepted[] = {"inline_limit", "data_indices", "param_indices",
                                         "is_dynamic", NULL};
  for (int i = 0; accepted[i]; i++)
    if (strcmp(key, accepted[i]) == 0) return 0;
  return mxr_set_error(MXR_EINVAL, "cached op: unknown flag '%s' (value '%s')", key, val);
}

/* Inputs are the symbol's variables in node order (arguments and aux
 * states interleaved, as MXNet's list_inputs). */
static int map_inputs(mxr_cached_op *c) {
  const mxr_symbol *s = c->sym;
  int na = 0, nx = 0;
  for (int i = 0; i < s->num_nodes; i++) {
    if (!mxr__node_is_var(&s->nodes[i])) continue;
    if (c->num_inputs == MAX_INPUTS) return mxr_set_error(MXR_EINVAL, "cached op: more than %d inputs", MAX_INPUTS);
    bool aux = mxr__symbol_var_is_aux(s, i);
    c->is_aux[c->num_inputs] = aux;
    c->slot[c->num_inputs++] = aux ? nx++ : na++;
  }
  return 0;
}

int mxr_cached_op_create(const mxr_symbol *sym, int num_flags, const char *const *keys,
                         const char *const *vals, mxr_cached_op **out) {
  if (!sym || !out || num_flags < 0 || (num_flags > 0 && (!keys || !vals)))
    return mxr_set_error(MXR_EINVAL, "mxr_cached_op_create: bad arguments");
  int rc = mxr_config_status();
  if (rc) return rc;
  mxr_cached_op *c = calloc(1, sizeof *c);
  if (!c) return oom();
  atomic_init(&c->refs, 1);
  const struct mxr_config *cfg = mxr_config_get();
  c->forward_bulk_size = cfg->exec_bulk_exec_max_node_train_fwd;
  c->backward_bulk_size = cfg->exec_bulk_exec_max_node_train_bwd;
  for (int i = 0; i < num_flags && !rc; i++) {
    if (!keys[i] || !vals[i]) rc = mxr_set_error(MXR_EINVAL, "cached op: flag %d is NULL", i);
    else rc = parse_flag(c, keys[i], vals[i]);
  }
  if (!rc) rc = mxr_symbol_copy(sym, &c->sym);
  if (!rc) rc = map_inputs(c);
  if (!rc) rc = mxr__mutex_init(&c->mu, "cached op");
  if (rc) {
    mxr_symbol_free(c->sym);
    free(c);
    return rc;
  }
  *out = c;
  return 0;
}

mxr_cached_op *mxr__cached_op_retain(mxr_cached_op *c) {
  atomic_fetch_add(&c->refs, 1);
  return c;
}

void mxr_cached_op_free(mxr_cached_op *c) {
  if (!c || atomic_fetch_sub(&c->refs, 1) != 1) return;
  for (int m = 0; m < 2; m++) {
    mxr_executor_free(c->states[m].exec);
    for (int a = 0; a < c->states[m].num_args; a++) mxr_ndarray_free(c->states[m].own_grads[a]);
  }
  mxr_symbol_free(c->sym);
  mxr_mutex_destroy(&c->mu);
  free(c);
}

/* ------------------------------------------------------------ planning */

static bool same_signature(const struct cop_state *st, int n, mxr_ndarray *const *in) {
  if (!st->exec || st->ninputs != n) return false;
  for (int i = 0; i < n; i++) {
    struct mxr_shape s = {mxr_ndarray_ndim(in[i]), {0}};
    for (int d = 0; d < s.ndim; d++) s.dim[d] = mxr_ndarray_shape(in[i])[d];
    if (!mxr_shape_equal(&s, &st->shapes[i]) || mxr_ndarray_dtype(in[i]) != st->dtypes[i]) return false;
  }
  return true;
}

/* Build the plan for these inputs: arguments and aux states bound to the
 * caller's arrays, gradients (when recording) to arrays of the plan's own. */
static int plan(mxr_cached_op *c, struct cop_state *st, bool recording, mxr_ndarray *const *in) {
  mxr_executor_free(st->exec);
  st->exec = NULL;
  for (int a = 0; a < st->num_args; a++) mxr_ndarray_free(st->own_grads[a]);
  st->num_args = 0;
  mxr_ndarray *args[MAX_INPUTS], *aux[MAX_INPUTS], *grads[MAX_INPUTS] = {0};
  int req[MAX_INPUTS], na = 0, nx = 0, rc = 0;
  mxr_engine *eng;
  rc = mxr_engine_default(&eng);
  for (int i = 0; i < c->num_inputs && !rc; i++) {
    if (c->is_aux[i]) {
      aux[nx++] = in[i];
      continue;
    }
    args[na] = in[i];
    req[na] = recording ? MXR_GRAD_WRITE : MXR_GRAD_NULL;
    if (recording)
      rc = mxr_ndarray_create(eng, mxr_ndarray_shape(in[i]), mxr_ndarray_ndim(in[i]),
                              mxr_ndarray_context(in[i]), mxr_ndarray_dtype(in[i]), 0, &grads[na]);
    na++;
  }
  struct mxr_exec_opts o;
  if (!rc) rc = mxr_exec_opts_from_config(&o);
  if (!rc) {
    o.engine = eng;
    o.max_node_train_fwd = c->forward_bulk_size;
    o.max_node_train_bwd = c->backward_bulk_size;
    o.plain_segment_names = true;
    o.plain_head_grads = true; /* MXNet's cached op has no head-gradient identity */
    o.own_outputs = true; /* each call's outputs are new arrays */
    rc = mxr_executor_bind(c->sym, mxr_ndarray_context(in[0]), na, args, grads, req, nx, aux, &o,
                           &st->exec);
  }
  for (int a = 0; a < na; a++) st->own_grads[a] = grads[a]; /* kept: the plan's own */
  st->num_args = na;
  if (rc) return rc;
  st->recording = recording;
  st->ninputs = c->num_inputs;
  for (int i = 0; i < c->num_inputs; i++) {
    st->shapes[i].ndim = mxr_ndarray_ndim(in[i]);
    for (int d = 0; d < st->shapes[i].ndim; d++) st->shapes[i].dim[d] = mxr_ndarray_shape(in[i])[d];
    st->dtypes[i] = mxr_ndarray_dtype(in[i]);
  }
  return 0;
}

static int bind_inputs(mxr_cached_op *c, struct cop_state *st, mxr_ndarray *const *in) {
  for (int i = 0; i < c->num_inputs; i++) {
    int rc = mxr__executor_bind_array(st->exec, c->is_aux[i] ? EXEC_AUX : EXEC_ARG, c->slot[i], in[i], 0);
    if (rc) return rc;
  }
  return 0;
}

int mxr_cached_op_invoke(mxr_cached_op *c, int num_inputs, mxr_ndarray *const *inputs,
                         int *num_outputs, mxr_ndarray **outputs) {
  if (!c || !num_outputs || !outputs || (num_inputs > 0 && !inputs))
    return mxr_set_error(MXR_EINVAL, "mxr_cached_op_invoke: NULL argument");
  if (num_inputs != c->num_inputs)
    return mxr_set_error(MXR_EINVAL, "cached op: takes %d inputs, %d given", c->num_inputs, num_inputs);
  for (int i = 0; i < num_inputs; i++)
    if (!inputs[i] || mxr_ndarray_is_none(inputs[i]))
      return mxr_set_error(MXR_EINVAL, "cached op: input %d is NULL or has no shape", i);
  bool recording = mxr_autograd_is_recording() && mxr__autograd_any_tracked(num_inputs, inputs);
  struct cop_state *st = &c->states[recording];
  mxr_mutex_lock(&c->mu);
  int rc = same_signature(st, num_inputs, inputs) ? bind_inputs(c, st, inputs) : plan(c, st, recording, inputs);
  /* Outputs are new arrays each call, as MXNet's: one a caller kept from an
   * earlier call must not change under it. */
  if (!rc && *num_outputs == 0) rc = mxr__executor_renew_held_outputs(st->exec);
  if (!rc) rc = mxr_executor_forward(st->exec, mxr_autograd_is_training());
  mxr_mutex_unlock(&c->mu);
  if (rc) return rc;
  int n;
  mxr_ndarray *const *outs;
  mxr_executor_outputs(st->exec, &n, &outs);
  if (*num_outputs != 0 && *num_outputs != n)
    return mxr_set_error(MXR_EINVAL, "cached op: has %d outputs, %d arrays given", n, *num_outputs);
  if (*num_outputs != 0) {
    /* written into the caller's arrays: copy (the plan keeps its own) */
    for (int k = 0; k < n && !rc; k++) {
      const mxr_op *copy;
      mxr_op_params *p;
      int one = 1;
      rc = mxr_op_find("_copy", &copy);
      if (!rc) rc = mxr_op_params_parse(copy, 0, NULL, NULL, &p);
      if (!rc) {
        rc = mxr_imperative_invoke(copy, p, 1, &outs[k], &one, &outputs[k]);
        mxr_op_params_free(p);
      }
    }
    return rc;
  }
  /* The caller gets views of the plan's outputs, not the plan's own
   * objects: autograd tags the arrays it records, and a tag on the plan's
   * own would make a cycle (plan -> output -> its record -> this cached op
   * -> plan) that no free could break. */
  for (int k = 0; k < n && !rc; k++) {
    rc = mxr_ndarray_view(outs[k], 0, mxr_ndarray_shape(outs[k]), mxr_ndarray_ndim(outs[k]),
                          &outputs[k]);
    if (rc)
      for (int j = 0; j < k; j++) mxr_ndarray_free(outputs[j]);
  }
  if (rc) return rc;
  *num_outputs = n;
  if (recording) rc = mxr__autograd_record_cached(c, st, num_inputs, inputs, n, outputs);
  return rc;
}

int mxr__cached_op_backward(mxr_cached_op *c, struct cop_state *st, int nout,
                            mxr_ndarray *const *ograds, int nin, mxr_ndarray *const *direct,
                            const int *direct_req, const bool *needs, mxr_ndarray **contrib) {
  for (int i = 0; i < nin; i++) contrib[i] = NULL;
  if (!st->exec || !st->recording)
    return mxr_set_error(MXR_ESTATE, "cached op: backward without a recorded forward");
  mxr_mutex_lock(&c->mu);
  int rc = 0;
  for (int k = 0; k < nout && !rc; k++) rc = mxr__executor_bind_array(st->exec, EXEC_HEAD_GRAD, k, ograds[k], 0);
  for (int i = 0; i < nin && !rc; i++) {
    if (c->is_aux[i]) continue;
    int a = c->slot[i];
    if (direct[i]) {
      rc = mxr__executor_bind_array(st->exec, EXEC_ARG_GRAD, a, direct[i], direct_req[i]);
    } else if (needs[i] && st->own_grads[a]) {
      /* back to the plan's own array if a variable's was bound before */
      rc = mxr__executor_bind_array(st->exec, EXEC_ARG_GRAD, a, st->own_grads[a], MXR_GRAD_WRITE);
    }
  }
  if (!rc) rc = mxr__executor_backward_bound(st->exec);
  for (int i = 0; i < nin && !rc; i++)
    if (!c->is_aux[i] && !direct[i] && needs[i])
      contrib[i] = mxr_ndarray_retain(st->own_grads[c->slot[i]]);
  mxr_mutex_unlock(&c->mu);
  return rc;
}
