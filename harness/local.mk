# The conformance harness (harness/, suites/): mxcts, mxcts-probe, the
# oracle, their unit tests, the man page.  Included from the top
# Makefile.am, before the fragments of harness/*/ (see docs/harness.md).
#
# One folder per part, each with its local.mk and one public header:
#   common/  errors, memory, strings, files, RNG, clock, statistics
#            (libmxcts_common, no Jansson) and the JSON helpers (libmxcts_json)
#   suite/   suite and expectation files
#   run/     plans, running probe processes, result files
#   session/ a whole run, judged batch by batch
#   judge/   verdicts
#   report/  TAP, JUnit, JSON and HTML reports
#   compare/ performance A/B between implementations (mxcts compare)
#   cli/     the mxcts program, mxcts-parallel, the man page
#   probe/   mxcts-probe
#   oracle/  the float64 oracle of the numerics suite
#   networks/ seed 004's networks (netgen.py) and their reference outputs
#   tests/   unit tests, mock implementations, the conformance runs
#
# Includes are written relative to harness/ ("run/run.h"), and the harness
# sees only the public headers of ref/ (ref/include): it never links an
# implementation.

HARNESS_CPPFLAGS = -I$(top_srcdir)/harness -I$(top_srcdir)/ref/include -I$(top_builddir)

# mxcts's library: the parts of suite/, run/, judge/ and report/ (each
# appends its sources), with common/ inside it.
noinst_LTLIBRARIES += harness/libmxcts.la
harness_libmxcts_la_SOURCES =
harness_libmxcts_la_CPPFLAGS = $(HARNESS_CPPFLAGS)
harness_libmxcts_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
harness_libmxcts_la_LIBADD = harness/common/libmxcts_json.la harness/common/libmxcts_common.la \
	$(JANSSON_LIBS) -lm

# bin_PROGRAMS is set later in the top Makefile.am, so the harness programs
# get their own directory variable (the same place, $(bindir)).
harnessbindir = $(bindir)
harnessbin_PROGRAMS =
