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

# The main job, the README's first command: every suite against the
# libmxref just built.  The suites with a Python workload (the seed's Gluon
# test) run in the environment ci/python-env.sh makes in python-env/ (MXNet
# 1.9.1's Python package from PyPI, once); where it cannot be made, they are
# skipped with the reason (--no-python).  MXCTS_RUN_FLAGS adds options
# (--suite NAME, --html F, ...).  Exit status: mxcts run's.
MXCTS_RUN_FLAGS =
python-env:
	$(SHELL) $(top_srcdir)/ci/python-env.sh "$(abs_top_builddir)/python-env" \
	  --wheels "$(abs_top_builddir)/mxnet-wheel/download"

run: all
	@rc=0; \
	$(SHELL) $(top_srcdir)/ci/python-env.sh "$(abs_top_builddir)/python-env" \
	  --wheels "$(abs_top_builddir)/mxnet-wheel/download" || rc=$$?; \
	if [ $$rc -eq 0 ]; then set -- --python "$(abs_top_builddir)/python-env/bin/python"; \
	elif [ -s python-env.why ]; then set -- --no-python "$$(cat python-env.why)"; \
	else set -- --no-python "ci/python-env.sh failed (exit $$rc; log: python-env.pip.log)"; fi; \
	./harness/mxcts run --impl ref/.libs/libmxref.so "$$@" $(MXCTS_RUN_FLAGS)

.PHONY: python-env run
