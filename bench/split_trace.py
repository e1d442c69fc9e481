"""Trace the helper-thread splits during the anchor's ResNet-18 CIFAR step: per Winograd
call (shapes, whether it split, wall and calling-thread CPU ms) and every
``_split.observe`` overlap figure (CPU of both threads / (2 x wall); the self-check turns
every split off for two seconds when these fall below 0.7).

    python bench/split_trace.py                      # forward + backward per step
    python bench/split_trace.py --updates            # plus the anchor's weight updates
    PLEXNET_ENGINE_TYPE=NaiveEngine python bench/split_trace.py
    PLEXNET_OPS_BASIC_SPLIT=1 python bench/split_trace.py --updates

docs/performance.md (session 6 lead) has what these showed.
"""
from __future__ import annotations

import argparse
import collections
import os
import statistics
import time
from typing import Any

from _anchor_nets import SHAPES, bind_for_training, load_nets


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--updates", action="store_true", help="the anchor's w -= lr / 32 * g after each backward")
    args = ap.parse_args()
    os.environ.setdefault("PLEXNET_PLUGINS_BLOCK", "ops_torch")
    nets = load_nets()
    import plexnet as mx
    from plexnet_ops_basic.nn import _split
    from plexnet_ops_numba import winograd

    calls: dict = collections.defaultdict(list)
    overlaps: list = []
    for name in ("forward", "backward"):
        f = getattr(winograd, name)

        def wrapped(*a: Any, _f: Any = f, _n: str = name) -> Any:
            x = a[1]
            two = winograd._two(x.shape[0], x.size)
            t, c = time.perf_counter(), time.thread_time()
            r = _f(*a)
            calls[(_n, x.shape, two)].append(((time.perf_counter() - t) * 1e3, (time.thread_time() - c) * 1e3))
            return r
        setattr(winograd, name, wrapped)
    observe = _split.observe

    def logged(cpu: float, wall: float) -> None:
        overlaps.append(cpu / (2 * wall) if wall > 0 else 1.0)
        observe(cpu, wall)
    _split.observe = logged   # type: ignore[assignment]

    exe, params = bind_for_training(mx, nets["resnet18"](), SHAPES["resnet18"])

    def step() -> None:
        exe.forward(is_train=True)
        exe.backward()
        if args.updates:
            for n in params:
                exe.arg_dict[n] -= 0.1 / 32 * exe.grad_dict[n]
        mx.nd.waitall()

    step()
    step()
    calls.clear()
    overlaps.clear()
    t = time.perf_counter()
    for _ in range(args.steps):
        step()
    print(f"step {(time.perf_counter() - t) / args.steps * 1e3:.0f} ms "
          f"({os.environ.get('PLEXNET_ENGINE_TYPE', 'default engine')}, updates {args.updates})")
    for (kind, shape, two), v in sorted(calls.items(), key=lambda kv: str(kv[0])):
        wall = statistics.median(a for a, _ in v)
        cpu = statistics.median(b for _, b in v)
        print(f"  {kind:<8} {str(shape):<18} split={two!s:<5} calls {len(v):>3}  wall median {wall:6.1f} ms"
              f"  calling-thread CPU {cpu:6.1f} ms")
    print(f"splits observed: {len(overlaps)}; overlap " +
          (f"median {statistics.median(overlaps):.2f}, min {min(overlaps):.2f}" if overlaps else "-"))


if __name__ == "__main__":
    main()
