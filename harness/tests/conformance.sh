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
# The interpreter of Python workloads: $MXCTS_PYTHON when set (mxcts reads
# it), else the environment `make check-peer` made in this build tree; with
# neither, or without mxnet in it, those suites are skipped with the reason.
set --
if [ -z "${MXCTS_PYTHON:-}" ] && [ -x peer-venv/bin/python ]; then
  set -- --python "$PWD/peer-venv/bin/python"
fi
# Exit status 3 (no failure, some orderings inconclusive) is not a failure:
# the TAP stream shows those assertions as skips ("inconclusive"), never as
# passes.
./harness/mxcts run --impl ref/.libs/libmxref.so --impl-name libmxref \
  --probe ./harness/mxcts-probe --suites "$srcdir/suites" --out "$out" \
  --expectations "$expectations" --no-progress --tap - "$@"
rc=$?
if [ "$rc" -eq 3 ]; then rc=0; fi
exit "$rc"
