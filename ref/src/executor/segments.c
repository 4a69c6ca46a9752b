/*
 * Op segments ("bulking"), as MXNet 1.9.1's GraphExecutor::BulkOpSegs cuts
 * them, and the run function every executor engine op uses.
 *
 * Within a region [from, upto) with a cap: variables do not count; a
 * segment closes after the node that makes the count reach the cap, after
 * the region's last node, or before a node that cannot be bulked (which then
 * runs on its own).  A segment without any op node (only variables) is no
 * segment at all.  With a cap of 0 every node closes its own segment, so a
 * "non-bulked" training run still pushes one segment per op, named
 * "[op]" -- exactly what MXNet does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/random.h"
#include "executor/executor_internal.h"
#include "mxref/profiler.h"

static int oom(void) { return mxr_set_error(MXR_ENOMEM, "executor: out of memory"); }

static bool is_var_node(const struct mxr_executor *e, int i) { return e->nodes[i].op == NULL; }

static bool can_bulk(const struct mxr_executor *e, int i) {
  return is_var_node(e, i) || e->nodes[i].op->exec_type == MXR_EXEC_SYNC;
}

static int add_var(mxr_var ***set, int *n, int *cap, mxr_var *v) {
  for (int i = 0; i < *n; i++)
    if ((*set)[i] == v) return 0;
  if (*n == *cap) {
    int ncap = *cap ? 2 * *cap : 8;
    mxr_var **grown = realloc(*set, (size_t)ncap * sizeof *grown);
    if (!grown) return oom();
    *set = grown;
    *cap = ncap;
  }
  (*set)[(*n)++] = v;
  return 0;
}

int mxr__exec_merge_vars(const struct mxr_executor *exec, int first, int end, mxr_var ***reads,
                         int *nreads, mxr_var ***writes, int *nwrites) {
  int rc = 0, rcap = 0, wcap = 0;
  *reads = *writes = NULL;
  *nreads = *nwrites = 0;
  for (int i = first; i < end && !rc; i++) {
    const struct exec_node *n = &exec->nodes[i];
    for (int k = 0; k < n->nwrites && !rc; k++) rc = add_var(writes, nwrites, &wcap, n->writes[k]);
  }
  for (int i = first; i < end && !rc; i++) {
    const struct exec_node *n = &exec->nodes[i];
    for (int k = 0; k < n->nreads && !rc; k++) {
      bool written = false;
      for (int w = 0; w < *nwrites && !written; w++) written = (*writes)[w] == n->reads[k];
      if (!written) rc = add_var(reads, nreads, &rcap, n->reads[k]);
    }
  }
  if (rc) {
    free(*reads);
    free(*writes);
    *reads = *writes = NULL;
  }
  return rc;
}

/* "[op1,op2,...]" of the op nodes in [start, end); without brackets for
 * cached ops, as MXNet names their segments. */
static char *segment_name(const struct mxr_executor *e, int start, int end) {
  bool brackets = !e->opts.plain_segment_names;
  size_t len = 3;
  for (int i = start; i < end; i++)
    if (!is_var_node(e, i)) len += strlen(mxr_op_name(e->nodes[i].op)) + 1;
  char *name = malloc(len);
  if (!name) return NULL;
  char *p = name;
  if (brackets) *p++ = '[';
  for (int i = start; i < end; i++) {
    if (is_var_node(e, i)) continue;
    const char *op = mxr_op_name(e->nodes[i].op);
    size_t n = strlen(op);
    memcpy(p, op, n);
    p += n;
    *p++ = ',';
  }
  if (p > name && p[-1] == ',') p--;
  if (brackets) *p++ = ']';
  *p = '\0';
  return name;
}

/* Whether no node of [start, end) draws random numbers (whose seeds a CUDA
 * graph would freeze). */
static bool no_random_draws(const struct mxr_executor *e, int start, int end) {
  for (int i = start; i < end; i++)
    if (e->nodes[i].op && e->nodes[i].op->draws_random) return false;
  return true;
}

/* Record segment [start, end) unless it holds no op. */
static int create_segment(struct mxr_executor *e, int start, int end) {
  if (end <= start) return 0;
  int ops = 0;
  for (int i = start; i < end; i++) ops += !is_var_node(e, i);
  if (ops == 0) return 0;
  struct exec_segment *s = &e->segments[e->num_segments];
  memset(s, 0, sizeof *s);
  s->start = start;
  s->end = end;
  s->num_ops = ops;
  s->name = segment_name(e, start, end);
  if (!s->name) return oom();
  int rc = mxr__exec_merge_vars(e, start, end, &s->reads, &s->nreads, &s->writes, &s->nwrites);
  if (rc) {
    free(s->name);
    return rc;
  }
  bool graph_safe = ops > 1 && no_random_draws(e, start, end);
  for (int t = 0; t < 2; t++)
    s->call[t] = (struct exec_call){.exec = e, .first = start, .end = end, .is_train = t == 1,
                                    .graph_safe = graph_safe};
  e->seg_at[start] = s;
  for (int i = start; i < end; i++) e->nodes[i].segment = e->num_segments;
  e->num_segments++;
  return 0;
}

static int bulk_region(struct mxr_executor *e, int from, int upto, int cap) {
  int start = from, count = 0;
  for (int i = from; i < upto; i++) {
    bool ignore = is_var_node(e, i);
    if (!ignore) count++;
    bool bulkable = can_bulk(e, i);
    bool full = count >= cap;
    if (!bulkable || i == upto - 1 || full) {
      int rc = create_segment(e, start, bulkable ? i + 1 : i);
      if (rc) return rc;
      start = i + 1;
      count = 0;
    }
  }
  return 0;
}

int mxr__exec_make_segments(struct mxr_executor *e) {
  e->segments = calloc((size_t)e->num_nodes + 1, sizeof *e->segments);
  e->seg_at = calloc((size_t)e->num_nodes + 1, sizeof *e->seg_at);
  if (!e->segments || !e->seg_at) return oom();
  for (int i = 0; i < e->num_nodes; i++) e->nodes[i].segment = -1;
  const struct mxr_exec_opts *o = &e->opts;
  bool is_training = e->fg.num_fwd != e->num_nodes;
  int rc = 0;
  if (o->bulk_train && !o->aggregate_profiling && is_training) {
    rc = bulk_region(e, 0, e->fg.num_fwd, o->max_node_train_fwd);
    if (!rc) rc = bulk_region(e, e->fg.num_fwd, e->num_nodes, o->max_node_train_bwd);
  }
  if (o->bulk_inference && !is_training) rc = bulk_region(e, 0, e->num_nodes, e->num_nodes);
  return rc;
}

/* ------------------------------------------------------------------ run */

static uint64_t mix_seed(uint64_t a, uint64_t b) {
  uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  return z ^ (z >> 31);
}

static int run_node(struct exec_node *n, const struct mxr_run_ctx *rctx, bool is_train) {
  uint64_t seed = mix_seed(n->seed ^ mxr__random_seed_base(), n->runs++);
  struct mxr_op_ctx ctx = {.run = rctx, .is_train = is_train, .seed = seed,
                           .workspace = n->workspace, .workspace_size = n->workspace_size};
  /* bind checked that the kernel for the executor's context exists. */
  int rc = mxr__op_kernel(n->op, rctx->ctx)(&ctx, n->params, n->in, n->nin, n->req, n->out,
                                             n->nout, n->aux, n->naux);
  if (rc) {
    char msg[MXR_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", mxr_last_error());
    return mxr_set_error(rc, "Error in operator %s (%s): %s", n->name, mxr_op_name(n->op), msg);
  }
  return 0;
}

static int run_range(const struct mxr_run_ctx *rctx, void *param) {
  const struct exec_call *c = param;
  struct mxr_executor *e = c->exec;
  for (int i = c->first; i < c->end; i++) {
    if (!e->nodes[i].op) continue;
    int rc = run_node(&e->nodes[i], rctx, c->is_train);
    if (rc) return rc;
  }
  return 0;
}

#ifdef MXR_HAVE_CUDA
/* Run the segment through its CUDA graph state; a run that captured or
 * replayed a graph shows in the trace as a span inside the segment's event
 * (mxr_profiler_span_begin), which is how a suite sees that graphs replay. */
static int run_as_graph(const struct mxr_run_ctx *rctx, struct exec_call *c) {
  struct mxr_op_event ev = {.name = MXR_PROFILER_CUDA_GRAPH_LAUNCH, .ctx = rctx->ctx,
                            .prop = MXR_PROP_NORMAL, .profile = MXR_PROFILE_SYMBOLIC};
  uint64_t cookie = mxr_profiler_span_begin(&ev);
  enum mxr_cuda_graph_path path;
  int rc = mxr__cuda_graph_run(&c->graph, c->exec->arrays_epoch, rctx, run_range, c, &path);
  if (path != MXR_CUDA_GRAPH_PLAIN) {
    if (path == MXR_CUDA_GRAPH_CAPTURED) ev.name = MXR_PROFILER_CUDA_GRAPH_CAPTURE;
    mxr_profiler_span_end(&ev, cookie);
  }
  return rc;
}
#endif

/* A bulked segment on a GPU worker may run as a CUDA graph
 * (MXNET_ENABLE_CUDA_GRAPHS, cuda/graph.h). */
int mxr__exec_run_nodes(const struct mxr_run_ctx *rctx, void *param) {
#ifdef MXR_HAVE_CUDA
  struct exec_call *c = param;
  if (c->graph_safe && rctx->stream && c->exec->opts.cuda_graphs) return run_as_graph(rctx, c);
#endif
  return run_range(rctx, param);
}
