"""Micro-benchmark: Convolution + Pooling forward/backward at LeNet shapes (float32).

    python plugins/ops-basic/tests/nn/bench_conv_pool.py [--mxnet | --step]

batch 64, 1x28x28 -> conv 5x5x20 -> pool 2 -> conv 5x5x50 -> pool 2. Prints the best of
several runs per stage in ms. ``--mxnet`` times the same ops with an installed
Apache MXNet (``mx.nd`` + autograd) for comparison.

On a 2-core machine shared with other busy processes, numpy's multi-threaded OpenBLAS
degrades badly (a GEMM that takes 1 ms can take 15-50 ms while a thread waits for its
descheduled partner); compare timings only on a quiet machine, or set
``OPENBLAS_NUM_THREADS=1`` (slower when quiet, but stable).
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


if __name__ == "__main__" and "--step" not in sys.argv:
    if "--mxnet" in sys.argv:
        bench_mxnet()
    else:
        bench_plexnet()


def bench_lenet_step():
    """All LeNet operators of one training step called back to back (no executor, no
    engine): a lower bound of what a plexnet LeNet step costs on this machine."""
    import plexnet
    from plexnet.engine.runctx import run_context
    from plexnet.operator import OpContext, OpReqType

    cpu = plexnet.cpu()
    reg = plexnet.plugins.registries().operators
    rc = run_context(cpu, "bench")
    rng = np.random.default_rng(0)
    W = OpReqType.write
    layers = [("Convolution", dict(kernel=(5, 5), num_filter=20)), ("Activation", dict(act_type="tanh")),
              ("Pooling", dict(kernel=(2, 2), stride=(2, 2), pool_type="max")),
              ("Convolution", dict(kernel=(5, 5), num_filter=50)), ("Activation", dict(act_type="tanh")),
              ("Pooling", dict(kernel=(2, 2), stride=(2, 2), pool_type="max")), ("flatten", None),
              ("FullyConnected", dict(num_hidden=500)), ("Activation", dict(act_type="tanh")),
              ("FullyConnected", dict(num_hidden=10)), ("SoftmaxOutput", {})]
    shape = (64, 1, 28, 28)
    plan = []
    for name, kw in layers:
        if name == "flatten":
            plan.append(None)
            shape = (shape[0], int(np.prod(shape[1:])))
            continue
        prop = reg.create_property(name, kw)
        ins, outs, _ = prop.infer_shape([shape] + [None] * (len(prop.list_arguments()) - 1))
        params = [rng.uniform(-0.07, 0.07, s).astype("f4") for s in ins[1:]]
        if name == "SoftmaxOutput":
            params = [rng.integers(0, 10, ins[1]).astype("f4")]
        res = lambda reqs: [plexnet.resource.get().request(cpu, r) for r in reqs]  # noqa: E731
        plan.append(dict(prop=prop, op=prop.create_operator(cpu), params=params, outs=[np.empty(s, "f4") for s in outs],
                         fctx=OpContext(True, rc, res(prop.forward_resource(ins))),
                         bctx=OpContext(True, rc, res(prop.backward_resource(ins))),
                         grads=[np.empty(s, "f4") for s in ins]))
        shape = outs[0]
    x0 = rng.uniform(0, 1, (64, 1, 28, 28)).astype("f4")

    def step():
        x = x0
        acts = []
        for p in plan:
            if p is None:
                x = x.reshape(x.shape[0], -1)
                continue
            ins = [x] + p["params"]
            p["op"].forward(p["fctx"], ins, [W] * len(p["outs"]), p["outs"], [])
            acts.append((p, ins))
            x = p["outs"][0]
        g = None
        for p, ins in reversed(acts):
            og = [g.reshape(p["outs"][0].shape) if g is not None else None]
            reqs = [W] * len(ins)
            if p["prop"].op_name == "SoftmaxOutput":
                reqs[1] = OpReqType.null
            p["op"].backward(p["bctx"], og, ins, p["outs"], reqs, p["grads"], [])
            g = p["grads"][0]
            if p["prop"].op_name != "SoftmaxOutput":
                for prm, gr in zip(p["params"], p["grads"][1:]):
                    prm -= (0.1 / 64) * gr
    t, tm = best(step, 20)
    print(f"plexnet LeNet step (ops only, no executor): best {t:.2f} ms, median {tm:.2f} ms")


if __name__ == "__main__" and "--step" in sys.argv:
    bench_lenet_step()
