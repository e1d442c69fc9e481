"""BLAS threads vs engine workers: does coordination (``core/engine/blas.py``) help?

    python bench/blas_bench.py [--repeats 5] [--size 2048] [--resnet]

Runs each workload in a fresh process per mode, modes alternating, and prints medians
(best) in ms:

* ``coord``: the default - BLAS threads follow the number of awake CPU workers;
* ``free``: ``PLEXNET_BLAS_COORDINATION=0`` - BLAS keeps its own count (all cores) in
  every worker, so two workers running GEMMs ask for twice the cores;
* ``one``: ``OPENBLAS_NUM_THREADS=1`` - BLAS single-threaded (the old advice).

Workloads: ``one_gemm`` (one float32 ``size``x``size`` matmul pushed to the engine: a
lone worker should use every core), ``two_gemm`` (two independent ones pushed together:
no oversubscription), and with ``--resnet`` the ResNet-18 CIFAR training step of
``../shared/bench/anchor_bench.py`` (batch 32).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MODES = {"coord": {}, "free": {"PLEXNET_BLAS_COORDINATION": "0"}, "one": {"OPENBLAS_NUM_THREADS": "1"}}
ANCHOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "bench", "anchor_bench.py")


def child(size: int, reps: int) -> None:
    import numpy as np
    from plexnet import engine
    from plexnet.context import cpu
    eng = engine.get()
    rng = np.random.default_rng(0)
    a = [rng.random((size, size), dtype=np.float32) for _ in range(2)]
    b = [rng.random((size, size), dtype=np.float32) for _ in range(2)]
    c = [np.empty((size, size), np.float32) for _ in range(2)]
    vs = [eng.new_var() for _ in range(2)]

    def mm(k: int) -> None:
        eng.push_sync(lambda rc: np.matmul(a[k], b[k], out=c[k]), cpu(), (), (vs[k],), name="gemm")

    out = {}
    for name, n in (("one_gemm", 1), ("two_gemm", 2)):
        times = []
        for r in range(reps + 1):
            eng.wait_for_all()
            time.sleep(0.05)               # let the workers park
            t = time.perf_counter()
            for k in range(n):
                mm(k)
            eng.wait_for_all()
            if r:
                times.append(time.perf_counter() - t)
        out[name] = statistics.median(times) * 1e3
    from plexnet.engine import blas
    out["blas_enabled"] = blas.enabled()
    print(json.dumps(out))


def run_mode(mode: str, args: argparse.Namespace) -> dict[str, float]:
    env = dict(os.environ, **MODES[mode])
    r = subprocess.run([sys.executable, __file__, "--child", "--size", str(args.size), "--reps", str(args.reps)],
                       capture_output=True, text=True, env=env, timeout=600)
    if r.returncode:
        raise SystemExit(r.stderr)
    res: dict[str, float] = json.loads(r.stdout.strip().splitlines()[-1])
    if args.resnet:
        r = subprocess.run([sys.executable, ANCHOR, "--lib", "plexnet", "--only", "resnet18"],
                           capture_output=True, text=True, env=env, timeout=600)
        for line in r.stdout.splitlines():
            if line.startswith("resnet18"):
                res["resnet18_step"] = float(line.split()[1])
    return res


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5, help="processes per mode (alternating)")
    p.add_argument("--reps", type=int, default=5, help="timed runs per process")
    p.add_argument("--size", type=int, default=2048)
    p.add_argument("--resnet", action="store_true", help="also time anchor_bench's resnet18 step")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.size, args.reps)
        return
    results: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
    for _ in range(args.repeats):
        for m in MODES:
            results[m].append(run_mode(m, args))
    print(f"cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f} size={args.size}; ms, median (best) of "
          f"{args.repeats} processes")
    keys = [k for k in results["coord"][0] if k != "blas_enabled"]
    print("mode   " + "".join(f"{k:>22}" for k in keys))
    for m, rs in results.items():
        cells = "".join(f"{statistics.median(r[k] for r in rs):>13.1f} ({min(r[k] for r in rs):>6.1f})"
                        for k in keys)
        print(f"{m:<7}{cells}")


if __name__ == "__main__":
    main()
