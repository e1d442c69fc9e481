"""simple_bind time of long chains (issue 13, point 9: binding must not be quadratic).

A chain of N ``Activation(relu)`` nodes bound with ``grad_req='write'``: every forward
value is kept for the backward pass, so all of them are alive at once, the worst case
for the memory planner's arena packer (it was O(N^2): 79 s for N = 20,000).

    python bench/bind_bench.py                 # 1k, 10k, 100k
    python bench/bind_bench.py --sizes 1000 20000 --repeat 3

Prints, per size, the best-of-``repeat`` bind time, the planner's share of it, and the
planned bytes (which must equal N x one value: the chain needs no more).
"""
from __future__ import annotations

import argparse
import sys
import time


def chain(mx, n: int):
    x = mx.sym.Variable("data")
    for _ in range(n):
        x = mx.sym.Activation(x, act_type="relu")
    return x


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--shape", type=int, nargs="+", default=[4, 4])
    args = ap.parse_args(argv)
    import plexnet as mx
    from plexnet.executor import planner

    real = planner.plan_memory
    spent = {"t": 0.0}

    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            spent["t"] += time.perf_counter() - t

    planner.plan_memory = timed
    import plexnet.executor.executor as ex_mod
    if getattr(ex_mod, "plan_memory", None) is real:
        ex_mod.plan_memory = timed
    print(f"simple_bind of a relu chain, grad_req='write', data shape {tuple(args.shape)}")
    for n in args.sizes:
        sym = chain(mx, n)
        best = best_plan = float("inf")
        planned = None
        for _ in range(args.repeat):
            spent["t"] = 0.0
            t = time.perf_counter()
            ex = sym.simple_bind(mx.cpu(), data=tuple(args.shape), grad_req="write")
            dt = time.perf_counter() - t
            if dt < best:
                best, best_plan = dt, spent["t"]
            plan = getattr(ex, "_plan", None) or getattr(ex, "plan", None)
            planned = getattr(plan, "planned_bytes", None)
            del ex
        extra = f", planned {planned / 2 ** 20:.2f} MB" if planned is not None else ""
        print(f"  {n:>7} nodes: bind {best:7.2f} s (planner {best_plan:6.2f} s){extra}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
