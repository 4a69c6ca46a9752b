# The profiler (ref/src/profiler): Chrome-trace recording of engine ops,
# aggregate statistics, autostart.  Included from the top Makefile.am.
