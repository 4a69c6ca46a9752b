/*
 * The operator registry: one sorted table of every name (canonical and
 * alias) built once from the op families' groups and from MXNet's own names
 * (mxnet_op_names.h: those no family implements become not-implemented
 * ops), and the generic parts of an op's behaviour (counts, names, default
 * shape and type inference).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/threads.h"
#include "mxref/device.h"
#include "op/op_internal.h"

static const struct mxr_op *const *const groups[] = {
#define MXR_OP_FAMILY(name) mxr__ops_##name,
#include "op/families.h"
};

struct name_entry {
  const char *name;
  const mxr_op *op;
};

static struct name_entry *names;
static size_t num_names;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const struct name_entry *)a)->name, ((const struct name_entry *)b)->name);
}

/* MXNet 1.9.1's names, sorted, with their frontend signatures. */
static const struct {
  const char *name, *signature;
} mxnet_names[] = {
#define MXR_MXNET_OP(name, signature) {name, signature},
#include "op/mxnet_op_names.h"
};
#define NUM_MXNET_NAMES (sizeof mxnet_names / sizeof mxnet_names[0])

/* One not-implemented op per MXNet name no family registers; never freed
 * (op pointers are valid for the life of the process). */
static struct mxr_op *stubs;

static size_t count_names(void) {
  size_t n = 0;
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
    for (const struct mxr_op *const *op = groups[g]; *op; op++) {
      n++;
      for (int a = 0; (*op)->aliases[a]; a++) n++;
    }
  return n;
}

static const struct name_entry *find_entry(const char *name) {
  struct name_entry key = {name, NULL};
  return num_names ? bsearch(&key, names, num_names, sizeof *names, cmp_entry) : NULL;
}

/* Append a not-implemented op for each MXNet name still missing from the
 * sorted table of `implemented` names, then sort the whole table again. */
static void add_stubs(size_t implemented) {
  size_t k = 0;
  for (size_t i = 0; i < NUM_MXNET_NAMES; i++) {
    if (find_entry(mxnet_names[i].name)) continue;
    stubs[k] = (struct mxr_op){.name = mxnet_names[i].name,
                               .not_implemented = true,
                               .mxnet_signature = mxnet_names[i].signature};
    names[implemented + k] = (struct name_entry){stubs[k].name, &stubs[k]};
    k++;
  }
  num_names = implemented + k;
  qsort(names, num_names, sizeof *names, cmp_entry);
}

static void build_names(void) {
  size_t n = count_names();
  names = malloc((n + NUM_MXNET_NAMES) * sizeof *names);
  stubs = calloc(NUM_MXNET_NAMES, sizeof *stubs);
  if (!names || !stubs) { /* lookups then fail with "unknown operator" */
    free(names);
    free(stubs);
    names = NULL;
    return;
  }
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
    for (const struct mxr_op *const *op = groups[g]; *op; op++) {
      names[num_names++] = (struct name_entry){(*op)->name, *op};
      for (int a = 0; (*op)->aliases[a]; a++)
        names[num_names++] = (struct name_entry){(*op)->aliases[a], *op};
    }
  qsort(names, num_names, sizeof *names, cmp_entry);
  for (size_t i = 1; i < num_names; i++)
    if (strcmp(names[i].name, names[i - 1].name) == 0) {
      /* Two kernel files claim one name: a build mistake, caught by the tests. */
      fprintf(stderr, "libmxref: operator name '%s' is registered twice\n", names[i].name);
      abort();
    }
  add_stubs(num_names);
}

static void ensure_names(void) { MXR_PTHREAD_CHECK(pthread_once(&names_once, build_names)); }

int mxr_op_find(const char *name, const mxr_op **out) {
  if (!name || !out) return mxr_set_error(MXR_EINVAL, "mxr_op_find: NULL argument");
  ensure_names();
  const struct name_entry *e = find_entry(name);
  *out = e ? e->op : NULL;
  if (!e) return mxr_set_error(MXR_ENOTFOUND, "unknown operator '%s'", name);
  return 0;
}

const char *mxr_op_name(const mxr_op *op) { return op ? op->name : NULL; }

int mxr_op_is_implemented(const mxr_op *op) { return op && !op->not_implemented; }

size_t mxr_op_name_count(void) {
  ensure_names();
  return num_names;
}

const char *mxr_op_name_at(size_t i) {
  ensure_names();
  return i < num_names ? names[i].name : NULL;
}

/* ---------------------------------------------------------------- counts */

static const void *params_of(const mxr_op_params *p) { return mxr__op_params_struct(p); }

int mxr_op_num_inputs(const mxr_op *op, const mxr_op_params *p) {
  return op->get_nin ? op->get_nin(params_of(p)) : op->nin;
}

int mxr_op_num_outputs(const mxr_op *op, const mxr_op_params *p) {
  return op->get_nout ? op->get_nout(params_of(p)) : op->nout;
}

int mxr_op_num_visible_outputs(const mxr_op *op, const mxr_op_params *p) {
  return op->get_nvisible ? op->get_nvisible(params_of(p)) : mxr_op_num_outputs(op, p);
}

int mxr_op_num_aux(const mxr_op *op, const mxr_op_params *p) {
  (void)p;
  return op->naux;
}

/* MXNet's names where the op file gives none: "data" for one input,
 * "lhs" and "rhs" for two, else "arg0", "arg1", ... */
const char *mxr__op_input_name_at(const mxr_op *op, int nin, int i) {
  static const char *const generic[] = {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5",
                                        "arg6", "arg7", "arg8", "arg9"};
  static const char *const binary[] = {"lhs", "rhs"};
  if (op->input_names) return op->input_names[i]; /* variadic ops leave it NULL */
  if (nin == 1) return "data";
  if (nin == 2) return binary[i];
  return i < 10 ? generic[i] : "arg";
}

const char *mxr_op_input_name(const mxr_op *op, const mxr_op_params *p, int i) {
  int nin = mxr_op_num_inputs(op, p);
  if (i < 0 || i >= nin) return NULL;
  return mxr__op_input_name_at(op, nin, i);
}

const char *mxr_op_aux_name(const mxr_op *op, const mxr_op_params *p, int i) {
  (void)p;
  return i >= 0 && i < op->naux && op->aux_names ? op->aux_names[i] : NULL;
}

/* ------------------------------------------------------------ inference */

bool mxr__shapes_agree(const struct mxr_shape *a, const struct mxr_shape *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->dim[d] > 0 && b->dim[d] > 0 && a->dim[d] != b->dim[d]) return false;
  return true;
}

bool mxr__shape_fill(struct mxr_shape *slot, const struct mxr_shape *from) {
  if (!mxr__shape_known(from)) return false;
  if (!mxr__shape_known(slot)) {
    *slot = *from;
    return true;
  }
  if (slot->ndim != from->ndim) return false;
  bool changed = false;
  for (int d = 0; d < slot->ndim; d++)
    if (slot->dim[d] <= 0 && from->dim[d] > 0) {
      slot->dim[d] = from->dim[d];
      changed = true;
    }
  return changed;
}

bool mxr__shape_complete(const struct mxr_shape *s) {
  if (s->ndim < 0) return false;
  for (int d = 0; d < s->ndim; d++)
    if (s->dim[d] <= 0) return false;
  return true;
}

int mxr__shape_assign(struct mxr_shape *slot, const struct mxr_shape *want, const char *what) {
  if (!mxr__shape_known(want)) return 0;
  if (mxr__shape_known(slot) && !mxr__shapes_agree(slot, want)) {
    char a[96], b[96];
    return mxr_set_error(MXR_EINVAL, "%s: expected shape %s, got %s", what,
                         mxr_shape_str(want, a, sizeof a), mxr_shape_str(slot, b, sizeof b));
  }
  mxr__shape_fill(slot, want);
  return 0;
}

/* mxr__shape_assign over slots[0..n), naming a failing slot "WHAT i".  The
 * label is formatted only on failure: this runs on every imperative call. */
static int assign_each(struct mxr_shape *slots, int n, const struct mxr_shape *want,
                       const char *what) {
  for (int i = 0; i < n; i++) {
    if (mxr__shape_known(&slots[i]) && mxr_shape_equal(&slots[i], want)) continue;
    char label[32];
    snprintf(label, sizeof label, "%s %d", what, i);
    int st = mxr__shape_assign(&slots[i], want, label);
    if (st) return st;
  }
  return 0;
}

/* Default: every input and output has one shape, gathered dimension by
 * dimension from those known (a conflict is left for assign_each to name). */
static int same_shape(struct mxr_shape *in, int nin, struct mxr_shape *out, int nout) {
  struct mxr_shape s = {.ndim = -1};
  for (int i = 0; i < nin; i++) mxr__shape_fill(&s, &in[i]);
  for (int i = 0; i < nout; i++) mxr__shape_fill(&s, &out[i]);
  if (!mxr__shape_known(&s)) return 0;
  int st = assign_each(in, nin, &s, "input");
  return st ? st : assign_each(out, nout, &s, "output");
}

int mxr__op_infer_shape(const mxr_op *op, const mxr_op_params *p, struct mxr_shape *in, int nin,
                        struct mxr_shape *out, int nout, struct mxr_shape *aux, int naux) {
  int st = op->infer_shape ? op->infer_shape(params_of(p), in, nin, out, nout, aux, naux)
                           : same_shape(in, nin, out, nout);
  if (st) {
    char msg[MXR_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", mxr_last_error());
    if (strncmp(msg, op->name, strlen(op->name)) != 0)
      return mxr_set_error(st, "%s: %s", op->name, msg);
  }
  return st;
}

/* Default: one dtype everywhere, the first known. */
int mxr__op_infer_type(const mxr_op *op, const mxr_op_params *p, int *in, int nin, int *out,
                       int nout, int *aux, int naux) {
  if (op->infer_type) return op->infer_type(params_of(p), in, nin, out, nout, aux, naux);
  int dt = -1;
  for (int i = 0; i < nin && dt < 0; i++) dt = in[i];
  for (int i = 0; i < nout && dt < 0; i++) dt = out[i];
  for (int i = 0; i < naux && dt < 0; i++) dt = aux[i];
  if (dt < 0) return 0;
  int *all[3] = {in, out, aux};
  int counts[3] = {nin, nout, naux};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < counts[k]; i++) {
      if (all[k][i] >= 0 && all[k][i] != dt)
        return mxr_set_error(MXR_EINVAL, "%s: dtypes disagree (%s and %s)", op->name,
                             mxr_dtype_name(dt), mxr_dtype_name(all[k][i]) ? mxr_dtype_name(all[k][i]) : "?");
      all[k][i] = dt;
    }
  return 0;
}

/* ------------------------------------------------------------- compute */

static bool supports(const mxr_op *op, int dtype) {
  unsigned mask = op->dtypes ? op->dtypes : 1u << MXR_FLOAT32;
  return dtype >= 0 && dtype < 32 && (mask & (1u << dtype));
}

int mxr__op_forward_cpu(const mxr_op *op, const mxr_op_params *p, const struct mxr_op_ctx *ctx,
                        const struct mxr_tensor *in, int nin, const int *req,
                        struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux) {
  if (!op->forward_cpu) return mxr_set_error(MXR_ENOTFOUND, "%s has no CPU kernel", op->name);
  for (int i = 0; i < nin; i++)
    if (!supports(op, in[i].dtype))
      return mxr_set_error(MXR_ENOTIMPL, "%s: dtype %s is not implemented by libmxref", op->name,
                           mxr_dtype_name(in[i].dtype) ? mxr_dtype_name(in[i].dtype) : "?");
  return op->forward_cpu(ctx, params_of(p), in, nin, req, out, nout, aux, naux);
}

int mxr__op_check_dtypes(const mxr_op *op, const struct mxr_tensor *t, int n, const char *who) {
  for (int i = 0; i < n; i++)
    if (!supports(op, t[i].dtype))
      return mxr_set_error(MXR_ENOTIMPL, "%s: %s: dtype %s is not implemented by libmxref", who,
                           op->name, mxr_dtype_name(t[i].dtype) ? mxr_dtype_name(t[i].dtype) : "?");
  return 0;
}

mxr_fcompute mxr__op_kernel(const mxr_op *op, struct mxr_context ctx) {
  return mxr_context_is_cpu(ctx) ? op->forward_cpu : op->forward_gpu;
}

int mxr__op_check_kernel(const mxr_op *op, struct mxr_context ctx, const char *who) {
  if (mxr__op_kernel(op, ctx)) return 0;
  bool gpu = !mxr_context_is_cpu(ctx);
  return mxr_set_error(MXR_ENOTFOUND, "%s: operator %s has no %s kernel%s", who, op->name,
                       gpu ? "GPU" : "CPU",
                       gpu && !mxr_built_with_cuda() ? " (built without CUDA)" : "");
}
