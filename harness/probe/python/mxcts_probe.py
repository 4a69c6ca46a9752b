#!/usr/bin/env python3
"""The Python probe: one workload through MXNet's own Python package.

mxcts runs it as it runs mxcts-probe (docs/probe-protocol.md), with the same
arguments and one more, --probe (mxcts-probe, which reads the profiler
trace of a structure run), in an environment holding only the base
variables, the config's and MXNET_LIBRARY_PATH, which makes the mxnet
package load the library under test:

    env -i ... MXNET_LIBRARY_PATH=LIB PYTHON mxcts_probe.py --probe PROBE
        --impl LIB --workload NAME [--param K=V ...] --seed S --out FILE
        [--profile DIR]

It writes the same result object as mxcts-probe: identity, timing, the
structure of the profiled passes, values and checks.  Exit status 0 with a
result (status ok, or error with MXNet's message), 2 on bad arguments
(status usage).
"""

import ctypes
import json
import os
import resource
import subprocess
import sys
import time

PASS_MARKER = "mxcts-pass:"   # harness/probe/probe.h: MXCTS_PASS_MARKER
PROBE_VERSION = 1


class UsageError(Exception):
    """Bad arguments: status usage, exit 2."""


class Probe:
    """One run: its arguments, the result being built, the profiled passes."""

    def __init__(self, argv):
        self.probe = self.impl = self.workload = self.out = self.profile_dir = None
        self.seed = 0
        self.params = {}
        self.passes = []
        self.marker_fn = None
        self.result = None
        self.bad = parse_args(self, argv)

    def param_int(self, key, default):
        value = self.params.get(key)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise UsageError("bad --param %s=%s (want an integer)" % (key, value))

    def add_check(self, name, passed, detail):
        self.result["checks"].append({"name": name, "pass": bool(passed), "detail": detail})

    def add_values(self, name, array):
        """Element count, finiteness, FNV-1a 64 digest of the float32 bytes and
        the first elements, as mxcts-probe reports a tensor."""
        import numpy as np
        x = np.ascontiguousarray(array, dtype=np.float32)
        h = 0xcbf29ce484222325
        for b in x.tobytes():
            h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
        self.result["values"][name] = {
            "n": int(x.size), "finite": bool(np.isfinite(x).all()),
            "digest": "fnv1a64:%016x" % h, "sample": [float(v) for v in x.ravel()[:8]]}

    def set_timing(self, ms):
        s = sorted(ms)
        n = len(s)
        median = 0.0 if n == 0 else s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])
        self.result["timing"] = {"unit": "ms", "iterations": ms, "median": median}

    # -- structure: one profiled pass of each kind, ended by a marker op --

    def profile_begin(self):
        import mxnet as mx
        if self.passes:
            return
        os.makedirs(self.profile_dir, exist_ok=True)
        mx.profiler.set_config(profile_all=True, continuous_dump=False, aggregate_stats=False,
                               filename=os.path.join(self.profile_dir, "profile.json"))
        mx.profiler.set_state("run")

    def profile_end(self, name):
        """Wait for the pass, then push the op that ends it in the trace."""
        import mxnet as mx
        mx.nd.waitall()
        push_marker(self, PASS_MARKER + name)
        mx.nd.waitall()
        self.passes.append(name)

    def profile_finish(self):
        """Stop, dump, and read the trace with mxcts-probe --read-trace."""
        import mxnet as mx
        if not self.passes:
            return
        mx.profiler.set_state("stop")
        mx.profiler.dump(finished=True)
        trace = os.path.join(self.profile_dir, "profile.json")
        proc = subprocess.run([self.probe, "--read-trace", trace, "--passes", ",".join(self.passes)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if proc.returncode != 0:
            self.set_error("reading the trace: " + proc.stderr.strip())
            return
        self.result["structure"] = json.loads(proc.stdout)

    def set_error(self, message):
        if self.result["status"] == "ok":
            self.result["status"] = "error"
            self.result["error"] = message


def parse_args(p, argv):
    """Fill p from argv; returns the message of a bad argument, or None."""
    flags = {"--probe": "probe", "--impl": "impl", "--workload": "workload", "--out": "out",
             "--profile": "profile_dir", "--seed": "seed"}
    i = 0
    while i < len(argv):
        flag = argv[i]
        if i + 1 >= len(argv) or (flag not in flags and flag != "--param"):
            return "bad argument %s" % flag
        value = argv[i + 1]
        i += 2
        if flag == "--param":
            key, eq, val = value.partition("=")
            if not eq or not key:
                return "bad --param '%s' (want KEY=VALUE)" % value
            p.params[key] = val
        elif flag == "--seed":
            try:
                p.seed = int(value)
            except ValueError:
                return "bad --seed %s" % value
        else:
            setattr(p, flags[flag], value)
    if not p.impl or not p.workload or not p.probe:
        return "--probe, --impl and --workload are required"
    return None


def push_marker(p, name):
    """An engine op that does nothing, named `name` (as mxcts-probe's pass
    markers: cpu(0), FnProperty normal, priority 1 so that no ImperativeBulk
    holds it)."""
    import mxnet as mx
    if p.marker_fn is None:
        p.marker_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(lambda rctx, param: None)
    ctx = (ctypes.c_int * 2)(1, 0)
    prop = ctypes.c_int(0)
    mx.base.check_call(mx.base._LIB.MXEnginePushSyncND(
        p.marker_fn, None, None, ctypes.byref(ctx), None, 0, None, 0, ctypes.byref(prop), 1,
        mx.base.c_str(name)))


def new_result(p):
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith("MXNET_")}
    return {"probe_version": PROBE_VERSION, "workload": p.workload or "", "params": dict(p.params),
            "seed": p.seed, "status": "ok", "error": None, "env": env, "values": {}, "checks": []}


def add_identity(p):
    import mxnet as mx
    version = ctypes.c_int(0)
    impl = {"path": p.impl, "features": {}}
    if mx.base._LIB.MXGetVersion(ctypes.byref(version)) == 0:
        impl["version"] = version.value
    try:
        impl["features"] = {name: f.enabled for name, f in mx.runtime.Features().items()}
    except mx.base.MXNetError:
        pass
    p.result["impl"] = impl


# -- how busy the machine was meanwhile (docs/probe-protocol.md, "sched") --

def machine_busy_s():
    """CPU seconds the machine has been busy (user, nice, system, irq,
    softirq, steal), or None."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        ticks = [int(v) for v in fields[1:9]]
    except (OSError, ValueError, IndexError):
        return None
    busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
    return busy / os.sysconf("SC_CLK_TCK")


def own_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def sched_mark():
    return time.perf_counter() * 1e3, machine_busy_s(), own_cpu_s()


def add_sched(p, m0):
    wall1, busy1, own1 = sched_mark()
    wall_ms = wall1 - m0[0]
    if not wall_ms > 0:
        return
    sched = {"wall_ms": wall_ms, "cpu_ms": (own1 - m0[2]) * 1e3}
    if m0[1] is not None and busy1 is not None:
        elsewhere = (busy1 - m0[1]) - (own1 - m0[2])
        sched["contention"] = elsewhere * 1e3 / wall_ms if elsewhere > 0 else 0.0
    p.result["sched"] = sched


# -- workloads --

def gluon_flip_chain(p):
    """Seed 000's Gluon test_bulking: a HybridSequential of num_ops Flip
    blocks hybridized with static_alloc and static_shape (and the bulk-size
    flags when given); each iteration records y = net(x), back-propagates a
    head gradient and waits for x's gradient.  An even number of flips gives
    back the input, and the gradient is the head gradient flipped as often."""
    import mxnet as mx
    import numpy as np
    num_ops = p.param_int("num_ops", 1000)
    length = p.param_int("len", 10)
    iterations = p.param_int("iterations", 20)
    warmup = p.param_int("warmup", 1)
    flags = {k: p.param_int(k, 0) for k in ("forward_bulk_size", "backward_bulk_size") if k in p.params}

    class Flip(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.flip(x, axis=0)

    net = mx.gluon.nn.HybridSequential()
    for _ in range(num_ops):
        net.add(Flip())
    net.hybridize(static_alloc=True, static_shape=True, **flags)
    x_np = np.random.RandomState(p.seed & 0x7fffffff).uniform(-1, 1, length).astype(np.float32)
    dy_np = (1 + np.arange(length, dtype=np.float32) / 8).astype(np.float32)
    x = mx.nd.array(x_np)
    dy = mx.nd.array(dy_np)
    x.attach_grad()

    def iteration(profiled):
        if profiled:
            p.profile_begin()
        with mx.autograd.record():
            y = net(x)
        if profiled:
            p.profile_end("forward")
        y.backward(dy)
        x.grad.wait_to_read()
        if profiled:
            p.profile_end("backward")
        return y

    for _ in range(warmup):
        iteration(False)
    if p.profile_dir:
        iteration(True)
    else:
        times = []
        for _ in range(iterations):
            t0 = time.perf_counter()
            iteration(False)
            times.append((time.perf_counter() - t0) * 1e3)
        p.set_timing(times)
    y = net(x).asnumpy()
    g = x.grad.asnumpy()
    flipped = (lambda a: a[::-1]) if num_ops % 2 else (lambda a: a)
    p.add_values("output", y)
    p.add_check("output_is_flipped_input", np.array_equal(y, flipped(x_np)),
                "%d flips of the input" % num_ops)
    p.add_values("grad", g)
    p.add_check("grad_is_flipped_head_grad", np.array_equal(g, flipped(dy_np)),
                "%d flips of the head gradient" % num_ops)


WORKLOADS = {"gluon_flip_chain": gluon_flip_chain}


def write_result(p):
    p.result["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    text = json.dumps(p.result, indent=1)
    if p.out:
        with open(p.out, "w") as f:
            f.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")


def run(p):
    """Run the workload; MXNet's errors become status error."""
    import mxnet as mx
    try:
        mx.random.seed(p.seed & 0x7fffffff)
        add_identity(p)
        m0 = sched_mark()
        WORKLOADS[p.workload](p)
        add_sched(p, m0)
        p.profile_finish()
    except mx.base.MXNetError as e:
        p.set_error(str(e).strip())


def main(argv):
    p = Probe(argv)
    p.result = new_result(p)
    try:
        if p.bad:
            raise UsageError(p.bad)
        if p.workload not in WORKLOADS:
            raise UsageError("unknown workload '%s' (the Python probe has: %s)"
                             % (p.workload, ", ".join(sorted(WORKLOADS))))
        run(p)
    except UsageError as e:
        sys.stderr.write("mxcts_probe.py: %s\n" % e)
        p.result["status"] = "usage"
        p.result["error"] = str(e)
        write_result(p)
        return 2
    write_result(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
