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

int mxr__mutex_init_recursive(pthread_mutex_t *m, const char *what) {
  pthread_mutexattr_t attr;
  int rc = pthread_mutexattr_init(&attr);
  if (rc == 0) {
    rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    if (rc == 0) rc = pthread_mutex_init(m, &attr);
    int drc = pthread_mutexattr_destroy(&attr);
    if (rc == 0) rc = drc;
  }
  if (rc != 0)
    return mxr_set_error(MXR_ESYS, "recursive pthread_mutex_init for %s failed: %s", what,
                         strerror(rc));
  return 0;
}

int mxr__cond_init(pthread_cond_t *c, const char *what) {
  int rc = pthread_cond_init(c, NULL);
  if (rc != 0)
    return mxr_set_error(MXR_ESYS, "pthread_cond_init for %s failed: %s", what, strerror(rc));
  return 0;
}
