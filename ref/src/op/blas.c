/*
 * The BLAS threading policy.
 *
 * OpenBLAS runs its own thread pool inside each sgemm; the engine runs ops
 * on its own workers.  Left alone, every worker's sgemm would start one BLAS
 * thread per core and the machine would be oversubscribed by a factor of
 * the worker count.  So, once at library load: BLAS threads = cores / (CPU
 * workers that may run a BLAS op at once), at least 1.  The naive engine
 * runs one op at a time, so BLAS gets every core; the per-device engine
 * runs MXNET_CPU_WORKER_NTHREADS ops at once; the pooled ThreadedEngine up
 * to its 16 workers.  A user who sets OPENBLAS_NUM_THREADS (or
 * OMP_NUM_THREADS) keeps that choice.
 */
#include <cblas.h>
#include <stdlib.h>
#include <unistd.h>

#include "mxref/config.h"
#include "op/op_internal.h"

static int concurrent_blas_ops(const struct mxr_config *c) {
  switch (c->engine_type) {
    case MXR_ENGINE_NAIVE: return 1;
    case MXR_ENGINE_THREADED: return 16;
    default: return c->cpu_worker_nthreads;
  }
}

int mxr__blas_threads_for(int cores, int concurrent_ops) {
  if (cores < 1) cores = 1;
  if (concurrent_ops < 1) concurrent_ops = 1;
  int n = cores / concurrent_ops;
  return n < 1 ? 1 : n;
}

__attribute__((constructor)) static void apply_blas_policy(void) {
  if (getenv("OPENBLAS_NUM_THREADS") || getenv("OMP_NUM_THREADS")) return;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const struct mxr_config *c = mxr_config_get(); /* defaults if the config is invalid */
  openblas_set_num_threads(mxr__blas_threads_for((int)cores, concurrent_blas_ops(c)));
}
