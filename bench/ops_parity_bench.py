"""Timings of the operators issue 14 added to ops-basic, plexnet against Apache MXNet 1.9.1
in one sitting (run this file once with each library; compare the printed medians).

    python bench/ops_parity_bench.py plexnet
    OPENBLAS_CORETYPE=SkylakeX /path/to/mxnet-venv/bin/python bench/ops_parity_bench.py mxnet

Each case runs imperatively (``nd.<op>``, then a wait on the result), forward only, on
about 1e6 elements (``--small``: about 1e3); best of 7 after a warm-up.
"""
from __future__ import annotations

import argparse
import importlib
import time

import numpy as np


def cases(nd, big: bool):
    rng = np.random.default_rng(0)
    n = 1000 if big else 10

    def arr(*shape, lo=-1.0, hi=1.0):
        return nd.array(rng.uniform(lo, hi, shape).astype(np.float32))

    x2 = arr(n, n)
    x4 = arr(4, 16, n // 16 * 4 if big else 4, 64 if big else 4)
    seq = arr(100 if big else 5, 100 if big else 2, 100 if big else 1)
    lens = nd.array(rng.integers(1, seq.shape[0] + 1, seq.shape[1]).astype(np.float32))
    idx = nd.array(rng.integers(0, n, (2, n * 10)).astype(np.float32))
    grid = arr(4, 2, x4.shape[2], x4.shape[3], lo=-1.1, hi=1.1)
    yield "sort", lambda: nd.sort(x2, axis=-1)
    yield "topk k=5", lambda: nd.topk(x2, k=5, ret_typ="value")
    yield "argsort", lambda: nd.argsort(x2)
    yield "cumsum", lambda: nd.cumsum(x2, axis=1)
    yield "maximum(x, 0.5)", lambda: nd.maximum(x2, 0.5)
    yield "greater(x, y)", lambda: nd.greater(x2, x2.T)
    yield "Pad reflect", lambda: nd.pad(x4, mode="reflect", pad_width=(0, 0, 0, 0, 2, 2, 2, 2))
    yield "UpSampling nearest x2", lambda: nd.UpSampling(x4, scale=2, sample_type="nearest")
    yield "SequenceMask", lambda: nd.SequenceMask(seq, lens, use_sequence_length=True)
    yield "SequenceReverse", lambda: nd.SequenceReverse(seq, lens, use_sequence_length=True)
    yield "gather_nd", lambda: nd.gather_nd(x2, idx)
    yield "depth_to_space", lambda: nd.depth_to_space(x4, 2)
    yield "BilinearSampler", lambda: nd.BilinearSampler(x4, grid)
    yield "diag", lambda: nd.diag(x2)
    yield "moments", lambda: nd.moments(x2, axes=(1,))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("lib", choices=("plexnet", "mxnet"))
    ap.add_argument("--small", action="store_true")
    args = ap.parse_args()
    mx = importlib.import_module(args.lib)
    for name, fn in cases(mx.nd, not args.small):
        def run(fn=fn) -> None:
            out = fn()
            (out[0] if isinstance(out, (list, tuple)) else out).wait_to_read()
        run()
        times = []
        for _ in range(7):
            t = time.perf_counter()
            run()
            times.append(time.perf_counter() - t)
        print(f"{args.lib:8s} {name:24s} {min(times) * 1e3:9.3f} ms")


if __name__ == "__main__":
    main()
