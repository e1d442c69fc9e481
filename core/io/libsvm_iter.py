"""``LibSVMIter``: LibSVM text files as batches of CSR arrays (MXNet 1.x ``mx.io.LibSVMIter``).

Each line is ``label idx:value idx:value ...`` with **zero-based**, ascending column
indices, as MXNet expects. The data of each batch is a ``CSRNDArray`` of shape
``(batch_size, data_shape[0])``; the label is a dense ``(batch_size,)`` array taken from
the first column, or, with ``label_libsvm``, a CSR array read from that file (whose own
first column is ignored). ``round_batch`` must be True (as MXNet): a short last batch is
completed with the first rows (``pad`` says how many) and the next epoch starts after
them. The file is parsed once into compact host arrays (MXNet streams it); each batch
copies only its rows.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from ..base import FileOpenError
from .base import DataBatch, DataDesc, DataIter, IterDataError
from .partition import partition_range

__all__ = ["LibSVMIter", "HostCSR", "read_libsvm"]


class HostCSR:
    """A CSR matrix in host memory (numpy ``data``/``indices``/``indptr``): what sparse
    iterators cut batches from without scipy."""

    def __init__(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]) -> None:
        self.data, self.indices, self.indptr = data, indices.astype(np.int64), indptr.astype(np.int64)
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = data.dtype
        self.ndim = 2

    @classmethod
    def of(cls, a: Any) -> "HostCSR":
        """From a CSRNDArray or a scipy csr matrix."""
        if getattr(a, "stype", None) == "csr":
            return cls(a.data.asnumpy(), a.indices.asnumpy(), a.indptr.asnumpy(), a.shape)
        return cls(np.asarray(a.data), np.asarray(a.indices), np.asarray(a.indptr), a.shape)

    def take(self, rows: np.ndarray) -> "HostCSR":
        """The rows ``rows`` (any order, repeats allowed) as a new matrix."""
        rows = np.asarray(rows, dtype=np.int64)
        lo, hi = self.indptr[rows], self.indptr[rows + 1]
        lens = hi - lo
        indptr = np.zeros(rows.shape[0] + 1, np.int64)
        np.cumsum(lens, out=indptr[1:])
        # positions lo[i] .. hi[i] of every picked row, concatenated
        pos = np.arange(indptr[-1], dtype=np.int64) - np.repeat(indptr[:-1] - lo, lens)
        return HostCSR(self.data[pos], self.indices[pos], indptr, (rows.shape[0], self.shape[1]))

    def to_nd(self) -> Any:
        """A CSRNDArray on the CPU."""
        from ..context import cpu
        from ..ndarray import sparse
        return sparse.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape, ctx=cpu(),
                                 dtype=self.dtype)


def _files(path: str) -> list[str]:
    if os.path.isdir(path):  # MXNet: every file of a directory
        return sorted(os.path.join(path, f) for f in os.listdir(path) if os.path.isfile(os.path.join(path, f)))
    if not os.path.exists(path):
        raise FileOpenError(f"LibSVMIter: no such file {path!r}")
    return [path]


def read_libsvm(path: str, num_cols: int, dtype: Any = np.float32) -> tuple[np.ndarray, HostCSR]:
    """(labels, features) of a LibSVM file (or directory of files) with zero-based indices."""
    labels: list[float] = []
    data: list[float] = []
    cols: list[int] = []
    indptr = [0]
    for fname in _files(path):
        with open(fname) as f:
            for lineno, line in enumerate(f, 1):
                parts = line.split("#", 1)[0].split()
                if not parts:
                    continue
                try:
                    labels.append(float(parts[0]))
                    prev = -1
                    for tok in parts[1:]:
                        k, v = tok.split(":", 1)
                        if k == "qid":
                            continue
                        c = int(k)
                        if not 0 <= c < num_cols or c <= prev:
                            raise ValueError(f"column index {c} must be in [0, {num_cols}) (data_shape) and "
                                             f"ascending in its line (indices are zero-based)")
                        prev = c
                        cols.append(c)
                        data.append(float(v))
                except ValueError as e:
                    raise IterDataError(f"LibSVMIter: {fname}:{lineno}: {e}") from None
                indptr.append(len(cols))
    mat = HostCSR(np.asarray(data, dtype=dtype), np.asarray(cols, np.int64), np.asarray(indptr, np.int64),
                  (len(labels), num_cols))
    return np.asarray(labels, dtype=dtype), mat


def _one_dim(shape: Any, what: str) -> int:
    s = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if len(s) != 1:
        raise ValueError(f"LibSVMIter: {what} must have one dimension, got {s}")
    return s[0]


class LibSVMIter(DataIter):
    """Batches of CSR data (and dense or CSR labels) from LibSVM files; see the module.

    Parameters
    ----------
    data_libsvm : str
        A LibSVM file, or a directory whose files are read in name order.
    data_shape : tuple
        ``(num_features,)``.
    label_libsvm : str, optional
        A LibSVM file of labels (then labels are CSR of ``(batch_size,) + label_shape``).
    label_shape : tuple
        ``(1,)`` (default) for the dense labels of the data file.
    batch_size : int
    round_batch : bool
        Must be True, as in MXNet.
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` (contiguous rows, plexnet.io.partition).
    """

    _batches_carry_descs = True
    _get_returns_array = True

    def __init__(self, data_libsvm: str, data_shape: Sequence[int], label_libsvm: str | None = None,
                 label_shape: Sequence[int] = (1,), batch_size: int = 1, round_batch: bool = True,
                 num_parts: int = 1, part_index: int = 0, data_name: str = "data",
                 label_name: str = "softmax_label", dtype: str = "float32", **kwargs: Any) -> None:
        super().__init__(int(batch_size))
        if self.batch_size < 1:
            raise ValueError(f"LibSVMIter: batch_size must be >= 1, got {batch_size}")
        if not round_batch:
            raise ValueError("LibSVMIter: sparse batch loader doesn't support round_batch == False (as MXNet)")
        self._dim = _one_dim(data_shape, "data_shape")
        self._label_dim = _one_dim(label_shape, "label_shape")
        dt = np.dtype(dtype)
        labels, self._x = read_libsvm(data_libsvm, self._dim, dt)
        self._y: Any = labels
        if label_libsvm not in (None, "NULL", ""):
            _l, self._y = read_libsvm(str(label_libsvm), self._label_dim, dt)
            if self._y.shape[0] != self._x.shape[0]:
                raise ValueError(f"LibSVMIter: {label_libsvm!r} has {self._y.shape[0]} rows, {data_libsvm!r} has "
                                 f"{self._x.shape[0]}")
        elif self._label_dim != 1:
            raise ValueError(f"LibSVMIter: label_shape {tuple(label_shape)} needs label_libsvm (the data file "
                             f"holds one label per row)")
        lo, hi = partition_range(self._x.shape[0], num_parts, part_index)
        if (lo, hi) != (0, self._x.shape[0]):
            rows = np.arange(lo, hi)
            self._x = self._x.take(rows)
            self._y = self._y.take(rows) if isinstance(self._y, HostCSR) else self._y[lo:hi]
        self._n = self._x.shape[0]
        if self._n == 0:
            raise ValueError(f"LibSVMIter: no examples in {data_libsvm!r} (part {part_index} of {num_parts})")
        self._provide_data = [DataDesc(data_name, (self.batch_size, self._dim), self._x.dtype.type)]
        lshape = (self.batch_size,) if not isinstance(self._y, HostCSR) else (self.batch_size, self._label_dim)
        self._provide_label = [DataDesc(label_name, lshape, self._x.dtype.type)]
        self._start = 0  # where the next epoch starts (after the rows a padded batch took)
        self._cursor = 0
        self._rows: np.ndarray | None = None
        self._pad = 0

    def reset(self) -> None:
        self._cursor = self._start

    def iter_next(self) -> bool:
        if self._cursor >= self._n:
            self._rows = None
            return False
        end = self._cursor + self.batch_size
        rows = np.arange(self._cursor, end) % self._n
        self._pad = max(0, end - self._n)
        self._rows = rows
        self._cursor = end
        if self._pad:
            self._start = self._pad % self._n  # the next epoch continues after the wrapped rows
        elif self._cursor >= self._n:
            self._start = 0
        return True

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(), index=self.getindex(),
                         provide_data=self.provide_data, provide_label=self.provide_label)

    def _need_rows(self) -> np.ndarray:
        if self._rows is None:
            raise RuntimeError("LibSVMIter: no current batch; call next() (or reset() after the end)")
        return self._rows

    # one array each, as MXNet's C++ iterators (MXDataIter: next() wraps them in lists)
    def getdata(self) -> Any:
        return self._x.take(self._need_rows()).to_nd()

    def getlabel(self) -> Any:
        rows = self._need_rows()
        if isinstance(self._y, HostCSR):
            return self._y.take(rows).to_nd()
        from ..context import cpu
        from ..ndarray import array
        return array(self._y[rows], ctx=cpu(), dtype=self._y.dtype)

    def getindex(self) -> Any:
        return self._need_rows().copy()

    def getpad(self) -> int:
        return self._pad
