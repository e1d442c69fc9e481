"""Binary elementwise operators as SimpleOps: ``broadcast_*`` (numpy broadcasting,
what MXNet 1.x's NDArray ``a + b`` calls) and the equal-shape ``elemwise_*`` / ``_maximum``
family (``_plus``, ``_Plus``, ... are aliases).

One line of ``BINARY`` gives both variants of an operator. The forward is an ``xp``
ufunc name (``req=write`` is one ufunc call with ``out=ret``) or ``f(xp, lhs, rhs, out)``.
The gradient is ``(kind, dl, dr)`` with ``dl(xp, g)`` / ``dl(xp, g, lhs, rhs)`` giving the
unreduced gradient of each side; it is summed back over broadcast axes to the input's
shape. Comparisons and logical operators give 0/1 in the input dtype (MXNet) and a zero
gradient.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from plexnet.operator.shape_utils import broadcast_shape
from plexnet.operator.simple_op import SimpleOp, SimpleOpInplaceOption as IO

from ._common import ADD, fill_zero, int_factor, positive_zeros, power_f32, store, sum_to

__all__ = ["BINARY", "binary_ufunc_forward", "make_binary_gradient", "register"]


def binary_ufunc_forward(name: str) -> Callable[..., None]:
    def forward(lhs: Any, rhs: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
        if req == ADD:
            xp = ctx.xp
            xp.add(ret, getattr(xp, name)(lhs, rhs), out=ret, casting="unsafe")
        elif req:
            getattr(ctx.xp, name)(lhs, rhs, out=ret, casting="unsafe")
    forward.__name__ = f"{name}_forward"
    return forward


def binary_compute_forward(fn: Callable[..., Any], name: str) -> Callable[..., None]:
    def forward(lhs: Any, rhs: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
        if not req:
            return
        xp = ctx.xp
        if req == ADD:
            xp.add(ret, fn(xp, lhs, rhs, None), out=ret, casting="unsafe")
        else:
            r = fn(xp, lhs, rhs, ret)
            if r is not ret:
                xp.copyto(ret, r, casting="unsafe")
    forward.__name__ = f"{name}_forward"
    return forward


def make_binary_gradient(kind: str, dl: Any, dr: Any) -> Callable[..., None]:
    # rhs first: with kInplaceOutLhs the lhs gradient may share out_grad's memory
    if dl is None:
        def grad0(out_grad: Any, env: Any, lg: Any, rg: Any, req_l: Any, req_r: Any, ctx: Any) -> None:
            fill_zero(rg, req_r)
            fill_zero(lg, req_l)
        return grad0
    if kind == "out_grad":
        def grad_og(out_grad: Any, env: Any, lg: Any, rg: Any, req_l: Any, req_r: Any, ctx: Any) -> None:
            xp = ctx.xp
            if req_r:
                store(xp, rg, req_r, sum_to(xp, dr(xp, out_grad), rg.shape))
            if req_l:
                store(xp, lg, req_l, sum_to(xp, dl(xp, out_grad), lg.shape))
        return grad_og

    def grad_in(out_grad: Any, lhs: Any, rhs: Any, env: Any, lg: Any, rg: Any, req_l: Any, req_r: Any,
                ctx: Any) -> None:
        xp = ctx.xp
        if out_grad.dtype.kind in "iu":  # the factors in the integer dtype, as MXNet (gradients are linear in g)
            one = xp.ones(1)
            fl = lambda xp, g, l, r: g * int_factor(xp, dl(xp, one, l, r), g.dtype)  # noqa: E731
            fr = lambda xp, g, l, r: g * int_factor(xp, dr(xp, one, l, r), g.dtype)  # noqa: E731
        else:
            fl, fr = dl, dr
        if req_r:
            store(xp, rg, req_r, sum_to(xp, fr(xp, out_grad, lhs, rhs), rg.shape))
        if req_l:
            store(xp, lg, req_l, sum_to(xp, fl(xp, out_grad, lhs, rhs), lg.shape))
    return grad_in


def _quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*a: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(*a)
    return wrapped


@_quiet
def _mod(xp: Any, lhs: Any, rhs: Any, out: Any) -> Any:
    # Python-style modulo (sign of the divisor) as MXNet; x mod 0 is 0
    zero = rhs == 0  # before ``out`` (which may share memory with an input) is written
    nonneg = lhs >= 0 if lhs.dtype.kind == "f" else None
    r = xp.mod(lhs, rhs, out=out, casting="unsafe") if out is not None else xp.mod(lhs, rhs)
    xp.copyto(r, 0, where=zero)
    return positive_zeros(xp, r, nonneg) if nonneg is not None else r


@_quiet
def _power(xp: Any, lhs: Any, rhs: Any, out: Any) -> Any:
    # integers as MXNet: through floating point, then cast (7 ** -2 = 0, no ValueError)
    if lhs.dtype.kind in "iu" and rhs.dtype.kind in "iu":
        r = xp.power(lhs.astype(np.float64), rhs)
        if out is None:
            return r.astype(lhs.dtype)
        xp.copyto(out, r, casting="unsafe")
        return out
    r = power_f32(xp, lhs, rhs, out)
    if r is not None:
        return r
    return xp.power(lhs, rhs, out=out, casting="unsafe") if out is not None else xp.power(lhs, rhs)


def _mod_lgrad(xp: Any, g: Any, lhs: Any, rhs: Any) -> Any:
    # MXNet's mod_grad is 0 for integer types (only float/double/half give 1)
    return xp.zeros_like(g) if lhs.dtype.kind in "iu" else g


@_quiet
def _mod_rgrad(xp: Any, g: Any, lhs: Any, rhs: Any) -> Any:
    if lhs.dtype.kind in "iu":  # MXNet's mod_rgrad is 0 for integer types
        return xp.zeros_like(g)
    return -g * xp.floor(lhs / rhs)


def _fpow(xp: Any, a: Any, b: Any) -> Any:
    return xp.power(a.astype(np.float64) if a.dtype.kind in "iub" else a, b)


@_quiet
def _power_lgrad(xp: Any, g: Any, lhs: Any, rhs: Any) -> Any:
    return g * rhs * _fpow(xp, lhs, rhs - 1)


@_quiet
def _power_rgrad(xp: Any, g: Any, lhs: Any, rhs: Any) -> Any:
    return g * _fpow(xp, lhs, rhs) * xp.log(lhs)


def _hypot_grad(side: int) -> Callable[..., Any]:
    def d(xp: Any, g: Any, lhs: Any, rhs: Any) -> Any:
        return g * (lhs if side == 0 else rhs) / xp.hypot(lhs, rhs)
    return d


ZERO = ("out_grad", None, None)
OG, IN = "out_grad", "in_data"


def _ident(xp: Any, g: Any) -> Any:
    return g


def _neg(xp: Any, g: Any) -> Any:
    return -g


#: broadcast name, elemwise name, forward, gradient, broadcast aliases, elemwise aliases, doc
BINARY: list[tuple[str, str, Any, tuple, tuple[str, ...], tuple[str, ...], str]] = [
    ("broadcast_add", "elemwise_add", "add", (OG, _ident, _ident),
     ("broadcast_plus",), ("_plus", "_Plus", "_add"), "lhs + rhs"),
    ("broadcast_sub", "elemwise_sub", "subtract", (OG, _ident, _neg),
     ("broadcast_minus",), ("_minus", "_Minus", "_sub"), "lhs - rhs"),
    ("broadcast_mul", "elemwise_mul", "multiply",
     (IN, lambda xp, g, l, r: g * r, lambda xp, g, l, r: g * l), (), ("_mul", "_Mul"), "lhs * rhs"),
    ("broadcast_div", "elemwise_div", "true_divide",
     (IN, lambda xp, g, l, r: g / r, lambda xp, g, l, r: -g * l / (r * r)), (), ("_div", "_Div"),
     "lhs / rhs (integer types truncate toward zero, as MXNet)"),
    ("broadcast_mod", "_mod", _mod, (IN, _mod_lgrad, _mod_rgrad), (), ("_Mod",),
     "lhs mod rhs with the sign of rhs; x mod 0 = 0"),
    ("broadcast_power", "_power", _power,
     (IN, _power_lgrad, _power_rgrad), (), ("_Power",), "lhs ** rhs"),
    ("broadcast_maximum", "_maximum", "maximum",
     (IN, lambda xp, g, l, r: g * (l >= r), lambda xp, g, l, r: g * (l < r)), (), ("_Maximum",),
     "elementwise maximum"),
    ("broadcast_minimum", "_minimum", "minimum",
     (IN, lambda xp, g, l, r: g * (l <= r), lambda xp, g, l, r: g * (l > r)), (), ("_Minimum",),
     "elementwise minimum"),
    ("broadcast_hypot", "_hypot", "hypot", (IN, _hypot_grad(0), _hypot_grad(1)), (), ("_Hypot",),
     "sqrt(lhs**2 + rhs**2)"),
    ("broadcast_equal", "_equal", "equal", ZERO, (), (), "1 where lhs == rhs else 0"),
    ("broadcast_not_equal", "_not_equal", "not_equal", ZERO, (), (), "1 where lhs != rhs else 0"),
    ("broadcast_greater", "_greater", "greater", ZERO, (), (), "1 where lhs > rhs else 0"),
    ("broadcast_greater_equal", "_greater_equal", "greater_equal", ZERO, (), (), "1 where lhs >= rhs else 0"),
    ("broadcast_lesser", "_lesser", "less", ZERO, (), (), "1 where lhs < rhs else 0"),
    ("broadcast_lesser_equal", "_lesser_equal", "less_equal", ZERO, (), (), "1 where lhs <= rhs else 0"),
    ("broadcast_logical_and", "_logical_and", "logical_and", ZERO, (), (), "1 where both are non-zero"),
    ("broadcast_logical_or", "_logical_or", "logical_or", ZERO, (), (), "1 where either is non-zero"),
    ("broadcast_logical_xor", "_logical_xor", "logical_xor", ZERO, (), (), "1 where exactly one is non-zero"),
]


def _broadcast_shape_fn(name: str) -> Callable[..., tuple]:
    def shape(lhs: tuple, rhs: tuple, env: Any) -> tuple:
        return broadcast_shape(lhs, rhs, name)
    return shape


def build(name: str, fwd: Any, grad: tuple, aliases: tuple[str, ...], doc: str, broadcast: bool) -> SimpleOp:
    forward = binary_ufunc_forward(fwd) if isinstance(fwd, str) else binary_compute_forward(fwd, name)
    kind, dl, dr = grad
    op = SimpleOp(name, 2).set_aliases(*aliases).describe(doc)
    if broadcast:
        op.set_function(forward, IO.kNoInplace).set_shape_function(_broadcast_shape_fn(name))
        op.set_gradient(make_binary_gradient(kind, dl, dr), IO.kNoInplace, kind=kind)
    else:
        op.set_function(forward, IO.kInplaceLhsOut)
        op.set_gradient(make_binary_gradient(kind, dl, dr), IO.kInplaceOutLhs, kind=kind)
    return op


def register(registry: Any) -> None:
    for bname, ename, fwd, grad, baliases, ealiases, doc in BINARY:
        build(bname, fwd, grad, baliases, doc + " (numpy broadcasting)", True).register(registry)
        build(ename, fwd, grad, ealiases, doc + " (shapes must be equal)", False).register(registry)
    # the executor's gradient accumulation (MXNet's _grad_add)
    fwd, grad = BINARY[0][2], BINARY[0][3]
    build("_grad_add", fwd, grad, (), "lhs + rhs (gradient accumulation)", False).register(registry)
    # MXNet's backward-shape helper: lhs's values with rhs's shape/dtype constraints, rhs gets no gradient
    build("_identity_with_attr_like_rhs", lambda xp, lhs, rhs, out: lhs,
          ("out_grad", lambda xp, g: g, lambda xp, g: xp.zeros_like(g)), (),
          "lhs, constrained to rhs's shape and dtype (rhs's gradient is zero)", False).register(registry)
