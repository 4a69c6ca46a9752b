"""pytest plugin of `make check-peer` (ci/check-peer.sh): records each
test's outcome in the JSON-lines file named by MXCTS_PEER_RESULTS, one
object per test:

    {"file": "test_engine.py", "test": "test_bulk", "outcome": "passed",
     "lacks": "operator sin"}

outcome is passed, failed or skipped (the last try's, for a test run with
pytest-rerunfailures' --reruns; "reruns" counts the failed tries before
it); "lacks" is set for a failed test
whose failure says what libmxref does not implement (its message "X is not
implemented by libmxref"), so that those tests are counted apart, from the
library's own words rather than from a list kept by hand.

With MXCTS_PEER_CPU=1 the GPU context is the CPU one (mx.gpu(i) returns
mx.cpu(i) and the GPU count is 1), so that GPU-only tests such as the
seed's test_bulking run on a machine without a GPU; the test files stay
as they are.  ci/peer/sitecustomize.py applies it in every process of the
run, the ones the tests spawn included.

MXCTS_PEER_UNSKIP names tests (separated by commas) to run although MXNet
marks them skipped: the seed's two test_bulking versions are marked
@unittest.skip in 1.9.1 (MXNet issues 14970 and 16517); such a test runs
its undecorated function.

write_stubs(): the GPU files import sibling test modules that are not
among the peer files (test_gluon, test_numpy_op, ...); each missing one is
stood in for by an empty module whose other names, imported one by one,
are tests that skip.
"""
import inspect
import json
import os
import re

import pytest

NOT_IMPLEMENTED = re.compile(r"((?:operator|iterator) \S+|[^:\n]*?) (?:is|are) not implemented by libmxref")


def cpu_for_gpu():
    import mxnet as mx
    from mxnet import context, test_utils

    def gpu(device_id=0):
        return mx.cpu(device_id)

    mx.gpu = context.gpu = gpu
    test_utils.gpu = gpu
    context.num_gpus = mx.context.num_gpus = lambda: 1
    test_utils.default_context = lambda: mx.cpu()


class Recorder:
    def __init__(self, path):
        self.path = path
        self.results = {}

    def _record(self, report, outcome):
        item = self.results.setdefault(report.nodeid, {"outcome": "passed", "lacks": None})
        if outcome == "failed" or (outcome == "skipped" and item["outcome"] == "passed"):
            item["outcome"] = outcome
        if outcome == "failed" and item["lacks"] is None:
            found = NOT_IMPLEMENTED.search(report.longreprtext or "")
            if found:
                item["lacks"] = found.group(1).strip()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report):
        if report.outcome == "rerun":  # pytest-rerunfailures: a failed try, tried again
            item = self.results.setdefault(report.nodeid, {"outcome": "passed", "lacks": None})
            item["reruns"] = item.get("reruns", 0) + 1
        elif report.failed:
            self._record(report, "failed")
        elif report.skipped:
            self._record(report, "skipped")
        elif report.when == "call":
            self._record(report, "passed")

    @pytest.hookimpl
    def pytest_collectreport(self, report):
        if report.failed:
            self._record(report, "failed")

    @pytest.hookimpl
    def pytest_sessionfinish(self, session):
        with open(self.path, "a") as f:
            for nodeid, item in self.results.items():
                path, _, test = nodeid.partition("::")
                f.write(json.dumps({"file": os.path.basename(path), "test": test or "(collection)",
                                    "outcome": item["outcome"], "lacks": item["lacks"],
                                    "reruns": item.get("reruns", 0)}) + "\n")


def pytest_collection_modifyitems(session, config, items):
    unskip = re.split(r"[ ,]+", os.environ.get("MXCTS_PEER_UNSKIP", ""))
    for item in items:
        if item.name in unskip:
            item.obj = inspect.unwrap(item.obj)


def pytest_configure(config):
    if os.environ.get("MXCTS_PEER_CPU") == "1":
        cpu_for_gpu()
    path = os.environ.get("MXCTS_PEER_RESULTS")
    if path:
        config.pluginmanager.register(Recorder(path), "mxcts_peer_recorder")


STUB = '''"""Stands in for MXNet's {name}.py, which is not among the peer files
(written by ci/peer/mxcts_peer.py).  A star import of it gives what the
real module's would that the GPU files use unimported (unittest, gluon,
nn, ...)."""
import unittest

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon, nd
from mxnet.gluon import nn


def _missing(*args, **kwargs):
    import pytest
    pytest.skip("{name}.py is not among the peer files")


def __getattr__(attr):
    if attr.startswith("__"):
        raise AttributeError(attr)
    return _missing
'''


def write_stubs(test_dirs, files, out_dir):
    """Write a stub into out_dir for every `from test_x import ...` module
    of `files` that none of test_dirs holds."""
    os.makedirs(out_dir, exist_ok=True)
    for path in files:
        with open(path) as f:
            names = re.findall(r"^from (test_\w+) import", f.read(), re.M)
        for name in names:
            if not any(os.path.exists(os.path.join(d, name + ".py")) for d in test_dirs):
                with open(os.path.join(out_dir, name + ".py"), "w") as f:
                    f.write(STUB.format(name=name))


if __name__ == "__main__":
    # mxcts_peer.py OUT_DIR TEST_DIR... -- FILE...
    import sys
    args = sys.argv[1:]
    cut = args.index("--")
    write_stubs(args[1:cut], args[cut + 1:], args[0])
