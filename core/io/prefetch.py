"""``PrefetchingIter``: read batches ahead on background threads (``mx.io.PrefetchingIter``).

Design (what MXNet's version lacked):

* one daemon thread per wrapped iterator fills a bounded queue (``capacity`` batches);
  the thread holds the wrapped iterator, the queue and a stop event, never the
  ``PrefetchingIter`` itself, so dropping the last reference collects it and stops the
  threads (``__del__`` signals them to stop, without joining);
* every blocking call waits with a timeout and re-checks the stop event or that the
  producer is still alive: nothing blocks forever;
* an exception raised by a wrapped iterator is sent through the queue and re-raised by
  the consumer's ``next()``, with its original traceback (plus a note naming the
  worker), instead of killing a thread silently and hanging the consumer;
* ``reset()`` stops the threads, resets the wrapped iterators and starts new threads;
  ``close()`` stops them for good. Both join the threads.
"""
from __future__ import annotations

import queue
import threading
from typing import Any, Sequence

from .base import DataBatch, DataDesc, DataIter

__all__ = ["PrefetchingIter"]

_BATCH, _END, _ERROR = 0, 1, 2
_POLL = 0.05          # seconds between checks while waiting
_JOIN_TIMEOUT = 30.0  # how long close()/reset() wait for a busy wrapped iterator


def _put(q: "queue.Queue[Any]", item: Any, stop: threading.Event) -> bool:
    while not stop.is_set():
        try:
            q.put(item, timeout=_POLL)
            return True
        except queue.Full:
            continue
    return False


def _worker(it: DataIter, q: "queue.Queue[Any]", stop: threading.Event) -> None:
    """Producer loop: one epoch of ``it`` into ``q``; ends with _END or _ERROR."""
    try:
        while not stop.is_set():
            try:
                batch = it.next()
            except StopIteration:
                _put(q, (_END, None), stop)
                return
            if not _put(q, (_BATCH, batch), stop):
                return
    except BaseException as e:  # noqa: BLE001 - handed to the consumer
        _put(q, (_ERROR, e), stop)


class _Producer:
    __slots__ = ("thread", "queue", "stop")

    def __init__(self, it: DataIter, capacity: int, name: str) -> None:
        self.queue: "queue.Queue[Any]" = queue.Queue(maxsize=capacity)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=_worker, args=(it, self.queue, self.stop),
                                       name=name, daemon=True)
        self.thread.start()

    def halt(self, timeout: float | None) -> bool:
        """Stop and join (``timeout`` None: signal only, no join); False if the thread is
        still busy inside the wrapped iterator."""
        self.stop.set()
        while True:  # unblock a producer waiting on a full queue
            try:
                self.queue.get_nowait()
            except queue.Empty:
                break
        if timeout is None:
            return True
        self.thread.join(timeout)
        return not self.thread.is_alive()


class PrefetchingIter(DataIter):
    """Prefetch batches of one or more iterators on background threads.

    Parameters
    ----------
    iters : DataIter or list of DataIter
        With several, each batch concatenates their ``data`` and ``label`` lists; they
        must yield the same number of batches with the same ``pad``.
    rename_data, rename_label : list of dict, optional
        Per iterator, ``{'old name': 'new name'}`` for its ``provide_data``/``provide_label``.
    capacity : int
        Batches each thread may read ahead (default 1, as MXNet).
    """

    def __init__(self, iters: DataIter | Sequence[DataIter], rename_data: Sequence[dict] | None = None,
                 rename_label: Sequence[dict] | None = None, capacity: int = 1) -> None:
        super().__init__()
        if not isinstance(iters, (list, tuple)):
            iters = [iters]
        if len(iters) == 0:
            raise ValueError("PrefetchingIter: needs at least one iterator")
        if int(capacity) < 1:
            raise ValueError(f"PrefetchingIter: capacity must be >= 1, got {capacity}")
        self.iters = list(iters)
        self.n_iter = len(self.iters)
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.capacity = int(capacity)
        self._provide_data = self._renamed("provide_data", rename_data)
        self._provide_label = self._renamed("provide_label", rename_label)
        self.batch_size = self._provide_data[0].shape[0] if self._provide_data else \
            getattr(self.iters[0], "batch_size", 0)
        self.current_batch: DataBatch | None = None
        self._producers: list[_Producer] = []
        self._ended = False
        self._closed = False
        self._start()

    # -- descriptions -------------------------------------------------------------------------
    def _renamed(self, attr: str, renames: Sequence[dict] | None) -> list[DataDesc]:
        out: list[DataDesc] = []
        for i, it in enumerate(self.iters):
            descs = getattr(it, attr)
            r = renames[i] if renames is not None else None
            for x in descs:
                if not isinstance(x, DataDesc):
                    x = DataDesc(*x)
                if r is not None:
                    x = DataDesc(r.get(x.name, x.name), x.shape, x.dtype, x.layout)
                out.append(x)
        return out

    # -- threads ------------------------------------------------------------------------------
    def _start(self) -> None:
        self._ended = False
        self._producers = [_Producer(it, self.capacity, f"plexnet-io-prefetch-{i}")
                           for i, it in enumerate(self.iters)]

    def _halt(self) -> None:
        stuck = [i for i, p in enumerate(self._producers) if not p.halt(_JOIN_TIMEOUT)]
        self._producers = []
        if stuck:
            raise RuntimeError(f"PrefetchingIter: wrapped iterator(s) {stuck} did not return from "
                               f"next() within {_JOIN_TIMEOUT}s; their threads are abandoned")

    def reset(self) -> None:
        if self._closed:
            raise RuntimeError("PrefetchingIter: reset() after close()")
        self._halt()
        for it in self.iters:
            it.reset()
        self.current_batch = None
        self._start()

    def close(self) -> None:
        """Stop the background threads (idempotent); the wrapped iterators stay open."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        self._halt()

    def __del__(self) -> None:
        # signal only, no join: GC can run this inside threading's own locks (a new
        # thread's start), where a join deadlocks (as ImageRecordIter's did)
        if getattr(self, "_closed", True):
            return
        self._closed = True
        for p in getattr(self, "_producers", ()):
            p.halt(None)

    # -- consuming ----------------------------------------------------------------------------
    def _get(self, i: int) -> tuple[int, Any]:
        p = self._producers[i]
        while True:
            try:
                return p.queue.get(timeout=_POLL)
            except queue.Empty:
                if not p.thread.is_alive() and p.queue.empty():
                    # every exit path of _worker queues _END/_ERROR unless stopped
                    raise RuntimeError(f"PrefetchingIter: worker {i} exited without a result") from None

    def iter_next(self) -> bool:
        if self._closed:
            raise RuntimeError("PrefetchingIter: next() after close()")
        if self._ended:
            return False
        items = [self._get(i) for i in range(self.n_iter)]
        errors = [(i, v) for i, (kind, v) in enumerate(items) if kind == _ERROR]
        if errors:
            self._ended = True
            i, err = errors[0]
            if hasattr(err, "add_note"):
                err.add_note(f"(raised in PrefetchingIter's worker thread for iterator {i}: "
                             f"{type(self.iters[i]).__name__})")
            raise err
        ends = [kind == _END for kind, _ in items]
        if any(ends):
            self._ended = True
            if not all(ends):
                raise RuntimeError("PrefetchingIter: the wrapped iterators yield different numbers "
                                   f"of batches (ended: {ends})")
            return False
        batches = [b for _, b in items]
        pads = {b.pad for b in batches}
        if len(pads) != 1:
            self._ended = True
            raise RuntimeError(f"PrefetchingIter: the wrapped iterators disagree on pad: {pads}")
        self.current_batch = DataBatch(
            sum([list(b.data) for b in batches], []),
            sum([list(b.label or []) for b in batches], []),
            batches[0].pad, batches[0].index,
            provide_data=self._provide_data, provide_label=self._provide_label)
        return True

    def next(self) -> DataBatch:
        if self.iter_next():
            assert self.current_batch is not None
            return self.current_batch
        raise StopIteration

    def getdata(self) -> list[Any]:
        return self.current_batch.data  # type: ignore[union-attr,return-value]

    def getlabel(self) -> list[Any]:
        return self.current_batch.label  # type: ignore[union-attr,return-value]

    def getindex(self) -> Any:
        return self.current_batch.index  # type: ignore[union-attr]

    def getpad(self) -> int:
        return self.current_batch.pad  # type: ignore[union-attr,return-value]
