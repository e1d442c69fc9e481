"""Micro-benchmark: Convolution + Pooling forward/backward at LeNet shapes (float32).

    python plugins/ops-basic/tests/nn/bench_conv_pool.py [--mxnet]

batch 64, 1x28x28 -> conv 5x5x20 -> pool 2 -> conv 5x5x50 -> pool 2. Prints the best of
several runs per stage in ms. ``--mxnet`` times the same ops with an installed
Apache MXNet (``mx.nd`` + autograd) for comparison.
"""
from __future__ import annotations

import sys
import time

import numpy as np

REPS = 30


def best(fn, reps=REPS):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts) * 1e3, float(np.median(ts)) * 1e3


LAYERS = [
    ("conv1", "Convolution", dict(kernel=(5, 5), num_filter=20), (64, 1, 28, 28)),
    ("pool1", "Pooling", dict(kernel=(2, 2), stride=(2, 2), pool_type="max"), (64, 20, 24, 24)),
    ("conv2", "Convolution", dict(kernel=(5, 5), num_filter=50), (64, 20, 12, 12)),
    ("pool2", "Pooling", dict(kernel=(2, 2), stride=(2, 2), pool_type="max"), (64, 50, 8, 8)),
]


def bench_plexnet():
    import plexnet
    from plexnet.engine.runctx import run_context
    from plexnet.operator import OpContext, OpReqType

    cpu = plexnet.cpu()
    reg = plexnet.plugins.registries().operators
    rng = np.random.default_rng(0)
    total = {"fwd": 0.0, "bwd": 0.0}
    for label, name, kw, dshape in LAYERS:
        prop = reg.create_property(name, kw)
        ins, outs, _ = prop.infer_shape([dshape] + [None] * (len(prop.list_arguments()) - 1))
        x = [rng.uniform(-1, 1, s).astype("f4") for s in ins]
        y = [np.empty(s, "f4") for s in outs]
        op = prop.create_operator(cpu)
        rc = run_context(cpu, "bench")
        fctx = OpContext(True, rc, [plexnet.resource.get().request(cpu, r) for r in prop.forward_resource(ins)])
        bctx = OpContext(True, rc, [plexnet.resource.get().request(cpu, r) for r in prop.backward_resource(ins)])
        W = OpReqType.write
        f = lambda: op.forward(fctx, x, [W], y, [])  # noqa: E731
        f()
        dy = [rng.uniform(-1, 1, s).astype("f4") for s in outs]
        dx = [np.empty_like(a) for a in x]
        b = lambda: op.backward(bctx, dy, x, y, [W] * len(x), dx, [])  # noqa: E731
        tf, tfm = best(f)
        tb, tbm = best(b)
        total["fwd"] += tf
        total["bwd"] += tb
        print(f"plexnet {label:6s} fwd {tf:7.2f} ms (median {tfm:6.2f})  bwd {tb:7.2f} ms (median {tbm:6.2f})")
    print(f"plexnet total  fwd {total['fwd']:7.2f} ms  bwd {total['bwd']:7.2f} ms  "
          f"sum {total['fwd'] + total['bwd']:7.2f} ms")


def bench_mxnet():
    import mxnet as mx
    rng = np.random.default_rng(0)
    total = {"fwd": 0.0, "bwd": 0.0}
    for label, name, kw, dshape in LAYERS:
        x = mx.nd.array(rng.uniform(-1, 1, dshape).astype("f4"))
        args = [x]
        if name == "Convolution":
            c = dshape[1]
            args += [mx.nd.array(rng.uniform(-1, 1, (kw["num_filter"], c) + kw["kernel"]).astype("f4")),
                     mx.nd.array(rng.uniform(-1, 1, (kw["num_filter"],)).astype("f4"))]
        for a in args:
            a.attach_grad()
        fn = getattr(mx.nd, name)

        def f():
            fn(*args, **kw).wait_to_read()

        def fb():
            with mx.autograd.record():
                out = fn(*args, **kw)
            out.backward()
            mx.nd.waitall()
        tf, _ = best(f)
        tfb, _ = best(fb)
        total["fwd"] += tf
        total["bwd"] += tfb - tf
        print(f"mxnet   {label:6s} fwd {tf:7.2f} ms  bwd(approx, fwd+bwd-fwd) {tfb - tf:7.2f} ms")
    print(f"mxnet   total  fwd {total['fwd']:7.2f} ms  bwd {total['bwd']:7.2f} ms  "
          f"sum {total['fwd'] + total['bwd']:7.2f} ms")


if __name__ == "__main__":
    if "--mxnet" in sys.argv:
        bench_mxnet()
    else:
        bench_plexnet()
