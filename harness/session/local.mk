# A whole run (harness/session): run the plan, judge, rerun failed orderings,
# judge again; part of libmxcts, above run/ and judge/.  Included from the top
# Makefile.am.

harness_libmxcts_la_SOURCES += harness/session/session.c harness/session/session.h
