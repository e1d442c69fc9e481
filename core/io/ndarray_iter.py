"""``NDArrayIter``: batches over in-memory arrays (MXNet 1.x ``mx.io.NDArrayIter``)."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from .base import DataBatch, DataDesc, DataIter, to_ndarray
from .libsvm_iter import HostCSR

__all__ = ["NDArrayIter"]

_HANDLES = ("pad", "discard", "roll_over")


def _to_host(v: Any, name: str) -> np.ndarray:
    """numpy copy of an input; like ``mx.nd.array`` numpy/list inputs become float32."""
    stype = getattr(v, "stype", "default")
    if stype == "csr" or getattr(v, "format", None) == "csr" and type(v).__module__.startswith("scipy.sparse"):
        return HostCSR.of(v)  # type: ignore[return-value] - batches are cut as CSRNDArrays
    if hasattr(v, "asnumpy") and hasattr(v, "context"):  # an NDArray keeps its dtype
        if stype != "default":
            raise TypeError(f"NDArrayIter: {stype} input {name!r} is not supported (csr is); densify it first")
        return np.ascontiguousarray(v.asnumpy())
    if hasattr(v, "tocsr") or type(v).__module__.startswith("scipy.sparse"):
        raise TypeError(f"NDArrayIter: sparse input {name!r} is not supported (csr is); convert it with tocsr()")
    try:
        return np.array(v, dtype=np.float32, order="C")  # a copy: data_list views write into it
    except (TypeError, ValueError) as e:
        raise TypeError(f"Invalid type '{type(v).__name__}' for {name}, should be NDArray, "
                        f"numpy.ndarray or array-like") from e


def _init_data(data: Any, allow_empty: bool, default_name: str) -> list[tuple[str, np.ndarray]]:
    """Canonical ``[(name, array)]``, sorted by name as MXNet does."""
    if data is None:
        if not allow_empty:
            raise ValueError("NDArrayIter: data must not be None")
        data = []
    if not isinstance(data, (list, tuple, dict)):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not allow_empty and len(data) == 0:
            raise ValueError("NDArrayIter: data must not be empty")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([(f"_{i}_{default_name}", d) for i, d in enumerate(data)])
    if not isinstance(data, dict):  # pragma: no cover - guarded above
        raise TypeError("Input must be NDArray, numpy.ndarray, a list of them or dict with them as values")
    out = [(str(k), _to_host(v, str(k))) for k, v in data.items()]
    return sorted(out, key=lambda kv: kv[0])


def _take(v: Any, rows: np.ndarray, axis: int) -> Any:
    """``v``'s examples ``rows`` along ``axis`` (rows of a CSR matrix)."""
    if isinstance(v, HostCSR):
        return v.take(rows)
    return np.ascontiguousarray(np.take(v, rows, axis=axis))


def _as_nd(v: Any) -> Any:
    return v.to_nd() if isinstance(v, HostCSR) else to_ndarray(v, owned=True)


class NDArrayIter(DataIter):
    """Iterate over NDArrays, numpy arrays or array-likes (``mx.io.NDArrayIter``).

    Parameters
    ----------
    data, label : array, list of arrays or dict of name -> array
        Inputs; a single array is named ``data_name``/``label_name``, a list
        ``_0_<name>, _1_<name>, ...``. Entries are sorted by name. numpy/list inputs
        are converted to float32 (as ``mx.nd.array`` does); NDArrays keep their dtype.
    batch_size : int
    shuffle : bool
        Shuffle with numpy's global RNG (``np.random.shuffle``), once at construction and
        at every ``reset()``: seeding numpy gives the same order as MXNet.
    last_batch_handle : 'pad' | 'discard' | 'roll_over'
        ``'pad'``: the last batch is filled with examples from the start (``pad`` tells how
        many); ``'discard'``: a short last batch is dropped; ``'roll_over'``: the short
        last batch is kept for the next epoch, whose first batch is those examples
        followed by the new epoch's first ones. As in MXNet, that batch reports
        ``pad = number of rolled-over examples`` (though none of them is padding).
    data_name, label_name : str
    layout : str
        Where the batch axis is (``layout.find('N')``).
    """

    def __init__(self, data: Any, label: Any = None, batch_size: int = 1, shuffle: bool = False,
                 last_batch_handle: str = "pad", data_name: str = "data",
                 label_name: str = "softmax_label", layout: str = "NCHW") -> None:
        super().__init__(batch_size)
        if int(batch_size) < 1:
            raise ValueError(f"NDArrayIter: batch_size must be >= 1, got {batch_size}")
        if last_batch_handle not in _HANDLES:
            raise ValueError(f"NDArrayIter: last_batch_handle must be one of {_HANDLES}, "
                             f"got {last_batch_handle!r}")
        self.layout = layout
        self._axis = DataDesc.get_batch_axis(layout)
        if self._axis < 0:
            raise ValueError(f"NDArrayIter: layout {layout!r} has no batch axis 'N'")
        # host copies, never permuted; ``data``/``label`` give MXNet's NDArray view of them
        self._data = _init_data(data, allow_empty=False, default_name=data_name)
        self._label = _init_data(label, allow_empty=True, default_name=label_name)
        self._nd_view: tuple[np.ndarray, dict] | None = None
        self._views: list[Any] = []  # zero-copy NDArrays over the host arrays (see _view)
        sizes = {k: v.shape[self._axis] if v.ndim > self._axis else None
                 for k, v in self._data + self._label}
        if any(s is None for s in sizes.values()):
            raise ValueError(f"NDArrayIter: every input needs a batch axis {self._axis} "
                             f"(layout {layout!r}); shapes: "
                             f"{ {k: v.shape for k, v in self._data + self._label} }")
        # MXNet counts the examples of the first data array; longer labels are only read up
        # to that count (MXNet's own tests rely on it), shorter ones cannot be batched
        self.num_data = next(iter(sizes.values()))
        if any(v < self.num_data for v in sizes.values()):
            raise ValueError(f"NDArrayIter: every input needs at least as many examples as the first data "
                             f"array ({self.num_data}), got {sizes}")
        if last_batch_handle != "discard" and any(isinstance(v, HostCSR) for _, v in self._data + self._label):
            raise NotImplementedError("`NDArrayIter` only supports ``CSRNDArray`` with `last_batch_handle` set to "
                                      "`discard`.")
        if last_batch_handle == "roll_over" and 0 < self.num_data < batch_size:
            # MXNet 1.9.1 accepts it and fails in its second epoch (slicing past the end)
            raise ValueError(f"NDArrayIter: 'roll_over' needs at least batch_size={batch_size} "
                             f"examples, got {self.num_data}")
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.last_batch_handle = last_batch_handle
        self.idx = np.arange(self.num_data)
        # positions into the original arrays of the current (shuffled) order: MXNet
        # permutes the arrays themselves at every shuffle; composing permutations gives
        # the same batches without copying the data.
        self._perm = np.arange(self.num_data)
        self.cursor = -self.batch_size
        self._cache: np.ndarray | None = None  # roll_over: rows kept for the next epoch
        self.reset()
        if self.shuffle:
            # MXNet shuffles the arrays themselves here; doing it once lets data_list (and
            # data/label until the next shuffle) be the very arrays the batches come from
            self._data = [(k, _take(v, self._perm, self._axis)) for k, v in self._data]
            self._label = [(k, _take(v, self._perm, self._axis)) for k, v in self._label]
            self._perm = np.arange(self.num_data)
        self._perm0 = self._perm  # MXNet's data_list keeps the arrays as they were after __init__
        self.num_source = len(self._data) + len(self._label)

    # -- MXNet's attributes: [(name, NDArray)] in the current (shuffled) order ----------------
    def _view(self, which: str, perm: np.ndarray | None = None) -> list[tuple[str, Any]]:
        perm = self._perm if perm is None else perm
        if self._nd_view is None or self._nd_view[0] is not perm:
            self._nd_view = (perm, {})
        cache = self._nd_view[1]
        if which not in cache:
            items = self._data if which == "data" else self._label
            if perm is self._perm0:
                # the arrays in their post-construction order are the ones batches are cut
                # from: hand out zero-copy views, so writes through them reach the batches
                # (example/dec rewrites data_list[1][:] = targets between iterations)
                views = [(k, v.to_nd() if isinstance(v, HostCSR) else to_ndarray(v, owned=True)) for k, v in items]
                self._views.extend(a for (_, a), (_k, v) in zip(views, items) if not isinstance(v, HostCSR))
                cache[which] = views
            else:
                cache[which] = [(k, _as_nd(_take(v, perm, self._axis))) for k, v in items]
        return list(cache[which])

    def _assign(self, which: str, items: Any) -> None:
        host = [(str(k), _to_host(v, str(k))) for k, v in items]
        if which == "data":
            self._data = host
        else:
            self._label = host
        self._perm = self._perm0 = np.arange(self.num_data)  # the assigned arrays are in their own order
        self._nd_view = None
        self._views = []

    @property
    def data(self) -> list[tuple[str, Any]]:
        """``[(name, NDArray)]`` of the data arrays, in the current (shuffled) order, as MXNet's."""
        return self._view("data")

    @data.setter
    def data(self, items: Any) -> None:
        self._assign("data", items)

    @property
    def label(self) -> list[tuple[str, Any]]:
        """``[(name, NDArray)]`` of the label arrays, in the current (shuffled) order, as MXNet's."""
        return self._view("label")

    @label.setter
    def label(self, items: Any) -> None:
        self._assign("label", items)

    @property
    def data_list(self) -> list[Any]:
        """The data then the label NDArrays in their order after construction (MXNet's
        ``data_list``, which later shuffles do not update)."""
        return [v for _, v in self._view("data", self._perm0)] + [v for _, v in self._view("label", self._perm0)]

    # -- descriptions -----------------------------------------------------------------------
    def _descs(self, items: list[tuple[str, np.ndarray]]) -> list[DataDesc]:
        ax = self._axis
        return [DataDesc(k, tuple(v.shape[:ax]) + (self.batch_size,) + tuple(v.shape[ax + 1:]),
                         v.dtype.type, layout=self.layout) for k, v in items]

    @property
    def provide_data(self) -> list[DataDesc]:
        return self._descs(self._data)

    @property
    def provide_label(self) -> list[DataDesc]:
        return self._descs(self._label)

    # -- iteration --------------------------------------------------------------------------
    def hard_reset(self) -> None:
        """Back to the start, dropping any rolled-over examples."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache = None

    def reset(self) -> None:
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == "roll_over" and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            # (cursor - num_data) is minus the number of examples kept for this batch
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self) -> bool:
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        rows = self._batch_rows()
        if len(rows) != self.batch_size:
            # short last batch ('discard' / 'roll_over'): keep it for the next epoch
            self._cache = rows
            raise StopIteration
        pad = self.getpad()
        if self.last_batch_handle == "roll_over" and self.cursor < 0:
            self._cache = None
        return DataBatch(data=self._gather(self._data, rows), label=self._gather(self._label, rows),
                         pad=pad, index=None)

    def _batch_rows(self) -> np.ndarray:
        """Positions (into the original arrays) of the examples of the current batch."""
        if self.cursor >= self.num_data:
            raise RuntimeError("NDArrayIter: the iterator is at its end; call reset()")
        bs, n, cur = self.batch_size, self.num_data, self.cursor
        if self.last_batch_handle == "roll_over" and -bs < cur < 0:
            if self._cache is None:
                raise RuntimeError("NDArrayIter: the next epoch should have rolled-over data")
            return np.concatenate([self._cache, self._perm[:cur + bs]])
        if self.last_batch_handle == "pad" and cur + bs > n:
            pad = cur + bs - n
            return np.concatenate([self._perm[cur:], np.resize(self._perm, pad)])
        return self._perm[cur:min(cur + bs, n)]

    def _gather(self, items: list[tuple[str, np.ndarray]], rows: np.ndarray) -> list[Any]:
        for a in self._views:  # pending writes through data_list / data / label land first
            a.wait_to_read()
        out = []
        for _, v in items:
            if isinstance(v, HostCSR):
                out.append(v.take(rows).to_nd())
                continue
            if self._axis == 0:
                part = v[rows]  # fancy indexing: a fresh array
            else:
                part = np.ascontiguousarray(np.take(v, rows, axis=self._axis))
            out.append(to_ndarray(part, owned=True))
        return out

    def getdata(self) -> list[Any]:
        return self._gather(self._data, self._batch_rows())

    def getlabel(self) -> list[Any]:
        return self._gather(self._label, self._batch_rows())

    def getpad(self) -> int:
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self) -> None:
        np.random.shuffle(self.idx)
        self._perm = self._perm[self.idx]
