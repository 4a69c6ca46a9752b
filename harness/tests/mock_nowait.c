/*
 * Mock: MXNDArrayWaitToRead and MXNDArrayWaitToWrite return at once, before
 * the ops they should wait for have ended (MXNDArrayWaitAll still waits).
 * Its numbers are right wherever a caller waits with WaitAll; mxcts must
 * report the engine suite's wait assertions as failures.
 */
#include "mock.h"

int MXNDArrayWaitToRead(NDArrayHandle handle) {
  (void)handle;
  return 0;
}

int MXNDArrayWaitToWrite(NDArrayHandle handle) {
  (void)handle;
  return 0;
}
