"""Random arrays of every storage type for tests (``mx.test_utils.rand_ndarray``,
``rand_sparse_ndarray`` and friends), as
MXNet 1.9.1's test_utils makes them: CSR matrices with a uniform (through
``scipy.sparse.rand`` when scipy is installed) or power-law pattern, row_sparse arrays with
rows drawn at the given density. Draws come from numpy's global random state, as MXNet's.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..context import Context
from ..ndarray import NDArray, array
from ..ndarray import random as _nd_random
from ..ndarray import sparse as _sparse
from .compare import default_context, default_dtype
from .data import assign_each, random_arrays

__all__ = ["rand_ndarray", "rand_sparse_ndarray", "create_sparse_array", "create_sparse_array_zd",
           "shuffle_csr_column_indices"]

rnd = np.random


def _validate_csr(num_rows: int, num_cols: int, density: float, distribution: str = "uniform") -> None:
    total_nnz = int(num_rows * num_cols * density)
    if density < 0 or density > 1:
        raise ValueError("density has to be between 0 and 1")
    if num_rows <= 0 or num_cols <= 0:
        raise ValueError("num_rows or num_cols should be greater than 0")
    if distribution == "powerlaw" and total_nnz < 2 * num_rows:
        raise ValueError(f"not supported for this density: {density} for this shape ({num_rows}, {num_cols}) "
                         f"Please keep : num_rows * num_cols * density >= 2 * num_rows")


def shuffle_csr_column_indices(csr: Any) -> None:
    """Shuffle the column indices within each row of ``csr`` (a scipy or plexnet CSR), in place:
    unordered column indices are valid CSR too."""
    nd_indices = isinstance(csr.indices, NDArray)
    indptr = csr.indptr.asnumpy() if isinstance(csr.indptr, NDArray) else np.asarray(csr.indptr)
    for i in range(len(indptr) - 1):
        s, e = int(indptr[i]), int(indptr[i + 1])
        sub = csr.indices[s:e].asnumpy() if nd_indices else np.array(csr.indices[s:e])
        np.random.shuffle(sub)
        csr.indices[s:e] = sub


def _uniform_csr(num_rows: int, num_cols: int, density: float, dtype: Any, data_init: Any,
                 shuffle_csr_indices: bool) -> Any:
    _validate_csr(num_rows, num_cols, density, "uniform")
    try:
        from scipy import sparse as spsp
    except ImportError:
        if data_init is not None or shuffle_csr_indices:
            raise AssertionError("data_init and shuffle_csr_indices need scipy") from None
        dns = _nd_random.uniform(shape=(num_rows, num_cols), dtype=dtype)
        return (dns * (dns < density)).tostype("csr")
    csr = spsp.rand(num_rows, num_cols, density, dtype=dtype, format="csr")
    if data_init is not None:
        csr.data.fill(data_init)
    if shuffle_csr_indices:
        shuffle_csr_column_indices(csr)
    return _sparse.csr_matrix((csr.data, csr.indices, csr.indptr), shape=(num_rows, num_cols), dtype=dtype)


def _powerlaw_csr(num_rows: int, num_cols: int, density: float, dtype: Any) -> Any:
    """Row ``i`` holds about ``2**i`` non-zeros (every row at least one), MXNet's pattern."""
    _validate_csr(num_rows, num_cols, density, "powerlaw")
    unused = int(num_rows * num_cols * density)
    out = np.zeros((num_rows, num_cols), dtype=dtype)
    for row in range(num_rows):
        out[row][0] = 1 + rnd.uniform(0.001, 2)
        unused -= 1
        if unused <= 0:
            return array(out).tostype("csr")
    col_max = 2
    for row in range(num_rows):
        col_limit = min(num_cols, col_max)
        if col_limit == num_cols and unused > col_limit:
            out[row] = 1 + rnd.uniform(0.001, 2)
            unused = unused - col_limit + 1
            if unused <= 0:
                return array(out).tostype("csr")
            continue
        for col in range(1, col_limit):
            out[row][col] = 1 + rnd.uniform(0.001, 2)
            unused -= 1
            if unused <= 0:
                return array(out).tostype("csr")
        col_max *= 2
    if unused > 0:
        raise ValueError(f"not supported for this density: {density} for this shape ({num_rows},{num_cols})")
    return array(out).tostype("csr")


def rand_sparse_ndarray(shape: Any, stype: str, density: float | None = None, dtype: Any = None,
                        distribution: str | None = None, data_init: Any = None, rsp_indices: Any = None,
                        modifier_func: Callable | None = None, shuffle_csr_indices: bool = False,
                        ctx: Any = None) -> tuple[Any, tuple]:
    """A random ``'csr'`` or ``'row_sparse'`` array and its parts: ``(csr, (indptr, indices,
    data))`` or ``(rsp, (values, row_indices))`` (numpy for row_sparse, as MXNet)."""
    ctx = ctx or default_context()
    density = rnd.rand() if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    distribution = "uniform" if distribution is None else distribution
    if stype == "row_sparse":
        if distribution != "uniform":
            raise AssertionError(f"Distribution {distribution} not supported for row_sparse")
        if rsp_indices is not None:
            indices = np.asarray(rsp_indices)
            if len(indices) > shape[0]:
                raise AssertionError(f"{len(indices)} row indices for {shape[0]} rows")
        else:
            indices = np.argwhere(rnd.rand(shape[0]) < density).flatten()
        if indices.shape[0] == 0:
            return _sparse.zeros("row_sparse", shape, ctx=ctx, dtype=dtype), (np.array([], dtype=dtype),
                                                                              np.array([]))
        val = rnd.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            val.fill(data_init)
        if modifier_func is not None:
            val = assign_each(val, modifier_func)
        arr = _sparse.row_sparse_array((val, indices), shape=shape, dtype=dtype, ctx=ctx)
        return arr, (val, indices)
    if stype == "csr":
        if len(shape) != 2:
            raise AssertionError(f"a csr array is 2-D, got shape {tuple(shape)}")
        if distribution == "uniform":
            csr = _uniform_csr(shape[0], shape[1], density, dtype, data_init, shuffle_csr_indices)
        elif distribution == "powerlaw":
            csr = _powerlaw_csr(shape[0], shape[1], density, dtype)
        else:
            raise AssertionError(f"Distribution not supported: {distribution}")
        csr = csr.as_in_context(ctx)  # modifier_func: MXNet ignores it for csr, so does this
        return csr, (csr.indptr, csr.indices, csr.data)
    raise AssertionError(f"unknown storage type {stype!r}")


def create_sparse_array(shape: Any, stype: str, data_init: Any = None, rsp_indices: Any = None, dtype: Any = None,
                        modifier_func: Callable | None = None, density: float = .5,
                        shuffle_csr_indices: bool = False) -> Any:
    """A random sparse array; row_sparse indices sorted (canonical)."""
    if stype == "row_sparse":
        idx = np.sort(np.asarray(rsp_indices)) if rsp_indices is not None else None
        return rand_sparse_ndarray(shape, stype, density=density, data_init=data_init, rsp_indices=idx, dtype=dtype,
                                   modifier_func=modifier_func)[0]
    if stype == "csr":
        return rand_sparse_ndarray(shape, stype, density=density, data_init=data_init, dtype=dtype,
                                   modifier_func=modifier_func, shuffle_csr_indices=shuffle_csr_indices)[0]
    raise AssertionError("Unknown storage type: " + stype)


def create_sparse_array_zd(shape: Any, stype: str, density: float, data_init: Any = None, rsp_indices: Any = None,
                           dtype: Any = None, modifier_func: Callable | None = None,
                           shuffle_csr_indices: bool = False) -> Any:
    """``create_sparse_array`` where a row_sparse array's rows come only from ``rsp_indices``."""
    if stype == "row_sparse":
        density = 0.0
        if rsp_indices is not None and len(rsp_indices) > shape[0]:
            raise AssertionError(f"{len(rsp_indices)} row indices for {shape[0]} rows")
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices, dtype=dtype,
                               modifier_func=modifier_func, density=density, shuffle_csr_indices=shuffle_csr_indices)


def rand_ndarray(shape: Any, stype: str = "default", density: Any = None, dtype: Any = None,
                 modifier_func: Callable | None = None, shuffle_csr_indices: bool = False,
                 distribution: Any = None, ctx: Context | None = None) -> NDArray:
    """A random NDArray: standard normal values (``random_arrays``) for ``'default'``, else a
    random ``'csr'`` / ``'row_sparse'`` array (``rand_sparse_ndarray``), as MXNet 1.9.1's."""
    ctx = ctx or default_context()
    if stype == "default":
        return array(random_arrays(shape), dtype=dtype, ctx=ctx)
    return rand_sparse_ndarray(shape, stype, density=density, modifier_func=modifier_func, dtype=dtype,
                               shuffle_csr_indices=shuffle_csr_indices, distribution=distribution, ctx=ctx)[0]
