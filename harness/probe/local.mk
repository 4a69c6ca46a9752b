# mxcts-probe (harness/probe): runs one workload against an implementation
# loaded with dlopen (docs/probe-protocol.md).  Included from the top
# Makefile.am.  Built as harness/mxcts-probe, beside harness/mxcts, where
# mxcts looks for it.

harnessbin_PROGRAMS += harness/mxcts-probe
harness_mxcts_probe_SOURCES = \
	harness/probe/probe.h harness/probe/probe_internal.h harness/probe/probe.c \
	harness/probe/probe_capi.c harness/probe/probe_trace.c harness/probe/probe_flip.c \
	harness/probe/probe_engine.c harness/probe/probe_dispatch.c harness/probe/probe_numerics.c \
	harness/probe/probe_pin.c harness/probe/probe_waits.c harness/probe/probe_knobs.c harness/probe/probe_views.c \
	harness/probe/probe_infer.c \
	harness/probe/probe_errors.c harness/probe/probe_network.c harness/probe/probe_params_file.c \
	harness/probe/probe_profiler.c harness/probe/probe_plan.c harness/probe/probe_op_info.c \
	harness/probe/probe_pools.c harness/probe/probe_reject.c
# where reference data of the suites (suites/data) is found: the source
# tree's, then the installed copy
harness_mxcts_probe_CPPFLAGS = $(HARNESS_CPPFLAGS) \
	-DMXCTS_SUITES_DATA_SRC='"$(abs_top_srcdir)/suites/data"' \
	-DMXCTS_SUITES_DATA_INSTALLED='"$(suitesdir)/data"'
harness_mxcts_probe_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
harness_mxcts_probe_LDADD = harness/oracle/liboracle.la harness/common/libmxcts_common.la \
	$(JANSSON_LIBS) -ldl -lm

# The Python probe (harness/probe/python): suites with a "python" script run
# it under an interpreter that imports mxnet; installed where an installed
# mxcts looks for it.
pyprobedir = $(pkgdatadir)/python
dist_pyprobe_DATA = harness/probe/python/mxcts_probe.py
