#!/bin/sh
# Fetch MXNet's wheel from PyPI and unpack its shared libraries, for
# `make check-mxnet`.
#
# usage: capi_fetch_mxnet.sh DIR
#
# Downloads $MXNET_PACKAGE==$MXNET_VERSION (default mxnet==1.9.1; e.g.
# MXNET_PACKAGE=mxnet-native) with pip into DIR/download, or into
# $MXNET_WHEEL_CACHE when set (a cache shared by many DIRs), once: a wheel
# already there is reused; then unpacks the wheel's
# mxnet/lib*.so* files into DIR/mxnet (libmxnet.so needs no Python).
# Exit status: 0 when DIR/mxnet/libmxnet.so is ready; 77 when it cannot be
# had here (no python3 or pip, PyPI not reachable, no wheel for this
# machine), with the reason on stderr; 1 on any other failure.
# PIP_TIMEOUT (seconds per connection, default 60) and FETCH_TIMEOUT (the
# whole download, default 900) bound the time spent.
set -u
dir=${1:?usage: capi_fetch_mxnet.sh DIR}
version=${MXNET_VERSION:-1.9.1}
package=${MXNET_PACKAGE:-mxnet}
lib=$dir/mxnet/libmxnet.so

say() { echo "capi_fetch_mxnet: $*" >&2; }
unavailable() { say "SKIP: $*"; exit 77; }

if [ -f "$lib" ]; then
    say "using $lib"
    exit 0
fi
command -v python3 >/dev/null 2>&1 || unavailable "python3 is not installed"
python3 -m pip --version >/dev/null 2>&1 || unavailable "pip is not installed (python3 -m pip)"

download=${MXNET_WHEEL_CACHE:-$dir/download}
mkdir -p "$dir" "$download" || exit 1
# a wheel's file name spells the package with underscores (mxnet_native-...)
wheel() { ls "$download/$(echo "$package" | tr - _)-$version"-*.whl 2>/dev/null | head -n 1; }

if [ -z "$(wheel)" ]; then
    run_timeout=
    if command -v timeout >/dev/null 2>&1; then run_timeout="timeout ${FETCH_TIMEOUT:-900}"; fi
    say "downloading $package==$version with pip into $download"
    # shellcheck disable=SC2086  # run_timeout is a command prefix or empty
    if ! $run_timeout python3 -m pip download --no-deps --only-binary=:all: \
            --timeout "${PIP_TIMEOUT:-60}" --retries 2 --progress-bar off \
            -d "$download" "$package==$version" >"$dir/pip.log" 2>&1; then
        tail -n 5 "$dir/pip.log" >&2
        # Why: no network, or no wheel for this machine, or something else.
        index=${PIP_INDEX_URL:-$(python3 -m pip config get global.index-url 2>/dev/null)}
        index=${index:-https://pypi.org/simple/}
        if ! python3 - "$index" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/mxnet/", timeout=20).read(1)
PY
        then
            unavailable "the package index ($index) is not reachable"
        fi
        case $(uname -m) in
            x86_64) say "pip could not download $package==$version (log: $dir/pip.log)"; exit 1 ;;
            *) unavailable "$package==$version has no wheel for $(uname -m)" ;;
        esac
    fi
fi
whl=$(wheel)
[ -n "$whl" ] || { say "pip succeeded but left no $package-$version wheel in $download"; exit 1; }

say "unpacking the shared libraries of $(basename "$whl")"
python3 - "$whl" "$dir" <<'PY' || { say "could not unpack $whl"; exit 1; }
import os, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    names = [n for n in z.namelist()
             if n.startswith("mxnet/") and n.count("/") == 1 and ".so" in n]
    for n in names:
        z.extract(n, dest)
        os.chmod(os.path.join(dest, n), 0o755)
print("\n".join(names))
PY
[ -f "$lib" ] || { say "the wheel has no mxnet/libmxnet.so"; exit 1; }
say "ready: $lib"
