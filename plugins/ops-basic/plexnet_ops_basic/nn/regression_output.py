"""LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput, MXNet 1.x
semantics.

Forward: identity (linear, MAE) or sigmoid (logistic). Backward ignores the head
gradient and reads only label and output: ``grad = f(out - label) * grad_scale /
num_output`` with ``f`` the identity (linear, logistic) or ``sign`` (MAE) and
``num_output = label.size / label.shape[0]``. The label gets a zero gradient.
Label shape: the data's, or ``(N,)`` for data ``(N, 1)``.
"""
from __future__ import annotations

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params

from ._common import writes
from .activation import _sigmoid


class RegressionOutputParam(Params):
    allow_unknown = True   # MXNet parses these with InitAllowUnknown: ``axis=0`` is ignored
    grad_scale = Field(float, default=1.0, doc="scale of the gradient")


class RegressionOutputOp(Operator):
    def __init__(self, param: RegressionOutputParam, kind: str) -> None:
        self.p, self.kind = param, kind

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        x, out = in_data[0], out_data[0]
        if self.kind == "logistic":
            if writes(req[0]):
                _sigmoid(xp, x, out)
            else:
                out += _sigmoid(xp, x, xp.empty_like(x))
        elif writes(req[0]):
            if out is not x:
                xp.copyto(out, x)
        else:
            out += x

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        if writes(req[1]):
            in_grad[1][...] = 0
        if req[0] == OpReqType.null:
            return
        out, label = out_data[0], in_data[1]
        num_output = label.size // label.shape[0] if label.ndim else 1
        g = out - label.reshape(out.shape)
        if self.kind == "mae":   # MXNet's minus_sign: -1 where out == label, not 0
            g = xp.where(g > 0, 1, -1).astype(g.dtype, copy=False)
        scale = self.p.grad_scale / num_output
        if writes(req[0]):
            xp.multiply(g, scale, out=in_grad[0])
        else:
            in_grad[0] += g * scale


class RegressionOutputProp(OperatorProperty):
    param_cls = RegressionOutputParam
    kind = "linear"

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        op = self.op_name
        d = None if in_shape[0] is None else tuple(int(v) for v in in_shape[0])
        lab = None if in_shape[1] is None else tuple(int(v) for v in in_shape[1])
        if d is None:
            return [d, lab], [None], []
        one_d = (d[0],) if len(d) == 2 and d[1] == 1 else None
        if lab is None:
            lab = one_d or d
        elif lab != d and lab != one_d:
            raise ShapeError(f"{op}: label has shape {lab}, expected {d}" + (f" or {one_d}" if one_d else "")
                             + f" for data {d}")
        return [d, lab], [d], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [in_data[1], out_data[0]]

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_data[0], in_grad[0])]

    def need_top_grad(self):
        return False


class LogisticRegressionOutputProp(RegressionOutputProp):
    kind = "logistic"


class MAERegressionOutputProp(RegressionOutputProp):
    kind = "mae"


def register(registry):
    for name, cls in (("LinearRegressionOutput", RegressionOutputProp),
                      ("LogisticRegressionOutput", LogisticRegressionOutputProp),
                      ("MAERegressionOutput", MAERegressionOutputProp)):
        registry.register_property(name, cls)
        registry.register_impl(name, "*", lambda prop, ctx: RegressionOutputOp(prop.param, prop.kind),
                               impl_name="xp")
