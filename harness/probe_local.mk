# mxcts-probe (harness/probe*.c): runs one workload against an implementation
# loaded with dlopen (docs/probe-protocol.md).  Included from Makefile.am.

harnessbin_PROGRAMS += harness/mxcts-probe
harness_mxcts_probe_SOURCES = \
	harness/probe.c harness/probe.h \
	harness/probe_capi.c harness/probe_capi.h \
	harness/probe_trace.c harness/probe_trace.h \
	harness/probe_flip.c \
	harness/probe_engine.c \
	harness/probe_numerics.c \
	harness/probe_pin.c
harness_mxcts_probe_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) -I$(top_srcdir)/harness
harness_mxcts_probe_LDADD = harness/liboracle.la $(JANSSON_LIBS) -ldl -lm

# The conformance suites against libmxref.so, as one TAP test.  It times
# work, so it starts only after every other test has finished, also under
# `make -j` (automake runs test logs as make targets; this orders them).
TESTS += harness/tests/conformance.sh
EXTRA_DIST += harness/tests/conformance.sh harness/tests/sanitized-expectations.txt suites
# (A script's log is NAME.sh.log, .sh not being in TEST_EXTENSIONS.  The
# target is named through a variable: automake owns the rule of a test's log,
# and would replace one that names it literally, prerequisites and all.)
CONFORMANCE_LOG = harness/tests/conformance.sh.log
CONFORMANCE_AFTER = $(filter-out $(CONFORMANCE_LOG) $(CONFORMANCE_MXNET_LOG),$(TEST_LOGS))
$(CONFORMANCE_LOG): $(CONFORMANCE_AFTER)
CLEANFILES += -r harness/tests/conformance.out

# The same suites against MXNet 1.9.1's libmxnet.so: skipped in `make check`,
# run by `make check-mxnet` (ref/src/capi/local.mk), after everything else.
TESTS += harness/tests/conformance_mxnet.sh
EXTRA_DIST += harness/tests/conformance_mxnet.sh
CONFORMANCE_MXNET_LOG = harness/tests/conformance_mxnet.sh.log
$(CONFORMANCE_MXNET_LOG): $(filter-out $(CONFORMANCE_MXNET_LOG),$(TEST_LOGS))
CLEANFILES += -r harness/tests/conformance-mxnet.out
