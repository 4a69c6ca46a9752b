/*
 * The C API's handle wrappers (with their quarantine), the checks of
 * arguments several calls share (contexts, NULL pointers), the operator
 * table used to check op handles, and the per-thread return buffers.  See
 * capi_internal.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi/capi_internal.h"
#include "common/threads.h"

/* ------------------------------------------------------------ wrappers */

/* Live and freed magics per kind ("MXNA", "MXSY", "MXEX", "MXCO", "MXPO"). */
static const uint32_t live_magic[CAPI_NUM_KINDS] = {0x4d584e41u, 0x4d585359u, 0x4d584558u,
                                                    0x4d58434fu, 0x4d58504fu};
#define FREED_MAGIC(kind) (0xdead0000u | (uint32_t)(kind))

static const char *const kind_name[CAPI_NUM_KINDS] = {"NDArray", "symbol", "executor",
                                                      "cached op", "profiler object"};
static const char *const a_kind[CAPI_NUM_KINDS] = {"an NDArray", "a symbol", "an executor",
                                                   "a cached op", "a profiler object"};
static const size_t kind_size[CAPI_NUM_KINDS] = {
    sizeof(struct capi_ndarray), sizeof(struct capi_symbol), sizeof(struct capi_executor),
    sizeof(struct capi_cached_op), sizeof(struct capi_profile_object)};

/* One FIFO of freed wrappers per kind. */
static struct quarantine {
  pthread_mutex_t mu;
  struct capi_handle *head, *tail;
  size_t count;
} parked[CAPI_NUM_KINDS] = {
    {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0}, {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0},
    {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0}, {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0},
    {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0},
};

void *mxr__capi_handle_new(enum capi_kind kind) {
  struct quarantine *q = &parked[kind];
  struct capi_handle *h = NULL;
  mxr_mutex_lock(&q->mu);
  if (q->count > CAPI_QUARANTINE) {
    h = q->head;
    q->head = h->next_free;
    if (!q->head) q->tail = NULL;
    q->count--;
  }
  mxr_mutex_unlock(&q->mu);
  if (h)
    memset((char *)h + sizeof h->magic, 0, kind_size[kind] - sizeof h->magic);
  else if (!(h = calloc(1, kind_size[kind]))) {
    mxr_set_error(MXR_ENOMEM, "out of memory for %s handle", a_kind[kind]);
    return NULL;
  }
  h->kind = kind;
  atomic_store_explicit(&h->magic, live_magic[kind], memory_order_release);
  return h;
}

void mxr__capi_handle_release(void *handle) {
  struct capi_handle *h = handle;
  enum capi_kind kind = h->kind;
  atomic_store_explicit(&h->magic, FREED_MAGIC(kind), memory_order_release);
  h->next_free = NULL;
  struct quarantine *q = &parked[kind];
  mxr_mutex_lock(&q->mu);
  if (q->tail)
    q->tail->next_free = h;
  else
    q->head = h;
  q->tail = h;
  q->count++;
  mxr_mutex_unlock(&q->mu);
}

static bool is_live(const void *handle, enum capi_kind kind) {
  const struct capi_handle *h = handle;
  return atomic_load_explicit(&h->magic, memory_order_acquire) == live_magic[kind];
}

int mxr__capi_check(const void *handle, enum capi_kind kind, const char *fn, const char *what) {
  if (!handle) return mxr_set_error(MXR_EINVAL, "%s: %s is NULL", fn, what);
  const struct capi_handle *h = handle;
  uint32_t m = atomic_load_explicit(&h->magic, memory_order_acquire);
  if (m == live_magic[kind]) return 0;
  if (m == FREED_MAGIC(kind))
    return mxr_set_error(MXR_EINVAL, "%s: %s is %s handle that was already freed", fn, what,
                         a_kind[kind]);
  for (int k = 0; k < CAPI_NUM_KINDS; k++) {
    if (m == live_magic[k])
      return mxr_set_error(MXR_EINVAL, "%s: %s is %s handle, not %s handle", fn, what,
                           a_kind[k], a_kind[kind]);
    if (m == FREED_MAGIC(k))
      return mxr_set_error(MXR_EINVAL, "%s: %s is a freed %s handle, not %s handle", fn, what,
                           kind_name[k], a_kind[kind]);
  }
  return mxr_set_error(MXR_EINVAL, "%s: %s is not a valid %s handle", fn, what, kind_name[kind]);
}

int mxr__capi_ndarray(NDArrayHandle h, const char *fn, const char *what, mxr_ndarray **out) {
  int st = mxr__capi_check(h, CAPI_NDARRAY, fn, what);
  *out = st ? NULL : ((struct capi_ndarray *)h)->arr;
  return st;
}

int mxr__capi_symbol(SymbolHandle h, const char *fn, const char *what, mxr_symbol **out) {
  int st = mxr__capi_check(h, CAPI_SYMBOL, fn, what);
  *out = st ? NULL : ((struct capi_symbol *)h)->sym;
  return st;
}

int mxr__capi_ndarrays(NDArrayHandle *list, int n, const char *fn, const char *what,
                       mxr_ndarray **out) {
  if (n < 0) return mxr_set_error(MXR_EINVAL, "%s: negative number of %s (%d)", fn, what, n);
  if (n > 0 && !list) return mxr_set_error(MXR_EINVAL, "%s: the %s array is NULL", fn, what);
  for (int i = 0; i < n; i++) {
    if (list[i] && is_live(list[i], CAPI_NDARRAY)) {
      out[i] = ((struct capi_ndarray *)list[i])->arr;
      continue;
    }
    char item[96]; /* formatted only for the error message */
    snprintf(item, sizeof item, "%s[%d]", what, i);
    return mxr__capi_ndarray(list[i], fn, item, &out[i]);
  }
  return 0;
}

int mxr__capi_wrap_ndarray(mxr_ndarray *arr, NDArrayHandle *out) {
  struct capi_ndarray *h = mxr__capi_handle_new(CAPI_NDARRAY);
  if (!h) {
    mxr_ndarray_free(arr);
    return MXR_ENOMEM;
  }
  h->arr = arr;
  *out = h;
  return 0;
}

int mxr__capi_check_device(const char *fn, int dev_type, int dev_id) {
  switch (dev_type) {
    case MXR_DEV_CPU:
    case MXR_DEV_GPU:
    case MXR_DEV_CPU_PINNED:
    case MXR_DEV_CPU_SHARED:
      break;
    default:
      return mxr_set_error(MXR_EINVAL, "%s: unknown device type %d (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared)",
                           fn, dev_type);
  }
  if (dev_id < 0) return mxr_set_error(MXR_EINVAL, "%s: negative device id %d", fn, dev_id);
  return 0;
}

int mxr__capi_null(const char *fn, const char *what) {
  return mxr_set_error(MXR_EINVAL, "%s: %s is NULL", fn, what);
}

/* ------------------------------------------------------------ op table */

/* Every op once, as handed out by MXSymbolListAtomicSymbolCreators (in
 * the order of their names), and the same pointers sorted, to check op
 * handles without dereferencing them. */
static const mxr_op **ops_by_name, **ops_sorted;
static size_t num_ops;
static pthread_once_t ops_once = PTHREAD_ONCE_INIT;

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (const mxr_op *const *)a, y = (uintptr_t) * (const mxr_op *const *)b;
  return x < y ? -1 : x > y;
}

static void build_ops(void) {
  size_t n = mxr_op_name_count();
  const mxr_op **by_name = malloc((n + 1) * sizeof *by_name);
  const mxr_op **sorted = malloc((n + 1) * sizeof *sorted);
  if (!by_name || !sorted) {
    free(by_name);
    free(sorted);
    return; /* every op handle is then refused, with that reason */
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = mxr_op_name_at(i);
    const mxr_op *op = NULL;
    if (name && mxr_op_find(name, &op) == 0 && strcmp(mxr_op_name(op), name) == 0) by_name[k++] = op;
  }
  memcpy(sorted, by_name, k * sizeof *sorted);
  qsort(sorted, k, sizeof *sorted, cmp_ptr);
  ops_by_name = by_name;
  ops_sorted = sorted;
  num_ops = k;
}

static int ensure_ops(void) {
  MXR_PTHREAD_CHECK(pthread_once(&ops_once, build_ops));
  return ops_sorted ? 0 : mxr_set_error(MXR_ENOMEM, "out of memory for the operator table");
}

int mxr__capi_op(const void *creator, const char *fn, const mxr_op **out) {
  if (!creator) return mxr_set_error(MXR_EINVAL, "%s: the operator handle is NULL", fn);
  int st = ensure_ops();
  if (st) return st;
  const mxr_op *key = creator;
  const mxr_op *const *hit = bsearch(&key, ops_sorted, num_ops, sizeof *ops_sorted, cmp_ptr);
  if (!hit)
    return mxr_set_error(MXR_EINVAL,
                         "%s: %p is not an operator handle (get one from NNGetOpHandle or "
                         "MXSymbolListAtomicSymbolCreators)",
                         fn, creator);
  *out = *hit;
  return 0;
}

int MXSymbolListAtomicSymbolCreators(uint32_t *out_size, AtomicSymbolCreator **out_array) {
  static const char fn[] = "MXSymbolListAtomicSymbolCreators";
  if (!out_size || !out_array) return capi_ret(mxr__capi_null(fn, "an out pointer"));
  int st = ensure_ops();
  if (st) return capi_ret(st);
  *out_size = (uint32_t)num_ops;
  *out_array = (AtomicSymbolCreator *)(void *)ops_by_name; /* static: never changes */
  return 0;
}

/* ------------------------------------------------------ thread buffers */

static pthread_mutex_t tls_mu = PTHREAD_MUTEX_INITIALIZER;
static struct capi_tls *tls_list; /* keeps every thread's buffers reachable */
static pthread_key_t tls_key;
static int tls_key_status;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static _Thread_local struct capi_tls *tls;

static void free_tls(void *p) {
  struct capi_tls *t = p;
  mxr_mutex_lock(&tls_mu);
  if (t->prev)
    t->prev->next = t->next;
  else
    tls_list = t->next;
  if (t->next) t->next->prev = t->prev;
  mxr_mutex_unlock(&tls_mu);
  struct capi_buf *bufs[] = {&t->handles,      &t->stypes,        &t->name_ptrs,
                             &t->name_chars,   &t->shape,         &t->infer_ndim[0],
                             &t->infer_ndim[1], &t->infer_ndim[2], &t->infer_ptrs[0],
                             &t->infer_ptrs[1], &t->infer_ptrs[2], &t->infer_dims[0],
                             &t->infer_dims[1], &t->infer_dims[2]};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]->p);
  for (size_t i = 0; i < sizeof t->bind / sizeof t->bind[0]; i++) free(t->bind[i].p);
  free(t->json);
  free(t->stats);
  free(t->attrs);
  free(t->text);
  free(t);
  tls = NULL;
}

static void make_tls_key(void) { tls_key_status = pthread_key_create(&tls_key, free_tls); }

struct capi_tls *mxr__capi_tls(void) {
  if (tls) return tls;
  MXR_PTHREAD_CHECK(pthread_once(&tls_once, make_tls_key));
  struct capi_tls *t = calloc(1, sizeof *t);
  if (!t) {
    mxr_set_error(MXR_ENOMEM, "out of memory for the thread's C API buffers");
    return NULL;
  }
  mxr_mutex_lock(&tls_mu);
  t->next = tls_list;
  if (tls_list) tls_list->prev = t;
  tls_list = t;
  mxr_mutex_unlock(&tls_mu);
  /* Without a key the buffers are kept until exit (still reachable). */
  if (tls_key_status == 0) (void)pthread_setspecific(tls_key, t);
  tls = t;
  return t;
}

int mxr__capi_reserve(struct capi_buf *b, size_t bytes) {
  if (bytes <= b->cap && b->p) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < bytes) cap *= 2;
  void *p = realloc(b->p, cap);
  if (!p) return mxr_set_error(MXR_ENOMEM, "out of memory for a returned array of %zu bytes", bytes);
  b->p = p;
  b->cap = cap;
  return 0;
}

int mxr__capi_return_arrays(mxr_ndarray **arrays, int n, NDArrayHandle **out, const int **stypes) {
  struct capi_tls *t = mxr__capi_tls();
  int st = t ? 0 : MXR_ENOMEM;
  size_t count = n > 0 ? (size_t)n : 0;
  if (!st) st = mxr__capi_reserve(&t->handles, (count + 1) * sizeof(NDArrayHandle));
  if (!st && stypes) st = mxr__capi_reserve(&t->stypes, (count + 1) * sizeof(int));
  NDArrayHandle *h = st ? NULL : t->handles.p;
  int made = 0;
  for (; !st && made < n; made++) st = mxr__capi_wrap_ndarray(arrays[made], &h[made]);
  if (st) {
    /* wrap_ndarray dropped the reference of the one that failed */
    for (int i = made; i < n; i++) mxr_ndarray_free(arrays[i]);
    for (int i = 0; i + 1 < made; i++) {
      mxr_ndarray_free(((struct capi_ndarray *)h[i])->arr);
      mxr__capi_handle_release(h[i]);
    }
    return st;
  }
  *out = h;
  if (stypes) {
    memset(t->stypes.p, 0, (count + 1) * sizeof(int)); /* 0: kDefaultStorage */
    *stypes = t->stypes.p;
  }
  return 0;
}
