/*
 * Mock implementations for the harness tests (test_mocks.c).
 *
 * Each mock is a shared library that links libmxref.so and defines a few
 * MXNet C API functions itself, on purpose wrong in one way: it crashes in
 * forward, hangs, ignores the bulking variables, returns a wrong gradient,
 * or has noisy timings.  mxcts-probe dlopens the mock and resolves the C API
 * with dlsym on the mock's handle, which finds the mock's own definitions
 * first and libmxref's for everything else; a mock reaches the definition it
 * replaces with MOCK_REAL(name) (dlsym with RTLD_NEXT).
 *
 * The probe calls the C API from one thread, so the mocks keep their state
 * without locks.
 */
#ifndef MXCTS_TESTS_MOCK_H
#define MXCTS_TESTS_MOCK_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "mxref/c_api.h"
#include "mxref/config.h"

/* Ties every mock to libmxref at link time: a linker that drops libraries
 * nothing refers to (--as-needed) would otherwise leave libmxref out of a
 * mock that reaches it only through dlsym, and the probe would not find the
 * functions the mock leaves to libmxref. */
__attribute__((used)) static int (*const mock_needs_libmxref)(void) = mxr_config_status;

static inline void *mock_real(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "mock: no definition of %s after the mock's own: %s\n", name, dlerror());
    abort();
  }
  return f;
}

/* The next definition of C API function `name`, with its prototype. */
#define MOCK_REAL(name) (*(__typeof__(name) **)&(void *){mock_real(#name)})

#endif /* MXCTS_TESTS_MOCK_H */
