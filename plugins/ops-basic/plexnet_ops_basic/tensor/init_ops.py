"""Operators without inputs that create arrays: ``_zeros``, ``_ones``, ``_full``,
``_arange``, ``_linspace``, ``_eye`` (MXNet's ``init_op``; ``nd.eye``/``sym.arange`` & co.
call them). ``ctx`` is accepted as a parameter (symbol JSON stores it) and ignored: the
context is the caller's. Default dtype float32, as MXNet.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape
from plexnet.operator.params import ParamError

from ._fn import FnProp, register_fn

__all__ = ["register"]

DTYPES = ("float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool")


def _ctx() -> Field:
    return Field(str, default="", doc="context (ignored: the caller's context is used)")


def _dtype() -> Field:
    return Field("dtype", default="float32", choices=DTYPES, doc="output dtype")


# Fields in MXNet's declaration order (positional parameters of nd/sym._zeros & co.):
# each struct lists ``ctx`` and ``dtype`` itself, after its own fields.


class _InitProp(FnProp):
    arguments = ()
    deps = ()
    #: MXNet's begin states pass ``__layout__`` (an attribute, not a parameter)
    extra_kwargs = ("__layout__",)

    def out_shape(self) -> tuple:
        raise NotImplementedError

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        return [], [tuple(self.out_shape())], []

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        return [], [np.dtype(self.param.dtype)], []

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return []


class ShapeParam(Params):
    shape = Field(Shape, default=Shape(()), doc="output shape")
    ctx = _ctx()
    dtype = _dtype()

    def __post_init__(self, op: str) -> None:
        # -1 (and 0) is a dim the graph infers from the consumers (MXNet 1.x: sym.ones((-1, -1)))
        if any(d is None or d < -1 for d in self.shape):
            raise ParamError(f"{op}: invalid value {tuple(self.shape)} for argument 'shape'")


class FullParam(ShapeParam):
    value = Field(float, default=0.0, doc="fill value")


class ZerosProp(_InitProp):
    """An array of zeros."""
    param_cls = ShapeParam
    fill = 0.0

    def out_shape(self) -> tuple:
        return tuple(0 if d == -1 else d for d in self.param.shape)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        # a scalar, broadcast into the output: a 0 in ``shape`` is a dim the graph infers (MXNet 1.x)
        return [xp.asarray(self.fill, dtype=self.param.dtype)]


class OnesProp(ZerosProp):
    """An array of ones."""
    fill = 1.0


class FullProp(ZerosProp):
    """An array filled with ``value`` (cast to ``dtype``: 3.5 -> 3 for int32, as MXNet)."""
    param_cls = FullParam

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        v = self.param.value
        if np.dtype(self.param.dtype).kind in "iub":
            v = int(v)
        return [xp.asarray(v, dtype=self.param.dtype)]


class ArangeParam(Params):
    start = Field(float, doc="start of the interval")
    stop = Field(float, default=None, optional=True, doc="end (exclusive); None: the interval is [0, start)")
    step = Field(float, default=1.0, doc="spacing")
    repeat = Field(int, default=1, low=1, doc="repeat each value this many times")
    infer_range = Field(bool, default=False, doc="(symbolic) infer stop from the output shape: unsupported")
    ctx = _ctx()
    dtype = _dtype()

    def __post_init__(self, op: str) -> None:
        if self.step == 0:
            raise ParamError(f"{op}: invalid value 0 for argument 'step'")
        if self.infer_range:
            raise ParamError(f"{op}: argument 'infer_range'=True (a range inferred from a consumer's shape) "
                             f"is not supported; give 'stop'")


class ArangeProp(_InitProp):
    """Evenly spaced values in ``[start, stop)``, each repeated ``repeat`` times."""
    param_cls = ArangeParam

    def _range(self) -> tuple[float, float, float]:
        p = self.param
        start, stop = (0.0, p.start) if p.stop is None else (p.start, p.stop)
        return start, stop, p.step

    def out_shape(self) -> tuple:
        start, stop, step = self._range()
        n = max(int(math.ceil((stop - start) / step)), 0)
        return (n * self.param.repeat,)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        start, stop, step = self._range()
        n = self.out_shape()[0] // self.param.repeat
        a = start + step * xp.arange(n, dtype=np.float64)
        if self.param.repeat > 1:
            a = xp.repeat(a, self.param.repeat)
        return [a]


class LinspaceParam(Params):
    start = Field(float, doc="first value")
    stop = Field(float, doc="last value (included when endpoint)")
    num = Field(int, low=0, doc="number of values")
    endpoint = Field(bool, default=True, doc="include stop")
    ctx = _ctx()
    dtype = _dtype()


class LinspaceProp(_InitProp):
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    param_cls = LinspaceParam

    def out_shape(self) -> tuple:
        return (self.param.num,)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        p = self.param
        # MXNet: start + step * i with step in the output's float precision
        return [xp.linspace(p.start, p.stop, p.num, endpoint=p.endpoint, dtype=np.float64)]


class EyeParam(Params):
    N = Field(int, low=0, doc="rows")
    M = Field(int, default=0, low=0, doc="columns (0: N)")
    k = Field(int, default=0, doc="diagonal: 0 main, > 0 upper, < 0 lower")
    ctx = _ctx()
    dtype = _dtype()


class EyeProp(_InitProp):
    """A 2-D array with ones on the k-th diagonal."""
    param_cls = EyeParam

    def out_shape(self) -> tuple:
        p = self.param
        return (p.N, p.M if p.M > 0 else p.N)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        n, m = self.out_shape()
        return [xp.eye(n, m, k=self.param.k, dtype=self.param.dtype)]


def register(registry: Any) -> None:
    register_fn(registry, "_zeros", ZerosProp)
    register_fn(registry, "_ones", OnesProp)
    register_fn(registry, "_full", FullProp)
    register_fn(registry, "_arange", ArangeProp)
    register_fn(registry, "_linspace", LinspaceProp)
    register_fn(registry, "_eye", EyeProp)
