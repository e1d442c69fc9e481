"""ops-basic's numpy implementations against plexnet-ops-numba's, per operator, forward
and backward (req write), alternated repetition by repetition in one process (a shared
host's load swings hit both alike). Prints best / median milliseconds.

    python bench/numba_ops_bench.py [--reps 30] [--only pool1,conv2,...] [--dtype f4]

Layers: LeNet's (batch 64, as bench/lenet_ops_bench.py) and a few others."""
from __future__ import annotations

import argparse
import time

import numpy as np

LAYERS = {
    "conv1": ("Convolution", dict(kernel=(5, 5), num_filter=20), (64, 1, 28, 28)),
    "pool1": ("Pooling", dict(kernel=(2, 2), stride=(2, 2), pool_type="max"), (64, 20, 24, 24)),
    "conv2": ("Convolution", dict(kernel=(5, 5), num_filter=50), (64, 20, 12, 12)),
    "pool2": ("Pooling", dict(kernel=(2, 2), stride=(2, 2), pool_type="max"), (64, 50, 8, 8)),
    "avgpool2x2": ("Pooling", dict(kernel=(2, 2), stride=(2, 2), pool_type="avg"), (64, 20, 24, 24)),
    "maxpool3x3s2": ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"), (8, 64, 56, 56)),
    "conv3x3pad": ("Convolution", dict(kernel=(3, 3), num_filter=32, pad=(1, 1)), (32, 16, 32, 32)),
    # MobileNet 1.0 at batch 1: depthwise 3x3 (stride 1 and 2) and pointwise 1x1 layers
    "mb_dw56": ("Convolution", dict(kernel=(3, 3), num_filter=128, num_group=128, pad=(1, 1), no_bias=True),
                (1, 128, 56, 56)),
    "mb_dw112s2": ("Convolution", dict(kernel=(3, 3), num_filter=64, num_group=64, pad=(1, 1), stride=(2, 2),
                                       no_bias=True), (1, 64, 112, 112)),
    "mb_dw14": ("Convolution", dict(kernel=(3, 3), num_filter=512, num_group=512, pad=(1, 1), no_bias=True),
                (1, 512, 14, 14)),
    "mb_pw56": ("Convolution", dict(kernel=(1, 1), num_filter=128, no_bias=True), (1, 128, 56, 56)),
    "mb_pw14": ("Convolution", dict(kernel=(1, 1), num_filter=512, no_bias=True), (1, 512, 14, 14)),
}


def make(name, kw, dshape, which, rng, dtype):
    import plexnet
    from plexnet.engine.runctx import run_context
    from plexnet.operator import OpContext, OpReqType
    cpu = plexnet.cpu()
    reg = plexnet.plugins.registries().operators
    prop = reg.create_property(name, kw)
    ins, outs, _ = prop.infer_shape([dshape] + [None] * (len(prop.list_arguments()) - 1))
    reg.force_impl(name, "cpu", which)
    try:
        op = reg.create_operator(prop, cpu)
    finally:
        reg.force_impl(name, "cpu", None)
    r = np.random.default_rng(0)
    x = [r.uniform(-1, 1, s).astype(dtype) for s in ins]
    y = [np.empty(s, dtype) for s in outs]
    rc = run_context(cpu, "bench")
    res = plexnet.resource.get()
    fctx = OpContext(True, rc, [res.request(cpu, q) for q in prop.forward_resource(ins)])
    bctx = OpContext(True, rc, [res.request(cpu, q) for q in prop.backward_resource(ins)])
    W = OpReqType.write
    dy = [r.uniform(-1, 1, s).astype(dtype) for s in outs]
    dx = [np.empty_like(a) for a in x]

    def fwd():
        op.forward(fctx, x, [W] * len(y), y, [])

    def bwd():
        op.backward(bctx, dy, x, y, [W] * len(x), dx, [])
    return fwd, bwd, type(op).__name__


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--only", default="")
    ap.add_argument("--dtype", default="f4")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    names = [n for n in LAYERS if not a.only or n in a.only.split(",")]
    print(f"{'layer':14s} {'impl':22s} {'fwd best/med ms':>16s} {'bwd best/med ms':>16s}")
    for n in names:
        op, kw, shape = LAYERS[n]
        runs = {w: make(op, kw, shape, w, rng, a.dtype) for w in ("xp", "numba")}
        for f, b, _ in runs.values():   # compile / warm
            f()
            b()
        t = {w: ([], []) for w in runs}
        for _ in range(a.reps):
            for w, (f, b, _) in runs.items():
                t0 = time.perf_counter()
                f()
                t1 = time.perf_counter()
                b()
                t2 = time.perf_counter()
                t[w][0].append(t1 - t0)
                t[w][1].append(t2 - t1)
        for w, (f, b, cls) in runs.items():
            tf, tb = t[w]
            print(f"{n:14s} {w + ' (' + cls + ')':22s} {min(tf) * 1e3:7.3f}/{np.median(tf) * 1e3:7.3f}  "
                  f"{min(tb) * 1e3:7.3f}/{np.median(tb) * 1e3:7.3f}")


if __name__ == "__main__":
    main()
