/*
 * Internal: what the files of the C API layer (ref/src/capi) share.
 *
 * Handles.  Every NDArray, symbol, executor and cached-op handle the C API
 * gives out is a small wrapper object around one native object (holding one
 * reference to it where the native object is refcounted).  The wrapper
 * starts with a magic number per kind; freeing a handle overwrites the
 * magic with a "freed" value and parks the wrapper in a per-kind
 * quarantine instead of returning it to malloc.  A wrapper is reused only
 * when more than CAPI_QUARANTINE wrappers of its kind wait behind it, so a
 * freed handle is recognised as freed for at least the next
 * CAPI_QUARANTINE frees of that kind, and reading its magic is never a
 * use-after-free.  NULL, freed and wrong-kind handles are therefore
 * reported; a pointer that never was a handle cannot be detected.
 *
 * Operator handles (AtomicSymbolCreator, OpHandle) are the registry's
 * static `const mxr_op *`; mxr__capi_op() checks them against the sorted
 * table of every op without dereferencing them.
 *
 * Thread buffers.  Arrays and strings handed back to the caller live in a
 * per-thread struct capi_tls until the next call that refills the same
 * buffer.  Each thread's struct is on a global list (so leak checkers see
 * it as reachable) and is freed when the thread exits.
 *
 * Errors.  A failing C API function stores its message with
 * mxr_set_error() (or keeps the one the native call stored) and returns -1;
 * MXGetLastError() is mxr_last_error().
 */
#ifndef MXR_CAPI_INTERNAL_H
#define MXR_CAPI_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxref/c_api.h"
#include "mxref/error.h"
#include "mxref/executor.h"
#include "mxref/imperative.h"
#include "mxref/ndarray.h"
#include "mxref/op.h"
#include "mxref/symbol.h"

/* The version reported by MXGetVersion: the MXNet whose behaviour we match. */
#define CAPI_MXNET_VERSION 10901

/* How many freed wrappers of a kind wait before one is reused. */
#define CAPI_QUARANTINE 1024

/* The largest element count of an array the C API accepts: MXNet 1.9.1
 * without INT64_TENSOR_SIZE refuses 2^31 - 1 elements and more. */
#define CAPI_MAX_ELEMENTS ((INT64_C(1) << 31) - 1)

enum capi_kind {
  CAPI_NDARRAY = 0,
  CAPI_SYMBOL = 1,
  CAPI_EXECUTOR = 2,
  CAPI_CACHED_OP = 3,
  CAPI_PROFILE_OBJECT = 4,
  CAPI_NUM_KINDS
};

struct capi_handle {
  _Atomic uint32_t magic;
  enum capi_kind kind;
  struct capi_handle *next_free; /* quarantine link while freed */
};

struct capi_ndarray {
  struct capi_handle h;
  mxr_ndarray *arr; /* one reference */
};

struct capi_symbol {
  struct capi_handle h;
  mxr_symbol *sym; /* owned */
};

struct capi_executor {
  struct capi_handle h;
  mxr_executor *exec; /* owned */
  int num_outputs;
  bool has_backward;     /* bound with at least one gradient */
  bool needs_head_grads; /* some output is not a loss: backward needs its gradient */
};

struct capi_cached_op {
  struct capi_handle h;
  mxr_cached_op *cop; /* owned */
};

/* A profiler object (MXProfileCreate*): a domain, or a task, frame or
 * event (durations), or a counter, of a domain. */
enum capi_profile_kind { PROF_DOMAIN, PROF_TASK, PROF_FRAME, PROF_EVENT, PROF_COUNTER };

struct capi_profile_object {
  struct capi_handle h;
  enum capi_profile_kind kind;
  char *name;      /* owned */
  uint64_t cookie; /* a started duration's profiler span, else 0 */
  uint64_t value;  /* a counter's */
};

/* A new wrapper of `kind` (zeroed, magic set), or NULL with an ENOMEM message. */
void *mxr__capi_handle_new(enum capi_kind kind);

/* Mark a wrapper freed and park it in the quarantine.  The caller has
 * already released what it held. */
void mxr__capi_handle_release(void *handle);

/* Check that `handle` is a live handle of `kind`.  Returns 0, or fails
 * (MXR_EINVAL) with "<fn>: <what> is NULL / was freed / is a symbol handle,
 * not an NDArray handle / is not a valid ... handle". */
int mxr__capi_check(const void *handle, enum capi_kind kind, const char *fn, const char *what);

/* Shorthands that check and unwrap. */
int mxr__capi_ndarray(NDArrayHandle h, const char *fn, const char *what, mxr_ndarray **out);
int mxr__capi_symbol(SymbolHandle h, const char *fn, const char *what, mxr_symbol **out);

/* Check a list of n NDArray handles (n >= 0; list may be NULL only when
 * n == 0) and unwrap them into out[0..n). */
int mxr__capi_ndarrays(NDArrayHandle *list, int n, const char *fn, const char *what,
                       mxr_ndarray **out);

/* Wrap a native array (taking over one reference) in a new handle; on
 * failure the reference is dropped. */
int mxr__capi_wrap_ndarray(mxr_ndarray *arr, NDArrayHandle *out);

/* Check an operator handle and return the op. */
int mxr__capi_op(const void *creator, const char *fn, const mxr_op **out);

/* Check a context given as (dev_type, dev_id): a device type MXNet
 * defines (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared) and a non-negative
 * id.  Whether that GPU exists is left to the caller.  0 or MXR_EINVAL
 * with a message naming the value. */
int mxr__capi_check_device(const char *fn, int dev_type, int dev_id);

/* A NULL out pointer (or other required pointer argument). */
int mxr__capi_null(const char *fn, const char *what);

/* Map a native status to the C API's: 0 stays 0, any failure is -1. */
static inline int capi_ret(int status) { return status ? -1 : 0; }

/* ------------------------------------------------------- thread buffers */

struct capi_buf {
  void *p;
  size_t cap; /* bytes */
};

struct capi_tls {
  struct capi_tls *prev, *next; /* on the global list */
  struct capi_buf handles;      /* NDArray handle arrays (invoke, cached op, outputs) */
  struct capi_buf stypes;       /* storage types of those outputs */
  struct capi_buf name_ptrs;    /* symbol name lists: pointers ... */
  struct capi_buf name_chars;   /* ... into these characters */
  struct capi_buf shape;        /* MXNDArrayGetShapeEx */
  struct capi_buf infer_ndim[3], infer_ptrs[3], infer_dims[3]; /* MXSymbolInferShapeEx */
  char *json;                   /* MXSymbolSaveToJSON (malloc'd by the native call) */
  char *stats;                  /* MXAggregateProfileStatsPrint(Ex) */
  struct capi_buf bind[4];      /* MXExecutorSimpleBindEx: args, grads, aux, shared buffer */
  char **attrs;                 /* MXSymbolListAttr(Shallow): one malloc'd block */
  char *text;                   /* MXSymbolPrint, MXExecutorPrint */
};

/* The calling thread's buffers, or NULL with an ENOMEM message. */
struct capi_tls *mxr__capi_tls(void);

/* Make `b` hold at least `bytes`; 0 or MXR_ENOMEM. */
int mxr__capi_reserve(struct capi_buf *b, size_t bytes);

/* Fill the thread's handle buffer with new handles for arrays[0..n) (each
 * taking over one reference; on failure every reference not yet wrapped is
 * dropped and the handles made so far are freed) and, when stypes is not
 * NULL, point *stypes at n zeros (dense storage). */
int mxr__capi_return_arrays(mxr_ndarray **arrays, int n, NDArrayHandle **out,
                            const int **stypes);

/* Copy names[0..n) into the thread's name buffers and point *out_array at
 * them (NULL-terminated); *out_size = n.  0 or MXR_ENOMEM. */
int mxr__capi_return_names(int n, const char *const *names, uint32_t *out_size, const char ***out_array);

#endif /* MXR_CAPI_INTERNAL_H */
