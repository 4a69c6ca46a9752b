/* OpenBLAS loaded on first use, and its threading policy (blas.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/threads.h"
#include "config.h"
#include "mxref/config.h"
#include "mxref/error.h"
#include "op/blas.h"

static int concurrent_blas_ops(const struct mxr_config *c) {
  switch (c->engine_type) {
    case MXR_ENGINE_NAIVE: return 1;
    case MXR_ENGINE_THREADED: return 16;
    default: return c->cpu_worker_nthreads;
  }
}

int mxr__blas_threads_for(int cores, int concurrent_ops, int max_threads) {
  if (cores < 1) cores = 1;
  if (concurrent_ops < 1) concurrent_ops = 1;
  int n = cores / concurrent_ops;
  if (max_threads > 0 && n > max_threads) n = max_threads;
  return n < 1 ? 1 : n;
}

static struct mxr__blas api;
static int (*get_threads)(void); /* openblas_get_num_threads, when OpenBLAS has it */
static bool loaded;
static char failure[512];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* Where OpenBLAS is looked for, in order: the library configure linked its
 * test against (MXR_OPENBLAS_PATH, empty when unknown), then the names the
 * dynamic linker resolves. */
static const char *const candidates[] = {MXR_OPENBLAS_PATH, "libopenblas.so.0", "libopenblas.so"};
#define NUM_CANDIDATES (sizeof candidates / sizeof candidates[0])

/* dlopen the first candidate that opens with `flags`; NULL if none does,
 * with the last dlerror in *why. */
static void *open_candidate(int flags, const char **why) {
  *why = "no candidate";
  for (size_t i = 0; i < NUM_CANDIDATES; i++) {
    if (!candidates[i][0]) continue;
    void *h = dlopen(candidates[i], flags);
    if (h) return h;
    const char *e = dlerror();
    if (e) *why = e;
  }
  return NULL;
}

static void *open_openblas(void) {
  const char *why;
  void *h = open_candidate(RTLD_NOW | RTLD_LOCAL, &why);
  if (h) return h;
  int len = snprintf(failure, sizeof failure, "OpenBLAS could not be loaded (tried");
  for (size_t i = 0; i < NUM_CANDIDATES && len > 0 && (size_t)len < sizeof failure; i++)
    if (candidates[i][0])
      len += snprintf(failure + len, sizeof failure - (size_t)len, " %s", candidates[i]);
  if (len > 0 && (size_t)len < sizeof failure)
    snprintf(failure + len, sizeof failure - (size_t)len, "): %s", why);
  return NULL;
}

static bool resolve(void *h, const char *name, void **out) {
  *out = dlsym(h, name);
  if (!*out) snprintf(failure, sizeof failure, "OpenBLAS has no %s", name);
  return *out != NULL;
}

static void apply_policy(void *h) {
  *(void **)&get_threads = dlsym(h, "openblas_get_num_threads");
  if (getenv("OPENBLAS_NUM_THREADS") || getenv("OMP_NUM_THREADS")) return;
  void (*set_threads)(int);
  /* a BLAS without OpenBLAS's thread control keeps its own threading */
  if (!resolve(h, "openblas_set_num_threads", (void **)&set_threads)) return;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const struct mxr_config *c = mxr_config_get(); /* defaults if the config is invalid */
  set_threads(mxr__blas_threads_for((int)cores, concurrent_blas_ops(c), c->omp_max_threads));
}

static void load(void) {
  void *h = open_openblas();
  if (!h) return;
  loaded = resolve(h, "cblas_sgemm", (void **)&api.sgemm) &&
           resolve(h, "cblas_dgemm", (void **)&api.dgemm) &&
           resolve(h, "cblas_sdot", (void **)&api.sdot) &&
           resolve(h, "cblas_ddot", (void **)&api.ddot);
  if (loaded) apply_policy(h);
}

const struct mxr__blas *mxr__blas(const char *who) {
  MXR_PTHREAD_CHECK(pthread_once(&load_once, load));
  if (loaded) return &api;
  mxr_set_error(MXR_ENOTFOUND, "%s: %s", who, failure);
  return NULL;
}

int mxr__blas_loaded(void) {
  const char *why;
  void *h = open_candidate(RTLD_NOW | RTLD_NOLOAD, &why);
  if (h) dlclose(h);
  return h != NULL;
}

int mxr__blas_num_threads(void) {
  MXR_PTHREAD_CHECK(pthread_once(&load_once, load));
  return loaded && get_threads ? get_threads() : -1;
}
