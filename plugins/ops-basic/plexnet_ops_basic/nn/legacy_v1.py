"""MXNet's pre-1.0 operators kept for old models: ``Convolution_v1``, ``Pooling_v1``,
``BatchNorm_v1``. Each takes the parameters its old version took (a subset of today's,
same meaning and defaults) and runs through the registry's current operator (so a faster
``Convolution`` implementation serves ``Convolution_v1`` too)."""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, Operator, OpReqType, Params, Shape
from plexnet.registry import registries

from .batch_norm import BatchNormProp
from .convolution import ConvolutionProp
from .pooling import PoolingProp

__all__ = ["register"]


class ConvolutionV1Param(Params):
    kernel = Field(Shape, doc="convolution window (h, w) or (d, h, w)")
    stride = Field(Shape, default=Shape(()), doc="default 1 per axis")
    dilate = Field(Shape, default=Shape(()), doc="default 1 per axis")
    pad = Field(Shape, default=Shape(()), doc="default 0 per axis")
    num_filter = Field(int, low=1, doc="output channels")
    num_group = Field(int, default=1, low=1, doc="groups")
    workspace = Field(int, default=1024, low=0, doc="workspace in MB (ignored)")
    no_bias = Field(bool, default=False, doc="no bias term")
    cudnn_tune = Field(str, default=None, optional=True, choices=("off", "limited_workspace", "fastest"),
                       doc="ignored")
    cudnn_off = Field(bool, default=False, doc="ignored")
    layout = Field(str, default=None, optional=True, choices=("NCHW", "NCDHW", "NHWC", "NDHWC"), doc="layout")


class PoolingV1Param(Params):
    kernel = Field(Shape, default=Shape(()), doc="pooling window")
    pool_type = Field(str, default="max", choices=("max", "avg", "sum"), doc="pooling type")
    global_pool = Field(bool, default=False, doc="pool over the whole spatial extent")
    pooling_convention = Field(str, default="valid", choices=("full", "valid"), doc="output size rounding")
    stride = Field(Shape, default=Shape(()), doc="default 1 per axis")
    pad = Field(Shape, default=Shape(()), doc="default 0 per axis")


class BatchNormV1Param(Params):
    eps = Field(float, default=1e-3, doc="added to the variance")
    momentum = Field(float, default=0.9, doc="moving average momentum")
    fix_gamma = Field(bool, default=True, doc="gamma fixed at 1")
    use_global_stats = Field(bool, default=False, doc="use the moving statistics in training too")
    output_mean_var = Field(bool, default=False, doc="also output the batch mean and variance")


def _v1(modern: type, name: str, pcls: type[Params]) -> type:
    """The modern property with the old parameter struct: parameters reach the modern
    code as the modern struct (defaults filled in)."""

    def init(self: Any, kwargs: dict[str, Any]) -> None:
        old = pcls.parse(self.op_name, kwargs, ignore=self.extra_kwargs)
        self.v1_param = old
        self.param = modern.param_cls.parse(self.op_name, {k: v for k, v in old.to_dict().items() if v is not None})

    def get_params(self: Any) -> dict[str, str]:
        return self.v1_param.to_strings()

    doc = f"MXNet's legacy ``{name}``: ``{modern.__name__[:-4]}`` with the pre-1.0 parameters."
    return type(f"{modern.__name__[:-4]}V1Prop", (modern,), {"param_cls": pcls, "init": init,
                                                              "get_params": get_params, "__doc__": doc})


class _Delegate(Operator):
    """Runs the registry's implementation of the modern operator."""

    def __init__(self, modern: str, prop: Any, ctx: Any) -> None:
        mprop = registries().operators.create_property(modern, prop.param.to_dict())
        self.op = mprop.create_operator(ctx)

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        self.op.forward(ctx, in_data, req, out_data, aux)

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        self.op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux)


class _AvgPoolV1(Operator):
    """``Pooling_v1`` average: the window sum divided by the whole kernel area, also
    where a ``full``-convention window hangs over the edge (today's ``Pooling`` divides
    by the part inside)."""

    def __init__(self, prop: Any, ctx: Any) -> None:
        kw = dict(prop.param.to_dict(), pool_type="sum")
        self.op = registries().operators.create_property("Pooling", kw).create_operator(ctx)
        self.kernel = tuple(prop.param.kernel)
        self.global_pool = prop.param.global_pool

    def _scale(self, data: Any) -> float:
        area = 1
        for k in (data.shape[2:] if self.global_pool else self.kernel):
            area *= int(k)
        return 1.0 / area

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp = ctx.xp
        tmp = [xp.zeros_like(o) for o in out_data]
        self.op.forward(ctx, in_data, [OpReqType.write] * len(tmp), tmp, aux)
        for o, r, t in zip(out_data, req, tmp):
            t *= self._scale(in_data[0])
            if r == OpReqType.add:
                o += t
            elif r != OpReqType.null:
                o[...] = t

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        scale = self._scale(in_data[0])
        og = [g * scale for g in out_grad]
        self.op.backward(ctx, og, in_data, [None if o is None else o * scale for o in out_data], req, in_grad, aux)


def _make(name: str, modern: str) -> Any:
    def make(prop: Any, ctx: Any) -> Operator:
        if name == "Pooling_v1" and prop.param.pool_type == "avg":
            return _AvgPoolV1(prop, ctx)
        return _Delegate(modern, prop, ctx)
    return make


def register(registry: Any) -> None:
    for name, modern, cls, pcls in (("Convolution_v1", "Convolution", ConvolutionProp, ConvolutionV1Param),
                                    ("Pooling_v1", "Pooling", PoolingProp, PoolingV1Param),
                                    ("BatchNorm_v1", "BatchNorm", BatchNormProp, BatchNormV1Param)):
        registry.register_property(name, _v1(cls, name, pcls))
        registry.register_impl(name, "*", _make(name, modern), impl_name="xp")
