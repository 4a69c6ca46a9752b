#!/bin/sh
# The mutant patches of make check-mutants (TAP): every patch under
# harness/tests/mutants/ still applies to the tree, so a change to the code a
# mutant mutates is caught here and not only by the next check-mutants run;
# the runtime's source holds no planted bug; and check-mutants.sh refuses,
# naming the patch, a patch that no longer applies or whose header is wrong.
# Run from the top build directory (as `make check` does); $srcdir is the
# source tree.
set -u
srcdir=${srcdir:-.}
script=$srcdir/build-aux/check-mutants.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mxcts-mutants.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0

# shellcheck source=harness/tests/tap_util.sh
. "$srcdir/harness/tests/tap_util.sh"

echo "1..7"
ok "every mutant patch applies to the tree" sh "$script" --check-apply "$srcdir"
ok "the mutant patches are there (at least 30)" \
    sh -c "test \$(ls '$srcdir'/harness/tests/mutants/*.patch | wc -l) -ge 30"
status_is 1 "no planted-bug switch left in the runtime's source" \
    grep -rl "MXR_MUTANT\|getenv(\"MXR_" "$srcdir/ref/src"

# A patch against a line that is not in the tree is refused as stale.
mkdir -p "$tmp/stale" "$tmp/noname" "$tmp/nokill"
cat >"$tmp/stale/gone.patch" <<'PATCH'
Mutant: gone
Killed-by: engine/matches-serial-run

A line the tree no longer has.

--- a/ref/src/engine/var.c
+++ b/ref/src/engine/var.c
@@ -1,3 +1,3 @@
-this line is not in var.c
+nor this one
 nor this
 nor that
PATCH
status_is 2 "a stale patch is refused" env MUTANT_DIR="$tmp/stale" sh "$script" --check-apply "$srcdir"
cp "$tmp/last.out" "$tmp/stale.out"
ok "... naming it" grep -q "STALE *gone" "$tmp/stale.out"
sed 's/^Mutant: .*/Mutant: other/' "$srcdir/harness/tests/mutants/cap-off-by-one.patch" >"$tmp/noname/cap-off-by-one.patch"
status_is 2 "a patch whose header names another mutant is refused" \
    env MUTANT_DIR="$tmp/noname" sh "$script" --check-apply "$srcdir"
grep -v '^Killed-by:' "$srcdir/harness/tests/mutants/cap-off-by-one.patch" >"$tmp/nokill/cap-off-by-one.patch"
status_is 2 "a patch without Killed-by is refused" \
    env MUTANT_DIR="$tmp/nokill" sh "$script" --check-apply "$srcdir"
[ "$fails" -eq 0 ]
