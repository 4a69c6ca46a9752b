# shellcheck shell=sh
# The one way the conformance scripts run mxcts over the suites (sourced).
#
#   run_conformance IMPL NAME OUT EXPECTATIONS [MXCTS-RUN-ARGS...]
#
# runs `mxcts run` from the top build directory with TAP on stdout, and
# exits with its status, except that 3 (no failure, some orderings
# inconclusive) becomes 0: the TAP stream shows those assertions as skips
# ("inconclusive"), never as passes.
#
# Python workloads run under $MXCTS_PYTHON when set (mxcts reads it), else
# under the environment `make python-env` (ci/python-env.sh) made in this
# build tree; where it could not be made, they are skipped with its reason
# (python-env.why); with
# neither, or without mxnet in it, those suites are skipped with the reason.

run_conformance() {
    impl=$1 name=$2 out=$3 expectations=$4
    shift 4
    if [ -z "${MXCTS_PYTHON:-}" ] && [ -x python-env/bin/python ]; then
        set -- --python "$PWD/python-env/bin/python" "$@"
    elif [ -z "${MXCTS_PYTHON:-}" ] && [ -s python-env.why ]; then
        set -- --no-python "$(cat python-env.why)" "$@"
    fi
    ./harness/mxcts run --impl "$impl" --impl-name "$name" \
        --probe ./harness/mxcts-probe --suites "${srcdir:-.}/suites" --out "$out" \
        --expectations "$expectations" --no-progress --tap - "$@"
    rc=$?
    if [ "$rc" -eq 3 ]; then rc=0; fi
    exit "$rc"
}
