#!/usr/bin/env bash
# The GPU run kit: prove libmxref's GPU half on a GPU host, from a `make dist`
# tarball, without autotools or network.  docs/gpu-run-kit.md is the manual.
#
# usage: ci/gpu-run-kit.sh [options] TARBALL|SRCDIR
#        ci/gpu-run-kit.sh --fetch-debs DIR
#
# Stages, in order of value, each under its own time budget (timeout):
#   build     configure --with-cuda --enable-werror (cuDNN when found), make
#   info      mxr-info: the build's features and the GPUs it sees
#   test      make check TESTS=ref/tests/test_gpu
#   suites    harness/mxcts run of the six gpu-* suites
#   bench     bench/gpu_bench --check (each target one result)
#   nocudnn   a second build, --without-cudnn, and its test_gpu
#   sanitize  compute-sanitizer memcheck, then racecheck, on every process
#             mxcts plans for one round of gpu-numerics and gpu-parity;
#             skipped with a message when compute-sanitizer is absent or
#             nothing is planned (no GPU)
#
#   --no-gpu          rehearsal on a machine without a GPU: the GPU tests
#                     skip; without it a host that shows no GPU is a failure
#   --out DIR         results (default: $OUT, else ./gpu-kit-out)
#   --work DIR        unpack and build here (default ${TMPDIR:-/tmp}/mxcts-gpu-kit);
#                     a later run with the same tarball reuses a finished build
#   --debs DIR        .deb files carried from --fetch-debs, used for each
#                     library (jansson, check, OpenBLAS) the system lacks
#   --use-debs        use the carried .debs for all three libraries, even
#                     where the system has them
#   --stages LIST     comma-separated subset of the stages (default: all);
#                     build runs too when a chosen stage needs it and the
#                     work directory holds no finished build
#   --budget S=SECS   a stage's time budget (repeatable); defaults: build 420,
#                     info 60, test 180, suites 600, bench 240, nocudnn 480,
#                     sanitize 900
#   --total SECS      stop starting stages after SECS in all; each stage's
#                     budget is cut to what is left (a stage that cannot start
#                     is reported "not reached" and counted failed)
#   --jobs N          make -j (default: nproc)
#   --cuda DIR        the toolkit (default: $CUDA_HOME, /usr/local/cuda, nvcc's)
#   --cudnn auto|no|DIR  cuDNN (default auto: the toolkit's or /usr/include's
#                     cudnn.h, else the nvidia-cudnn Python package)
#   --sanitize-suites LIST  the suites whose processes the sanitizer runs
#                     (default gpu-numerics,gpu-parity; a CPU suite such as
#                     numerics tries the stage on a machine without a GPU)
#   --fetch-debs DIR  run where apt works (not on the GPU host): download the
#                     .deb files of the libraries into DIR, then exit
#
# Results in --out, at most 8 files and no folders: summary.txt (one line a
# stage and the counts; rewritten after every stage), nvidia-smi.txt,
# test_gpu.tap, conformance.tap, junit.xml, results.json, gpu_bench.txt and
# logs.tar.gz (build logs, config.log, every test log and .trs, mxcts' run
# directory, mxr-info, the sanitizer reports).  The last line printed is
# "N passed, N failed, N skipped": test_gpu's TAP results (both builds),
# the gpu-* suites' assertions, gpu_bench's targets, and one result for each
# other check.  Exit status: 0 when nothing failed, 1 when something failed
# or was not reached, 2 on a usage error or bad input.
set -euo pipefail

kit_dir=$(cd "$(dirname "$0")" && pwd)

usage() {
    echo "usage: ci/gpu-run-kit.sh [--no-gpu] [--out DIR] [--work DIR] [--debs DIR] [--stages LIST]"
    echo "                         [--budget STAGE=SECS]... [--total SECS] [--jobs N] [--cuda DIR]"
    echo "                         [--cudnn auto|no|DIR] [--use-debs] [--sanitize-suites LIST] TARBALL|SRCDIR"
    echo "       ci/gpu-run-kit.sh --fetch-debs DIR"
}
die() { echo "gpu-run-kit: $*" >&2; exit 2; }

ALL_STAGES=(build info test suites bench nocudnn sanitize)
GPU_SUITES=(gpu-bulking-symbolic gpu-bulking-cachedop gpu-async gpu-cuda-graphs gpu-numerics gpu-parity)
# The libraries the build needs that a CUDA image may lack, as Debian 12
# packages (runtime, development files, and what they load).
DEBS=(libjansson4 libjansson-dev check libsubunit0 libsubunit-dev
      libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libquadmath0)
declare -A budget=([build]=420 [info]=60 [test]=180 [suites]=600 [bench]=240
                   [nocudnn]=480 [sanitize]=900)

no_gpu=0 use_debs=0 out=${OUT:-} work=${TMPDIR:-/tmp}/mxcts-gpu-kit debs="" stages="" total=0
jobs=$(nproc 2>/dev/null || echo 2) cuda="" cudnn=auto fetch="" input=""
sanitize_suites="gpu-numerics,gpu-parity"
while [ $# -gt 0 ]; do
    case $1 in
        --no-gpu) no_gpu=1 ;;
        --use-debs) use_debs=1 ;;
        --out|--work|--debs|--stages|--budget|--total|--jobs|--cuda|--cudnn|--fetch-debs|--sanitize-suites)
            [ $# -ge 2 ] || { usage >&2; die "$1 needs a value"; }
            case $1 in
                --out) out=$2 ;; --work) work=$2 ;; --debs) debs=$2 ;;
                --stages) stages=$2 ;; --total) total=$2 ;; --jobs) jobs=$2 ;;
                --cuda) cuda=$2 ;; --cudnn) cudnn=$2 ;; --fetch-debs) fetch=$2 ;;
                --sanitize-suites) sanitize_suites=$2 ;;
                --budget)
                    [[ $2 =~ ^([a-z]+)=([0-9]+)$ ]] && [ -n "${budget[${BASH_REMATCH[1]}]:-}" ] ||
                        die "--budget takes STAGE=SECONDS with STAGE one of ${ALL_STAGES[*]} (got '$2')"
                    budget[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]} ;;
            esac
            shift ;;
        -h|--help) usage; sed -n '7,56s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -*) usage >&2; die "unknown option: $1" ;;
        *) [ -z "$input" ] || { usage >&2; die "one TARBALL or SRCDIR only (got '$input' and '$1')"; }
           input=$1 ;;
    esac
    shift
done
for n in "$total" "$jobs"; do
    [[ $n =~ ^[0-9]+$ ]] || die "--total and --jobs take whole numbers (got '$n')"
done
[ "$jobs" -gt 0 ] || die "--jobs must be positive"

# --fetch-debs: download here, where apt works, for the GPU host.
if [ -n "$fetch" ]; then
    [ -z "$input" ] || die "--fetch-debs takes no TARBALL"
    command -v apt-get >/dev/null || die "--fetch-debs needs apt-get (Debian or Ubuntu)"
    mkdir -p "$fetch"
    (cd "$fetch" && apt-get download "${DEBS[@]}") || die "apt-get download ${DEBS[*]} failed (try apt-get update)"
    echo "gpu-run-kit: $(ls "$fetch"/*.deb | wc -l) .deb files in $fetch ($(du -sh "$fetch" | cut -f1))"
    exit 0
fi

[ -n "$input" ] || { usage >&2; die "no TARBALL or SRCDIR given"; }
[ -e "$input" ] || die "no such tarball or source tree: $input"
if [ -n "$stages" ]; then
    IFS=, read -r -a chosen <<<"$stages"
    for s in "${chosen[@]}"; do
        [ -n "${budget[$s]:-}" ] || die "--stages: unknown stage '$s' (stages: ${ALL_STAGES[*]})"
    done
else
    chosen=("${ALL_STAGES[@]}")
fi
wanted() { [[ " ${chosen[*]} " == *" $1 "* ]]; }

# The toolkit: nvcc is required, even for a rehearsal (the kit proves the
# CUDA build).
if [ -z "$cuda" ]; then
    if [ -n "${CUDA_HOME:-}" ]; then cuda=$CUDA_HOME
    elif [ -x /usr/local/cuda/bin/nvcc ]; then cuda=/usr/local/cuda
    elif command -v nvcc >/dev/null; then cuda=$(dirname "$(dirname "$(command -v nvcc)")")
    fi
fi
[ -n "$cuda" ] && [ -x "$cuda/bin/nvcc" ] ||
    die "nvcc not found (--cuda DIR, \$CUDA_HOME, /usr/local/cuda, PATH): the kit builds the CUDA half"
for tool in make cc tar; do
    command -v "$tool" >/dev/null || die "'$tool' not found on this host"
done
export PATH=$cuda/bin:$PATH

[ -n "$out" ] || out=./gpu-kit-out
mkdir -p "$out" "$work/logs"
out=$(cd "$out" && pwd) work=$(cd "$work" && pwd)
logs=$work/logs
rm -f "$out"/{summary.txt,nvidia-smi.txt,test_gpu.tap,conformance.tap,junit.xml,results.json,gpu_bench.txt,logs.tar.gz}

# ---------------------------------------------------------------------------
# Bookkeeping: one line a stage, counts, the summary file, the logs archive.

t0=$SECONDS passed=0 failed=0 skipped=0
declare -a lines=()
add() { passed=$((passed + $1)) failed=$((failed + $2)) skipped=$((skipped + $3)); }
counts() { echo "$passed passed, $failed failed, $skipped skipped"; }
note() { lines+=("$(printf '  %-10s %s' "$1" "$2")"); echo "gpu-run-kit: $1: $2"; }
pack() {
    {
        echo "mxcts GPU run kit: $(date -u +%FT%TZ), $(hostname), source $src_label"
        echo "flags: no_gpu=$no_gpu jobs=$jobs cuda=$cuda cudnn=$cudnn_desc deps=$deps_desc"
        printf '%s\n' "${lines[@]}"
        counts
    } >"$out/summary.txt"
    local parts=(logs) p
    for p in build/config.log build-nocudnn/config.log mxcts-out sanitize-plan \
             {build,build-nocudnn}/ref/tests/test_gpu.{log,trs} {build,build-nocudnn}/test-suite.log; do
        [ -e "$work/$p" ] && parts+=("$p")
    done
    # Profiler traces are large and repeat what results.json says.
    tar -C "$work" -czf "$out/logs.tar.gz" --exclude='*/profile/*' --exclude='*.json.gz' "${parts[@]}" 2>/dev/null ||
        echo "gpu-run-kit: packing the logs failed" >&2
    if [ "$(stat -c %s "$out/logs.tar.gz" 2>/dev/null || echo 0)" -gt $((15 * 1024 * 1024)) ]; then
        tar -C "$work" -czf "$out/logs.tar.gz" logs || echo "gpu-run-kit: packing the logs failed" >&2
        echo "gpu-run-kit: logs.tar.gz over 15 MiB; mxcts-out left out" >&2
    fi
}

# stage_begin NAME: sets stage_end, or returns 1 (reported) when --total
# leaves too little time to start it.
stage_begin() {
    local b=${budget[$1]} left
    stage_t0=$SECONDS
    if [ "$total" -gt 0 ]; then
        left=$((total - (SECONDS - t0)))
        if [ "$left" -lt 20 ]; then
            note "$1" "FAIL not reached (--total $total: ${left}s left)"; add 0 1 0; return 1
        fi
        [ "$b" -le "$left" ] || b=$left
    fi
    stage_end=$((SECONDS + b)) stage_budget=$b
    rm -rf "${logs:?}/$1.log" "$logs/$1"-*.log "${logs:?}/$1"
    echo "gpu-run-kit: === $1 (budget ${b}s)"
}
took() { echo "[$((SECONDS - stage_t0))s/${stage_budget}s]"; }
# within LOG CMD...: run CMD under what is left of the stage's budget,
# appending its output to LOG.  124 is a timeout.
within() {
    local log=$1 left=$((stage_end - SECONDS)); shift
    [ "$left" -gt 0 ] || return 124
    echo "+ $*" >>"$log"
    timeout -k 10 "$left" "$@" >>"$log" 2>&1 </dev/null
}
why() { case $1 in 124|137) echo "timeout" ;; *) echo "exit $1" ;; esac; }

# ---------------------------------------------------------------------------
# Source: a tarball (unpacked once per checksum) or an unpacked tree.

if [ -f "$input" ]; then
    sum=$(sha256sum "$input" | cut -c1-16)
    src_label="$(basename "$input") ($sum)"
    if [ "$(cat "$work/src.sum" 2>/dev/null)" != "$sum" ]; then
        rm -rf "$work/src" "$work/build" "$work/build-nocudnn" "$work/src.sum"
        mkdir -p "$work/src"
        tar -C "$work/src" --strip-components=1 -xzf "$input" || die "cannot unpack $input"
        echo "$sum" >"$work/src.sum"
    fi
    src=$work/src
elif [ -d "$input" ]; then
    src=$(cd "$input" && pwd) src_label=$src
else
    die "$input is neither a tarball nor a directory"
fi
[ -x "$src/configure" ] ||
    die "$src has no configure script: give a 'make dist' tarball (or run ./bootstrap in a checkout)"

# ---------------------------------------------------------------------------
# Dependencies: the system's when pkg-config (or, for OpenBLAS, a link test)
# finds them, else the carried .debs unpacked into a prefix.

deps_desc=system
conf_env=()
missing=()
sys_has() { [ "$use_debs" -eq 0 ] && command -v pkg-config >/dev/null && pkg-config --exists "$1"; }
sys_has jansson || missing+=(jansson)
sys_has check || missing+=(check)
if ! sys_has openblas && { [ "$use_debs" -eq 1 ] ||
   ! printf '#include <cblas.h>\nint main(void){return 0;}\n' | cc -x c - -o /dev/null -lopenblas 2>/dev/null; }; then
    missing+=(openblas)
fi
if [ ${#missing[@]} -gt 0 ]; then
    [ -n "$debs" ] || die "the system lacks ${missing[*]}, and no --debs DIR was given (make one with --fetch-debs DIR where apt works)"
    [ -d "$debs" ] && compgen -G "$debs/*.deb" >/dev/null || die "--debs $debs: no .deb files there"
    prefix=$work/deps
    debs_sum=$(cd "$debs" && sha256sum ./*.deb | sha256sum | cut -c1-16)
    if [ "$(cat "$prefix/.kit-debs" 2>/dev/null)" != "$debs_sum" ]; then
        rm -rf "$prefix" && mkdir -p "$prefix"
        for d in "$debs"/*.deb; do
            dpkg-deb -x "$d" "$prefix" || die "cannot unpack $d (dpkg-deb -x)"
        done
        echo "$debs_sum" >"$prefix/.kit-debs"
    fi
    lib=$prefix/usr/lib/x86_64-linux-gnu inc=$prefix/usr/include
    for m in "${missing[@]}"; do
        case $m in
            jansson) f=$lib/libjansson.so
                     conf_env+=("JANSSON_CFLAGS=-I$inc" "JANSSON_LIBS=-L$lib -ljansson") ;;
            check)   f=$lib/libcheck_pic.a
                     conf_env+=("CHECK_CFLAGS=-I$inc -pthread" "CHECK_LIBS=-L$lib -lcheck_pic -lsubunit -lrt -lm") ;;
            openblas) f=$lib/openblas-pthread/libopenblas.so
                     conf_env+=("OPENBLAS_CFLAGS=-I$inc/x86_64-linux-gnu/openblas-pthread"
                                "OPENBLAS_LIBS=-L$lib/openblas-pthread -lopenblas") ;;
        esac
        [ -e "$f" ] || die "--debs $debs: $m is missing there (no $f after unpacking)"
    done
    conf_env+=("LDFLAGS=${LDFLAGS:-} -Wl,-rpath-link,$lib")
    export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    deps_desc="carried for ${missing[*]} ($prefix)"
fi

# cuDNN: the toolkit's or /usr/include's header, else the nvidia-cudnn
# Python package (PyTorch's), seen through a folder of links that gives
# configure the DIR layout it wants (include/, lib/libcudnn.so).
cudnn_flag=() cudnn_desc=$cudnn cudnn_missing=""
case $cudnn in
    no) cudnn_flag=(--without-cudnn) ;;
    auto)
        if [ -f "$cuda/include/cudnn.h" ] || [ -f /usr/include/cudnn.h ]; then
            cudnn_flag=(--with-cudnn) cudnn_desc="auto: system"
        elif pkg=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null) &&
             [ -f "$pkg/include/cudnn.h" ] && compgen -G "$pkg/lib/libcudnn.so.*" >/dev/null; then
            shim=$work/cudnn
            rm -rf "$shim" && mkdir -p "$shim/lib"
            ln -s "$pkg/include" "$shim/include"
            for f in "$pkg"/lib/libcudnn*.so*; do ln -s "$f" "$shim/lib/"; done
            so=$(cd "$shim/lib" && ls libcudnn.so.* | sort | head -n 1)
            ln -sf "$so" "$shim/lib/libcudnn.so"
            cudnn_flag=(--with-cudnn="$shim") cudnn_desc="auto: $pkg"
        else
            cudnn_flag=(--without-cudnn) cudnn_desc="auto: none found"
            cudnn_missing="no cudnn.h in $cuda/include or /usr/include, and no nvidia.cudnn Python package"
        fi ;;
    *) [ -d "$cudnn" ] || die "--cudnn $cudnn: no such directory"
       cudnn_flag=(--with-cudnn="$(cd "$cudnn" && pwd)") ;;
esac

# ---------------------------------------------------------------------------
# Stages.

# configure_and_make DIR LOG FLAGS...: returns configure's or make's status.
configure_and_make() {
    local dir=$1 log=$2 rc=0; shift 2
    rm -f "$dir/.kit-built"
    mkdir -p "$dir"
    (cd "$dir" && within "$log" env "${conf_env[@]}" "$src/configure" --with-cuda="$cuda" --enable-werror "$@") || rc=$?
    if [ "$rc" -ne 0 ]; then
        [ -f "$dir/config.log" ] && { echo "--- config.log, end of the transcript:"; sed '/^## Cache variables/,$d' "$dir/config.log" | tail -n 30; } >>"$log"
        echo "configure $(why "$rc")"; return "$rc"
    fi
    within "$log" make -C "$dir" -j"$jobs" || { rc=$?; echo "make $(why "$rc")"; return "$rc"; }
    printf '%s\n' "$src $*" >"$dir/.kit-built"
}

# run_test_gpu DIR LOG: make check TESTS=ref/tests/test_gpu, counted from its
# .trs files (ci/check.sh --count-results); sets test_result.
run_test_gpu() {
    local dir=$1 log=$2 rc=0 c p f s
    touch "$work/.stamp"
    within "$log" make -C "$dir" check TESTS=ref/tests/test_gpu check_PROGRAMS=ref/tests/test_gpu || rc=$?
    c=$(bash "$kit_dir/check.sh" --count-results "$dir" "$work/.stamp")
    read -r p _ f _ s _ <<<"$c"
    if [ $((p + f + s)) -eq 0 ]; then
        add 0 1 0; test_result="FAIL (no TAP result: make check $(why "$rc"))"
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        add "$p" 1 "$s"; test_result="FAIL ($c; make check $(why "$rc"))"
    elif [ "$f" -eq 0 ]; then
        add "$p" "$f" "$s"; test_result="ok ($c)"
    else
        add "$p" "$f" "$s"; test_result="FAIL ($c)"
    fi
}

build=$work/build
built=0
[ "$(cat "$build/.kit-built" 2>/dev/null)" = "$src ${cudnn_flag[*]}" ] && built=1
needs_build=0
for s in info test suites bench sanitize; do wanted "$s" && needs_build=1; done

# The GPU itself.
gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >"$out/nvidia-smi.txt" 2>&1 && grep -q '^GPU ' "$out/nvidia-smi.txt"; then
    nvidia-smi >>"$out/nvidia-smi.txt" 2>&1 || true
    gpu=1
else
    command -v nvidia-smi >/dev/null || echo "nvidia-smi: not found" >"$out/nvidia-smi.txt"
fi
if [ "$gpu" -eq 1 ]; then
    note gpu "ok ($(grep -c '^GPU ' "$out/nvidia-smi.txt") visible: $(sed -n '1s/ (UUID.*//p' "$out/nvidia-smi.txt"))"; add 1 0 0
elif [ "$no_gpu" -eq 1 ]; then
    note gpu "skipped (--no-gpu: none visible; every GPU test skips)"; add 0 0 1
else
    note gpu "FAIL no GPU visible (nvidia-smi.txt); --no-gpu for a rehearsal"; add 0 1 0
fi
[ -z "$cudnn_missing" ] || { note cudnn "FAIL $cudnn_missing (--cudnn DIR, or --cudnn no)"; add 0 1 0; }
pack

# 1. build
if wanted build || { [ "$needs_build" -eq 1 ] && [ "$built" -eq 0 ]; }; then
    if stage_begin build; then
        if r=$(configure_and_make "$build" "$logs/build.log" "${cudnn_flag[@]}"); then
            built=1; note build "ok $(took) (${cudnn_flag[*]})"; add 1 0 0
        else
            built=0; note build "FAIL $r $(took) (logs/build.log)"; add 0 1 0
        fi
    fi
elif [ "$built" -eq 1 ] && [ "$needs_build" -eq 1 ]; then
    note build "reused ($build: $(cat "$build/.kit-built"))"
fi
pack

# gate NAME [build]: whether to run stage NAME now (chosen, built when it
# needs the build, and time left); reports why not.
gate() {
    wanted "$1" || return 1
    if [ "${2:-}" = build ] && [ "$built" -eq 0 ]; then
        note "$1" "skipped (no build)"; add 0 0 1; return 1
    fi
    stage_begin "$1"
}

# 2. mxr-info
if gate info build; then
    rc=0
    within "$logs/info.log" "$build/ref/tools/mxr-info" --env || rc=$?
    if [ "$rc" -eq 0 ]; then
        note info "ok $(took): $(grep -E '^(CUDA|cuDNN|GPUs):' "$logs/info.log" | tr -s ' \n' ' ')"; add 1 0 0
    else
        note info "FAIL $(why "$rc") $(took) (logs/info.log)"; add 0 1 0
    fi
    pack
fi

# 3. test_gpu
if gate test build; then
    run_test_gpu "$build" "$logs/test.log"
    note test "$test_result $(took)"
    cp "$build/ref/tests/test_gpu.log" "$out/test_gpu.tap" 2>/dev/null || true
    pack
fi

# mxcts' summary counts from a results.json: passed = pass + xfail,
# failed = fail + crash + timeout + error + xpass, skipped = skip.
mxcts_counts() {
    python3 - "$1" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print(s["pass"] + s["xfail"], s["fail"] + s["crash"] + s["timeout"] + s["error"] + s["xpass"], s["skip"] + s.get("inconclusive", 0))
EOF
}

# 4. the gpu-* suites
if gate suites build; then
    rm -rf "$work/mxcts-out"
    suite_args=()
    for s in "${GPU_SUITES[@]}"; do suite_args+=(--suite "$s"); done
    rc=0
    within "$logs/suites.log" "$build/harness/mxcts" run --impl "$build/ref/.libs/libmxref.so" \
        --suites "$src/suites" "${suite_args[@]}" --out "$work/mxcts-out" \
        --tap "$out/conformance.tap" --junit "$out/junit.xml" --no-progress || rc=$?
    cp "$work/mxcts-out/results.json" "$out/results.json" 2>/dev/null || true
    if [ -f "$work/mxcts-out/results.json" ] && c=$(mxcts_counts "$work/mxcts-out/results.json"); then
        read -r p f s <<<"$c"
        add "$p" "$f" "$s"
        # Exit 3: nothing failed, some orderings inconclusive (counted as skipped).
        { [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]; } && [ "$f" -eq 0 ] && r=ok || r="FAIL mxcts $(why "$rc");"
        note suites "$r $p passed, $f failed, $s skipped $(took)$(grep -m1 -i 'skip' "$out/conformance.tap" | sed 's/^.*# SKIP/: SKIP/' | cut -c1-120)"
    else
        note suites "FAIL mxcts $(why "$rc"), no readable results.json $(took) (logs/suites.log)"; add 0 1 0
    fi
    pack
fi

# 5. gpu_bench
if gate bench build; then
    rc=0; within "$logs/bench.log" "$build/bench/gpu_bench" --check || rc=$?
    grep -v '^+ ' "$logs/bench.log" >"$out/gpu_bench.txt" || true
    ok=$(grep -c '  ok$' "$out/gpu_bench.txt" || true) missed=$(grep -c '  MISSED$' "$out/gpu_bench.txt" || true)
    if grep -q 'no GPU, nothing measured' "$out/gpu_bench.txt"; then
        note bench "skipped (no GPU) $(took)"; add 0 0 1
    elif [ "$rc" -ne 0 ] && [ "$missed" -eq 0 ]; then
        note bench "FAIL $(why "$rc"), $ok targets met before it $(took) (gpu_bench.txt)"; add "$ok" 1 0
    else
        add "$ok" "$missed" 0
        [ "$missed" -eq 0 ] && r=ok || r=FAIL
        note bench "$r ($ok targets met, $missed missed) $(took)"
    fi
    pack
fi

# 6. the build without cuDNN, and its test_gpu
if gate nocudnn; then
    if r=$(configure_and_make "$work/build-nocudnn" "$logs/nocudnn-build.log" --without-cudnn); then
        add 1 0 0
        run_test_gpu "$work/build-nocudnn" "$logs/nocudnn-test.log"
        note nocudnn "build ok, test_gpu $test_result $(took)"
    else
        note nocudnn "FAIL $r $(took) (logs/nocudnn-build.log)"; add 0 1 0
    fi
    pack
fi

# 7. compute-sanitizer: every process that mxcts plans for one round of the
# sanitized suites, run under memcheck, then racecheck.
sanitizer=$(PATH=$PATH:$cuda/compute-sanitizer command -v compute-sanitizer || true)
if wanted sanitize && [ -z "$sanitizer" ]; then
    note sanitize "skipped (compute-sanitizer not found in PATH or $cuda)"; add 0 0 1
elif gate sanitize build; then
    plan=$work/sanitize-plan
    rm -rf "$plan"
    suite_args=()
    IFS=, read -r -a sanitized <<<"$sanitize_suites"
    for s in "${sanitized[@]}"; do suite_args+=(--suite "$s"); done
    rc=0
    within "$logs/sanitize.log" "$build/harness/mxcts" plan --impl "$build/ref/.libs/libmxref.so" \
        --suites "$src/suites" "${suite_args[@]}" --rounds 1 --out "$plan" --lock-file none || rc=$?
    grep -- ' exec --dir ' "$logs/sanitize.log" >"$plan.jobs" || true
    if [ "$rc" -ne 0 ]; then
        note sanitize "FAIL mxcts plan $(why "$rc") $(took) (logs/sanitize.log)"; add 0 1 0
    elif [ ! -s "$plan.jobs" ]; then
        note sanitize "skipped (mxcts planned no process for $sanitize_suites: $(grep -m1 -io 'no GPU[^"]*\|skip[^"]*' "$plan/plan.json" | cut -c1-80))"; add 0 0 1
    else
        results=()
        # Each run gets an even share of what is left of the stage's budget.
        runs_left=$((2 * $(wc -l <"$plan.jobs"))) sanitize_end=$stage_end
        for tool in memcheck racecheck; do
            n=0
            while IFS= read -r line; do
                n=$((n + 1))
                # The job line is `mxcts exec ... -- NAME=VALUE... PROBE ARGS...`
                # in shell quoting: keep the environment, run the probe
                # under the sanitizer.
                eval "set -- $line"
                jobdir=$plan
                while [ $# -gt 0 ] && [ "$1" != -- ]; do
                    [ "$1" != --dir ] || jobdir=$2
                    shift
                done
                shift
                envs=()
                while [ $# -gt 0 ] && [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do envs+=("$1"); shift; done
                name=$(printf '%s' "$*" | sed -n 's|.*--out [^ ]*/sanitize-plan/\([^ ]*\)/result.json.*|\1|p' | tr / -)
                name=${tool}-${name:-job$n}
                mkdir -p "$logs/sanitize"
                trc=0 stage_end=$((SECONDS + (sanitize_end - SECONDS) / runs_left))
                runs_left=$((runs_left - 1))
                mkdir -p "$jobdir"
                (cd "$jobdir" && within "$logs/sanitize/$name.log" env "${envs[@]}" "$sanitizer" \
                    --tool "$tool" --error-exitcode 86 --print-limit 100 "$@") || trc=$?
                summ=$(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$logs/sanitize/$name.log" || true)
                if [ "$trc" -eq 0 ]; then add 1 0 0; results+=("$name ok"); else
                    add 0 1 0; results+=("$name FAIL $(why "$trc")${summ:+: $summ}"); fi
            done <"$plan.jobs"
        done
        stage_end=$sanitize_end
        r=ok
        [[ " ${results[*]} " == *FAIL* ]] && r=FAIL
        note sanitize "$r $(took): $(IFS=';'; echo "${results[*]}")"
    fi
fi

pack
echo
echo "gpu-run-kit: summary ($((SECONDS - t0))s; results in $out)"
printf '%s\n' "${lines[@]}"
counts
[ "$failed" -eq 0 ]
