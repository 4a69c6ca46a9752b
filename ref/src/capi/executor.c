/* C API: the graph executor. */
#include <stdio.h>
#include <stdlib.h>

#include "capi/capi_internal.h"
#include "graph/graph.h"

static int check_exec(ExecutorHandle h, const char *fn, struct capi_executor **out) {
  int st = mxr__capi_check(h, CAPI_EXECUTOR, fn, "handle");
  *out = st ? NULL : h;
  return st;
}

/* MXNet needs a head gradient for every output whose op uses it: outputs
 * of loss ops (SoftmaxOutput, the regression outputs, ...) do not. */
static bool needs_head_grads(const mxr_symbol *s) {
  for (int h = 0; h < s->num_heads; h++) {
    const struct mxr_node *n = &s->nodes[s->heads[h].node];
    if (mxr__node_is_var(n) || !n->op->ignores_out_grad) return true;
  }
  return false;
}

int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t num_map_keys,
                     const char **map_keys, const int *map_dev_types, const int *map_dev_ids,
                     uint32_t len, NDArrayHandle *in_args, NDArrayHandle *arg_grad_store,
                     uint32_t *grad_req_type, uint32_t aux_states_len, NDArrayHandle *aux_states,
                     ExecutorHandle shared_exec, ExecutorHandle *out) {
  static const char fn[] = "MXExecutorBindEX";
  mxr_symbol *sym;
  int st = mxr__capi_symbol(symbol_handle, fn, "symbol_handle", &sym);
  if (st) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  if (dev_type != MXR_DEV_CPU && dev_type != MXR_DEV_GPU && dev_type != MXR_DEV_CPU_PINNED &&
      dev_type != MXR_DEV_CPU_SHARED)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: unknown device type %d", fn, dev_type));
  /* group2ctx: only the bind device itself is supported. */
  if (num_map_keys > 0 && (!map_keys || !map_dev_types || !map_dev_ids))
    return capi_ret(mxr__capi_null(fn, "map_keys, map_dev_types or map_dev_ids"));
  for (uint32_t i = 0; i < num_map_keys; i++)
    if (map_dev_types[i] != dev_type || map_dev_ids[i] != dev_id)
      return capi_ret(mxr_set_error(MXR_EINVAL,
                                    "%s: group2ctx places group '%s' on device %d(%d); libmxref binds "
                                    "a graph to one device only",
                                    fn, map_keys[i] ? map_keys[i] : "(NULL)", map_dev_types[i],
                                    map_dev_ids[i]));
  if (shared_exec) {
    /* MXNet shares memory with it; the plan here is independent of it. */
    st = mxr__capi_check(shared_exec, CAPI_EXECUTOR, fn, "shared_exec");
    if (st) return -1;
  }
  if (len > 65536 || aux_states_len > 65536)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %u arguments and %u aux states is too many", fn,
                                  (unsigned)len, (unsigned)aux_states_len));
  mxr_ndarray **args = calloc((size_t)len + 1, sizeof *args);
  mxr_ndarray **grads = calloc((size_t)len + 1, sizeof *grads);
  int *reqs = calloc((size_t)len + 1, sizeof *reqs);
  mxr_ndarray **aux = calloc((size_t)aux_states_len + 1, sizeof *aux);
  if (!args || !grads || !reqs || !aux) st = mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  if (!st) st = mxr__capi_ndarrays(in_args, (int)len, fn, "in_args", args);
  if (!st) st = mxr__capi_ndarrays(aux_states, (int)aux_states_len, fn, "aux_states", aux);
  bool any_grad = false;
  for (uint32_t i = 0; !st && arg_grad_store && i < len; i++) {
    if (!arg_grad_store[i]) continue; /* no gradient: grad_req null, as MXNet */
    char what[48];
    snprintf(what, sizeof what, "arg_grad_store[%u]", (unsigned)i);
    st = mxr__capi_ndarray(arg_grad_store[i], fn, what, &grads[i]);
    if (!st && !grad_req_type) st = mxr__capi_null(fn, "grad_req_type");
    if (st) break;
    switch (grad_req_type[i]) {
      case 0: reqs[i] = MXR_GRAD_NULL; grads[i] = NULL; break;
      case 1: /* write */
      case 2: /* in place: a gradient array is written whole either way */
        reqs[i] = MXR_GRAD_WRITE;
        break;
      case 3: reqs[i] = MXR_GRAD_ADD; break;
      default:
        st = mxr_set_error(MXR_EINVAL, "%s: grad_req_type[%u] is %u (0 null, 1 write, 2 inplace, 3 add)", fn,
                           (unsigned)i, (unsigned)grad_req_type[i]);
    }
    any_grad = any_grad || reqs[i] != MXR_GRAD_NULL;
  }
  mxr_executor *exec = NULL;
  struct mxr_context ctx = {dev_type, dev_id};
  if (!st)
    st = mxr_executor_bind(sym, ctx, (int)len, args, grads, reqs, (int)aux_states_len, aux, NULL, &exec);
  struct capi_executor *h = NULL;
  if (!st && !(h = mxr__capi_handle_new(CAPI_EXECUTOR))) {
    mxr_executor_free(exec);
    st = MXR_ENOMEM;
  }
  if (!st) {
    int nout = 0;
    mxr_ndarray *const *outs = NULL;
    mxr_executor_outputs(exec, &nout, &outs);
    h->exec = exec;
    h->num_outputs = nout;
    h->has_backward = any_grad;
    h->needs_head_grads = any_grad && needs_head_grads(sym);
    *out = h;
  }
  free(args);
  free(grads);
  free(reqs);
  free(aux);
  return capi_ret(st);
}

int MXExecutorForward(ExecutorHandle handle, int is_train) {
  struct capi_executor *h;
  int st = check_exec(handle, "MXExecutorForward", &h);
  if (!st) st = mxr_executor_forward(h->exec, is_train != 0);
  return capi_ret(st);
}

int MXExecutorBackwardEx(ExecutorHandle handle, uint32_t len, NDArrayHandle *head_grads,
                         int is_train) {
  static const char fn[] = "MXExecutorBackwardEx";
  struct capi_executor *h;
  int st = check_exec(handle, fn, &h);
  if (st) return -1;
  if (len > (uint32_t)h->num_outputs)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %u head gradients for %d outputs", fn, (unsigned)len,
                                  h->num_outputs));
  mxr_ndarray *grads[64];
  mxr_ndarray **g = len <= 64 ? grads : malloc(len * sizeof *g);
  if (!g) return capi_ret(mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn));
  st = mxr__capi_ndarrays(head_grads, (int)len, fn, "head_grads", g);
  if (!st && !h->has_backward) {
    /* Bound without gradients: nothing to compute (MXNet returns too). */
  } else if (!st && len == 0 && h->needs_head_grads) {
    st = mxr_set_error(MXR_EINVAL,
                       "%s: head gradients are required because an output is not a loss; pass one "
                       "per output, or end the graph in a loss op (MakeLoss, SoftmaxOutput, ...)",
                       fn);
  } else if (!st) {
    st = mxr_executor_backward_ex(h->exec, (int)len, g, is_train != 0);
  }
  if (g != grads) free(g);
  return capi_ret(st);
}

int MXExecutorOutputs(ExecutorHandle handle, uint32_t *out_size, NDArrayHandle **out) {
  static const char fn[] = "MXExecutorOutputs";
  struct capi_executor *h;
  int st = check_exec(handle, fn, &h);
  if (!st && (!out_size || !out)) st = mxr__capi_null(fn, "an out pointer");
  int n = 0;
  mxr_ndarray *const *outs = NULL;
  if (!st) st = mxr_executor_outputs(h->exec, &n, &outs);
  if (st) return -1;
  mxr_ndarray *held[64];
  mxr_ndarray **r = n <= 64 ? held : malloc((size_t)n * sizeof *r);
  if (!r) return capi_ret(mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn));
  /* Each call hands out new handles: one reference each, the caller's. */
  for (int i = 0; i < n; i++) r[i] = mxr_ndarray_retain(outs[i]);
  st = mxr__capi_return_arrays(r, n, out, NULL);
  if (!st) *out_size = (uint32_t)n;
  if (r != held) free(r);
  return capi_ret(st);
}

int MXExecutorFree(ExecutorHandle handle) {
  struct capi_executor *h;
  int st = check_exec(handle, "MXExecutorFree", &h);
  if (st) return -1;
  mxr_executor *exec = h->exec;
  mxr__capi_handle_release(h);
  mxr_executor_free(exec);
  return 0;
}

/* MXNet prints its graph; this is the plan's summary and its engine ops. */
int MXExecutorPrint(ExecutorHandle handle, const char **out_str) {
  static const char fn[] = "MXExecutorPrint";
  struct capi_executor *h;
  if (check_exec(handle, fn, &h)) return -1;
  if (!out_str) return capi_ret(mxr__capi_null(fn, "out_str"));
  struct mxr_exec_info info;
  struct capi_tls *t = mxr__capi_tls();
  if (!t || mxr_executor_info(h->exec, &info)) return -1;
  char *text = malloc(320);
  if (!text) return capi_ret(mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn));
  /* The last line as MXNet's GraphExecutor::Print words it: the bytes the
   * memory plan gave op outputs (not the bound arguments, aux states and
   * gradients, nor head gradients, which MXNet allocates outside its plan),
   * in whole MB (storage_allocated_bytes >> 20). */
  snprintf(text, 320,
           "libmxref executor: %d forward nodes, %d nodes, %d segments, %d arrays; "
           "%d forward and %d backward engine ops\nTotal %zu MB allocated\n",
           info.num_forward_nodes, info.num_nodes, info.num_segments, info.num_arrays,
           info.forward_engine_ops, info.backward_engine_ops, info.bytes_allocated >> 20);
  free(t->text);
  t->text = text;
  *out_str = text;
  return 0;
}
