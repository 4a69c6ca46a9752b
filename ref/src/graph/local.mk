# Symbolic graphs (ref/src/graph): symbols, inference, JSON.  Included from
# the top Makefile.am.

ref_libmxref_core_la_SOURCES += \
	ref/src/graph/graph.h \
	ref/src/graph/symbol.c \
	ref/src/graph/infer.c \
	ref/src/graph/inspect.c \
	ref/src/graph/json.c

mxrefinclude_HEADERS += ref/include/mxref/symbol.h

GRAPH_TESTS = ref/tests/test_symbol ref/tests/test_symbol_json
check_PROGRAMS += $(GRAPH_TESTS)
TESTS += $(GRAPH_TESTS)

ref_tests_test_symbol_SOURCES = ref/tests/test_symbol.c
ref_tests_test_symbol_CFLAGS = $(TEST_CFLAGS)
ref_tests_test_symbol_LDADD = $(TEST_LIBS)
ref_tests_test_symbol_json_SOURCES = ref/tests/test_symbol_json.c
ref_tests_test_symbol_json_CFLAGS = $(TEST_CFLAGS) $(JANSSON_CFLAGS)
ref_tests_test_symbol_json_LDADD = $(TEST_LIBS) $(JANSSON_LIBS)

# Symbol JSON: test data, fuzzer, seed corpus (docs/symbol-json.md).
EXTRA_DIST += \
	ref/tests/data/symbol_json \
	ref/tests/data/fuzz_symbol_json.dict \
	ref/tests/corpus/symbol_json \
	ref/tests/fuzz_symbol_json.c
