"""A/B of ops-numba's Winograd settings on the anchor's ResNet-18 CIFAR train step (batch
32), alternated step by step in one process so that the host's swings hit both sides.

    python bench/resnet_ab.py --steps 6 --a TILE=4 --b TILE=2
    python bench/resnet_ab.py --a MIN_TILES=256 --b MIN_TILES=128

Each ``--a`` / ``--b`` is a comma-separated list of ``winograd`` module attributes
(``TILE``, ``MIN_TILES``, ``ENABLED``, ``WEIGHT_GRADIENT``) set before that side's step.
Prints per side the median and best wall time and process CPU time per step.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

from _anchor_nets import SHAPES, bind_for_training, load_nets


def _settings(spec: str) -> dict:
    out = {}
    for item in filter(None, spec.split(",")):
        k, v = item.split("=")
        out[k] = int(v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--a", default="")
    ap.add_argument("--b", default="")
    args = ap.parse_args()
    os.environ.setdefault("PLEXNET_PLUGINS_BLOCK", "ops_torch")
    import plexnet as mx
    from plexnet_ops_numba import winograd
    exe, params = bind_for_training(mx, load_nets()["resnet18"](), SHAPES["resnet18"])
    sides = {"a": _settings(args.a), "b": _settings(args.b)}
    default = {k: getattr(winograd, k) for s in sides.values() for k in s}
    times: dict = {"a": [], "b": []}

    def step() -> None:
        exe.forward(is_train=True)
        exe.backward()
        for n in params:
            exe.arg_dict[n] -= 0.1 / 32 * exe.grad_dict[n]
        mx.nd.waitall()

    for side in ("a", "b"):   # warm both (numba compiles, buffers grow)
        for k, v in {**default, **sides[side]}.items():
            setattr(winograd, k, v)
        step()
    for _ in range(args.steps):
        for side in ("a", "b"):
            for k, v in {**default, **sides[side]}.items():
                setattr(winograd, k, v)
            w, c = time.perf_counter(), time.process_time()
            step()
            times[side].append((time.perf_counter() - w, time.process_time() - c))
    for side in ("a", "b"):
        wall = [t[0] * 1e3 for t in times[side]]
        cpu = [t[1] * 1e3 for t in times[side]]
        label = getattr(args, side) or "default"
        print(f"{side} {label}: wall median {statistics.median(wall):.0f} best {min(wall):.0f} ms;"
              f" cpu median {statistics.median(cpu):.0f} best {min(cpu):.0f} ms")


if __name__ == "__main__":
    main()
