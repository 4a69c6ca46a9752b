/*
 * Mock: hangs in forward.  Symbolic forward and cached-op calls never
 * return; mxcts must kill the process at its deadline and report `timeout`.
 */
#include <unistd.h>

#include "mock.h"

static _Noreturn void hang(void) {
  for (;;) pause();
}

int MXExecutorForward(ExecutorHandle handle, int is_train) {
  (void)handle, (void)is_train;
  hang();
}

int MXInvokeCachedOpEx(CachedOpHandle handle, int num_inputs, NDArrayHandle *inputs,
                       int *num_outputs, NDArrayHandle **outputs, const int **out_stypes) {
  (void)handle, (void)num_inputs, (void)inputs, (void)num_outputs, (void)outputs, (void)out_stypes;
  hang();
}
