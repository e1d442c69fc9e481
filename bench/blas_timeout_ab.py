"""OpenBLAS's idle-thread timeout A/B on an anchor training loop, in one process.

    python bench/blas_timeout_ab.py WORKLOAD ROUNDS T1 T2 ...      # e.g. resnet18 4 28 22

WORKLOAD is mlp, lenet or resnet18 (../shared/bench/anchor_bench.py's networks and its
loop: forward, backward, ``w -= lr * g``); each T is an ``OPENBLAS_THREAD_TIMEOUT``
exponent (idle threads spin 2**T cycles; OpenBLAS's default is 28). Each round runs a block
of steps per timeout, in alternating order, switching the timeout between blocks the way
``plexnet.engine.blas`` sets it at import (``openblas_read_env``, then the pool
restarted): on this shared host the same setting varies 20-40 % between processes, so
settings are compared within one. Prints the median and best ms per step per timeout.
"""
from __future__ import annotations

import ctypes
import os
import statistics
import sys
import time

import plexnet as mx
from plexnet import nd
from plexnet.engine import blas

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _anchor_nets import SHAPES, bind_for_training, load_nets  # noqa: E402

STEPS = {"mlp": 100, "lenet": 20, "resnet18": 4}


def main() -> None:
    kind, rounds, timeouts = sys.argv[1], int(sys.argv[2]), [int(v) for v in sys.argv[3:]]
    if not blas._libs:
        sys.exit("no coordinated OpenBLAS in this process")
    lib = ctypes.CDLL(blas._libs[0].filepath)
    exe, params = bind_for_training(mx, load_nets()[kind](), SHAPES[kind])

    def set_timeout(t: int) -> None:
        nd.waitall()                       # no GEMM in flight while the pool restarts
        os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(t)
        lib.openblas_read_env()
        lib.blas_thread_shutdown_()
        lib.blas_thread_init()
        del os.environ["OPENBLAS_THREAD_TIMEOUT"]
        lib.openblas_read_env()

    def step() -> None:
        exe.forward(is_train=True)
        exe.backward()
        for p in params:
            w = exe.arg_dict[p]
            w -= 0.001 * exe.grad_dict[p]
    step()
    step()
    nd.waitall()
    res: dict[int, list[float]] = {t: [] for t in timeouts}
    for r in range(rounds):
        for t in (timeouts if r % 2 == 0 else timeouts[::-1]):
            set_timeout(t)
            step()
            nd.waitall()
            t0 = time.perf_counter()
            for _ in range(STEPS[kind]):
                step()
            nd.waitall()
            res[t].append((time.perf_counter() - t0) / STEPS[kind] * 1e3)
    for t in timeouts:
        print(f"{kind} timeout {t:2d}: median {statistics.median(res[t]):.3f} ms, best {min(res[t]):.3f} ms",
              " ".join(f"{v:.2f}" for v in res[t]))


if __name__ == "__main__":
    main()
