/*
 * Internal: what other layers attach to an NDArray.
 *
 * Autograd keeps its record of an array (marked variable, or output of a
 * recorded op) in a slot of the array; `release` runs when the slot is
 * replaced or the array is destroyed.
 *
 * mxr__ndarray_refs tells how many references an array has, so that an
 * owner can learn whether it is the only one (the executor renews a cached
 * op's outputs that a caller still holds).  Only a count its owner cannot
 * race with means anything: one taken while no other thread can retain it.
 */
#ifndef MXR_NDARRAY_INTERNAL_H
#define MXR_NDARRAY_INTERNAL_H

#include "mxref/ndarray.h"

void mxr__ndarray_set_autograd(mxr_ndarray *arr, void *entry, void (*release)(void *));
void *mxr__ndarray_autograd(const mxr_ndarray *arr);
long mxr__ndarray_refs(const mxr_ndarray *arr);

#endif /* MXR_NDARRAY_INTERNAL_H */
