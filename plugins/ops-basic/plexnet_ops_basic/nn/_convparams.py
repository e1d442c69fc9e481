"""Parameter structs, shape checks and the operator / property scaffolding shared by
Convolution and Deconvolution."""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, ParamError, Params, Shape
from plexnet.resource import ResourceRequest

from ._common import shape_assign, writes
from ._convcore import ConvGeom, batch_chunk

LAYOUTS = ("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")
CUDNN_TUNE = ("off", "limited_workspace", "fastest")


class ConvParamBase(Params):
    kernel = Field(Shape, doc="convolution kernel size: (w,), (h, w) or (d, h, w)")
    stride = Field(Shape, default=Shape(()), doc="stride; default 1 per axis")
    dilate = Field(Shape, default=Shape(()), doc="dilation; default 1 per axis")
    pad = Field(Shape, default=Shape(()), doc="zero padding per side; default 0")
    num_filter = Field(int, low=1, high=100000, doc="number of output channels")
    num_group = Field(int, default=1, low=1, doc="number of groups")
    workspace = Field(int, default=1024, low=0, doc="workspace limit in MB (ignored by the xp implementation)")
    cudnn_tune = Field(str, default=None, optional=True, choices=CUDNN_TUNE)
    cudnn_off = Field(bool, default=False)
    layout = Field(str, default=None, optional=True, choices=LAYOUTS)

    def __post_init__(self, op: str) -> None:
        nd = len(self.kernel)
        if nd not in (1, 2, 3):
            raise ParamError(f"{op}: kernel must have 1, 2 or 3 dimensions, got {self.kernel}")
        if any(k < 1 for k in self.kernel):
            raise ParamError(f"{op}: kernel sizes must be >= 1, got {self.kernel}")
        for name, default, low in (("stride", 1, 1), ("dilate", 1, 1), ("pad", 0, 0)):
            v = getattr(self, name)
            if len(v) == 0:
                v = Shape((default,) * nd)
            elif len(v) != nd:
                raise ParamError(f"{op}: {name} {tuple(v)} must have as many dimensions as kernel {tuple(self.kernel)}")
            if any(a < low for a in v):
                raise ParamError(f"{op}: {name} values must be >= {low}, got {tuple(v)}")
            object.__setattr__(self, name, Shape(v))
        if self.layout is not None and len(self.layout) != nd + 2:
            raise ParamError(f"{op}: layout {self.layout!r} does not fit a {nd}-d kernel")

    def channels_last(self) -> bool:
        return self.layout is not None and not self.layout.startswith("NC")


def unsupported_layout(op: str, p: Any) -> NotImplementedError:
    return NotImplementedError(f"{op}: layout {p.layout!r} is not supported by the xp implementation "
                               f"(use channels-first {'NCW NCHW NCDHW'.split()[len(p.kernel) - 1]!r})")


class ConvOpBase(Operator):
    """What the Convolution and Deconvolution operators share: the layout check, one
    ``ConvGeom`` per data shape (``make_geom``), workspace-bounded batch chunks, and
    backward: the bias gradient, then ``backward_chunk`` per batch chunk."""

    kind = ""  # the operator's name, for messages

    def __init__(self, param: ConvParamBase) -> None:
        if param.channels_last():
            raise unsupported_layout(self.kind, param)
        self.p = param
        self._geoms: dict = {}

    def make_geom(self, dshape: tuple) -> ConvGeom:
        raise NotImplementedError

    def geom(self, dshape: tuple) -> ConvGeom:
        g = self._geoms.get(dshape)
        if g is None:
            g = self._geoms[dshape] = self.make_geom(dshape)
        return g

    def _chunks(self, x: Any, backward: bool) -> list:
        """(start, stop, geometry) batch slices keeping temporaries within ``workspace``."""
        g = self.geom(tuple(x.shape))
        nb = batch_chunk(g, x.itemsize, self.p.workspace, backward)
        if nb >= g.N:
            return [(0, g.N, g)]
        return [(s, min(s + nb, g.N), self.geom((min(s + nb, g.N) - s,) + tuple(x.shape[1:])))
                for s in range(0, g.N, nb)]

    def backward_chunk(self, xp: Any, g: ConvGeom, x: Any, w: Any, dy: Any, dx: Any, dx_req: OpReqType,
                       dw: Any, dw_req: OpReqType, res: Any) -> None:
        """Data and weight gradients of one batch chunk (``x``, ``dy``, ``dx`` are sliced)."""
        raise NotImplementedError

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        x, w, dy = in_data[0], in_data[1], out_grad[0]
        res = ctx.requested[0] if ctx.requested else None
        if not self.p.no_bias and req[2] != OpReqType.null:
            axes = (0,) + tuple(range(2, x.ndim))
            if writes(req[2]):
                xp.sum(dy, axis=axes, out=in_grad[2])
            else:
                in_grad[2] += dy.sum(axis=axes)
        dw_req = req[1]
        for s, e, g in self._chunks(x, True):
            self.backward_chunk(xp, g, x[s:e], w, dy[s:e], in_grad[0][s:e], req[0], in_grad[1], dw_req, res)
            if dw_req != OpReqType.null:
                dw_req = OpReqType.add  # the later chunks add to the weight gradient


class ConvPropBase(OperatorProperty):
    """Arguments, shapes, resources and backward dependencies of Convolution and
    Deconvolution. Subclasses give ``weight_shape(d)``, which first checks the data shape
    ``d``, and ``out_shape(d)``."""

    def list_arguments(self):
        return ["data", "weight"] if self.param.no_bias else ["data", "weight", "bias"]

    def weight_shape(self, d: tuple) -> tuple:
        raise NotImplementedError

    def out_shape(self, d: tuple) -> tuple:
        raise NotImplementedError

    def infer_shape(self, in_shape):
        p, op, names = self.param, self.op_name, self.list_arguments()
        shapes = [None if s is None else tuple(int(v) for v in s) for s in in_shape]
        d = shapes[0]
        if d is None:
            return shapes, [None], []
        shape_assign(op, shapes, 1, names, self.weight_shape(d))
        if not p.no_bias:
            shape_assign(op, shapes, 2, names, (p.num_filter,))
        return shapes, [self.out_shape(d)], []

    def forward_resource(self, in_shape):
        return [ResourceRequest(ResourceRequest.kTempSpace)]

    def backward_resource(self, in_shape):
        return [ResourceRequest(ResourceRequest.kTempSpace)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1]]
