"""``UpSampling``, MXNet 1.x semantics.

* ``nearest``: each of the ``num_args`` inputs ``(N, C_i, H_i, W_i)`` is repeated up to the
  first input's size times ``scale`` (integer factors), then concatenated along channels
  (``multi_input_mode='concat'``) or summed (``'sum'``).
* ``bilinear``: inputs ``data`` and ``weight`` ``(C, 1, k, k)``; a per-channel transposed
  convolution with ``k = 2*scale - scale % 2``, stride ``scale``, pad
  ``ceil((scale - 1) / 2)`` (MXNet builds exactly this Deconvolution; the weight is
  usually initialised with ``mx.init.Bilinear``). Forward and backward delegate to the
  registry's ``Deconvolution``.
"""
from __future__ import annotations

import math
from typing import Any

from plexnet.operator import Field, Operator, Params
from plexnet.operator.params import ParamError
from plexnet.registry import registries

from plexnet_ops_basic.tensor._fn import FnOp, FnProp

from ._common import ShapeError, fmt_shape

__all__ = ["register"]


class UpSamplingParam(Params):
    scale = Field(int, low=1, doc="up-sampling factor")
    num_filter = Field(int, default=0, low=0, doc="channels (bilinear: must equal the data's channels)")
    sample_type = Field(str, choices=("nearest", "bilinear"), doc="nearest or bilinear")
    multi_input_mode = Field(str, default="concat", choices=("concat", "sum"), doc="combine several inputs")
    num_args = Field(int, default=1, low=1, doc="number of inputs (bilinear: 2, data and weight)")
    workspace = Field(int, default=512, low=0, doc="workspace in MB (ignored)")

    def __post_init__(self, op: str) -> None:
        if self.sample_type == "bilinear" and self.num_args != 2:
            raise ParamError(f"{op}: sample_type='bilinear' takes num_args=2 (data and weight), got "
                             f"num_args={self.num_args}")


def _deconv_kwargs(p: UpSamplingParam, channels: int) -> dict[str, Any]:
    k = 2 * p.scale - p.scale % 2
    pad = int(math.ceil((p.scale - 1) / 2.0))
    return dict(kernel=(k, k), stride=(p.scale, p.scale), pad=(pad, pad), num_filter=channels,
                num_group=channels, no_bias=True)


class UpSamplingProp(FnProp):
    """Nearest or bilinear up-sampling (see the module docstring)."""
    param_cls = UpSamplingParam

    def list_arguments(self) -> list[str]:
        if self.param.sample_type == "bilinear":
            return ["data", "weight"]
        return [f"arg{i}" for i in range(self.param.num_args)]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        p = self.param
        shapes = [tuple(s) if s is not None else None for s in in_shape]
        d = shapes[0]
        if d is None:
            return shapes, [None], []
        if len(d) != 4:
            raise ShapeError(f"{self.op_name}: input {self.list_arguments()[0]!r} must be 4-D (N, C, H, W), got "
                             f"shape {fmt_shape(d)}")
        oh, ow = d[2] * p.scale, d[3] * p.scale
        if p.sample_type == "bilinear":
            k = 2 * p.scale - p.scale % 2
            want = (d[1], 1, k, k)
            if shapes[1] is not None and shapes[1] != want:
                raise ShapeError(f"{self.op_name}: argument 'weight' has shape {shapes[1]}, expected {want} "
                                 f"(data {d}, scale={p.scale})")
            return [d, want], [(d[0], d[1], oh, ow)], []
        if any(s is None for s in shapes):
            return shapes, [None], []
        chans = 0
        for name, s in zip(self.list_arguments(), shapes):
            if len(s) != 4 or s[0] != d[0] or oh % s[2] or ow % s[3] or oh // s[2] != ow // s[3]:
                raise ShapeError(f"{self.op_name}: input {name!r} of shape {s} cannot be up-sampled by an integer "
                                 f"factor to ({oh}, {ow}) (inputs: {shapes})")
            if p.multi_input_mode == "sum" and s[1] != d[1]:
                raise ShapeError(f"{self.op_name}: multi_input_mode='sum' needs equal channels, got {shapes}")
            chans += s[1]
        c = d[1] if p.multi_input_mode == "sum" else chans
        return shapes, [(d[0], c, oh, ow)], []

    deps = ("out_grad", "in_data")  # nearest reads only the input shapes

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        oh = ins[0].shape[2] * self.param.scale
        ups = []
        for x in ins:
            f = oh // x.shape[2]
            ups.append(x.repeat(f, axis=2).repeat(f, axis=3) if f > 1 else x)
        if self.param.multi_input_mode == "sum":
            out = ups[0]
            for u in ups[1:]:
                out = out + u
            return [out]
        return [xp.concatenate(ups, axis=1) if len(ups) > 1 else ups[0]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        g = ogs[0]
        grads, c0 = [], 0
        for x in ins:
            n, c, h, w = x.shape
            part = g if self.param.multi_input_mode == "sum" else g[:, c0:c0 + c]
            c0 += c
            f = g.shape[2] // h
            grads.append(part.reshape(n, c, h, f, w, f).sum(axis=(3, 5)) if f > 1 else part)
        return grads


class _BilinearOp(Operator):
    """The bilinear mode: a grouped Deconvolution from the registry."""

    def __init__(self, prop: UpSamplingProp, ctx: Any) -> None:
        self.prop = prop
        self.ctx = ctx
        self._ops: dict[int, tuple[Any, Any]] = {}
        self._reg = registries().operators

    def _deconv(self, channels: int) -> Any:
        hit = self._ops.get(channels)
        if hit is None:
            dprop = self._reg.create_property("Deconvolution", _deconv_kwargs(self.prop.param, channels))
            hit = self._ops[channels] = (dprop, dprop.create_operator(self.ctx))
        return hit[1]

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        self._deconv(in_data[0].shape[1]).forward(ctx, in_data, req, out_data, aux)

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        self._deconv(in_data[0].shape[1]).backward(ctx, out_grad, in_data, out_data, req, in_grad, aux)


def register(registry: Any) -> None:
    registry.register_property("UpSampling", UpSamplingProp)
    registry.register_impl("UpSampling", "*", _make, impl_name="xp")


def _make(prop: UpSamplingProp, ctx: Any) -> Operator:
    if prop.param.sample_type == "bilinear":
        return _BilinearOp(prop, ctx)
    return FnOp(prop)
