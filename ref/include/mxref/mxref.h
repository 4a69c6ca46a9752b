/*
 * mxref/mxref.h: the native API of libmxref, the mxcts reference runtime.
 * Conventions (statuses, last error, ownership) are stated in each header
 * and in docs/architecture.md.
 */
#ifndef MXREF_MXREF_H
#define MXREF_MXREF_H

#include "mxref/base.h"
#include "mxref/error.h"
#include "mxref/config.h"
#include "mxref/engine.h"
#include "mxref/storage.h"
#include "mxref/ndarray.h"
#include "mxref/device.h"
#include "mxref/op.h"
#include "mxref/symbol.h"
#include "mxref/executor.h"
#include "mxref/imperative.h"
#include "mxref/profiler.h"

#endif /* MXREF_MXREF_H */
