# Performance A/B between implementations (harness/compare): `mxcts
# compare`'s plans, interleaved runs, medians, ratios with their intervals,
# performance targets checked against them, and its text and HTML tables;
# part of libmxcts, above run/.  Included from the top Makefile.am.

harness_libmxcts_la_SOURCES += harness/compare/compare.h harness/compare/compare.c \
	harness/compare/targets.c harness/compare/compare_print.c
