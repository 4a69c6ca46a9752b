/* The mutant switch of --enable-mutants builds (common/mutant.h). */
#include "common/mutant.h"

#ifdef MXR_MUTANTS
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *active;

static void read_active(void) { active = getenv("MXR_MUTANT"); }

bool mxr__mutant(const char *name) {
  pthread_once(&once, read_active);
  return active && strcmp(active, name) == 0;
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int mxr__no_mutants;
#endif
