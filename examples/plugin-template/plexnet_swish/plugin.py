"""Registers two operators:

* ``swish`` (x * sigmoid(beta * x)) as a SimpleOp: one registration, both ``nd.swish``
  and ``sym.swish``, gradient of kind ``in_data``;
* ``HardSwish`` as a full ``OperatorProperty`` + ``Operator`` pair, the way larger
  operators are written.

Operator code uses ``ctx.xp`` (numpy on CPU, CuPy on GPU), so it runs on every device.
"""
from __future__ import annotations

from typing import Any

from plexnet import hookimpl
from plexnet.operator import Field, Operator, OperatorProperty, Params, assign
from plexnet.operator.simple_op import SimpleOp, SimpleOpInplaceOption

PLEXNET_API_VERSION = "1.0"


class SwishParam(Params):
    beta = Field(float, default=1.0, doc="slope of the sigmoid")


def _sig(xp: Any, x: Any, beta: float) -> Any:
    return 1.0 / (1.0 + xp.exp(-beta * x))


def swish_forward(src: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
    assign(ret, req, src * _sig(ctx.xp, src, env.kwargs.beta))


def swish_grad(out_grad: Any, src: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
    b = env.kwargs.beta
    s = _sig(ctx.xp, src, b)
    assign(in_grad, req, out_grad * (s + b * src * s * (1 - s)))


class HardSwishOp(Operator):
    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        x = in_data[0]
        assign(out_data[0], req[0], x * ctx.xp.clip(x + 3, 0, 6) / 6)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        xp, x = ctx.xp, in_data[0]
        d = xp.where(x < -3, 0.0, xp.where(x > 3, 1.0, (2 * x + 3) / 6)).astype(x.dtype)
        assign(in_grad[0], req[0], out_grad[0] * d)


class HardSwishProp(OperatorProperty):
    """x * relu6(x + 3) / 6"""

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]  # the output is not needed by backward


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    (SimpleOp("swish")
     .set_enable_kwargs(SwishParam)
     .set_function(swish_forward, SimpleOpInplaceOption.kNoInplace)
     .set_gradient(swish_grad, SimpleOpInplaceOption.kInplaceOutIn, kind="in_data")
     .describe("swish(x) = x * sigmoid(beta * x)")
     .register(registry))
    registry.register_property("HardSwish", HardSwishProp)
    registry.register_impl("HardSwish", "*", lambda prop, ctx: HardSwishOp(), impl_name="xp")
