"""The anchor workloads' training step (``../shared/bench/anchor_bench.py``: executor,
threaded engine, SGD update), timed step by step while alternating settings in one
process, so that the shared host's load swings hit every setting alike:

    python bench/step_split_bench.py --net lenet --steps 150 [--settings split,nosplit]

Settings: ``split`` (ops-basic's kernels share their batch with a helper thread when the
engine gives the worker both cores, ``nn/_split.py``) and ``nosplit``
(``PLEXNET_OPS_BASIC_SPLIT=0``'s behaviour). Prints best, 10th percentile and median
milliseconds per step; the best of many short samples approximates a quiet machine.
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHOR = os.path.join(HERE, "..", "..", "shared", "bench", "anchor_bench.py")
SHAPES = {"lenet": (64, 1, 28, 28), "mlp": (128, 784)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--net", default="lenet", choices=sorted(SHAPES))
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--settings", default="split,nosplit")
    args = ap.parse_args()
    argv = sys.argv
    sys.argv = [ANCHOR, "--lib", "plexnet", "--only", "none"]
    try:
        g = runpy.run_path(ANCHOR)
    finally:
        sys.argv = argv
    import plexnet as mx
    from plexnet_ops_basic.nn import _split
    nd = mx.nd
    dshape = SHAPES[args.net]
    net = g[args.net]()
    rng = np.random.RandomState(0)
    exe = net.simple_bind(ctx=mx.cpu(), data=dshape, grad_req="write")
    for name, arr in exe.arg_dict.items():
        if name not in ("data", "softmax_label"):
            arr[:] = rng.uniform(-0.07, 0.07, arr.shape)
    X = rng.rand(*dshape).astype("f4")
    Y = rng.randint(0, 10, (dshape[0],)).astype("f4")
    params = [n for n in exe.arg_dict if n not in ("data", "softmax_label")]

    def step() -> None:
        exe.arg_dict["data"][:] = X
        exe.arg_dict["softmax_label"][:] = Y
        exe.forward(is_train=True)
        exe.backward()
        for n in params:
            w = exe.arg_dict[n]
            w -= 0.1 / dshape[0] * exe.grad_dict[n]
        nd.waitall()

    settings = args.settings.split(",")
    flags = {"split": True, "nosplit": False}
    times: dict = {s: [] for s in settings}
    for s in settings:
        _split._ENABLED = flags[s]
        for _ in range(3):
            step()
    for _ in range(args.steps):
        for s in settings:
            _split._ENABLED = flags[s]
            t = time.perf_counter()
            step()
            times[s].append(time.perf_counter() - t)
    load = os.getloadavg()[0]
    for s, v in times.items():
        v = np.array(v) * 1e3
        print(f"{args.net} {s:8s} best {v.min():7.2f}  p10 {np.percentile(v, 10):7.2f}  "
              f"median {np.median(v):7.2f} ms/step  (load {load:.1f})", flush=True)


if __name__ == "__main__":
    main()
