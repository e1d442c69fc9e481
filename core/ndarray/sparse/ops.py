"""Operators on sparse arrays: storage-type rules and the sparse kernels.

``dispatch`` is what every ``nd.<op>`` function does when an argument is sparse: the
operator's sparse implementation when it has one for these storage types, else the
dense operator on dense copies of the sparse arguments (MXNet's "storage fallback"),
whose result is dense. The table of output storage types is docs/sparse.md's.
"""
from __future__ import annotations

import builtins
import numbers
import operator
from typing import Any, Callable

import numpy as np

from ...base import PlexnetError, ShapeError
from ...tape import STATE as _AG
from .. import ndarray as _nd
from ..ndarray import NDArray
from . import autograd as _sag, kernels as K
from .base import BaseSparseNDArray, CSRNDArray, RowSparseNDArray, host, new_csr, new_rsp, nd_from_host, plug
from .convert import cast_storage, zeros as _sp_zeros

__all__ = ["dispatch", "IMPLS", "ZERO_PRESERVING", "add", "subtract", "multiply", "divide", "retain", "dot",
           "zeros_like", "slice", "is_sparse"]

Impl = Callable[..., Any]
#: operator name -> implementation for sparse arguments; NotImplemented means "fall back"
IMPLS: dict[str, Impl] = {}

#: unary operators whose f(0) == 0: a csr/row_sparse input gives the same storage type
#: (MXNet 1.9.1's FInferStorageType; the others, e.g. exp, cos, sigmoid, give dense)
ZERO_PRESERVING = ("abs arcsin arcsinh arctan arctanh cbrt ceil degrees expm1 fix floor log1p negative radians "
                   "relu rint round sign sin sinh sqrt square tan tanh trunc make_loss MakeLoss stop_gradient "
                   "BlockGrad _copy identity _mul_scalar _div_scalar").split()


def is_sparse(a: Any) -> bool:
    return isinstance(a, BaseSparseNDArray)


def stype_of(a: Any) -> str:
    return a.stype if isinstance(a, NDArray) else "default"


def _dense(a: Any) -> Any:
    if isinstance(a, BaseSparseNDArray):  # (recording: the dense copy is linked to a variable's graph)
        return _sag.dense_input(a) if _AG.recording else a._dense()
    return a


def _place(res: NDArray, out: NDArray | None) -> NDArray:
    if out is None or out is res:
        return res
    out[:] = res
    return out


def fallback(fn: Impl, args: tuple, kwargs: dict[str, Any]) -> Any:
    """The dense operator on dense copies of the sparse arguments (a sparse ``out=``
    receives the result converted to its storage type)."""
    out = kwargs.pop("out", None)
    args = tuple(_dense(a) for a in args)
    kwargs = {k: _dense(v) for k, v in kwargs.items()}
    if out is None or not is_sparse(out):
        return fn(*args, **kwargs) if out is None else fn(*args, out=out, **kwargs)
    return _place(fn(*args, **kwargs), out)


def dispatch(name: str, fn: Impl, args: tuple, kwargs: dict[str, Any]) -> Any:
    """Run operator ``name`` (dense function ``fn``) on arguments some of which are sparse.

    While autograd records and an argument is in the graph, the result keeps its storage
    type and the gradient goes through the dense operator (``autograd.recorded``)."""
    impl = IMPLS.get(name)
    if _AG.recording and kwargs.get("out") is None and _sag.in_graph(args, kwargs):
        return _sag.recorded(name, fn, args, kwargs, impl)
    if impl is not None:
        res = impl(fn, *args, **kwargs)
        if res is not NotImplemented:
            return res
    return fallback(fn, args, dict(kwargs))


def _register(*names: str) -> Callable[[Impl], Impl]:
    def deco(f: Impl) -> Impl:
        for n in names:
            IMPLS[n] = f
        return f
    return deco


# -- unary: same storage type, f applied to the stored values (asynchronous) --------------------------------
def _unary_zero_preserving(fn: Impl, data: Any = None, *args: Any, out: Any = None, **kw: Any) -> Any:
    if not is_sparse(data) or any(is_sparse(a) for a in args):
        return NotImplemented
    return _place(data._same(fn(data.data, *args, **kw)), out)


for _n in ZERO_PRESERVING:
    IMPLS[_n] = _unary_zero_preserving


@_register("clip")
def _clip(fn: Impl, data: Any = None, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any) -> Any:
    if not is_sparse(data):
        return NotImplemented
    if not (float(a_min) <= 0.0 <= float(a_max)):
        raise PlexnetError(f"clip: storage type inference failed for a {data.stype} input: a_min={a_min}, "
                           f"a_max={a_max} do not keep zeros zero (MXNet: Operator not implemented: operator = "
                           f"clip); cast with tostype('default') first")
    return _place(data._same(fn(data.data, a_min=a_min, a_max=a_max, **kw)), out)


@_register("zeros_like")
def _zeros_like(fn: Impl, data: Any = None, out: Any = None, **kw: Any) -> Any:
    if not is_sparse(data):
        return NotImplemented
    return _place(_sp_zeros(data.stype, data.shape, ctx=data.context, dtype=data.dtype), out)


@_register("cast_storage")
def _cast(fn: Impl, data: Any = None, stype: str = "default", out: Any = None, **kw: Any) -> Any:
    return cast_storage(data, stype, out=out)


# -- element-wise binary ------------------------------------------------------------------------------------
_PY_BIN = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}
_NP_BIN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def _bin_target(kind: str, ls: str, rs: str, broadcast: bool) -> str:
    """Output storage type of MXNet 1.9.1's elemwise_* / broadcast_* for these inputs."""
    if broadcast:
        return "csr" if kind in ("mul", "div") and ls == "csr" and rs == "default" else "default"
    if kind in ("add", "sub"):
        return ls if ls == rs and ls != "default" else "default"
    if kind == "mul":
        if "csr" in (ls, rs) and "row_sparse" not in (ls, rs):
            return "csr"
        if "row_sparse" in (ls, rs) and "csr" not in (ls, rs):
            return "row_sparse"
    return "default"


def _rows(a: Any) -> np.ndarray | None:
    return host(a.indices) if isinstance(a, RowSparseNDArray) else None


def _binary_sparse(kind: str, lhs: NDArray, rhs: NDArray, broadcast: bool, out: Any) -> Any:
    target = _bin_target(kind, stype_of(lhs), stype_of(rhs), broadcast)
    if target == "default":
        return NotImplemented
    ld, rd = host(_dense(lhs)), host(_dense(rhs))
    with np.errstate(divide="ignore", invalid="ignore"):
        res = _NP_BIN[kind](ld, rd).astype(ld.dtype, copy=False)
    ctx = lhs.context
    if target == "csr":
        ks = [K.csr_keys(host(a.indices), host(a.indptr), res.shape[1]) for a in (lhs, rhs)
              if isinstance(a, CSRNDArray)]
        keys = ks[0] if len(ks) == 1 else (np.union1d(ks[0], ks[1]) if kind in ("add", "sub")
                                           else np.intersect1d(ks[0], ks[1]))
        v, i, p = K.csr_structure_from(np.unique(keys), res)
        return _place(new_csr(v, i, p, res.shape, ctx), out)
    rows = [r for r in (_rows(lhs), _rows(rhs)) if r is not None]
    keep = np.union1d(rows[0], rows[1]) if len(rows) == 2 else rows[0]
    return _place(new_rsp(res[keep], keep, res.shape, ctx), out)


def _bin_impl(kind: str, broadcast: bool) -> Impl:
    def impl(fn: Impl, lhs: Any = None, rhs: Any = None, out: Any = None, **kw: Any) -> Any:
        if not (isinstance(lhs, NDArray) and isinstance(rhs, NDArray)):
            return NotImplemented
        if not broadcast and lhs.shape != rhs.shape:
            raise ShapeError(f"elemwise operator: shapes {lhs.shape} and {rhs.shape} differ (use broadcast_*)")
        return _binary_sparse(kind, lhs, rhs, broadcast, out)
    return impl


for _kind, _names in {"add": ("elemwise_add", "_plus", "_add"), "sub": ("elemwise_sub", "_minus", "_sub"),
                      "mul": ("elemwise_mul", "_mul"), "div": ("elemwise_div", "_div")}.items():
    for _n in _names:
        IMPLS[_n] = _bin_impl(_kind, False)
for _kind, _names in {"add": ("broadcast_add", "broadcast_plus"), "sub": ("broadcast_sub", "broadcast_minus"),
                      "mul": ("broadcast_mul",), "div": ("broadcast_div",)}.items():
    for _n in _names:
        IMPLS[_n] = _bin_impl(_kind, True)


def _op(name: str) -> Impl:
    fn = _nd._op_function(name)
    if fn is None:
        from ...operator.hints import missing_fluent_message
        from ...operator.registry import OperatorNotFound
        raise OperatorNotFound(missing_fluent_message(f"mx.nd.sparse.{name}", name))
    return fn


def _ufunc(lhs: Any, rhs: Any, kind: str, scalar: Callable[[Any, float, bool], Any]) -> Any:
    """MXNet's sparse ``_ufunc_helper``: scalars, equal shapes (elemwise_*) or broadcast_*."""
    l_num, r_num = isinstance(lhs, (numbers.Number, np.generic)), isinstance(rhs, (numbers.Number, np.generic))
    if l_num and r_num:
        return _PY_BIN[kind](lhs, rhs)
    if r_num:
        return scalar(lhs, float(rhs), False)
    if l_num:
        return scalar(rhs, float(lhs), True)
    if not isinstance(rhs, NDArray):
        rhs = _nd.array(rhs, ctx=lhs.context, dtype=lhs.dtype)
    if not isinstance(lhs, NDArray):
        lhs = _nd.array(lhs, ctx=rhs.context, dtype=rhs.dtype)
    name = {"add": "elemwise_add", "sub": "elemwise_sub", "mul": "elemwise_mul", "div": "elemwise_div"}[kind]
    if lhs.shape != rhs.shape:
        name = {"add": "broadcast_add", "sub": "broadcast_sub", "mul": "broadcast_mul",
                "div": "broadcast_div"}[kind]
    return _op(name)(lhs, rhs)


def _scaled(x: Any, s: float, keep: bool, f: Callable[[Any], Any]) -> Any:
    """A sparse array times/over a scalar keeps its storage (values only); other scalar
    operations give dense results, as MXNet's ``_plus_scalar`` ... on sparse inputs."""
    if is_sparse(x) and keep:
        res = x._same(f(x.data))
        if _AG.recording and x._ag is not None:  # the gradient through f on the dense values
            return _sag.link(f(_sag.dense_input(x)), res, "_mul_scalar")
        return res
    return f(_dense(x))


def add(lhs: Any, rhs: Any) -> Any:
    """``lhs + rhs``: elemwise_add for equal shapes (csr+csr -> csr, rsp+rsp -> rsp), else broadcast_add."""
    return _ufunc(lhs, rhs, "add", lambda x, s, _r: _scaled(x, s, False, lambda v: v + s))


def subtract(lhs: Any, rhs: Any) -> Any:
    """``lhs - rhs`` (elemwise_sub for equal shapes, else broadcast_sub)."""
    return _ufunc(lhs, rhs, "sub", lambda x, s, r: _scaled(x, s, False, (lambda v: s - v) if r else
                                                            (lambda v: v - s)))


def multiply(lhs: Any, rhs: Any) -> Any:
    """``lhs * rhs``; a sparse array times a scalar stays sparse."""
    return _ufunc(lhs, rhs, "mul", lambda x, s, _r: _scaled(x, s, True, lambda v: v * s))


def divide(lhs: Any, rhs: Any) -> Any:
    """``lhs / rhs``; a sparse array over a scalar stays sparse."""
    return _ufunc(lhs, rhs, "div", lambda x, s, r: _scaled(x, s, not r, (lambda v: s / v) if r else
                                                            (lambda v: v / s)))


# -- sums of many ------------------------------------------------------------------------------------------
@_register("add_n", "ElementWiseSum", "_sum")
def _add_n(fn: Impl, *args: Any, out: Any = None, **kw: Any) -> Any:
    if not args or not all(isinstance(a, RowSparseNDArray) for a in args):
        return NotImplemented
    keep = np.unique(np.concatenate([host(a.indices) for a in args]).astype(K.IDX))
    acc = np.zeros((keep.shape[0],) + args[0].shape[1:], np.dtype(args[0].dtype))
    for a in args:
        acc[np.searchsorted(keep, host(a.indices))] += host(a.data)
    return _place(new_rsp(acc, keep, args[0].shape, args[0].context), out)


# -- dot ----------------------------------------------------------------------------------------------------
def _csr_parts(a: CSRNDArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return host(a.data), host(a.indices), host(a.indptr)


_csr_matmul = K.csr_matmul
_csr_t_matmul = K.csr_t_matmul


@_register("dot")
def _dot(fn: Impl, lhs: Any = None, rhs: Any = None, transpose_a: bool = False, transpose_b: bool = False,
         out: Any = None, forward_stype: Any = None, **kw: Any) -> Any:
    ls, rs = stype_of(lhs), stype_of(rhs)
    if ls == "csr":
        if rhs.ndim != 2:
            raise ShapeError(f"sparse dot only supports 2 dimensional rhs; rhs has shape {rhs.shape}")
        if transpose_b or rs == "csr":
            return NotImplemented
        ta = bool(transpose_a)
        if lhs.shape[0 if ta else 1] != rhs.shape[0]:
            raise ShapeError(f"dot: shapes {lhs.shape}{'.T' if ta else ''} and {rhs.shape} do not match")
        if not ta and rs == "default" and lhs.context.device_type == "cpu":
            # csr x dense -> dense: one engine operation over the compact arrays (asynchronous)
            res = _nd.empty((lhs.shape[0], rhs.shape[1]), lhs.context, rhs.dtype)
            parts = (lhs.data, lhs.indices, lhs.indptr, rhs)
            d, i, p, r, o = (x._data for x in (*parts, res))
            n = lhs.shape[0]
            _nd._push(lambda rc: o.__setitem__(Ellipsis, _csr_matmul(d, i, p, r, n)), res, parts, (res,), "dot")
            return _place(res, out)
        dense_r = host(_dense(rhs))
        if ta:
            v, keep = _csr_t_matmul(*_csr_parts(lhs), dense_r)
            return _place(new_rsp(v, keep, (lhs.shape[1], rhs.shape[1]), lhs.context), out)
        return _place(nd_from_host(_csr_matmul(*_csr_parts(lhs), dense_r, lhs.shape[0]), lhs.context), out)
    if rs == "csr" and ls == "default" and not transpose_a:
        # dense x csr(.T) -> csr (MXNet 1.9.1's storage type for this pair): every row stores
        # the output columns the csr operand can reach (its used columns; with transpose_b
        # its non-empty rows), zeros included, as MXNet's kernel
        dl, dr = host(lhs), host(rhs._dense())
        res = dl @ (dr.T if transpose_b else dr)
        if transpose_b:
            cols = np.flatnonzero(np.diff(host(rhs.indptr)) > 0).astype(K.IDX)
        else:
            cols = np.flatnonzero(np.bincount(host(rhs.indices), minlength=rhs.shape[1]) > 0).astype(K.IDX)
        n = res.shape[0]
        indptr = np.arange(n + 1, dtype=K.IDX) * cols.shape[0]
        return _place(new_csr(res[:, cols].reshape(-1), np.tile(cols, n), indptr, res.shape, lhs.context), out)
    return NotImplemented


def dot(lhs: NDArray, rhs: NDArray, transpose_a: bool = False, transpose_b: bool = False,
        forward_stype: Any = None, out: Any = None) -> NDArray:
    """MXNet's sparse ``dot``: csr x dense -> dense, csr.T x dense -> row_sparse,
    dense x csr -> csr, row_sparse x dense -> dense (docs/sparse.md)."""
    return _op("dot")(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b, out=out)


# -- structure ----------------------------------------------------------------------------------------------
def retain(data: Any = None, indices: Any = None, out: Any = None, **_: Any) -> RowSparseNDArray:
    """The rows ``indices`` of a row_sparse array (one stored row per index, zeros where
    the input has none), as MXNet's ``sparse.retain``."""
    if not isinstance(data, RowSparseNDArray):
        raise PlexnetError(f"retain: data must be a row_sparse array; got storage type {stype_of(data)}")
    idx = host(indices) if isinstance(indices, NDArray) else np.asarray(indices)
    if idx.size and (idx.min() < 0 or idx.max() >= data.shape[0]):
        raise ValueError(f"retain: indices must be in [0, {data.shape[0]}) for data of shape {data.shape}; got "
                         f"min {idx.min()}, max {idx.max()}")
    v, keep = K.rsp_retain(host(data.data), host(data.indices), idx)
    res: NDArray = new_rsp(v, keep, data.shape, data.context)
    if _AG.recording and data._ag is not None:  # the gradient: the output gradient's retained rows
        res = _sag.link(_sag.retain_dense(data, idx), res, "_sparse_retain")
    return _place(res, out)  # type: ignore[return-value]


def _norm_bound(b: Any, n: int, default: int) -> int:
    if b is None:
        return default
    b = int(b)
    return max(0, min(n, b + n if b < 0 else b))


@_register("slice", "crop")
def _slice(fn: Impl, data: Any = None, begin: Any = (), end: Any = (), step: Any = (), out: Any = None,
           **kw: Any) -> Any:
    if not isinstance(data, CSRNDArray) or any(s not in (None, 1) for s in (step or ())):
        return NotImplemented
    # MXNet's Shape parameters take a bare int too (``crop(csr, begin=1, end=3)``)
    begin, end = ((b,) if isinstance(b, (int, np.integer)) or b is None else tuple(b) for b in (begin, end))
    if len(begin) != len(end) or not 1 <= len(begin) <= 2:
        raise ShapeError(f"slice: begin {begin} and end {end} must have one or two entries for a csr array")
    r0, r1 = _norm_bound(begin[0], data.shape[0], 0), _norm_bound(end[0], data.shape[0], data.shape[0])
    r1 = max(r0, r1)
    d, i, p = K.csr_row_slice(*_csr_parts(data), r0, r1)
    ncols = data.shape[1]
    if len(begin) == 2:
        c0, c1 = _norm_bound(begin[1], ncols, 0), _norm_bound(end[1], ncols, ncols)
        c1 = max(c0, c1)
        if (c0, c1) != (0, ncols):
            d, i, p = K.csr_col_slice(d, i, p, c0, c1)
        ncols = c1 - c0
    return _place(new_csr(d, i, p, (r1 - r0, ncols), data.context), out)


def slice(data: Any, begin: Any = (), end: Any = (), step: Any = (), out: Any = None, **kw: Any) -> Any:
    """``data[begin:end]``; a csr input (without steps) gives csr."""
    return _op("slice")(data, begin=begin, end=end, step=step, out=out, **kw)


@_register("concat", "Concat")
def _concat(fn: Impl, *data: Any, dim: int = 1, out: Any = None, **kw: Any) -> Any:
    if not data or dim != 0 or not all(isinstance(a, CSRNDArray) for a in data):
        return NotImplemented
    if len({a.shape[1] for a in data}) != 1:
        raise ShapeError(f"concat: csr arrays of shapes {[a.shape for a in data]} differ beyond axis 0")
    parts = [_csr_parts(a) for a in data]
    ptrs, off = [np.zeros(1, K.IDX)], 0
    for _d, _i, p in parts:
        ptrs.append(p[1:] + off)
        off += int(p[-1])
    shape = (builtins.sum(a.shape[0] for a in data), data[0].shape[1])
    res = new_csr(np.concatenate([x[0] for x in parts]), np.concatenate([x[1] for x in parts]),
                  np.concatenate(ptrs), shape, data[0].context)
    return _place(res, out)


@_register("take")
def _take(fn: Impl, a: Any = None, indices: Any = None, axis: int = 0, mode: str = "clip", out: Any = None,
          **kw: Any) -> Any:
    # MXNet's take FComputeEx: rows of a csr array (axis 0, clip/wrap) give a csr array
    if not isinstance(a, CSRNDArray) or is_sparse(indices) or axis != 0 or mode not in ("clip", "wrap") or kw:
        return NotImplemented
    n = a.shape[0]
    rows = np.asarray(indices.asnumpy() if isinstance(indices, NDArray) else indices).astype(np.int64).ravel()
    rows = np.clip(rows, 0, n - 1) if mode == "clip" else np.mod(rows, n)
    d, i, p = _csr_parts(a)
    starts, lens = p[rows], p[rows + 1] - p[rows]
    ptr = np.zeros(rows.size + 1, K.IDX)
    np.cumsum(lens, out=ptr[1:])
    pick = np.repeat(starts - ptr[:-1], lens) + np.arange(int(ptr[-1]), dtype=K.IDX)
    return _place(new_csr(d[pick], i[pick], ptr, (rows.size, a.shape[1]), a.context), out)


def zeros_like(data: Any, out: Any = None, **kw: Any) -> NDArray:
    """Zeros of ``data``'s shape, dtype and storage type."""
    return _op("zeros_like")(data, out=out, **kw)


plug(add=add, subtract=subtract, multiply=multiply, divide=divide, zeros_like=zeros_like, slice=slice, retain=retain)
