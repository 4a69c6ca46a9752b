/* Checked pthread wrappers (threads.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/threads.h"
#include "mxref/error.h"

void mxr__pthread_fatal(const char *call, int rc, const char *file, int line) {
  fprintf(stderr, "libmxref: fatal: %s failed at %s:%d: %s\n", call, file, line,
          strerror(rc));
  abort();
}

int mxr__mutex_init(pthread_mutex_t *m, const char *what) {
  int rc = pthread_mutex_init(m, NULL);
  if (rc != 0)
    return mxr_set_error(MXR_ESYS, "pthread_mutex_init for %s failed: %s", what, strerror(rc));
  return 0;
}

/* A mutex of the given type; `kind` names the type in the message. */
static int mutex_init_typed(pthread_mutex_t *m, int type, const char *kind, const char *what) {
  pthread_mutexattr_t attr;
  int rc = pthread_mutexattr_init(&attr);
  if (rc == 0) {
    rc = pthread_mutexattr_settype(&attr, type);
    if (rc == 0) rc = pthread_mutex_init(m, &attr);
    int drc = pthread_mutexattr_destroy(&attr);
    if (rc == 0) rc = drc;
  }
  if (rc != 0)
    return mxr_set_error(MXR_ESYS, "%s pthread_mutex_init for %s failed: %s", kind, what,
                         strerror(rc));
  return 0;
}

int mxr__mutex_init_recursive(pthread_mutex_t *m, const char *what) {
  return mutex_init_typed(m, PTHREAD_MUTEX_RECURSIVE, "recursive", what);
}

int mxr__mutex_init_adaptive(pthread_mutex_t *m, const char *what) {
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
  return mutex_init_typed(m, PTHREAD_MUTEX_ADAPTIVE_NP, "adaptive", what);
#else
  return mxr__mutex_init(m, what);
#endif
}

int mxr__cond_init(pthread_cond_t *c, const char *what) {
  int rc = pthread_cond_init(c, NULL);
  if (rc != 0)
    return mxr_set_error(MXR_ESYS, "pthread_cond_init for %s failed: %s", what, strerror(rc));
  return 0;
}
