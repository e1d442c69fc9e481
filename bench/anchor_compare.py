"""Run ../shared/bench/anchor_bench.py for plexnet and Apache MXNet in one sitting, plus
the numpy floors for big_add and dot, and print medians and ratios against the targets.

    python bench/anchor_compare.py --mxnet-python /path/to/mxnet-venv/bin/python --rounds 3

Targets (issues): tiny_chain/tiny_indep <= 0.5x MXNet; big_add >= 0.9x numpy;
dot >= 0.95x numpy; mlp <= 0.8x MXNet; lenet <= 1.0x MXNet; kv >= 1.0x MXNet.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHOR = os.path.join(HERE, "..", "..", "shared", "bench", "anchor_bench.py")


def run_anchor(python: str, lib: str) -> dict[str, float]:
    out = subprocess.run([python, ANCHOR, "--lib", lib], capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            try:
                res[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return res


def numpy_floor() -> dict[str, float]:
    a = np.ones((2048, 2048), "f4"); b = np.ones((2048, 2048), "f4"); c = np.empty_like(a)
    np.add(a, b, out=c)
    t = time.perf_counter()
    for _ in range(50):
        np.add(a, b, out=c)
    add = 3 * 2048 * 2048 * 4 / ((time.perf_counter() - t) / 50) / 1e9
    x = np.random.rand(1024, 1024).astype("f4"); y = np.random.rand(1024, 1024).astype("f4")
    np.dot(x, y)
    t = time.perf_counter()
    for _ in range(20):
        np.dot(x, y)
    dot = 2 * 1024 ** 3 / ((time.perf_counter() - t) / 20) / 1e9
    return {"big_add_GBps": add, "dot1024_GFLOPs": dot}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mxnet-python", default=os.environ.get("PLEXNET_MXNET_PYTHON", ""))
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"plexnet": [], "mxnet": [], "numpy": []}
    for _ in range(args.rounds):
        runs["plexnet"].append(run_anchor(sys.executable, "plexnet"))
        if args.mxnet_python:
            runs["mxnet"].append(run_anchor(args.mxnet_python, "mxnet"))
        runs["numpy"].append(numpy_floor())
    med = {lib: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for lib, rs in runs.items() if rs}
    print(f"{'workload':32s} {'plexnet':>10s} {'mxnet':>10s} {'numpy':>10s}  ratio / target")
    targets = {"tiny_chain_us_per_op": ("mxnet", "<=", 0.5), "tiny_indep_us_per_op": ("mxnet", "<=", 0.5),
               "big_add_GBps": ("numpy", ">=", 0.9), "dot1024_GFLOPs": ("numpy", ">=", 0.95),
               "mlp_train_ms_per_batch128": ("mxnet", "<=", 0.8), "lenet_train_ms_per_batch64": ("mxnet", "<=", 1.0),
               "kv_local_push4_pull_GBps": ("mxnet", ">=", 1.0)}
    for k, v in med["plexnet"].items():
        mx_v = med.get("mxnet", {}).get(k)
        np_v = med.get("numpy", {}).get(k)
        ref, op, goal = targets.get(k, (None, "", 0))
        base = {"mxnet": mx_v, "numpy": np_v}.get(ref)
        ratio = f"{v / base:.2f}x (target {op} {goal}x)" if base else ""
        fmt = lambda x: f"{x:10.4g}" if x is not None else f"{'-':>10s}"  # noqa: E731
        print(f"{k:32s} {fmt(v)} {fmt(mx_v)} {fmt(np_v)}  {ratio}")


if __name__ == "__main__":
    main()
