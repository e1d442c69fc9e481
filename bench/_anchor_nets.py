"""The anchor's networks (../shared/bench/anchor_bench.py) bound for a training step, for the
bench scripts that profile them (op_profile.py, resnet_ab.py, split_trace.py)."""
from __future__ import annotations

import os
import runpy
import sys
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHOR = os.path.join(HERE, "..", "..", "shared", "bench", "anchor_bench.py")
#: the anchor's data shape per workload
SHAPES = {"resnet18": (32, 3, 32, 32), "lenet": (64, 1, 28, 28), "mlp": (128, 784)}


def load_nets(lib: str = "plexnet") -> dict:
    """The workload builders of anchor_bench.py (run with nothing selected)."""
    argv = sys.argv
    sys.argv = [ANCHOR, "--lib", lib, "--only", "none"]
    try:
        g = runpy.run_path(ANCHOR)
    finally:
        sys.argv = argv
    return {"resnet18": g["resnet18_cifar"], "lenet": g["lenet"], "mlp": g["mlp"]}


def bind_for_training(mx: Any, net: Any, dshape: tuple) -> tuple[Any, list[str]]:
    """``net`` bound with gradients as the anchor binds it, weights uniform in +-0.07, one
    batch of random data and labels in place; returns the executor and its weight names."""
    exe = net.simple_bind(ctx=mx.cpu(), data=dshape, grad_req="write")
    rng = np.random.RandomState(0)
    params = [n for n in exe.arg_dict if n not in ("data", "softmax_label")]
    for name in params:
        arr = exe.arg_dict[name]
        arr[:] = rng.uniform(-0.07, 0.07, arr.shape)
    exe.arg_dict["data"][:] = rng.rand(*dshape).astype("f4")
    exe.arg_dict["softmax_label"][:] = rng.randint(0, 10, dshape[0]).astype("f4")
    return exe, params
