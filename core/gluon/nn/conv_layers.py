"""Convolution, pooling and padding layers (MXNet 1.x ``gluon.nn.conv_layers``)."""
from __future__ import annotations

from numbers import Number
from typing import Any

from ..block import HybridBlock
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose", "MaxPool1D",
           "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D",
           "GlobalMaxPool3D", "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]


def _tuple(v: Any, n: int) -> tuple:
    return (v,) * n if isinstance(v, Number) else tuple(v)


def _weight_shape(op_name: str, layout: str, channels: int, in_channels: int, groups: int,
                  kernel: tuple) -> tuple:
    """The weight shape (0 where the input channels are not known yet)."""
    if op_name == "Convolution":
        c_out, c_in = channels, (in_channels // groups if in_channels else 0)
    else:  # Deconvolution: (in_channels, channels / groups, *kernel)
        c_out, c_in = in_channels, channels // groups
    if layout.find("C") == len(layout) - 1:  # channels last: (out, *kernel, in)
        return (c_out, *kernel, c_in)
    return (c_out, c_in, *kernel)


class _Conv(HybridBlock):
    def __init__(self, channels: int, kernel_size: tuple, strides: Any, padding: Any, dilation: Any, groups: int,
                 layout: str, in_channels: int = 0, activation: str | None = None, use_bias: bool = True,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros", op_name: str = "Convolution",
                 adj: Any = None, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            n = len(kernel_size)
            self._channels = channels
            self._in_channels = in_channels
            self._op_name = op_name
            self._kwargs: dict[str, Any] = {
                "kernel": tuple(kernel_size), "stride": _tuple(strides, n), "dilate": _tuple(dilation, n),
                "pad": _tuple(padding, n), "num_filter": channels, "num_group": groups, "no_bias": not use_bias,
                "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = _tuple(adj, n)
            self.weight = self.params.get("weight", init=weight_initializer, allow_deferred_init=True,
                                          shape=_weight_shape(op_name, layout, channels, in_channels, groups,
                                                              tuple(kernel_size)))
            if use_bias:
                self.bias = self.params.get("bias", shape=(channels,), init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation is not None else None

    def hybrid_forward(self, F: Any, x: Any, weight: Any, bias: Any = None) -> Any:
        op = getattr(F, self._op_name)
        act = op(x, weight, name="fwd", **self._kwargs) if bias is None else \
            op(x, weight, bias, name="fwd", **self._kwargs)
        if self.act is not None:
            act = self.act(act)
        return act

    def _alias(self) -> str:
        return "conv"

    def __repr__(self) -> str:
        k = self._kwargs
        n = len(k["kernel"])
        s = f"{self.__class__.__name__}(" + "{} -> {}".format(*self._mapping()) + \
            f", kernel_size={k['kernel']}, stride={k['stride']}"
        if k["pad"] != (0,) * n:
            s += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            s += f", dilation={k['dilate']}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        return s + ")"

    def _mapping(self) -> tuple:
        # MXNet 1.9.1's formula for every convolution, the transposed ones included, whose
        # weight is (in, out / groups, ...): Conv2DTranspose(2) reads "2 -> 0" before inference
        shape = self.weight.shape or (0, 0)
        return (shape[1] if shape[1] else None, shape[0])


class Conv1D(_Conv):
    """1-D convolution over (N, C, W) inputs."""

    def __init__(self, channels: int, kernel_size: Any, strides: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, layout: str = "NCW", activation: str | None = None, use_bias: bool = True,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros", in_channels: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(channels, _tuple(kernel_size, 1), strides, padding, dilation, groups, layout, in_channels,
                         activation, use_bias, weight_initializer, bias_initializer, **kwargs)


class Conv2D(_Conv):
    """2-D convolution over (N, C, H, W) inputs."""

    def __init__(self, channels: int, kernel_size: Any, strides: Any = (1, 1), padding: Any = (0, 0),
                 dilation: Any = (1, 1), groups: int = 1, layout: str = "NCHW", activation: str | None = None,
                 use_bias: bool = True, weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(channels, _tuple(kernel_size, 2), strides, padding, dilation, groups, layout, in_channels,
                         activation, use_bias, weight_initializer, bias_initializer, **kwargs)


class Conv3D(_Conv):
    """3-D convolution over (N, C, D, H, W) inputs."""

    def __init__(self, channels: int, kernel_size: Any, strides: Any = (1, 1, 1), padding: Any = (0, 0, 0),
                 dilation: Any = (1, 1, 1), groups: int = 1, layout: str = "NCDHW", activation: str | None = None,
                 use_bias: bool = True, weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(channels, _tuple(kernel_size, 3), strides, padding, dilation, groups, layout, in_channels,
                         activation, use_bias, weight_initializer, bias_initializer, **kwargs)


class _ConvTranspose(_Conv):
    def __init__(self, channels: int, kernel_size: tuple, strides: Any, padding: Any, output_padding: Any,
                 dilation: Any, groups: int, layout: str, activation: Any, use_bias: bool, weight_initializer: Any,
                 bias_initializer: Any, in_channels: int, **kwargs: Any) -> None:
        n = len(kernel_size)
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout, in_channels, activation,
                         use_bias, weight_initializer, bias_initializer, op_name="Deconvolution",
                         adj=_tuple(output_padding, n), **kwargs)
        self.outpad = _tuple(output_padding, n)


class Conv1DTranspose(_ConvTranspose):
    """1-D transposed convolution (Deconvolution)."""

    def __init__(self, channels: int, kernel_size: Any, strides: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, dilation: Any = 1, groups: int = 1, layout: str = "NCW",
                 activation: str | None = None, use_bias: bool = True, weight_initializer: Any = None,
                 bias_initializer: Any = "zeros", in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(channels, _tuple(kernel_size, 1), strides, padding, output_padding, dilation, groups,
                         layout, activation, use_bias, weight_initializer, bias_initializer, in_channels, **kwargs)


class Conv2DTranspose(_ConvTranspose):
    """2-D transposed convolution (Deconvolution)."""

    def __init__(self, channels: int, kernel_size: Any, strides: Any = (1, 1), padding: Any = (0, 0),
                 output_padding: Any = (0, 0), dilation: Any = (1, 1), groups: int = 1, layout: str = "NCHW",
                 activation: str | None = None, use_bias: bool = True, weight_initializer: Any = None,
                 bias_initializer: Any = "zeros", in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(channels, _tuple(kernel_size, 2), strides, padding, output_padding, dilation, groups,
                         layout, activation, use_bias, weight_initializer, bias_initializer, in_channels, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    """3-D transposed convolution (Deconvolution)."""

    def __init__(self, channels: int, kernel_size: Any, strides: Any = (1, 1, 1), padding: Any = (0, 0, 0),
                 output_padding: Any = (0, 0, 0), dilation: Any = (1, 1, 1), groups: int = 1,
                 layout: str = "NCDHW", activation: str | None = None, use_bias: bool = True,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros", in_channels: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(channels, _tuple(kernel_size, 3), strides, padding, output_padding, dilation, groups,
                         layout, activation, use_bias, weight_initializer, bias_initializer, in_channels, **kwargs)


class _Pooling(HybridBlock):
    def __init__(self, pool_size: tuple, strides: Any, padding: Any, ceil_mode: bool, global_pool: bool,
                 pool_type: str, layout: str, count_include_pad: bool | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        n = len(pool_size)
        self._kwargs: dict[str, Any] = {
            "kernel": tuple(pool_size), "stride": _tuple(strides, n), "pad": _tuple(padding, n),
            "global_pool": global_pool, "pool_type": pool_type, "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self) -> str:
        return "pool"

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return (f"{self.__class__.__name__}(size={k['kernel']}, stride={k['stride']}, padding={k['pad']}, "
                f"ceil_mode={k['pooling_convention'] == 'full'}, global_pool={k['global_pool']}, "
                f"pool_type={k['pool_type']}, layout={k['layout']})")


def _pool(name: str, n: int, pool_type: str, layout: str, default_size: Any) -> type:
    def __init__(self: Any, pool_size: Any = default_size, strides: Any = None, padding: Any = 0,
                 layout: str = layout, ceil_mode: bool = False, count_include_pad: bool = True,
                 **kwargs: Any) -> None:
        _Pooling.__init__(self, _tuple(pool_size, n), None if strides is None else _tuple(strides, n),
                          _tuple(padding, n), ceil_mode, False, pool_type, layout,
                          count_include_pad if pool_type == "avg" else None, **kwargs)
    return type(name, (_Pooling,), {"__init__": __init__,
                                    "__doc__": f"{n}-D {pool_type} pooling ({layout})."})


def _global(name: str, n: int, pool_type: str, layout: str) -> type:
    def __init__(self: Any, layout: str = layout, **kwargs: Any) -> None:
        _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout, **kwargs)
    return type(name, (_Pooling,), {"__init__": __init__,
                                    "__doc__": f"Global {n}-D {pool_type} pooling ({layout})."})


MaxPool1D = _pool("MaxPool1D", 1, "max", "NCW", 2)
MaxPool2D = _pool("MaxPool2D", 2, "max", "NCHW", (2, 2))
MaxPool3D = _pool("MaxPool3D", 3, "max", "NCDHW", (2, 2, 2))
AvgPool1D = _pool("AvgPool1D", 1, "avg", "NCW", 2)
AvgPool2D = _pool("AvgPool2D", 2, "avg", "NCHW", (2, 2))
AvgPool3D = _pool("AvgPool3D", 3, "avg", "NCDHW", (2, 2, 2))
GlobalMaxPool1D = _global("GlobalMaxPool1D", 1, "max", "NCW")
GlobalMaxPool2D = _global("GlobalMaxPool2D", 2, "max", "NCHW")
GlobalMaxPool3D = _global("GlobalMaxPool3D", 3, "max", "NCDHW")
GlobalAvgPool1D = _global("GlobalAvgPool1D", 1, "avg", "NCW")
GlobalAvgPool2D = _global("GlobalAvgPool2D", 2, "avg", "NCHW")
GlobalAvgPool3D = _global("GlobalAvgPool3D", 3, "avg", "NCDHW")
for _c in (MaxPool1D, MaxPool2D, MaxPool3D, AvgPool1D, AvgPool2D, AvgPool3D, GlobalMaxPool1D, GlobalMaxPool2D,
           GlobalMaxPool3D, GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D):
    _c.__module__ = __name__


class ReflectionPad2D(HybridBlock):
    """Pads H and W of (N, C, H, W) inputs by reflection (the border row is not
    repeated), built from slice/reverse/concat so it hybridizes."""

    def __init__(self, padding: Any = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(padding, Number):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        if len(padding) != 8:
            raise ValueError(f"ReflectionPad2D: padding must be an int or 8 values (MXNet's pad_width), got "
                             f"{padding}")
        self._padding = tuple(int(p) for p in padding)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        p = self._padding
        for axis, (lo, hi) in ((2, (p[4], p[5])), (3, (p[6], p[7]))):
            parts = []
            if lo:
                parts.append(F.reverse(F.slice_axis(x, axis=axis, begin=1, end=lo + 1), axis=axis))
            parts.append(x)
            if hi:
                parts.append(F.reverse(F.slice_axis(x, axis=axis, begin=-hi - 1, end=-1), axis=axis))
            if len(parts) > 1:
                x = F.concat(*parts, dim=axis)
        return x
