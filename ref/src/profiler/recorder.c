/*
 * The profiler's recorder: the engine hooks and the per-thread buffers.
 *
 * Hot path.  op_begin reads one atomic (the recording mode bits) and, when
 * the op is to be recorded, returns a cookie packing the begin time and the
 * beginning thread's trace number; it touches no lock (a thread's first
 * record registers its buffer once, under the registry mutex).  op_end
 * unpacks the cookie and appends one complete record to the *ending*
 * thread's buffer under that buffer's own mutex, so B and E of an async op
 * completed elsewhere still carry the beginning thread's tid.  No global lock
 * per event.
 *
 * Cookie layout (uint64): bit 63 set = recorded; bits 60..62 the recorder
 * generation (stale after a reset); bits 40..59 the tid (20 bits); bits
 * 0..39 the low 40 bits of the begin time in nanoseconds since the origin.
 * The full begin time is rebuilt from the end time (an op shorter than 2^40
 * ns, about 18 minutes, rebuilds exactly).
 *
 * Time.  Records hold monotonic nanoseconds since the origin (the first
 * start); the wall clock read at that origin turns them into the trace's
 * microseconds since the epoch, MXNet's timestamps (system_clock).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/threads.h"
#include "common/timer.h"
#include "mxref/error.h"
#include "profiler/profiler_internal.h"

#define COOKIE_FLAG (UINT64_C(1) << 63)
#define COOKIE_GEN_SHIFT 60
#define COOKIE_GEN_MASK UINT64_C(7)
#define COOKIE_TID_SHIFT 40
#define COOKIE_TID_MASK UINT64_C(0xfffff)
/* The begin time travels in the cookie as nanoseconds modulo 2^40 (about
 * 18 minutes): an op running longer than that is recorded as shorter. */
#define COOKIE_TS_MASK ((UINT64_C(1) << 40) - 1)

#define CHUNK_MIN_BYTES (16 * 1024)

/* A recording thread. */
struct prof_thread {
  pthread_mutex_t mu; /* guards recs and agg */
  struct prof_chunk_list recs;
  struct agg_table agg;
  uint32_t tid;
  struct prof_thread *next, *prev; /* the registry, under reg_mu */
};

static _Atomic unsigned g_active;  /* mode bits that record; 0: stopped or paused */
static atomic_bool g_aggregate;    /* keep aggregate statistics */
static atomic_uint g_gen;          /* recorder generation */
static _Atomic uint64_t g_origin_ns; /* monotonic time origin; 0: none yet */
static _Atomic uint64_t g_origin_epoch_ns; /* CLOCK_REALTIME at the origin */

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct prof_thread *g_threads;      /* live recording threads */
static struct prof_chunk_list g_orphans;   /* records of threads that exited */
static struct agg_table g_retired;         /* aggregates of threads that exited */
static uint32_t g_next_tid;

static _Thread_local struct prof_thread *tls_thread;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_status; /* pthread_key_create's result */

/* ---- chunk lists ------------------------------------------------------------ */

void mxr__prof_chunks_free(struct prof_chunk_list *l) {
  struct prof_chunk *c = l->head;
  while (c) {
    struct prof_chunk *n = c->next;
    free(c);
    c = n;
  }
  l->head = l->tail = NULL;
  l->nrecs = 0;
}

static void chunks_splice(struct prof_chunk_list *dst, struct prof_chunk_list *src) {
  if (!src->head) return;
  if (dst->tail)
    dst->tail->next = src->head;
  else
    dst->head = src->head;
  dst->tail = src->tail;
  dst->nrecs += src->nrecs;
  src->head = src->tail = NULL;
  src->nrecs = 0;
}

/* Append a record; false when out of memory (the record is dropped). */
static bool chunks_append(struct prof_chunk_list *l, const char *name, uint64_t begin,
                          uint64_t end, uint32_t tid, int32_t pid) {
  size_t len = strlen(name);
  if (len > UINT32_MAX - 64) return false;
  size_t need = (sizeof(struct prof_rec) + len + 1 + 7) & ~(size_t)7;
  struct prof_chunk *c = l->tail;
  if (!c || c->cap - c->used < need) {
    size_t cap = need > CHUNK_MIN_BYTES ? need : CHUNK_MIN_BYTES;
    c = malloc(sizeof *c + cap);
    if (!c) return false;
    c->next = NULL;
    c->used = 0;
    c->cap = cap;
    if (l->tail)
      l->tail->next = c;
    else
      l->head = c;
    l->tail = c;
  }
  struct prof_rec *r = (struct prof_rec *)((unsigned char *)c->data + c->used);
  r->begin_ns = begin;
  r->end_ns = end;
  r->tid = tid;
  r->pid = pid;
  r->name_len = (uint32_t)len;
  r->size = (uint32_t)need;
  memcpy(r->name, name, len);
  r->name[len] = '\0';
  c->used += need;
  l->nrecs++;
  return true;
}

/* ---- thread registration ------------------------------------------------------ */

static void thread_exit(void *p) {
  struct prof_thread *t = p;
  if (tls_thread == t) tls_thread = NULL;
  mxr_mutex_lock(&reg_mu);
  if (t->prev)
    t->prev->next = t->next;
  else
    g_threads = t->next;
  if (t->next) t->next->prev = t->prev;
  mxr_mutex_lock(&t->mu);
  chunks_splice(&g_orphans, &t->recs);
  (void)mxr__agg_merge(&g_retired, &t->agg); /* out of memory: those stats are lost */
  mxr__agg_clear(&t->agg);
  mxr_mutex_unlock(&t->mu);
  mxr_mutex_unlock(&reg_mu);
  mxr_mutex_destroy(&t->mu);
  free(t);
}

static void make_exit_key(void) { exit_key_status = pthread_key_create(&exit_key, thread_exit); }

/* The calling thread's buffer, registered on first use; NULL if it cannot
 * be had (out of memory, tid space exhausted): the op is then not recorded. */
static struct prof_thread *this_thread(void) {
  struct prof_thread *t = tls_thread;
  if (t) return t;
  MXR_PTHREAD_CHECK(pthread_once(&exit_key_once, make_exit_key));
  if (exit_key_status != 0) return NULL;
  t = calloc(1, sizeof *t);
  if (!t) return NULL;
  if (pthread_mutex_init(&t->mu, NULL) != 0) {
    free(t);
    return NULL;
  }
  if (pthread_setspecific(exit_key, t) != 0) {
    mxr_mutex_destroy(&t->mu);
    free(t);
    return NULL;
  }
  mxr_mutex_lock(&reg_mu);
  bool ok = g_next_tid < MXR__PROF_MAX_TID;
  if (ok) {
    t->tid = ++g_next_tid;
    t->next = g_threads;
    if (g_threads) g_threads->prev = t;
    g_threads = t;
  }
  mxr_mutex_unlock(&reg_mu);
  if (!ok) {
    MXR_PTHREAD_CHECK(pthread_setspecific(exit_key, NULL));
    mxr_mutex_destroy(&t->mu);
    free(t);
    return NULL;
  }
  tls_thread = t;
  return t;
}

/* ---- time ------------------------------------------------------------------ */

static uint64_t wall_clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void mxr__prof_start_clock(void) {
  uint64_t expected = 0;
  uint64_t now = mxr__now_ns();
  if (now == 0) now = 1;
  uint64_t epoch = wall_clock_ns();
  if (atomic_compare_exchange_strong(&g_origin_ns, &expected, now)) atomic_store(&g_origin_epoch_ns, epoch);
}

uint64_t mxr__prof_epoch_origin_ns(void) { return atomic_load(&g_origin_epoch_ns); }

/* Nanoseconds since the profiler's origin: microseconds would make
 * consecutive short ops share a timestamp and lose their order. */
static uint64_t now_ns(void) {
  uint64_t origin = atomic_load_explicit(&g_origin_ns, memory_order_relaxed);
  uint64_t now = mxr__now_ns();
  return now > origin ? now - origin : 0;
}

/* ---- the hooks ----------------------------------------------------------------- */

/* MXNet does not profile these (ProfileOperator::IsDeprecatedOperator). */
static bool unprofiled_name(const char *name) {
  if (name[0] == 'C') return strcmp(name, "Custom") == 0 || strcmp(name, "CustomOperatorWait") == 0;
  if (name[0] == '_') return strcmp(name, "_backward_Custom") == 0;
  return false;
}

uint64_t mxr__prof_op_begin(void *user, const struct mxr_op_event *ev) {
  (void)user;
  unsigned active = atomic_load_explicit(&g_active, memory_order_acquire);
  if ((active & ev->profile) == 0) return 0;
  if (!ev->name || unprofiled_name(ev->name) || mxr__prof_pid(ev->ctx) < 0) return 0;
  struct prof_thread *t = this_thread();
  if (!t) return 0;
  uint64_t gen = atomic_load_explicit(&g_gen, memory_order_relaxed) & COOKIE_GEN_MASK;
  return COOKIE_FLAG | (gen << COOKIE_GEN_SHIFT) | ((uint64_t)t->tid << COOKIE_TID_SHIFT) |
         (now_ns() & COOKIE_TS_MASK);
}

void mxr__prof_op_end(void *user, const struct mxr_op_event *ev, uint64_t cookie) {
  (void)user;
  if (!(cookie & COOKIE_FLAG)) return;
  /* Stopped or paused meanwhile: MXNet drops what ends then, too. */
  if (atomic_load_explicit(&g_active, memory_order_acquire) == 0) return;
  uint64_t gen = atomic_load_explicit(&g_gen, memory_order_relaxed) & COOKIE_GEN_MASK;
  if (((cookie >> COOKIE_GEN_SHIFT) & COOKIE_GEN_MASK) != gen) return;
  int pid = mxr__prof_pid(ev->ctx);
  if (pid < 0) return;
  uint64_t end = now_ns();
  uint64_t begin = end - ((end - (cookie & COOKIE_TS_MASK)) & COOKIE_TS_MASK);
  uint32_t tid = (uint32_t)((cookie >> COOKIE_TID_SHIFT) & COOKIE_TID_MASK);
  struct prof_thread *t = this_thread();
  if (!t) return;
  bool agg = atomic_load_explicit(&g_aggregate, memory_order_relaxed);
  mxr_mutex_lock(&t->mu);
  (void)chunks_append(&t->recs, ev->name, begin, end, tid, pid); /* ENOMEM: dropped */
  if (agg) (void)mxr__agg_add(&t->agg, ev->name, strlen(ev->name), (end - begin) / 1000u);
  mxr_mutex_unlock(&t->mu);
}

/* ---- control ------------------------------------------------------------------- */

void mxr__prof_set_active(unsigned mode_bits) {
  atomic_store_explicit(&g_active, mode_bits, memory_order_release);
}

void mxr__prof_set_aggregate(bool on) { atomic_store(&g_aggregate, on); }

void mxr__prof_collect(struct prof_chunk_list *out) {
  mxr_mutex_lock(&reg_mu);
  for (struct prof_thread *t = g_threads; t; t = t->next) {
    mxr_mutex_lock(&t->mu);
    chunks_splice(out, &t->recs);
    mxr_mutex_unlock(&t->mu);
  }
  chunks_splice(out, &g_orphans);
  mxr_mutex_unlock(&reg_mu);
}

void mxr__prof_putback(struct prof_chunk_list *recs) {
  mxr_mutex_lock(&reg_mu);
  chunks_splice(&g_orphans, recs);
  mxr_mutex_unlock(&reg_mu);
}

int mxr__prof_aggregate_snapshot(struct agg_table *out, bool reset) {
  int st = 0;
  mxr_mutex_lock(&reg_mu);
  if (!st) st = mxr__agg_merge(out, &g_retired);
  for (struct prof_thread *t = g_threads; t; t = t->next) {
    mxr_mutex_lock(&t->mu);
    if (!st) st = mxr__agg_merge(out, &t->agg);
    if (reset && !st) mxr__agg_clear(&t->agg);
    mxr_mutex_unlock(&t->mu);
  }
  if (reset && !st) mxr__agg_clear(&g_retired);
  mxr_mutex_unlock(&reg_mu);
  if (st) return mxr_set_error(MXR_ENOMEM, "profiler: out of memory merging aggregate statistics");
  return 0;
}

void mxr__prof_aggregate_clear(void) {
  mxr_mutex_lock(&reg_mu);
  for (struct prof_thread *t = g_threads; t; t = t->next) {
    mxr_mutex_lock(&t->mu);
    mxr__agg_clear(&t->agg);
    mxr_mutex_unlock(&t->mu);
  }
  mxr__agg_clear(&g_retired);
  mxr_mutex_unlock(&reg_mu);
}

void mxr__prof_recorder_reset(void) {
  mxr_mutex_lock(&reg_mu);
  atomic_fetch_add(&g_gen, 1);
  atomic_store(&g_origin_ns, 0);
  atomic_store(&g_origin_epoch_ns, 0);
  for (struct prof_thread *t = g_threads; t; t = t->next) {
    mxr_mutex_lock(&t->mu);
    mxr__prof_chunks_free(&t->recs);
    mxr__agg_clear(&t->agg);
    mxr_mutex_unlock(&t->mu);
  }
  mxr__prof_chunks_free(&g_orphans);
  mxr__agg_clear(&g_retired);
  mxr_mutex_unlock(&reg_mu);
}
