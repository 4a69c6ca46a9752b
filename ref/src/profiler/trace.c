/*
 * The Chrome trace: MXNet 1.9.1's device numbering and the JSON writer.
 *
 * Layout (as MXNet's Profiler::DumpProfile writes it):
 *   {
 *       "traceEvents": [
 *           {"ph":"M","args":{"name":"cpu/0"},"pid":0,"name":"process_name"},
 *           ... one process_name event per device ...
 *           {"name":"FullyConnected","cat":"operator","ph":"B","ts":1764770000000012.5,"pid":0,"tid":1},
 *           {"name":"FullyConnected","cat":"operator","ph":"E","ts":1764770000000040.25,"pid":0,"tid":1},
 *           ...
 *       ],
 *       "displayTimeUnit": "ms"
 *   }
 * Every event object is serialised by jansson (so names are escaped).
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/threads.h"
#include "mxref/error.h"
#include "profiler/profiler_internal.h"

/* ---- devices ------------------------------------------------------------------ */

static pthread_once_t devices_once = PTHREAD_ONCE_INIT;
static int cpu_num, gpu_num;

/* MXNet: omp_get_num_procs() (the processors this process may run on), or
 * 64 when that says 0; 32 GPU slots in a CUDA build, none otherwise. */
static void count_devices(void) {
  cpu_set_t set;
  int n = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) {
    long m = sysconf(_SC_NPROCESSORS_ONLN);
    n = m > 0 && m < 65536 ? (int)m : 0;
  }
  cpu_num = n > 0 ? n : 64;
#ifdef MXR_HAVE_CUDA
  gpu_num = 32;
#else
  gpu_num = 0;
#endif
}

static void ensure_devices(void) { MXR_PTHREAD_CHECK(pthread_once(&devices_once, count_devices)); }

int mxr__prof_pid(struct mxr_context ctx) {
  ensure_devices();
  switch (ctx.dev_type) {
    case MXR_DEV_CPU: return ctx.dev_id >= 0 && ctx.dev_id < cpu_num ? ctx.dev_id : -1;
    case MXR_DEV_GPU: return ctx.dev_id >= 0 && ctx.dev_id < gpu_num ? cpu_num + ctx.dev_id : -1;
    case MXR_DEV_CPU_PINNED: return cpu_num + gpu_num;
    case MXR_DEV_CPU_SHARED: return cpu_num + gpu_num + 1;
    default: return -1;
  }
}

int mxr__prof_device_count(void) {
  ensure_devices();
  return cpu_num + gpu_num + 2;
}

void mxr__prof_device_name(int pid, char *buf, size_t n) {
  ensure_devices();
  if (pid < cpu_num)
    snprintf(buf, n, "cpu/%d", pid);
  else if (pid < cpu_num + gpu_num)
    snprintf(buf, n, "gpu/%d", pid - cpu_num);
  else if (pid == cpu_num + gpu_num)
    snprintf(buf, n, "cpu pinned/");
  else
    snprintf(buf, n, "cpu shared/");
}

/* ---- writing ------------------------------------------------------------------ */

static int write_error(const char *what) {
  int e = errno ? errno : EIO;
  return mxr_set_error(MXR_ESYS, "profiler: error writing '%s': %s", what, strerror(e));
}

static int no_memory(void) {
  return mxr_set_error(MXR_ENOMEM, "profiler: out of memory writing the trace");
}

/* Serialise one event object (reference taken) after `sep`. */
static int put_object(FILE *f, const char *sep, json_t *o, const char *what) {
  if (!o) return no_memory();
  errno = 0;
  int rc = fputs(sep, f) < 0 ? -1 : json_dumpf(o, f, JSON_COMPACT);
  json_decref(o);
  if (rc != 0) return write_error(what);
  return 0;
}

static json_t *process_name_event(int pid) {
  char name[32];
  mxr__prof_device_name(pid, name, sizeof name);
  return json_pack("{s:s, s:{s:s}, s:i, s:s}", "ph", "M", "args", "name", name, "pid", pid,
                   "name", "process_name");
}

int mxr__trace_write_head(FILE *f, const char *what) {
  errno = 0;
  if (fputs("{\n    \"traceEvents\": [\n", f) < 0) return write_error(what);
  int n = mxr__prof_device_count();
  for (int pid = 0; pid < n; pid++) {
    int st = put_object(f, pid ? ",\n        " : "        ", process_name_event(pid), what);
    if (st) return st;
  }
  return 0;
}

int mxr__trace_write_tail(FILE *f, const char *what) {
  errno = 0;
  if (fputs("\n    ],\n    \"displayTimeUnit\": \"ms\"\n}\n", f) < 0) return write_error(what);
  return 0;
}

/* A JSON string of the op name; bytes that are not valid UTF-8 become '?'. */
static json_t *name_string(const struct prof_rec *r) {
  json_t *s = json_stringn(r->name, r->name_len);
  if (s) return s;
  char *copy = malloc((size_t)r->name_len + 1);
  if (!copy) return NULL;
  for (uint32_t i = 0; i < r->name_len; i++)
    copy[i] = (unsigned char)r->name[i] < 0x80 ? r->name[i] : '?';
  copy[r->name_len] = '\0';
  s = json_stringn(copy, r->name_len);
  free(copy);
  return s;
}

/* A record's time as the trace's ts: microseconds since the epoch, as
 * MXNet writes them (its system_clock), with the nanoseconds kept as a
 * fraction. */
static double trace_us(uint64_t rec_ns) {
  uint64_t ns = mxr__prof_epoch_origin_ns() + rec_ns;
  return (double)(ns / 1000u) + (double)(ns % 1000u) / 1000.0;
}

static int put_event(FILE *f, const struct prof_rec *r, const char *ph, uint64_t ts, int64_t tid,
                     const char *what) {
  json_t *o = json_object();
  if (!o) return no_memory();
  json_t *name = name_string(r);
  int bad = !name;
  bad |= json_object_set_new(o, "name", name ? name : json_null());
  bad |= json_object_set_new(o, "cat", json_string(mxr__prof_category(r->name)));
  bad |= json_object_set_new(o, "ph", json_string(ph));
  bad |= json_object_set_new(o, "ts", json_real(trace_us(ts)));
  bad |= json_object_set_new(o, "pid", json_integer(r->pid));
  bad |= json_object_set_new(o, "tid", json_integer((json_int_t)tid));
  if (bad) {
    json_decref(o);
    return no_memory();
  }
  return put_object(f, ",\n        ", o, what);
}

static int put_lane_name(FILE *f, int pid, uint32_t tid, size_t lane, int64_t lane_tid,
                         const char *what) {
  char name[64];
  snprintf(name, sizeof name, "tid %u, lane %zu", (unsigned)tid, lane);
  json_t *o = json_pack("{s:s, s:{s:s}, s:i, s:I, s:s}", "ph", "M", "args", "name", name, "pid",
                        pid, "tid", (json_int_t)lane_tid, "name", "thread_name");
  return put_object(f, ",\n        ", o, what);
}

struct item {
  const struct prof_rec *r;
  size_t seq;
};

static int item_cmp(const void *pa, const void *pb) {
  const struct prof_rec *a = ((const struct item *)pa)->r, *b = ((const struct item *)pb)->r;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  if (a->begin_ns != b->begin_ns) return a->begin_ns < b->begin_ns ? -1 : 1;
  if (a->end_ns != b->end_ns) return a->end_ns > b->end_ns ? -1 : 1; /* outer first */
  size_t sa = ((const struct item *)pa)->seq, sb = ((const struct item *)pb)->seq;
  return sa < sb ? -1 : sa > sb;
}

/* One lane of a thread: the stack of ops open on it. */
struct lane {
  const struct prof_rec **open;
  size_t n, cap;
};

static int64_t lane_tid(uint32_t tid, size_t k) {
  return (int64_t)tid + (int64_t)k * (int64_t)MXR__TRACE_LANE_STRIDE;
}

/* Close every op on lane k that ended by `until`. */
static int close_until(FILE *f, struct lane *l, size_t k, uint64_t until, const char *what) {
  while (l->n && l->open[l->n - 1]->end_ns <= until) {
    const struct prof_rec *r = l->open[--l->n];
    int st = put_event(f, r, "E", r->end_ns, lane_tid(r->tid, k), what);
    if (st) return st;
  }
  return 0;
}

static int lane_push(struct lane *l, const struct prof_rec *r) {
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 8;
    const struct prof_rec **no = realloc(l->open, ncap * sizeof *no);
    if (!no) return no_memory();
    l->open = no;
    l->cap = ncap;
  }
  l->open[l->n++] = r;
  return 0;
}

/* Write one (pid, tid) group, items[0..n). */
static int write_group(FILE *f, const struct item *items, size_t n, struct lane **lanes,
                       size_t *nlanes, size_t *cap_lanes, const char *what) {
  size_t used = 0; /* lanes in use for this group */
  int st = 0;
  for (size_t i = 0; i < n && !st; i++) {
    const struct prof_rec *r = items[i].r;
    size_t k = 0;
    for (; k < used; k++) {
      struct lane *l = &(*lanes)[k];
      st = close_until(f, l, k, r->begin_ns, what);
      if (st) break;
      if (l->n == 0 || r->end_ns <= l->open[l->n - 1]->end_ns) break;
    }
    if (st) break;
    if (k == used) { /* a new lane */
      if (used == *nlanes) {
        if (*nlanes == *cap_lanes) {
          size_t ncap = *cap_lanes ? *cap_lanes * 2 : 4;
          struct lane *nl = realloc(*lanes, ncap * sizeof *nl);
          if (!nl) {
            st = no_memory();
            break;
          }
          *lanes = nl;
          *cap_lanes = ncap;
        }
        (*lanes)[*nlanes] = (struct lane){NULL, 0, 0};
        (*nlanes)++;
      }
      used++;
      if (k > 0) st = put_lane_name(f, r->pid, r->tid, k, lane_tid(r->tid, k), what);
      if (st) break;
    }
    st = lane_push(&(*lanes)[k], r);
    if (!st) st = put_event(f, r, "B", r->begin_ns, lane_tid(r->tid, k), what);
  }
  for (size_t k = 0; k < used && !st; k++) st = close_until(f, &(*lanes)[k], k, UINT64_MAX, what);
  for (size_t k = 0; k < used; k++) (*lanes)[k].n = 0;
  return st;
}

int mxr__trace_write_events(FILE *f, const struct prof_chunk_list *recs, const char *what) {
  if (recs->nrecs == 0) return 0;
  struct item *items = malloc(recs->nrecs * sizeof *items);
  if (!items) return no_memory();
  size_t n = 0;
  for (const struct prof_chunk *c = recs->head; c; c = c->next) {
    for (size_t off = 0; off < c->used;) {
      const struct prof_rec *r = mxr__prof_chunk_rec(c, off);
      items[n].r = r;
      items[n].seq = n;
      n++;
      off += r->size;
    }
  }
  qsort(items, n, sizeof *items, item_cmp);
  struct lane *lanes = NULL;
  size_t nlanes = 0, cap_lanes = 0;
  int st = 0;
  for (size_t i = 0; i < n && !st;) {
    size_t j = i + 1;
    while (j < n && items[j].r->pid == items[i].r->pid && items[j].r->tid == items[i].r->tid) j++;
    st = write_group(f, items + i, j - i, &lanes, &nlanes, &cap_lanes, what);
    i = j;
  }
  for (size_t k = 0; k < nlanes; k++) free(lanes[k].open);
  free(lanes);
  free(items);
  return st;
}
