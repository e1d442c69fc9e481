"""Conversions between float32 and the quantized types: ``quantize``, ``quantize_v2``,
``quantize_asym``, ``dequantize``, ``requantize`` (MXNet 1.9.1's CPU results, i.e. its
MKL-DNN kernels: symmetric scales, round half to even, saturation)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._base import (F32, INT8, INT32, K_INT8, K_UINT8, UINT8, QuantProp, maxabs, register as _register, reorder,
                    scalar)

__all__ = ["register", "quantize_out_type"]

_TYPES = {"int8": INT8, "uint8": UINT8}


def quantize_out_type(out_type: str, min_calib: float | None, max_calib: float | None) -> np.dtype:
    """MXNet's ``GetQuantizeOutputType``: ``auto`` is uint8 when a calibrated minimum >= 0
    is given, else int8."""
    if out_type == "auto":
        if min_calib is not None and max_calib is not None and min_calib >= 0.0:
            return UINT8
        return INT8
    return _TYPES[out_type]


class QuantizeParam(Params):
    out_type = Field(str, default="uint8", choices=("int8", "uint8"), doc="output data type")


class QuantizeProp(QuantProp):
    """float32 -> int8/uint8 with the given range: ``out = saturate(rint(x * q / r))``,
    ``r = max(|min_range|, |max_range|)``, ``q`` 127 (int8) or 255 (uint8; negative inputs
    become 0). Outputs the range: ``[-r, r]`` for int8, the given one for uint8."""

    param_cls = QuantizeParam
    arguments = ("data", "min_range", "max_range")
    data_types = {0: (F32,)}

    def out_types(self, types):  # type: ignore[no-untyped-def]
        return [_TYPES[self.param.out_type], F32, F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        lo, hi = scalar(ins[1]), scalar(ins[2])
        real = maxabs(lo, hi)
        if self.param.out_type == "uint8":
            return [reorder(xp, ins[0], np.float32(255.0) / real, UINT8), lo, hi]
        return [reorder(xp, ins[0], np.float32(127.0) / real, INT8), -real, real]


class QuantizeV2Param(Params):
    out_type = Field(str, default="int8", choices=("auto", "int8", "uint8"),
                     doc="output data type; auto: uint8 when min_calib_range >= 0, else int8")
    min_calib_range = Field(float, default=None, optional=True, doc="calibrated minimum (else the data's)")
    max_calib_range = Field(float, default=None, optional=True, doc="calibrated maximum (else the data's)")


class QuantizeV2Prop(QuantProp):
    """float32 -> int8/uint8 with the calibrated range or, without one, the data's own
    min/max: ``out = saturate(rint(x * q / max(|min|, |max|)))`` with ``q`` 127.5 (int8) or
    255.5 (uint8). int8 and uint8 inputs pass through with their range (or +-127.5, [0, 255.5]),
    their bytes read as the output type as MXNet's copy does."""

    param_cls = QuantizeV2Param
    data_types = {0: (F32, INT8, UINT8)}

    def _calib(self) -> tuple[float | None, float | None]:
        p = self.param
        if p.min_calib_range is not None and p.max_calib_range is not None:
            return p.min_calib_range, p.max_calib_range
        return None, None

    def out_types(self, types):  # type: ignore[no-untyped-def]
        return [quantize_out_type(self.param.out_type, *self._calib()), F32, F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        x = ins[0]
        lo, hi = self._calib()
        if x.dtype in (INT8, UINT8):  # already quantized: the bytes pass through as the output type
            if lo is None:
                lo, hi = (0.0, K_UINT8) if x.dtype == UINT8 else (-K_INT8, K_INT8)
            return [x.view(outs[0].dtype), np.float32(lo), np.float32(hi)]
        if lo is None:
            if x.size:
                lo, hi = np.float32(float(x.min())), np.float32(float(x.max()))
            else:  # MXNet's reduction identities
                lo, hi = np.finfo(np.float32).max, np.finfo(np.float32).min
        lo, hi = np.float32(lo), np.float32(hi)
        real = maxabs(lo, hi)
        if outs[0].dtype == UINT8:
            return [reorder(xp, x, K_UINT8 / real, UINT8), lo, hi]
        return [reorder(xp, x, K_INT8 / real, INT8), -real, real]


class QuantizeAsymParam(Params):
    min_calib_range = Field(float, default=None, optional=True, doc="calibrated minimum (else the data's)")
    max_calib_range = Field(float, default=None, optional=True, doc="calibrated maximum (else the data's)")


class QuantizeAsymProp(QuantProp):
    """float32 -> uint8 with a zero point: ``out = trunc(x * scale + shift + 0.5)``,
    ``scale = 255 / (max - min)``, ``shift = 255 - max * scale``; outputs ``scale`` and
    ``shift``. int8 input: ``x + 128`` (scale 1, shift 128); uint8 passes through (1, 0).
    Values outside the range saturate (MXNet's cast leaves them undefined)."""

    param_cls = QuantizeAsymParam
    outputs = ("output", "scale", "shift")
    data_types = {0: (F32, INT8, UINT8)}

    def out_types(self, types):  # type: ignore[no-untyped-def]
        return [UINT8, F32, F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        x = ins[0]
        if x.dtype == UINT8:
            return [x, np.float32(1.0), np.float32(0.0)]
        if x.dtype == INT8:
            scale, shift = np.float32(1.0), np.float32(128.0)
        else:
            p = self.param
            if p.min_calib_range is not None and p.max_calib_range is not None:
                lo, hi = np.float32(p.min_calib_range), np.float32(p.max_calib_range)
            else:
                lo, hi = np.float32(float(x.min())), np.float32(float(x.max()))
            scale = np.float32(np.float32(255.0) / np.float32(hi - lo))
            shift = np.float32(np.float32(255.0) - np.float32(hi * scale))
        v = x.astype(np.float32) * scale + shift  # float32, then + 0.5 in double as MXNet
        q = xp.floor(v.astype(np.float64) + 0.5)
        return [xp.clip(q, 0, 255).astype(UINT8), scale, shift]


class DequantizeParam(Params):
    out_type = Field(str, default="float32", choices=("float32",), doc="output data type")


class DequantizeProp(QuantProp):
    """int8/uint8 -> float32: ``out = q * max(|min_range|, |max_range|) / Q`` with ``Q``
    127.5 (int8) or 255.5 (uint8)."""

    param_cls = DequantizeParam
    arguments = ("data", "min_range", "max_range")
    outputs = ("output",)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        return [shapes[0]]

    def out_types(self, types):  # type: ignore[no-untyped-def]
        return [F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        q = K_INT8 if ins[0].dtype == INT8 else K_UINT8
        scale = np.float32(maxabs(scalar(ins[1]), scalar(ins[2])) / q)
        return [ins[0].astype(np.float32) * scale]


class RequantizeParam(Params):
    out_type = Field(str, default="int8", choices=("auto", "int8", "uint8"),
                     doc="output data type; auto: uint8 when min_calib_range >= 0, else int8")
    min_calib_range = Field(float, default=None, optional=True, doc="calibrated minimum of the real values")
    max_calib_range = Field(float, default=None, optional=True, doc="calibrated maximum of the real values")


def _int32_of_float(v: np.float32) -> int:
    """C's float -> int32 conversion on x86: out-of-range values become INT32_MIN."""
    return int(v) if -2.0 ** 31 <= float(v) < 2.0 ** 31 else -2 ** 31


class RequantizeProp(QuantProp):
    """int32 (range ``[min_range, max_range]``) -> int8/uint8 with the calibrated range, or
    without one the range of the data's largest magnitude. The output range is
    ``[-r, r]`` (int8) or ``[0, r]`` (uint8); values are ``saturate(rint(x * s))``,
    ``s = (R_in / 2**31) * (Q / r)``, ``Q`` 127 or 255."""

    param_cls = RequantizeParam
    arguments = ("data", "min_range", "max_range")
    data_types = {0: (INT32,)}

    def _dtype(self) -> np.dtype:
        p = self.param
        return quantize_out_type(p.out_type, p.min_calib_range, p.max_calib_range)

    def out_types(self, types):  # type: ignore[no-untyped-def]
        return [self._dtype(), F32, F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        x, p = ins[0], self.param
        in_real = maxabs(scalar(ins[1]), scalar(ins[2]))
        two31 = np.float32(2 ** 31)
        if p.min_calib_range is not None and p.max_calib_range is not None:
            real = maxabs(p.min_calib_range, p.max_calib_range)
        else:
            if x.size:
                big = maxabs(int(x.min()), int(x.max()))
            else:
                big = np.float32(2 ** 31)
            data_range = np.float32(_int32_of_float(big))  # MXNet stores it in an int32 first
            real = np.float32(np.float32(data_range * in_real) / two31)
        dtype = self._dtype()
        q = np.float32(127.0) if dtype == INT8 else np.float32(255.0)
        scale = np.float32(np.float32(in_real / two31) * np.float32(q / real))
        lo = -real if dtype == INT8 else np.float32(0.0)
        return [reorder(xp, x, scale, dtype), lo, real]


def register(registry: Any) -> None:
    _register(registry, {"quantize": QuantizeProp, "quantize_v2": QuantizeV2Prop, "quantize_asym": QuantizeAsymProp,
                         "dequantize": DequantizeProp, "requantize": RequantizeProp})
