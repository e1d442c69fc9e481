"""Deconvolution (transposed convolution; 1-D/2-D/3-D, stride, dilate, pad, adj,
target_shape, num_group, bias), MXNet 1.x semantics.

data ``(N, C, *in)``, weight ``(C, num_filter/num_group, *kernel)``, bias
``(num_filter,)`` (absent by default: MXNet's ``no_bias`` defaults to True here), output
``(N, num_filter, *out)`` with ``out = stride*(in-1) + dilate*(kernel-1) + 1 - 2*pad +
adj``. With a non-zero ``target_shape`` the padding and adj are derived from it (as
MXNet's ``InferPad``).

Forward is the data gradient of the matching convolution; backward is that
convolution's forward (data gradient) and weight gradient (see ``_convcore``).
"""
from __future__ import annotations

from plexnet.base import ShapeError
from plexnet.operator import Field, OpReqType, ParamError, Shape

from ._convcore import ConvGeom, conv_backward, conv_forward
from ._convparams import ConvOpBase, ConvParamBase, ConvPropBase


class DeconvolutionParam(ConvParamBase):
    #: MXNet's declaration order (positional parameters of nd/sym.Deconvolution)
    field_order = ("kernel", "stride", "dilate", "pad", "adj", "target_shape", "num_filter", "num_group",
                   "workspace", "no_bias")
    adj = Field(Shape, default=Shape(()), doc="extra size added to one side of the output; default 0")
    target_shape = Field(Shape, default=Shape(()), doc="output spatial shape; overrides pad and adj")
    no_bias = Field(bool, default=True, doc="do not use a bias term (MXNet's default for Deconvolution)")
    workspace = Field(int, default=512, low=0, doc="workspace limit in MB (ignored by the xp implementation)")

    def __post_init__(self, op: str) -> None:
        super().__post_init__(op)
        nd = len(self.kernel)
        adj = self.adj if len(self.adj) else Shape((0,) * nd)
        if len(adj) != nd:
            raise ParamError(f"{op}: adj {tuple(adj)} must have as many dimensions as kernel {tuple(self.kernel)}")
        has_target = any(t != 0 for t in self.target_shape)  # then pad and adj are ignored (MXNet)
        if not has_target and any(a < 0 or a >= s for a, s in zip(adj, self.stride)):
            raise ParamError(f"{op}: adj {tuple(adj)} must be >= 0 and smaller than stride {tuple(self.stride)}")
        object.__setattr__(self, "adj", adj)
        if len(self.target_shape) not in (0, nd):
            raise ParamError(f"{op}: target_shape {tuple(self.target_shape)} must have {nd} dimensions")

    def infer_pad(self, in_sp):
        """``(pad, adj)`` actually used for input spatial shape ``in_sp`` (MXNet ``InferPad``)."""
        if len(self.target_shape) and any(t != 0 for t in self.target_shape):
            pad, adj = [], []
            for i, k, s, d, t in zip(in_sp, self.kernel, self.stride, self.dilate, self.target_shape):
                full = s * (i - 1) + d * (k - 1) + 1
                if full < t:
                    raise ShapeError(f"Deconvolution: target_shape {tuple(self.target_shape)} is too big for input "
                                     f"spatial shape {tuple(in_sp)} (at most {full} on that axis)")
                e = full - t
                adj.append(e % 2)
                pad.append((e + 1) // 2)
            if any(a >= s for a, s in zip(adj, self.stride)):
                # MXNet's shape check ("adj(y) must be smaller than stride[0]"): an odd
                # surplus needs one extra output row, which stride 1 cannot give
                raise ShapeError(f"Deconvolution: target_shape {tuple(self.target_shape)} for input spatial "
                                 f"shape {tuple(in_sp)} needs adj {tuple(adj)}, which must be smaller than "
                                 f"stride {tuple(self.stride)}")
            return tuple(pad), tuple(adj)
        return tuple(self.pad), tuple(self.adj)

    def out_spatial(self, in_sp):
        pad, adj = self.infer_pad(in_sp)
        return tuple(s * (i - 1) + d * (k - 1) + 1 - 2 * p + a
                     for i, k, s, d, p, a in zip(in_sp, self.kernel, self.stride, self.dilate, pad, adj))


def deconv_geom(p, dshape) -> ConvGeom:
    """The convolution whose data gradient this deconvolution is."""
    pad, _ = p.infer_pad(dshape[2:])
    out_sp = p.out_spatial(dshape[2:])
    return ConvGeom(dshape[0], p.num_filter, dshape[1], p.num_group, out_sp, p.kernel, p.stride, p.dilate, pad)


class DeconvolutionOp(ConvOpBase):
    kind = "Deconvolution"

    def make_geom(self, dshape) -> ConvGeom:
        g = deconv_geom(self.p, dshape)
        assert g.out_sp == tuple(dshape[2:]), (g.out_sp, dshape)
        return g

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        x, w = in_data[0], in_data[1]
        res = ctx.requested[0] if ctx.requested else None
        out = out_data[0]
        # forward and backward both run convolution gradients: chunk for those temporaries
        self.for_chunks(xp, x, max(x.size, out.size), True, res,
                        lambda s, e, g, r, slot: conv_backward(xp, g, None, w, x[s:e], out[s:e], req[0], None,
                                                               OpReqType.null, None, OpReqType.null, r))
        if not self.p.no_bias:
            out += in_data[2].reshape((1, -1) + (1,) * (x.ndim - 2))

    def backward_chunk(self, xp, g, x, w, dy, dx, dx_req, dw, dw_req, res):
        # data gradient: the convolution of dy with w
        conv_forward(xp, g, dy, w, None, dx, dx_req, res)
        # weight gradient: conv weight gradient with the roles of input and output swapped
        conv_backward(xp, g, dy, None, x, None, OpReqType.null, dw, dw_req, None, OpReqType.null, res)


class DeconvolutionProp(ConvPropBase):
    param_cls = DeconvolutionParam

    def weight_shape(self, d):
        p, op = self.param, self.op_name
        nd = len(p.kernel)
        if len(d) != nd + 2:
            raise ShapeError(f"{op}: data must be {nd + 2}-d for a {nd}-d kernel {tuple(p.kernel)}, got shape {d}")
        C = d[1]
        if C % p.num_group or p.num_filter % p.num_group:
            raise ShapeError(f"{op}: input channels {C} (data shape {d}) and num_filter {p.num_filter} must be "
                             f"divisible by num_group {p.num_group}")
        return (C, p.num_filter // p.num_group) + tuple(p.kernel)

    def out_shape(self, d):
        p, op = self.param, self.op_name
        out_sp = p.out_spatial(d[2:])
        if any(o < 1 for o in out_sp):
            raise ShapeError(f"{op}: output spatial shape {out_sp} is empty (data shape {d}, pad {tuple(p.pad)})")
        return (d[0], p.num_filter) + out_sp

    def geom(self, d):
        return deconv_geom(self.param, d) if len(d) == len(self.param.kernel) + 2 else None


def register(registry):
    registry.register_property("Deconvolution", DeconvolutionProp)
    registry.register_impl("Deconvolution", "*", lambda prop, ctx: DeconvolutionOp(prop.param), impl_name="xp")
