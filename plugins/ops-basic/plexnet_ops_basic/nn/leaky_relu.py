"""LeakyReLU (leaky, elu, selu, gelu, prelu, rrelu), MXNet 1.x semantics.

* ``leaky``: ``x > 0 ? x : slope * x``; ``elu``: ``x > 0 ? x : slope * (exp(x) - 1)``;
  ``selu``: ``lambda * (x > 0 ? x : alpha * (exp(x) - 1))``; ``gelu``:
  ``0.5 * x * (1 + erf(x / sqrt(2)))``.
* ``prelu``: learnable ``gamma`` (second argument), shape ``(C,)`` for data
  ``(N, C, ...)`` (``(1,)`` or the data's shape are accepted too).
* ``rrelu``: in training each negative element gets a slope drawn uniformly from
  ``[lower_bound, upper_bound]`` (stored in the second output ``mask``); otherwise the
  mean slope is used. Uses the ``kRandom`` resource.
"""
from __future__ import annotations

import math

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params
from plexnet.resource import ResourceRequest

from ._common import writes

SELU_LAMBDA = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


class LeakyReLUParam(Params):
    act_type = Field(str, default="leaky", choices=("elu", "gelu", "leaky", "prelu", "rrelu", "selu"))
    slope = Field(float, default=0.25, doc="slope of leaky / alpha of elu")
    lower_bound = Field(float, default=0.125, doc="rrelu: lower bound of the random slope")
    upper_bound = Field(float, default=0.334, doc="rrelu: upper bound of the random slope")


def _erf_approx(xp, x):
    """erf through xp alone: the Chebyshev fit of erfc from Numerical Recipes (``erfcc``),
    fractional error below 1.2e-7 everywhere."""
    z = xp.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = (-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277)))))))))
    erfc = t * xp.exp(poly)
    return xp.where(x >= 0, 1.0 - erfc, erfc - 1.0)


def erf(xp, x):
    """``scipy.special.erf`` (numpy) / ``cupyx.scipy.special.erf`` (CuPy) when installed,
    else ``_erf_approx``."""
    try:
        from ..tensor._common import special
        fn = special(xp, "erf")
    except Exception:  # noqa: BLE001 - optional
        fn = None
    return fn(x) if fn is not None else _erf_approx(xp, x)


def _gelu(xp, x):
    return 0.5 * x * (1.0 + erf(xp, x * (1.0 / math.sqrt(2.0))))


def _gelu_grad(xp, x):
    cdf = 0.5 * (1.0 + erf(xp, x * (1.0 / math.sqrt(2.0))))
    return cdf + x * xp.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))


def _expand_gamma(g: tuple, d: tuple):
    """MXNet's ``expand_shape``: gamma's dims align, from the right, with data's first two
    dims (size 1 broadcasts); the full data shape is a plexnet extension. None: no fit."""
    if g == d:
        return g
    res = [1] * len(d)
    k = len(g) - 1
    for i in range(len(d) - 1, -1, -1):
        if k >= 0 and i <= 1 and (d[i] == g[k] or g[k] == 1):
            res[i] = g[k]
            k -= 1
    return tuple(res) if k == -1 else None


class LeakyReLUOp(Operator):
    def __init__(self, param: LeakyReLUParam) -> None:
        self.p = param

    def _gamma(self, gamma, x):
        e = _expand_gamma(tuple(gamma.shape), tuple(x.shape))
        return gamma.reshape(e if e is not None else (1, -1) + (1,) * (x.ndim - 2))

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        p = self.p
        x = in_data[0]
        act = p.act_type
        if act == "leaky":
            y = xp.where(x > 0, x, x * p.slope)
        elif act == "elu":
            y = xp.where(x > 0, x, xp.expm1(xp.minimum(x, 0)) * p.slope)
        elif act == "selu":
            y = xp.where(x > 0, x, xp.expm1(xp.minimum(x, 0)) * SELU_ALPHA) * SELU_LAMBDA
        elif act == "gelu":
            y = _gelu(xp, x)
        elif act == "prelu":
            y = xp.where(x > 0, x, x * self._gamma(in_data[1], x))
        else:  # rrelu
            if ctx.is_train:
                rng = ctx.requested[0].get_random()
                r = rng.random(x.shape, dtype=x.dtype) if x.dtype.kind == "f" and x.itemsize in (4, 8) else \
                    rng.random(x.shape)
                mask = (r * (p.upper_bound - p.lower_bound) + p.lower_bound).astype(x.dtype, copy=False)
                y = xp.where(x > 0, x, x * mask)
            else:  # the mean slope; MXNet leaves the mask output unwritten (zeros)
                y = xp.where(x > 0, x, x * x.dtype.type((p.lower_bound + p.upper_bound) / 2.0))
                mask = xp.zeros(x.shape, dtype=x.dtype)
            if writes(req[1]):
                xp.copyto(out_data[1], mask)
            elif req[1] == OpReqType.add:
                out_data[1] += mask
        y = y.astype(x.dtype, copy=False)
        if req[0] == OpReqType.null:
            return
        if writes(req[0]):
            xp.copyto(out_data[0], y)
        else:
            out_data[0] += y

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        p = self.p
        act = p.act_type
        dy = out_grad[0]
        gx = None
        if act == "leaky":
            y = out_data[0]
            gx = xp.where(y <= 0, dy * p.slope, dy)  # MXNet: slope only where y <= 0 (NaN gets 1)
        elif act == "elu":
            y = out_data[0]
            gx = xp.where(y > 0, dy, dy * (y + p.slope))
        elif act == "selu":
            y = out_data[0]
            # MXNet 1.9.1's selu_grad: lambda * (y + alpha) where y <= 0, not the derivative
            # lambda * alpha * exp(x) = y + lambda * alpha (they part as x falls: 0.590 against
            # 0.647 at x = -1); kept so that training matches MXNet step for step
            gx = xp.where(y > 0, dy * SELU_LAMBDA, dy * (SELU_LAMBDA * (y + SELU_ALPHA)))
        elif act == "gelu":
            gx = dy * _gelu_grad(xp, in_data[0])
        elif act == "rrelu":
            y = out_data[0]
            gx = xp.where(y > 0, dy, dy * out_data[1])
        else:  # prelu
            x = in_data[0]
            g = self._gamma(in_data[1], x)
            neg = x <= 0
            gx = xp.where(neg, dy * g, dy)
            if req[1] != OpReqType.null:
                gg = dy * x * neg
                gshape = in_data[1].shape
                if gshape != x.shape:
                    e = _expand_gamma(tuple(gshape), tuple(x.shape)) or (1, -1) + (1,) * (x.ndim - 2)
                    axes = tuple(i for i in range(x.ndim) if e[i] == 1 and x.shape[i] != 1)
                    gg = gg.sum(axis=axes).reshape(gshape)
                if writes(req[1]):
                    xp.copyto(in_grad[1], gg)
                else:
                    in_grad[1] += gg
        if req[0] == OpReqType.null:
            return
        gx = gx.astype(in_grad[0].dtype, copy=False)
        if writes(req[0]):
            xp.copyto(in_grad[0], gx)
        else:
            in_grad[0] += gx


class LeakyReLUProp(OperatorProperty):
    param_cls = LeakyReLUParam

    def list_arguments(self):
        return ["data", "gamma"] if self.param.act_type == "prelu" else ["data"]

    def input_var_attrs(self) -> dict:
        """Attributes given to input variables on composition (MXNet's
        ``FSetInputVarAttrOnCompose``): PReLU's gamma starts at 0.25."""
        return {"gamma": {"__init__": '["Constant", {"value": 0.25}]'}} if self.param.act_type == "prelu" else {}

    def list_outputs(self):
        return ["output", "mask"] if self.param.act_type == "rrelu" else ["output"]

    def infer_shape(self, in_shape):
        op = self.op_name
        d = None if in_shape[0] is None else tuple(int(v) for v in in_shape[0])
        ins = [d] + [None if s is None else tuple(s) for s in in_shape[1:]]
        if d is None:
            return ins, [None] * self.num_outputs(), []
        if self.param.act_type == "prelu":
            if ins[1] is not None and 0 in ins[1] and len(ins[1]) == 1:
                ins[1] = None  # (0,): an unknown size (MXNet 1.x partial shape), filled below
            if len(d) < 2 and ins[1] is None:
                ins[1] = (1,)
            elif ins[1] is None:
                ins[1] = (d[1],)
            g = ins[1]
            if _expand_gamma(g, d) is None:
                raise ShapeError(f"{op}: prelu gamma has shape {g}; it must broadcast to the first two dims of "
                                 f"data {d} from the right (e.g. ({d[1] if len(d) > 1 else 1},), (1,)), or be the "
                                 "data shape")
        return ins, [d] * self.num_outputs(), []

    def forward_resource(self, in_shape):
        return [ResourceRequest(ResourceRequest.kRandom)] if self.param.act_type == "rrelu" else []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        act = self.param.act_type
        if act == "prelu":
            return [out_grad[0], in_data[0], in_data[1]]
        if act == "gelu":
            return [out_grad[0], in_data[0]]
        if act == "rrelu":
            return [out_grad[0], out_data[0], out_data[1]]
        return [out_grad[0], out_data[0]]

    def forward_inplace_option(self, in_data, out_data):
        if self.param.act_type in ("prelu", "gelu"):
            return []
        return [(in_data[0], out_data[0])]

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_grad[0], in_grad[0])]


def register(registry):
    registry.register_property("LeakyReLU", LeakyReLUProp)
    registry.register_impl("LeakyReLU", "*", lambda prop, ctx: LeakyReLUOp(prop.param), impl_name="xp")
