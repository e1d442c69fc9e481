"""The data iterator contract: ``DataDesc``, ``DataBatch``, ``DataIter`` (MXNet 1.x ``mx.io``).

Iterators work on numpy internally and hand out NDArrays at the boundary: the arrays of
a ``DataBatch`` (``data``, ``label``) are lists of ``plexnet.nd.NDArray``.
"""
from __future__ import annotations

import warnings
from collections import namedtuple
from typing import Any, Iterator, Sequence

import numpy as np

from ..base import MXNetError

__all__ = ["DataDesc", "DataBatch", "DataIter", "ResizeIter", "to_ndarray", "to_numpy", "IterDataError"]

mx_real_t = np.float32


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one data or label input.

    As in MXNet this is a ``(name, shape)`` namedtuple (so ``name, shape = desc`` works
    and equality looks at name and shape only) with ``dtype`` and ``layout`` attributes.
    ``layout`` says how to read the axes: ``'NCHW'`` for images (N = batch axis),
    ``'NTC'`` for sequences.
    """

    def __new__(cls, name: str, shape: Sequence[int], dtype: Any = mx_real_t,
                layout: str = "NCHW") -> "DataDesc":
        ret = super().__new__(cls, name, tuple(shape))
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """The batch-size axis of ``layout`` (``layout.find('N')``; 0 when ``None``).

        -1 means the layout has no batch axis: the whole array is copied to every device
        under data parallelism.
        """
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes: Sequence[tuple[str, Sequence[int]]],
                 types: Sequence[tuple[str, Any]] | None) -> list["DataDesc"]:
        """``DataDesc`` list from ``[(name, shape)]`` and optionally ``[(name, dtype)]``."""
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch:
    """One batch: ``data`` and ``label`` (lists of NDArrays), ``pad`` (examples at the end
    that only fill the batch up), ``index`` (example ids, numpy), ``bucket_key``,
    ``provide_data``/``provide_label`` (lists of ``DataDesc``)."""

    def __init__(self, data: Sequence[Any] | None, label: Sequence[Any] | None = None,
                 pad: int | None = None, index: Any = None, bucket_key: Any = None,
                 provide_data: list[DataDesc] | None = None,
                 provide_label: list[DataDesc] | None = None) -> None:
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError(f"DataBatch: data must be a list of NDArrays, got {type(data).__name__}")
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError(f"DataBatch: label must be a list of NDArrays, got {type(label).__name__}")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self) -> str:
        data_shapes = [d.shape for d in self.data] if self.data else None
        label_shapes = [lab.shape for lab in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"

    __repr__ = __str__


class DataIter:
    """Base class of data iterators (``mx.io.DataIter``).

    Subclasses implement ``iter_next`` (advance; False at the end) and ``getdata``,
    ``getlabel``, ``getpad``, ``getindex`` for the current batch, or override ``next``.
    They describe their inputs by overriding ``provide_data`` / ``provide_label`` or by
    keeping the lists in ``_provide_data`` / ``_provide_label``. ``reset`` rewinds to the
    start of the data. ``close`` frees threads and files (also done on garbage
    collection); iterators are context managers.
    """

    #: whether the batches ``next()`` builds carry ``provide_data`` / ``provide_label``
    #: (the file iterators' do; MXNet's Python ``DataIter.next`` leaves them None)
    _batches_carry_descs = False
    #: whether ``getdata()`` / ``getlabel()`` return one NDArray rather than a list (MXNet's
    #: C++ iterators, ``MXDataIter``, whose ``next`` wraps each in a one-element list)
    _get_returns_array = False

    def __init__(self, batch_size: int = 0) -> None:
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[DataBatch]:
        return self

    def reset(self) -> None:
        """Rewind to the beginning of the data."""

    def next(self) -> DataBatch:
        """The next batch; ``StopIteration`` at the end of the data."""
        if not self.iter_next():
            raise StopIteration
        data, label = self.getdata(), self.getlabel()
        if self._get_returns_array:
            data, label = [data], [label]
        batch = DataBatch(data=data, label=label, pad=self.getpad(), index=self.getindex())
        if self._batches_carry_descs:
            batch.provide_data, batch.provide_label = self.provide_data, self.provide_label
        return batch

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        """Move to the next batch; whether there was one."""
        raise NotImplementedError(f"{type(self).__name__} does not implement iter_next()")

    def getdata(self) -> list[Any]:
        """Data of the current batch (list of NDArrays)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement getdata()")

    def getlabel(self) -> list[Any] | None:
        """Label of the current batch (list of NDArrays); None here, as MXNet's base class, for
        iterators without labels that define only ``iter_next``/``getdata`` (gan/dcgan.py's
        ``RandIter``)."""
        return None

    def getindex(self) -> Any:
        """Example indices of the current batch (numpy array) or None."""
        return None

    def getpad(self) -> int:
        """Number of padding examples at the end of the current batch."""
        return 0

    @property
    def provide_data(self) -> list[DataDesc]:
        """``DataDesc`` of each data input."""
        try:
            return self._provide_data  # type: ignore[attr-defined]
        except AttributeError:
            raise NotImplementedError(f"{type(self).__name__} does not implement provide_data") from None

    @provide_data.setter
    def provide_data(self, value: list[DataDesc]) -> None:
        # MXNet's DataIter has no such property: subclasses assign plain attributes
        self._provide_data = value

    @property
    def provide_label(self) -> list[DataDesc]:
        """``DataDesc`` of each label input."""
        try:
            return self._provide_label  # type: ignore[attr-defined]
        except AttributeError:
            raise NotImplementedError(f"{type(self).__name__} does not implement provide_label") from None

    @provide_label.setter
    def provide_label(self, value: list[DataDesc]) -> None:
        self._provide_label = value

    def close(self) -> None:
        """Release threads and files held by the iterator (idempotent)."""

    def __enter__(self) -> "DataIter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class ResizeIter(DataIter):
    """Make ``data_iter`` last ``size`` batches per epoch (``mx.io.ResizeIter``): it is reset
    and restarted when it runs out early, and cut short when it has more."""

    def __init__(self, data_iter: DataIter, size: int, reset_internal: bool = True) -> None:
        super().__init__()
        self.data_iter = data_iter
        self.size = int(size)
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch: DataBatch | None = None
        self._provide_data = data_iter.provide_data
        self._provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self) -> None:
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self) -> bool:
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True

    def getdata(self) -> list[Any]:
        return self.current_batch.data  # type: ignore[union-attr]

    def getlabel(self) -> list[Any]:
        return self.current_batch.label  # type: ignore[union-attr]

    def getindex(self) -> Any:
        return self.current_batch.index  # type: ignore[union-attr]

    def getpad(self) -> int:
        return self.current_batch.pad  # type: ignore[union-attr]

    def close(self) -> None:
        self.data_iter.close()


# -- the numpy <-> NDArray boundary ---------------------------------------------------------

def to_ndarray(a: np.ndarray, owned: bool = False) -> Any:
    """An NDArray (on ``cpu``) holding ``a``'s values and dtype.

    ``owned=True`` says that nobody else holds or will write ``a`` (a freshly built batch),
    so it is wrapped without a copy.
    """
    from .. import ndarray as nd
    from ..context import cpu
    if owned and a.flags.c_contiguous and a.flags.writeable:
        view = getattr(nd, "from_numpy_view", None)
        if view is not None:
            return view(a, cpu())
    return nd.array(a, ctx=cpu(), dtype=a.dtype)


def to_numpy(x: Any) -> np.ndarray:
    """numpy array of an NDArray (``asnumpy``) or anything array-like."""
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return np.asarray(x)


def warn_unknown_args(name: str, kwargs: dict[str, Any]) -> None:
    """MXNet's C++ iterators (dmlc parameters parsed with unknown keys allowed) ignore an
    argument they do not know (MXNet's own test_io passes ``and_mirror=``); plexnet ignores
    it too but says so, as a typo would otherwise pass unnoticed."""
    if kwargs:
        warnings.warn(f"{name}: ignoring unknown argument(s) {sorted(kwargs)} (as MXNet does)", stacklevel=3)


class IterDataError(MXNetError, ValueError):
    """Bad data or parameters met by a file iterator: MXNet's C++ iterators raise ``MXNetError``
    (its test_io expects it); a ``ValueError`` too, as plexnet raised before."""
