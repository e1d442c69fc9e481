"""PrefetchingIter: same batches as the wrapped iterators, errors re-raised in the
consumer with their traceback, clean shutdown (no leaked threads, no hang)."""
from __future__ import annotations

import gc
import threading
import time
import traceback
import weakref

import numpy as np
import pytest

from plexnet.io import DataBatch, DataDesc, DataIter, NDArrayIter, PrefetchingIter

pytestmark = pytest.mark.timeout(60)


def _vals(it):
    return [(b.data[0].asnumpy().tolist(), [lab.asnumpy().tolist() for lab in b.label], b.pad) for b in it]


def test_same_batches_as_the_wrapped_iterator(no_leaked_threads):
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    ref = _vals(NDArrayIter(x, x[:, 0], 3))
    p = PrefetchingIter(NDArrayIter(x, x[:, 0], 3))
    assert p.batch_size == 3 and p.provide_data == [DataDesc("data", (3, 2))]
    for _ in range(3):
        assert _vals(p) == ref
        p.reset()
    p.close()


def test_several_iterators_and_renames(no_leaked_threads):
    a = NDArrayIter(np.zeros((6, 2), np.float32), np.zeros(6), 2)
    b = NDArrayIter(np.ones((6, 3), np.float32), np.ones(6), 2)
    with PrefetchingIter([a, b], rename_data=[{"data": "d1"}, {"data": "d2"}], capacity=3) as p:
        assert [d.name for d in p.provide_data] == ["d1", "d2"]
        assert [d.name for d in p.provide_label] == ["softmax_label", "softmax_label"]
        batches = list(p)
        assert len(batches) == 3
        assert [d.shape for d in batches[0].data] == [(2, 2), (2, 3)]
        assert len(batches[0].label) == 2
        assert batches[0].provide_data[1].name == "d2"


def test_mismatched_lengths_are_an_error(no_leaked_threads):
    a = NDArrayIter(np.zeros((6, 2), np.float32), batch_size=2)
    b = NDArrayIter(np.zeros((4, 2), np.float32), batch_size=2)
    with PrefetchingIter([a, b]) as p:
        next(p), next(p)
        with pytest.raises(RuntimeError, match="different numbers"):
            next(p)


class _Numbers(DataIter):
    """Batches ``[1]``, ``[2]`` ... (``data`` of shape (1,), no label); subclasses' ``next``
    counts with ``self.i``."""

    def __init__(self):
        super().__init__(1)
        self.i = 0

    @property
    def provide_data(self):
        return [DataDesc("data", (1,))]

    @property
    def provide_label(self):
        return []

    def reset(self):
        self.i = 0


class Exploding(_Numbers):
    """Yields ``ok`` batches, then raises from a helper function."""

    def __init__(self, ok=2):
        super().__init__()
        self.ok = ok

    def next(self):
        self.i += 1
        if self.i > self.ok:
            _deep_failure(self.i)
        return DataBatch([np.array([self.i])], [], pad=0)


def _deep_failure(i):
    raise ValueError(f"bad record {i}")


def test_worker_error_reraised_with_original_traceback(no_leaked_threads):
    p = PrefetchingIter(Exploding(ok=2))
    assert [int(b.data[0][0]) for b in (next(p), next(p))] == [1, 2]
    with pytest.raises(ValueError, match="bad record 3") as ei:
        next(p)
    names = [f.name for f in traceback.extract_tb(ei.value.__traceback__)]
    assert "_deep_failure" in names and "_worker" in names
    notes = getattr(ei.value, "__notes__", [])
    assert not notes or "worker thread" in notes[0]
    with pytest.raises(StopIteration):  # ended until reset
        next(p)
    p.reset()  # and usable again
    assert int(next(p).data[0][0]) == 1
    p.close()


class Slow(_Numbers):
    def __init__(self, n=1000, delay=0.01):
        super().__init__()
        self.n, self.delay = n, delay
        self.calls = 0

    def next(self):
        self.calls += 1
        time.sleep(self.delay)
        self.i += 1
        if self.i > self.n:
            raise StopIteration
        return DataBatch([np.array([self.i])], [], pad=0)


def test_bounded_read_ahead(no_leaked_threads):
    s = Slow(delay=0.001)
    with PrefetchingIter(s, capacity=2) as p:
        next(p)
        time.sleep(0.2)
        # consumed 1, queue holds 2, the worker blocks on the 4th
        assert s.calls <= 4


def test_reset_mid_epoch_restarts_cleanly(no_leaked_threads):
    s = Slow(n=5, delay=0.005)
    with PrefetchingIter(s, capacity=3) as p:
        next(p), next(p)
        p.reset()
        assert [int(b.data[0][0]) for b in p] == [1, 2, 3, 4, 5]


def test_close_while_worker_blocked_on_full_queue(no_leaked_threads):
    p = PrefetchingIter(Slow(delay=0), capacity=1)
    time.sleep(0.05)  # the worker now waits on the full queue
    t0 = time.monotonic()
    p.close()
    assert time.monotonic() - t0 < 2
    with pytest.raises(RuntimeError, match="close"):
        next(p)


def test_garbage_collection_stops_threads(no_leaked_threads):
    p = PrefetchingIter(Slow(delay=0), capacity=1)
    next(p)
    ref = weakref.ref(p)
    del p
    gc.collect()
    assert ref() is None


def test_consumer_never_hangs_when_a_worker_dies(monkeypatch, no_leaked_threads):
    """A producer that vanishes without reporting (cannot happen in _worker, simulated
    here) is detected instead of blocking forever."""
    p = PrefetchingIter(Slow(n=3, delay=0))
    list(p)  # epoch over; the worker thread exited after queueing _END
    p._ended = False  # pretend we still expect batches
    with pytest.raises(RuntimeError, match="exited without a result"):
        p.next()
    p.close()


def test_thread_count_is_stable_over_many_epochs(no_leaked_threads):
    x = np.arange(8, dtype=np.float32)
    p = PrefetchingIter([NDArrayIter(x, batch_size=3), NDArrayIter(x, batch_size=3)])
    before = threading.active_count()
    for _ in range(20):
        list(p)
        p.reset()
    assert threading.active_count() <= before
    p.close()
