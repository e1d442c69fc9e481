"""``cast_storage`` and the creation functions of ``mx.nd.sparse``."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...base import ShapeError
from ...context import Context, current_context
from ...tape import STATE as _AG
from .. import ndarray as _nd
from ..ndarray import NDArray
from . import autograd as _sag, kernels as K
from .base import BaseSparseNDArray, CSRNDArray, RowSparseNDArray, host, new_csr, new_rsp, plug

__all__ = ["cast_storage", "csr_matrix", "row_sparse_array", "zeros", "empty", "array"]

_STYPES = ("default", "csr", "row_sparse")


def _check_stype(stype: Any, fn: str) -> str:
    if stype not in _STYPES:
        raise ValueError(f"{fn}: unknown storage type {stype!r}; one of {', '.join(_STYPES)}")
    return str(stype)


def cast_storage(data: NDArray, stype: str = "default", out: NDArray | None = None, **_: Any) -> NDArray:
    """``data`` in storage type ``stype``. dense -> csr/row_sparse keeps the non-zero
    entries/rows; csr <-> row_sparse is refused, as MXNet 1.9.1."""
    stype = _check_stype(stype, "cast_storage")
    src = data.stype
    if src == stype:
        res: NDArray = data.copy()
    elif stype == "default":
        res = data._dense()  # type: ignore[attr-defined]
    elif src != "default":
        raise ValueError(f"cast_storage from {src} to {stype} is not supported")
    elif stype == "csr":
        if data.ndim != 2:
            raise ShapeError(f"cast_storage: storage type 'csr' needs a 2-D array; the input has shape {data.shape}")
        d = host(data)
        v, i, p = K.dense_to_csr(d)
        res = new_csr(v, i, p, d.shape, data.context)
    else:
        d = host(data)
        v, i = K.dense_to_rsp(d)
        res = new_rsp(v, i, d.shape, data.context)
    if _AG.recording and data._ag is not None and res._ag is None:
        _sag.link(data, res, "cast_storage")  # its gradient is the result's, dense
    if out is not None:
        out[:] = res
        return out
    return res


def _ctx(ctx: Any) -> Context:
    return ctx if ctx is not None else current_context()


def _is_shape(arg: Any) -> bool:
    return isinstance(arg, tuple) and len(arg) >= 1 and all(isinstance(d, (int, np.integer)) for d in arg)


def _host_any(a: Any, dtype: Any = None) -> np.ndarray:
    if isinstance(a, NDArray):
        a = a.asnumpy()
    return np.asarray(a) if dtype is None else np.asarray(a, dtype=dtype)


def _default_dtype(dtype: Any, data: Any) -> np.dtype:
    """MXNet: ``dtype``, else the data's when it is an NDArray/numpy array, else float32."""
    if dtype is not None:
        return np.dtype(dtype)
    if isinstance(data, (NDArray, np.ndarray)):
        return np.dtype(data.dtype)
    return np.dtype(np.float32)


def _check_shape(s1: Any, s2: Any) -> None:
    """MXNet's ``sparse._check_shape``: a given ``shape`` must equal the source's."""
    if s1 and s2 and tuple(int(d) for d in s1) != tuple(int(d) for d in s2):
        raise ValueError(f"Shape mismatch detected. {tuple(s1)} v.s. {tuple(s2)}")


def _scipy_csr(arg: Any) -> Any:
    if not type(arg).__module__.startswith("scipy.sparse"):
        return None  # (scipy is imported only for scipy inputs)
    try:
        import scipy.sparse as spsp
    except ImportError:
        return None
    return arg if isinstance(arg, spsp.spmatrix) and arg.format == "csr" else None


def csr_matrix(arg1: Any, shape: Any = None, ctx: Any = None, dtype: Any = None) -> CSRNDArray:
    """A CSRNDArray (MXNet's ``sparse.csr_matrix``) from ``(data, indices, indptr)``,
    ``(data, (row, col))``, a dense array (numpy or NDArray), another CSRNDArray, a
    scipy csr matrix, or a shape ``(M, N)`` for an empty one. Explicit zeros given in
    ``data`` are kept, as MXNet."""
    ctx = _ctx(ctx)
    if _is_shape(arg1) and len(arg1) == 2 and not isinstance(arg1[0], (list, tuple, np.ndarray, NDArray)):
        _check_shape(arg1, shape)
        return zeros("csr", arg1, ctx=ctx, dtype=dtype)  # type: ignore[return-value]
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = arg1
        dt = _default_dtype(dtype, data)
        d, i, p = _host_any(data, dt).reshape(-1), _host_any(indices).reshape(-1), _host_any(indptr).reshape(-1)
        for name, a in (("indices", i), ("indptr", p)):
            if a.size and not np.issubdtype(a.dtype, np.integer) and not np.all(np.mod(a, 1) == 0):
                raise ValueError(f"csr_matrix: {name} must hold integers; got dtype {a.dtype}")
        if shape is None:
            if p.size < 1 or i.size == 0:  # MXNet: 'invalid shape' (nothing to infer the columns from)
                raise ValueError("csr_matrix: invalid shape: cannot infer it without indices; pass shape=")
            shape = (p.size - 1, int(i.max()) + 1 if i.size else 0)
        shape = tuple(int(s) for s in shape)
        err = K.csr_check(d, i.astype(K.IDX), p.astype(K.IDX), shape, full_check=False)
        if err is not None:
            raise ValueError(f"csr_matrix: invalid (data, indices, indptr) for shape {shape}: {err}")
        return new_csr(d, i, p, shape, ctx, dt)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, (row, col) = arg1[0], arg1[1]
        dt = _default_dtype(dtype, data)
        d, r, c = _host_any(data, dt).reshape(-1), _host_any(row).reshape(-1), _host_any(col).reshape(-1)
        if not d.shape == r.shape == c.shape:
            raise ValueError(f"csr_matrix: data, row and col must have one length; got {d.shape}, {r.shape}, "
                             f"{c.shape}")
        if shape is None:
            shape = (int(r.max()) + 1 if r.size else 0, int(c.max()) + 1 if c.size else 0)
        shape = tuple(int(s) for s in shape)
        if r.size and (r.min() < 0 or r.max() >= shape[0] or c.min() < 0 or c.max() >= shape[1]):
            raise ValueError(f"csr_matrix: (row, col) coordinates out of range for shape {shape}")
        v, i, p = K.coo_to_csr(d, r, c, shape)  # type: ignore[arg-type]
        return new_csr(v, i, p, shape, ctx, dt)
    if isinstance(arg1, CSRNDArray):
        _check_shape(arg1.shape, shape)
        res = arg1.copyto(ctx) if arg1.context != ctx else arg1.copy()
        return res.astype(dtype) if dtype is not None else res  # type: ignore[return-value]
    if isinstance(arg1, RowSparseNDArray):
        raise ValueError("Unexpected input type: RowSparseNDArray (csr_matrix takes csr, dense or scipy input)")
    sp = _scipy_csr(arg1)
    if sp is not None:
        _check_shape(sp.shape, shape)
        if not sp.has_canonical_format:  # as MXNet: duplicates summed, indices sorted
            sp = sp.copy()
            sp.sum_duplicates()
        dt = np.dtype(dtype) if dtype is not None else np.dtype(sp.dtype)
        return new_csr(sp.data, sp.indices, sp.indptr, sp.shape, ctx, dt)
    dense = _host_any(arg1)
    dt = _default_dtype(dtype, arg1)
    if dense.ndim != 2:
        raise ValueError(f"csr_matrix: a dense source must be 2-D; got shape {dense.shape}")
    _check_shape(dense.shape, shape)
    v, i, p = K.dense_to_csr(dense.astype(dt, copy=False))
    return new_csr(v, i, p, dense.shape, ctx, dt)


def row_sparse_array(arg1: Any, shape: Any = None, ctx: Any = None, dtype: Any = None) -> RowSparseNDArray:
    """A RowSparseNDArray (MXNet's ``sparse.row_sparse_array``) from ``(data, indices)``,
    a dense array, another RowSparseNDArray, or a shape for an empty one."""
    ctx = _ctx(ctx)
    if _is_shape(arg1):
        _check_shape(arg1, shape)
        return zeros("row_sparse", arg1, ctx=ctx, dtype=dtype)  # type: ignore[return-value]
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, indices = arg1
        dt = _default_dtype(dtype, data)
        d, i = _host_any(data, dt), _host_any(indices).reshape(-1)
        if shape is None:
            if d.ndim < 1 or i.size == 0:  # MXNet: 'invalid shape'
                raise ValueError("row_sparse_array: invalid shape: cannot infer it without indices; pass shape=")
            shape = (int(i.max()) + 1 if i.size else 0,) + d.shape[1:]
        shape = tuple(int(s) for s in shape)
        if d.size == 0 and d.ndim <= 1:
            d = d.reshape((0,) + shape[1:])
        err = K.rsp_check(d, i.astype(K.IDX), shape, full_check=False)
        if err is not None:
            raise ValueError(f"row_sparse_array: invalid (data, indices) for shape {shape}: {err}")
        return new_rsp(d, i, shape, ctx, dt)
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape)
        res = arg1.copyto(ctx) if arg1.context != ctx else arg1.copy()
        return res.astype(dtype) if dtype is not None else res  # type: ignore[return-value]
    if isinstance(arg1, CSRNDArray):
        raise ValueError("Unexpected input type: CSRNDArray (row_sparse_array takes row_sparse or dense input)")
    dense = _host_any(arg1)
    dt = _default_dtype(dtype, arg1)
    _check_shape(dense.shape, shape)
    v, i = K.dense_to_rsp(dense.astype(dt, copy=False))
    return new_rsp(v, i, dense.shape, ctx, dt)


def zeros(stype: str, shape: Any, ctx: Any = None, dtype: Any = None, **kwargs: Any) -> NDArray:
    """An all-zero array of storage type ``stype`` (no stored entries for sparse ones)."""
    stype = _check_stype(stype, "zeros")
    ctx = _ctx(ctx)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    dt = np.dtype(dtype if dtype is not None else np.float32)
    out = kwargs.pop("out", None)
    if stype == "default":
        return _nd.zeros(shape, ctx, dt, out=out) if out is not None else _nd.zeros(shape, ctx, dt)
    if stype == "csr":
        if len(shape) != 2:
            raise ShapeError(f"storage type 'csr' needs a 2-D shape; got {shape}")
        res: NDArray = new_csr(np.zeros(0, dt), np.zeros(0, K.IDX), np.zeros(shape[0] + 1, K.IDX), shape, ctx, dt)
    else:
        res = new_rsp(np.zeros((0,) + shape[1:], dt), np.zeros(0, K.IDX), shape, ctx, dt)
    if out is not None:
        out[:] = res
        return out
    return res


def empty(stype: str, shape: Any, ctx: Any = None, dtype: Any = None) -> NDArray:
    """An array of storage type ``stype``; sparse ones start with no stored entries."""
    if _check_stype(stype, "empty") == "default":
        return _nd.empty(shape, _ctx(ctx), dtype)
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def array(source_array: Any, ctx: Any = None, dtype: Any = None) -> BaseSparseNDArray:
    """A sparse array copied from a sparse NDArray or a scipy csr matrix (MXNet refuses
    other sources here: ``mx.nd.array`` makes dense arrays)."""
    ctx = _ctx(ctx) if ctx is not None else None
    if isinstance(source_array, BaseSparseNDArray):
        c = ctx or source_array.context
        res = source_array.copyto(c) if source_array.context != c else source_array.copy()
        return res.astype(dtype) if dtype is not None else res  # type: ignore[return-value]
    if _scipy_csr(source_array) is not None:
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise ValueError(f"Please use mx.nd.array to create an NDArray with source_array of type "
                     f"{type(source_array)}")


plug(cast_storage=cast_storage)
