# The reports of a results document: TAP, JUnit, JSON, HTML and the summary
# (harness/report), part of libmxcts.  Included from the top Makefile.am.

harness_libmxcts_la_SOURCES += \
	harness/report/report.h harness/report/report.c harness/report/report_tap.c \
	harness/report/report_junit.c harness/report/report_html.c harness/report/report_matrix.c \
	harness/report/report_diff.c
