# The mxcts program, mxcts-parallel and the man page (harness/cli).
# Included from the top Makefile.am.  The program is built as
# harness/mxcts, beside harness/mxcts-probe, where scripts and the tests
# run it.

harnessbin_PROGRAMS += harness/mxcts
harness_mxcts_SOURCES = harness/cli/mxcts.c
harness_mxcts_CPPFLAGS = $(HARNESS_CPPFLAGS) \
	-DMXCTS_BUILDDIR='"$(abs_top_builddir)"' -DMXCTS_SRCDIR='"$(abs_top_srcdir)"' \
	-DMXCTS_LIBDIR='"$(libdir)"' -DMXCTS_PKGDATADIR='"$(pkgdatadir)"'
harness_mxcts_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
harness_mxcts_LDADD = harness/libmxcts.la $(JANSSON_LIBS) -lm

dist_bin_SCRIPTS = harness/cli/mxcts-parallel
dist_man1_MANS = harness/cli/man/mxcts.1
