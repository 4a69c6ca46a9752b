#!/bin/sh
# fake_python.sh: a stand-in for the Python interpreter of Python workloads
# in the harness's tests.
#   fake_python.sh -c CODE        mxcts' import check: succeeds, unless
#                                 FAKE_PY_IMPORT=fail, which prints Python's
#                                 error for a missing mxnet and exits 1
#   fake_python.sh SCRIPT ARGS... runs SCRIPT with ARGS; the tests name
#                                 fake_probe as the script
if [ "${1:-}" = -c ]; then
    if [ "${FAKE_PY_IMPORT:-ok}" = fail ]; then
        echo "ModuleNotFoundError: No module named 'mxnet'" >&2
        exit 1
    fi
    exit 0
fi
script=$1
shift
exec "$script" "$@"
