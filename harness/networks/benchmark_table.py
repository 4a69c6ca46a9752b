#!/usr/bin/env python3
"""benchmark_table.py: seed 004's benchmark_score table (images per second
per network and batch size) for several implementations, side by side.

    benchmark_table.py --probe _build/harness/mxcts-probe \\
        --impl libmxref=_build/ref/.libs/libmxref.so \\
        --impl mxnet-1.9.1=/path/to/mxnet/libmxnet.so \\
        [--nets resnet-50,inception-bn] [--batches 1,2,4] [--image 32 | --native] \\
        [--iterations 3] [--dir DIR] [--json FILE]

For each network (written by netgen.py into DIR when missing) it runs one
mxcts-probe process per implementation (workload network_inference, all
batch sizes in one process), in turn, one at a time, printing each network's rows when it is done.  The first
implementation's outputs become the reference of the others, so the table
also shows how far each one's outputs are from the first's (max |diff| /
max |ref|).  Each library's own folder goes first on LD_LIBRARY_PATH (the
MXNet wheel ships its OpenBLAS there).  Prints a Markdown table; exit 1 when
a process failed (the table shows `error` there).  Python 3 standard
library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NETGEN = os.path.join(HERE, "netgen.py")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--probe", required=True)
    ap.add_argument("--impl", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--nets", default="resnet-50,inception-bn")
    ap.add_argument("--batches", default="1,2")
    ap.add_argument("--image", type=int, default=32)
    ap.add_argument("--native", action="store_true", help="each network at its own image size (224, 299)")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "mxcts-networks"))
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per probe process")
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    impls = []
    for spec in a.impl:
        name, sep, path = spec.partition("=")
        if not sep or not name or not os.path.isfile(path):
            ap.error("--impl %s: want NAME=PATH of an existing library" % spec)
        impls.append((name, os.path.abspath(path)))
    return a, impls


def native_sizes():
    out = subprocess.run([sys.executable, NETGEN, "--list"], check=True, capture_output=True, text=True)
    return {n: int(s) for n, s in (line.split() for line in out.stdout.splitlines())}


def ensure_network(a, net, image):
    prefix = os.path.join(a.dir, "%s-%d" % (net, image))
    if not os.path.exists(prefix + "-0000.params"):
        subprocess.run([sys.executable, NETGEN, "--net", net, "--image", str(image), "--out", a.dir], check=True)


def run_probe(a, lib, net, image, reference, save):
    params = {"net": net, "image": image, "batches": a.batches, "iterations": a.iterations,
              "warmup": a.warmup, "dir": a.dir}
    if reference:
        params["reference"] = reference
    if save:
        params["save_reference"] = save
    env = dict(os.environ, MXNET_SUBGRAPH_VERBOSE="0")
    env["LD_LIBRARY_PATH"] = os.path.dirname(lib) + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [os.path.abspath(a.probe), "--impl", lib, "--workload", "network_inference", "--seed", "1",
               "--out", out] + sum((["--param", "%s=%s" % kv] for kv in params.items()), [])
        try:
            subprocess.run(cmd, env=env, cwd=tmp, timeout=a.timeout, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(out) as f:
                r = json.load(f)
        except (OSError, ValueError, subprocess.TimeoutExpired) as e:
            return {"status": "error", "error": str(e)}
    return r


def cell(r, key, fmt):
    if r.get("status") != "ok":
        return "error"
    v = r.get("metrics", {}).get(key)
    return fmt % v if v is not None else "-"


def table_head(impls):
    names = [n for n, _ in impls]
    head = ["network", "image", "batch"] + ["%s img/s" % n for n in names]
    head += ["%s / %s" % (n, names[0]) for n in names[1:]] + ["%s max rel diff" % n for n in names[1:]]
    head += ["%s peak RSS MB" % n for n in names]
    return "| " + " | ".join(head) + " |\n|" + "---|" * len(head)


def table_rows(a, impls, net, image, results):
    names = [n for n, _ in impls]
    lines = []
    for b in a.batches.split(","):
        key = "b%s_img_s" % b
        speeds = [results[n].get("metrics", {}).get(key) if results[n].get("status") == "ok" else None
                  for n in names]
        c = [net, str(image), b] + [cell(results[n], key, "%.1f") for n in names]
        c += ["%.2f" % (s / speeds[0]) if s and speeds[0] else "-" for s in speeds[1:]]
        c += [cell(results[n], "b%s_max_rel_diff" % b, "%.2g") for n in names[1:]]
        c += ["%.0f" % (results[n]["peak_rss_kb"] / 1024) if results[n].get("peak_rss_kb") else "-"
              for n in names]
        lines.append("| " + " | ".join(c) + " |")
    return "\n".join(lines)


def main():
    a, impls = parse_args()
    os.makedirs(a.dir, exist_ok=True)
    sizes = native_sizes()
    rows, failed = [], False
    print(table_head(impls), flush=True)
    for net in a.nets.split(","):
        if net not in sizes:
            print("benchmark_table: unknown network '%s' (known: %s)" % (net, ", ".join(sizes)), file=sys.stderr)
            return 2
        image = sizes[net] if a.native else a.image
        ensure_network(a, net, image)
        ref = "table-reference-%s-%d.json" % (net, image)
        results = {}
        for i, (name, lib) in enumerate(impls):
            r = run_probe(a, lib, net, image, None if i == 0 else ref, ref if i == 0 else None)
            if r.get("status") != "ok":
                failed = True
                print("benchmark_table: %s on %s: %s" % (name, net, r.get("error")), file=sys.stderr)
            results[name] = r
        rows.append((net, image, results))
        print(table_rows(a, impls, net, image, results), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"net": n, "image": i, "results": {k: {"status": v.get("status"), "metrics": v.get("metrics"),
                                                              "peak_rss_kb": v.get("peak_rss_kb")}
                                                          for k, v in res.items()}} for n, i, res in rows], f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
