"""Reductions: sum (``sum_axis``), mean, max (``max_axis``), min (``min_axis``), prod,
nansum, nanprod, norm, argmax, argmin (MXNet's ``broadcast_reduce_op``).

``axis`` is an int, a tuple or None (None or ``()``: every axis); ``exclude=True`` reduces
over the axes *not* named. Without ``keepdims`` a full reduction has shape ``(1,)`` (MXNet
has no 0-d arrays). argmax/argmin return indices in the input's dtype, as MXNet does.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from plexnet.operator import Field, Params, Shape
from plexnet.util import is_np_shape

from ._common import (ADD, NULL, OneInputProp, XpOperator, fill_zero, norm_axes, norm_axis, prod, register_op,
                      shape_error, store)
from ._kahan import mxnet_norm, mxnet_sum

__all__ = ["register"]


class ReduceAxesParam(Params):
    axis = Field(Shape, default=None, optional=True, doc="axis or axes to reduce (None: all)")
    keepdims = Field(bool, default=False, doc="keep reduced axes with size 1")
    exclude = Field(bool, default=False, doc="reduce over the axes not in `axis`")


class NormParam(Params):
    ord = Field(int, default=2, choices=(1, 2), doc="order of the norm (1 or 2)")
    axis = Field(Shape, default=None, optional=True, doc="axis or axes (None: all)")
    out_dtype = Field("dtype", default=None, optional=True,
                      choices=("float16", "float32", "float64", "int32", "int64", "int8"),
                      doc="output dtype (default: the input's)")
    keepdims = Field(bool, default=False, doc="keep reduced axes with size 1")


class ReduceArgParam(Params):
    axis = Field(int, default=None, optional=True, doc="axis (None: the flattened array)")
    keepdims = Field(bool, default=False, doc="keep the reduced axis with size 1")


def reduce_axes(op: str, shape: tuple, axis: Any, exclude: bool = False) -> tuple[int, ...]:
    ndim = len(shape)
    if axis is None or len(axis) == 0:
        return tuple(range(ndim))
    axes = norm_axes(op, axis, ndim, "axis", shape)
    if exclude:
        return tuple(i for i in range(ndim) if i not in axes)
    return tuple(sorted(axes))


def reduced_shape(shape: tuple, axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    out = tuple(d for i, d in enumerate(shape) if i not in axes)
    return out if out else (1,)


# -- reducers and their gradients ------------------------------------------------------------------------------
# grad(xp, g_k, x, y_k, n) -> gradient broadcastable to x.shape; g_k and y_k have keepdims shape,
# n is the number of elements reduced into each output; x / y_k are None unless declared

def _g_sum(xp: Any, g: Any, x: Any, y: Any, n: int) -> Any:
    return g


def _g_mean(xp: Any, g: Any, x: Any, y: Any, n: int) -> Any:
    return g / max(n, 1)


def _g_extreme(xp: Any, g: Any, x: Any, y: Any, n: int) -> Any:
    return g * (x == y)  # every tied element gets the gradient (as MXNet)


def _g_prod(xp: Any, g: Any, x: Any, y: Any, n: int) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return g * (y / x)  # MXNet's formula: out / in (inf/nan where an input is 0)


def _g_nansum(xp: Any, g: Any, x: Any, y: Any, n: int) -> Any:
    return g * ~xp.isnan(x)


def _g_nanprod(xp: Any, g: Any, x: Any, y: Any, n: int) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where(xp.isnan(x), 0, g * (y / x))


#: name -> (xp function, gradient, backward needs (in, out)?, aliases, doc)
REDUCE: dict[str, tuple[str, Callable[..., Any], tuple[bool, bool], tuple[str, ...], str]] = {
    "sum": ("sum", _g_sum, (False, False), ("sum_axis",), "sum over axes"),
    "mean": ("mean", _g_mean, (False, False), (), "mean over axes"),
    "max": ("max", _g_extreme, (True, True), ("max_axis",), "maximum over axes"),
    "min": ("min", _g_extreme, (True, True), ("min_axis",), "minimum over axes"),
    "prod": ("prod", _g_prod, (True, True), (), "product over axes"),
    "nansum": ("nansum", _g_nansum, (True, False), (), "sum over axes treating NaN as 0"),
    "nanprod": ("nanprod", _g_nanprod, (True, True), (), "product over axes treating NaN as 1"),
}


def _no_identity_check(op: str, fn: str, s: tuple) -> None:
    # MXNet 1.9.1 (np_shape on, where 0 is a real size): min/max/argmax/argmin of a zero-size
    # array fail at the call, whatever the axes (sum/prod have an identity and work)
    if fn in ("max", "min", "argmax", "argmin") and 0 in s and is_np_shape():
        raise shape_error(op, f"cannot reduce a zero-size array of shape {s} (no identity)")


class ReduceProp(OneInputProp):
    param_cls = ReduceAxesParam
    fn: str = "sum"
    grad: Callable[..., Any] = staticmethod(_g_sum)
    needs: tuple[bool, bool] = (False, False)

    def axes_for(self, shape: tuple) -> tuple[int, ...]:
        return reduce_axes(self.op_name, shape, self.param.axis, self.param.exclude)

    def out_shape(self, s: tuple) -> tuple:
        _no_identity_check(self.op_name, self.fn, s)
        return reduced_shape(s, self.axes_for(s), self.param.keepdims)

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        need_in, need_out = self.needs
        return list(out_grad) + (list(in_data) if need_in else []) + (list(out_data) if need_out else [])


def _keep_view(out: Any, kshape: tuple) -> Any:
    """``out`` reshaped to the keepdims shape as a view (None when that needs a copy)."""
    if out.flags.c_contiguous:
        return out.reshape(kshape)
    return None


class ReduceOp(XpOperator):
    def ordered_sum(self, xp: Any, x: Any, axes: tuple[int, ...], mean: bool, skip_nan: bool = False) -> Any | None:
        """``sum`` / ``mean`` / ``nansum`` in MXNet's summation order where the numpy loop
        applies (``_kahan``); None: numpy's own sum (ops-numba overrides this for the rest)."""
        return mxnet_sum(xp, x, axes, mean, skip_nan)

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        r = req[0]
        if r == NULL:
            return
        xp, x, out = ctx.xp, in_data[0], out_data[0]
        prop = self.prop
        axes = prop.axes_for(x.shape)
        kshape = reduced_shape(x.shape, axes, True)
        if prop.fn in ("sum", "mean", "nansum"):
            v = self.ordered_sum(xp, x, axes, prop.fn == "mean", prop.fn == "nansum")
            if v is not None:
                store(xp, out, r, v.reshape(out.shape))
                return
        fn = getattr(xp, prop.fn)
        if r != ADD and out.dtype == x.dtype:
            view = _keep_view(out, kshape)
            if view is not None:
                fn(x, axis=axes, keepdims=True, out=view)
                return
        store(xp, out, r, fn(x, axis=axes, keepdims=True).reshape(out.shape))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if req[0] == NULL:
            return
        xp, gi, prop = ctx.xp, in_grad[0], self.prop
        axes = prop.axes_for(gi.shape)
        kshape = reduced_shape(gi.shape, axes, True)
        g = out_grad[0].reshape(kshape)
        x = in_data[0]
        y = out_data[0].reshape(kshape) if out_data[0] is not None else None
        n = prod(gi.shape[a] for a in axes)
        store(xp, gi, req[0], prop.grad(xp, g, x, y, n))


# -- norm ------------------------------------------------------------------------------------------------------

class NormProp(OneInputProp):
    param_cls = NormParam

    def axes_for(self, shape: tuple) -> tuple[int, ...]:
        return reduce_axes(self.op_name, shape, self.param.axis)

    def out_shape(self, s: tuple) -> tuple:
        return reduced_shape(s, self.axes_for(s), self.param.keepdims)

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        t = in_type[0]
        out = np.dtype(self.param.out_dtype) if self.param.out_dtype is not None else t
        return [t], [out], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return list(out_grad) + list(in_data) + (list(out_data) if self.param.ord == 2 else [])


def _int_l2(xp: Any, x: Any, axes: Any) -> Any:
    """MXNet's L2 norm of an integer array. Its reducer is the scaled ``nrm2`` (a running
    maximum ``scale``; ``ssq`` grows by ``(|x| / scale) ** 2``, restarts at 1 when the
    maximum grows), run in the integer type, where ``|x| / scale`` is 0 below the maximum:
    the norm is ``max|x| * sqrt(count of |x| == max|x|)``, truncated (``[3, 4]`` -> 4)."""
    a = xp.abs(x)
    m = xp.max(a, axis=axes, keepdims=True) if a.size else xp.zeros((1,) * a.ndim, a.dtype)
    count = xp.sum(a == m, axis=axes) if a.size else xp.zeros((), np.int64)
    m = m.reshape(count.shape)
    return (m.astype(np.float64) * xp.sqrt(count.astype(np.float64)) * (m != 0)).astype(x.dtype)


class NormOp(XpOperator):
    def ordered_norm(self, xp: Any, x: Any, axes: tuple[int, ...], order: int) -> Any | None:
        """The norm in MXNet's order where the numpy loop applies (``_kahan``); None:
        numpy's reductions (ops-numba overrides this for the rest)."""
        return mxnet_norm(xp, x, axes, order)

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] == NULL:
            return
        xp, x, out = ctx.xp, in_data[0], out_data[0]
        axes = self.prop.axes_for(x.shape)
        v = self.ordered_norm(xp, x, axes, self.param.ord)
        if v is not None:
            store(xp, out, req[0], v.reshape(out.shape))
            return
        if self.param.ord == 1:
            v = xp.sum(xp.abs(x), axis=axes)
        elif x.dtype.kind in "iu":
            v = _int_l2(xp, x, axes)
        else:
            v = xp.sqrt(xp.sum(xp.square(x), axis=axes))
        store(xp, out, req[0], v.reshape(out.shape))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if req[0] == NULL:
            return
        xp, x, gi = ctx.xp, in_data[0], in_grad[0]
        axes = self.prop.axes_for(x.shape)
        kshape = reduced_shape(x.shape, axes, True)
        g = out_grad[0].reshape(kshape)
        if self.param.ord == 1:
            d = g * xp.sign(x)
        else:
            y = out_data[0].reshape(kshape)
            with np.errstate(divide="ignore", invalid="ignore"):
                d = g * x / y   # as MXNet: NaN where the norm is 0 (0 / 0)
        store(xp, gi, req[0], d)


# -- argmax / argmin ---------------------------------------------------------------------------------------------

class ArgReduceProp(OneInputProp):
    param_cls = ReduceArgParam
    fn = "argmax"

    def out_shape(self, s: tuple) -> tuple:
        _no_identity_check(self.op_name, self.fn, s)
        p = self.param
        if p.axis is None:
            return (1,) * len(s) if p.keepdims and s else (1,)
        a = norm_axis(self.op_name, p.axis, len(s), "axis", s)
        return reduced_shape(s, (a,), p.keepdims)

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return []


class ArgReduceOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] == NULL:
            return
        xp, x, out = ctx.xp, in_data[0], out_data[0]
        fn = getattr(xp, self.prop.fn)
        if self.param.axis is None:
            v = fn(x.reshape(-1))
        else:
            v = fn(x, axis=self.param.axis % x.ndim)
        store(xp, out, req[0], xp.reshape(v, out.shape))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        fill_zero(in_grad[0], req[0])


def register(registry: Any) -> None:
    for name, (fn, grad, needs, aliases, doc) in REDUCE.items():
        prop = type(f"ReduceProp_{name}", (ReduceProp,),
                    {"fn": fn, "grad": staticmethod(grad), "needs": needs, "__doc__": doc})
        register_op(registry, name, prop, ReduceOp, aliases)
    register_op(registry, "norm", type("NormProp", (NormProp,), {"__doc__": "L1 or L2 norm over axes"}), NormOp)
    for name in ("argmax", "argmin"):
        prop = type(f"ArgReduceProp_{name}", (ArgReduceProp,),
                    {"fn": name, "__doc__": f"indices of the {name[3:]}imum along an axis, in the input dtype"})
        register_op(registry, name, prop, ArgReduceOp)
