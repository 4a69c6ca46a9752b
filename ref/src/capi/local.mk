# The MXNet 1.9.1 C API subset (ref/src/capi): libmxref.so as a drop-in for
# libmxnet.so.  Included from the top Makefile.am.  docs/c-api.md describes
# the surface; ref/tests/capi_conformance.c checks it, against libmxref.so
# in `make check` and against MXNet's own libmxnet.so in `make check-mxnet`.

ref_libmxref_core_la_SOURCES += \
	ref/src/capi/capi_internal.h \
	ref/src/capi/handles.c \
	ref/src/capi/global.c \
	ref/src/capi/ndarray.c \
	ref/src/capi/ndarray_view.c \
	ref/src/capi/ndarray_file.c \
	ref/src/capi/symbol.c \
	ref/src/capi/executor.c \
	ref/src/capi/simple_bind.c \
	ref/src/capi/imperative.c \
	ref/src/capi/profiler.c \
	ref/src/capi/profile_objects.c \
	ref/src/capi/frontend.c \
	ref/src/capi/symbol_info.c \
	ref/src/capi/not_implemented.c

mxrefinclude_HEADERS += ref/include/mxref/c_api.h

# The conformance program uses only mxref/c_api.h and loads the library
# with dlopen (by default the in-tree libmxref.so), so it links neither
# libmxref nor Check.
check_PROGRAMS += ref/tests/capi_conformance
ref_tests_capi_conformance_SOURCES = ref/tests/capi_conformance.c
ref_tests_capi_conformance_CPPFLAGS = -I$(top_srcdir)/ref/include \
	-DCAPI_DEFAULT_LIB='"$(abs_top_builddir)/ref/.libs/libmxref.so"'
ref_tests_capi_conformance_LDADD = -ldl -lm
EXTRA_ref_tests_capi_conformance_DEPENDENCIES = ref/libmxref.la

# capi_mxnet.sh runs the same program on the libmxnet.so that
# `make check-mxnet` unpacks into $(MXNET_WHEEL_DIR); without it, it skips.
TESTS += ref/tests/capi_conformance ref/tests/capi_mxnet.sh
EXTRA_DIST += ref/tests/capi_mxnet.sh ref/tests/capi_fetch_mxnet.sh

MXNET_WHEEL_DIR = $(abs_top_builddir)/mxnet-wheel
MXNET_VERSION = 1.9.1

# Fetch the mxnet==$(MXNET_VERSION) wheel from PyPI with pip (once; it is
# kept in $(MXNET_WHEEL_DIR)), unpack its libraries, and run the
# conformance program and then the conformance suites (mxcts run, with
# suites/expectations/mxnet-$(MXNET_VERSION).txt) on its libmxnet.so
# through the test driver.  Where
# the wheel cannot be had (offline, no pip, no wheel for this machine) the
# test is recorded as skipped, with the reason; any other failure fails.
check-mxnet: all ref/tests/capi_conformance$(EXEEXT)
	@rc=0; MXNET_VERSION=$(MXNET_VERSION) $(SHELL) $(top_srcdir)/ref/tests/capi_fetch_mxnet.sh \
		"$(MXNET_WHEEL_DIR)" || rc=$$?; \
	case $$rc in \
	  0) $(MAKE) $(AM_MAKEFLAGS) check \
	       TESTS="ref/tests/capi_mxnet.sh harness/tests/conformance_mxnet.sh" \
	       TESTS_ENVIRONMENT="MXNET_REQUIRED=1 MXNET_WHEEL_DIR=$(MXNET_WHEEL_DIR)" ;; \
	  77) echo "check-mxnet: skipped: mxnet==$(MXNET_VERSION) cannot be fetched here (see above)"; \
	      $(MAKE) $(AM_MAKEFLAGS) check TESTS="ref/tests/capi_mxnet.sh" \
	       TESTS_ENVIRONMENT="MXNET_WHEEL_DIR=$(MXNET_WHEEL_DIR)" ;; \
	  *) echo "check-mxnet: fetching mxnet==$(MXNET_VERSION) failed" >&2; exit $$rc ;; \
	esac

.PHONY: check-mxnet

# MXNet 1.9.1's own Python tests (the peer files) with pytest on libmxref
# and on MXNet, and the table of their outcomes (ci/check-peer.sh).  Where
# they cannot run (no peer files, no python3 or pip, the package index
# unreachable) the target says why and succeeds.
check-peer: all
	@rc=0; $(SHELL) $(top_srcdir)/ci/check-peer.sh "$(abs_top_builddir)" "$(abs_top_srcdir)" || rc=$$?; \
	case $$rc in \
	  0) ;; \
	  77) echo "check-peer: skipped (see above)" ;; \
	  *) exit $$rc ;; \
	esac

.PHONY: check-peer
