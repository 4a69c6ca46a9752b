/*
 * The numerics workload: every case of the float64 oracle's table whose op
 * the implementation lists runs through the implementation's C API --
 * MXImperativeInvokeEx for the forward, autograd for the gradients -- on
 * fresh random inputs, on the device of --param device, and is compared
 * with the oracle (oracle/oracle.h): outputs, input gradients (finite
 * differences of the oracle, or the op's stated gradient for loss ops), aux
 * states after the backward pass, and inputs the op mutates.  One check per
 * comparison, named "<op>/<case>/<dtype>/<what>".  With generated=1 the
 * oracle's generated cases (parameter spaces) run after its table; with
 * grad_reqs=write,add,null the gradients are checked under each grad_req
 * listed: add onto a drawn prior gradient, null on the first checked input
 * (the others write) leaving its prior untouched; forward checks run with
 * write.
 *
 * The parity workload runs the same cases twice through the
 * implementation, on cpu(0) and on gpu(0), with the same inputs, and
 * compares everything the GPU run gives with the CPU run's values, with
 * the case's tolerances (in the style of ggml's test-backend-ops).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle.h"
#include "probe/probe_internal.h"

enum { MAXT = MXCTS_ORACLE_MAX_INPUTS + MXCTS_ORACLE_MAX_AUX };

/* MXNet's grad_req codes. */
enum { REQ_NULL = 0, REQ_WRITE = 1, REQ_ADD = 3 };

struct num_case {
  const struct mxcts_oracle_case *c;
  struct mxcts_oracle_call call;
  int dtype; /* MXCTS_ORACLE_FLOAT32 / _FLOAT64; MXNet's codes are the same numbers */
  double *in[MAXT], *aux[MXCTS_ORACLE_MAX_AUX], *head[MXCTS_ORACLE_MAX_OUTPUTS];
  NDArrayHandle in_nd[MAXT], grad_nd[MXCTS_ORACLE_MAX_INPUTS], head_nd[MXCTS_ORACLE_MAX_OUTPUTS];
  NDArrayHandle *outs;
  int nout;
  int dev_type; /* MXNet's 1 (cpu) or 2 (gpu), device id 0 */
  int req;      /* REQ_WRITE, REQ_ADD (every input) or REQ_NULL (the first checked one) */
  double *prior[MXCTS_ORACLE_MAX_INPUTS]; /* gradient arrays' values before the backward */
};

static int first_grad_input(const struct mxcts_oracle_case *c) {
  for (int i = 0; i < MXCTS_ORACLE_MAX_INPUTS; i++)
    if (c->grad_inputs & (1u << i)) return i;
  return -1;
}

/* The grad_req input i is marked with. */
static uint32_t input_req(const struct num_case *nc, int i) {
  if (nc->req == REQ_NULL) return i == first_grad_input(nc->c) ? REQ_NULL : REQ_WRITE;
  return (uint32_t)nc->req;
}

/* What one run through the implementation gave, as doubles. */
struct captured {
  double *out[MXCTS_ORACLE_MAX_OUTPUTS], *mutated[MXCTS_ORACLE_MAX_INPUTS];
  double *grad[MXCTS_ORACLE_MAX_INPUTS], *aux[MXCTS_ORACLE_MAX_AUX];
};

static int64_t size_of(const struct mxcts_oracle_shape *s) { return mxcts_oracle_shape_size(s); }

static int to_array(struct probe *p, const double *x, const struct mxcts_oracle_shape *s, int dtype,
                    int dev_type, NDArrayHandle *out) {
  uint32_t shape[MXCTS_ORACLE_MAX_NDIM];
  for (int d = 0; d < s->ndim; d++) shape[d] = (uint32_t)s->dim[d];
  PROBE_CALL(p, MXNDArrayCreateEx, shape, (uint32_t)s->ndim, dev_type, 0, 0, dtype, out);
  int64_t n = size_of(s);
  if (n == 0 || !x) return 0;
  void *buf = malloc((size_t)n * (dtype ? sizeof(double) : sizeof(float)));
  for (int64_t i = 0; i < n; i++) {
    if (dtype) ((double *)buf)[i] = x[i];
    else ((float *)buf)[i] = (float)x[i];
  }
  int rc = p->api.MXNDArraySyncCopyFromCPU(*out, buf, (size_t)n) ? mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU") : 0;
  free(buf);
  return rc;
}

/* Read an array of n elements as doubles, whatever its float dtype. */
static int from_array(struct probe *p, NDArrayHandle a, double *x, int64_t n) {
  int nd, dtype = 0;
  const int *dims;
  if (mxcts__capi_get_shape(&p->api, a, &nd, &dims) != 0)
    return mxcts__probe_fail(p, p->api.MXNDArrayGetShapeEx ? "MXNDArrayGetShapeEx" : "MXNDArrayGetShape");
  int64_t m = 1;
  for (int d = 0; d < nd; d++) m *= dims[d];
  if (m != n) {
    mxcts__probe_add_check(p, "numerics/shape", false, "an array has %lld elements where the oracle has %lld",
                    (long long)m, (long long)n);
    return -1;
  }
  if (p->api.MXNDArrayGetDType && p->api.MXNDArrayGetDType(a, &dtype) != 0)
    return mxcts__probe_fail(p, "MXNDArrayGetDType");
  if (dtype != 0 && dtype != 1) {
    mxcts__probe_add_check(p, "numerics/dtype", false, "an output has dtype %d, not float32 or float64", dtype);
    return -1;
  }
  void *buf = malloc((size_t)(n > 0 ? n : 1) * (dtype == 1 ? sizeof(double) : sizeof(float)));
  int rc = n && p->api.MXNDArraySyncCopyToCPU(a, buf, (size_t)n) ? mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU") : 0;
  for (int64_t i = 0; i < n && !rc; i++) x[i] = dtype == 1 ? ((double *)buf)[i] : ((float *)buf)[i];
  free(buf);
  return rc;
}

static void report(struct probe *p, const struct num_case *nc, const char *what, const double *got,
                   const double *want, int64_t n, bool backward) {
  struct mxcts_oracle_tol tol = mxcts_oracle_case_tol(nc->c, nc->dtype, backward);
  struct mxcts_oracle_cmp r;
  bool pass = mxcts_oracle_compare(got, want, n, tol.rtol, tol.atol, &r);
  char name[256];
  snprintf(name, sizeof name, "%s/%s/%s/%s", nc->c->op, nc->c->name, nc->dtype ? "float64" : "float32", what);
  if (pass)
    mxcts__probe_add_check(p, name, true, "%lld elements, max abs error %.3g", (long long)n, r.max_abs);
  else
    mxcts__probe_add_check(p, name, false, "%lld of %lld elements off; worst [%lld]: got %.9g, want %.9g (rtol %g, atol %g)",
                    (long long)r.nbad, (long long)n, (long long)r.worst, r.got, r.want, tol.rtol, tol.atol);
}

static double *alloc_like(const struct mxcts_oracle_shape *s) {
  return calloc((size_t)(size_of(s) > 0 ? size_of(s) : 1), sizeof(double));
}

/* Draw inputs, aux states and head gradients as the case says. */
static void draw(struct num_case *nc, uint64_t seed) {
  struct mxcts_oracle_rng r;
  mxcts_oracle_rng_seed(&r, seed);
  const struct mxcts_oracle_call *k = &nc->call;
  for (int i = 0; i < k->nin; i++) {
    nc->in[i] = alloc_like(&k->in_shape[i]);
    mxcts_oracle_fill_values(&nc->c->in_fill[i], nc->in[i], size_of(&k->in_shape[i]), nc->dtype, &r);
  }
  for (int a = 0; a < k->naux; a++) {
    nc->aux[a] = alloc_like(&k->aux_shape[a]);
    mxcts_oracle_fill_values(&nc->c->aux_fill[a], nc->aux[a], size_of(&k->aux_shape[a]), nc->dtype, &r);
  }
  for (int o = 0; o < k->nout; o++) {
    nc->head[o] = alloc_like(&k->out_shape[o]);
    mxcts_oracle_fill_values(&nc->c->head_fill, nc->head[o], size_of(&k->out_shape[o]), nc->dtype, &r);
  }
  const struct mxcts_oracle_fill prior_fill = {MXCTS_ORACLE_FILL_UNIFORM, 0, 0};
  for (int i = 0; i < k->nin && nc->req != REQ_WRITE; i++) {
    if (!(nc->c->grad_inputs & (1u << i))) continue;
    nc->prior[i] = alloc_like(&k->in_shape[i]);
    mxcts_oracle_fill_values(&prior_fill, nc->prior[i], size_of(&k->in_shape[i]), nc->dtype, &r);
  }
}

static void release(struct probe *p, struct num_case *nc) {
  const struct mxcts_oracle_call *k = &nc->call;
  for (int i = 0; i < k->nin + k->naux; i++)
    if (nc->in_nd[i]) p->api.MXNDArrayFree(nc->in_nd[i]);
  for (int i = 0; i < k->nin; i++) {
    if (nc->grad_nd[i]) p->api.MXNDArrayFree(nc->grad_nd[i]);
    free(nc->in[i]);
    free(nc->prior[i]);
  }
  for (int a = 0; a < k->naux; a++) free(nc->aux[a]);
  for (int o = 0; o < k->nout; o++) {
    if (nc->head_nd[o]) p->api.MXNDArrayFree(nc->head_nd[o]);
    free(nc->head[o]);
  }
  for (int o = 0; o < nc->nout && nc->outs; o++) p->api.MXNDArrayFree(nc->outs[o]);
}

/* The forward through the implementation, recording when gradients are checked. */
static int run_forward(struct probe *p, struct num_case *nc, OpHandle op, bool record) {
  const struct mxcts_oracle_call *k = &nc->call;
  const char *keys[MXCTS_ORACLE_MAX_CASE_PARAMS], *vals[MXCTS_ORACLE_MAX_CASE_PARAMS];
  int nkv = mxcts_oracle_case_params(nc->c, keys, vals), prev;
  for (int i = 0; i < k->nin; i++)
    if (to_array(p, nc->in[i], &k->in_shape[i], nc->dtype, nc->dev_type, &nc->in_nd[i])) return -1;
  for (int a = 0; a < k->naux; a++)
    if (to_array(p, nc->aux[a], &k->aux_shape[a], nc->dtype, nc->dev_type, &nc->in_nd[k->nin + a])) return -1;
  if (record) {
    for (int i = 0; i < k->nin; i++) {
      if (!(nc->c->grad_inputs & (1u << i))) continue;
      if (to_array(p, nc->prior[i], &k->in_shape[i], nc->dtype, nc->dev_type, &nc->grad_nd[i])) return -1;
      uint32_t req = input_req(nc, i);
      PROBE_CALL(p, MXAutogradMarkVariables, 1, &nc->in_nd[i], &req, &nc->grad_nd[i]);
    }
    PROBE_CALL(p, MXAutogradSetIsRecording, 1, &prev);
  }
  PROBE_CALL(p, MXAutogradSetIsTraining, nc->c->is_train ? 1 : 0, &prev);
  const int *stypes;
  nc->outs = NULL;
  int rc = p->api.MXImperativeInvokeEx(op, k->nin + k->naux, nc->in_nd, &nc->nout, &nc->outs, nkv, keys,
                                       vals, &stypes);
  if (record) p->api.MXAutogradSetIsRecording(0, &prev);
  if (rc) return mxcts__probe_fail(p, "MXImperativeInvokeEx");
  if (nc->nout != k->nout) {
    mxcts__probe_add_check(p, "numerics/outputs", false, "%s gives %d outputs, the oracle %d", nc->c->op, nc->nout, k->nout);
    return -1;
  }
  return 0;
}

static int check_forward(struct probe *p, struct num_case *nc) {
  const struct mxcts_oracle_call *k = &nc->call;
  double *want[MXCTS_ORACLE_MAX_OUTPUTS], *mutated[MXCTS_ORACLE_MAX_INPUTS] = {0};
  struct mxcts_oracle_error err;
  for (int o = 0; o < k->nout; o++) want[o] = alloc_like(&k->out_shape[o]);
  for (int m = 0; m < k->nmutated; m++) mutated[m] = alloc_like(&k->in_shape[k->mutated[m]]);
  int rc = mxcts_oracle_forward(k, (const double *const *)nc->in, (const double *const *)nc->aux, want, NULL,
                                mutated, &err);
  if (rc) mxcts__probe_add_check(p, "numerics/oracle", false, "%s/%s: %s", nc->c->op, nc->c->name, err.msg);
  for (int o = 0; o < k->nout && !rc; o++) {
    int64_t n = size_of(&k->out_shape[o]);
    double *got = alloc_like(&k->out_shape[o]);
    rc = from_array(p, nc->outs[o], got, n);
    char what[32];
    snprintf(what, sizeof what, "output%d", o);
    if (!rc) report(p, nc, what, got, want[o], n, false);
    free(got);
  }
  for (int m = 0; m < k->nmutated && !rc; m++) {
    const struct mxcts_oracle_shape *s = &k->in_shape[k->mutated[m]];
    double *got = alloc_like(s);
    rc = from_array(p, nc->in_nd[k->mutated[m]], got, size_of(s));
    char what[32];
    snprintf(what, sizeof what, "mutated%d", k->mutated[m]);
    if (!rc) report(p, nc, what, got, mutated[m], size_of(s), false);
    free(got);
  }
  for (int o = 0; o < k->nout; o++) free(want[o]);
  for (int m = 0; m < k->nmutated; m++) free(mutated[m]);
  return rc;
}

/* The backward pass of a recorded forward, with the drawn head gradients. */
static int run_backward(struct probe *p, struct num_case *nc) {
  const struct mxcts_oracle_call *k = &nc->call;
  for (int o = 0; o < k->nout; o++)
    if (to_array(p, nc->head[o], &k->out_shape[o], nc->dtype, nc->dev_type, &nc->head_nd[o])) return -1;
  PROBE_CALL(p, MXAutogradBackwardEx, (uint32_t)k->nout, nc->outs, nc->head_nd, 0, NULL, 0, 0,
             nc->c->is_train ? 1 : 0, NULL, NULL);
  return 0;
}

static int check_backward(struct probe *p, struct num_case *nc) {
  const struct mxcts_oracle_call *k = &nc->call;
  if (run_backward(p, nc)) return -1;
  double *want[MXCTS_ORACLE_MAX_INPUTS] = {0};
  for (int i = 0; i < k->nin; i++) want[i] = alloc_like(&k->in_shape[i]);
  struct mxcts_oracle_error err;
  int rc = mxcts_oracle_expected_grad(k, (const double *const *)nc->in, (const double *const *)nc->aux,
                                      (const double *const *)nc->head, nc->c->grad_inputs, want, &err);
  if (rc) mxcts__probe_add_check(p, "numerics/oracle", false, "%s/%s: %s", nc->c->op, nc->c->name, err.msg);
  for (int i = 0; i < k->nin && !rc; i++) {
    if (!(nc->c->grad_inputs & (1u << i))) continue;
    int64_t n = size_of(&k->in_shape[i]);
    uint32_t req = input_req(nc, i);
    for (int64_t e = 0; e < n && req == REQ_NULL; e++) want[i][e] = nc->prior[i][e];
    double *got = alloc_like(&k->in_shape[i]);
    rc = from_array(p, nc->grad_nd[i], got, n);
    /* Under add, what was added is compared with the gradient, so the
     * tolerance stays relative to the gradient, not to prior + gradient. */
    for (int64_t e = 0; e < n && !rc && req == REQ_ADD; e++) got[e] -= nc->prior[i][e];
    char what[32];
    snprintf(what, sizeof what, "grad%d%s", i, req == REQ_ADD ? "-add" : req == REQ_NULL ? "-null" : "");
    if (!rc) report(p, nc, what, got, want[i], n, true);
    free(got);
  }
  if (!rc && k->naux) { /* aux states after one training step */
    double *aux_out[MXCTS_ORACLE_MAX_AUX], *outs[MXCTS_ORACLE_MAX_OUTPUTS];
    for (int a = 0; a < k->naux; a++) aux_out[a] = alloc_like(&k->aux_shape[a]);
    for (int o = 0; o < k->nout; o++) outs[o] = alloc_like(&k->out_shape[o]);
    rc = mxcts_oracle_forward(k, (const double *const *)nc->in, (const double *const *)nc->aux, outs, aux_out,
                              NULL, &err);
    for (int a = 0; a < k->naux && !rc; a++) {
      double *got = alloc_like(&k->aux_shape[a]);
      rc = from_array(p, nc->in_nd[k->nin + a], got, size_of(&k->aux_shape[a]));
      char what[32];
      snprintf(what, sizeof what, "aux%d", a);
      if (!rc) report(p, nc, what, got, aux_out[a], size_of(&k->aux_shape[a]), false);
      free(got);
    }
    for (int a = 0; a < k->naux; a++) free(aux_out[a]);
    for (int o = 0; o < k->nout; o++) free(outs[o]);
  }
  for (int i = 0; i < k->nin; i++) free(want[i]);
  return rc;
}

static bool listed(const char *op, uint32_t n, const char **names) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(names[i], op) == 0) return true;
  return false;
}

static bool wanted(const char *ops, const char *op) {
  if (!ops || strcmp(ops, "all") == 0) return true;
  size_t len = strlen(op);
  for (const char *s = ops; *s;) {
    const char *comma = strchr(s, ',');
    size_t n = comma ? (size_t)(comma - s) : strlen(s);
    if (n == len && strncmp(s, op, n) == 0) return true;
    s += n + (comma ? 1 : 0);
  }
  return false;
}

static bool needs_grad(const struct mxcts_oracle_case *c) {
  return c->grad != MXCTS_ORACLE_GRAD_NONE && c->grad_inputs;
}

/* When the implementation refused or failed a case: a failed check named
 * "<op>/<case>/<dtype>/<what>" with its error, and the run goes on with
 * the next case. */
static void absorb_failure(struct probe *p, const struct mxcts_oracle_case *c, int dtype,
                           const char *what) {
  if (!p->failed) return;
  char name[256];
  snprintf(name, sizeof name, "%s/%s/%s/%s", c->op, c->name, dtype ? "float64" : "float32", what);
  mxcts__probe_add_check(p, name, false, "%s", json_string_value(json_object_get(p->result, "error")));
  json_object_set_new(p->result, "status", json_string("ok"));
  json_object_set_new(p->result, "error", json_null());
  p->failed = false;
  int prev;
  p->api.MXAutogradSetIsRecording(0, &prev);
  p->api.MXNDArrayWaitAll(); /* surfaces (and clears) the case's pending errors */
}

/* Whether the case runs under grad_req `req` (grad_reqs names it): write
 * runs every case and its forward checks; add and null need a gradient,
 * null one more checked input that writes (a backward needs something to
 * write). */
static bool runs_under(struct probe *p, const struct mxcts_oracle_case *c, int req) {
  static const char *const names[] = {[REQ_NULL] = "null", [REQ_WRITE] = "write", [REQ_ADD] = "add"};
  if (!wanted(mxcts__probe_param_str(p, "grad_reqs", "write"), names[req])) return false;
  if (req == REQ_WRITE) return true;
  if (!needs_grad(c)) return false;
  return req == REQ_ADD || (c->grad_inputs & (c->grad_inputs - 1u)) != 0;
}

static int run_case(struct probe *p, const struct mxcts_oracle_case *c, int dtype, uint64_t seed) {
  static const int reqs[] = {REQ_WRITE, REQ_ADD, REQ_NULL};
  for (int r = 0; r < 3; r++) {
    if (!runs_under(p, c, reqs[r])) continue;
    struct num_case nc = {.c = c, .dtype = dtype, .dev_type = p->dev_type, .req = reqs[r]};
    struct mxcts_oracle_error err;
    if (mxcts_oracle_prepare_case(&nc.call, c, &err) != 0) {
      mxcts__probe_add_check(p, "numerics/oracle", false, "%s/%s: %s", c->op, c->name, err.msg);
      return 0;
    }
    OpHandle op;
    PROBE_CALL(p, NNGetOpHandle, c->op, &op);
    draw(&nc, seed);
    bool grad = needs_grad(c);
    int rc = run_forward(p, &nc, op, grad);
    if (!rc && reqs[r] == REQ_WRITE) rc = check_forward(p, &nc);
    if (!rc && grad) rc = check_backward(p, &nc);
    absorb_failure(p, c, dtype, "call");
    release(p, &nc);
  }
  return 0; /* a failed comparison is a check, not an error */
}

/* ---------------------------------------------------------- parity */

/* Copy n elements of array `a` into a new double array at *out. */
static int read_new(struct probe *p, NDArrayHandle a, const struct mxcts_oracle_shape *s, double **out) {
  *out = alloc_like(s);
  return from_array(p, a, *out, size_of(s));
}

/* Run the case through the implementation on nc's device and keep what it
 * gives: outputs and mutated inputs after the forward; input gradients and
 * aux states after the backward, when the case has gradients. */
static int capture(struct probe *p, struct num_case *nc, OpHandle op, struct captured *cap) {
  const struct mxcts_oracle_call *k = &nc->call;
  bool grad = needs_grad(nc->c);
  if (run_forward(p, nc, op, grad)) return -1;
  for (int o = 0; o < k->nout; o++)
    if (read_new(p, nc->outs[o], &k->out_shape[o], &cap->out[o])) return -1;
  for (int m = 0; m < k->nmutated; m++)
    if (read_new(p, nc->in_nd[k->mutated[m]], &k->in_shape[k->mutated[m]], &cap->mutated[m])) return -1;
  if (!grad) return 0;
  if (run_backward(p, nc)) return -1;
  for (int i = 0; i < k->nin; i++)
    if ((nc->c->grad_inputs & (1u << i)) && read_new(p, nc->grad_nd[i], &k->in_shape[i], &cap->grad[i]))
      return -1;
  for (int a = 0; a < k->naux; a++)
    if (read_new(p, nc->in_nd[k->nin + a], &k->aux_shape[a], &cap->aux[a])) return -1;
  return 0;
}

static void free_captured(struct captured *cap) {
  for (int i = 0; i < MXCTS_ORACLE_MAX_OUTPUTS; i++) free(cap->out[i]);
  for (int i = 0; i < MXCTS_ORACLE_MAX_INPUTS; i++) free(cap->mutated[i]), free(cap->grad[i]);
  for (int i = 0; i < MXCTS_ORACLE_MAX_AUX; i++) free(cap->aux[i]);
}

/* Compare everything the GPU run gave with the CPU run ("what" names as
 * the numerics workload's; backward tolerances for gradients). */
static void compare_captured(struct probe *p, const struct num_case *gpu, const struct captured *g,
                             const struct captured *c) {
  const struct mxcts_oracle_call *k = &gpu->call;
  char what[32];
  for (int o = 0; o < k->nout; o++) {
    snprintf(what, sizeof what, "output%d", o);
    report(p, gpu, what, g->out[o], c->out[o], size_of(&k->out_shape[o]), false);
  }
  for (int m = 0; m < k->nmutated; m++) {
    snprintf(what, sizeof what, "mutated%d", k->mutated[m]);
    report(p, gpu, what, g->mutated[m], c->mutated[m], size_of(&k->in_shape[k->mutated[m]]), false);
  }
  for (int i = 0; i < k->nin; i++) {
    if (!g->grad[i] || !c->grad[i]) continue;
    snprintf(what, sizeof what, "grad%d", i);
    report(p, gpu, what, g->grad[i], c->grad[i], size_of(&k->in_shape[i]), true);
  }
  for (int a = 0; a < k->naux; a++) {
    if (!g->aux[a] || !c->aux[a]) continue;
    snprintf(what, sizeof what, "aux%d", a);
    report(p, gpu, what, g->aux[a], c->aux[a], size_of(&k->aux_shape[a]), false);
  }
}

/* One case on cpu(0) and on gpu(0), from the same drawn inputs. */
static int run_parity_case(struct probe *p, const struct mxcts_oracle_case *c, int dtype, uint64_t seed) {
  struct num_case on[2] = {{.c = c, .dtype = dtype, .dev_type = 1}, {.c = c, .dtype = dtype, .dev_type = 2}};
  struct captured cap[2];
  memset(cap, 0, sizeof cap);
  struct mxcts_oracle_error err;
  OpHandle op;
  if (mxcts_oracle_prepare_case(&on[0].call, c, &err) != 0) {
    mxcts__probe_add_check(p, "parity/oracle", false, "%s/%s: %s", c->op, c->name, err.msg);
    return 0;
  }
  on[1].call = on[0].call;
  PROBE_CALL(p, NNGetOpHandle, c->op, &op);
  bool ok = true;
  for (int d = 0; d < 2 && ok; d++) {
    draw(&on[d], seed); /* the same seed draws the same values */
    ok = capture(p, &on[d], op, &cap[d]) == 0 && !p->failed;
    absorb_failure(p, c, dtype, d ? "gpu-call" : "cpu-call");
  }
  if (ok) compare_captured(p, &on[1], &cap[1], &cap[0]);
  for (int d = 0; d < 2; d++) {
    release(p, &on[d]);
    free_captured(&cap[d]);
  }
  return 0;
}

typedef int (*case_runner)(struct probe *p, const struct mxcts_oracle_case *c, int dtype, uint64_t seed);

struct case_counts {
  int checked, skipped;
};

/* Run case c (number i of its list) unless unwanted or not listed. */
static int run_one(struct probe *p, const struct mxcts_oracle_case *c, int i, int dt,
                   case_runner run, uint32_t nnames, const char **names, struct case_counts *n) {
  const char *ops = mxcts__probe_param_str(p, "ops", "all");
  const char *exclude = mxcts__probe_param_str(p, "exclude_ops", "");
  if (c->random || !wanted(ops, c->op) || (*exclude && wanted(exclude, c->op))) return 0;
  if (!listed(c->op, nnames, names)) { /* the implementation lacks the op */
    n->skipped++;
    return 0;
  }
  n->checked++;
  return run(p, c, dt, p->seed * 1000003u + (uint64_t)i * 7 + (uint64_t)dt);
}

/* Every wanted case of the oracle's table (and with generated=1 its
 * generated cases) whose op the implementation lists, in each wanted
 * dtype; `what` names the workload in its checks. */
static int run_cases(struct probe *p, const char *what, case_runner run) {
  const char *dtypes = mxcts__probe_param_str(p, "dtypes", "float32");
  bool generated = mxcts__probe_param_long(p, "generated", 0) != 0;
  uint32_t nnames;
  const char **names;
  PROBE_CALL(p, MXListAllOpNames, &nnames, &names);
  struct case_counts n = {0, 0};
  int ntable = mxcts_oracle_num_cases(), npoints = generated ? mxcts_oracle_num_gen_points() : 0;
  struct mxcts_oracle_gen_case g;
  for (int dt = 0; dt < 2; dt++) {
    if (!wanted(dtypes, dt ? "float64" : "float32")) continue;
    for (int i = 0; i < ntable; i++)
      if (run_one(p, mxcts_oracle_case_at(i), i, dt, run, nnames, names, &n)) return -1;
    for (int i = 0; i < npoints; i++)
      if (mxcts_oracle_gen_case_at(i, &g) && run_one(p, &g.c, ntable + i, dt, run, nnames, names, &n))
        return -1;
  }
  int checked_cases = n.checked, skipped = n.skipped;
  mxcts__probe_add_metric(p, "cases_checked", checked_cases);
  mxcts__probe_add_metric(p, "cases_skipped_op_missing", skipped);
  char name[64];
  snprintf(name, sizeof name, "%s/ran", what);
  mxcts__probe_add_check(p, name, checked_cases > 0, "%d cases checked, %d skipped (op not listed)",
                  checked_cases, skipped);
  return 0;
}

int mxcts__probe_numerics(struct probe *p) { return run_cases(p, "numerics", run_case); }

int mxcts__probe_parity(struct probe *p) { return run_cases(p, "parity", run_parity_case); }
