#!/bin/sh
# The conformance suites against the in-tree libmxref.so, reported as TAP.
# Run from the top build directory by `make check`, after every other test
# (see harness/probe/local.mk): the suites time work, and must not share the
# machine with other tests.
set -u
srcdir=${srcdir:-.}
out=harness/tests/conformance.out
rm -rf "$out"
# In a sanitizer build timings mean nothing: skip the orderings there.
expectations="$srcdir/suites/expectations/libmxref.txt"
if [ -n "${MXCTS_SANITIZERS:-}" ]; then
  expectations="$srcdir/harness/tests/sanitized-expectations.txt"
fi
# shellcheck source=harness/tests/conformance_util.sh
. "$srcdir/harness/tests/conformance_util.sh"
run_conformance ref/.libs/libmxref.so libmxref "$out" "$expectations"
