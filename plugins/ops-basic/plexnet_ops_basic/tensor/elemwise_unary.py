"""Unary elementwise operators as SimpleOps (MXNet's ``elemwise_unary_op``).

Each operator is one line of ``UNARY``: name, forward, gradient, aliases. A forward is
either the name of an ``xp`` ufunc (the NDArray fast path: ``req=write`` is one ufunc call
with ``out=ret``) or ``f(xp, x, out)`` that returns the result (writing into ``out`` when
it is given; ``out`` may be ``x`` itself). A gradient is ``(kind, d)``: ``kind`` is what
the gradient needs besides the head gradient (``"out_grad"``, ``"out_value"``,
``"in_data"``) and ``d(xp, v)`` the derivative factor, so ``in_grad = out_grad * d(v)``;
``ZERO`` is a zero gradient and ``IDENT`` passes the head gradient through.
"""
from __future__ import annotations

import math

import numpy as np
from typing import Any, Callable

from plexnet.operator.simple_op import SimpleOp, SimpleOpInplaceOption as IO

from ._common import ADD, fill_zero, int_factor, need_special, special, store

ZERO = ("out_grad", None)
IDENT = ("out_grad", "ident")

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)
#: MXNet's constant in its float32 gradients (``PI`` is a float there)
_2_SQRTPI_F32 = 2.0 / float(np.sqrt(np.float32(math.pi)))


#: float32 ufuncs that numpy's SIMD loops evaluate up to a few ulp away from the C
#: library's ``expf``, ``logf``, ... (what MXNet's CPU kernels call): numpy computes them
#: in float64 here and rounds once, which matches MXNet 1.9.1 bit for bit in 78-99.9 % of
#: elements against 56-93 % (exp: 99.94 % against 61 %; docs/porting.md, "float32
#: transcendental functions"). 2-4x numpy's float32 time (sin / cos 20x), still below
#: MXNet's own (exp of 1M elements: 1.2 ms against 5.1). log1p, sinh and the inverse
#: hyperbolic functions gain nothing and stay float32.
LIBM_F32 = frozenset({"exp", "expm1", "log", "log2", "log10", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
                      "cosh", "tanh", "cbrt"})


def libm(xp: Any, name: str, x: Any, out: Any = None) -> Any:
    """``xp.NAME(x, out=out)``; for a float32 numpy ``x`` and a ``LIBM_F32`` name,
    evaluated in float64 and rounded to float32 (a float32 result when ``out`` is None)."""
    f = getattr(xp, name)
    if xp is np and name in LIBM_F32 and getattr(x, "dtype", None) == np.float32:
        if out is None:
            return f(x, dtype=np.float64).astype(np.float32)
        return f(x, out=out, dtype=np.float64, casting="unsafe")
    return f(x) if out is None else f(x, out=out, casting="unsafe")


# -- forward builders -----------------------------------------------------------------------------------

def ufunc_forward(name: str) -> Callable[..., None]:
    """``ret = xp.NAME(src)`` honouring ``req``; ``write`` is one call with ``out=ret``
    (float32 ``LIBM_F32`` functions through ``libm``)."""
    if name in LIBM_F32:
        def forward(src: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
            if req == ADD:
                xp = ctx.xp
                xp.add(ret, libm(xp, name, src), out=ret, casting="unsafe")
            elif req:
                libm(ctx.xp, name, src, ret)
    else:
        def forward(src: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
            if req == ADD:
                xp = ctx.xp
                xp.add(ret, getattr(xp, name)(src), out=ret, casting="unsafe")
            elif req:
                getattr(ctx.xp, name)(src, out=ret, casting="unsafe")
    forward.__name__ = f"{name}_forward"
    return forward


def compute_forward(fn: Callable[..., Any], name: str) -> Callable[..., None]:
    def forward(src: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
        if not req:
            return
        xp = ctx.xp
        if req == ADD:
            xp.add(ret, fn(xp, src, None), out=ret, casting="unsafe")
        elif ret.dtype == src.dtype and ret.dtype.kind == "f":
            r = fn(xp, src, ret)
            if r is not ret:
                xp.copyto(ret, r, casting="unsafe")
        else:
            xp.copyto(ret, fn(xp, src, None), casting="unsafe")
    forward.__name__ = f"{name}_forward"
    return forward


def make_gradient(kind: str, d: Any, name: str) -> Callable[..., None]:
    if d is None:  # zero gradient
        def grad0(out_grad: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
            fill_zero(in_grad, req)
        return grad0
    if d == "ident":
        def grad_ident(out_grad: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
            store(ctx.xp, in_grad, req, out_grad)
        return grad_ident
    if kind == "out_grad":
        def grad_og(out_grad: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
            if req:
                xp = ctx.xp
                if in_grad.dtype.kind in "iu":  # the factor in the integer dtype, as MXNet
                    store(xp, in_grad, req, out_grad * int_factor(xp, d(xp, xp.ones(1)), in_grad.dtype))
                else:
                    store(xp, in_grad, req, d(xp, out_grad))
        return grad_og

    def grad(out_grad: Any, v: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
        if not req:
            return
        xp = ctx.xp
        f = int_factor(xp, d(xp, v), in_grad.dtype)
        if req == ADD:
            xp.add(in_grad, out_grad * f, out=in_grad, casting="unsafe")
        else:
            xp.multiply(out_grad, f, out=in_grad, casting="unsafe")
    grad.__name__ = f"{name}_backward"
    return grad


# -- forwards that are not a single ufunc --------------------------------------------------------------------

def _rsqrt(xp: Any, x: Any, out: Any) -> Any:
    r = xp.sqrt(x, out=out)
    return xp.reciprocal(r, out=r)


def _relu(xp: Any, x: Any, out: Any) -> Any:
    return xp.maximum(x, 0, out=out)


def _sigmoid(xp: Any, x: Any, out: Any) -> Any:
    # MXNet's 1 / (1 + exp(-x)) in x's dtype, its rounding steps included (exp(-x) is inf
    # below -88 in float32: 0, as MXNet)
    with np.errstate(over="ignore", under="ignore"):
        e = libm(xp, "exp", xp.negative(x))
    e += 1
    return xp.reciprocal(e, out=out)


def _softsign(xp: Any, x: Any, out: Any) -> Any:
    den = xp.abs(x)
    den += 1
    return xp.divide(x, den, out=out)


def _round(xp: Any, x: Any, out: Any) -> Any:
    # MXNet rounds half away from zero (C ``round``); numpy's round is half-to-even
    t = xp.trunc(x)
    half = xp.abs(x - t) >= 0.5
    s = xp.sign(x)
    return xp.add(t, s * half, out=out, casting="unsafe")


def _rint(xp: Any, x: Any, out: Any) -> Any:
    # MXNet's rint: floor(x), or ceil(x) when x is strictly nearer to it (n.5 -> n)
    fl = xp.floor(x)
    up = (x - fl) > 0.5
    return xp.add(fl, up, out=out, casting="unsafe")


def _erf_approx(xp: Any, x: Any) -> Any:
    # Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7), used only without scipy / cupyx
    s = xp.sign(x)
    a = xp.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * xp.exp(-a * a)
    return s * y


def _erf(xp: Any, x: Any, out: Any) -> Any:
    fn = special(xp, "erf")
    if fn is not None:
        return fn(x, out=out) if out is not None else fn(x)
    return _erf_approx(xp, x).astype(x.dtype, copy=False)


def _erf_grad(xp: Any, x: Any) -> Any:
    # MXNet: DType(2.0 / sqrtf(float(pi)) * expf(-x * x)), the product in double
    e = libm(xp, "exp", -x * x)
    if x.dtype.kind != "f" or x.dtype == xp.float64:
        return _2_SQRTPI * e
    return (_2_SQRTPI_F32 * e.astype(xp.float64)).astype(x.dtype)


def _need_special(name: str, op: str) -> Callable[..., Any]:
    def f(xp: Any, x: Any, out: Any = None) -> Any:
        fn = need_special(op, xp, name)
        return fn(x, out=out) if out is not None else fn(x)
    return f


_gamma, _gammaln = _need_special("gamma", "gamma"), _need_special("gammaln", "gammaln")
def _erfinv(xp: Any, x: Any, out: Any = None) -> Any:
    fn = special(xp, "erfinv")
    if fn is not None:
        return fn(x, out=out) if out is not None else fn(x)
    # without scipy/cupyx.erfinv: Giles' approximation, then Newton steps on erf
    with np.errstate(all="ignore"):
        return _erfinv_newton(xp, x, out)


def _erfinv_newton(xp: Any, x: Any, out: Any) -> Any:
    w = -xp.log((1.0 - x) * (1.0 + x))
    small = w < 5.0
    ws, wl = w - 2.5, xp.sqrt(w) - 3.0
    ps = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
              0.246640727, 1.50140941):
        ps = ps * ws + c
    pl = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
              1.00167406, 2.83297682):
        pl = pl * wl + c
    y = xp.where(small, ps, pl) * x
    for _ in range(3):
        y = y - (_erf(xp, y, None) - x) / (_2_SQRTPI * xp.exp(-y * y))
    y = xp.where(xp.abs(x) >= 1, xp.sign(x) * xp.inf, y)
    if out is None:
        return y.astype(x.dtype, copy=False)
    xp.copyto(out, y, casting="unsafe")
    return out
_SQRTPI_2 = math.sqrt(math.pi) / 2


def _logical_not(xp: Any, x: Any, out: Any) -> Any:
    return xp.logical_not(x, out=out, casting="unsafe") if out is not None else xp.logical_not(x).astype(x.dtype)


def _digamma_as_mxnet(op: str) -> Callable[..., Any]:
    """digamma with MXNet's value at the poles: ``+inf`` at 0 and the negative integers
    (scipy's is -inf at 0 and nan at -1, -2, ...), so the gradients of ``gammaln`` and
    ``gamma`` there are MXNet's."""
    f = _need_special("digamma", op)

    def digamma(xp: Any, x: Any, out: Any = None) -> Any:
        r = f(xp, x, out)
        pole = (x <= 0) & (x == xp.floor(x))
        if pole.any():
            r[pole] = xp.inf
        return r
    return digamma


_digamma_of_gamma, _digamma_of_gammaln = _digamma_as_mxnet("gamma"), _digamma_as_mxnet("gammaln")


def _zeros(xp: Any, x: Any, out: Any) -> Any:
    if out is None:
        return xp.zeros_like(x)
    out[...] = 0
    return out


def _ones(xp: Any, x: Any, out: Any) -> Any:
    if out is None:
        return xp.ones_like(x)
    out[...] = 1
    return out


def _copy(xp: Any, x: Any, out: Any) -> Any:
    if out is None:
        return x
    if out is not x:
        xp.copyto(out, x, casting="unsafe")
    return out


# -- the table ---------------------------------------------------------------------------------------------

OUT_VALUE, IN_DATA = "out_value", "in_data"

#: name, forward (ufunc name or callable), (gradient kind, derivative), aliases, description
UNARY: list[tuple[str, Any, tuple, tuple[str, ...], str]] = [
    ("abs", "absolute", (IN_DATA, lambda xp, x: xp.sign(x)), (), "|x|"),
    ("sign", "sign", ZERO, (), "sign of x (-1, 0, 1)"),
    ("negative", "negative", ("out_grad", lambda xp, g: -g), (), "-x"),
    ("reciprocal", "reciprocal", (IN_DATA, lambda xp, x: -1.0 / (x * x)), (), "1/x"),
    ("square", "square", (IN_DATA, lambda xp, x: 2 * x), (), "x**2"),
    ("sqrt", "sqrt", (OUT_VALUE, lambda xp, y: 0.5 / y), (), "sqrt(x)"),
    ("rsqrt", _rsqrt, (IN_DATA, lambda xp, x: -0.5 / (x * xp.sqrt(x))), (), "1/sqrt(x)"),
    ("cbrt", "cbrt", (OUT_VALUE, lambda xp, y: 1.0 / (3 * y * y)), (), "cube root of x"),
    ("rcbrt", lambda xp, x, out: xp.reciprocal(libm(xp, "cbrt", x), out=out),
     (IN_DATA, lambda xp, x: -1.0 / (3 * x * libm(xp, "cbrt", x))), (), "1/cbrt(x)"),
    ("exp", "exp", (OUT_VALUE, lambda xp, y: y), (), "e**x"),
    ("expm1", "expm1", (IN_DATA, lambda xp, x: libm(xp, "exp", x)), (), "e**x - 1"),
    ("log", "log", (IN_DATA, lambda xp, x: 1.0 / x), (), "natural logarithm"),
    ("log1p", "log1p", (IN_DATA, lambda xp, x: 1.0 / (1 + x)), (), "log(1 + x)"),
    ("log2", "log2", (IN_DATA, lambda xp, x: 1.0 / (x * _LN2)), (), "base-2 logarithm"),
    ("log10", "log10", (IN_DATA, lambda xp, x: 1.0 / (x * _LN10)), (), "base-10 logarithm"),
    ("sin", "sin", (IN_DATA, lambda xp, x: libm(xp, "cos", x)), (), "sine"),
    ("cos", "cos", (IN_DATA, lambda xp, x: -libm(xp, "sin", x)), (), "cosine"),
    ("tan", "tan", (OUT_VALUE, lambda xp, y: 1 + y * y), (), "tangent"),
    ("arcsin", "arcsin", (IN_DATA, lambda xp, x: 1.0 / xp.sqrt(1 - x * x)), (), "inverse sine"),
    ("arccos", "arccos", (IN_DATA, lambda xp, x: -1.0 / xp.sqrt(1 - x * x)), (), "inverse cosine"),
    ("arctan", "arctan", (IN_DATA, lambda xp, x: 1.0 / (1 + x * x)), (), "inverse tangent"),
    ("sinh", "sinh", (IN_DATA, lambda xp, x: libm(xp, "cosh", x)), (), "hyperbolic sine"),
    ("cosh", "cosh", (IN_DATA, lambda xp, x: libm(xp, "sinh", x)), (), "hyperbolic cosine"),
    ("tanh", "tanh", (OUT_VALUE, lambda xp, y: 1 - y * y), (), "hyperbolic tangent"),
    ("arcsinh", "arcsinh", (IN_DATA, lambda xp, x: 1.0 / xp.sqrt(x * x + 1)), (), "inverse hyperbolic sine"),
    ("arccosh", "arccosh", (IN_DATA, lambda xp, x: 1.0 / xp.sqrt(x * x - 1)), (), "inverse hyperbolic cosine"),
    ("arctanh", "arctanh", (IN_DATA, lambda xp, x: 1.0 / (1 - x * x)), (), "inverse hyperbolic tangent"),
    ("degrees", "degrees", ("out_grad", lambda xp, g: g * (180.0 / math.pi)), (), "radians to degrees"),
    ("radians", "radians", ("out_grad", lambda xp, g: g * (math.pi / 180.0)), (), "degrees to radians"),
    ("floor", "floor", ZERO, (), "round toward -inf"),
    ("ceil", "ceil", ZERO, (), "round toward +inf"),
    ("round", _round, ZERO, (), "round to nearest, halves away from zero (MXNet/C round)"),
    ("rint", _rint, ZERO, (), "round to nearest, halves toward -inf (MXNet's rint: 1.5 -> 1, -1.5 -> -2)"),
    ("trunc", "trunc", ZERO, (), "round toward zero"),
    ("fix", "trunc", ZERO, (), "round toward zero"),
    # MXNet's relu_grad passes NaN through (IsNan(a) ? a : a > 0)
    ("relu", _relu, (OUT_VALUE, lambda xp, y: xp.where(xp.isnan(y), y, y > 0)), (), "max(x, 0)"),
    ("sigmoid", _sigmoid, (OUT_VALUE, lambda xp, y: y * (1 - y)), (), "1 / (1 + exp(-x))"),
    ("softsign", _softsign, (IN_DATA, lambda xp, x: 1.0 / xp.square(1 + xp.abs(x))), (), "x / (1 + |x|)"),
    ("erf", _erf, (IN_DATA, _erf_grad), (), "Gauss error function"),
    ("erfinv", _erfinv, (OUT_VALUE, lambda xp, y: _SQRTPI_2 * xp.exp(y * y)), (),
     "inverse Gauss error function (needs scipy / cupyx)"),
    ("logical_not", _logical_not, ZERO, (), "1 where x is zero else 0 (in x's dtype)"),
    ("gamma", _gamma, (OUT_VALUE, None), (), "gamma function (needs scipy / cupyx)"),
    ("gammaln", _gammaln, (IN_DATA, lambda xp, x: _digamma_of_gammaln(xp, x)), (),
     "log of |gamma(x)| (needs scipy / cupyx)"),
    ("_copy", _copy, IDENT, ("identity",), "a copy of x"),
    ("BlockGrad", _copy, ZERO, ("stop_gradient",), "x in forward; blocks the gradient in backward"),
    ("make_loss", _copy, ("out_grad", lambda xp, g: xp.ones_like(g)), (),
     "x in forward; its gradient is 1 (the head gradient is ignored)"),
    ("zeros_like", _zeros, ZERO, (), "an array of zeros shaped like x"),
    ("ones_like", _ones, ZERO, (), "an array of ones shaped like x"),
]


def _gamma_grad(out_grad: Any, in_data: Any, env: Any, in_grad: Any, req: Any, ctx: Any) -> None:
    # d gamma(x) = gamma(x) * digamma(x); needs the input, so recompute gamma from it
    if req:
        xp = ctx.xp
        store(xp, in_grad, req, out_grad * _gamma(xp, in_data) * _digamma_of_gamma(xp, in_data))


def build(name: str, fwd: Any, grad: tuple, aliases: tuple[str, ...], doc: str) -> SimpleOp:
    forward = ufunc_forward(fwd) if isinstance(fwd, str) else compute_forward(fwd, name)
    op = SimpleOp(name, 1).set_function(forward, IO.kInplaceInOut).set_aliases(*aliases).describe(doc)
    kind, d = grad
    if name == "gamma":
        return op.set_gradient(_gamma_grad, IO.kInplaceOutIn, kind=IN_DATA)
    return op.set_gradient(make_gradient(kind, d, name), IO.kInplaceOutIn, kind=kind)


def register(registry: Any) -> None:
    for row in UNARY:
        prop = build(*row).register(registry)
        if row[0] == "make_loss":   # MXNet names its output "loss" (FListOutputNames)
            prop.list_outputs = lambda self: ["loss"]
