/*
 * Internal: checked pthread wrappers.
 *
 * Locking primitives cannot fail in a correct program (EINVAL, EDEADLK mean a
 * broken invariant), so the lock/unlock/wait/signal wrappers report the call,
 * file and line and abort when they do fail.  Creation calls, which can fail
 * for lack of resources, return a status instead.
 */
#ifndef MXR_COMMON_THREADS_H
#define MXR_COMMON_THREADS_H

#include <pthread.h>

void mxr__pthread_fatal(const char *call, int rc, const char *file, int line)
    __attribute__((noreturn));

#define MXR_PTHREAD_CHECK(call)                                  \
  do {                                                           \
    int mxr__rc = (call);                                        \
    if (mxr__rc != 0) mxr__pthread_fatal(#call, mxr__rc, __FILE__, __LINE__); \
  } while (0)

#define mxr_mutex_lock(m) MXR_PTHREAD_CHECK(pthread_mutex_lock(m))
#define mxr_mutex_unlock(m) MXR_PTHREAD_CHECK(pthread_mutex_unlock(m))
#define mxr_cond_wait(c, m) MXR_PTHREAD_CHECK(pthread_cond_wait(c, m))
#define mxr_cond_signal(c) MXR_PTHREAD_CHECK(pthread_cond_signal(c))
#define mxr_cond_broadcast(c) MXR_PTHREAD_CHECK(pthread_cond_broadcast(c))
#define mxr_mutex_destroy(m) MXR_PTHREAD_CHECK(pthread_mutex_destroy(m))
#define mxr_cond_destroy(c) MXR_PTHREAD_CHECK(pthread_cond_destroy(c))

/* Initialise a mutex / condition variable; return 0 or MXR_ESYS with the
 * last error set.  `what` names the owner for the message. */
int mxr__mutex_init(pthread_mutex_t *m, const char *what);
/* The same for a mutex its holder may lock again (PTHREAD_MUTEX_RECURSIVE). */
int mxr__mutex_init_recursive(pthread_mutex_t *m, const char *what);
/* The same for a mutex held for a few instructions at a time and taken
 * from several cores: a thread that finds it held spins briefly before it
 * sleeps (glibc's PTHREAD_MUTEX_ADAPTIVE_NP; a plain mutex elsewhere), so a
 * short wait costs no futex call and no context switch. */
int mxr__mutex_init_adaptive(pthread_mutex_t *m, const char *what);
int mxr__cond_init(pthread_cond_t *c, const char *what);

/* A CPU hint for spin loops. */
static inline void mxr__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

#endif /* MXR_COMMON_THREADS_H */
