"""``quantized_elemwise_add`` and ``quantized_elemwise_mul`` (MXNet 1.9.1's CPU kernels)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._base import (F32, INT8, INT32, K_INT8, K_UINT8, QRANGE, UINT8, QuantProp, get_scale, maxabs,
                    range_for_multiplication, register as _register, reorder, saturate_cast, scalar)

__all__ = ["register"]

_ARGS = ("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max")


class _BinaryProp(QuantProp):
    arguments = _ARGS

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        if shapes[0] != shapes[1]:
            raise self.shape_error("lhs and rhs must have the same shape (no broadcasting)", shapes)
        return [shapes[0], (1,), (1,)][:len(self.list_outputs())]

    def _calib(self) -> tuple[np.float32, np.float32] | None:
        p = self.param
        if p.min_calib_range is not None and p.max_calib_range is not None:
            return np.float32(p.min_calib_range), np.float32(p.max_calib_range)
        return None


class QuantizedAddParam(Params):
    min_calib_range = Field(float, default=None, optional=True, doc="calibrated minimum of the sum")
    max_calib_range = Field(float, default=None, optional=True, doc="calibrated maximum of the sum")


class QuantizedElemwiseAddProp(_BinaryProp):
    """Sum of two int8/uint8 arrays with their ranges. Without calibration: int32 in
    ``+-(|lhs range| + |rhs range|)``; with it: int8 (uint8 when both inputs are uint8) in
    the calibrated range. Each side is scaled into the output's levels, summed in float32
    and rounded half to even; a uint8 side beside an int8 one is first rescaled to int8."""

    param_cls = QuantizedAddParam
    differentiable = False
    data_types = {0: (INT8, UINT8), 1: (INT8, UINT8)}

    def out_types(self, types):  # type: ignore[no-untyped-def]
        if self._calib() is None:
            return [INT32, F32, F32]
        return [types[0] if types[0] == types[1] else INT8, F32, F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        a, b = ins[0], ins[1]
        amin, amax, bmin, bmax = (scalar(v) for v in ins[2:6])
        aabs, babs = maxabs(amin, amax), maxabs(bmin, bmax)
        odt = outs[0].dtype
        orange = QRANGE[np.dtype(odt)]
        calib = self._calib()
        f = np.float32
        if calib is not None:
            lo, hi = calib
            out_scale = f(orange / maxabs(lo, hi))
        else:
            hi = f(aabs + babs)
            lo = -hi
        ra = QRANGE[np.dtype(a.dtype)]
        if a.dtype != b.dtype:  # the uint8 side is reordered into int8 first
            a_int8 = a.dtype == INT8
            if calib is not None:
                sa, sb = get_scale(a.dtype, amin, amax), get_scale(b.dtype, bmin, bmax)
                u8 = f(out_scale / (sb if a_int8 else sa))
                s_int8 = f(out_scale / (sa if a_int8 else sb))
            else:
                tot = f(aabs + babs)
                if a_int8:
                    u8 = f(f(babs * orange) / f(tot * K_UINT8))
                    s_int8 = f(f(aabs * orange) / f(tot * ra))
                else:
                    u8 = f(f(aabs * orange) / f(tot * ra))
                    s_int8 = f(f(babs * orange) / f(tot * K_INT8))
            if a_int8:
                b, scales = reorder(xp, b, u8, INT8), (s_int8, f(1.0))
            else:
                a, scales = reorder(xp, a, u8, INT8), (f(1.0), s_int8)
        elif calib is not None:
            scales = (f(out_scale / get_scale(a.dtype, amin, amax)), f(out_scale / get_scale(b.dtype, bmin, bmax)))
        else:
            tot = f(aabs + babs)
            scales = (f(f(aabs * orange) / f(tot * ra)), f(f(babs * orange) / f(tot * ra)))
        y = a.astype(f) * scales[0] + b.astype(f) * scales[1]
        return [saturate_cast(xp, y, odt), lo, hi]


class QuantizedMulParam(Params):
    min_calib_range = Field(float, default=None, optional=True, doc="calibrated minimum of the product")
    max_calib_range = Field(float, default=None, optional=True, doc="calibrated maximum of the product")
    enable_float_output = Field(bool, default=False, doc="output the float32 product (one output)")


class QuantizedElemwiseMulProp(_BinaryProp):
    """Product of two int8 arrays: the exact int32 product in the S8S8 range; with
    calibration int8 ``trunc(a * b * s)`` wrapped to 8 bits as MXNet's cast does; with
    ``enable_float_output`` the float32 product ``a * b * |lhs| |rhs| / 127.5**2``.
    (MXNet 1.9.1 runs it only in a symbol's executor; here also imperatively.)"""

    param_cls = QuantizedMulParam
    data_types = {0: (INT8,), 1: (INT8,)}

    def list_outputs(self) -> list[str]:
        return ["output"] if self.param.enable_float_output else ["output", "min_output", "max_output"]

    def out_types(self, types):  # type: ignore[no-untyped-def]
        if self.param.enable_float_output:
            return [F32]
        return [INT8 if self._calib() is not None else INT32, F32, F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        lmin, lmax, rmin, rmax = (scalar(v) for v in ins[2:6])
        f = np.float32
        prod = ins[0].astype(np.int32) * ins[1].astype(np.int32)
        ls, rs = f(K_INT8 / maxabs(lmin, lmax)), f(K_INT8 / maxabs(rmin, rmax))
        if self.param.enable_float_output:
            return [prod.astype(f) * f(1.0 / float(ls) / float(rs))]
        calib = self._calib()
        if calib is None:
            lo, hi = range_for_multiplication(lmin, lmax, rmin, rmax, all_sign=True)
            return [prod, lo, hi]
        lo, hi = calib
        scale = f(f(f(K_INT8 / maxabs(lo, hi)) / ls) / rs)
        v = xp.trunc(prod.astype(f) * scale).astype(np.int64)
        return [(v & 0xFF).astype(np.uint8).view(INT8), lo, hi]


def register(registry: Any) -> None:
    _register(registry, {"quantized_elemwise_add": QuantizedElemwiseAddProp,
                         "quantized_elemwise_mul": QuantizedElemwiseMulProp})
