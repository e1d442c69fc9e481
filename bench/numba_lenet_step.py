"""LeNet training step (the anchor benchmark's symbolic LeNet, batch 64) with ops-basic's
Convolution / Pooling against plexnet-ops-numba's, in one process: two executors, one
bound while ``xp`` is forced for both operators, timed in alternation (a shared host's
load swings hit both alike). Prints per-step best / median milliseconds per round.

    python bench/numba_lenet_step.py [--rounds 5] [--steps 20]

Across processes, the anchor itself (its figures move +-40% between processes here):
``python ../shared/bench/anchor_bench.py --lib plexnet --only lenet`` with and without
``PLEXNET_PLUGINS_BLOCK=ops_numba``."""
from __future__ import annotations

import argparse
import time

import numpy as np

import plexnet as mx
from plexnet import nd, sym


def lenet():
    data = sym.Variable("data")
    h = sym.Convolution(data, kernel=(5, 5), num_filter=20, name="conv1")
    h = sym.Activation(h, act_type="tanh")
    h = sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2))
    h = sym.Convolution(h, kernel=(5, 5), num_filter=50, name="conv2")
    h = sym.Activation(h, act_type="tanh")
    h = sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2))
    h = sym.Flatten(h)
    h = sym.FullyConnected(h, num_hidden=500, name="fc1")
    h = sym.Activation(h, act_type="tanh")
    h = sym.FullyConnected(h, num_hidden=10, name="fc2")
    return sym.SoftmaxOutput(h, name="softmax")


def trainer(dshape=(64, 1, 28, 28), iters=20, lr=0.1):
    rng = np.random.RandomState(0)
    exe = lenet().simple_bind(ctx=mx.cpu(), data=dshape, grad_req="write")
    for name, arr in exe.arg_dict.items():
        if name not in ("data", "softmax_label"):
            arr[:] = rng.uniform(-0.07, 0.07, arr.shape)
    X = rng.rand(iters, *dshape).astype("f4")
    Y = rng.randint(0, 10, (iters, dshape[0])).astype("f4")
    params = [n for n in exe.arg_dict if n not in ("data", "softmax_label")]

    def step(i):
        exe.arg_dict["data"][:] = X[i % iters]
        exe.arg_dict["softmax_label"][:] = Y[i % iters]
        exe.forward(is_train=True)
        exe.backward()
        for n in params:
            w = exe.arg_dict[n]
            w -= lr / dshape[0] * exe.grad_dict[n]
    return step


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    reg = mx.plugins.registries().operators
    steps = {}
    for which in ("xp", "numba"):
        for op in ("Convolution", "Pooling"):
            reg.force_impl(op, "cpu", which)
        steps[which] = trainer()
        steps[which](0)
        nd.waitall()
    for op in ("Convolution", "Pooling"):
        reg.force_impl(op, "cpu", None)
    for r in range(a.rounds):
        t = {w: [] for w in steps}
        for i in range(a.steps):
            for w, step in steps.items():
                t0 = time.perf_counter()
                step(i)
                nd.waitall()
                t[w].append(time.perf_counter() - t0)
        print(f"round {r}: " + "  ".join(f"{w} best {min(v) * 1e3:.2f} median {np.median(v) * 1e3:.2f} ms"
                                          for w, v in t.items()), flush=True)


if __name__ == "__main__":
    main()
