# mxcts-probe (harness/probe*.c): runs one workload against an implementation
# loaded with dlopen (docs/probe-protocol.md).  Included from Makefile.am.

harnessbin_PROGRAMS += harness/mxcts-probe
harness_mxcts_probe_SOURCES = \
	harness/probe.c harness/probe.h \
	harness/probe_capi.c harness/probe_capi.h \
	harness/probe_trace.c harness/probe_trace.h \
	harness/probe_flip.c \
	harness/probe_engine.c \
	harness/probe_numerics.c
harness_mxcts_probe_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) -I$(top_srcdir)/harness
harness_mxcts_probe_LDADD = harness/liboracle.la $(JANSSON_LIBS) -ldl -lm

# The conformance suites against libmxref.so, as one TAP test.  It times
# work, so it starts only after every other test has finished, also under
# `make -j` (automake runs test logs as make targets; this orders them).
TESTS += harness/tests/conformance.sh
EXTRA_DIST += harness/tests/conformance.sh harness/tests/sanitized-expectations.txt suites
CONFORMANCE_AFTER = $(filter-out harness/tests/conformance.log,$(TEST_LOGS))
harness/tests/conformance.log: $(CONFORMANCE_AFTER)
CLEANFILES += -r harness/tests/conformance.out
