# From what a plan's processes left behind to a verdict per assertion
# (harness/judge), part of libmxcts.  Included from the top Makefile.am.

harness_libmxcts_la_SOURCES += \
	harness/judge/judge.h harness/judge/judge_internal.h harness/judge/judge.c \
	harness/judge/judge_eval.c
