"""Deterministic model-zoo weights from parameter names and shapes, shared by the
MXNet fixture generator and the tests (so only outputs are stored)."""
from __future__ import annotations

import numpy as np

# name -> (input shape, get_model kwargs) of the networks whose outputs are compared
OUTPUT_CASES: dict[str, tuple[tuple[int, ...], dict]] = {
    "resnet18_v1": ((2, 3, 32, 32), {"classes": 10}),
    "resnet18_v2": ((2, 3, 32, 32), {"classes": 10}),
    "resnet50_v1": ((1, 3, 32, 32), {"classes": 10}),
    "resnet50_v2": ((1, 3, 32, 32), {"classes": 10}),
    "mobilenet0.25": ((1, 3, 16, 16), {"classes": 10}),
    "mobilenetv2_0.25": ((1, 3, 16, 16), {"classes": 10}),
    "squeezenet1.1": ((1, 3, 224, 224), {"classes": 10}),
}


def weights_for(shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """One array per structural parameter name (sorted order seeds the generator)."""
    out = {}
    for i, name in enumerate(sorted(shapes)):
        shape = tuple(shapes[name])
        rng = np.random.RandomState(i)
        if name.endswith("running_var"):
            v = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("gamma"):
            v = rng.uniform(0.8, 1.2, shape)
        elif name.endswith(("beta", "bias", "running_mean")):
            v = rng.uniform(-0.1, 0.1, shape)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            a = np.sqrt(3.0 / max(fan_in, 1))
            v = rng.uniform(-a, a, shape)
        out[name] = v.astype(np.float32)
    return out


def input_for(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.RandomState(123).uniform(-1, 1, shape).astype(np.float32)
