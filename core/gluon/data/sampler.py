"""Samplers: iterables of dataset indices (or of index batches) with a known length.

``RandomSampler`` shuffles with numpy's global generator, as MXNet does, so
``np.random.seed`` reproduces MXNet's orders.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler", "IntervalSampler"]

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class of samplers: subclasses define ``__iter__`` and ``__len__``."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class SequentialSampler(Sampler):
    """``start, start + 1, ..., start + length - 1``.

    Parameters
    ----------
    length : int
        Number of indices.
    start : int, default 0
        The first index.
    """

    def __init__(self, length: int, start: int = 0) -> None:
        self._length = length
        self._start = start

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._start, self._start + self._length))

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """A fresh permutation of ``[0, length)`` on every pass.

    Parameters
    ----------
    length : int
        Number of indices.
    """

    def __init__(self, length: int) -> None:
        self._length = length

    def __iter__(self) -> Iterator[Any]:
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices)

    def __len__(self) -> int:
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true, found
    once, when the sampler is made.

    Parameters
    ----------
    fn : callable
        Sample -> bool.
    dataset : Dataset
        The dataset to filter.
    """

    def __init__(self, fn: Callable[[Any], bool], dataset: Any) -> None:
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices)

    def __len__(self) -> int:
        return len(self._indices)


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler
        The indices to group.
    batch_size : int
        Indices per batch.
    last_batch : {'keep', 'discard', 'rollover'}, default 'keep'
        What happens to a last, short batch: returned as it is ('keep'), dropped
        ('discard'), or put in front of the next pass's first batch ('rollover').

    Examples
    --------
    >>> list(BatchSampler(SequentialSampler(10), 3, 'keep'))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    """

    def __init__(self, sampler: Sampler, batch_size: int, last_batch: str = "keep") -> None:
        self._sampler = sampler
        self._batch_size = batch_size
        self._last_batch = last_batch
        self._prev: list[Any] = []    # the rolled-over indices of the last pass

    def _bad_mode(self) -> ValueError:
        # raised when used, not when made, as MXNet does
        return ValueError(f"last_batch must be one of 'keep', 'discard', or 'rollover', but got {self._last_batch}")

    def __iter__(self) -> Iterator[list[Any]]:
        batch, self._prev = self._prev, []
        for index in self._sampler:
            batch.append(index)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if not batch:
            return
        if self._last_batch not in _LAST_BATCH:
            raise self._bad_mode()
        if self._last_batch == "keep":
            yield batch
        elif self._last_batch == "rollover":
            self._prev = batch

    def __len__(self) -> int:
        n = len(self._sampler)
        if self._last_batch == "keep":
            return -(-n // self._batch_size)
        if self._last_batch == "discard":
            return n // self._batch_size
        if self._last_batch == "rollover":
            return (len(self._prev) + n) // self._batch_size
        raise self._bad_mode()


class IntervalSampler(Sampler):
    """``[0, length)`` at a fixed interval: 0, interval, 2 * interval, ...; with ``rollover``
    it goes on from 1, then 2, ..., so every index comes exactly once.

    MXNet 1.9.1 has it in ``gluon.contrib.data``; MXNet 2.x in ``gluon.data``.

    Parameters
    ----------
    length : int
        Number of indices.
    interval : int
        Step between two indices (at most ``length``).
    rollover : bool, default True
        Start again from the skipped offsets until all indices are visited; otherwise
        stop at the end of the first sweep.

    Examples
    --------
    >>> list(IntervalSampler(13, interval=3))
    [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    >>> list(IntervalSampler(13, interval=3, rollover=False))
    [0, 3, 6, 9, 12]
    """

    def __init__(self, length: int, interval: int, rollover: bool = True) -> None:
        if not 0 < interval <= length:
            raise ValueError(f"IntervalSampler: interval {interval} must be in (0, length={length}]")
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self) -> Iterator[int]:
        for offset in range(self._interval if self._rollover else 1):
            yield from range(offset, self._length, self._interval)

    def __len__(self) -> int:
        # MXNet returns length even without rollover, which is not what iterating gives
        return self._length if self._rollover else len(range(0, self._length, self._interval))
