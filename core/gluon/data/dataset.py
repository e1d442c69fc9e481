"""Datasets: indexable, sized collections of samples, and the views built on them.

The views are cheap: ``transform`` calls its function when a sample is read (unless
``lazy=False``), while ``filter``, ``shard``, ``take`` and ``sample`` fix their list of
indices when they are made (a filter reads every sample once, then). A sample that is a
tuple is unpacked into the transform function's arguments, so ``(data, label)``
datasets take ``fn(data, label)``.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ... import ndarray, recordio
from .sampler import FilterSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Base class of datasets: subclasses define ``__getitem__`` (the i-th sample) and
    ``__len__``. A numpy array or an NDArray can be used directly where a dataset is expected.
    """

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")

    def filter(self, fn: Callable[[Any], bool]) -> Dataset:
        """The samples for which ``fn(sample)`` is true.

        ``fn`` sees the samples as this dataset returns them (after a lazy transform, which
        then runs again whenever a filtered sample is read).
        """
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards: int, index: int) -> Dataset:
        """Shard ``index`` of ``num_shards`` contiguous shards whose lengths differ by at
        most one (the first ``len % num_shards`` shards are the longer ones).

        For distributed training shard before shuffling, so each worker gets its own subset.
        """
        # AssertionError for bad arguments here and in ArrayDataset: MXNet's type
        if not 0 <= index < num_shards:
            raise AssertionError(f"shard: index {index} must be in [0, num_shards={num_shards})")
        base, rest = divmod(len(self), num_shards)
        start = base * index + min(index, rest)
        return _SampledDataset(self, SequentialSampler(base + (index < rest), start))

    def take(self, count: int | None) -> Dataset:
        """The first ``count`` samples (all of them when ``count`` is None or too large)."""
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler: Sampler) -> Dataset:
        """The samples at the indices ``sampler`` gives (drawn once, now)."""
        if not isinstance(sampler, Sampler):
            raise TypeError(f"Invalid sampler type: {type(sampler)}. Expected gluon.data.Sampler instead.")
        return _SampledDataset(self, sampler)

    def transform(self, fn: Callable[..., Any], lazy: bool = True) -> Dataset:
        """Each sample passed through ``fn`` (a tuple sample as ``fn(*sample)``).

        Parameters
        ----------
        fn : callable
            The transform.
        lazy : bool, default True
            Transform each sample when it is read; ``False`` transforms all of them now
            (then a random ``fn`` draws once, not once per epoch).
        """
        view = _LazyTransformDataset(self, fn)
        if lazy:
            return view
        return SimpleDataset([view[i] for i in range(len(view))])

    def transform_first(self, fn: Callable[[Any], Any], lazy: bool = True) -> Dataset:
        """Only the first element of each sample passed through ``fn`` (e.g. the data of
        ``(data, label)``); see ``transform``."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over anything with ``len()`` and ``[]`` (a list, an array, ...).

    Parameters
    ----------
    data : sized, indexable
        The samples.
    """

    def __init__(self, data: Any) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data: Any, fn: Callable[..., Any]) -> None:
        self._data = data
        self._fn = fn

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        item = self._data[idx]
        return self._fn(*item) if isinstance(item, tuple) else self._fn(item)


class _TransformFirstClosure:
    # a class, not a closure, so that the transformed dataset pickles
    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self._fn = fn

    def __call__(self, x: Any, *args: Any) -> Any:
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset: Any, sampler: Sampler) -> None:
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(sampler)

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, idx: int) -> Any:
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Several equally long dataset-like objects side by side: sample i is
    ``(a[i], b[i], ...)``, or ``a[i]`` for a single one.

    A 1-D NDArray is converted to numpy first, so its samples are numpy scalars (as in
    MXNet) rather than one-element NDArrays.

    Parameters
    ----------
    *args : sized, indexable
        The arrays (datasets, lists, NDArrays, numpy arrays, ...).
    """

    def __init__(self, *args: Any) -> None:
        if not args:
            raise AssertionError("ArrayDataset needs at least 1 array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise AssertionError(f"All arrays must have the same length; array[0] has length {self._length} "
                                 f"while array[{i}] has {len(data)}.")
            if isinstance(data, ndarray.NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx: int) -> Any:
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self) -> int:
        return self._length


class RecordFileDataset(Dataset):
    """The records of a RecordIO file (``.rec`` with its ``.idx`` beside it), as bytes.

    Parameters
    ----------
    filename : str
        Path of the ``.rec`` file.
    """

    def __init__(self, filename: str) -> None:
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")
        self._pid = os.getpid()

    def __getitem__(self, idx: int) -> Any:
        if self._pid != os.getpid():
            # a forked DataLoader worker opens its own handle: a shared file offset would race
            self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")
            self._pid = os.getpid()
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self) -> int:
        return len(self._record.keys)
