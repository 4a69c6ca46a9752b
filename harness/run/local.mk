# Plans, running probe processes, result files and the progress line
# (harness/run), part of libmxcts.  Included from the top Makefile.am.

harness_libmxcts_la_SOURCES += \
	harness/run/run.h harness/run/run_internal.h harness/run/plan.c \
	harness/run/plan_load.c harness/run/progress.c harness/run/result.c \
	harness/run/runner.c
