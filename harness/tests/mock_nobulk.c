/*
 * Mock: ignores the bulking variables.  Whatever MXNET_EXEC_BULK_EXEC_* say,
 * every op runs as its own engine op, and MXEngineSetBulkSize is accepted
 * and ignored -- an engine that never implemented bulking.  Its numbers are
 * right; mxcts must report the structure (segment sizes) and the orderings
 * (bulked faster than unbulked) as failures.
 */
#include <stdbool.h>

#include "mock.h"
#include "mxref/config.h"

/* libmxref read the variables when it was loaded, before this constructor
 * runs; overwriting its parsed configuration is how this mock ignores them.
 * (The configuration is ordinary static storage, so writing it through the
 * pointer is defined behaviour.) */
__attribute__((constructor)) static void turn_bulking_off(void) {
  struct mxr_config *c = (struct mxr_config *)mxr_config_get();
  c->exec_bulk_exec_train = false;
  c->exec_bulk_exec_inference = false;
  c->exec_bulk_exec_max_node_train = 0;
  c->exec_bulk_exec_max_node_train_fwd = 0;
  c->exec_bulk_exec_max_node_train_bwd = 0;
}

int MXEngineSetBulkSize(int bulk_size, int *prev_bulk_size) {
  (void)bulk_size;
  if (prev_bulk_size) *prev_bulk_size = 0;
  return 0;
}
