"""Helpers for the tensor operator tests: float64 references and input builders."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import plexnet
from plexnet.base import ShapeError
from plexnet.operator.params import ParamError

from opcheck import make_prop

ALL_REQS = ("null", "write", "add", "inplace")


def rand(shape: Any, low: float = -1.0, high: float = 1.0, seed: int = 0, dtype: Any = np.float64) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def away_from(x: np.ndarray, points: Any, margin: float = 0.05) -> np.ndarray:
    """Nudge values that lie within ``margin`` of any of ``points`` (kinks of the op)."""
    x = np.array(x, copy=True)
    for p in np.atleast_1d(points):
        near = np.abs(x - p) < margin
        x[near] = p + np.where(x[near] >= p, margin, -margin) * 2
    return x


def vec(fn: Any) -> Any:
    """A float64 reference from a scalar ``math`` function."""
    f = np.vectorize(fn, otypes=[np.float64])
    return lambda x: f(np.asarray(x, dtype=np.float64))


def shape_error(name: str, kwargs: Any = None, *shapes: Any, match: tuple[str, ...] = ()) -> ShapeError:
    prop = make_prop(name, kwargs or {})
    with pytest.raises(ShapeError) as ei:
        prop.infer_shape([None if s is None else tuple(s) for s in shapes])
    msg = str(ei.value)
    assert name in msg or prop.op_name in msg, msg
    for m in match:
        assert m in msg, f"{m!r} not in {msg!r}"
    return ei.value


def param_error(name: str, kwargs: Any, *match: str) -> ParamError:
    with pytest.raises(ParamError) as ei:
        make_prop(name, kwargs)
    msg = str(ei.value)
    op = registry().canonical(name)
    assert name in msg or op in msg, f"neither {name!r} nor {op!r} in {msg!r}"
    for m in match:
        assert m in msg, f"{m!r} not in {msg!r}"
    return ei.value


def registry() -> Any:
    return plexnet.plugins.registries().operators


def simple_op(name: str) -> Any:
    """The SimpleOp behind a registered operator (its ``function`` is the NDArray fast path)."""
    return registry().property_class(name).simple


def run_context() -> Any:
    from plexnet.engine.runctx import run_context as rc
    return rc(plexnet.cpu(), "test")


erf = vec(math.erf)
gamma = vec(math.gamma)
gammaln = vec(math.lgamma)
