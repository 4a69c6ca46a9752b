/*
 * Engine bulking (MXNet's Engine::set_bulk_size and BulkAppend/BulkFlush).
 *
 * Each thread has one pending bulk and one bulk size, tied to the engine it
 * was last set for.  While the size is > 0, sync ops with property NORMAL and
 * priority 0 are appended to the bulk instead of being pushed; the bulk's
 * read set is the union of their reads minus anything one of them writes,
 * and its write set the union of their writes.  The bulk is pushed as one op
 * named "ImperativeBulk" that runs the appended functions in order and stops
 * at the first failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include "engine/engine_internal.h"

struct bulk_item {
  mxr_sync_fn fn;
  void *param;
  void (*param_free)(void *);
};

struct var_set {
  mxr_var **v;
  int n, cap;
};

struct bulk_state {
  mxr_engine *eng; /* the engine size and pending ops belong to */
  int size;
  struct mxr_context ctx;
  struct bulk_item *items;
  int count, cap;
  struct var_set reads, writes;
  int deferred_status; /* a flush that failed where no status could be returned */
  char deferred_msg[MXR_ERROR_MAX];
};

/* What the pushed bulk op owns.  Blocks for up to MXR_BULK_SMALL ops come
 * from the engine's recycler. */
struct bulk_batch {
  mxr_engine *eng;
  int count;
  struct bulk_item items[];
};

size_t mxr__bulk_batch_size(int count) {
  return sizeof(struct bulk_batch) + (size_t)count * sizeof(struct bulk_item);
}

static _Thread_local struct bulk_state tls;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static int set_add(struct var_set *s, mxr_var *v) {
  for (int i = 0; i < s->n; i++)
    if (s->v[i] == v) return 0;
  if (s->n == s->cap) {
    int ncap = s->cap ? s->cap * 2 : 16;
    mxr_var **n = realloc(s->v, (size_t)ncap * sizeof *n);
    if (!n) return mxr_set_error(MXR_ENOMEM, "engine bulk: out of memory");
    s->v = n;
    s->cap = ncap;
  }
  s->v[s->n++] = v;
  return 0;
}

static bool set_has(const struct var_set *s, const mxr_var *v) {
  for (int i = 0; i < s->n; i++)
    if (s->v[i] == v) return true;
  return false;
}

static int run_batch(const struct mxr_run_ctx *rctx, void *param) {
  struct bulk_batch *b = param;
  for (int i = 0; i < b->count; i++) {
    int st = b->items[i].fn(rctx, b->items[i].param);
    if (st) return st;
  }
  return 0;
}

static void free_batch(void *param) {
  struct bulk_batch *b = param;
  for (int i = 0; i < b->count; i++)
    if (b->items[i].param_free) b->items[i].param_free(b->items[i].param);
  if (b->count <= MXR_BULK_SMALL)
    mxr__recycler_give(&b->eng->batches, b);
  else
    free(b);
}

/* Reads that some op of the bulk also writes are covered by the write. */
static void drop_written_reads(struct var_set *reads, const struct var_set *writes) {
  int kept = 0;
  for (int i = 0; i < reads->n; i++)
    if (!set_has(writes, reads->v[i])) reads->v[kept++] = reads->v[i];
  reads->n = kept;
}

static void reset_pending(void) {
  tls.count = 0;
  tls.reads.n = 0;
  tls.writes.n = 0;
}

static int flush_tls(void) {
  if (tls.count == 0) return 0;
  mxr_engine *eng = tls.eng;
  struct bulk_batch *b = tls.count <= MXR_BULK_SMALL ? mxr__recycler_take(&eng->batches)
                                                    : malloc(mxr__bulk_batch_size(tls.count));
  if (!b) {
    for (int i = 0; i < tls.count; i++)
      if (tls.items[i].param_free) tls.items[i].param_free(tls.items[i].param);
    reset_pending();
    return mxr_set_error(MXR_ENOMEM, "engine bulk: out of memory pushing a bulk");
  }
  b->eng = eng;
  b->count = tls.count;
  for (int i = 0; i < tls.count; i++) b->items[i] = tls.items[i];
  drop_written_reads(&tls.reads, &tls.writes);
  struct mxr_push req = {.sync_fn = run_batch, .param = b, .param_free = free_batch,
                         .ctx = tls.ctx, .const_vars = tls.reads.v, .num_const = tls.reads.n,
                         .mutable_vars = tls.writes.v, .num_mutable = tls.writes.n,
                         .prop = MXR_PROP_NORMAL, .name = "ImperativeBulk",
                         .profile = MXR_PROFILE_IMPERATIVE};
  reset_pending();
  atomic_fetch_add_explicit(&eng->bulks_pushed, 1, memory_order_relaxed);
  return mxr__engine_push_now(eng, &req, false);
}

/* A thread that exits with a pending bulk pushes it rather than losing it. */
static void flush_at_thread_exit(void *unused) {
  (void)unused;
  flush_tls();
  free(tls.items);
  free(tls.reads.v);
  free(tls.writes.v);
  tls = (struct bulk_state){0};
}

static void make_exit_key(void) {
  MXR_PTHREAD_CHECK(pthread_key_create(&exit_key, flush_at_thread_exit));
}

/* Attach this thread's state to `eng`, pushing what another engine had. */
static int bind_engine(mxr_engine *eng) {
  if (tls.eng == eng) return 0;
  int st = flush_tls();
  tls.deferred_status = 0; /* it was another engine's */
  tls.eng = eng;
  tls.size = 0;
  MXR_PTHREAD_CHECK(pthread_once(&exit_key_once, make_exit_key));
  MXR_PTHREAD_CHECK(pthread_setspecific(exit_key, &tls));
  return st;
}

/* Keep a flush failure for the next wait, when the caller cannot be told. */
static void defer_error(int st) {
  if (st && !tls.deferred_status) {
    tls.deferred_status = st;
    snprintf(tls.deferred_msg, sizeof tls.deferred_msg, "%s", mxr_last_error());
  }
}

int mxr__bulk_flush(mxr_engine *eng) {
  if (tls.eng != eng) return 0;
  int st = flush_tls();
  if (!st && tls.deferred_status) {
    st = mxr_set_error(tls.deferred_status, "%s", tls.deferred_msg);
    tls.deferred_status = 0;
  }
  return st;
}

static int append(const struct mxr_push *r) {
  if (tls.count == tls.cap) {
    int ncap = tls.cap ? tls.cap * 2 : 16;
    struct bulk_item *n = realloc(tls.items, (size_t)ncap * sizeof *n);
    if (!n) return mxr_set_error(MXR_ENOMEM, "engine bulk: out of memory");
    tls.items = n;
    tls.cap = ncap;
  }
  int st = 0;
  for (int i = 0; i < r->num_const && !st; i++) st = set_add(&tls.reads, r->const_vars[i]);
  for (int i = 0; i < r->num_mutable && !st; i++) st = set_add(&tls.writes, r->mutable_vars[i]);
  if (st) return st;
  if (tls.count == 0) tls.ctx = r->ctx;
  tls.items[tls.count++] = (struct bulk_item){r->sync_fn, r->param, r->param_free};
  return 0;
}

int mxr__bulk_try_append(mxr_engine *eng, const struct mxr_push *r) {
  if (tls.eng != eng) return 0; /* this thread never set a bulk size for eng */
  bool bulkable = tls.size > 0 && r->sync_fn && r->prop == MXR_PROP_NORMAL && r->priority == 0 &&
                  !r->no_bulk;
  if (!bulkable) {
    int st = flush_tls(); /* an unbulked push closes the bulk first */
    return st ? st : 0;
  }
  if (tls.count > 0 && !mxr_context_equal(tls.ctx, r->ctx)) {
    int st = flush_tls();
    if (st) return st;
  }
  int st = append(r);
  if (st) {
    if (r->param_free) r->param_free(r->param);
    return st;
  }
  atomic_fetch_add_explicit(&eng->ops_bulked, 1, memory_order_relaxed);
  if (tls.count >= tls.size) st = flush_tls();
  return st ? st : 1;
}

void mxr__bulk_forget(mxr_engine *eng) {
  if (tls.eng != eng) return;
  flush_tls(); /* empty after the engine's final wait; kept for safety */
  tls.eng = NULL;
  tls.size = 0;
  tls.deferred_status = 0;
}

int mxr_engine_set_bulk_size(mxr_engine *eng, int size) {
  /* the naive engine never bulks */
  if (!eng || eng->opts.type == MXR_ENGINE_NAIVE) return 0;
  if (size < 0) size = 0;
  /* A failing flush of another engine's bulk cannot be reported to it. */
  (void)bind_engine(eng);
  int old = tls.size;
  tls.size = size;
  if (tls.count >= tls.size) defer_error(flush_tls());
  return old;
}

int mxr_engine_bulk_size(const mxr_engine *eng) {
  return eng && tls.eng == eng ? tls.size : 0;
}
