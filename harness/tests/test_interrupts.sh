#!/bin/sh
# A run owns its results folder and survives interrupts (TAP): SIGINT,
# SIGTERM and SIGHUP of `mxcts run` kill its running probes, judge what
# finished, mark results.json "interrupted" and exit 4; `mxcts run --resume`
# runs only the rest; SIGKILL of mxcts takes its probe along (parent-death
# signal); a probe's setsid descendant does not outlive the run (child
# subreaper); a second run into a busy --out is refused, naming the holder;
# an old results.json is set aside, never reported as the new run's.
# Uses the fake probe.  Run from the top build directory.
set -u
srcdir=${srcdir:-.}
mxcts=$PWD/harness/mxcts
fake=$PWD/harness/tests/fake_probe
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mxcts-int.XXXXXX")
trap 'pkill -KILL -f "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
n=0
fails=0

# shellcheck source=harness/tests/tap_util.sh
. "$srcdir/harness/tests/tap_util.sh"

# Two untimed configs: "quick" ends at once, "held" sleeps until $tmp/go exists.
mkdir -p "$tmp/suites" "$tmp/pids"
cat >"$tmp/suites/held.json" <<JSON
{"format": 1, "name": "held", "workload": "fake", "rounds": 2, "timeout": 100,
 "configs": [{"id": "quick", "env": {"FAKE_PID_DIR": "$tmp/pids"}},
             {"id": "held", "env": {"FAKE_PID_DIR": "$tmp/pids", "FAKE_HANG_UNLESS": "$tmp/go"}}],
 "assertions": [{"id": "all", "type": "checks"}]}
JSON

# start_run OUT: mxcts run in the background, its pid in $run_pid.
start_run() {
    rm -f "$tmp/pids"/*
    $mxcts run --suites "$tmp/suites" --probe "$fake" --impl "$fake" --seed 3 --jobs 2 \
        --out "$1" --lock-file "$tmp/lock" --no-progress >"$1.log" 2>&1 &
    run_pid=$!
}

# wait_for COUNT: until COUNT probes have started (at most 20 s).
wait_for() {
    i=0
    while [ "$(ls "$tmp/pids" | grep -c '^[0-9]*$')" -lt "$1" ] && [ $i -lt 200 ]; do
        sleep 0.1; i=$((i + 1))
    done
}

# none_alive: no probe (or orphan) recorded in $tmp/pids still runs (a
# zombie has ended).
none_alive() {
    for f in "$tmp/pids"/*; do
        [ -e "$f" ] || continue
        pid=$(basename "$f" .orphan)
        if [ -r "/proc/$pid/stat" ] && ! awk '{exit ($3 == "Z") ? 0 : 1}' "/proc/$pid/stat"; then
            echo "# process $pid still runs"; return 1
        fi
    done
    return 0
}

# wait_exit: mxcts's exit status (it must end within 20 s).
wait_exit() {
    i=0
    while kill -0 "$run_pid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
    wait "$run_pid"
}

echo "TAP version 13"
plan=18
echo "1..$plan"
for sig in INT TERM HUP; do
    out="$tmp/o-$sig"
    start_run "$out"
    wait_for 2
    kill "-$sig" "$run_pid"
    wait_exit
    rc=$?
    ok "SIG$sig: mxcts exits 4 (interrupted)" test "$rc" -eq 4
    ok "SIG$sig: no probe outlives it" none_alive
    ok "SIG$sig: results.json is marked interrupted and says how to go on" sh -c \
        "grep -q '\"interrupted\": \"SIG$sig\"' '$out/results.json' && grep -q 'mxcts run --resume' '$out.log'"
done

# resume: the held processes run now; the quick ones are not run again
touch "$tmp/go"
before=$(ls "$tmp/o-INT"/held/quick/r00*/outcome.json | wc -l)
rm -f "$tmp/pids"/*
status_is 0 "run --resume finishes the interrupted run" $mxcts run --resume "$tmp/o-INT" --no-progress
ok "it ran only what had not finished" sh -c \
    "test $before -eq 2 && test \$(ls '$tmp/pids' | wc -l) -eq 2 && grep -q '\"status\": \"pass\"' '$tmp/o-INT/results.json'"
ok "the interrupted run's results.json was set aside" test -s "$tmp/o-INT/results.previous.json"
status_is 2 "run --resume takes no other option" $mxcts run --resume "$tmp/o-INT" --seed 4

# SIGKILL: the parent-death signal takes the probe along
rm -f "$tmp/go"
start_run "$tmp/o-KILL"
wait_for 2
kill -KILL "$run_pid"
wait "$run_pid" 2>/dev/null
sleep 0.5
ok "SIGKILL of mxcts: its probes die with it" none_alive

# a second run into a busy folder is refused, naming the holder
start_run "$tmp/o-busy"
wait_for 2
$mxcts run --suites "$tmp/suites" --probe "$fake" --impl "$fake" --out "$tmp/o-busy" \
    --lock-file "$tmp/lock" --no-progress >"$tmp/second.log" 2>&1
rc=$?
ok "a second run into a busy --out exits 2, naming the holder's pid" sh -c \
    "test $rc -eq 2 && grep -q 'in use by another mxcts (pid $run_pid)' '$tmp/second.log'"
kill -INT "$run_pid"
wait_exit

# a probe's setsid descendant is killed when the run ends
cat >"$tmp/suites/held.json" <<JSON
{"format": 1, "name": "held", "workload": "fake", "rounds": 1,
 "configs": [{"id": "orphan", "env": {"FAKE_PID_DIR": "$tmp/pids", "FAKE_ORPHAN": "1"}}],
 "assertions": [{"id": "all", "type": "checks"}]}
JSON
rm -f "$tmp/pids"/*
status_is 0 "a run whose probe leaves a setsid child passes" $mxcts run --suites "$tmp/suites" --probe "$fake" \
    --impl "$fake" --out "$tmp/o-orphan" --lock-file "$tmp/lock" --no-progress
ok "the probe left a setsid child" sh -c "ls '$tmp/pids' | grep -q orphan"
ok "it did not outlive the run" none_alive
[ "$n" -eq "$plan" ] || echo "# ran $n tests, planned $plan"
exit 0
