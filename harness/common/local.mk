# What every part of the harness shares (harness/common).  Included from the
# top Makefile.am.  Two libraries, so that the oracle links no Jansson:
# libmxcts_common (common.h: errors, memory, strings, files, names, the
# splitmix64 RNG, the monotonic clock, binomial tails and the SPRT) and libmxcts_json
# (jsonv.h: loading, saving and validating JSON documents).

noinst_LTLIBRARIES += harness/common/libmxcts_common.la harness/common/libmxcts_json.la
harness_common_libmxcts_common_la_SOURCES = \
	harness/common/common.h harness/common/common.c harness/common/stats.c \
	harness/common/sprt.c harness/common/capi_needs.h harness/common/capi_needs.c \
	harness/common/workloads.h
harness_common_libmxcts_common_la_CPPFLAGS = $(HARNESS_CPPFLAGS)
harness_common_libmxcts_common_la_LIBADD = -lm

harness_common_libmxcts_json_la_SOURCES = \
	harness/common/jsonv.h harness/common/jsonv.c
harness_common_libmxcts_json_la_CPPFLAGS = $(HARNESS_CPPFLAGS)
harness_common_libmxcts_json_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
harness_common_libmxcts_json_la_LIBADD = $(JANSSON_LIBS)
