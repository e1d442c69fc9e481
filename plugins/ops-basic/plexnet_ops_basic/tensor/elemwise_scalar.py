"""Array-with-scalar operators as SimpleOps with ``set_enable_scalar`` (``_plus_scalar``,
``_rminus_scalar``, ...; what MXNet's NDArray ``a + 2`` / ``2 - a`` call), plus ``clip``
with keyword arguments ``a_min`` / ``a_max``.

The scalar is cast to the array's dtype first (MXNet: ``int32 array * 2.7`` multiplies
by 2). A forward is ``f(xp, x, s, out)``; a gradient ``(kind, d)`` with
``d(xp, g, v, s)`` the input gradient (``v`` is the input or the output by kind).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from plexnet.operator import Field, Params
from plexnet.operator.simple_op import SimpleOp, SimpleOpInplaceOption as IO

from ._common import ADD, fill_zero, positive_zeros, power_f32, store

__all__ = ["SCALAR", "register"]


def _cast(s: float, arr: Any) -> Any:
    k = arr.dtype.kind
    if k == "f" or k == "c":
        return s
    if k == "b":
        return bool(s)
    if not math.isfinite(s):
        return s
    # MXNet's DType(scalar): truncated, then wrapped into the type (uint8: 300 -> 44, -1 -> 255)
    bits = arr.dtype.itemsize * 8
    v = int(s) % (1 << bits)
    if k == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return arr.dtype.type(v)


def _clip_bound(s: float, arr: Any) -> Any:
    """A clip bound in ``arr``'s type: MXNet compares in float, so a bound past the integer
    type's range never applies (``clip(uint8, -2.5, 2.5)`` only caps at 2)."""
    if arr.dtype.kind in "iu" and math.isfinite(s):
        info = np.iinfo(arr.dtype)
        s = min(max(s, info.min), info.max)
    return _cast(s, arr)


def scalar_ufunc_forward(name: str, reverse: bool) -> Callable[..., None]:
    """``ret = xp.NAME(src, scalar)`` (or ``(scalar, src)``); one ufunc call for ``write``."""
    if reverse:
        def forward(src: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
            if req == ADD:
                xp = ctx.xp
                xp.add(ret, getattr(xp, name)(_cast(env.scalar, src), src), out=ret, casting="unsafe")
            elif req:
                getattr(ctx.xp, name)(_cast(env.scalar, src), src, out=ret, casting="unsafe")
    else:
        def forward(src: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
            if req == ADD:
                xp = ctx.xp
                xp.add(ret, getattr(xp, name)(src, _cast(env.scalar, src)), out=ret, casting="unsafe")
            elif req:
                getattr(ctx.xp, name)(src, _cast(env.scalar, src), out=ret, casting="unsafe")
    forward.__name__ = f"{name}_scalar_forward"
    return forward


def scalar_compute_forward(fn: Callable[..., Any]) -> Callable[..., None]:
    def forward(src: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
        if not req:
            return
        xp = ctx.xp
        s = _cast(env.scalar, src)
        if req == ADD:
            xp.add(ret, fn(xp, src, s, None), out=ret, casting="unsafe")
        else:
            r = fn(xp, src, s, ret)
            if r is not ret:
                xp.copyto(ret, r, casting="unsafe")
    return forward


def make_scalar_gradient(kind: str, d: Any) -> Callable[..., None]:
    if d is None:
        def grad0(out_grad: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
            fill_zero(in_grad, req)
        return grad0
    if kind == "out_grad":
        def grad_og(out_grad: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
            if req:
                store(ctx.xp, in_grad, req, d(ctx.xp, out_grad, None, env.scalar))
        return grad_og

    def grad(out_grad: Any, v: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
        if req:
            store(ctx.xp, in_grad, req, d(ctx.xp, out_grad, v, _cast(env.scalar, v)))
    return grad


def _mod(xp: Any, x: Any, s: Any, out: Any) -> Any:
    if s == 0:  # MXNet: x mod 0 = 0
        if out is None:
            return xp.zeros_like(x)
        out[...] = 0
        return out
    # only a negative divisor gives -0.0; the mask is taken before ``out`` (maybe ``x``) is written
    nonneg = x >= 0 if s < 0 and x.dtype.kind == "f" else None
    r = xp.mod(x, s, out=out, casting="unsafe") if out is not None else xp.mod(x, s)
    return positive_zeros(xp, r, nonneg) if nonneg is not None else r


def _power_of(xp: Any, base: Any, exp: Any, like: Any, out: Any) -> Any:
    """``base ** exp`` in ``like``'s dtype; integers as MXNet: through float64, then cast
    (``2 ** -1`` is 0, ``0 ** -1`` the cast of inf; numpy refuses negative integer powers)."""
    if like.dtype.kind not in "iu":
        r = power_f32(xp, base, exp, out)
        if r is not None:
            return r
        return xp.power(base, exp, out=out, casting="unsafe") if out is not None else xp.power(base, exp)
    with np.errstate(all="ignore"):
        r = xp.power(xp.asarray(base, dtype=np.float64), xp.asarray(exp, dtype=np.float64))
        if out is None:
            return r.astype(like.dtype)
        xp.copyto(out, r, casting="unsafe")
    return out


def _power(xp: Any, x: Any, s: Any, out: Any) -> Any:
    return _power_of(xp, x, s, x, out)


def _rpower(xp: Any, x: Any, s: Any, out: Any) -> Any:
    return _power_of(xp, s, x, x, out)


def _rmod(xp: Any, x: Any, s: Any, out: Any) -> Any:
    zero = x == 0  # before ``out`` (which may be ``x``) is written
    with np.errstate(divide="ignore", invalid="ignore"):
        r = xp.mod(s, x, out=out, casting="unsafe") if out is not None else xp.mod(s, x)
    xp.copyto(r, 0, where=zero)
    return positive_zeros(xp, r, s >= 0)


def _mod_grad(xp: Any, g: Any, v: Any, s: Any) -> Any:
    # MXNet's mod_grad / mod_rgrad are 0 for integer types
    return xp.zeros_like(g) if g.dtype.kind in "iu" else g


def _rmod_grad(xp: Any, g: Any, x: Any, s: Any) -> Any:
    if x.dtype.kind in "iu":
        return xp.zeros_like(g)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -g * xp.floor(s / x)


def _rpower_grad(xp: Any, g: Any, y: Any, s: Any) -> Any:
    return g * y * (math.log(s) if s > 0 else math.nan)


ZERO = ("out_grad", None)
OG, IN, OUT = "out_grad", "in_data", "out_value"

#: name, forward (ufunc name, or callable), reverse operands?, gradient, aliases
SCALAR: list[tuple[str, Any, bool, tuple, tuple[str, ...]]] = [
    ("_plus_scalar", "add", False, (OG, lambda xp, g, v, s: g), ("_PlusScalar",)),
    ("_minus_scalar", "subtract", False, (OG, lambda xp, g, v, s: g), ("_MinusScalar",)),
    ("_rminus_scalar", "subtract", True, (OG, lambda xp, g, v, s: -g), ("_RMinusScalar",)),
    ("_mul_scalar", "multiply", False, (OG, lambda xp, g, v, s: g * s), ("_MulScalar",)),
    ("_div_scalar", "true_divide", False, (OG, lambda xp, g, v, s: g / s), ("_DivScalar",)),
    ("_rdiv_scalar", "true_divide", True, (IN, lambda xp, g, x, s: -g * s / (x * x)), ("_RDivScalar",)),
    ("_mod_scalar", _mod, False, (OG, _mod_grad), ("_ModScalar",)),
    ("_rmod_scalar", _rmod, True, (IN, _rmod_grad), ("_RModScalar",)),
    ("_power_scalar", _power, False, (IN, lambda xp, g, x, s: g * s * xp.power(x, s - 1)), ("_PowerScalar",)),
    ("_rpower_scalar", _rpower, True, (OUT, _rpower_grad), ("_RPowerScalar",)),
    ("_maximum_scalar", "maximum", False, (IN, lambda xp, g, x, s: g * (x >= s)), ("_MaximumScalar",)),
    ("_minimum_scalar", "minimum", False, (IN, lambda xp, g, x, s: g * (x <= s)), ("_MinimumScalar",)),
    ("_hypot_scalar", "hypot", False, (IN, lambda xp, g, x, s: g * x / xp.hypot(x, s)), ("_HypotScalar",)),
    ("_equal_scalar", "equal", False, ZERO, ("_EqualScalar",)),
    ("_not_equal_scalar", "not_equal", False, ZERO, ("_NotEqualScalar",)),
    ("_greater_scalar", "greater", False, ZERO, ("_GreaterScalar",)),
    ("_greater_equal_scalar", "greater_equal", False, ZERO, ("_GreaterEqualScalar",)),
    ("_lesser_scalar", "less", False, ZERO, ("_LesserScalar",)),
    ("_lesser_equal_scalar", "less_equal", False, ZERO, ("_LesserEqualScalar",)),
    ("_logical_and_scalar", "logical_and", False, ZERO, ("_LogicalAndScalar",)),
    ("_logical_or_scalar", "logical_or", False, ZERO, ("_LogicalOrScalar",)),
    ("_logical_xor_scalar", "logical_xor", False, ZERO, ("_LogicalXorScalar",)),
]


# -- clip ---------------------------------------------------------------------------------------------

class ClipParam(Params):
    a_min = Field(float, doc="minimum value")
    a_max = Field(float, doc="maximum value (a_min > a_max is accepted, as MXNet: see _clip)")


def _clip(xp: Any, src: Any, lo: Any, hi: Any) -> Any:
    """MXNet's ``x > a_max ? a_max : (x < a_min ? a_min : x)``: numpy's clip where
    ``a_min <= a_max``; with ``a_min > a_max`` MXNet's order of tests decides."""
    if lo <= hi:
        return xp.clip(src, lo, hi)
    return xp.where(src > hi, hi, xp.where(src < lo, lo, src)).astype(src.dtype, copy=False)


def _clip_forward(src: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
    if not req:
        return
    xp, p = ctx.xp, env.kwargs
    lo, hi = _clip_bound(p.a_min, src), _clip_bound(p.a_max, src)
    if req == ADD:
        xp.add(ret, _clip(xp, src, lo, hi), out=ret, casting="unsafe")
    elif ret.dtype == src.dtype and lo <= hi:
        xp.clip(src, lo, hi, out=ret)
    else:
        xp.copyto(ret, _clip(xp, src, lo, hi), casting="unsafe")


def _clip_grad(out_grad: Any, x: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
    if req:
        p = env.kwargs
        store(ctx.xp, in_grad, req, out_grad * ((x >= p.a_min) & (x <= p.a_max)))


def build(name: str, fwd: Any, reverse: bool, grad: tuple, aliases: tuple[str, ...]) -> SimpleOp:
    forward = scalar_ufunc_forward(fwd, reverse) if isinstance(fwd, str) else scalar_compute_forward(fwd)
    kind, d = grad
    what = "scalar OP x" if reverse else "x OP scalar"
    return (SimpleOp(name, 1).set_function(forward, IO.kInplaceInOut)
            .set_gradient(make_scalar_gradient(kind, d), IO.kInplaceOutIn, kind=kind)
            .set_enable_scalar(True).set_aliases(*aliases)
            .describe(f"{what} elementwise ({fwd if isinstance(fwd, str) else fwd.__name__.strip('_')})"))


def register(registry: Any) -> None:
    for row in SCALAR:
        build(*row).register(registry)
    (SimpleOp("clip", 1).set_function(_clip_forward, IO.kInplaceInOut)
     .set_gradient(_clip_grad, IO.kInplaceOutIn, kind="in_data")
     .set_enable_kwargs(ClipParam)
     .describe("clip(x, a_min, a_max): limit values to [a_min, a_max]; gradient 0 outside")
     .register(registry))
