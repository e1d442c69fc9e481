"""``mx.contrib.io``: a Gluon ``DataLoader`` seen as a symbolic ``DataIter``.

Module-API training (``Module.fit``, ``SVRGModule``) reads ``DataBatch``es with
``provide_data``/``provide_label`` and a fixed batch size; a ``DataLoader`` yields
``(data, label)`` pairs whose last one may be short. ``DataLoaderIter`` adapts one to
the other: the first pair fixes names, shapes and batch size, and a short pair is
padded up to that size (``DataBatch.pad`` says by how many rows).
"""
from __future__ import annotations

from typing import Any, Iterator

from .. import ndarray as nd
from ..io import DataDesc, DataIter

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """Iterate a ``gluon.data.DataLoader`` as an ``mx.io.DataIter`` (MXNet 1.9.1's
    ``mx.contrib.io.DataLoaderIter``).

    Parameters
    ----------
    loader : gluon.data.DataLoader
        Yields ``(data, label)`` pairs of NDArrays with the batch on axis 0.
    data_name, label_name : str
        Names of the single data and label input (``provide_data`` / ``provide_label``).
    dtype : str
        Type the batches are cast to (``'float32'`` or ``'float16'``).

    Examples
    --------
    >>> loader = mx.gluon.data.DataLoader(dataset, 32, last_batch='keep')
    >>> for batch in DataLoaderIter(loader):
    ...     batch.data[0].shape, batch.pad
    """

    def __init__(self, loader: Any, data_name: str = "data", label_name: str = "softmax_label",
                 dtype: str = "float32") -> None:
        super().__init__()
        self._loader = loader
        self.dtype = dtype
        # the first pair fixes the shapes every later (possibly short) pair is padded to;
        # the loader is then restarted so iteration begins with that same pair
        data, label = next(iter(loader))
        self.batch_size = data.shape[0]
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._pair: tuple[Any, Any] | None = None
        self._pairs: Iterator[Any] = iter(loader)

    def reset(self) -> None:
        """Restart the loader (a new pass over its sampler)."""
        self._pairs = iter(self._loader)

    def iter_next(self) -> bool:
        """Fetch the next ``(data, label)`` pair; False once the loader is exhausted."""
        self._pair = next(self._pairs, None)
        return self._pair is not None

    def _padded(self, arr: Any) -> list[Any]:
        if self.getpad() == 0:
            return [arr.astype(self.dtype)]
        # as MXNet 1.9.1: the full-size buffer of a short batch has the default float32
        # type (whatever ``dtype`` says); the rows past the real ones are only filler
        full = nd.zeros((self.batch_size,) + tuple(arr.shape[1:]))
        full[:arr.shape[0]] = arr.astype(self.dtype)
        return [full]

    def getdata(self) -> list[Any]:
        """The current data, cast to ``dtype`` and padded to ``batch_size`` rows."""
        assert self._pair is not None, "DataLoaderIter.getdata: no current batch (call iter_next first)"
        return self._padded(self._pair[0])

    def getlabel(self) -> list[Any]:
        """The current label, cast to ``dtype`` and padded to ``batch_size`` rows."""
        assert self._pair is not None, "DataLoaderIter.getlabel: no current batch (call iter_next first)"
        return self._padded(self._pair[1])

    def getpad(self) -> int:
        """Rows of the current batch that only fill it up to ``batch_size``."""
        assert self._pair is not None, "DataLoaderIter.getpad: no current batch (call iter_next first)"
        return int(self.batch_size - self._pair[0].shape[0])

    def getindex(self) -> None:
        """A DataLoader does not report sample indices."""
        return None
