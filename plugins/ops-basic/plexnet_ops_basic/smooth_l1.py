"""``smooth_l1``: the SimpleOp example of MXNet's design notes, registered as written
there (scalar ``sigma``; gradient of kind ``in_data`` with ``kInplaceOutIn``).

With ``s2 = sigma ** 2``::

    f(x)  = x - 0.5 / s2        if x >  1 / s2
          = -x - 0.5 / s2       if x < -1 / s2
          = 0.5 * x * x * s2    otherwise
    f'(x) = clip(x * s2, -1, 1)
"""
from __future__ import annotations

from typing import Any

from plexnet.operator.simple_op import SimpleOp, SimpleOpInplaceOption

from plexnet_ops_basic.tensor._common import ADD, store


def smooth_l1_value(xp: Any, x: Any, sigma: float) -> Any:
    s2 = float(sigma) * float(sigma)
    if s2 == 0.0:  # 1/s2 is +inf: the quadratic branch everywhere, times s2 = 0
        return xp.zeros_like(x)
    a = xp.abs(x)
    return xp.where(a > 1.0 / s2, a - 0.5 / s2, (0.5 * s2) * x * x)


def smooth_l1_forward(src: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
    if req:
        store(ctx.xp, ret, req, smooth_l1_value(ctx.xp, src, env.scalar))


def smooth_l1_grad(out_grad: Any, in_data0: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
    if not req:
        return
    xp = ctx.xp
    s2 = float(env.scalar) ** 2
    d = xp.clip(in_data0 * s2, -1.0, 1.0)
    if req == ADD:
        xp.add(in_grad, out_grad * d, out=in_grad, casting="unsafe")
    else:
        xp.multiply(out_grad, d, out=in_grad, casting="unsafe")


def register(registry: Any) -> None:
    (SimpleOp("smooth_l1", 1)
     .set_function(smooth_l1_forward, SimpleOpInplaceOption.kNoInplace)
     .set_gradient(smooth_l1_grad, SimpleOpInplaceOption.kInplaceOutIn, kind="in_data")
     .set_enable_scalar(True)
     .describe("Calculate Smooth L1 Loss(lhs, scalar)")
     .register(registry))
