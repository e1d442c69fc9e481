"""Where a Gluon MLP train step's time goes: forward, backward and ``trainer.step`` timed
apart, once with a wait after each phase (``sync``) and once without (``async``).

    python bench/gluon_phases.py --lib plexnet
    OPENBLAS_CORETYPE=SkylakeX /path/to/mxnet-venv/bin/python bench/gluon_phases.py --lib mxnet

Prints milliseconds per step (docs/performance.md, "where an imperative Gluon step's time goes").
"""
from __future__ import annotations

import argparse
import importlib
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="plexnet")
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()
    mx = importlib.import_module(args.lib)
    gluon, autograd, nd = mx.gluon, mx.autograd, mx.nd
    batch = 128
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(256, activation="relu"), gluon.nn.Dense(128, activation="relu"), gluon.nn.Dense(10))
    net.initialize(mx.init.Uniform(0.07))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.RandomState(0)
    xs = [nd.array(rng.rand(batch, 784).astype("f4")) for _ in range(4)]
    ys = [nd.array(rng.randint(0, 10, batch).astype("f4")) for _ in range(4)]
    phases = [0.0, 0.0, 0.0]

    def step(i: int, sync: bool) -> None:
        t0 = time.perf_counter()
        with autograd.record():
            loss = loss_fn(net(xs[i % 4]), ys[i % 4])
        if sync:
            loss.wait_to_read()
        t1 = time.perf_counter()
        loss.backward()
        if sync:
            nd.waitall()
        t2 = time.perf_counter()
        trainer.step(batch)
        if sync:
            nd.waitall()
        t3 = time.perf_counter()
        phases[0] += t1 - t0
        phases[1] += t2 - t1
        phases[2] += t3 - t2

    for sync in (True, False):
        for i in range(10):
            step(i, sync)
        nd.waitall()
        phases[:] = [0.0, 0.0, 0.0]
        start = time.perf_counter()
        for i in range(args.steps):
            step(i, sync)
        nd.waitall()
        total = (time.perf_counter() - start) / args.steps * 1e3
        fwd, bwd, upd = (p / args.steps * 1e3 for p in phases)
        print(f"{args.lib} {'sync' if sync else 'async'}: total {total:.3f} ms  forward {fwd:.3f}  "
              f"backward {bwd:.3f}  trainer.step {upd:.3f}")


if __name__ == "__main__":
    main()
