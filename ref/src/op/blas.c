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

int mxr__blas_threads_for(int cores, int concurrent_ops) {
  if (cores < 1) cores = 1;
  if (concurrent_ops < 1) concurrent_ops = 1;
  int n = cores / concurrent_ops;
  return n < 1 ? 1 : n;
}

static struct mxr__blas api;
static bool loaded;
static char failure[512];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* The library configure linked its test against first (MXR_OPENBLAS_PATH,
 * empty when unknown), then the names the dynamic linker resolves. */
static void *open_openblas(void) {
  const char *names[] = {MXR_OPENBLAS_PATH, "libopenblas.so.0", "libopenblas.so"};
  const char *why = "no candidate";
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (!names[i][0]) continue;
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    why = dlerror();
  }
  snprintf(failure, sizeof failure,
           "OpenBLAS could not be loaded (%s%slibopenblas.so.0, libopenblas.so): %s",
           MXR_OPENBLAS_PATH, MXR_OPENBLAS_PATH[0] ? ", " : "", why ? why : "unknown error");
  return NULL;
}

static bool resolve(void *h, const char *name, void **out) {
  *out = dlsym(h, name);
  if (!*out) snprintf(failure, sizeof failure, "OpenBLAS has no %s", name);
  return *out != NULL;
}

static void apply_policy(void *h) {
  if (getenv("OPENBLAS_NUM_THREADS") || getenv("OMP_NUM_THREADS")) return;
  void (*set_threads)(int);
  /* a BLAS without OpenBLAS's thread control keeps its own threading */
  if (!resolve(h, "openblas_set_num_threads", (void **)&set_threads)) return;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const struct mxr_config *c = mxr_config_get(); /* defaults if the config is invalid */
  set_threads(mxr__blas_threads_for((int)cores, concurrent_blas_ops(c)));
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
  void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
  if (!h && MXR_OPENBLAS_PATH[0]) h = dlopen(MXR_OPENBLAS_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != NULL;
}
