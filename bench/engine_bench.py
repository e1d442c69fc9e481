"""Dependency-engine benchmark: per-operation overhead and parallel speedup.

    python bench/engine_bench.py [--ops 20000] [--repeats 7] [--blas-threads 1]

Prints (no asserts):

* engine overhead per tiny operation (``lambda rctx: None``), in microseconds, for every
  engine: ``chain`` (all on one variable, each waits for the previous), ``indep`` (each
  on its own variable), ``binary`` (``c = a + b`` shape: two reads, one fresh output),
  ``async`` (``push_async`` completing inline) and ``delete`` (``push_delete`` of an idle
  variable: the NDArray garbage-collection fast path). Each figure is the median over
  repeats of (push N + wait_for_all) / N, minus the cost of calling the function N times
  directly; the best repeat is shown too, and the median process CPU time per operation
  (all threads), which other jobs on a shared machine disturb less than wall time.
* the speedup of two independent 2048x2048 float32 matmuls pushed to the threaded
  engines over running them one after the other on the calling thread. numpy's BLAS
  runs single-threaded here (``--blas-threads``, default 1) so that the engine's workers,
  not BLAS, provide the parallelism, as with MXNet's per-worker OpenMP setting.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def _parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", type=int, default=20000, help="operations per repeat")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--blas-threads", type=int, default=1, help="BLAS threads for the matmul test")
    p.add_argument("--size", type=int, default=2048, help="matmul size")
    p.add_argument("--engines", default="NaiveEngine,ThreadedEngine,ThreadedEnginePerDevice")
    return p.parse_args()


ARGS = _parse()
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = str(ARGS.blas_threads)     # before numpy is imported

import numpy as np
from plexnet import engine as engine_mod
from plexnet.context import cpu


def _noop(rctx: object) -> None:
    return None


def _direct_call_cost(n: int) -> float:
    f = _noop
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            f(None)
        best = min(best, time.perf_counter() - t)
    return best / n


def bench_overhead(eng: engine_mod.Engine, n: int, repeats: int) -> dict[str, tuple[float, float]]:
    ctx = cpu()
    f = _noop
    push_sync = eng.push_sync
    push_async = eng.push_async

    def chain() -> tuple[float, float]:
        v = eng.new_var()
        m = (v,)
        t, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            push_sync(f, ctx, (), m)
        eng.wait_for_all()
        return time.perf_counter() - t, time.process_time() - c0

    def indep() -> tuple[float, float]:
        vs = [(eng.new_var(),) for _ in range(n)]
        t, c0 = time.perf_counter(), time.process_time()
        for m in vs:
            push_sync(f, ctx, (), m)
        eng.wait_for_all()
        return time.perf_counter() - t, time.process_time() - c0

    def binary() -> tuple[float, float]:
        a, b = eng.new_var(), eng.new_var()
        c = (a, b)
        outs = [(eng.new_var(),) for _ in range(n)]
        t, c0 = time.perf_counter(), time.process_time()
        for m in outs:
            push_sync(f, ctx, c, m)
        eng.wait_for_all()
        return time.perf_counter() - t, time.process_time() - c0

    def async_() -> tuple[float, float]:
        v = eng.new_var()
        m = (v,)

        def af(rctx: object, done: object) -> None:
            done()  # type: ignore[operator]
        t, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            push_async(af, ctx, (), m)
        eng.wait_for_all()
        return time.perf_counter() - t, time.process_time() - c0

    def delete() -> tuple[float, float]:
        vs = [eng.new_var() for _ in range(n)]
        push_delete = eng.push_delete
        t, c0 = time.perf_counter(), time.process_time()
        for v in vs:
            push_delete(f, ctx, v)
        eng.wait_for_all()
        return time.perf_counter() - t, time.process_time() - c0

    direct = _direct_call_cost(n)
    out = {}
    for name, fn in (("chain", chain), ("indep", indep), ("binary", binary), ("async", async_),
                     ("delete", delete)):
        fn()                                  # warm-up (pools, caches)
        runs = [fn() for _ in range(repeats)]
        wall = sorted((w / n - direct) * 1e6 for w, _ in runs)
        cpu_ = sorted((c / n - direct) * 1e6 for _, c in runs)
        out[name] = (statistics.median(wall), wall[0], statistics.median(cpu_))
    return out


def bench_matmul(eng: engine_mod.Engine, size: int, repeats: int) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    a = [rng.standard_normal((size, size), dtype=np.float32) for _ in range(2)]
    b = [rng.standard_normal((size, size), dtype=np.float32) for _ in range(2)]
    c = [np.empty((size, size), np.float32) for _ in range(2)]
    np.matmul(a[0], b[0], out=c[0])           # warm-up
    vs = [eng.new_var() for _ in range(2)]
    ctx = cpu()
    serial, par = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        for i in range(2):
            np.matmul(a[i], b[i], out=c[i])
        serial.append(time.perf_counter() - t)
        t = time.perf_counter()
        for i in range(2):
            eng.push_sync(lambda rctx, i=i: np.matmul(a[i], b[i], out=c[i]), ctx, (), (vs[i],))
        eng.wait_for_all()
        par.append(time.perf_counter() - t)
    return statistics.median(serial), statistics.median(par)


def main() -> None:
    kinds = [k for k in ARGS.engines.split(",") if k]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, numpy {np.__version__}, "
          f"switch interval {sys.getswitchinterval() * 1e3:.0f} ms, load average "
          f"{os.getloadavg()[0]:.2f}; a plain Python call costs {_direct_call_cost(200000) * 1e9:.0f} ns "
          f"now (machine speed indicator)")
    print(f"engine overhead per tiny op in us, wall clock: median (best) of {ARGS.repeats} x {ARGS.ops} "
          f"ops, direct call cost subtracted; [median process CPU time per op: less sensitive to "
          f"other load on the machine]")
    cols = ("chain", "indep", "binary", "async", "delete")
    print(f"{'engine':<24}" + "".join(f"{c:>20}" for c in cols))
    results = {}
    for kind in kinds:
        eng = engine_mod.create(kind)
        try:
            results[kind] = r = bench_overhead(eng, ARGS.ops, ARGS.repeats)
        finally:
            eng.shutdown()
        print(f"{kind:<24}" + "".join(f"{r[c][0]:>6.2f} ({r[c][1]:.2f}) [{r[c][2]:.2f}]" for c in cols))
    if "NaiveEngine" in results:
        for kind in kinds:
            if kind != "NaiveEngine":
                ratios = "  ".join(f"{c} {results[kind][c][0] / results['NaiveEngine'][c][0]:.2f}x"
                                   for c in cols[:4])
                print(f"  {kind} / NaiveEngine: {ratios}")

    print(f"\nparallel speedup, two independent {ARGS.size}x{ARGS.size} float32 matmuls "
          f"(BLAS threads {ARGS.blas_threads}), median of {ARGS.repeats}:")
    for kind in kinds:
        if kind == "NaiveEngine":
            continue
        eng = engine_mod.create(kind)
        try:
            s, p = bench_matmul(eng, ARGS.size, ARGS.repeats)
        finally:
            eng.shutdown()
        print(f"{kind:<26} serial {s * 1e3:8.1f} ms   engine {p * 1e3:8.1f} ms   speedup {s / p:.2f}x")


if __name__ == "__main__":
    main()
