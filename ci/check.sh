#!/usr/bin/env bash
# Run the checks CI runs, without Docker, from the repository root.
#
# usage: ci/check.sh [--full] [--sanitizers] [--distcheck] [--mxnet-matrix] [--peer] [--container] [--mutants] [--deep] [--skip-deps] [--skip-mxnet] [--build-dir DIR] [--count-results DIR STAMP] [-h|--help]
#
# Without options: the stages CI runs (deps, bootstrap, main, nocuda,
# mxnet), within CI's time on a 2-core machine.  --full (make check-full)
# adds every other stage: what engineers run before resolving an issue.
#
# Stages (each in its own build directory, relative to the repository root):
#   deps        ci/install-deps.sh
#   bootstrap   ./bootstrap
#   main        configure --enable-werror $CONFIGURE_FLAGS in DIR (default
#               _build-ci), make -j$MAKE_JOBS, make python-env (ci/python-env.sh:
#               MXNet 1.9.1's Python package, so that seed-gluon-bulking runs;
#               skipped with the reason when PyPI cannot be reached), make
#               -j$CHECK_JOBS check
#   nocuda      DIR-nocuda: configure --without-cuda, build everything, make
#               check-ops (the op tests; the registry test checks that no op
#               claims a GPU kernel): the CPU-only build that CI's CUDA build
#               cannot stand for (code under #ifdef MXR_HAVE_CUDA is not
#               compiled out there)
#   mxnet       make check-mxnet in DIR: the C API conformance program on MXNet
#               1.9.1's libmxnet.so, fetched from PyPI with pip; recorded as
#               skipped (not failed) when the wheel cannot be had here
# The stages of --full (each also on its own with its option):
#   mxnet-matrix  (--mxnet-matrix) make check-mxnet-matrix-untimed in DIR:
#               the untimed suites against every MXNet release of
#               ci/mxnet-matrix.sh (1.4.1 ... 1.9.1), wheels cached in
#               ~/.cache/mxcts/wheels; skipped when no wheel can be fetched
#   peer        (--peer) make check-peer in DIR (ci/check-peer.sh): MXNet
#               1.9.1's own Python tests on libmxref and on MXNet; skipped
#               when they cannot run here (no peer files, PyPI unreachable)
#   container   (--container) ci/check-container.sh --install-tools: the CPU
#               image on a debootstrap base, this script run inside it
#               offline; skipped where container tools cannot work
#   mutants     (--mutants) make check-mutants in DIR: every mutant patch
#               of harness/tests/mutants/ killed by its assertions
#   deep        (--deep) make run in DIR with --depth full: every suite, each
#               workload sweeping its whole generated parameter space
#               (results in DIR/deep-out)
#   tsan        (--sanitizers) DIR-tsan: --enable-sanitizers=thread, make check-engine
#   asan        (--sanitizers) DIR-asan: --enable-sanitizers=address,undefined, make check
#   distcheck   (--distcheck) make distcheck in DIR (configure flags passed on
#               through DISTCHECK_CONFIGURE_FLAGS)
#
#   --skip-deps        do not run ci/install-deps.sh
#   --skip-mxnet       do not run the mxnet and mxnet-matrix stages
#   --build-dir DIR    main build directory (also $BUILD_DIR)
#   --count-results DIR STAMP
#                      only print "N passed, N failed, N skipped" for the .trs
#                      files under DIR newer than the file STAMP, and exit
#
# Environment:
#   CONFIGURE_FLAGS  extra configure flags, whitespace separated (e.g.
#                    "--with-cuda=/usr/local/cuda --with-cudnn"); --enable-werror
#                    is always added.  CC, CFLAGS, ... reach configure as usual.
#   MAKE_JOBS        parallel jobs for building (default: nproc)
#   CHECK_JOBS       parallel jobs for running tests (default 1: timed tests
#                    must not run beside other work; also used for distcheck)
#
# When a stage fails, the summary of its test-suite.log and the .log of every
# failed test are printed.  Exit status: 0 when every stage passed, 1 when one
# failed, 2 on a usage error.
set -euo pipefail

usage() {
    echo "usage: ci/check.sh [--full] [--sanitizers] [--distcheck] [--mxnet-matrix] [--peer] [--container] [--mutants] [--deep] [--skip-deps] [--skip-mxnet] [--build-dir DIR] [--count-results DIR STAMP] [-h|--help]"
}

srcdir=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-_build-ci}
make_jobs=${MAKE_JOBS:-$(nproc 2>/dev/null || echo 2)}
check_jobs=${CHECK_JOBS:-1}
do_sanitizers=0
do_distcheck=0
do_deps=1
do_mxnet=1
do_matrix=0
do_peer=0
do_container=0
do_mutants=0
do_deep=0
count_args=()

while [ $# -gt 0 ]; do
    case $1 in
        --full) do_sanitizers=1; do_distcheck=1; do_matrix=1; do_peer=1; do_container=1; do_mutants=1; do_deep=1 ;;
        --sanitizers) do_sanitizers=1 ;;
        --distcheck) do_distcheck=1 ;;
        --mxnet-matrix) do_matrix=1 ;;
        --peer) do_peer=1 ;;
        --container) do_container=1 ;;
        --mutants) do_mutants=1 ;;
        --deep) do_deep=1 ;;
        --skip-deps) do_deps=0 ;;
        --skip-mxnet) do_mxnet=0; do_matrix=0 ;;
        --build-dir)
            [ $# -ge 2 ] || { usage >&2; exit 2; }
            build_dir=$2; shift ;;
        --build-dir=*) build_dir=${1#--build-dir=} ;;
        --count-results)
            [ $# -ge 3 ] || { usage >&2; exit 2; }
            count_args=("$2" "$3"); shift 2 ;;
        -h|--help) usage; awk 'NR > 4 && /^#/ { sub(/^# ?/, ""); print; next } NR > 4 { exit }' "$0"; exit 0 ;;
        *) usage >&2; echo "check.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

for n in "$make_jobs" "$check_jobs"; do
    case $n in
        ''|*[!0-9]*|0) echo "check.sh: MAKE_JOBS and CHECK_JOBS must be positive integers (got '$n')" >&2; exit 2 ;;
    esac
done

case $build_dir in
    /*) ;;
    *) build_dir=$srcdir/$build_dir ;;
esac

read -r -a configure_flags <<<"${CONFIGURE_FLAGS:-}"
configure_flags+=(--enable-werror)

log() { printf '\n=== check.sh: %s\n' "$*"; }
rel() { printf '%s' "${1#"$srcdir"/}"; }

# Print why a stage failed: the head of each test-suite.log written during
# the stage (the counts), then the full .log of each failed test.  Only files
# newer than the stage's stamp are read, so leftovers of older runs are ignored.
report_failures() {
    local dir=$1 stamp=$2 f found=0
    while IFS= read -r -d '' f; do
        log "$(rel "$f")"
        sed '/^\.\. contents::/,$d' "$f"
    done < <(find "$dir" -name test-suite.log -newer "$stamp" -print0 2>/dev/null | sort -z)
    while IFS= read -r -d '' f; do
        if grep -Eq '^:global-test-result: (FAIL|ERROR|XPASS)' "$f"; then
            found=1
            log "failed test log: $(rel "${f%.trs}.log")"
            if [ -f "${f%.trs}.log" ]; then
                cat "${f%.trs}.log"
            else
                echo "(no log file)"
            fi
        fi
    done < <(find "$dir" -name '*.trs' -newer "$stamp" -print0 2>/dev/null | sort -z)
    if [ "$found" -eq 0 ]; then
        echo "check.sh: no failed test logs under $(rel "$dir"); the make output above shows the error"
    fi
}

# "N passed, N failed, N skipped" over the .trs files written since the stamp.
# passed = PASS + XFAIL, failed = FAIL + XPASS + ERROR, skipped = SKIP.
count_results() {
    local dir=$1 stamp=$2
    find "$dir" -name '*.trs' -newer "$stamp" -exec cat {} + 2>/dev/null |
        awk '$1 == ":test-result:" {
                 if ($2 == "PASS" || $2 == "XFAIL") p++
                 else if ($2 == "SKIP") s++
                 else f++
             }
             END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'
}

if [ ${#count_args[@]} -gt 0 ]; then
    count_results "${count_args[@]}"
    exit 0
fi

# " (counts)" when tests ran since the stamp, else nothing.
count_if_any() {
    local c
    c=$(count_results "$1" "$2")
    case $c in "0 passed, 0 failed, 0 skipped") ;; *) echo " ($c)" ;; esac
}

configure_in() {
    local dir=$1; shift
    mkdir -p "$dir"
    log "configure in $(rel "$dir"): ${configure_flags[*]} $*"
    if ! (cd "$dir" && "$srcdir/configure" "${configure_flags[@]}" "$@"); then
        if [ -f "$dir/config.log" ]; then
            # The failing test is at the end of the log's first part, before
            # the dumps of cache variables, output variables and confdefs.h.
            log "configure failed; the end of config.log's test transcript"
            sed '/^## Cache variables/,$d' "$dir/config.log" | tail -n 50
        fi
        return 1
    fi
}

# Build the test programs with $make_jobs; `make check` then builds nothing and
# runs the tests with $check_jobs.
build_tests() {
    local dir=$1 progs
    # shellcheck disable=SC2016  # $(check_PROGRAMS) is for make
    progs=$(printf 'print-check-programs:\n\t@echo $(check_PROGRAMS)\n' |
        make -s --no-print-directory -C "$dir" -f Makefile -f - print-check-programs 2>/dev/null) || progs=""
    if [ -n "$progs" ]; then
        # shellcheck disable=SC2086  # a list of make targets
        make -C "$dir" -j"$make_jobs" $progs
    fi
}

declare -a stage_names=() stage_results=()
stage_start=$SECONDS
record() {
    stage_names+=("$1")
    stage_results+=("$2 [$((SECONDS - stage_start))s]")
    stage_start=$SECONDS
}

# run_stage NAME DIR TARGET [CONFIGURE ARGS...]
# Returns 0 on success, 1 when the tests failed, 2 when configure or the
# build failed.
run_stage() {
    local name=$1 dir=$2 target=$3 stamp; shift 3
    log "stage $name"
    stage_start=$SECONDS
    if ! configure_in "$dir" "$@"; then
        record "$name" "FAIL (configure)"
        return 2
    fi
    stamp="$dir/.check-stamp"
    touch "$stamp"
    log "make -j$make_jobs in $(rel "$dir")"
    if ! make -C "$dir" -j"$make_jobs" || ! build_tests "$dir"; then
        record "$name" "FAIL (build)"
        return 2
    fi
    if [ "$name" = main ] && ! python_env "$dir"; then
        record "$name" "FAIL (python-env)"
        return 2
    fi
    log "make -j$check_jobs $target in $(rel "$dir")"
    if make -C "$dir" -j"$check_jobs" "$target"; then
        record "$name" "ok ($(count_results "$dir" "$stamp"))"
        return 0
    fi
    report_failures "$dir" "$stamp"
    record "$name" "FAIL$(count_if_any "$dir" "$stamp")"
    return 1
}

# MXNet 1.9.1's Python package in DIR/python-env (ci/python-env.sh), where
# make check runs the suites with a Python workload; when it cannot be made
# here (offline) they are skipped, with the reason, and this succeeds.
python_env() {
    local dir=$1 rc=0
    log "make python-env in $(rel "$dir")"
    sh "$srcdir/ci/python-env.sh" "$dir/python-env" --wheels "$dir/mxnet-wheel/download" || rc=$?
    case $rc in
        0) return 0 ;;
        77) echo "check.sh: the suites with a Python workload will be skipped (reason above)"; return 0 ;;
        *) return 1 ;;
    esac
}

# The mxnet stage: fetch MXNet's wheel (ref/tests/capi_fetch_mxnet.sh exits
# 77 when it cannot be had here: offline, no pip, no wheel for this machine),
# then make check-mxnet.  Returns 0 when it passed or was skipped.
run_mxnet_stage() {
    local stamp rc=0
    log "stage mxnet"
    stage_start=$SECONDS
    stamp="$build_dir/.mxnet-stamp"
    touch "$stamp"
    sh "$srcdir/ref/tests/capi_fetch_mxnet.sh" "$build_dir/mxnet-wheel" || rc=$?
    if [ "$rc" -eq 77 ]; then
        echo "check.sh: mxnet stage skipped: MXNet's wheel cannot be fetched here (reason above)"
        record mxnet "skipped (MXNet's wheel cannot be fetched here)"
        return 0
    elif [ "$rc" -ne 0 ]; then
        record mxnet "FAIL (fetching MXNet's wheel)"
        return 1
    fi
    log "make check-mxnet in $(rel "$build_dir")"
    if make -C "$build_dir" check-mxnet; then
        record mxnet "ok ($(count_results "$build_dir" "$stamp"))"
        return 0
    fi
    report_failures "$build_dir" "$stamp"
    record mxnet "FAIL$(count_if_any "$build_dir" "$stamp")"
    return 1
}

# The mxnet-matrix stage: the untimed suites against every MXNet release
# (harness/tests/mxnet_matrix.sh, a skip when no wheel can be fetched).
run_matrix_stage() {
    local stamp
    log "stage mxnet-matrix"
    stage_start=$SECONDS
    stamp="$build_dir/.matrix-stamp"
    touch "$stamp"
    if make -C "$build_dir" check-mxnet-matrix-untimed; then
        record mxnet-matrix "ok ($(count_results "$build_dir" "$stamp"))"
        return 0
    fi
    report_failures "$build_dir" "$stamp"
    record mxnet-matrix "FAIL$(count_if_any "$build_dir" "$stamp")"
    return 1
}

# run_script_stage NAME COMMAND...: a stage that is one command, whose exit
# status says it all: 0 passed, 77 could not run here (skipped; the command
# printed why), 3 passed with orderings left inconclusive (mxcts run's
# status), anything else failed.  Returns 0 unless the stage failed.
run_script_stage() {
    local name=$1 rc=0
    shift
    log "stage $name"
    stage_start=$SECONDS
    "$@" || rc=$?
    case $rc in
        0) record "$name" "ok" ;;
        3) record "$name" "ok (some orderings inconclusive)" ;;
        77) record "$name" "skipped (reason above)" ;;
        *) record "$name" "FAIL (exit $rc; see above)"; return 1 ;;
    esac
}

# The peer stage: MXNet 1.9.1's own Python tests (ci/check-peer.sh).
run_peer_stage() {
    make -C "$build_dir" all >/dev/null || { record peer "FAIL (build)"; return 1; }
    run_script_stage peer bash "$srcdir/ci/check-peer.sh" "$(cd "$build_dir" && pwd)" "$(cd "$srcdir" && pwd)"
}

status=0
run_start=$SECONDS

if [ "$do_deps" -eq 1 ]; then
    log "stage deps"
    stage_start=$SECONDS
    if bash "$srcdir/ci/install-deps.sh"; then record deps ok; else record deps FAIL; exit 1; fi
fi

log "$(${CC:-cc} --version 2>/dev/null | head -n 1); make -j$make_jobs, tests -j$check_jobs; $(nproc) CPUs"

log "stage bootstrap"
stage_start=$SECONDS
if (cd "$srcdir" && ./bootstrap); then record bootstrap ok; else record bootstrap FAIL; exit 1; fi

main_rc=0
run_stage main "$build_dir" check || main_rc=$?
[ "$main_rc" -eq 0 ] || status=1

run_stage nocuda "$build_dir-nocuda" check-ops --without-cuda || status=1

if [ "$do_mxnet" -eq 1 ]; then
    if [ "$main_rc" -eq 2 ]; then
        record mxnet "not run (main build failed)"
    else
        run_mxnet_stage || status=1
    fi
fi

if [ "$do_matrix" -eq 1 ]; then
    if [ "$main_rc" -eq 2 ]; then
        record mxnet-matrix "not run (main build failed)"
    else
        run_matrix_stage || status=1
    fi
fi

if [ "$do_peer" -eq 1 ]; then
    if [ "$main_rc" -eq 2 ]; then
        record peer "not run (main build failed)"
    else
        run_peer_stage || status=1
    fi
fi

if [ "$do_container" -eq 1 ]; then
    run_script_stage container bash "$srcdir/ci/check-container.sh" --install-tools \
        --out "$build_dir/check-container" || status=1
fi

if [ "$do_mutants" -eq 1 ]; then
    if [ "$main_rc" -eq 2 ]; then
        record mutants "not run (main build failed)"
    else
        run_script_stage mutants make -C "$build_dir" check-mutants || status=1
    fi
fi

if [ "$do_deep" -eq 1 ]; then
    if [ "$main_rc" -eq 2 ]; then
        record deep "not run (main build failed)"
    else
        run_script_stage deep make -C "$build_dir" run \
            MXCTS_RUN_FLAGS="--depth full --no-progress --out deep-out" || status=1
    fi
fi

if [ "$do_sanitizers" -eq 1 ]; then
    if [ "$main_rc" -eq 2 ]; then
        record tsan "not run (main build failed)"
        record asan "not run (main build failed)"
    else
        export TSAN_OPTIONS=${TSAN_OPTIONS:-second_deadlock_stack=1}
        export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
        run_stage tsan "$build_dir-tsan" check-engine --enable-sanitizers=thread || status=1
        run_stage asan "$build_dir-asan" check --enable-sanitizers=address,undefined || status=1
    fi
fi

if [ "$do_distcheck" -eq 1 ]; then
    if [ "$main_rc" -eq 2 ]; then
        record distcheck "not run (main build failed)"
    else
        log "stage distcheck"
        stage_start=$SECONDS
        stamp="$build_dir/.distcheck-stamp"
        touch "$stamp"
        log "make -j$check_jobs distcheck in $(rel "$build_dir")"
        if make -C "$build_dir" -j"$check_jobs" distcheck \
                DISTCHECK_CONFIGURE_FLAGS="${configure_flags[*]}"; then
            record distcheck "ok$(count_if_any "$build_dir" "$stamp")"
        else
            report_failures "$build_dir" "$stamp"
            record distcheck "FAIL$(count_if_any "$build_dir" "$stamp")"
            status=1
        fi
    fi
fi

log "summary"
for i in "${!stage_names[@]}"; do
    printf '  %-12s %s\n' "${stage_names[$i]}" "${stage_results[$i]}"
done
printf '  %-12s %dm%02ds\n' total $(((SECONDS - run_start) / 60)) $(((SECONDS - run_start) % 60))
if [ "$status" -eq 0 ]; then
    echo "check.sh: all stages passed"
else
    echo "check.sh: FAILED"
fi
exit "$status"
