"""ImageRecordIter reuses batch arrays only once nothing references them."""
from __future__ import annotations

import gc
import os

import numpy as np
import pytest

pytest.importorskip("cv2", reason="ImageRecordIter needs OpenCV (the image extra)")

import plexnet as mx  # noqa: E402
from plexnet.io.image_record_iter import _BufferPool  # noqa: E402

REC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "aug.rec")
KW = dict(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=2, resize=20, rand_crop=True, rand_mirror=True,
          mean_r=1.0, preprocess_threads=2, prefetch_buffer=1)


def test_batches_kept_by_the_user_are_never_overwritten():
    with mx.io.ImageRecordIter(**KW) as it:
        kept, copies = [], []
        for _ in range(3):
            for b in it:
                kept.append(b.data[0])
                copies.append(b.data[0].asnumpy().copy())
            it.reset()
        for k, c in zip(kept, copies):
            np.testing.assert_array_equal(k.asnumpy(), c)


def test_batches_dropped_by_the_user_are_reused():
    with mx.io.ImageRecordIter(**KW) as it:
        ids = set()
        for _ in range(4):
            for b in it:
                ids.add(id(b.data[0]._data))  # the batch array the NDArray wraps (no copy)
                del b
                gc.collect()
            it.reset()
        assert len(ids) <= it._window + 2 < 12  # a few buffers reused, not one per batch (12 batches)


def test_pool_skips_referenced_arrays():
    pool = _BufferPool(2)
    a = pool.get((4,), np.dtype(np.float32))
    b = pool.get((4,), np.dtype(np.float32))
    assert a is not b
    view = b[1:]
    del b
    c = pool.get((4,), np.dtype(np.float32))  # b is still referenced through its view
    assert c.base is None and view.base is not c
    del view, c
    assert pool.get((4,), np.dtype(np.float64)).dtype == np.float64
