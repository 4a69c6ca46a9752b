/*
 * The numerics workload: every case of the float64 oracle's table whose op
 * the implementation lists runs through the implementation's C API --
 * MXImperativeInvokeEx for the forward, autograd for the gradients -- on
 * fresh random inputs, on the device of --param device, and is compared
 * with the oracle (oracle/oracle.h): outputs, input gradients (finite
 * differences of the oracle, or the op's stated gradient for loss ops), aux
 * states after the backward pass, and inputs the op mutates.  One check per
 * comparison, named "<op>/<case>/<dtype>/<what>".  With generated=1 the
 * oracle's generated cases run after its table, those of the kinds listed
 * in `kinds` (parameter spaces, special values, dtypes, views), at the
 * depth of `depth` (quick: pairwise subsets of the biggest spaces, full:
 * every case); with grad_reqs=write,add,null the gradients are checked
 * under each grad_req listed: add onto a drawn prior gradient, null on the
 * first checked input (the others write) leaving its prior untouched;
 * forward checks run with write.
 *
 * Arrays are created and read in the case's dtype (float32, float64,
 * float16, uint8, int32, int8); an output must have the dtype the op gives
 * (its inputs', or Cast's parameter), and the oracle's values are converted
 * to that dtype before the comparison.  A case in a dtype other than
 * float32 and float64 that the implementation refuses at once (creating
 * its arrays or MXImperativeInvokeEx fails) is counted, not judged, as an
 * op it does not list is: the metric dtype_cases_refused.  A view case passes its
 * input 0 as a view into a larger array (MXNDArraySlice or MXNDArrayAt).
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
  int dtype; /* the inputs' (MXCTS_ORACLE_*: MXNet's codes) */
  double *in[MAXT], *aux[MXCTS_ORACLE_MAX_AUX], *head[MXCTS_ORACLE_MAX_OUTPUTS];
  NDArrayHandle in_nd[MAXT], grad_nd[MXCTS_ORACLE_MAX_INPUTS], head_nd[MXCTS_ORACLE_MAX_OUTPUTS];
  NDArrayHandle parent; /* the larger array input 0 is a view into (view cases) */
  NDArrayHandle *outs;
  int nout;
  NDArrayHandle exe_outs[MXCTS_ORACLE_MAX_OUTPUTS]; /* outs of a symbolic run */
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

/* The dtype of the op's outputs. */
static int out_dtype(const struct num_case *nc) {
  return nc->call.out_dtype == MXCTS_ORACLE_SAME_DTYPE ? nc->dtype : nc->call.out_dtype;
}

/* What one run through the implementation gave, as doubles. */
struct captured {
  double *out[MXCTS_ORACLE_MAX_OUTPUTS], *mutated[MXCTS_ORACLE_MAX_INPUTS];
  double *grad[MXCTS_ORACLE_MAX_INPUTS], *aux[MXCTS_ORACLE_MAX_AUX];
};

static int64_t size_of(const struct mxcts_oracle_shape *s) { return mxcts_oracle_shape_size(s); }

/* ------------------------------------------------------------ elements of any dtype */

static size_t dtype_size(int dtype) {
  switch (dtype) {
    case MXCTS_ORACLE_FLOAT64: return 8;
    case MXCTS_ORACLE_FLOAT16: return 2;
    case MXCTS_ORACLE_UINT8:
    case MXCTS_ORACLE_INT8: return 1;
    default: return 4;
  }
}

static void put(void *buf, int dtype, int64_t i, double v) {
  const double r = mxcts_oracle_round_to(dtype, v);
  switch (dtype) {
    case MXCTS_ORACLE_FLOAT64: ((double *)buf)[i] = v; break;
    case MXCTS_ORACLE_FLOAT16: ((uint16_t *)buf)[i] = mxcts_oracle_f16_bits(v); break;
    case MXCTS_ORACLE_UINT8: ((uint8_t *)buf)[i] = (uint8_t)r; break;
    case MXCTS_ORACLE_INT32: ((int32_t *)buf)[i] = (int32_t)r; break;
    case MXCTS_ORACLE_INT8: ((int8_t *)buf)[i] = (int8_t)r; break;
    default: ((float *)buf)[i] = (float)v; break;
  }
}

static double get(const void *buf, int dtype, int64_t i) {
  switch (dtype) {
    case MXCTS_ORACLE_FLOAT64: return ((const double *)buf)[i];
    case MXCTS_ORACLE_FLOAT16: return mxcts_oracle_f16_value(((const uint16_t *)buf)[i]);
    case MXCTS_ORACLE_UINT8: return ((const uint8_t *)buf)[i];
    case MXCTS_ORACLE_INT32: return ((const int32_t *)buf)[i];
    case MXCTS_ORACLE_INT8: return ((const int8_t *)buf)[i];
    default: return ((const float *)buf)[i];
  }
}

static int to_array(struct probe *p, const double *x, const struct mxcts_oracle_shape *s, int dtype,
                    int dev_type, NDArrayHandle *out) {
  uint32_t shape[MXCTS_ORACLE_MAX_NDIM];
  for (int d = 0; d < s->ndim; d++) shape[d] = (uint32_t)s->dim[d];
  PROBE_CALL(p, MXNDArrayCreateEx, shape, (uint32_t)s->ndim, dev_type, 0, 0, dtype, out);
  int64_t n = size_of(s);
  if (n == 0 || !x) return 0;
  void *buf = malloc((size_t)n * dtype_size(dtype));
  for (int64_t i = 0; i < n; i++) put(buf, dtype, i, x[i]);
  int rc = p->api.MXNDArraySyncCopyFromCPU(*out, buf, (size_t)n) ? mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU") : 0;
  free(buf);
  return rc;
}

/* Input 0 of a view case: a larger array holding x among other values
 * (100, 101, ..., which no case's inputs come near), and *out the view of
 * x into it. */
static int to_view(struct probe *p, struct num_case *nc, const double *x, const struct mxcts_oracle_shape *s,
                   NDArrayHandle *out) {
  struct mxcts_oracle_shape big = *s;
  const bool slice = nc->c->view == MXCTS_ORACLE_VIEW_SLICE;
  const int64_t n = size_of(s), before = slice ? n / s->dim[0] : n; /* one row, or one entry */
  if (slice) {
    big.dim[0] += 2;
  } else {
    memmove(big.dim + 1, s->dim, (size_t)s->ndim * sizeof big.dim[0]);
    big.ndim++, big.dim[0] = 3;
  }
  double *all = malloc((size_t)size_of(&big) * sizeof *all);
  for (int64_t i = 0; i < size_of(&big); i++) all[i] = 100 + (double)i;
  memcpy(all + before, x, (size_t)n * sizeof *x);
  int rc = to_array(p, all, &big, nc->dtype, nc->dev_type, &nc->parent);
  free(all);
  if (rc) return rc;
  if (slice) PROBE_CALL(p, MXNDArraySlice, nc->parent, 1, 1 + (uint32_t)s->dim[0], out);
  else PROBE_CALL(p, MXNDArrayAt, nc->parent, 1, out);
  return 0;
}

/* Read an array of n elements as doubles; it must have dtype `want`. */
static int from_array(struct probe *p, const struct num_case *nc, NDArrayHandle a, double *x, int64_t n,
                      int want) {
  int nd, dtype = want;
  const int *dims;
  if (mxcts__capi_get_shape(&p->api, a, &nd, &dims) != 0)
    return mxcts__probe_fail(p, p->api.MXNDArrayGetShapeEx ? "MXNDArrayGetShapeEx" : "MXNDArrayGetShape");
  int64_t m = 1;
  for (int d = 0; d < nd; d++) m *= dims[d];
  char name[256];
  snprintf(name, sizeof name, "%s/%s/%s/", nc->c->op, nc->c->name, mxcts_oracle_dtype_name(nc->dtype));
  if (m != n) {
    mxcts__probe_add_check(p, strcat(name, "shape"), false, "an array has %lld elements where the oracle has %lld",
                           (long long)m, (long long)n);
    return -1;
  }
  if (p->api.MXNDArrayGetDType && p->api.MXNDArrayGetDType(a, &dtype) != 0)
    return mxcts__probe_fail(p, "MXNDArrayGetDType");
  if (dtype != want) {
    mxcts__probe_add_check(p, strcat(name, "dtype"), false, "an array has dtype %d (%s) where %s is expected",
                           dtype, mxcts_oracle_dtype_name(dtype) ? mxcts_oracle_dtype_name(dtype) : "?",
                           mxcts_oracle_dtype_name(want));
    return -1;
  }
  void *buf = malloc((size_t)(n > 0 ? n : 1) * dtype_size(dtype));
  int rc = n && p->api.MXNDArraySyncCopyToCPU(a, buf, (size_t)n) ? mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU") : 0;
  for (int64_t i = 0; i < n && !rc; i++) x[i] = get(buf, dtype, i);
  free(buf);
  return rc;
}

static void report(struct probe *p, const struct num_case *nc, const char *what, const double *got,
                   const double *want, int64_t n, bool backward) {
  struct mxcts_oracle_tol tol = mxcts_oracle_case_tol(nc->c, nc->dtype, backward);
  struct mxcts_oracle_cmp r;
  bool pass = mxcts_oracle_compare(got, want, n, tol.rtol, tol.atol, &r);
  char name[256];
  snprintf(name, sizeof name, "%s/%s/%s/%s", nc->c->op, nc->c->name, mxcts_oracle_dtype_name(nc->dtype), what);
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
  if (nc->parent) p->api.MXNDArrayFree(nc->parent);
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

/* The case's input and aux arrays, and with `grads` the gradient arrays of
 * its checked inputs, holding their priors. */
static int make_arrays(struct probe *p, struct num_case *nc, bool grads) {
  const struct mxcts_oracle_call *k = &nc->call;
  for (int i = 0; i < k->nin; i++) {
    const bool view = i == 0 && nc->c->view != MXCTS_ORACLE_VIEW_NONE;
    if (view ? to_view(p, nc, nc->in[i], &k->in_shape[i], &nc->in_nd[i])
             : to_array(p, nc->in[i], &k->in_shape[i], nc->dtype, nc->dev_type, &nc->in_nd[i]))
      return -1;
  }
  for (int a = 0; a < k->naux; a++)
    if (to_array(p, nc->aux[a], &k->aux_shape[a], nc->dtype, nc->dev_type, &nc->in_nd[k->nin + a])) return -1;
  for (int i = 0; i < k->nin && grads; i++)
    if ((nc->c->grad_inputs & (1u << i)) &&
        to_array(p, nc->prior[i], &k->in_shape[i], nc->dtype, nc->dev_type, &nc->grad_nd[i]))
      return -1;
  return 0;
}

/* A failed check "<op>/<case>/<dtype>/outputs" unless the call gave the
 * oracle's number of outputs. */
static int check_num_outputs(struct probe *p, const struct num_case *nc, int got) {
  if (got == nc->call.nout) return 0;
  char name[256];
  snprintf(name, sizeof name, "%s/%s/%s/outputs", nc->c->op, nc->c->name, mxcts_oracle_dtype_name(nc->dtype));
  mxcts__probe_add_check(p, name, false, "%d outputs, the oracle %d", got, nc->call.nout);
  return -1;
}

/* The forward through the implementation, recording when gradients are checked. */
static int run_forward(struct probe *p, struct num_case *nc, OpHandle op, bool record) {
  const struct mxcts_oracle_call *k = &nc->call;
  const char *keys[MXCTS_ORACLE_MAX_CASE_PARAMS], *vals[MXCTS_ORACLE_MAX_CASE_PARAMS];
  int nkv = mxcts_oracle_case_params(nc->c, keys, vals), prev;
  if (make_arrays(p, nc, record)) return -1;
  if (record) {
    for (int i = 0; i < k->nin; i++) {
      if (!(nc->c->grad_inputs & (1u << i))) continue;
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
  return check_num_outputs(p, nc, nc->nout);
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
    /* what the op's dtype holds: integers truncated and wrapped, float16 rounded */
    const int odt = out_dtype(nc);
    for (int64_t e = 0; e < n && odt != MXCTS_ORACLE_FLOAT32 && odt != MXCTS_ORACLE_FLOAT64; e++)
      want[o][e] = mxcts_oracle_round_to(odt, want[o][e]);
    rc = from_array(p, nc, nc->outs[o], got, n, odt);
    char what[32];
    snprintf(what, sizeof what, "output%d", o);
    if (!rc) report(p, nc, what, got, want[o], n, false);
    free(got);
  }
  for (int m = 0; m < k->nmutated && !rc; m++) {
    const struct mxcts_oracle_shape *s = &k->in_shape[k->mutated[m]];
    double *got = alloc_like(s);
    rc = from_array(p, nc, nc->in_nd[k->mutated[m]], got, size_of(s), nc->dtype);
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

/* Input gradients and aux states after the backward pass, against the oracle. */
static int judge_backward(struct probe *p, struct num_case *nc) {
  const struct mxcts_oracle_call *k = &nc->call;
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
    rc = from_array(p, nc, nc->grad_nd[i], got, n, nc->dtype);
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
      rc = from_array(p, nc, nc->in_nd[k->nin + a], got, size_of(&k->aux_shape[a]), nc->dtype);
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

static int check_backward(struct probe *p, struct num_case *nc) {
  return run_backward(p, nc) ? -1 : judge_backward(p, nc);
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

/* What a run counts beside its checks. */
struct case_counts {
  int checked, skipped, refused;
  int imperative_only; /* cases a symbolic run leaves out: ops that write their inputs */
  char refused_list[512]; /* "op:dtype" of the refused cases, as many as fit */
};

/* Clear the recorded failure of a case, so that the run goes on. */
static void clear_failure(struct probe *p) {
  json_object_set_new(p->result, "status", json_string("ok"));
  json_object_set_new(p->result, "error", json_null());
  p->failed = false;
  int prev;
  p->api.MXAutogradSetIsRecording(0, &prev);
  p->api.MXNDArrayWaitAll(); /* surfaces (and clears) the case's pending errors */
}

/* When the implementation refused or failed a case: a failed check named
 * "<op>/<case>/<dtype>/<what>" with its error, and the run goes on with
 * the next case. */
static void absorb_failure(struct probe *p, const struct mxcts_oracle_case *c, int dtype,
                           const char *what) {
  if (!p->failed) return;
  char name[256];
  snprintf(name, sizeof name, "%s/%s/%s/%s", c->op, c->name, mxcts_oracle_dtype_name(dtype), what);
  mxcts__probe_add_check(p, name, false, "%s", json_string_value(json_object_get(p->result, "error")));
  clear_failure(p);
}

/* A case in a dtype beyond float32 and float64 that the implementation
 * refused at once: creating its arrays or invoking the op failed.  Such a
 * refusal is counted (the implementation does not claim the dtype for the
 * op), not judged; a failure anywhere later still fails. */
static bool absorb_refusal(struct probe *p, const struct mxcts_oracle_case *c, int dtype,
                           struct case_counts *n) {
  if (!p->failed || dtype == MXCTS_ORACLE_FLOAT32 || dtype == MXCTS_ORACLE_FLOAT64) return false;
  const char *msg = json_string_value(json_object_get(p->result, "error"));
  if (!msg || (strncmp(msg, "MXImperativeInvokeEx failed", 27) && strncmp(msg, "MXNDArrayCreateEx failed", 24)))
    return false;
  n->refused++;
  const size_t at = strlen(n->refused_list);
  snprintf(n->refused_list + at, sizeof n->refused_list - at, "%s%s:%s", at ? " " : "", c->op,
           mxcts_oracle_dtype_name(dtype));
  clear_failure(p);
  return true;
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

static int run_case(struct probe *p, const struct mxcts_oracle_case *c, int dtype, uint64_t seed,
                    struct case_counts *n) {
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
    if (rc && absorb_refusal(p, c, dtype, n)) {
      release(p, &nc);
      return 0;
    }
    if (!rc && reqs[r] == REQ_WRITE) rc = check_forward(p, &nc);
    if (!rc && grad) rc = check_backward(p, &nc);
    absorb_failure(p, c, dtype, "call");
    release(p, &nc);
  }
  return 0; /* a failed comparison is a check, not an error */
}

/* ---------------------------------------------------------- symbolic */

/* The case's op as a one-node symbol composed on variables in0, in1, ...
 * and aux0, aux1, ...: its inputs, then its aux states, in the order
 * MXSymbolCompose takes positional arguments. */
static int case_symbol(struct probe *p, const struct num_case *nc, OpHandle op, SymbolHandle *out) {
  const struct mxcts_oracle_call *k = &nc->call;
  const char *keys[MXCTS_ORACLE_MAX_CASE_PARAMS], *vals[MXCTS_ORACLE_MAX_CASE_PARAMS];
  const int nkv = mxcts_oracle_case_params(nc->c, keys, vals);
  SymbolHandle vars[MAXT];
  int nv = 0, rc = 0;
  PROBE_CALL(p, MXSymbolCreateAtomicSymbol, op, (uint32_t)nkv, keys, vals, out);
  while (nv < k->nin + k->naux && !rc) {
    char name[16];
    snprintf(name, sizeof name, nv < k->nin ? "in%d" : "aux%d", nv < k->nin ? nv : nv - k->nin);
    if (p->api.MXSymbolCreateVariable(name, &vars[nv])) rc = mxcts__probe_fail(p, "MXSymbolCreateVariable");
    else nv++;
  }
  if (!rc && p->api.MXSymbolCompose(*out, nc->c->op, (uint32_t)nv, NULL, vars))
    rc = mxcts__probe_fail(p, "MXSymbolCompose");
  for (int i = 0; i < nv; i++) p->api.MXSymbolFree(vars[i]);
  if (rc) p->api.MXSymbolFree(*out);
  return rc;
}

/* An executor of the case's symbol: its inputs as the arguments (the
 * checked ones, with `grads`, bound to their gradient arrays under their
 * grad_req; the others null), its aux states as the aux states. */
static int bind_case(struct probe *p, struct num_case *nc, SymbolHandle sym, bool grads, ExecutorHandle *exe) {
  const struct mxcts_oracle_call *k = &nc->call;
  NDArrayHandle g[MXCTS_ORACLE_MAX_INPUTS] = {0};
  uint32_t req[MXCTS_ORACLE_MAX_INPUTS];
  for (int i = 0; i < k->nin; i++) {
    const bool checked = grads && (nc->c->grad_inputs & (1u << i));
    g[i] = checked ? nc->grad_nd[i] : NULL;
    req[i] = checked ? input_req(nc, i) : REQ_NULL;
  }
  PROBE_CALL(p, MXExecutorBindEX, sym, nc->dev_type, 0, 0, NULL, NULL, NULL, (uint32_t)k->nin, nc->in_nd, g, req,
             (uint32_t)k->naux, nc->in_nd + k->nin, NULL, exe);
  return 0;
}

/* The forward through an executor of the case's symbol, bound with
 * gradient arrays when gradients are checked; nc->outs are its outputs. */
static int run_symbolic_forward(struct probe *p, struct num_case *nc, OpHandle op, bool grads,
                                ExecutorHandle *exe) {
  SymbolHandle sym;
  if (make_arrays(p, nc, grads) || case_symbol(p, nc, op, &sym)) return -1;
  int rc = bind_case(p, nc, sym, grads, exe);
  p->api.MXSymbolFree(sym);
  if (rc) return rc;
  uint32_t n;
  NDArrayHandle *outs;
  PROBE_CALL(p, MXExecutorForward, *exe, nc->c->is_train ? 1 : 0);
  PROBE_CALL(p, MXExecutorOutputs, *exe, &n, &outs);
  nc->nout = 0;
  for (uint32_t o = 0; o < n; o++) {
    if (o < MXCTS_ORACLE_MAX_OUTPUTS) nc->exe_outs[nc->nout++] = outs[o];
    else p->api.MXNDArrayFree(outs[o]);
  }
  nc->outs = nc->exe_outs;
  return check_num_outputs(p, nc, (int)n);
}

/* The executor's backward pass with the drawn head gradients. */
static int run_symbolic_backward(struct probe *p, struct num_case *nc, ExecutorHandle exe) {
  const struct mxcts_oracle_call *k = &nc->call;
  for (int o = 0; o < k->nout; o++)
    if (to_array(p, nc->head[o], &k->out_shape[o], nc->dtype, nc->dev_type, &nc->head_nd[o])) return -1;
  PROBE_CALL(p, MXExecutorBackwardEx, exe, (uint32_t)k->nout, nc->head_nd, nc->c->is_train ? 1 : 0);
  return 0;
}

/* A case through MXExecutorBindEX instead of MXImperativeInvokeEx and
 * autograd, judged as run_case judges it.  Ops that write their inputs
 * (optimizer updates) are left out: MXNet makes such inputs aux states of
 * a symbol, which the oracle's calls do not describe. */
static int run_symbolic_case(struct probe *p, const struct mxcts_oracle_case *c, int dtype, uint64_t seed,
                             struct case_counts *n) {
  static const int reqs[] = {REQ_WRITE, REQ_ADD, REQ_NULL};
  for (int r = 0; r < 3; r++) {
    if (!runs_under(p, c, reqs[r])) continue;
    struct num_case nc = {.c = c, .dtype = dtype, .dev_type = p->dev_type, .req = reqs[r]};
    struct mxcts_oracle_error err;
    if (mxcts_oracle_prepare_case(&nc.call, c, &err) != 0) {
      mxcts__probe_add_check(p, "numerics/oracle", false, "%s/%s: %s", c->op, c->name, err.msg);
      return 0;
    }
    if (nc.call.nmutated) {
      n->imperative_only++;
      return 0;
    }
    OpHandle op;
    ExecutorHandle exe = NULL;
    PROBE_CALL(p, NNGetOpHandle, c->op, &op);
    draw(&nc, seed);
    const bool grad = needs_grad(c);
    int rc = run_symbolic_forward(p, &nc, op, grad, &exe);
    if (rc && absorb_refusal(p, c, dtype, n)) {
      if (exe) p->api.MXExecutorFree(exe);
      release(p, &nc);
      return 0;
    }
    if (!rc && reqs[r] == REQ_WRITE) rc = check_forward(p, &nc);
    if (!rc && grad) rc = run_symbolic_backward(p, &nc, exe) ? -1 : judge_backward(p, &nc);
    absorb_failure(p, c, dtype, "call");
    if (exe) p->api.MXExecutorFree(exe);
    release(p, &nc);
  }
  return 0; /* a failed comparison is a check, not an error */
}

/* ---------------------------------------------------------- parity */

/* Copy array `a` (of shape s and dtype `dtype`) into a new double array at *out. */
static int read_new(struct probe *p, const struct num_case *nc, NDArrayHandle a, const struct mxcts_oracle_shape *s,
                    int dtype, double **out) {
  *out = alloc_like(s);
  return from_array(p, nc, a, *out, size_of(s), dtype);
}

/* Run the case through the implementation on nc's device and keep what it
 * gives: outputs and mutated inputs after the forward; input gradients and
 * aux states after the backward, when the case has gradients. */
static int capture(struct probe *p, struct num_case *nc, OpHandle op, struct captured *cap) {
  const struct mxcts_oracle_call *k = &nc->call;
  bool grad = needs_grad(nc->c);
  if (run_forward(p, nc, op, grad)) return -1;
  for (int o = 0; o < k->nout; o++)
    if (read_new(p, nc, nc->outs[o], &k->out_shape[o], out_dtype(nc), &cap->out[o])) return -1;
  for (int m = 0; m < k->nmutated; m++)
    if (read_new(p, nc, nc->in_nd[k->mutated[m]], &k->in_shape[k->mutated[m]], nc->dtype, &cap->mutated[m])) return -1;
  if (!grad) return 0;
  if (run_backward(p, nc)) return -1;
  for (int i = 0; i < k->nin; i++)
    if ((nc->c->grad_inputs & (1u << i)) && read_new(p, nc, nc->grad_nd[i], &k->in_shape[i], nc->dtype, &cap->grad[i]))
      return -1;
  for (int a = 0; a < k->naux; a++)
    if (read_new(p, nc, nc->in_nd[k->nin + a], &k->aux_shape[a], nc->dtype, &cap->aux[a])) return -1;
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
static int run_parity_case(struct probe *p, const struct mxcts_oracle_case *c, int dtype, uint64_t seed,
                           struct case_counts *n) {
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
    if (d == 0 && absorb_refusal(p, c, dtype, n)) break; /* no dtype to compare in */
    absorb_failure(p, c, dtype, d ? "gpu-call" : "cpu-call");
  }
  if (ok) compare_captured(p, &on[1], &cap[1], &cap[0]);
  for (int d = 0; d < 2; d++) {
    release(p, &on[d]);
    free_captured(&cap[d]);
  }
  return 0;
}

typedef int (*case_runner)(struct probe *p, const struct mxcts_oracle_case *c, int dtype, uint64_t seed,
                           struct case_counts *n);

/* Whether case c runs in dtype dt: its own dtypes, or float32 and float64;
 * either way only those `dtypes` lists. */
static bool runs_in(struct probe *p, const struct mxcts_oracle_case *c, int dt) {
  const bool mine = c->dtypes ? (c->dtypes >> dt & 1u) != 0 : dt == MXCTS_ORACLE_FLOAT32 || dt == MXCTS_ORACLE_FLOAT64;
  return mine && wanted(mxcts__probe_param_str(p, "dtypes", "float32"), mxcts_oracle_dtype_name(dt));
}

/* Run case c (number i of its list) in dtype dt unless unwanted or not listed. */
static int run_one(struct probe *p, const struct mxcts_oracle_case *c, int i, int dt,
                   case_runner run, uint32_t nnames, const char **names, struct case_counts *n) {
  const char *ops = mxcts__probe_param_str(p, "ops", "all");
  const char *exclude = mxcts__probe_param_str(p, "exclude_ops", "");
  if (c->random || !runs_in(p, c, dt) || !wanted(ops, c->op) || (*exclude && wanted(exclude, c->op))) return 0;
  if (!listed(c->op, nnames, names)) { /* the implementation lacks the op */
    n->skipped++;
    return 0;
  }
  if (c->view != MXCTS_ORACLE_VIEW_NONE && (!p->api.MXNDArraySlice || !p->api.MXNDArrayAt)) {
    n->skipped++; /* a library without the view calls runs no view case */
    return 0;
  }
  n->checked++;
  return run(p, c, dt, p->seed * 1000003u + (uint64_t)i * 7 + (uint64_t)dt, n);
}

/* The generated cases the run takes: the points of the wanted kinds at
 * the run's depth, into *points (the caller frees it); their count, or -1
 * after a failed check. */
static int gen_points(struct probe *p, int **points) {
  const char *depth = mxcts__probe_param_str(p, "depth", "quick"), *kinds = mxcts__probe_param_str(p, "kinds", "all");
  *points = NULL;
  if (!mxcts__probe_param_long(p, "generated", 0)) return 0;
  if (strcmp(depth, "quick") && strcmp(depth, "full")) {
    mxcts__probe_add_check(p, "numerics/depth", false, "depth=%s: expected quick or full", depth);
    return -1;
  }
  int *all = malloc((size_t)mxcts_oracle_num_gen_points() * sizeof *all), n = 0;
  const int total = all ? mxcts_oracle_gen_select(strcmp(depth, "full") == 0, all) : MXCTS_ORACLE_ENOMEM;
  if (total < 0) {
    free(all);
    mxcts__probe_add_check(p, "numerics/oracle", false, "no memory to select the generated cases");
    return -1;
  }
  struct mxcts_oracle_gen_case g;
  for (int k = 0; k < total; k++)
    if (mxcts_oracle_gen_case_at(all[k], &g) && wanted(kinds, mxcts_oracle_gen_kind_name(g.kind))) all[n++] = all[k];
  *points = all;
  return n;
}

/* Every wanted case of the oracle's table (with generated=1 also its
 * generated cases of the wanted kinds) whose op the implementation lists,
 * in each wanted dtype it runs in; `what` names the workload in its
 * checks. */
static int run_cases(struct probe *p, const char *what, case_runner run) {
  uint32_t nnames;
  const char **names;
  PROBE_CALL(p, MXListAllOpNames, &nnames, &names);
  struct case_counts n = {0, 0, 0, 0, ""};
  int *points, npoints = gen_points(p, &points);
  if (npoints < 0) return 0;
  const bool table = wanted(mxcts__probe_param_str(p, "kinds", "all"), "table");
  int ntable = mxcts_oracle_num_cases(), rc = 0;
  struct mxcts_oracle_gen_case g;
  for (int dt = 0; dt < MXCTS_ORACLE_NUM_DTYPES && !rc; dt++) {
    for (int i = 0; i < ntable && table && !rc; i++) rc = run_one(p, mxcts_oracle_case_at(i), i, dt, run, nnames, names, &n);
    for (int k = 0; k < npoints && !rc; k++)
      if (mxcts_oracle_gen_case_at(points[k], &g)) rc = run_one(p, &g.c, ntable + points[k], dt, run, nnames, names, &n);
  }
  free(points);
  if (rc) return -1;
  mxcts__probe_add_metric(p, "cases_checked", n.checked);
  mxcts__probe_add_metric(p, "cases_skipped_op_missing", n.skipped);
  mxcts__probe_add_metric(p, "dtype_cases_refused", n.refused);
  mxcts__probe_add_metric(p, "cases_imperative_only", n.imperative_only);
  const int ran = n.checked - n.refused - n.imperative_only;
  char name[64];
  snprintf(name, sizeof name, "%s/ran", what);
  mxcts__probe_add_check(p, name, ran > 0, "%d cases checked, %d skipped (op not listed), %d imperative only, "
                         "%d refused in their dtype%s%s", ran, n.skipped, n.imperative_only, n.refused,
                         n.refused ? ": " : "", n.refused_list);
  return 0;
}

int mxcts__probe_numerics(struct probe *p) { return run_cases(p, "numerics", run_case); }

int mxcts__probe_parity(struct probe *p) { return run_cases(p, "parity", run_parity_case); }

int mxcts__probe_numerics_symbolic(struct probe *p) {
  return run_cases(p, "numerics-symbolic", run_symbolic_case);
}
