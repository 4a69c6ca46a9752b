#!/bin/sh
# Suites with a Python workload (TAP): the interpreter runs the suite's
# script in the config's environment, plus MXNET_LIBRARY_PATH naming the
# library under test and nothing inherited, and the script's result is
# judged like mxcts-probe's; a crash or a hang of the interpreter's process
# is a crash or timeout verdict; a missing interpreter or one that cannot
# import mxnet skips the suite with the reason.  fake_python.sh stands in
# for the interpreter and fake_probe for the script.  Run from the top
# build directory (as `make check` does); $srcdir is the source tree.
set -u
srcdir=${srcdir:-.}
mxcts=./harness/mxcts
fake=$PWD/harness/tests/fake_probe
fakepy=$(cd "$srcdir/harness/tests" && pwd)/fake_python.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mxcts-python.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0

# shellcheck source=harness/tests/tap_util.sh
. "$srcdir/harness/tests/tap_util.sh"

mkdir -p "$tmp/suites"
cat >"$tmp/suites/py.json" <<'JSON'
{"format": 1, "name": "py", "workload": "fake", "python": "fake_probe", "rounds": 2, "timeout": 1,
 "configs": [{"id": "ok", "env": {"FAKE_ID": "o", "PY_CONFIG_VAR": "seen"}},
             {"id": "crash", "env": {"FAKE_MODE": "crash"}},
             {"id": "hang", "env": {"FAKE_MODE": "hang"}}],
 "assertions": [{"id": "ok-checks", "type": "checks", "configs": ["ok"], "min": 2},
                {"id": "crash-checks", "type": "checks", "configs": ["crash"]},
                {"id": "hang-checks", "type": "checks", "configs": ["hang"]}]}
JSON
run_py() {
    out=$1; shift
    $mxcts run --suites "$tmp/suites" --probe "$fake" --impl "$fake" --seed 5 --out "$tmp/$out" \
        --lock-file "$tmp/lock" --python-dir "$PWD/harness/tests" --no-progress --grace 0.2 \
        --tap "$tmp/$out.tap" "$@"
}
echo "TAP version 13"
echo "1..9"
status_is 1 "a Python suite runs; crash and hang fail the run" \
    env PY_STRAY=1 "$mxcts" run --suites "$tmp/suites" --probe "$fake" --impl "$fake" --seed 5 --out "$tmp/o1" \
    --lock-file "$tmp/lock" --python-dir "$PWD/harness/tests" --python "$fakepy" --no-progress --grace 0.2 \
    --tap "$tmp/o1.tap"
ok "the script ran under the interpreter with --probe and wrote its result" \
    sh -c "grep -A5 ' - py/ok-checks' '$tmp/o1.tap' | grep -q 'verdict: \"pass\"' &&
           grep -q '\"fake_probe_arg\": \"$fake\"' '$tmp/o1/py/ok/r001/result.json'"
ok "the process got the config's variables and MXNET_LIBRARY_PATH, and nothing else" \
    sh -c "r='$tmp/o1/py/ok/r002/result.json'; grep -q '\"PY_CONFIG_VAR\": \"seen\"' \"\$r\" &&
           grep -q '\"MXNET_LIBRARY_PATH\": \"$fake\"' \"\$r\" && ! grep -q PY_STRAY \"\$r\""
ok "a crashing interpreter process is a crash, named" \
    sh -c "grep -A5 ' - py/crash-checks' '$tmp/o1.tap' | grep -q 'verdict: \"crash\"' && grep -q 'SIGSEGV' '$tmp/o1.tap'"
ok "a hanging one is a timeout" \
    sh -c "grep -A5 ' - py/hang-checks' '$tmp/o1.tap' | grep -q 'verdict: \"timeout\"'"
status_is 0 "no interpreter: the suite is skipped, not failed" \
    run_py o2 --python /nonexistent/python3
ok "the skip names the missing interpreter" \
    grep -q "^ok 1 - py/ok-checks # SKIP no Python interpreter: /nonexistent/python3 is not an executable file" "$tmp/o2.tap"
status_is 0 "an interpreter that cannot import mxnet: skipped" \
    env FAKE_PY_IMPORT=fail MXCTS_PYTHON="$fakepy" "$mxcts" run --suites "$tmp/suites" --probe "$fake" \
    --impl "$fake" --seed 5 --out "$tmp/o3" --lock-file "$tmp/lock" --python-dir "$PWD/harness/tests" \
    --no-progress --pass-env FAKE_PY_IMPORT --tap "$tmp/o3.tap"
ok "the skip says why, in Python's words, and no process of the suite ran" \
    sh -c "grep -q \"^ok 1 - py/ok-checks # SKIP .*fake_python.sh cannot import mxnet with MXNET_LIBRARY_PATH=.*No module named 'mxnet'\" '$tmp/o3.tap' &&
           ! test -d '$tmp/o3/py'"
[ "$n" -eq 9 ] || echo "# ran $n tests, planned 9"
exit 0
