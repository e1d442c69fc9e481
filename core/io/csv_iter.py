"""``CSVIter``: batches from CSV files, read as a stream (MXNet 1.x ``mx.io.CSVIter``)."""
from __future__ import annotations

import io
import os
from typing import Any, Sequence

import numpy as np

from ..base import FileOpenError, MXNetError
from .base import DataDesc, DataIter, to_ndarray, warn_unknown_args

__all__ = ["CSVIter"]

_DTYPES = {"float32": np.float32, "int32": np.int32, "int64": np.int64, "float64": np.float64}


def _shape(s: Any, what: str) -> tuple[int, ...]:
    if isinstance(s, str):
        s = tuple(int(x) for x in s.strip("()[] ").split(",") if x.strip())
    elif isinstance(s, (int, np.integer)):
        s = (int(s),)
    s = tuple(int(x) for x in s)
    if not s or any(x < 1 for x in s):
        raise ValueError(f"CSVIter: {what} must be a non-empty shape of positive ints, got {s!r}")
    return s


class _CSVStream:
    """Reads rows of one CSV file sequentially; ``rewind`` goes back to the first row."""

    def __init__(self, path: str, width: int, dtype: np.dtype, what: str) -> None:
        self.path = path
        self.width = width
        self.dtype = dtype
        self.what = what
        self._f: io.TextIOBase | None = None
        self.row = 0      # index of the next row
        self.lineno = 0   # line number of the last line read
        self.rewind()

    def rewind(self) -> None:
        if self._f is None:
            self._f = open(self.path, "r", newline="")
        else:
            self._f.seek(0)
        self.row = 0
        self.lineno = 0

    def read(self, k: int) -> np.ndarray:
        """Up to ``k`` rows as a ``(m, width)`` array (``m < k`` at the end of the file)."""
        lines: list[str] = []
        first_line = self.lineno + 1
        f = self._f
        assert f is not None
        while len(lines) < k:
            line = f.readline()
            if not line:
                break
            self.lineno += 1
            if line.strip():
                lines.append(line)
        self.row += len(lines)
        if not lines:
            return np.empty((0, self.width), self.dtype)
        try:
            arr = np.loadtxt(lines, delimiter=",", dtype=np.float64, ndmin=2)
        except ValueError as e:
            raise MXNetError(f"CSVIter: cannot parse {self.what} file {self.path} (lines "
                             f"{first_line}-{self.lineno}): {e}") from e
        if arr.shape[1] != self.width:
            raise MXNetError(f"CSVIter: {self.what} file {self.path} has rows of {arr.shape[1]} "
                             f"values near line {first_line}, expected {self.width} (the shape's size)")
        return arr.astype(self.dtype, copy=False)

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


class CSVIter(DataIter):
    """Iterate over CSV files, one example per line (``mx.io.CSVIter``).

    The files are read as a stream, ``batch_size`` rows at a time, never whole.

    Parameters
    ----------
    data_csv : str
        Path of the data CSV file.
    data_shape : tuple
        Shape of one example; each row holds ``prod(data_shape)`` values.
    label_csv : str, optional
        Path of the label CSV file (``'NULL'``/None: every label is 0).
    label_shape : tuple
        Shape of one label (default ``(1,)``, giving labels of shape ``(batch_size,)``).
    batch_size : int
    round_batch : bool
        True (default): a short last batch is completed with rows from the start of the
        file (``pad`` tells how many) and the next epoch starts after them, as in MXNet.
        False: the short batch's tail repeats its own rows, and ``pad`` says how many.
    dtype : str
        ``'float32'`` (default), ``'int32'``, ``'int64'`` or ``'float64'``.
    data_name, label_name : str
    """

    _batches_carry_descs = True

    def __init__(self, data_csv: str, data_shape: Sequence[int], label_csv: str | None = "NULL",
                 label_shape: Sequence[int] = (1,), batch_size: int = 1, round_batch: bool = True,
                 dtype: str = "float32", data_name: str = "data", label_name: str = "softmax_label",
                 prefetch_buffer: int = 4, ctx: str = "cpu", **kwargs: Any) -> None:
        super().__init__(int(batch_size))
        if self.batch_size < 1:
            raise ValueError(f"CSVIter: batch_size must be >= 1, got {batch_size}")
        warn_unknown_args("CSVIter", kwargs)
        self.data_shape = _shape(data_shape, "data_shape")
        self.label_shape = _shape(label_shape, "label_shape")
        if str(dtype) not in _DTYPES:
            raise ValueError(f"CSVIter: dtype must be one of {sorted(_DTYPES)}, got {dtype!r}")
        self.dtype = np.dtype(_DTYPES[str(dtype)])
        self.round_batch = bool(round_batch)
        self.data_name, self.label_name = data_name, label_name
        if not os.path.exists(os.fspath(data_csv)):
            raise FileOpenError(f"CSVIter: data_csv {data_csv!r} does not exist")
        self._data = _CSVStream(os.fspath(data_csv), int(np.prod(self.data_shape)), self.dtype, "data")
        self._label: _CSVStream | None = None
        if label_csv not in (None, "", "NULL"):
            if not os.path.exists(os.fspath(label_csv)):
                raise FileOpenError(f"CSVIter: label_csv {label_csv!r} does not exist")
            self._label = _CSVStream(os.fspath(label_csv), int(np.prod(self.label_shape)),
                                     self.dtype, "label")
        self._overflow = 0
        self._cur: tuple[np.ndarray, np.ndarray, int, np.ndarray] | None = None
        b = self.batch_size
        lshape = (b,) if self.label_shape == (1,) else (b,) + self.label_shape
        self._provide_data = [DataDesc(data_name, (b,) + self.data_shape, self.dtype.type)]
        self._provide_label = [DataDesc(label_name, lshape, self.dtype.type)]

    def _read(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        start = self._data.row
        data = self._data.read(k)
        n = data.shape[0]
        if self._label is not None:
            label = self._label.read(n)
            if label.shape[0] != n:
                raise MXNetError(f"CSVIter: label file {self._label.path} has fewer rows "
                                 f"({self._label.row}) than data file {self._data.path}")
        else:
            label = np.zeros((n, int(np.prod(self.label_shape))), self.dtype)
        return data, label, np.arange(start, start + n, dtype=np.uint64)

    def _rewind(self) -> None:
        self._data.rewind()
        if self._label is not None:
            self._label.rewind()

    def reset(self) -> None:
        if self.round_batch and self._overflow:
            self._overflow = 0  # the rows lent to the last batch are consumed
        else:
            self._rewind()
        self._cur = None

    def iter_next(self) -> bool:
        self._cur = None
        if self._overflow:
            return False
        b = self.batch_size
        data, label, index = self._read(b)
        n = data.shape[0]
        if n == 0:
            return False
        pad = 0
        if n < b:
            pad = b - n
            if self.round_batch:
                parts = [(data, label, index)]
                need = pad
                while need:
                    self._rewind()
                    d, lab, ix = self._read(need)
                    if d.shape[0] == 0:
                        raise MXNetError(f"CSVIter: {self._data.path} holds no rows")
                    parts.append((d, lab, ix))
                    need -= d.shape[0]
                data, label, index = (np.concatenate(x) for x in zip(*parts))
                self._overflow = pad
            else:
                take = np.resize(np.arange(n), b)
                data, label, index = data[take], label[take], index[take]
        self._cur = (data, label, pad, index)
        return True

    def _current(self) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
        if self._cur is None:
            raise RuntimeError("CSVIter: no current batch; call iter_next() first")
        return self._cur

    _get_returns_array = True  # one NDArray, as MXNet's MXDataIter

    def getdata(self) -> Any:
        data = self._current()[0]
        return to_ndarray(np.ascontiguousarray(data.reshape((-1,) + self.data_shape)), owned=True)

    def getlabel(self) -> Any:
        label = self._current()[1]
        shape = (-1,) if self.label_shape == (1,) else (-1,) + self.label_shape
        return to_ndarray(np.ascontiguousarray(label.reshape(shape)), owned=True)

    def getpad(self) -> int:
        return self._current()[2]

    def getindex(self) -> np.ndarray:
        return self._current()[3]

    def close(self) -> None:
        self._data.close()
        if self._label is not None:
            self._label.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass
