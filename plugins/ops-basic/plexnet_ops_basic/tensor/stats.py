"""Statistics: ``moments`` (mean and variance), ``_histogram`` (``nd.histogram``) and
``khatri_rao`` (column-wise Kronecker product)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape
from plexnet.operator.params import ParamError

from ._common import norm_axes, prod
from ._fn import FnProp, register_fn

__all__ = ["register"]


class MomentsParam(Params):
    axes = Field(Shape, default=None, optional=True, doc="axes to reduce (None: all)")
    keepdims = Field(bool, default=False, doc="keep reduced axes with size 1")


class MomentsProp(FnProp):
    """Mean and (population) variance over ``axes``."""
    param_cls = MomentsParam
    outputs = ("output0", "output1")   # nnvm's default names (MXNet's list_outputs)
    deps = ("out_grad", "in_data", "out_data")

    def _axes(self, s: tuple) -> tuple[int, ...]:
        if self.param.axes is None:
            return tuple(range(len(s)))
        return norm_axes(self.op_name, self.param.axes, len(s), "axes", s)

    def shapes(self, ins: list) -> tuple[list, list]:
        s = ins[0]
        axes = self._axes(s)
        if self.param.keepdims:
            out = tuple(1 if i in axes else d for i, d in enumerate(s))
        else:
            out = tuple(d for i, d in enumerate(s) if i not in axes) or (1,)
        return ins, [out, out]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = ins[0]
        axes = self._axes(x.shape)
        mean = x.mean(axis=axes, keepdims=True)
        var = xp.square(x - mean).mean(axis=axes, keepdims=True)
        out = self.shapes([x.shape])[1][0]
        return [mean.reshape(out), var.reshape(out)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        x = ins[0]
        axes = self._axes(x.shape)
        keep = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        n = prod(x.shape[i] for i in axes) or 1
        mean = outs[0].reshape(keep)
        gm, gv = ogs[0].reshape(keep), ogs[1].reshape(keep)
        return [gm / n + gv * (2.0 / n) * (x - mean)]


def _float_pair(v: Any) -> tuple[float, ...]:
    if isinstance(v, str):
        v = [x for x in v.strip("()[] ").split(",") if x.strip()]
    return tuple(float(x) for x in v)


class HistogramParam(Params):
    bin_cnt = Field(int, default=None, optional=True, low=1, doc="number of equal bins (else: a bins input)")
    range = Field(_float_pair, default=None, optional=True, doc="(low, high) of the equal bins")

    def __post_init__(self, op: str) -> None:
        r = self.range
        if self.bin_cnt is not None and (r is None or len(r) != 2 or r[0] > r[1]):
            raise ParamError(f"{op}: argument 'range'={r} must be (low, high) with low <= high when "
                             f"'bin_cnt' is given")


class HistogramProp(FnProp):
    """Counts of ``data`` in bins: ``bin_cnt`` equal bins over ``range``, or the edges in
    the ``bins`` input. Outputs the counts (int64) and the edges."""
    param_cls = HistogramParam
    outputs = ("output", "bin_edges")
    deps = ()

    def list_arguments(self) -> list[str]:
        return ["data"] if self.param.bin_cnt is not None else ["data", "bins"]

    def shapes(self, ins: list) -> tuple[list, list]:
        if self.param.bin_cnt is not None:
            n = self.param.bin_cnt
            return ins, [(n,), (n + 1,)]
        if len(ins[1]) != 1 or ins[1][0] < 2:
            raise self.error(f"bins must be a 1-D array of at least 2 edges, got shape {ins[1]}")
        return ins, [(ins[1][0] - 1,), ins[1]]

    def out_types(self, in_types: list) -> list:
        t = in_types[-1] if len(in_types) > 1 else in_types[0]
        return [np.dtype(np.int64), t]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = ins[0].reshape(-1)
        if self.param.bin_cnt is not None:
            lo, hi = self.param.range
            edges = xp.linspace(lo, hi, self.param.bin_cnt + 1)
        else:
            edges = ins[1]
        counts, _ = xp.histogram(x, bins=edges)
        return [counts, edges]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [None] * len(ins)


class KhatriRaoParam(Params):
    num_args = Field(int, low=1, doc="number of input matrices")


class KhatriRaoProp(FnProp):
    """Column-wise Kronecker product of ``(I_k, R)`` matrices: ``(prod I_k, R)``."""
    param_cls = KhatriRaoParam
    deps = ("out_grad", "in_data")
    differentiable = False   # MXNet registers no FGradient: a gradient through it is refused

    def list_arguments(self) -> list[str]:
        return [f"arg{i}" for i in range(self.param.num_args)]

    def shapes(self, ins: list) -> tuple[list, list]:
        if any(len(s) != 2 for s in ins) or len({s[1] for s in ins}) != 1:
            raise self.error(f"inputs must be matrices with equal column counts, got shapes {ins}")
        return ins, [(prod(s[0] for s in ins), ins[0][1])]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        out = ins[0]
        for m in ins[1:]:
            out = (out[:, None, :] * m[None, :, :]).reshape(-1, m.shape[1])
        return [out]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        r = ins[0].shape[1]
        g = ogs[0].reshape(tuple(m.shape[0] for m in ins) + (r,))
        # d out / d A_k: contract the head gradient with every other factor
        letters = "abcdefghijklmnopqrstuvw"[:len(ins)]
        grads = []
        for k in range(len(ins)):
            others = ",".join(f"{letters[j]}z" for j in range(len(ins)) if j != k)
            spec = f"{letters}z" + ("," + others if others else "") + f"->{letters[k]}z"
            grads.append(xp.einsum(spec, g, *[ins[j] for j in range(len(ins)) if j != k]))
        return grads


def register(registry: Any) -> None:
    register_fn(registry, "moments", MomentsProp)
    register_fn(registry, "_histogram", HistogramProp)
    register_fn(registry, "khatri_rao", KhatriRaoProp)
