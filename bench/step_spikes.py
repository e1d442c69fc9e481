"""Where an anchor training step's mean goes: every step timed apart (``waitall`` after
each), the median against the mean, the long steps, and for each long step the engine
operations inside it (wall time against the worker thread's own CPU time: a worker that
burns CPU while the wall clock runs on is spin-waiting, e.g. inside OpenBLAS for a helper
thread that is off the core) and the garbage collections that ran in it.

    python bench/step_spikes.py --net mlp --steps 300

Session 9 (docs/performance.md) found with it that the MLP's median step sits at the GEMM
floor while 8-15 of 300 steps take 5-36 ms.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time

from _anchor_nets import SHAPES, bind_for_training, load_nets

import plexnet as mx
from plexnet.engine import runner


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--net", default="mlp", choices=sorted(SHAPES))
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--long-ms", type=float, default=5.0, help="a step at least this long is listed")
    args = ap.parse_args()

    ops: list[tuple[float, float, str, float]] = []     # (start, end, name, worker CPU ms)
    run = runner.Runner._execute

    def timed(self, op, rc, wname, pool):  # type: ignore[no-untyped-def]
        s, c = time.perf_counter(), time.thread_time()
        run(self, op, rc, wname, pool)
        ops.append((s, time.perf_counter(), getattr(op, "name", None) or "?", (time.thread_time() - c) * 1e3))
    runner.Runner._execute = timed

    collections: list[tuple[float, float, int]] = []    # (start, end, generation)

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            on_gc.t = time.perf_counter()  # type: ignore[attr-defined]
        else:
            collections.append((on_gc.t, time.perf_counter(), info["generation"]))  # type: ignore[attr-defined]
    gc.callbacks.append(on_gc)

    exe, params = bind_for_training(mx, load_nets()[args.net](), SHAPES[args.net])
    lr = 0.1 / SHAPES[args.net][0]

    def step() -> None:
        exe.forward(is_train=True)
        exe.backward()
        for n in params:
            w = exe.arg_dict[n]
            w -= lr * exe.grad_dict[n]
        mx.nd.waitall()

    step()
    spans = []
    for _ in range(args.steps):
        t = time.perf_counter()
        step()
        spans.append((t, time.perf_counter()))
    ms = [(e - s) * 1e3 for s, e in spans]
    long_steps = [(s, e) for s, e in spans if (e - s) * 1e3 >= args.long_ms]
    print(f"{args.net}: {args.steps} steps, median {statistics.median(ms):.2f} ms, mean {statistics.mean(ms):.2f} ms, "
          f"{len(long_steps)} steps of at least {args.long_ms:g} ms")
    for s, e in long_steps:
        print(f"  step {(e - s) * 1e3:.1f} ms")
        for os_, oe, name, cpu in ops:
            if os_ >= s and oe <= e and (oe - os_) * 1e3 >= 0.7:
                print(f"    operation {name:<28} wall {(oe - os_) * 1e3:6.2f} ms  worker CPU {cpu:6.2f} ms")
        for gs, ge, gen in collections:
            if s <= gs <= e:
                print(f"    garbage collection, generation {gen}: {(ge - gs) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
