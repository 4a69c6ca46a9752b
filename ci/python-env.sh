#!/bin/sh
# Make (once) the Python environment in which MXNet 1.9.1's own Python
# package runs: a virtual environment with the mxnet==1.9.1 wheel's package
# and numpy < 1.24 (the package needs numpy's old aliases), plus any extra
# packages named.  The suites with a Python workload (seed-gluon-bulking)
# run in it with `mxcts run --python VENV/bin/python`; `make check-peer`
# adds pytest and the rest of what MXNet's tests import.
#
# usage: python-env.sh VENV [--wheels DIR] [PACKAGE...]
#   --wheels DIR   also look for wheels in DIR (pip --find-links), e.g. the
#                  one `make check-mxnet` downloaded
#   PACKAGE        a pip requirement ("pytest", "scipy<1.12"); its import
#                  name must be the requirement's name up to a version sign,
#                  with - as _, or be given as REQUIREMENT=MODULE
#
# Exit status: 0 when VENV imports mxnet (and the extras); 77 when it cannot
# be made here, with the reason on stderr (offline: the package index is not
# reachable; no python3, or no venv module); 1 when pip failed otherwise
# (its log: VENV.pip.log).  A skip leaves no VENV and its reason in
# VENV.why; success removes VENV.why.  FETCH_TIMEOUT (default 900 s) bounds the
# install, PIP_TIMEOUT (default 60 s) each connection.
set -u

say() { echo "python-env: $*" >&2; }
# The reason goes to stderr and to VENV.why, for the callers to pass on
# (mxcts run --no-python REASON); a half-made environment is removed.
skip() {
    say "SKIP: $*"
    rm -rf "$venv"
    echo "$*" >"$venv.why"
    exit 77
}

venv=${1:?usage: python-env.sh VENV [--wheels DIR] [PACKAGE...]}
shift
links=
if [ "${1:-}" = --wheels ]; then
    [ -d "${2:-}" ] && links="--find-links $2"
    shift 2
fi
reqs= mods="mxnet numpy"
for r in "$@"; do
    case $r in
        *=[A-Za-z_]*) reqs="$reqs ${r%%=*}" mods="$mods ${r##*=}" ;;
        *) reqs="$reqs $r" mods="$mods $(echo "$r" | sed 's/[<>=!~].*//; s/-/_/g')" ;;
    esac
done

py=$venv/bin/python
ready() {
    imports=$(echo $mods | sed 's/ /, /g')
    env -u MXNET_LIBRARY_PATH "$py" -c "import $imports" >/dev/null 2>&1
}
ready && { rm -f "$venv.why"; exit 0; }

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
python3 -m venv "$venv" >/dev/null 2>&1 || skip "python3 cannot make a virtual environment (python3-venv)"
say "installing mxnet==1.9.1, numpy<1.24$reqs into $venv"
# shellcheck disable=SC2086  # links and reqs are lists of words
if ! timeout "${FETCH_TIMEOUT:-900}" "$py" -m pip install --timeout "${PIP_TIMEOUT:-60}" \
        --retries 2 --progress-bar off $links mxnet==1.9.1 'numpy<1.24' $reqs \
        >"$venv.pip.log" 2>&1; then
    tail -n 5 "$venv.pip.log" >&2
    if ! python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/mxnet/", timeout=20).read(1)' \
            >/dev/null 2>&1; then
        skip "offline: the package index (https://pypi.org) is not reachable"
    fi
    say "pip failed (log: $venv.pip.log)"
    exit 1
fi
ready || { say "the environment in $venv does not import $mods"; exit 1; }
rm -f "$venv.why"
