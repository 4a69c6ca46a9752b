# NDArrays (ref/src/ndarray): engine-ordered, refcounted arrays.  Their tests
# are part of the executor's and imperative layer's.  Included from the top
# Makefile.am.

mxrefinclude_HEADERS += ref/include/mxref/ndarray.h

ref_libmxref_core_la_SOURCES += \
	ref/src/ndarray/ndarray.c ref/src/ndarray/ndarray_internal.h
