"""Sparse kernels on host arrays (numpy): conversions, checks and structure-changing ops.

Every function takes and returns plain arrays (``xp`` = numpy); the array classes in
``base.py`` move their compact components to the host, call these and wrap the results.
Index arrays are int64 as MXNet's (``csr.indices``, ``csr.indptr``, ``rsp.indices``).
"""
from __future__ import annotations

from typing import Any

import os

import numpy as np

IDX = np.int64

#: scipy, when installed, runs the csr x dense products (its C++ loops are ~30x faster than
#: the numpy formulations below on one core); PLEXNET_SPARSE_SCIPY=0 turns it off. scipy is
#: optional: the numpy kernels give the same values.
USE_SCIPY = os.environ.get("PLEXNET_SPARSE_SCIPY", "1") != "0"


def _scipy_sparse() -> Any:
    if not USE_SCIPY:
        return None
    try:
        import scipy.sparse as spsp
    except ImportError:
        return None
    return spsp

__all__ = ["IDX", "dense_to_csr", "csr_to_dense", "dense_to_rsp", "rsp_to_dense", "csr_check", "rsp_check",
           "coo_to_csr", "csr_row_slice", "csr_col_slice", "rsp_retain", "csr_structure_from", "csr_keys",
           "csr_matmul", "csr_t_matmul", "USE_SCIPY"]


def dense_to_csr(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data, indices, indptr) of the non-zero entries of a 2-D array, row-major."""
    flat = np.ascontiguousarray(d).reshape(-1)
    pos = np.flatnonzero(flat)
    ncols = max(d.shape[1], 1)
    indptr = np.zeros(d.shape[0] + 1, IDX)
    # row r's entries end where the flat positions pass (r + 1) * ncols
    indptr[1:] = np.searchsorted(pos, np.arange(1, d.shape[0] + 1, dtype=IDX) * ncols)
    return flat[pos], (pos % ncols).astype(IDX), indptr


def csr_to_dense(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, ...],
                 dtype: Any = None) -> np.ndarray:
    """The dense 2-D array; duplicate (row, col) entries are summed as scipy does."""
    out = np.zeros(shape, dtype if dtype is not None else data.dtype)
    if data.size:
        rows = np.repeat(np.arange(shape[0], dtype=IDX), np.diff(indptr))
        np.add.at(out, (rows, indices.astype(IDX)), data)
    return out


def dense_to_rsp(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(data, indices): the rows of ``d`` that hold a non-zero value."""
    if d.ndim == 0 or d.shape[0] == 0:
        return d.reshape((0,) + d.shape[1:]), np.zeros(0, IDX)
    keep = np.flatnonzero(d.reshape(d.shape[0], -1).any(axis=1)).astype(IDX)
    return d[keep], keep


def rsp_to_dense(data: np.ndarray, indices: np.ndarray, shape: tuple[int, ...], dtype: Any = None) -> np.ndarray:
    out = np.zeros(shape, dtype if dtype is not None else data.dtype)
    if indices.size:
        out[indices.astype(IDX)] = data
    return out


def csr_check(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, ...],
              full_check: bool) -> str | None:
    """Why (data, indices, indptr) is not a valid csr array of ``shape``, or None."""
    if len(shape) != 2:
        return f"csr arrays are 2-D; shape is {shape}"
    if indptr.ndim != 1 or indptr.shape[0] != shape[0] + 1:
        return f"indptr has shape {indptr.shape}; a csr array of shape {shape} needs ({shape[0] + 1},)"
    if indices.ndim != 1 or data.shape[:1] != indices.shape:
        return f"indices has shape {indices.shape} and data {data.shape}: both must be (nnz,) of one length"
    if indptr.shape[0] and (indptr[0] != 0 or indptr[-1] != indices.shape[0]):
        return (f"indptr must start at 0 and end at nnz={indices.shape[0]}; got indptr[0]={int(indptr[0])}, "
                f"indptr[-1]={int(indptr[-1])}")
    if not full_check:
        return None
    if np.any(np.diff(indptr) < 0):
        return f"indptr must be non-decreasing; got {indptr.tolist()}"
    if indices.size and (indices.min() < 0 or indices.max() >= shape[1]):
        return (f"indices of a csr array must be in [0, {shape[1]}) (the number of columns of shape {shape}); "
                f"got min {int(indices.min())}, max {int(indices.max())}")
    for r in range(shape[0]):
        seg = indices[indptr[r]:indptr[r + 1]]
        if seg.size > 1 and np.any(np.diff(seg) <= 0):
            return f"indices of row {r} must be strictly ascending; got {seg.tolist()}"
    return None


def rsp_check(data: np.ndarray, indices: np.ndarray, shape: tuple[int, ...], full_check: bool) -> str | None:
    """Why (data, indices) is not a valid row_sparse array of ``shape``, or None."""
    if indices.ndim != 1 or data.shape[:1] != indices.shape:
        return (f"indices has shape {indices.shape} and data {data.shape}: data must hold one row per index "
                f"(data.shape[0] == len(indices))")
    if tuple(data.shape[1:]) != tuple(shape[1:]):
        return f"data rows have shape {data.shape[1:]}; a row_sparse array of shape {shape} needs {shape[1:]}"
    if not full_check or not indices.size:
        return None
    if indices.min() < 0 or indices.max() >= shape[0]:
        return (f"indices of a row_sparse array must be in [0, {shape[0]}) (shape {shape}); got min "
                f"{int(indices.min())}, max {int(indices.max())}")
    if np.any(np.diff(indices) <= 0):
        return f"indices of a row_sparse array must be strictly ascending; got {indices.tolist()}"
    return None


def coo_to_csr(data: np.ndarray, row: np.ndarray, col: np.ndarray, shape: tuple[int, int]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """csr of COO triplets, sorted by (row, col); duplicates are summed (scipy's rule)."""
    row, col = row.astype(IDX), col.astype(IDX)
    key = row * shape[1] + col
    uniq, inv = np.unique(key, return_inverse=True)
    vals = np.zeros(uniq.shape[0], data.dtype)
    np.add.at(vals, inv, data)
    r, c = uniq // max(shape[1], 1), uniq % max(shape[1], 1)
    indptr = np.zeros(shape[0] + 1, IDX)
    np.cumsum(np.bincount(r, minlength=shape[0]), out=indptr[1:])
    return vals, c.astype(IDX), indptr


def csr_row_slice(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, begin: int, end: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo, hi = int(indptr[begin]), int(indptr[end])
    return data[lo:hi], indices[lo:hi], (indptr[begin:end + 1] - lo).astype(IDX)


def csr_col_slice(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, begin: int, end: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keep columns [begin, end), renumbered from 0 (explicit entries kept as stored)."""
    keep = (indices >= begin) & (indices < end)
    rows = np.repeat(np.arange(len(indptr) - 1, dtype=IDX), np.diff(indptr))
    counts = np.bincount(rows[keep], minlength=len(indptr) - 1)
    new_ptr = np.zeros(len(indptr), IDX)
    np.cumsum(counts, out=new_ptr[1:])
    return data[keep], (indices[keep] - begin).astype(IDX), new_ptr


def rsp_retain(data: np.ndarray, indices: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MXNet's ``retain``: one row per requested index (sorted), zeros where absent."""
    keep = np.unique(keep.astype(IDX))
    if indices.shape[0] == 0:  # MXNet: nothing stored, nothing retained
        keep = keep[:0]
    out = np.zeros((keep.shape[0],) + data.shape[1:], data.dtype)
    pos = np.searchsorted(indices, keep)
    hit = pos < indices.shape[0]
    hit[hit] = indices[pos[hit]] == keep[hit]
    out[hit] = data[pos[hit]]
    return out, keep


def csr_keys(indices: np.ndarray, indptr: np.ndarray, ncols: int) -> np.ndarray:
    """row * ncols + col of every stored entry."""
    rows = np.repeat(np.arange(len(indptr) - 1, dtype=IDX), np.diff(indptr))
    return rows * ncols + indices.astype(IDX)


def csr_structure_from(keys: np.ndarray, dense: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """csr holding ``dense``'s values at the (sorted, unique) flat positions ``keys``."""
    ncols = dense.shape[1]
    r, c = keys // max(ncols, 1), keys % max(ncols, 1)
    indptr = np.zeros(dense.shape[0] + 1, IDX)
    np.cumsum(np.bincount(r, minlength=dense.shape[0]), out=indptr[1:])
    return dense[r, c], c.astype(IDX), indptr


def csr_matmul(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, rhs: np.ndarray, nrows: int) -> np.ndarray:
    """csr (nrows x k) @ rhs (k x n), dense result in rhs's dtype."""
    ncols_out = rhs.shape[1]
    if data.size == 0 or nrows == 0:
        return np.zeros((nrows, ncols_out), rhs.dtype)
    spsp = _scipy_sparse()
    if spsp is not None:
        m = spsp.csr_matrix((data, indices, indptr), shape=(nrows, rhs.shape[0]))
        return np.asarray(m @ rhs, dtype=rhs.dtype)
    lens = np.diff(indptr)
    longest = int(lens.max())
    if longest * nrows <= 4 * data.size:
        # rows padded to the longest one (ELL layout): one batched product, no scatter
        pos = np.arange(longest)
        mask = pos[None, :] < lens[:, None]
        at = np.where(mask, indptr[:-1, None] + pos[None, :], 0)
        vals = np.where(mask, data[at], 0).astype(rhs.dtype, copy=False)
        return np.einsum("nl,nlk->nk", vals, rhs[indices[at]]).astype(rhs.dtype, copy=False)
    rows = np.repeat(np.arange(nrows, dtype=IDX), lens)
    prod = data[:, None] * rhs[indices]
    out = np.empty((nrows, ncols_out), rhs.dtype)
    for j in range(ncols_out):  # skewed rows: a segmented sum per output column
        out[:, j] = np.bincount(rows, weights=prod[:, j], minlength=nrows)
    return out


def csr_t_matmul(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, rhs: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """csr.T @ rhs as (rows, kept row indices): only the columns the csr uses are kept."""
    if data.size == 0:
        return np.zeros((0, rhs.shape[1]), rhs.dtype), np.zeros(0, IDX)
    used = np.bincount(indices) > 0  # the columns present, without sorting the indices
    keep = np.flatnonzero(used).astype(IDX)
    spsp = _scipy_sparse()
    if spsp is not None:
        m = spsp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, used.shape[0]))
        return np.asarray((m.T @ rhs)[keep], dtype=rhs.dtype), keep
    # the transpose's csr over the used columns (a stable sort by column), then csr x dense
    inv = (np.cumsum(used) - 1)[indices]
    rows = np.repeat(np.arange(len(indptr) - 1, dtype=IDX), np.diff(indptr))
    order = np.argsort(inv, kind="stable")
    t_ptr = np.zeros(keep.shape[0] + 1, IDX)
    np.cumsum(np.bincount(inv, minlength=keep.shape[0]), out=t_ptr[1:])
    return csr_matmul(data[order], rows[order], t_ptr, rhs, keep.shape[0]), keep
