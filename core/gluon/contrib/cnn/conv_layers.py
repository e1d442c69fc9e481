"""Deformable convolution layers (MXNet 1.9.1 ``gluon.contrib.cnn``).

A plain convolution of the input predicts the sampling offsets (and, for the modulated
v2 layer, a sigmoid mask scaled by 2); ``contrib.DeformableConvolution`` /
``contrib.ModulatedDeformableConvolution`` then convolve at the offset positions.
Parameter names follow MXNet: ``offset_weight``, ``offset_bias``,
``deformable_conv_weight``, ``deformable_conv_bias``.
"""
from __future__ import annotations

from typing import Any

from ...block import HybridBlock
from ...nn.activations import Activation

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(v: Any, name: str) -> tuple[int, int]:
    t = (int(v),) * 2 if isinstance(v, int) else tuple(int(x) for x in v)
    if len(t) != 2:
        raise ValueError(f"{name} must be an int or a pair, got {v!r}")
    return t  # type: ignore[return-value]


class DeformableConvolution(HybridBlock):
    """2D deformable convolution (Dai et al. 2017), layout NCHW."""

    _op = "DeformableConvolution"
    _offset_factor = 2

    def __init__(self, channels: int, kernel_size: Any = (1, 1), strides: Any = (1, 1), padding: Any = (0, 0),
                 dilation: Any = (1, 1), groups: int = 1, num_deformable_group: int = 1, layout: str = "NCHW",
                 use_bias: bool = True, in_channels: int = 0, activation: Any = None, weight_initializer: Any = None,
                 bias_initializer: Any = "zeros", offset_weight_initializer: Any = "zeros",
                 offset_bias_initializer: Any = "zeros", offset_use_bias: bool = True, op_name: str | None = None,
                 adj: Any = None, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        if layout != "NCHW":
            raise ValueError(f"{type(self).__name__}: only layout NCHW is supported, got {layout!r}")
        self._channels = channels
        self._in_channels = in_channels
        k = _pair(kernel_size, "kernel_size")
        self._kwargs = {"kernel": k, "stride": _pair(strides, "strides"), "dilate": _pair(dilation, "dilation"),
                        "pad": _pair(padding, "padding")}
        self._groups = groups
        self._ndg = num_deformable_group
        self._use_bias = use_bias
        self._offset_use_bias = offset_use_bias
        self._offset_channels = self._offset_factor * num_deformable_group * k[0] * k[1]
        with self.name_scope():
            self.offset_weight = self.params.get("offset_weight", shape=(self._offset_channels, in_channels) + k,
                                                 init=offset_weight_initializer, allow_deferred_init=True)
            self.offset_bias = (self.params.get("offset_bias", shape=(self._offset_channels,),
                                                init=offset_bias_initializer, allow_deferred_init=True)
                                if offset_use_bias else None)
            self.deformable_conv_weight = self.params.get(
                "deformable_conv_weight", shape=(channels, in_channels // groups) + k,
                init=weight_initializer, allow_deferred_init=True)
            self.deformable_conv_bias = (self.params.get("deformable_conv_bias", shape=(channels,),
                                                         init=bias_initializer, allow_deferred_init=True)
                                         if use_bias else None)
            self.act = Activation(activation, prefix=activation + "_") if activation is not None else None

    def _alias(self) -> str:
        return "deformable_conv"

    def _offsets(self, F: Any, x: Any, offset_weight: Any, offset_bias: Any) -> Any:
        return F.Convolution(x, offset_weight, offset_bias, num_filter=self._offset_channels,
                             no_bias=offset_bias is None, name="offset", **self._kwargs)

    def _deform(self, F: Any, x: Any, offset: Any, weight: Any, bias: Any) -> Any:
        args = [x, offset, weight] + ([bias] if bias is not None else [])
        return F.contrib.DeformableConvolution(*args, num_filter=self._channels, num_group=self._groups,
                                               num_deformable_group=self._ndg, no_bias=bias is None,
                                               name="fwd", **self._kwargs)

    def hybrid_forward(self, F: Any, x: Any, offset_weight: Any, deformable_conv_weight: Any,
                       offset_bias: Any = None, deformable_conv_bias: Any = None) -> Any:
        offset = self._offsets(F, x, offset_weight, offset_bias)
        out = self._deform(F, x, offset, deformable_conv_weight, deformable_conv_bias)
        return self.act(out) if self.act is not None else out

    def __repr__(self) -> str:
        k = self._kwargs
        s = f"{self.__class__.__name__}({self._in_channels or None} -> {self._channels}, " \
            f"kernel_size={k['kernel']}, stride={k['stride']}"
        if k["pad"] != (0, 0):
            s += f", padding={k['pad']}"
        if k["dilate"] != (1, 1):
            s += f", dilation={k['dilate']}"
        if self._groups != 1:
            s += f", groups={self._groups}"
        return s + ")"


class ModulatedDeformableConvolution(DeformableConvolution):
    """2D modulated deformable convolution (Zhu et al. 2018, "Deformable ConvNets v2")."""

    _offset_factor = 3

    def _alias(self) -> str:
        return "modulated_deformable_conv"

    def _deform(self, F: Any, x: Any, offset: Any, weight: Any, bias: Any) -> Any:
        n = 2 * self._ndg * self._kwargs["kernel"][0] * self._kwargs["kernel"][1]
        offset_t = F.slice_axis(offset, axis=1, begin=0, end=n)
        mask = F.sigmoid(F.slice_axis(offset, axis=1, begin=n, end=None)) * 2
        args = [x, offset_t, mask, weight] + ([bias] if bias is not None else [])
        return F.contrib.ModulatedDeformableConvolution(*args, num_filter=self._channels, num_group=self._groups,
                                                        num_deformable_group=self._ndg, no_bias=bias is None,
                                                        name="fwd", **self._kwargs)
