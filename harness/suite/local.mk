# Suite files and expectation files (harness/suite), part of libmxcts.
# Included from the top Makefile.am.

harness_libmxcts_la_SOURCES += \
	harness/suite/suite.h harness/suite/suite_internal.h harness/suite/suite.c \
	harness/suite/suite_structure.c harness/suite/expect.c
