/*
 * Mock: returns a wrong gradient.  After every backward pass -- symbolic
 * (MXExecutorBackwardEx) or autograd (MXAutogradBackwardEx) -- the first
 * element of each gradient array it wrote is off by 0.5.  Forward results
 * are right.  mxcts must report the numerics (and gradient value) checks as
 * failures.
 *
 * To know which arrays a backward pass wrote, the mock remembers the
 * gradient arrays given to MXExecutorBindEX (per executor) and to
 * MXAutogradMarkVariables, and forgets them when they are freed.
 */
#include <stdint.h>
#include <string.h>

#include "mock.h"

enum { MAX_GRADS = 4096 };

struct grad {
  void *owner;             /* the executor, or NULL for autograd variables */
  NDArrayHandle array;
};
static struct grad grads[MAX_GRADS];
static size_t ngrads;

static void remember(void *owner, NDArrayHandle array) {
  if (!array) return;
  if (ngrads == MAX_GRADS) {
    fprintf(stderr, "mock_badgrad: more than %d gradient arrays\n", MAX_GRADS);
    abort();
  }
  grads[ngrads++] = (struct grad){owner, array};
}

static void forget_if(void *owner, NDArrayHandle array) {
  for (size_t i = 0; i < ngrads;) {
    if ((owner && grads[i].owner == owner) || (array && grads[i].array == array))
      grads[i] = grads[--ngrads];
    else
      i++;
  }
}

/* Add 0.5 to element 0 of a float32 or float64 array (others are left). */
static int perturb(NDArrayHandle a) {
  int dtype, ndim;
  const int *shape;
  if (MXNDArrayGetDType(a, &dtype) || MXNDArrayGetShapeEx(a, &ndim, &shape)) return -1;
  size_t n = 1;
  for (int d = 0; d < ndim; d++) n *= (size_t)shape[d];
  if (n == 0 || (dtype != 0 && dtype != 1)) return 0;
  size_t elem = dtype == 0 ? sizeof(float) : sizeof(double);
  unsigned char *buf = malloc(n * elem);
  if (!buf) return -1;
  int rc = MXNDArraySyncCopyToCPU(a, buf, n);
  if (!rc) {
    if (dtype == 0) ((float *)(void *)buf)[0] += 0.5f;
    else ((double *)(void *)buf)[0] += 0.5;
    rc = MXNDArraySyncCopyFromCPU(a, buf, n);
  }
  free(buf);
  return rc;
}

static int perturb_owned_by(void *owner) {
  for (size_t i = 0; i < ngrads; i++)
    if (grads[i].owner == owner && perturb(grads[i].array)) return -1;
  return 0;
}

int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t num_map_keys,
                     const char **map_keys, const int *map_dev_types, const int *map_dev_ids,
                     uint32_t len, NDArrayHandle *in_args, NDArrayHandle *arg_grad_store,
                     uint32_t *grad_req_type, uint32_t aux_states_len, NDArrayHandle *aux_states,
                     ExecutorHandle shared_exec, ExecutorHandle *out) {
  int rc = MOCK_REAL(MXExecutorBindEX)(symbol_handle, dev_type, dev_id, num_map_keys, map_keys,
                                       map_dev_types, map_dev_ids, len, in_args, arg_grad_store,
                                       grad_req_type, aux_states_len, aux_states, shared_exec, out);
  for (uint32_t i = 0; !rc && arg_grad_store && i < len; i++)
    if (!grad_req_type || grad_req_type[i] != 0) remember(*out, arg_grad_store[i]);
  return rc;
}

int MXExecutorBackwardEx(ExecutorHandle handle, uint32_t len, NDArrayHandle *head_grads,
                         int is_train) {
  int rc = MOCK_REAL(MXExecutorBackwardEx)(handle, len, head_grads, is_train);
  return rc ? rc : perturb_owned_by(handle);
}

int MXExecutorFree(ExecutorHandle handle) {
  forget_if(handle, NULL);
  return MOCK_REAL(MXExecutorFree)(handle);
}

int MXAutogradMarkVariables(uint32_t num_var, NDArrayHandle *var_handles, uint32_t *reqs_array,
                            NDArrayHandle *grad_handles) {
  int rc = MOCK_REAL(MXAutogradMarkVariables)(num_var, var_handles, reqs_array, grad_handles);
  for (uint32_t i = 0; !rc && i < num_var; i++)
    if (reqs_array[i] != 0) remember(NULL, grad_handles[i]);
  return rc;
}

int MXAutogradBackwardEx(uint32_t num_output, NDArrayHandle *output_handles,
                         NDArrayHandle *ograd_handles, uint32_t num_variables,
                         NDArrayHandle *var_handles, int retain_graph, int create_graph,
                         int is_train, NDArrayHandle **grad_handles, int **grad_stypes) {
  int rc = MOCK_REAL(MXAutogradBackwardEx)(num_output, output_handles, ograd_handles,
                                           num_variables, var_handles, retain_graph, create_graph,
                                           is_train, grad_handles, grad_stypes);
  return rc ? rc : perturb_owned_by(NULL);
}

int MXNDArrayFree(NDArrayHandle handle) {
  forget_if(NULL, handle);
  return MOCK_REAL(MXNDArrayFree)(handle);
}
