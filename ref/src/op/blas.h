/*
 * Internal: OpenBLAS, loaded on first use.
 *
 * libmxref does not link OpenBLAS: OpenBLAS starts its thread pool when it
 * is loaded, and those threads spin for about a tenth of a second, taking
 * the cores from a process that may never multiply a matrix.  The first
 * CPU kernel that needs BLAS loads it (dlopen), then applies the threading
 * policy: BLAS threads = cores / (engine workers that may run a BLAS op at
 * once), at least 1 -- the naive engine runs one op at a time, the
 * per-device engine MXNET_CPU_WORKER_NTHREADS, the pooled ThreadedEngine up
 * to its 16 workers -- and at most MXNET_OMP_MAX_THREADS when that is set
 * above 0 (MXNet's cap on the threads of one CPU op).  A user who sets
 * OPENBLAS_NUM_THREADS or OMP_NUM_THREADS keeps that choice.
 */
#ifndef MXR_OP_BLAS_H
#define MXR_OP_BLAS_H

#include <cblas.h>

/* The functions libmxref calls, with the types of cblas.h. */
struct mxr__blas {
  __typeof__(cblas_sgemm) *sgemm;
  __typeof__(cblas_dgemm) *dgemm;
  __typeof__(cblas_sdot) *sdot;
  __typeof__(cblas_ddot) *ddot;
};

/* The loaded functions, or NULL with MXR_ENOTFOUND "<who>: OpenBLAS could
 * not be loaded (...)" set.  Thread-safe; loads once per process. */
const struct mxr__blas *mxr__blas(const char *who);

/* Whether OpenBLAS is loaded in this process (for tests). */
int mxr__blas_loaded(void);

/* BLAS threads for `concurrent_ops` engine workers on `cores` cores, at
 * most max_threads (0: no cap); at least 1. */
int mxr__blas_threads_for(int cores, int concurrent_ops, int max_threads);

/* The threads OpenBLAS runs products on (loading it first), or -1 when it
 * cannot be loaded or does not say (for tests). */
int mxr__blas_num_threads(void);

#endif /* MXR_OP_BLAS_H */
