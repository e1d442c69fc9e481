"""The samplers: ``_random_<dist>`` (scalar parameters, output ``shape``),
``_random_<dist>_like`` (the shape and dtype of ``data``), ``_sample_<dist>`` (one draw
of ``shape`` per element of the parameter arrays: output ``params.shape + shape``),
``_random_randint`` and ``_shuffle``. Names and flat aliases as MXNet 1.9.1
(``random_uniform``, ``uniform``, ``sample_normal``, ``shuffle``, ...).

Every draw is one engine operation that mutates the device generator's variable
(``kRandom``), so ``mx.random.seed(s)`` replays the same numbers on every engine.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Params

from ._common import FLOAT_DTYPES, Field, ParamError, SamplerOp, SamplerProp, Shape, out_dtype
from .distributions import DISTRIBUTIONS, Distribution

__all__ = ["register"]


def _check(op: str, dist: str, vals: dict[str, Any]) -> None:
    """MXNet's parameter checks, run when drawing (MXNet reports them at the next wait
    point, not at the call)."""
    bad = None
    if dist == "uniform" and not vals["low"] <= vals["high"]:
        bad = f"low ({vals['low']}) must not exceed high ({vals['high']})"
    elif dist == "normal" and not vals["scale"] > 0:
        bad = f"scale must be positive, got {vals['scale']}"
    elif dist == "gamma" and not (vals["alpha"] > 0 and vals["beta"] > 0):
        bad = f"alpha and beta must be positive, got alpha={vals['alpha']}, beta={vals['beta']}"
    elif dist in ("exponential",) and not vals["lam"] > 0:
        bad = f"lam must be positive, got {vals['lam']}"
    elif dist == "poisson" and not vals["lam"] >= 0:
        bad = f"lam must be non-negative, got {vals['lam']}"
    elif dist == "negative_binomial" and not (vals["k"] > 0 and 0 < vals["p"] <= 1):
        bad = f"k must be positive and p in (0, 1], got k={vals['k']}, p={vals['p']}"
    elif dist == "generalized_negative_binomial" and not (vals["mu"] >= 0 and vals["alpha"] >= 0):
        bad = f"mu and alpha must be non-negative, got mu={vals['mu']}, alpha={vals['alpha']}"
    if bad:
        raise ParamError(f"{op}: {bad}")


def _scalar_params(dist: str, d: Distribution, with_shape: bool) -> type[Params]:
    fields: dict[str, Any] = {n: Field(t, default=v) for n, v, t in d.random}
    if with_shape:
        fields["shape"] = Field(Shape, default=Shape(()), doc="output shape")
        fields["ctx"] = Field(str, default="", doc="context (set by the front end)")
        fields["dtype"] = Field(str, default="None", choices=FLOAT_DTYPES, doc="output dtype (None: float32)")
    return type(f"Random{dist.title().replace('_', '')}Param", (Params,), fields)


def _shape_or_one(shape: tuple) -> tuple:
    return tuple(shape) if len(shape) else (1,)


def _random_prop(dist: str, d: Distribution) -> type[SamplerProp]:
    names = [n for n, _v, _t in d.random]

    class RandomProp(SamplerProp):
        __doc__ = (f"Draws from the {dist.replace('_', ' ')} distribution with scalar parameters "
                   f"{', '.join(names)}; output of ``shape`` and ``dtype`` (float32 by default).")
        param_cls = _scalar_params(dist, d, True)

        def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
            return [], [_shape_or_one(self.param.shape)], []

        def infer_type(self, in_type):  # type: ignore[no-untyped-def]
            return [], [out_dtype(self.param.dtype)], []

        def draw(self, rng, xp, in_data, out):  # type: ignore[no-untyped-def]
            # checked when drawn, as MXNet does: the error surfaces at the next wait point
            _check(self.op_name, dist, {n: getattr(self.param, n) for n in names})
            return d.draw(rng, *(getattr(self.param, n) for n in names), out.shape)

    return RandomProp


def _like_prop(dist: str, d: Distribution) -> type[SamplerProp]:
    names = [n for n, _v, _t in d.random]

    class LikeProp(SamplerProp):
        __doc__ = (f"Draws from the {dist.replace('_', ' ')} distribution (parameters {', '.join(names)}) "
                   f"into an array of the shape and dtype of ``data``.")
        param_cls = _scalar_params(dist, d, False)
        arguments = ("data",)

        def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
            return [in_shape[0]], [in_shape[0]], []

        def draw(self, rng, xp, in_data, out):  # type: ignore[no-untyped-def]
            _check(self.op_name, dist, {n: getattr(self.param, n) for n in names})
            return d.draw(rng, *(getattr(self.param, n) for n in names), out.shape)

    return LikeProp


class SampleParam(Params):
    shape = Field(Shape, default=Shape(()), doc="draws per parameter element")
    dtype = Field(str, default="None", choices=FLOAT_DTYPES, doc="output dtype (None: float32)")


def _sample_prop(dist: str, d: Distribution) -> type[SamplerProp]:
    class SampleProp(SamplerProp):
        __doc__ = (f"Draws ``shape`` samples of the {dist.replace('_', ' ')} distribution for every element of "
                   f"the parameter arrays {', '.join(d.sample)} (output shape: parameter shape + shape).")
        param_cls = SampleParam
        arguments = d.sample

        def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
            known = [s for s in in_shape if s is not None]
            if not known:
                return list(in_shape), [None], []
            p = tuple(known[0])
            if any(tuple(s) != p for s in known):
                raise self.shape_error("the distribution parameters must all have the same shape", in_shape)
            return [p] * len(in_shape), [p + tuple(self.param.shape)], []

        def infer_type(self, in_type):  # type: ignore[no-untyped-def]
            known = next((t for t in in_type if t is not None), None)
            return [known] * len(in_type), [out_dtype(self.param.dtype)], []

        def draw(self, rng, xp, in_data, out):  # type: ignore[no-untyped-def]
            extra = (1,) * len(self.param.shape)
            params = [p.astype(np.float64).reshape(p.shape + extra) for p in in_data]
            return d.draw(rng, *params, out.shape)

    return SampleProp


class RandintParam(Params):
    low = Field(int, doc="lowest value (inclusive)")
    high = Field(int, doc="highest value (exclusive)")
    shape = Field(Shape, default=Shape(()), doc="output shape")
    ctx = Field(str, default="", doc="context (set by the front end)")
    dtype = Field(str, default="None", choices=("None", "int32", "int64"), doc="output dtype (None: int32)")

    def __post_init__(self, op: str) -> None:
        if not self.low < self.high:
            raise ParamError(f"{op}: low ({self.low}) must be less than high ({self.high})")


class RandintProp(SamplerProp):
    """Integers drawn uniformly from ``[low, high)``; output of ``shape``, int32 by default."""

    param_cls = RandintParam

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        return [], [_shape_or_one(self.param.shape)], []

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        return [], [out_dtype(self.param.dtype, np.int32)], []

    def draw(self, rng, xp, in_data, out):  # type: ignore[no-untyped-def]
        return rng.integers(self.param.low, self.param.high, out.shape, dtype=np.int64)


class ShuffleProp(SamplerProp):
    """A copy of ``data`` with its first axis randomly permuted."""

    arguments = ("data",)
    differentiable = False   # MXNet registers no FGradient: a gradient through it is refused

    def draw(self, rng, xp, in_data, out):  # type: ignore[no-untyped-def]
        x = in_data[0]
        if x.ndim == 0 or x.shape[0] <= 1:
            return x.copy()
        perm = rng.permutation(x.shape[0])
        return xp.take(x, xp.asarray(perm), axis=0)  # much faster than x[perm] for wide rows


def _reg(registry: Any, name: str, cls: type[SamplerProp], aliases: tuple[str, ...] = ()) -> None:
    registry.register_property(name, cls, aliases=aliases)
    registry.register_impl(name, "*", lambda prop, ctx: SamplerOp(prop), impl_name="xp")


def register(registry: Any) -> None:
    for dist, d in DISTRIBUTIONS.items():
        bare = (dist,) if dist in ("uniform", "normal") else ()  # MXNet's nd.gamma is the gamma function
        _reg(registry, f"_random_{dist}", _random_prop(dist, d), (f"random_{dist}",) + bare)
        _reg(registry, f"_random_{dist}_like", _like_prop(dist, d))
        _reg(registry, f"_sample_{dist}", _sample_prop(dist, d), (f"sample_{dist}",))
    _reg(registry, "_random_randint", RandintProp, ("random_randint",))
    _reg(registry, "_shuffle", ShuffleProp, ("shuffle",))
