"""gluon.data: datasets, samplers, batchify functions, DataLoader with workers."""
from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plexnet as mx
from plexnet.gluon.data import (ArrayDataset, BatchSampler, DataLoader, Dataset, FilterSampler, IntervalSampler,
                                RandomSampler, RecordFileDataset, SequentialSampler, SimpleDataset, batchify)

X = np.arange(60, dtype=np.float32).reshape(20, 3)
Y = np.arange(20)


def _batches(loader):
    return [[b.asnumpy() for b in batch] if isinstance(batch, list) else batch.asnumpy() for batch in loader]


# --- datasets ---------------------------------------------------------------------------

def test_array_dataset_and_transforms():
    ds = ArrayDataset(X, mx.nd.array(Y))
    assert len(ds) == 20
    x, y = ds[3]
    np.testing.assert_array_equal(x, X[3])
    assert y == 3
    t = ds.transform(lambda a, b: (a * 2, b + 1))
    np.testing.assert_array_equal(t[3][0], X[3] * 2)
    assert t[3][1] == 4
    tf = ds.transform_first(lambda a: a - 1, lazy=False)
    assert isinstance(tf, SimpleDataset)
    np.testing.assert_array_equal(tf[5][0], X[5] - 1)
    assert tf[5][1] == 5


def test_array_dataset_length_mismatch():
    with pytest.raises(AssertionError, match="same length"):
        ArrayDataset(X, Y[:5])


def test_filter_shard_take_sample():
    ds = SimpleDataset(list(range(10)))
    assert list(ds.filter(lambda v: v % 3 == 0)) == [0, 3, 6, 9]
    assert [list(ds.shard(3, i)) for i in range(3)] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert list(ds.take(4)) == [0, 1, 2, 3]
    assert list(ds.sample(SequentialSampler(3, start=5))) == [5, 6, 7]


def test_record_file_dataset(tmp_path):
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "d.idx"), str(tmp_path / "d.rec"), "w")
    for i in range(12):
        rec.write_idx(i, f"record-{i}".encode())
    rec.close()
    ds = RecordFileDataset(str(tmp_path / "d.rec"))
    assert len(ds) == 12 and ds[7] == b"record-7"
    # read in two workers (each reopens the file: no shared file offset)
    dl = DataLoader(ds.transform(lambda r: np.frombuffer(r.ljust(12, b" "), np.uint8)), batch_size=3,
                    num_workers=2, timeout=20)
    got = [bytes(row).strip().decode() for b in dl for row in b.asnumpy()]
    dl.close()
    assert got == [f"record-{i}" for i in range(12)]


# --- samplers ---------------------------------------------------------------------------

def test_samplers():
    assert list(SequentialSampler(4)) == [0, 1, 2, 3]
    r = list(RandomSampler(10))
    assert sorted(r) == list(range(10))
    assert list(FilterSampler(lambda v: v > 1, [0, 1, 2, 3])) == [2, 3]
    assert list(IntervalSampler(13, interval=3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    assert list(IntervalSampler(13, interval=3, rollover=False)) == [0, 3, 6, 9, 12]
    assert len(IntervalSampler(13, 3, rollover=False)) == 5
    with pytest.raises(ValueError, match="interval"):
        IntervalSampler(3, 5)


def test_batch_sampler_last_batch_modes():
    # MXNet 1.9.1's documented results
    s = SequentialSampler(10)
    assert list(BatchSampler(s, 3, "keep")) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(BatchSampler(s, 3, "discard")) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    roll = BatchSampler(s, 3, "rollover")
    assert list(roll) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert list(roll) == [[9, 0, 1], [2, 3, 4], [5, 6, 7]]
    with pytest.raises(ValueError, match="last_batch"):
        list(BatchSampler(s, 3, "bogus"))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 30), bs=st.integers(1, 8), last=st.sampled_from(["keep", "discard"]))
def test_loader_batches_concatenate_to_dataset(n, bs, last):
    data = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    dl = DataLoader(ArrayDataset(data), batch_size=bs, last_batch=last)
    got = [b.asnumpy() for b in dl]
    assert len(got) == len(dl)
    keep = n if last == "keep" else n // bs * bs
    if keep:
        np.testing.assert_array_equal(np.concatenate(got), data[:keep])
    assert all(len(b) == bs for b in got[:-1])


# --- batchify ---------------------------------------------------------------------------

def test_batchify_functions():
    st_ = batchify.Stack()([np.ones((2, 3)), np.zeros((2, 3))])
    assert st_.shape == (2, 2, 3) and st_.dtype == np.float64
    with pytest.raises(ValueError, match="Pad"):
        batchify.Stack()([np.ones(2), np.ones(3)])
    p = batchify.Pad(val=-1)([np.array([1, 2]), np.array([3, 4, 5, 6]), np.array([7])]).asnumpy()
    np.testing.assert_array_equal(p, [[1, 2, -1, -1], [3, 4, 5, 6], [7, -1, -1, -1]])
    p2 = batchify.Pad(round_to=3, dtype="float32")([np.ones((2, 1)), np.ones((1, 2))])
    assert p2.shape == (2, 3, 3) and p2.dtype == np.float32
    a = batchify.Append()([np.ones(2), np.ones(3)])
    assert [x.shape for x in a] == [(1, 2), (1, 3)]
    g = batchify.Group(batchify.Stack(), batchify.Pad())([(np.ones(2), [1, 2]), (np.zeros(2), [3])])
    assert g[0].shape == (2, 2) and g[1].asnumpy().tolist() == [[1, 2], [3, 0]]
    with pytest.raises(ValueError, match="2 functions"):
        batchify.Group(batchify.Stack(), batchify.Stack())([(1, 2, 3)])
    assert batchify.AsList()([1, "a"]) == [1, "a"]


# --- DataLoader -------------------------------------------------------------------------

def test_loader_default_batchify_as_mxnet():
    dl = DataLoader(ArrayDataset(X, Y), batch_size=6)
    (x, y), *_ = list(dl)
    assert isinstance(x, mx.nd.NDArray) and x.dtype == np.float32 and x.shape == (6, 3)
    assert y.dtype == np.int64  # numpy labels keep their dtype (np.asarray), as MXNet
    assert len(dl) == 4


@pytest.mark.parametrize("kwargs", [dict(num_workers=2), dict(num_workers=2, thread_pool=True),
                                    dict(num_workers=1, prefetch=0), dict(num_workers=2, pin_memory=True)])
def test_workers_give_the_same_batches(kwargs):
    ref = _batches(DataLoader(ArrayDataset(X, Y), batch_size=4))
    dl = DataLoader(ArrayDataset(X, Y), batch_size=4, timeout=30, **kwargs)
    for _ in range(2):  # the pool serves several epochs
        got = _batches(dl)
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            np.testing.assert_array_equal(g[0], r[0])
            np.testing.assert_array_equal(g[1], r[1])
    if kwargs.get("pin_memory"):
        assert next(iter(dl))[0].context == mx.cpu_pinned(0)
    dl.close()


def test_workers_nd_samples_and_custom_batchify():
    ds = SimpleDataset([mx.nd.array(np.full((2,), i)) for i in range(6)])
    dl = DataLoader(ds, batch_size=3, num_workers=2, timeout=30)
    np.testing.assert_array_equal(np.concatenate(_batches(dl))[:, 0], np.arange(6))
    dl.close()
    seqs = SimpleDataset([np.arange(i + 1) for i in range(5)])
    dl = DataLoader(seqs, batch_size=5, num_workers=2, batchify_fn=batchify.Pad(val=-1), timeout=30)
    (b,) = _batches(dl)
    dl.close()
    assert b.shape == (5, 5) and b[0].tolist() == [0, -1, -1, -1, -1]


def test_two_iterators_and_abandoned_iterator():
    dl = DataLoader(ArrayDataset(X), batch_size=5, num_workers=2, timeout=30)
    it1, it2 = iter(dl), iter(dl)
    a = next(it1).asnumpy()
    b = next(it2).asnumpy()
    np.testing.assert_array_equal(a, b)
    del it1  # abandoned with batches in flight
    rest = [x.asnumpy() for x in it2]
    assert len(rest) == 3
    assert len(_batches(dl)) == 4
    dl.close()


class _Boom(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"bad sample {i}")
        return np.float32(i)


def test_worker_exception_reaches_main_process():
    """The dataset's own exception (its type, as MXNet re-raises it), the worker's
    traceback as its cause; an exception that cannot be pickled becomes a RuntimeError."""
    dl = DataLoader(_Boom(), batch_size=2, num_workers=2, timeout=30)
    with pytest.raises(KeyError, match=r"bad sample 5") as ei:
        list(dl)
    assert isinstance(ei.value.__cause__, RuntimeError)
    assert "while building batch 2" in str(ei.value.__cause__) and "__getitem__" in str(ei.value.__cause__)
    dl.close()
    dl = DataLoader(_Unpicklable(), batch_size=2, num_workers=2, timeout=30)
    with pytest.raises(RuntimeError, match=r"_LocalError: no pickle"):
        list(dl)
    dl.close()


class _Unpicklable(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        class _LocalError(Exception):   # a local class: cannot be pickled
            pass
        raise _LocalError("no pickle")


class _Exit(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 6:
            os._exit(3)
        return np.float32(i)


def test_worker_crash_raises_instead_of_hanging():
    dl = DataLoader(_Exit(), batch_size=2, num_workers=2, timeout=60)
    t = time.monotonic()
    with pytest.raises(RuntimeError, match=r"exited unexpectedly \(exit code 3\)"):
        list(dl)
    assert time.monotonic() - t < 10
    dl.close()


class _Slow(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        time.sleep(0.05)
        return np.float32(i)


@pytest.mark.timeout(30)
def test_sigkilled_worker_raises_within_10s():
    dl = DataLoader(_Slow(), batch_size=2, num_workers=2, timeout=120)
    it = iter(dl)
    next(it)
    victim = dl._worker_pool.pids[0]
    os.kill(victim, signal.SIGKILL)
    t = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"pid {victim}\) exited unexpectedly \(killed by signal SIGKILL\)"):
        for _ in it:
            pass
    assert time.monotonic() - t < 10
    # the loader recovers with fresh workers
    assert len(_batches(dl)) == 32
    dl.close()


def test_timeout():
    class Hang(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(30)
            return np.float32(i)

    dl = DataLoader(Hang(), batch_size=1, num_workers=1, timeout=1)
    t = time.monotonic()
    with pytest.raises(RuntimeError, match="timeout=1"):
        next(iter(dl))
    assert time.monotonic() - t < 5
    dl.close()


def test_argument_errors():
    with pytest.raises(ValueError, match="batch_size must be specified"):
        DataLoader(ArrayDataset(X))
    with pytest.raises(ValueError, match="shuffle must not be specified"):
        DataLoader(ArrayDataset(X), batch_size=2, shuffle=True, sampler=SequentialSampler(20))
    with pytest.raises(ValueError, match="must not be specified if batch_sampler"):
        DataLoader(ArrayDataset(X), batch_size=2, batch_sampler=BatchSampler(SequentialSampler(20), 2))
    with pytest.raises(ValueError, match="timeout must be positive"):
        DataLoader(ArrayDataset(X), batch_size=2, timeout=0)


def test_auto_reload_prefetches():
    dl = DataLoader(ArrayDataset(X), batch_size=10, num_workers=1, auto_reload=True, timeout=30)
    assert dl._iter is not None
    assert len(_batches(dl)) == 2
    assert dl._iter is not None  # next pass already started
    dl.close()


@pytest.mark.timeout(30)
def test_killing_every_worker_between_passes():
    dl = DataLoader(_Slow(), batch_size=2, num_workers=2, timeout=120, prefetch=1)
    it = iter(dl)
    next(it)
    del it
    for pid in dl._worker_pool.pids:
        os.kill(pid, signal.SIGKILL)
    t = time.monotonic()
    with pytest.raises(RuntimeError, match="killed by signal SIGKILL"):
        list(dl)
    assert time.monotonic() - t < 10
    dl.close()
