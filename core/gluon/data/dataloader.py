"""``DataLoader``: mini-batches from a Dataset, in worker processes or threads
(MXNet 1.9.1 ``gluon.data.DataLoader``).

With ``num_workers > 0`` the batches are built in forked worker processes and come
back through shared memory (``_workers.py``); up to ``prefetch`` batches are in
flight; results keep the sampler's order. A worker that raises hands its exception to
the main process, which raises it (its type, as MXNet; the worker's traceback as its
cause); one that dies (crash, SIGKILL) or a batch slower than ``timeout``
raises ``RuntimeError`` in the main process instead of hanging. ``thread_pool=True``
uses threads (no copies, GIL-bound). ``pin_memory`` puts the batches on
``cpu_pinned(pin_device_id)``.
"""
from __future__ import annotations

import itertools
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Iterator

import numpy as np

from ... import ndarray as nd
from ...context import Context, cpu_pinned
from ...ndarray import NDArray
from . import sampler as _sampler
from ._workers import NDSlot, WorkerError, WorkerPool

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]


def default_batchify_fn(data: list) -> Any:
    """Collate samples into a batch: NDArrays stacked, tuples field by field, anything
    else through ``numpy.asarray`` (MXNet's rule)."""
    if isinstance(data[0], NDArray):
        return nd.stack(*data)
    if isinstance(data[0], tuple):
        return [default_batchify_fn(list(i)) for i in zip(*data)]
    arr = np.asarray(data)
    return nd.array(arr, dtype=arr.dtype)


def default_mp_batchify_fn(data: list) -> Any:
    """``default_batchify_fn`` with the batch on the ``cpu_shared`` context (MXNet
    puts worker batches into shared memory this way)."""
    if isinstance(data[0], NDArray):
        return nd.array(_np_batchify(data), ctx=Context("cpu_shared", 0), dtype=data[0].dtype)
    if isinstance(data[0], tuple):
        return [default_mp_batchify_fn(list(i)) for i in zip(*data)]
    arr = np.asarray(data)
    return nd.array(arr, dtype=arr.dtype, ctx=Context("cpu_shared", 0))


def _np_batchify(data: list) -> Any:
    """The default collation done with numpy in a worker (no engine round trips);
    the transport turns the arrays into NDArrays in the main process."""
    if isinstance(data[0], NDArray):
        return np.stack([d.asnumpy() for d in data])
    if isinstance(data[0], np.ndarray):
        return np.stack(data)
    if isinstance(data[0], tuple):
        return [_np_batchify(list(i)) for i in zip(*data)]
    return np.asarray(data)


def _worker_default_batchify(data: list) -> Any:
    """The default collation in a worker: the samples are stacked straight into shared
    memory and arrive as NDArrays, as MXNet's do (no NDArray work in the worker)."""
    if isinstance(data[0], tuple):
        return [_worker_default_batchify(list(i)) for i in zip(*data)]
    if isinstance(data[0], NDArray):
        return NDSlot([d.asnumpy() for d in data])
    return NDSlot(data)


def _as_in_context(data: Any, ctx: Context) -> Any:
    if isinstance(data, NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return type(data)(_as_in_context(d, ctx) for d in data)
    return data


class _MultiWorkerIter:
    """One pass over the batch sampler through a ``WorkerPool``."""

    _ids = itertools.count()

    def __init__(self, loader: "DataLoader", pool: WorkerPool) -> None:
        self._loader = loader
        self._pool = pool
        self._id = next(self._ids)
        self._batches = iter(loader._batch_sampler)
        self._sent = 0
        self._rcvd = 0
        self._buffer: dict[int, Any] = {}
        self._ctx = cpu_pinned(loader._pin_device_id) if loader._pin_memory else None
        loader._active[self._id] = self
        try:
            for _ in range(max(1, loader._prefetch)):
                self._push_next()
        except WorkerError as e:
            loader._fail()
            raise RuntimeError(str(e)) from None

    def _push_next(self) -> None:
        indices = next(self._batches, None)
        if indices is None:
            return
        self._pool.submit((self._id, self._sent), indices)
        self._sent += 1

    def __iter__(self) -> "_MultiWorkerIter":
        return self

    def __len__(self) -> int:
        return len(self._loader._batch_sampler)

    def __next__(self) -> Any:
        if self._rcvd == self._sent:
            self._finish()
            raise StopIteration
        try:
            self._push_next()
        except WorkerError as e:
            self._loader._fail()
            raise RuntimeError(str(e)) from None
        deadline = time.monotonic() + self._loader._timeout
        while self._rcvd not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self._loader._fail()
                raise RuntimeError(f"DataLoader: no batch from the workers within timeout={self._loader._timeout} s "
                                   f"(batch {self._rcvd}); the dataset is too slow or a worker hangs. Raise "
                                   f"timeout= or check the dataset.")
            try:
                got = self._pool.receive(min(left, 1.0))
            except WorkerError as e:
                self._loader._fail()
                raise RuntimeError(str(e)) from None
            for (it_id, idx), desc, err, w in got:
                owner = self._loader._active.get(it_id)
                if owner is None:  # an abandoned iterator's batch
                    self._pool.drop(w, desc)
                    continue
                owner._buffer[idx] = (desc, err, w)
        desc, err, w = self._buffer.pop(self._rcvd)
        self._rcvd += 1
        if err is not None:
            self._finish()
            exc, text = err if isinstance(err, tuple) else (None, err)
            where = RuntimeError(f"DataLoader worker raised while building batch {self._rcvd - 1}:\n{text}")
            if exc is not None:   # the dataset's own exception, as MXNet re-raises it
                raise exc from where
            raise where
        return self._pool.consume(w, desc, self._ctx)

    def _finish(self) -> None:
        self._loader._active.pop(self._id, None)
        for desc, _, w in self._buffer.values():
            self._pool.drop(w, desc)
        self._buffer.clear()

    def __del__(self) -> None:
        try:
            self._finish()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class _ThreadIter:
    """One pass with a thread pool (``thread_pool=True``)."""

    def __init__(self, loader: "DataLoader", pool: ThreadPoolExecutor) -> None:
        self._loader = loader
        self._pool = pool
        self._batches = iter(loader._batch_sampler)
        self._futures: list = []
        for _ in range(max(1, loader._prefetch)):
            self._push_next()

    def _push_next(self) -> None:
        indices = next(self._batches, None)
        if indices is not None:
            ds, fn = self._loader._dataset, self._loader._batchify_fn
            self._futures.append(self._pool.submit(lambda ix: fn([ds[i] for i in ix]), indices))

    def __iter__(self) -> "_ThreadIter":
        return self

    def __next__(self) -> Any:
        if not self._futures:
            raise StopIteration
        self._push_next()
        fut = self._futures.pop(0)
        try:
            ret = fut.result(timeout=self._loader._timeout)
        except FutureTimeout:
            raise RuntimeError(f"DataLoader: no batch within timeout={self._loader._timeout} s") from None
        if self._loader._pin_memory:
            ret = _as_in_context(ret, cpu_pinned(self._loader._pin_device_id))
        return ret


class DataLoader:
    """Loads mini-batches from ``dataset``.

    Parameters are MXNet 1.9.1's: ``batch_size``, ``shuffle``, ``sampler``,
    ``last_batch`` ('keep', 'discard', 'rollover'), ``batch_sampler``,
    ``batchify_fn``, ``num_workers`` (worker processes; 0 loads in this process),
    ``pin_memory``/``pin_device_id``, ``prefetch`` (batches in flight, default
    ``2 * num_workers``), ``thread_pool``, ``timeout`` (seconds per batch),
    ``auto_reload`` (start prefetching the next pass at once).
    """

    def __init__(self, dataset: Any, batch_size: int | None = None, shuffle: bool = False, sampler: Any = None,
                 last_batch: str | None = None, batch_sampler: Any = None, batchify_fn: Callable | None = None,
                 num_workers: int = 0, pin_memory: bool = False, pin_device_id: int = 0,
                 prefetch: int | None = None, thread_pool: bool = False, timeout: float = 120,
                 auto_reload: bool = False) -> None:
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        if not timeout > 0:
            raise ValueError(f"DataLoader: timeout must be positive, given {timeout}")
        self._timeout = timeout
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless batch_sampler is specified")
            if sampler is None:
                sampler = _sampler.RandomSampler(len(dataset)) if shuffle else _sampler.SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size, last_batch if last_batch else "keep")
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be specified if batch_sampler is "
                             "specified.")
        self._batch_sampler = batch_sampler
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._user_batchify = batchify_fn
        if batchify_fn is None:
            batchify_fn = default_mp_batchify_fn if self._num_workers > 0 else default_batchify_fn
        self._batchify_fn = batchify_fn
        self._worker_pool: Any = None
        self._active: dict[int, _MultiWorkerIter] = {}
        self.auto_reload = auto_reload
        self._iter: Any = None
        if self.auto_reload:
            self.refresh()

    def _pool(self) -> Any:
        if self._worker_pool is None:
            if self._thread_pool:
                self._worker_pool = ThreadPoolExecutor(self._num_workers, thread_name_prefix="plexnet-dataloader")
            else:
                nd.waitall()  # nothing in flight across the fork
                fn = self._user_batchify if self._user_batchify is not None else _worker_default_batchify
                self._worker_pool = WorkerPool(self._num_workers, self._dataset, fn, self._prefetch)
        return self._worker_pool

    def _fail(self) -> None:
        """A worker died or hung: drop the pool; the next pass starts fresh workers."""
        pool, self._worker_pool = self._worker_pool, None
        self._active.clear()
        if pool is not None and not self._thread_pool:
            pool.close()

    def _prefetch_iter(self) -> Iterator:
        if self._num_workers == 0:
            def same_process_iter() -> Iterator:
                for batch in self._batch_sampler:
                    ret = self._batchify_fn([self._dataset[idx] for idx in batch])
                    if self._pin_memory:
                        ret = _as_in_context(ret, cpu_pinned(self._pin_device_id))
                    yield ret
            return same_process_iter()
        if self._thread_pool:
            return _ThreadIter(self, self._pool())
        return _MultiWorkerIter(self, self._pool())

    def __iter__(self) -> Iterator:
        if self._iter is None:
            self.refresh()
        t = self._iter
        self._iter = None  # one prefetched pass serves one iteration
        yield from t
        if self._iter is None and self.auto_reload:
            self.refresh()

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def refresh(self) -> None:
        """Start a new pass now (its first batches are fetched in the background)."""
        self._iter = self._prefetch_iter()

    def clean(self) -> None:
        """Drop the prefetched pass; the next ``iter`` starts one."""
        self._iter = None

    def close(self) -> None:
        """Stop the worker processes/threads (also done when the loader is collected)."""
        self._iter = None
        pool, self._worker_pool = self._worker_pool, None
        if pool is None:
            return
        if isinstance(pool, ThreadPoolExecutor):
            pool.shutdown(wait=False)
        else:
            pool.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
