"""Convolution (1-D, 2-D, 3-D; stride, dilate, pad, num_group, no_bias), MXNet 1.x
semantics: data ``(N, C, *spatial)``, weight ``(num_filter, C/num_group, *kernel)``,
bias ``(num_filter,)``, output ``(N, num_filter, *out)`` with
``out = (in + 2*pad - dilate*(kernel-1) - 1) // stride + 1``.

The xp implementation is im2col + one GEMM per group (see ``_convcore``); 1x1 kernels
without padding are plain GEMMs (``_pointwise``)."""
from __future__ import annotations

from plexnet.base import ShapeError
from plexnet.operator import Field, OpReqType

from . import _pointwise
from ._convcore import ConvGeom, bias_grad, conv_backward, conv_forward
from ._convparams import ConvOpBase, ConvParamBase, ConvPropBase


class ConvolutionParam(ConvParamBase):
    no_bias = Field(bool, default=False, doc="do not use a bias term")
    #: MXNet's declaration order (positional parameters of nd/sym.Convolution)
    field_order = ("kernel", "stride", "dilate", "pad", "num_filter", "num_group", "workspace", "no_bias")


def conv_geom(p, dshape) -> ConvGeom:
    return ConvGeom(dshape[0], dshape[1], p.num_filter, p.num_group, dshape[2:], p.kernel, p.stride,
                    p.dilate, p.pad)


class ConvolutionOp(ConvOpBase):
    kind = "Convolution"

    def make_geom(self, dshape) -> ConvGeom:
        return conv_geom(self.p, dshape)

    def forward(self, ctx, in_data, req, out_data, aux_states):
        x, w = in_data[0], in_data[1]
        b = None if self.p.no_bias else in_data[2]
        y, xp = out_data[0], ctx.xp
        if _pointwise.eligible(self.p, x, y):
            _pointwise.forward(xp, self.p, x, w, b, y, req[0])
            return
        res = ctx.requested[0] if ctx.requested else None
        g = self.single(xp, x, max(x.size, y.size), False)
        if g is not None:
            conv_forward(xp, g, x, w, b, y, req[0], res)
            return
        self.for_chunks(xp, x, max(x.size, y.size), False, res,
                        lambda s, e, g, r, slot: conv_forward(xp, g, x[s:e], w, b, y[s:e], req[0], r))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        x, w, dy = in_data[0], in_data[1], out_grad[0]
        written = [g if r != OpReqType.null else None for g, r in zip(in_grad[:2], req[:2])]
        if _pointwise.eligible(self.p, x, *written):
            xp = ctx.xp
            if not self.p.no_bias:
                bias_grad(xp, dy, in_grad[2], req[2])
            _pointwise.backward(xp, self.p, x, w, dy, in_grad[0], req[0], in_grad[1], req[1])
            return
        super().backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)

    def backward_chunk(self, xp, g, x, w, dy, dx, dx_req, dw, dw_req, res):
        conv_backward(xp, g, x, w, dy, dx, dx_req, dw, dw_req, None, OpReqType.null, res)


class ConvolutionProp(ConvPropBase):
    param_cls = ConvolutionParam

    def weight_shape(self, d):
        p, op = self.param, self.op_name
        nd = len(p.kernel)
        if len(d) != nd + 2:
            raise ShapeError(f"{op}: data must be {nd + 2}-d (N, C, {'spatial ' * nd}) for a {nd}-d kernel "
                             f"{tuple(p.kernel)}, got shape {d}")
        if p.channels_last():
            raise ShapeError(f"{op}: layout {p.layout!r} is not supported (channels-first only)")
        C = d[1]
        if C % p.num_group:
            raise ShapeError(f"{op}: input channels {C} (data shape {d}) not divisible by num_group {p.num_group}")
        if p.num_filter % p.num_group:
            raise ShapeError(f"{op}: num_filter {p.num_filter} not divisible by num_group {p.num_group}")
        return (p.num_filter, C // p.num_group) + tuple(p.kernel)

    def out_shape(self, d):
        p, op = self.param, self.op_name
        for i, k, s, dl, pd in zip(d[2:], p.kernel, p.stride, p.dilate, p.pad):
            if i and i + 2 * pd < dl * (k - 1) + 1:
                raise ShapeError(f"{op}: kernel {tuple(p.kernel)} (dilate {tuple(p.dilate)}) exceeds the padded "
                                 f"input: data shape {d}, pad {tuple(p.pad)}")
        if len(d) > 2 and 0 in d[2:]:
            # MXNet 1.x partial inference: an unknown (0) spatial size stays unknown in the output
            full = tuple(d[:2]) + tuple(i or dl * (k - 1) + 1 for i, k, dl in zip(d[2:], p.kernel, p.dilate))
            out = conv_geom(p, full).out_shape
            return tuple(out[:2]) + tuple(o if i else 0 for o, i in zip(out[2:], d[2:]))
        return conv_geom(p, d).out_shape

    def geom(self, d):
        return conv_geom(self.param, d) if len(d) == len(self.param.kernel) + 2 else None

    def refine_partial_inputs(self, in_vals, out_known):
        """MXNet's incomplete inference: the data's batch from a known output, and a spatial
        size where that axis' stride is 1 (``out + dilated kernel - 1 - 2 pad``)."""
        p, d = self.param, in_vals[0]
        o = out_known[0] if out_known else None
        if d is None or o is None or len(o) != len(d) or len(d) != len(p.kernel) + 2 or p.channels_last():
            return None
        new = [o[0] if d[0] == 0 else d[0], d[1]]
        for i, (k, s, dl, pd) in enumerate(zip(p.kernel, p.stride, p.dilate, p.pad)):
            dim, od = d[2 + i], o[2 + i]
            new.append(od + dl * (k - 1) - 2 * pd if dim == 0 and od and s == 1 else dim)
        return None if tuple(new) == tuple(d) else [tuple(new)] + list(in_vals[1:])


def register(registry):
    registry.register_property("Convolution", ConvolutionProp)
    registry.register_impl("Convolution", "*", lambda prop, ctx: ConvolutionOp(prop.param), impl_name="xp")
