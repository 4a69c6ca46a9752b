# TAP helpers for the harness's shell tests (sourced).  The caller sets
# $tmp (a scratch directory) and starts n=0 and fails=0.
#
#   ok DESCRIPTION COMMAND...            the command must succeed
#   status_is WANT DESCRIPTION COMMAND...  it must exit with WANT
#
# Each prints one TAP line, numbered on from $n, and on failure the first 20
# lines of the command's output as TAP comments; $tmp/last.out keeps that
# output for the next step.

ok() {
    desc=$1; shift
    n=$((n + 1))
    if "$@" >"$tmp/last.out" 2>&1; then echo "ok $n - $desc"
    else echo "not ok $n - $desc"; sed 's/^/# /' "$tmp/last.out" | head -20; fails=$((fails + 1)); fi
}

status_is() {
    want=$1 desc=$2; shift 2
    n=$((n + 1))
    "$@" >"$tmp/last.out" 2>&1
    got=$?
    if [ "$got" -eq "$want" ]; then echo "ok $n - $desc (exit $got)"
    else echo "not ok $n - $desc: exit $got, expected $want"; sed 's/^/# /' "$tmp/last.out" | head -20
         fails=$((fails + 1)); fi
}
