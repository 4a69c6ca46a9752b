/*
 * Mock: crashes in forward.  Symbolic forward and cached-op calls write
 * through a null pointer; everything else is libmxref's.  mxcts must report
 * `crash` (a signal), never a slower or failed measurement.
 */
#include "mock.h"

static _Noreturn void crash(void) {
  volatile int *nowhere = NULL;
  *nowhere = 1;
  abort(); /* in case the write did not fault */
}

int MXExecutorForward(ExecutorHandle handle, int is_train) {
  (void)handle, (void)is_train;
  crash();
}

int MXInvokeCachedOpEx(CachedOpHandle handle, int num_inputs, NDArrayHandle *inputs,
                       int *num_outputs, NDArrayHandle **outputs, const int **out_stypes) {
  (void)handle, (void)num_inputs, (void)inputs, (void)num_outputs, (void)outputs, (void)out_stypes;
  crash();
}
