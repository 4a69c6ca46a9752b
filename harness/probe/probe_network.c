/*
 * network_inference: a network of MXNet's benchmark_score table
 * (harness/networks/netgen.py writes them) loaded from its symbol JSON and
 * .params file, bound for inference at each batch size, warmed up and timed
 * (docs/networks.md).
 *
 * Params: net (resnet-50), image (32), batches ("1,2"), iterations (3),
 * warmup (1), data_seed (1: the input images, the same in every round so
 * outputs compare with a reference file), dir (the files; default
 * "networks" beside the probe), loader (auto: the implementation's
 * MXNDArrayLoad when it exports one, else the probe's reader; probe;
 * impl: one of the two), reference (a reference result file, in dir unless absolute),
 * save_reference (write this run's outputs as one).
 *
 * Result: timing.iterations are the wall time of one forward pass at every
 * batch size, summed; metrics bN_ms (median forward) and bN_img_s per batch
 * size; values output_bN (digest and sample); with a reference, checks
 * bN_agrees_with_reference and metrics bN_max_rel_diff.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_internal.h"

#define MAX_BATCHES 8

struct net_cfg {
  const char *net, *loader, *reference, *save_reference;
  char *dir;
  long image, iterations, warmup, data_seed;
  int nbatch, batches[MAX_BATCHES];
};

struct weights {
  int n;
  char **names;           /* "arg:NAME" / "aux:NAME" */
  NDArrayHandle *arrays;
  double fan_in_sum;      /* over the *_weight arrays: the accumulation depth */
};

static int net_fail(struct probe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int net_fail(struct probe *p, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!p->failed) {
    mxcts__probe_set_status(p, "error", msg);
    p->failed = true;
  }
  return -1;
}

/* ------------------------------------------------------------ parameters */

static int parse_batches(struct probe *p, const char *s, struct net_cfg *c) {
  c->nbatch = 0;
  for (const char *q = s; *q;) {
    char *end;
    long b = strtol(q, &end, 10);
    if (end == q || b < 1 || b > 1024 || c->nbatch == MAX_BATCHES || (*end && *end != ','))
      return net_fail(p, "network_inference: bad param batches='%s' (want up to %d sizes 1..1024, e.g. 1,2,4)",
                      s, MAX_BATCHES);
    c->batches[c->nbatch++] = (int)b;
    q = *end ? end + 1 : end;
  }
  return c->nbatch ? 0 : net_fail(p, "network_inference: param batches is empty");
}

static int parse_cfg(struct probe *p, struct net_cfg *c) {
  c->net = mxcts__probe_param_str(p, "net", "resnet-50");
  c->loader = mxcts__probe_param_str(p, "loader", "auto");
  c->reference = mxcts__probe_param_str(p, "reference", NULL);
  c->save_reference = mxcts__probe_param_str(p, "save_reference", NULL);
  c->image = mxcts__probe_param_long(p, "image", 32);
  c->iterations = mxcts__probe_param_long(p, "iterations", 3);
  c->warmup = mxcts__probe_param_long(p, "warmup", 1);
  c->data_seed = mxcts__probe_param_long(p, "data_seed", 1);
  const char *dir = mxcts__probe_param_str(p, "dir", NULL);
  char *self = dir ? NULL : mxcts_self_dir();
  c->dir = dir ? mxcts_xstrdup(dir) : mxcts_xasprintf("%s/networks", self ? self : ".");
  free(self);
  if (c->image < 1 || c->image > 4096) return net_fail(p, "network_inference: bad param image=%ld", c->image);
  if (c->iterations < 1 || c->warmup < 0)
    return net_fail(p, "network_inference: bad iterations=%ld / warmup=%ld", c->iterations, c->warmup);
  if (strcmp(c->loader, "auto") && strcmp(c->loader, "probe") && strcmp(c->loader, "impl"))
    return net_fail(p, "network_inference: bad param loader=%s (want auto, probe or impl)", c->loader);
  return parse_batches(p, mxcts__probe_param_str(p, "batches", "1,2"), c);
}

/* DIR/NET-IMAGE<suffix>, or `name` itself in DIR (or absolute). */
static char *net_path(const struct net_cfg *c, const char *suffix) {
  return mxcts_xasprintf("%s/%s-%ld%s", c->dir, c->net, c->image, suffix);
}

static char *dir_path(const struct net_cfg *c, const char *name) {
  return name[0] == '/' ? mxcts_xstrdup(name) : mxcts_xasprintf("%s/%s", c->dir, name);
}

/* ---------------------------------------------------------------- inputs */

static int load_symbol(struct probe *p, const struct net_cfg *c, SymbolHandle *sym) {
  if (!p->api.MXSymbolCreateFromJSON || !p->api.MXSymbolListAuxiliaryStates)
    return net_fail(p, "%s exports no MXSymbolCreateFromJSON / MXSymbolListAuxiliaryStates", p->impl_path);
  char *path = net_path(c, "-symbol.json"), *text = NULL;
  int rc = mxcts_read_file(path, &text, NULL);
  if (rc) rc = net_fail(p, "network_inference: %s (netgen.py writes it)", mxcts_last_error());
  /* MXNet's frontends list the ops before they load anything, and up to
   * 1.4 that listing is what registers the operators still written as
   * OperatorProperty (SoftmaxOutput among them) with the graph loader
   * (c_api_symbolic.cc calls RegisterLegacyOpProp there); without it such
   * a JSON file does not load ("Operator SoftmaxOutput is not registered").
   * So the probe lists them first too, as a frontend would. */
  uint32_t nops;
  const char **ops;
  if (!rc && p->api.MXListAllOpNames) (void)p->api.MXListAllOpNames(&nops, &ops);
  if (!rc && p->api.MXSymbolCreateFromJSON(text, sym) != 0) {
    char call[600];
    snprintf(call, sizeof call, "MXSymbolCreateFromJSON(%s)", path);
    rc = mxcts__probe_fail(p, call);
  }
  free(path), free(text);
  return rc;
}

static double fan_in(const char *name, int ndim, const int64_t *shape) {
  size_t len = strlen(name);
  if (len < 7 || strcmp(name + len - 7, "_weight") != 0) return 0;
  double f = 1;
  for (int i = 1; i < ndim; i++) f *= (double)shape[i];
  return f;
}

static int weights_alloc(struct weights *w, int n) {
  w->n = n;
  w->names = calloc((size_t)n, sizeof *w->names);
  w->arrays = calloc((size_t)n, sizeof *w->arrays);
  return w->names && w->arrays ? 0 : -1;
}

static int load_with_probe(struct probe *p, const char *path, struct weights *w) {
  struct mxcts__param_file f;
  char err[600];
  if (mxcts__param_file_read(path, &f, err, sizeof err) != 0) return net_fail(p, "network_inference: %s", err);
  int rc = weights_alloc(w, f.n) ? net_fail(p, "network_inference: out of memory") : 0;
  for (int i = 0; i < f.n && !rc; i++) {
    const struct mxcts__param_array *a = &f.arrays[i];
    uint32_t shape[8];
    for (int d = 0; d < a->ndim; d++) shape[d] = (uint32_t)a->shape[d];
    w->names[i] = mxcts_xstrdup(a->name);
    w->fan_in_sum += fan_in(a->name, a->ndim, a->shape);
    if (p->api.MXNDArrayCreateEx(shape, (uint32_t)a->ndim, p->dev_type, 0, 0, 0, &w->arrays[i]) ||
        p->api.MXNDArraySyncCopyFromCPU(w->arrays[i], a->data, (size_t)a->size))
      rc = mxcts__probe_fail(p, "MXNDArrayCreateEx/MXNDArraySyncCopyFromCPU (weights)");
  }
  mxcts__param_file_free(&f);
  return rc;
}

static int load_with_impl(struct probe *p, const char *path, struct weights *w) {
  uint32_t n = 0, nnames = 0;
  NDArrayHandle *arrays;
  const char **names;
  if (p->api.MXNDArrayLoad(path, &n, &arrays, &nnames, &names) != 0) return mxcts__probe_fail(p, "MXNDArrayLoad");
  if (nnames != n) return net_fail(p, "MXNDArrayLoad(%s): %u arrays, %u names", path, n, nnames);
  if (weights_alloc(w, (int)n)) return net_fail(p, "network_inference: out of memory");
  for (uint32_t i = 0; i < n; i++) {
    int ndim;
    const int *dims;
    w->names[i] = mxcts_xstrdup(names[i]);
    w->arrays[i] = arrays[i];
    if (mxcts__capi_get_shape(&p->api, arrays[i], &ndim, &dims)) return mxcts__probe_fail(p, "MXNDArrayGetShapeEx");
    int64_t shape[8] = {0};
    for (int d = 0; d < ndim && d < 8; d++) shape[d] = dims[d];
    w->fan_in_sum += fan_in(names[i], ndim, shape);
  }
  return 0;
}

static int load_weights(struct probe *p, const struct net_cfg *c, struct weights *w) {
  bool impl = strcmp(c->loader, "impl") == 0 || (strcmp(c->loader, "auto") == 0 && p->api.MXNDArrayLoad);
  if (impl && !p->api.MXNDArrayLoad) return net_fail(p, "loader=impl: %s exports no MXNDArrayLoad", p->impl_path);
  json_object_set_new(p->result, "loader", json_string(impl ? "MXNDArrayLoad" : "probe"));
  char *path = net_path(c, "-0000.params");
  int rc = impl ? load_with_impl(p, path, w) : load_with_probe(p, path, w);
  free(path);
  return rc;
}

static void weights_free(struct probe *p, struct weights *w) {
  for (int i = 0; i < w->n; i++) {
    if (w->arrays[i]) p->api.MXNDArrayFree(w->arrays[i]);
    free(w->names[i]);
  }
  free(w->names), free(w->arrays);
}

static NDArrayHandle find_weight(const struct weights *w, const char *prefix, const char *name) {
  size_t np = strlen(prefix);
  for (int i = 0; i < w->n; i++)
    if (strncmp(w->names[i], prefix, np) == 0 && strcmp(w->names[i] + np, name) == 0) return w->arrays[i];
  return NULL;
}

/* ------------------------------------------------------------- one batch */

struct bound {
  ExecutorHandle exe;
  NDArrayHandle data, label;
};

static int new_input(struct probe *p, const struct net_cfg *c, int b, struct bound *bd) {
  uint32_t shape[4] = {(uint32_t)b, 3, (uint32_t)c->image, (uint32_t)c->image}, lshape[1] = {(uint32_t)b};
  size_t n = (size_t)b * 3 * (size_t)c->image * (size_t)c->image;
  float *x = malloc(n * sizeof *x), *zeros = calloc((size_t)b, sizeof *zeros);
  uint64_t s = (uint64_t)c->data_seed * 7919 + 17;
  for (size_t i = 0; x && i < n; i++) x[i] = (float)(mxcts_rng_uniform(&s) * 2 - 1);
  int rc = x && zeros ? 0 : net_fail(p, "network_inference: out of memory for %zu input floats", n);
  if (!rc && (p->api.MXNDArrayCreateEx(shape, 4, p->dev_type, 0, 0, 0, &bd->data) ||
              p->api.MXNDArraySyncCopyFromCPU(bd->data, x, n) ||
              p->api.MXNDArrayCreateEx(lshape, 1, p->dev_type, 0, 0, 0, &bd->label) ||
              p->api.MXNDArraySyncCopyFromCPU(bd->label, zeros, (size_t)b)))
    rc = mxcts__probe_fail(p, "MXNDArrayCreateEx/MXNDArraySyncCopyFromCPU (input)");
  free(x), free(zeros);
  return rc;
}

/* The bind arrays in the symbol's order: data, softmax_label, weights. */
static int gather(struct probe *p, SymbolHandle sym, const struct weights *w, const struct bound *bd,
                  bool aux, uint32_t *n, NDArrayHandle **out) {
  const char **names;
  if ((aux ? p->api.MXSymbolListAuxiliaryStates(sym, n, &names) : p->api.MXSymbolListArguments(sym, n, &names)) != 0)
    return mxcts__probe_fail(p, aux ? "MXSymbolListAuxiliaryStates" : "MXSymbolListArguments");
  *out = calloc(*n + 1, sizeof **out);
  if (!*out) return net_fail(p, "network_inference: out of memory");
  for (uint32_t i = 0; i < *n; i++) {
    NDArrayHandle h = !aux && strcmp(names[i], "data") == 0            ? bd->data
                      : !aux && strcmp(names[i], "softmax_label") == 0 ? bd->label
                                                                       : find_weight(w, aux ? "aux:" : "arg:", names[i]);
    if (!h) return net_fail(p, "network_inference: the .params file has no %s:%s", aux ? "aux" : "arg", names[i]);
    (*out)[i] = h;
  }
  return 0;
}

static int bind_batch(struct probe *p, const struct net_cfg *c, SymbolHandle sym, const struct weights *w, int b,
                      struct bound *bd) {
  if (new_input(p, c, b, bd)) return -1;
  uint32_t nargs = 0, naux = 0;
  NDArrayHandle *args = NULL, *aux = NULL, *grads = NULL;
  uint32_t *req = NULL;
  int rc = gather(p, sym, w, bd, false, &nargs, &args) || gather(p, sym, w, bd, true, &naux, &aux) ? -1 : 0;
  if (!rc) {
    grads = calloc(nargs + 1, sizeof *grads), req = calloc(nargs + 1, sizeof *req);
    if (!grads || !req) rc = net_fail(p, "network_inference: out of memory");
  }
  if (!rc && p->api.MXExecutorBindEX(sym, p->dev_type, 0, 0, NULL, NULL, NULL, nargs, args, grads, req, naux, aux,
                                     NULL, &bd->exe) != 0) {
    char call[64];
    snprintf(call, sizeof call, "MXExecutorBindEX (batch %d)", b);
    rc = mxcts__probe_fail(p, call);
  }
  free(args), free(aux), free(grads), free(req);
  return rc;
}

static void unbind(struct probe *p, struct bound *bd) {
  if (bd->exe) p->api.MXExecutorFree(bd->exe);
  if (bd->data) p->api.MXNDArrayFree(bd->data);
  if (bd->label) p->api.MXNDArrayFree(bd->label);
  memset(bd, 0, sizeof *bd);
}

static int forward(struct probe *p, ExecutorHandle exe, double *ms) {
  double t0 = mxcts__probe_now_ms();
  PROBE_CALL(p, MXExecutorForward, exe, 0);
  PROBE_CALL(p, MXNDArrayWaitAll);
  if (ms) *ms = mxcts__probe_now_ms() - t0;
  return 0;
}

/* The first output, copied out; *y is the caller's. */
static int read_output(struct probe *p, ExecutorHandle exe, float **y, size_t *n) {
  uint32_t nout = 0;
  NDArrayHandle *outs = NULL;
  int ndim;
  const int *dims;
  PROBE_CALL(p, MXExecutorOutputs, exe, &nout, &outs);
  if (nout < 1) return net_fail(p, "network_inference: the executor has no output");
  int rc = mxcts__capi_get_shape(&p->api, outs[0], &ndim, &dims) ? mxcts__probe_fail(p, "MXNDArrayGetShapeEx") : 0;
  *n = 1;
  for (int d = 0; !rc && d < ndim; d++) *n *= (size_t)dims[d];
  *y = rc ? NULL : malloc(*n * sizeof **y);
  if (!rc && !*y) rc = net_fail(p, "network_inference: out of memory for the output");
  if (!rc && p->api.MXNDArraySyncCopyToCPU(outs[0], *y, *n)) rc = mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU");
  for (uint32_t k = 0; k < nout; k++) p->api.MXNDArrayFree(outs[k]);
  if (rc) free(*y), *y = NULL;
  return rc;
}

/* ------------------------------------------------------------ reference */

/* Compare y with the reference's outputs for batch b: max |y - r| over
 * max |r| against eps32 x the accumulation depth (the sum of the weight
 * layers' fan-in: a worst-case bound on float32 dot-product rounding,
 * layer after layer). */
static void compare_reference(struct probe *p, json_t *ref, int b, const float *y, size_t n, double depth) {
  char key[16], name[48];
  snprintf(key, sizeof key, "%d", b);
  snprintf(name, sizeof name, "b%d_agrees_with_reference", b);
  json_t *r = json_object_get(json_object_get(ref, "outputs"), key);
  if (!json_is_array(r) || json_array_size(r) != n) {
    mxcts__probe_add_check(p, name, false, "the reference has no %zu outputs for batch %d", n, b);
    return;
  }
  double diff = 0, scale = 0;
  for (size_t i = 0; i < n; i++) {
    double v = json_number_value(json_array_get(r, i)), d = (double)y[i] - v;
    diff = d * d > diff * diff ? (d < 0 ? -d : d) : diff;
    scale = v * v > scale * scale ? (v < 0 ? -v : v) : scale;
  }
  double rel = scale > 0 ? diff / scale : diff, tol = depth * 0x1p-24;
  snprintf(key, sizeof key, "b%d", b);
  char metric[48];
  snprintf(metric, sizeof metric, "%s_max_rel_diff", key);
  mxcts__probe_add_metric(p, metric, rel);
  mxcts__probe_add_check(p, name, rel <= tol, "max |diff| / max |ref| = %.3g, tolerance %.3g (2^-24 x depth %.0f)",
                         rel, tol, depth);
}

static void save_output(json_t *outs, int b, const float *y, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, json_real(y[i]));
  char key[16];
  snprintf(key, sizeof key, "%d", b);
  json_object_set_new(outs, key, a);
}

/* ------------------------------------------------------------ the sweep */

struct sweep {
  const struct net_cfg *c;
  SymbolHandle sym;
  struct weights w;
  json_t *ref, *saved;
  double *total; /* per iteration, summed over batch sizes */
};

static int run_batch(struct probe *p, struct sweep *s, int b) {
  struct bound bd = {0};
  double *ms = calloc((size_t)s->c->iterations, sizeof *ms);
  int rc = ms ? bind_batch(p, s->c, s->sym, &s->w, b, &bd) : net_fail(p, "network_inference: out of memory");
  for (long i = 0; i < s->c->warmup && !rc; i++) rc = forward(p, bd.exe, NULL);
  for (long i = 0; i < s->c->iterations && !rc; i++) rc = forward(p, bd.exe, &ms[i]);
  float *y = NULL;
  size_t n = 0;
  if (!rc) rc = read_output(p, bd.exe, &y, &n);
  if (!rc) {
    char name[48];
    for (long i = 0; i < s->c->iterations; i++) s->total[i] += ms[i];
    double med = mxcts_median(ms, (size_t)s->c->iterations);
    snprintf(name, sizeof name, "b%d_ms", b), mxcts__probe_add_metric(p, name, med);
    snprintf(name, sizeof name, "b%d_img_s", b), mxcts__probe_add_metric(p, name, med > 0 ? b * 1e3 / med : 0);
    snprintf(name, sizeof name, "output_b%d", b), mxcts__probe_add_values(p, name, y, (int64_t)n);
    if (s->ref) compare_reference(p, s->ref, b, y, n, s->w.fan_in_sum);
    if (s->saved) save_output(s->saved, b, y, n);
  }
  free(y), free(ms);
  unbind(p, &bd);
  return rc;
}

static int open_reference(struct probe *p, struct sweep *s) {
  if (s->c->save_reference) s->saved = json_object();
  if (!s->c->reference) return 0;
  char *path = dir_path(s->c, s->c->reference);
  json_error_t e;
  s->ref = json_load_file(path, 0, &e);
  int rc = s->ref ? 0 : net_fail(p, "network_inference: reference %s: %s (line %d)", path, e.text, e.line);
  free(path);
  return rc;
}

static int write_reference(struct probe *p, struct sweep *s) {
  json_t *doc = json_pack("{s:i, s:s, s:i, s:i, s:s, s:O}", "mxcts_network_reference", 1, "net", s->c->net,
                          "image", (int)s->c->image, "data_seed", (int)s->c->data_seed, "impl", p->impl_path,
                          "outputs", s->saved);
  char *path = dir_path(s->c, s->c->save_reference);
  int rc = doc && json_dump_file(doc, path, JSON_COMPACT) == 0
               ? 0
               : net_fail(p, "network_inference: cannot write the reference %s", path);
  json_decref(doc);
  free(path);
  return rc;
}

int mxcts__probe_network_inference(struct probe *p) {
  struct net_cfg c = {0};
  struct sweep s = {.c = &c};
  int rc = parse_cfg(p, &c);
  if (!rc) rc = load_symbol(p, &c, &s.sym);
  if (!rc) rc = load_weights(p, &c, &s.w);
  if (!rc) rc = open_reference(p, &s);
  if (!rc && !(s.total = calloc((size_t)c.iterations, sizeof *s.total)))
    rc = net_fail(p, "network_inference: out of memory");
  for (int i = 0; i < c.nbatch && !rc; i++) rc = run_batch(p, &s, c.batches[i]);
  if (!rc) {
    mxcts__probe_set_timing(p, s.total, (int)c.iterations);
    mxcts__probe_add_metric(p, "accumulation_depth", s.w.fan_in_sum);
  }
  if (!rc && s.saved) rc = write_reference(p, &s);
  if (s.w.names) weights_free(p, &s.w);
  if (s.sym) p->api.MXSymbolFree(s.sym);
  json_decref(s.ref), json_decref(s.saved);
  free(s.total), free(c.dir);
  return rc;
}
