#!/usr/bin/env python3
"""mxcts-netgen: the networks of MXNet's benchmark_score table as MXNet
symbol JSON and seeded weights in MXNet's .params format.

    netgen.py --net resnet-50 --image 32 --out DIR [--seed 1] [--classes 1000]
    netgen.py --list

writes DIR/NET-IMAGE-symbol.json and DIR/NET-IMAGE-0000.params (MXNet's
checkpoint names).  Python 3.9 standard library only.  The architectures
follow MXNet's example/image-classification/symbols (alexnet.py without its
two LRN layers, vgg.py, inception-bn.py, inception-v3.py, resnet.py v2),
built from the ops libmxref and MXNet share: Convolution, BatchNorm,
Activation, Pooling (max, avg, global), Concat, elemwise_add, Flatten,
FullyConnected, Dropout and SoftmaxOutput (docs/networks.md).
"""
import argparse
import json
import math
import os
import random
import struct
import sys
import zlib

ND_LIST_MAGIC = 0x112          # kMXAPINDArrayListMagic
NDARRAY_V2_MAGIC = 0xF993FAC9  # NDArray::Save, default storage
FLOAT32 = 0                    # mshadow::kFloat32
CPU = 1                        # Context::kCPU


class NetError(Exception):
    """A network cannot be built (e.g. the image is too small for it)."""


class Graph:
    """Nodes in creation order (each node's inputs come before it), with the
    (C, H, W) of every op's output, so weights get their shapes here."""

    def __init__(self):
        self.nodes, self.shapes, self.params = [], {}, []

    def var(self, name, shape=None, aux=False):
        self.nodes.append({"op": "null", "name": name, "inputs": []})
        if shape is not None:
            self.params.append((("aux:" if aux else "arg:") + name, shape))
        return len(self.nodes) - 1

    def op(self, op, name, inputs, attrs, shape):
        node = {"op": op, "name": name, "attrs": {k: str(v) for k, v in attrs.items()},
                "inputs": [[i, 0, 0] for i in inputs]}
        self.nodes.append(node)
        self.shapes[len(self.nodes) - 1] = shape
        return len(self.nodes) - 1

    def to_json(self, head):
        args = [i for i, n in enumerate(self.nodes) if n["op"] == "null"]
        return json.dumps({"nodes": self.nodes, "arg_nodes": args, "heads": [[head, 0, 0]],
                           "attrs": {"mxnet_version": ["int", 10901]}}, indent=2)


def tup(v):
    return "(" + ", ".join(str(x) for x in v) + ")"


def out_dim(n, k, s, p, full=False):
    span = n + 2 * p - k
    if span < 0:
        raise NetError("input %d too small for kernel %d (pad %d)" % (n, k, p))
    return (-(-span // s) if full else span // s) + 1


def conv(g, x, name, nf, k, s=(1, 1), p=(0, 0), bias=True):
    c, h, w = g.shapes[x]
    ins = [x, g.var(name + "_weight", (nf, c) + tuple(k))]
    if bias:
        ins.append(g.var(name + "_bias", (nf,)))
    attrs = {"kernel": tup(k), "stride": tup(s), "pad": tup(p), "num_filter": nf,
             "no_bias": "False" if bias else "True"}
    shape = (nf, out_dim(h, k[0], s[0], p[0]), out_dim(w, k[1], s[1], p[1]))
    return g.op("Convolution", name, ins, attrs, shape)


def bn(g, x, name, fix_gamma=False, eps=2e-5):
    c = g.shapes[x][0]
    ins = [x, g.var(name + "_gamma", (c,)), g.var(name + "_beta", (c,)),
           g.var(name + "_moving_mean", (c,), aux=True), g.var(name + "_moving_var", (c,), aux=True)]
    attrs = {"fix_gamma": str(fix_gamma), "eps": eps, "momentum": 0.9}
    return g.op("BatchNorm", name, ins, attrs, g.shapes[x])


def relu(g, x, name):
    return g.op("Activation", name, [x], {"act_type": "relu"}, g.shapes[x])


def pool(g, x, name, kind, k=(1, 1), s=(1, 1), p=(0, 0), glob=False, full=False):
    c, h, w = g.shapes[x]
    attrs = {"pool_type": kind, "kernel": tup(k), "stride": tup(s), "pad": tup(p)}
    if glob:
        attrs["global_pool"] = "True"
        shape = (c, 1, 1)
    else:
        shape = (c, out_dim(h, k[0], s[0], p[0], full), out_dim(w, k[1], s[1], p[1], full))
    if full:
        attrs["pooling_convention"] = "full"
    return g.op("Pooling", name, [x], attrs, shape)


def concat(g, xs, name):
    c = sum(g.shapes[x][0] for x in xs)
    hw = {g.shapes[x][1:] for x in xs}
    if len(hw) != 1:
        raise NetError("%s: branches disagree in size: %s" % (name, sorted(hw)))
    return g.op("Concat", name, xs, {"num_args": len(xs), "dim": 1}, (c,) + hw.pop())


def add(g, a, b, name):
    if g.shapes[a] != g.shapes[b]:
        raise NetError("%s: %s + %s" % (name, g.shapes[a], g.shapes[b]))
    return g.op("elemwise_add", name, [a, b], {}, g.shapes[a])


def flatten(g, x, name):
    c, h, w = g.shapes[x]
    return g.op("Flatten", name, [x], {}, (c * h * w, 1, 1))


def fc(g, x, name, n):
    ins = [x, g.var(name + "_weight", (n, g.shapes[x][0])), g.var(name + "_bias", (n,))]
    return g.op("FullyConnected", name, ins, {"num_hidden": n}, (n, 1, 1))


def dropout(g, x, name):
    return g.op("Dropout", name, [x], {"p": 0.5}, g.shapes[x])


def head(g, x, classes, dropout_before=False):
    """global pooling was done by the caller; flatten, classify, softmax."""
    x = flatten(g, x, "flatten")
    if dropout_before:
        x = dropout(g, x, "drop")
    x = fc(g, x, "fc1", classes)
    return g.op("SoftmaxOutput", "softmax", [x, g.var("softmax_label")], {}, g.shapes[x])


# ----------------------------------------------------------------- networks

def alexnet(g, x, classes):
    x = relu(g, conv(g, x, "conv1", 96, (11, 11), (4, 4)), "relu1")
    x = pool(g, x, "pool1", "max", (3, 3), (2, 2))
    x = relu(g, conv(g, x, "conv2", 256, (5, 5), p=(2, 2)), "relu2")
    x = pool(g, x, "pool2", "max", (3, 3), (2, 2))
    for i, nf in ((3, 384), (4, 384), (5, 256)):
        x = relu(g, conv(g, x, "conv%d" % i, nf, (3, 3), p=(1, 1)), "relu%d" % i)
    x = pool(g, x, "pool3", "max", (3, 3), (2, 2))
    x = flatten(g, x, "flatten")
    for i in (6, 7):
        x = dropout(g, relu(g, fc(g, x, "fc%d" % i, 4096), "relu%d" % i), "drop%d" % i)
    x = fc(g, x, "fc8", classes)
    return g.op("SoftmaxOutput", "softmax", [x, g.var("softmax_label")], {}, g.shapes[x])


def vgg16(g, x, classes):
    for stage, (n, nf) in enumerate(((2, 64), (2, 128), (3, 256), (3, 512), (3, 512)), 1):
        for i in range(1, n + 1):
            name = "conv%d_%d" % (stage, i)
            x = relu(g, conv(g, x, name, nf, (3, 3), p=(1, 1)), "relu%d_%d" % (stage, i))
        x = pool(g, x, "pool%d" % stage, "max", (2, 2), (2, 2))
    x = flatten(g, x, "flatten")
    for i in (6, 7):
        x = dropout(g, relu(g, fc(g, x, "fc%d" % i, 4096), "relu%d" % i), "drop%d" % i)
    x = fc(g, x, "fc8", classes)
    return g.op("SoftmaxOutput", "softmax", [x, g.var("softmax_label")], {}, g.shapes[x])


def cbr(g, x, name, nf, k=(1, 1), s=(1, 1), p=(0, 0), fix_gamma=True):
    """Convolution (no bias), BatchNorm, ReLU: the inception ConvFactory."""
    x = conv(g, x, "conv_" + name, nf, k, s, p, bias=False)
    return relu(g, bn(g, x, "bn_" + name, fix_gamma, eps=1e-3), "relu_" + name)


def bn_a(g, x, name, n1, n3r, n3, nd3r, nd3, kind, proj):
    a = cbr(g, x, name + "_1x1", n1)
    b = cbr(g, cbr(g, x, name + "_3x3_reduce", n3r), name + "_3x3", n3, (3, 3), p=(1, 1))
    c = cbr(g, x, name + "_double_3x3_reduce", nd3r)
    c = cbr(g, c, name + "_double_3x3_0", nd3, (3, 3), p=(1, 1))
    c = cbr(g, c, name + "_double_3x3_1", nd3, (3, 3), p=(1, 1))
    d = pool(g, x, "%s_pool_%s_pool" % (kind, name), kind, (3, 3), p=(1, 1))
    d = cbr(g, d, name + "_proj", proj)
    return concat(g, [a, b, c, d], "ch_concat_%s_chconcat" % name)


def bn_b(g, x, name, n3r, n3, nd3r, nd3):
    a = cbr(g, cbr(g, x, name + "_3x3_reduce", n3r), name + "_3x3", n3, (3, 3), (2, 2), (1, 1))
    b = cbr(g, x, name + "_double_3x3_reduce", nd3r)
    b = cbr(g, b, name + "_double_3x3_0", nd3, (3, 3), p=(1, 1))
    b = cbr(g, b, name + "_double_3x3_1", nd3, (3, 3), (2, 2), (1, 1))
    c = pool(g, x, "max_pool_%s_pool" % name, "max", (3, 3), (2, 2), (1, 1))
    return concat(g, [a, b, c], "ch_concat_%s_chconcat" % name)


def inception_bn(g, x, classes):
    x = cbr(g, x, "1", 64, (7, 7), (2, 2), (3, 3))
    x = pool(g, x, "pool_1", "max", (3, 3), (2, 2))
    x = cbr(g, x, "2_red", 64)
    x = cbr(g, x, "2", 192, (3, 3), p=(1, 1))
    x = pool(g, x, "pool_2", "max", (3, 3), (2, 2))
    x = bn_a(g, x, "3a", 64, 64, 64, 64, 96, "avg", 32)
    x = bn_a(g, x, "3b", 64, 64, 96, 64, 96, "avg", 64)
    x = bn_b(g, x, "3c", 128, 160, 64, 96)
    x = bn_a(g, x, "4a", 224, 64, 96, 96, 128, "avg", 128)
    x = bn_a(g, x, "4b", 192, 96, 128, 96, 128, "avg", 128)
    x = bn_a(g, x, "4c", 160, 128, 160, 128, 160, "avg", 128)
    x = bn_a(g, x, "4d", 96, 128, 192, 160, 192, "avg", 128)
    x = bn_b(g, x, "4e", 128, 192, 192, 256)
    x = bn_a(g, x, "5a", 352, 192, 320, 160, 224, "avg", 128)
    x = bn_a(g, x, "5b", 352, 192, 320, 192, 224, "max", 128)
    x = pool(g, x, "global_pool", "avg", glob=True)
    return head(g, x, classes)


def v3_a(g, x, name, n1, n5r, n5, n3r, n3a, n3b, kind, proj):
    a = cbr(g, x, name + "_conv", n1)
    b = cbr(g, cbr(g, x, name + "_tower_conv", n5r), name + "_tower_conv_1", n5, (5, 5), p=(2, 2))
    c = cbr(g, x, name + "_tower_1_conv", n3r)
    c = cbr(g, c, name + "_tower_1_conv_1", n3a, (3, 3), p=(1, 1))
    c = cbr(g, c, name + "_tower_1_conv_2", n3b, (3, 3), p=(1, 1))
    d = pool(g, x, "%s_pool_%s_pool" % (kind, name), kind, (3, 3), p=(1, 1))
    d = cbr(g, d, name + "_tower_2_conv", proj)
    return concat(g, [a, b, c, d], "ch_concat_%s_chconcat" % name)


def v3_b(g, x, name, n3, nd3r, nd3a, nd3b):
    a = cbr(g, x, name + "_conv", n3, (3, 3), (2, 2))
    b = cbr(g, x, name + "_tower_conv", nd3r)
    b = cbr(g, b, name + "_tower_conv_1", nd3a, (3, 3), p=(1, 1))
    b = cbr(g, b, name + "_tower_conv_2", nd3b, (3, 3), (2, 2))
    c = pool(g, x, "max_pool_%s_pool" % name, "max", (3, 3), (2, 2))
    return concat(g, [a, b, c], "ch_concat_%s_chconcat" % name)


def v3_c(g, x, name, n1, d7r, d7a, d7b, q7r, q7a, q7b, q7c, q7d, kind, proj):
    a = cbr(g, x, name + "_conv", n1)
    b = cbr(g, x, name + "_tower_conv", d7r)
    b = cbr(g, b, name + "_tower_conv_1", d7a, (1, 7), p=(0, 3))
    b = cbr(g, b, name + "_tower_conv_2", d7b, (7, 1), p=(3, 0))
    c = cbr(g, x, name + "_tower_1_conv", q7r)
    for i, (nf, k, p) in enumerate(((q7a, (7, 1), (3, 0)), (q7b, (1, 7), (0, 3)),
                                    (q7c, (7, 1), (3, 0)), (q7d, (1, 7), (0, 3))), 1):
        c = cbr(g, c, "%s_tower_1_conv_%d" % (name, i), nf, k, p=p)
    d = pool(g, x, "%s_pool_%s_pool" % (kind, name), kind, (3, 3), p=(1, 1))
    d = cbr(g, d, name + "_tower_2_conv", proj)
    return concat(g, [a, b, c, d], "ch_concat_%s_chconcat" % name)


def v3_d(g, x, name, n3r, n3, d7r, d7a, d7b, d7c):
    a = cbr(g, cbr(g, x, name + "_tower_conv", n3r), name + "_tower_conv_1", n3, (3, 3), (2, 2))
    b = cbr(g, x, name + "_tower_1_conv", d7r)
    b = cbr(g, b, name + "_tower_1_conv_1", d7a, (1, 7), p=(0, 3))
    b = cbr(g, b, name + "_tower_1_conv_2", d7b, (7, 1), p=(3, 0))
    b = cbr(g, b, name + "_tower_1_conv_3", d7c, (3, 3), (2, 2))
    c = pool(g, x, "max_pool_%s_pool" % name, "max", (3, 3), (2, 2))
    return concat(g, [a, b, c], "ch_concat_%s_chconcat" % name)


def v3_e(g, x, name, n1, d3r, d3a, d3b, q3r, q3, q3a, q3b, kind, proj):
    a = cbr(g, x, name + "_conv", n1)
    b = cbr(g, x, name + "_tower_conv", d3r)
    b1 = cbr(g, b, name + "_tower_mixed_conv", d3a, (1, 3), p=(0, 1))
    b2 = cbr(g, b, name + "_tower_mixed_conv_1", d3b, (3, 1), p=(1, 0))
    c = cbr(g, x, name + "_tower_1_conv", q3r)
    c = cbr(g, c, name + "_tower_1_conv_1", q3, (3, 3), p=(1, 1))
    c1 = cbr(g, c, name + "_tower_1_mixed_conv", q3a, (1, 3), p=(0, 1))
    c2 = cbr(g, c, name + "_tower_1_mixed_conv_1", q3b, (3, 1), p=(1, 0))
    d = pool(g, x, "%s_pool_%s_pool" % (kind, name), kind, (3, 3), p=(1, 1))
    d = cbr(g, d, name + "_tower_2_conv", proj)
    return concat(g, [a, b1, b2, c1, c2, d], "ch_concat_%s_chconcat" % name)


def inception_v3(g, x, classes):
    x = cbr(g, x, "conv", 32, (3, 3), (2, 2))
    x = cbr(g, x, "conv_1", 32, (3, 3))
    x = cbr(g, x, "conv_2", 64, (3, 3), p=(1, 1))
    x = pool(g, x, "pool", "max", (3, 3), (2, 2))
    x = cbr(g, x, "conv_3", 80)
    x = cbr(g, x, "conv_4", 192, (3, 3))
    x = pool(g, x, "pool1", "max", (3, 3), (2, 2))
    x = v3_a(g, x, "mixed", 64, 48, 64, 64, 96, 96, "avg", 32)
    x = v3_a(g, x, "mixed_1", 64, 48, 64, 64, 96, 96, "avg", 64)
    x = v3_a(g, x, "mixed_2", 64, 48, 64, 64, 96, 96, "avg", 64)
    x = v3_b(g, x, "mixed_3", 384, 64, 96, 96)
    x = v3_c(g, x, "mixed_4", 192, 128, 128, 192, 128, 128, 128, 128, 192, "avg", 192)
    x = v3_c(g, x, "mixed_5", 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192)
    x = v3_c(g, x, "mixed_6", 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192)
    x = v3_c(g, x, "mixed_7", 192, 192, 192, 192, 192, 192, 192, 192, 192, "avg", 192)
    x = v3_d(g, x, "mixed_8", 192, 320, 192, 192, 192, 192)
    x = v3_e(g, x, "mixed_9", 320, 384, 384, 384, 448, 384, 384, 384, "avg", 192)
    x = v3_e(g, x, "mixed_10", 320, 384, 384, 384, 448, 384, 384, 384, "max", 192)
    x = pool(g, x, "global_pool", "avg", glob=True)
    return head(g, x, classes, dropout_before=True)


def residual_unit(g, x, name, nf, stride, dim_match):
    """resnet.py's bottleneck unit, pre-activation (v2)."""
    act1 = relu(g, bn(g, x, name + "_bn1"), name + "_relu1")
    y = conv(g, act1, name + "_conv1", nf // 4, (1, 1), bias=False)
    y = relu(g, bn(g, y, name + "_bn2"), name + "_relu2")
    y = conv(g, y, name + "_conv2", nf // 4, (3, 3), stride, (1, 1), bias=False)
    y = relu(g, bn(g, y, name + "_bn3"), name + "_relu3")
    y = conv(g, y, name + "_conv3", nf, (1, 1), bias=False)
    short = x if dim_match else conv(g, act1, name + "_sc", nf, (1, 1), stride, bias=False)
    return add(g, y, short, name + "_plus")


def resnet(units):
    def build(g, x, classes):
        x = bn(g, x, "bn_data", fix_gamma=True)
        x = conv(g, x, "conv0", 64, (7, 7), (2, 2), (3, 3), bias=False)
        x = relu(g, bn(g, x, "bn0"), "relu0")
        x = pool(g, x, "pool0", "max", (3, 3), (2, 2), (1, 1))
        for i, (n, nf) in enumerate(zip(units, (256, 512, 1024, 2048))):
            stride = (1, 1) if i == 0 else (2, 2)
            x = residual_unit(g, x, "stage%d_unit1" % (i + 1), nf, stride, False)
            for j in range(2, n + 1):
                x = residual_unit(g, x, "stage%d_unit%d" % (i + 1, j), nf, (1, 1), True)
        x = relu(g, bn(g, x, "bn1"), "relu1")
        x = pool(g, x, "pool1", "avg", glob=True)
        return head(g, x, classes)
    return build


# name: (builder, image size of benchmark_score.py, classifier gain: logits
# with a standard deviation of about 2 on the seeded weights)
NETWORKS = {
    "alexnet": (alexnet, 224, 8),
    "vgg-16": (vgg16, 224, 32),
    "inception-bn": (inception_bn, 224, 32),
    "inception-v3": (inception_v3, 299, 32),
    "resnet-50": (resnet((3, 4, 6, 3)), 224, 32),
    "resnet-152": (resnet((3, 8, 36, 3)), 224, 32),
}


def build(net, image, classes):
    """The graph and its head node, or NetError."""
    if net not in NETWORKS:
        raise NetError("unknown network '%s' (known: %s)" % (net, ", ".join(NETWORKS)))
    g = Graph()
    x = g.var("data")
    g.shapes[x] = (3, image, image)
    return g, NETWORKS[net][0](g, x, classes)


# ------------------------------------------------------------------ weights

def fan_in(shape):
    return max(1, math.prod(shape[1:]))


CLASSIFIERS = ("fc1", "fc8")  # the last FullyConnected of each network


def value_range(key, shape, gain):
    """(m, positive): values are uniform in [m, 2m), with a random sign
    unless positive.  He scale for weights, `gain` times LeCun scale for the
    classifier (so the logits spread and softmax is not flat); BatchNorm
    near identity."""
    name = key.split(":", 1)[1]
    if name.endswith("_weight"):
        classifier = name[:-len("_weight")] in CLASSIFIERS
        target = (gain if classifier else math.sqrt(2.0)) / math.sqrt(fan_in(shape))
        return 2.0 ** math.floor(math.log2(target / 1.53)), False
    if name.endswith("_moving_var"):
        return 1.0, True
    if name.endswith("_gamma"):
        return 0.5, True
    return 2.0 ** -5, False  # biases, betas, moving means


CHUNK = 1 << 24  # floats per randbytes call (its bit count must fit a C int)


def seeded_floats(seed, key, shape, gain):
    """float32 bytes: random mantissa and sign under a fixed exponent, made
    with whole-buffer integer operations (fast without numpy).  randbytes
    draws whole 32-bit words in order, so chunks give the same stream."""
    m, positive = value_range(key, shape, gain)
    rng = random.Random(seed * 1000003 + zlib.crc32(key.encode()))
    keep = (0x007FFFFF if positive else 0x807FFFFF).to_bytes(4, "little")
    exp = ((127 + int(math.log2(m))) << 23).to_bytes(4, "little")
    out, left = [], math.prod(shape)
    while left:
        n = min(left, CHUNK)
        bits = int.from_bytes(rng.randbytes(4 * n), "little")
        bits = (bits & int.from_bytes(keep * n, "little")) | int.from_bytes(exp * n, "little")
        out.append(bits.to_bytes(4 * n, "little"))
        left -= n
    return b"".join(out)


def write_params(path, params, seed, gain):
    """MXNet's NDArray list file (NDArray::Save, ndarray.cc): magic,
    reserved, the arrays, then their names.  Written under a temporary
    name and renamed, so a failure never leaves a partial file."""
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<QQQ", ND_LIST_MAGIC, 0, len(params)))
        for key, shape in params:
            f.write(struct.pack("<Ii", NDARRAY_V2_MAGIC, 0))  # magic, default storage
            f.write(struct.pack("<i%dq" % len(shape), len(shape), *shape))
            f.write(struct.pack("<iii", CPU, 0, FLOAT32))     # context, dtype
            f.write(seeded_floats(seed, key, shape, gain))
        f.write(struct.pack("<Q", len(params)))
        for key, _ in params:
            f.write(struct.pack("<Q", len(key)) + key.encode())
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--net")
    ap.add_argument("--image", type=int, help="image side (default: the network's own)")
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=".")
    ap.add_argument("--list", action="store_true", help="print the networks and their image sizes")
    a = ap.parse_args()
    if a.list:
        for name, (_, image, _) in NETWORKS.items():
            print(name, image)
        return 0
    if not a.net:
        ap.error("--net is required")
    image = a.image or NETWORKS.get(a.net, (None, 0, 1))[1]
    try:
        g, out = build(a.net, image, a.classes)
    except NetError as e:
        print("netgen: %s at image %d: %s" % (a.net, image, e), file=sys.stderr)
        return 1
    prefix = "%s/%s-%d" % (a.out, a.net, image)
    try:
        with open(prefix + "-symbol.json", "w") as f:
            f.write(g.to_json(out))
        write_params(prefix + "-0000.params", g.params, a.seed, NETWORKS[a.net][2])
    except OSError as e:
        print("netgen: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
