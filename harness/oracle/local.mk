# The float64 oracle of the numerics suite (harness/oracle): a convenience
# library for mxcts-probe and its unit test.  Included from the top
# Makefile.am.  It depends on nothing in ref/ (docs/oracle.md) and not on
# Jansson: of common/ it uses libmxcts_common only (the RNG), which whatever
# links the oracle links too.

noinst_LTLIBRARIES += harness/oracle/liboracle.la
harness_oracle_liboracle_la_SOURCES = \
	harness/oracle/oracle.h harness/oracle/oracle_internal.h harness/oracle/oracle.c \
	harness/oracle/oracle_params.c harness/oracle/oracle_elemwise.c \
	harness/oracle/oracle_tensor.c harness/oracle/oracle_nn.c \
	harness/oracle/oracle_conv.c harness/oracle/oracle_cases.c harness/oracle/oracle_gen.c \
	harness/oracle/oracle_gen_nn.c
harness_oracle_liboracle_la_CPPFLAGS = $(HARNESS_CPPFLAGS)
harness_oracle_liboracle_la_LIBADD = -lm
