/* Reading a profiler trace into the structure of one pass (probe/probe.h). */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"

/* MXNet writes at most this many bytes of a name. */
#define MXNET_NAME_LIMIT 127

static bool is_helper(const char *name) {
  /* The copies are CopyFromTo's (a head gradient copied into the
   * executor, say), in any direction: not graph nodes. */
  static const char *const helpers[] = {"WaitForVar",  "WaitForAll",  "DeleteVariable", "CopyCPU2CPU",
                                        "CopyCPU2GPU", "CopyGPU2CPU", "CopyGPU2GPU",    "DeleteOperator",
                                        "SetupExec",   NULL};
  for (int i = 0; helpers[i]; i++)
    if (strcmp(name, helpers[i]) == 0) return true;
  return false;
}

static int segment_size(const char *name) {
  size_t len = strlen(name);
  bool bracketed = name[0] == '[';
  if (!bracketed && !strchr(name, ',')) return 1;
  /* ']' only ends a whole executor segment name, so a bracketed name is
   * complete exactly when it ends with one; a cached-op name of exactly
   * MXNet's limit may have been cut. */
  if (bracketed ? name[len - 1] != ']' : len == MXNET_NAME_LIMIT) return -1;
  int n = 1;
  for (const char *p = name; *p; p++) n += *p == ',';
  return n;
}

static int grow(struct mxcts_pass_structure *s, int *cap) {
  if (s->num_names < *cap) return 0;
  int ncap = *cap ? 2 * *cap : 64;
  int *sizes = realloc(s->segment_sizes, (size_t)ncap * sizeof *sizes);
  if (!sizes) return -1;
  s->segment_sizes = sizes;
  char **names = realloc(s->names, (size_t)ncap * sizeof *names);
  if (!names) return -1;
  s->names = names;
  *cap = ncap;
  return 0;
}

/* Events in time order (MXNet may write them grouped by thread); equal
 * times keep their order in the file. */
struct timed_event {
  json_t *ev;
  double ts;
  size_t pos;
};

static int cmp_ts(const void *a, const void *b) {
  const struct timed_event *x = a, *y = b;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static bool is_graph_span(json_t *ev) {
  const char *cat = json_string_value(json_object_get(ev, "cat"));
  return cat && strcmp(cat, "cuda_graph") == 0;
}

static int add_event(struct mxcts_pass_structure *s, int *cap, json_t *ev) {
  const char *name = json_string_value(json_object_get(ev, "name"));
  if (is_graph_span(ev)) {
    s->graph_launches++;
    if (strcmp(name, "CudaGraphCapture") == 0) s->graph_captures++;
    return 0;
  }
  if (is_helper(name)) {
    s->helper_ops++;
    return 0;
  }
  if (grow(s, cap)) return -1;
  int size = strcmp(name, "ImperativeBulk") == 0 ? -1 : segment_size(name);
  s->names[s->num_names] = strdup(name);
  if (!s->names[s->num_names]) return -1;
  s->segment_sizes[s->num_names++] = size;
  s->engine_ops++;
  if (strcmp(name, "ImperativeBulk") == 0) s->bulks++;
  else if (size != 1) s->segments++;
  return 0;
}

/* Load the op events of a trace in time order; *events[] borrow from *root. */
static int load_events(const char *path, json_t **root, struct timed_event **events, size_t *count,
                       char *err, size_t errlen) {
  json_error_t jerr;
  /* MXNet writes thread ids as 64-bit unsigned hashes: read numbers as reals */
  *root = json_load_file(path, JSON_DECODE_INT_AS_REAL, &jerr);
  if (!*root) {
    snprintf(err, errlen, "%s: not valid JSON: %s (line %d, column %d)", path, jerr.text, jerr.line,
             jerr.column);
    return -1;
  }
  json_t *evs = json_object_get(*root, "traceEvents");
  if (!json_is_array(evs)) {
    snprintf(err, errlen, "%s: no \"traceEvents\" array", path);
    json_decref(*root);
    return -1;
  }
  size_t n = json_array_size(evs), m = 0;
  *events = malloc((n + 1) * sizeof **events);
  if (!*events) {
    json_decref(*root);
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    json_t *ev = json_array_get(evs, i);
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    const char *name = json_string_value(json_object_get(ev, "name"));
    /* B: one op begins; X: a complete event.  b/e are MXNet's duplicate
     * async records and M metadata: not ops. */
    if (!ph || !name || (strcmp(ph, "B") != 0 && strcmp(ph, "X") != 0)) continue;
    (*events)[m] = (struct timed_event){ev, json_number_value(json_object_get(ev, "ts")), m};
    m++;
  }
  qsort(*events, m, sizeof **events, cmp_ts);
  *count = m;
  return 0;
}

int mxcts_trace_read_passes(const char *path, struct mxcts_pass_structure *out, int n, char *err,
                            size_t errlen) {
  for (int i = 0; i < n; i++) memset(&out[i], 0, sizeof out[i]);
  json_t *root;
  struct timed_event *events;
  size_t m;
  if (load_events(path, &root, &events, &m, err, errlen)) return -1;
  int pass = 0, cap = 0, rc = 0;
  size_t plen = strlen(MXCTS_PASS_MARKER);
  for (size_t i = 0; i < m && !rc && pass < n; i++) {
    const char *name = json_string_value(json_object_get(events[i].ev, "name"));
    if (strncmp(name, MXCTS_PASS_MARKER, plen) == 0) {
      pass++;
      cap = 0;
      continue;
    }
    rc = add_event(&out[pass], &cap, events[i].ev);
  }
  free(events);
  json_decref(root);
  if (rc) snprintf(err, errlen, "%s: out of memory", path);
  else if (pass < n) {
    snprintf(err, errlen, "%s: %d of %d pass markers found (were the probe's marker ops profiled?)", path, pass, n);
    rc = -1;
  }
  if (rc)
    for (int i = 0; i < n; i++) mxcts_trace_free(&out[i]);
  return rc;
}

int mxcts_trace_read(const char *path, struct mxcts_pass_structure *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  json_t *root;
  struct timed_event *events;
  size_t m;
  if (load_events(path, &root, &events, &m, err, errlen)) return -1;
  int cap = 0, rc = 0;
  for (size_t i = 0; i < m && !rc; i++)
    rc = add_event(out, &cap, events[i].ev);
  free(events);
  json_decref(root);
  if (rc) {
    mxcts_trace_free(out);
    snprintf(err, errlen, "%s: out of memory", path);
  }
  return rc;
}

void mxcts_trace_free(struct mxcts_pass_structure *s) {
  for (int i = 0; i < s->num_names; i++) free(s->names[i]);
  free(s->names);
  free(s->segment_sizes);
  memset(s, 0, sizeof *s);
}

/* ---- the format and the clock ------------------------------------------------ */

static bool is_number_field(json_t *ev, const char *key) { return json_is_number(json_object_get(ev, key)); }

/* NULL when `ev` keeps the format's rules, else what it breaks. */
static const char *format_problem(json_t *ev) {
  if (!json_is_object(ev)) return "not an object";
  const char *ph = json_string_value(json_object_get(ev, "ph"));
  if (!ph || strlen(ph) != 1) return "no one-letter string \"ph\"";
  if (!json_is_string(json_object_get(ev, "name"))) return "no string \"name\"";
  if (!is_number_field(ev, "pid")) return "no number \"pid\"";
  if (ph[0] == 'M') return NULL;
  if (!is_number_field(ev, "ts")) return "no number \"ts\"";
  if (!is_number_field(ev, "tid")) return "no number \"tid\"";
  if (ph[0] == 'X' && !(is_number_field(ev, "dur") && json_number_value(json_object_get(ev, "dur")) >= 0))
    return "a complete event (X) without a number \"dur\" >= 0";
  return NULL;
}

static bool named(json_t *ev, const char *name) {
  const char *n = json_string_value(json_object_get(ev, "name"));
  return n && name && strcmp(n, name) == 0;
}

static bool named_any(json_t *ev, const char *const *names) {
  for (int i = 0; names && names[i]; i++)
    if (named(ev, names[i])) return true;
  return false;
}

static bool same_thread(json_t *a, json_t *b) {
  return json_number_value(json_object_get(a, "pid")) == json_number_value(json_object_get(b, "pid")) &&
         json_number_value(json_object_get(a, "tid")) == json_number_value(json_object_get(b, "tid"));
}

/* The op's complete events: each X, and each B with the next E of its
 * name on its thread.  out->op_dur is the first one's duration. */
static void find_op(json_t *evs, const char *op, struct mxcts_trace_format *out) {
  size_t n = json_array_size(evs);
  for (size_t i = 0; i < n; i++) {
    json_t *ev = json_array_get(evs, i);
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    if (!ph || !named(ev, op) || format_problem(ev)) continue;
    double dur = -1;
    if (ph[0] == 'X') dur = json_number_value(json_object_get(ev, "dur"));
    for (size_t j = i + 1; ph[0] == 'B' && j < n && dur < 0; j++) {
      json_t *e = json_array_get(evs, j);
      const char *eph = json_string_value(json_object_get(e, "ph"));
      if (eph && eph[0] == 'E' && named(e, op) && !format_problem(e) && same_thread(ev, e))
        dur = json_number_value(json_object_get(e, "ts")) - json_number_value(json_object_get(ev, "ts"));
    }
    if (dur < 0) continue;
    if (out->op_pairs++ == 0) out->op_dur = dur;
  }
}

/* Distinct (pid, tid) of the B and X events named in `names` (up to 64). */
static int count_threads(json_t *evs, const char *const *names) {
  json_t *seen[64];
  int k = 0;
  size_t i;
  json_t *ev;
  json_array_foreach(evs, i, ev) {
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    if (!ph || (ph[0] != 'B' && ph[0] != 'X') || !named_any(ev, names) || format_problem(ev)) continue;
    bool known = false;
    for (int j = 0; j < k && !known; j++) known = same_thread(seen[j], ev);
    if (!known && k < 64) seen[k++] = ev;
  }
  return k;
}

int mxcts_trace_read_format(const char *path, const char *op, const char *const *thread_ops,
                            struct mxcts_trace_format *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->op_dur = -1;
  json_error_t jerr;
  /* MXNet writes thread ids as 64-bit unsigned hashes: read numbers as reals */
  json_t *root = json_load_file(path, JSON_DECODE_INT_AS_REAL, &jerr);
  json_t *evs = root ? json_object_get(root, "traceEvents") : NULL;
  if (!json_is_array(evs)) {
    if (root) snprintf(err, errlen, "%s: no \"traceEvents\" array", path);
    else snprintf(err, errlen, "%s: not valid JSON: %s (line %d, column %d)", path, jerr.text, jerr.line, jerr.column);
    json_decref(root);
    return -1;
  }
  size_t i;
  json_t *ev;
  json_array_foreach(evs, i, ev) {
    out->events++;
    const char *why = format_problem(ev);
    if (why) {
      if (out->malformed++ == 0) snprintf(out->first_malformed, sizeof out->first_malformed, "event %zu: %s", i, why);
      continue;
    }
    if (!is_number_field(ev, "ts")) continue;
    double ts = json_number_value(json_object_get(ev, "ts"));
    if (out->timed++ == 0 || ts < out->min_ts) out->min_ts = ts;
    if (out->timed == 1 || ts > out->max_ts) out->max_ts = ts;
  }
  if (op) find_op(evs, op, out);
  if (thread_ops) out->op_threads = count_threads(evs, thread_ops);
  json_decref(root);
  return 0;
}
