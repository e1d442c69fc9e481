"""The densities ``_random_pdf_<dist>`` (alias ``random_pdf_<dist>``): the probability
density (mass) of ``sample`` under parameters given per leading element (``sample`` has
shape ``params.shape + extra``; Dirichlet: ``alpha.shape[:-1] + extra + (k,)``), or its
log with ``is_log``. Gradients flow to the sample (continuous distributions) and to the
parameters (summed over the extra axes), as in MXNet 1.9.1. Here ``gamma``'s ``beta`` is
the rate, as in MXNet's density (its sampler takes the scale).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params, assign

from ._common import ShapeError, fmt

__all__ = ["register", "DENSITIES"]


def _special(xp: Any) -> Any:
    """``scipy.special`` for numpy, ``cupyx.scipy.special`` for CuPy."""
    if xp is np:
        import scipy.special as sp
        return sp
    sim = getattr(xp, "__plexnet_cupyx__", None)  # plexnet's CuPy simulator brings its own
    if sim is not None:
        return sim.scipy.special
    import cupyx.scipy.special as sp  # type: ignore[import-not-found]
    return sp


_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


# Each density: (log-pdf, d/dsample or None, (d/dparam ...)), all functions of (xp, sp, x, *params).
def _normal(xp, sp, x, mu, s):  # type: ignore[no-untyped-def]
    z = (x - mu) / s
    return (-0.5 * z * z - xp.log(s) - _LOG_SQRT_2PI, -z / s, (z / s, (z * z - 1) / s))


def _uniform(xp, sp, x, lo, hi):  # type: ignore[no-untyped-def]
    w = hi - lo
    lp = -xp.log(w) + 0 * x
    return (lp, None, (1 / w + 0 * x, -1 / w + 0 * x))


def _gamma(xp, sp, x, a, b):  # type: ignore[no-untyped-def]
    lp = a * xp.log(b) + (a - 1) * xp.log(x) - b * x - sp.gammaln(a)
    return (lp, (a - 1) / x - b, (xp.log(b) + xp.log(x) - sp.digamma(a), a / b - x))


def _exponential(xp, sp, x, lam):  # type: ignore[no-untyped-def]
    return (xp.log(lam) - lam * x, -lam + 0 * x, (1 / lam - x,))


def _poisson(xp, sp, x, lam):  # type: ignore[no-untyped-def]
    return (x * xp.log(lam) - lam - sp.gammaln(x + 1), None, (x / lam - 1,))


def _nb_parts(xp, sp, x, k, p):  # type: ignore[no-untyped-def]
    lp = sp.gammaln(x + k) - sp.gammaln(x + 1) - sp.gammaln(k) + k * xp.log(p) + x * xp.log1p(-p)
    return lp, sp.digamma(x + k) - sp.digamma(k) + xp.log(p), k / p - x / (1 - p)


def _negative_binomial(xp, sp, x, k, p):  # type: ignore[no-untyped-def]
    lp, dk, dp = _nb_parts(xp, sp, x, k, p)
    return (lp, None, (dk, dp))


def _gnb(xp, sp, x, mu, alpha):  # type: ignore[no-untyped-def]
    k, p = 1 / alpha, 1 / (1 + alpha * mu)
    lp, dk, dp = _nb_parts(xp, sp, x, k, p)
    d2 = (1 + alpha * mu) ** 2
    return (lp, None, (dp * (-alpha / d2), dk * (-1 / alpha ** 2) + dp * (-mu / d2)))


def _dirichlet(xp, sp, x, a):  # type: ignore[no-untyped-def]
    lx = xp.log(x)
    lp = sp.gammaln(a.sum(-1)) - sp.gammaln(a).sum(-1) + ((a - 1) * lx).sum(-1)
    da = sp.digamma(a.sum(-1, keepdims=True)) - sp.digamma(a) + lx
    return (lp, (a - 1) / x, (da,))


#: name -> (parameter names, density, continuous sample)
DENSITIES: dict[str, tuple[tuple[str, ...], Callable[..., Any]]] = {
    "normal": (("mu", "sigma"), _normal),
    "uniform": (("low", "high"), _uniform),
    "gamma": (("alpha", "beta"), _gamma),
    "exponential": (("lam",), _exponential),
    "poisson": (("lam",), _poisson),
    "negative_binomial": (("k", "p"), _negative_binomial),
    "generalized_negative_binomial": (("mu", "alpha"), _gnb),
    "dirichlet": (("alpha",), _dirichlet),
}


class PdfParam(Params):
    is_log = Field(bool, default=False, doc="return the log density")


def _pdf_prop(dist: str, names: tuple[str, ...], fn: Callable[..., Any]) -> type[OperatorProperty]:
    vector = dist == "dirichlet"

    class PdfProp(OperatorProperty):
        __doc__ = (f"Density of ``sample`` under the {dist.replace('_', ' ')} distribution with parameters "
                   f"{', '.join(names)} (``is_log``: its logarithm), with gradients.")
        param_cls = PdfParam

        def list_arguments(self):  # type: ignore[no-untyped-def]
            return ["sample", *names]

        def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
            s, ps = in_shape[0], in_shape[1:]
            known = [p for p in ps if p is not None]
            args = self.list_arguments()
            if s is None or not known:
                return list(in_shape), [None if s is None else (tuple(s[:-1]) if vector else tuple(s))], []
            p = tuple(known[0])
            if any(tuple(q) != p for q in known):
                raise ShapeError(f"{self.op_name}: the parameters must all have the same shape "
                                 f"(input shapes: {fmt(args, in_shape)})")
            s = tuple(s)
            lead = p[:-1] if vector else p
            ok = len(s) >= len(p) and s[:len(lead)] == lead and (not vector or s[-1] == p[-1])
            if not ok:
                raise ShapeError(f"{self.op_name}: the shape of 'sample' must start with the parameters' shape "
                                 f"{lead}{' and end with ' + str(p[-1]) if vector else ''} "
                                 f"(input shapes: {fmt(args, in_shape)})")
            return [s] + [p] * len(ps), [s[:-1] if vector else s], []

        def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
            return list(out_grad) + list(in_data) + list(out_data)

    return PdfProp


class PdfOp(Operator):
    def __init__(self, prop: OperatorProperty, fn: Callable[..., Any], vector: bool) -> None:
        self.prop, self.fn, self.vector = prop, fn, vector

    def _expand(self, x: Any, params: list[Any]) -> list[Any]:
        """Parameters reshaped to broadcast over the sample's extra axes."""
        if self.vector:  # alpha (..., k) against sample (..., extra..., k)
            extra = x.ndim - params[0].ndim
            return [p.reshape(p.shape[:-1] + (1,) * extra + p.shape[-1:]) for p in params]
        return [p.reshape(p.shape + (1,) * (x.ndim - p.ndim)) for p in params]

    def _eval(self, xp: Any, in_data: Any) -> tuple[Any, Any, Any]:
        # in the input's precision (float16 computes in float32), as MXNet's kernels do
        dt = np.result_type(in_data[0].dtype, np.float32)
        x = in_data[0].astype(dt, copy=False)
        params = [p.astype(dt, copy=False) for p in in_data[1:]]
        return self.fn(xp, _special(xp), x, *self._expand(x, params))

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        lp = self._eval(ctx.xp, in_data)[0]
        val = lp if self.prop.param.is_log else ctx.xp.exp(lp)
        assign(out_data[0], req[0], val.astype(out_data[0].dtype))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        xp = ctx.xp
        lp, dx, dps = self._eval(xp, in_data)
        g = out_grad[0]
        scale = g if self.prop.param.is_log else g * xp.exp(lp)
        if self.vector:
            scale = scale[..., None]
        if req[0] != OpReqType.null:
            v = xp.zeros(in_data[0].shape) if dx is None else scale * dx
            assign(in_grad[0], req[0], v.astype(in_grad[0].dtype))
        for k, (dp, r) in enumerate(zip(dps, req[1:])):
            if r == OpReqType.null:
                continue
            p = in_data[k + 1]
            full = scale * dp
            if self.vector:
                axes = tuple(range(p.ndim - 1, full.ndim - 1))
            else:
                axes = tuple(range(p.ndim, full.ndim))
            assign(in_grad[k + 1], r, full.sum(axis=axes).reshape(p.shape).astype(in_grad[k + 1].dtype))


def register(registry: Any) -> None:
    for dist, (names, fn) in DENSITIES.items():
        op = f"_random_pdf_{dist}"
        registry.register_property(op, _pdf_prop(dist, names, fn), aliases=(f"random_pdf_{dist}",))
        vector = dist == "dirichlet"
        registry.register_impl(op, "*", lambda prop, ctx, fn=fn, vector=vector: PdfOp(prop, fn, vector),
                               impl_name="xp")
