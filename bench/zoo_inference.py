"""Inference latency of model-zoo networks (hybridized, ``static_alloc``), best and median
of repeated forwards, for plexnet or MXNet in the same sitting.

    python bench/zoo_inference.py --lib plexnet --nets mobilenet1.0,resnet18_v1 --batch 1
    OPENBLAS_CORETYPE=SkylakeX /path/to/mxnet-venv/bin/python bench/zoo_inference.py --lib mxnet

With the opt-in torch plugin installed, ``PLEXNET_PLUGINS_BLOCK=ops_torch`` measures the
default plugin set.
"""
from __future__ import annotations

import argparse
import importlib
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="plexnet")
    ap.add_argument("--nets", default="mobilenet1.0,resnet18_v1,densenet121")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--reps", type=int, default=6)
    args = ap.parse_args()
    mx = importlib.import_module(args.lib)
    x = mx.nd.array(np.random.RandomState(0).rand(args.batch, 3, 224, 224).astype("f4"))
    for name in args.nets.split(","):
        net = mx.gluon.model_zoo.vision.get_model(name)
        net.initialize(mx.init.Xavier())
        net.hybridize(static_alloc=True, static_shape=True)
        for _ in range(2):
            net(x).wait_to_read()
        times = []
        for _ in range(args.reps):
            start = time.perf_counter()
            net(x).wait_to_read()
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"{args.lib} {name} batch {args.batch}: best {times[0] * 1e3:.1f} ms  "
              f"median {times[len(times) // 2] * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
