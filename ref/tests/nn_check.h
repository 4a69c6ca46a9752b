/* Helpers of the nn family tests (test_ops_fully_connected.c,
 * test_ops_output.c, test_ops_dropout.c, test_ops_batchnorm.c): reference
 * signatures, op lookup, parsing and shape inference from "key=value"
 * specs, tensors in float32 or float64, and CPU runs. */
#ifndef MXR_TESTS_NN_CHECK_H
#define MXR_TESTS_NN_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "op_check.h"

#define UNK ((struct mxr_shape){-1, {0}})

/* ------------------------------------------------------------- helpers */

static inline const mxr_op *find(const char *name) {
  const mxr_op *op;
  ck_assert_msg(mxr_op_find(name, &op) == 0, "%s", mxr_last_error());
  return op;
}

/* Parse "k=v;k=v" with the op's parser; expect status `want`. */
static inline mxr_op_params *parse(const char *opname, const char *spec, int want) {
  char buf[512];
  const char *k[16], *v[16];
  int n = 0;
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
    char *eq = strchr(kv, '=');
    ck_assert_ptr_nonnull(eq);
    *eq = '\0';
    k[n] = kv;
    v[n++] = eq + 1;
  }
  mxr_op_params *p = NULL;
  int st = mxr_op_params_parse(find(opname), n, k, v, &p);
  ck_assert_msg(st == want, "%s(%s): status %d, want %d: %s", opname, spec, st, want, mxr_last_error());
  return p;
}

static inline void expect_parse_error(const char *opname, const char *spec, const char *msg) {
  ck_assert_ptr_null(parse(opname, spec, MXR_EINVAL));
  ck_assert_msg(strstr(mxr_last_error(), msg), "%s: got '%s', want '%s'", opname, mxr_last_error(), msg);
}

/* Shape inference; returns the status, leaves the message. */
static inline int infer(const char *opname, const char *spec, struct mxr_shape *in, struct mxr_shape *out,
                 struct mxr_shape *aux) {
  const mxr_op *op = find(opname);
  mxr_op_params *p = parse(opname, spec, 0);
  int nin = mxr_op_num_inputs(op, p), nout = mxr_op_num_outputs(op, p), naux = mxr_op_num_aux(op, p);
  for (int k = 0; k < nout; k++) out[k] = UNK;
  for (int a = 0; a < naux; a++) aux[a] = UNK;
  int st = mxr__op_infer_shape(op, p, in, nin, out, nout, aux, naux);
  mxr_op_params_free(p);
  return st;
}

static inline void expect_shape_error(const char *opname, const char *spec, struct mxr_shape *in, const char *msg) {
  struct mxr_shape out[4], aux[4];
  ck_assert_int_eq(infer(opname, spec, in, out, aux), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), msg), "%s: got '%s', want '%s'", opname, mxr_last_error(), msg);
  ck_assert_msg(strncmp(mxr_last_error(), mxr_op_name(find(opname)), strlen(mxr_op_name(find(opname)))) == 0,
                "message does not name the op: %s", mxr_last_error());
}

static inline void expect_shape(const struct mxr_shape *got, const struct mxr_shape want) {
  char a[64], b[64];
  ck_assert_msg(mxr_shape_equal(got, &want), "shape %s, want %s", mxr_shape_str(got, a, sizeof a),
                mxr_shape_str(&want, b, sizeof b));
}

/* Kernel tensors for hand-driven runs. */
static inline struct mxr_tensor tensor(int dtype, struct mxr_shape s) {
  struct mxr_tensor t = {calloc((size_t)(oc_size(&s) ? oc_size(&s) : 1), mxr_dtype_size(dtype)), s, dtype};
  ck_assert_ptr_nonnull(t.data);
  return t;
}
static inline double tget(const struct mxr_tensor *t, int64_t i) {
  return t->dtype == MXR_FLOAT64 ? ((double *)t->data)[i] : ((float *)t->data)[i];
}
static inline void tset(struct mxr_tensor *t, int64_t i, double v) {
  if (t->dtype == MXR_FLOAT64)
    ((double *)t->data)[i] = v;
  else
    ((float *)t->data)[i] = (float)v;
}
static inline void tfill(struct mxr_tensor *t, uint64_t *rng, double lo, double hi) {
  for (int64_t i = 0; i < oc_size(&t->shape); i++) tset(t, i, lo + (hi - lo) * oc_uniform(rng));
}

static inline void run(const char *opname, const char *spec, bool train, uint64_t seed, struct mxr_tensor *in,
                int nin, const int *req, struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
  const mxr_op *op = find(opname);
  mxr_op_params *p = parse(opname, spec, 0);
  struct mxr_op_ctx ctx = {.is_train = train, .seed = seed};
  int st = mxr__op_forward_cpu(op, p, &ctx, in, nin, req, out, nout, aux, naux);
  ck_assert_msg(st == 0, "%s: %s", opname, mxr_last_error());
  mxr_op_params_free(p);
}

#endif /* MXR_TESTS_NN_CHECK_H */
