"""OpenBLAS's idle worker threads against plexnet's helper-thread splits (a diagnostic).

    python bench/blas_spin_bench.py
    OPENBLAS_THREAD_TIMEOUT=4 python bench/blas_spin_bench.py

After a GEMM on two threads numpy's OpenBLAS keeps its worker thread spinning, about 0.1 s
by default (``OPENBLAS_THREAD_TIMEOUT``, read when the library loads, shortens it): one core
stays busy meanwhile. A split of other work over the calling thread and ops-basic's helper
thread (``_split.run_items``: Winograd's chunks, BatchNorm's channel halves) competes with
it. Prints the CPU burnt during a sleep right after a GEMM, and one split's wall time with
idle BLAS threads and right after a GEMM, against the same work on one thread.
docs/performance.md (session 6) has the figures.
"""
from __future__ import annotations

import time

import numpy as np


def main() -> None:
    from plexnet_ops_basic.nn import _split
    a = np.random.rand(1024, 1024).astype("f4")
    x = np.random.rand(2, 100_000).astype("f4")   # each half in L2: compute-bound passes
    for _ in range(3):
        a @ a
    c = time.process_time()
    time.sleep(0.2)
    print(f"CPU burnt during a 200 ms sleep right after a 2-thread GEMM: {(time.process_time() - c) * 1e3:.0f} ms")

    def work(i: int, slot: int) -> None:
        for _ in range(60):
            np.sin(x[i], out=x[i])

    for label, gemm in (("idle BLAS threads", False), ("right after a GEMM", True)):
        walls = []
        for _ in range(5):
            time.sleep(0.3)            # let the BLAS threads go to sleep
            if gemm:
                a @ a
            t = time.perf_counter()
            _split.run_items(2, work)
            walls.append(time.perf_counter() - t)
        print(f"split of 2 x 60 sin passes over 400 kB, {label}: best {min(walls) * 1e3:.1f} ms, "
              f"median {sorted(walls)[2] * 1e3:.1f} ms")
    t = time.perf_counter()
    work(0, 0)
    work(1, 0)
    print(f"the same on one thread: {(time.perf_counter() - t) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
