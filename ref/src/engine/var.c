/*
 * Dependency tracking per var.
 *
 * A var grants access to the ops that use it in push order.  At any time it
 * has granted either one write or any number of reads.  Ops it cannot grant
 * yet wait in its queue (head..tail).  A read is granted at once only when
 * nothing waits ahead of it and no write runs, so a read never overtakes an
 * earlier write, and a write never overtakes an earlier read.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"

int mxr__var_create(struct mxr_engine *eng, mxr_var **out) {
  mxr_var *v = mxr__recycler_take(&eng->var_blocks);
  if (!v) return mxr_set_error(MXR_ENOMEM, "engine: cannot allocate a var");
  memset(v, 0, sizeof *v);
  int st = mxr__mutex_init_adaptive(&v->mu, "var");
  if (st) {
    mxr__recycler_give(&eng->var_blocks, v);
    return st;
  }
  atomic_init(&v->err, NULL);
  v->eng = eng;
  *out = v;
  return 0;
}

void mxr__var_destroy(mxr_var *var) {
  mxr__error_release(atomic_load(&var->err));
  mxr_mutex_destroy(&var->mu);
  mxr__recycler_give(&var->eng->var_blocks, var);
}

/* Whether `l` must wait for the reads that run (a write must). */
static bool waits_for_reads(const struct dep_link *l) {
  return l->write;
}

bool mxr__var_append(mxr_var *var, struct dep_link *link) {
  bool granted = false;
  link->next = NULL;
  mxr_mutex_lock(&var->mu);
  /* every op waits for the write that runs */
  if (var->head == NULL && !var->active_write &&
      !(waits_for_reads(link) && var->active_reads > 0)) {
    granted = true;
    if (link->write)
      var->active_write = true;
    else
      var->active_reads++;
  } else if (var->tail) {
    var->tail->next = link;
    var->tail = link;
  } else {
    var->head = var->tail = link;
  }
  mxr_mutex_unlock(&var->mu);
  return granted;
}

void mxr__ready_init(ready_list *r) {
  r->ops = r->inline_buf;
  r->n = 0;
  r->cap = (int)(sizeof r->inline_buf / sizeof r->inline_buf[0]);
}

void mxr__ready_free(ready_list *r) {
  if (r->ops != r->inline_buf) free(r->ops);
}

static void ready_add(ready_list *r, struct opr *op) {
  if (r->n == r->cap) {
    int ncap = r->cap * 2;
    struct opr **n = malloc((size_t)ncap * sizeof *n);
    if (!n) {
      /* Losing a granted op would hang the engine; there is no way on. */
      mxr__pthread_fatal("malloc (engine ready list)", 12, __FILE__, __LINE__);
    }
    for (int i = 0; i < r->n; i++) n[i] = r->ops[i];
    if (r->ops != r->inline_buf) free(r->ops);
    r->ops = n;
    r->cap = ncap;
  }
  r->ops[r->n++] = op;
}

/* Grant waiting ops from the head of the queue as far as the rules allow.
 * Called with the lock held. */
static void grant_waiting(mxr_var *var, ready_list *ready) {
  while (var->head && !var->active_write) {
    struct dep_link *l = var->head;
    if (waits_for_reads(l) && var->active_reads > 0) break;
    var->head = l->next;
    if (!var->head) var->tail = NULL;
    if (l->write)
      var->active_write = true;
    else
      var->active_reads++;
    ready_add(ready, l->op);
  }
}

static void attach_error(mxr_var *var, struct eng_error *op_err) {
  struct eng_error *old = atomic_load_explicit(&var->err, memory_order_relaxed);
  if (old == op_err) return;
  if (op_err) mxr__error_retain(op_err);
  atomic_store_explicit(&var->err, op_err, memory_order_release);
  mxr__error_release(old);
}

bool mxr__var_complete(mxr_var *var, bool write, struct eng_error *op_err,
                       bool release_var, ready_list *ready) {
  bool destroy = false;
  mxr_mutex_lock(&var->mu);
  if (write) {
    /* A successful write leaves no error behind (errors that were active
     * would have made the op skip, so only cleared ones are dropped). */
    attach_error(var, mxr__error_is_active(op_err) ? op_err : NULL);
    var->active_write = false;
    var->version++;
    if (release_var) var->to_delete = true;
  } else {
    var->active_reads--;
  }
  grant_waiting(var, ready);
  /* Ops pushed on a var after its delete are a caller error; they still run
   * (no hang), and the var goes once they are done. */
  destroy = var->to_delete && var->head == NULL && !var->active_write &&
            var->active_reads == 0;
  mxr_mutex_unlock(&var->mu);
  return destroy;
}

bool mxr__var_ready_to_read(mxr_var *var) {
  mxr_mutex_lock(&var->mu);
  bool ready = var->head == NULL && !var->active_write;
  mxr_mutex_unlock(&var->mu);
  return ready;
}

int mxr__var_take_error(mxr_var *var) {
  int st = 0;
  mxr_mutex_lock(&var->mu);
  struct eng_error *e = atomic_load_explicit(&var->err, memory_order_relaxed);
  bool was_active = true;
  if (e && atomic_compare_exchange_strong(&e->active, &was_active, false))
    st = mxr_set_error(e->status, "%s", e->msg);
  mxr_mutex_unlock(&var->mu);
  return st;
}

void mxr__var_count_write(mxr_var *var) {
  mxr_mutex_lock(&var->mu);
  var->version++;
  mxr_mutex_unlock(&var->mu);
}

uint64_t mxr_var_version(mxr_var *var) {
  if (!var) return 0;
  mxr_mutex_lock(&var->mu);
  uint64_t v = var->version;
  mxr_mutex_unlock(&var->mu);
  return v;
}
