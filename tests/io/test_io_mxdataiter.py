"""``mx.io.MXDataIter`` (the group of MXNet's backend iterators) and
``ImageRecordInt8Iter``."""
from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("cv2", reason="ImageRecordIter needs OpenCV (the image extra)")

import plexnet as mx  # noqa: E402

REC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "aug.rec")


def test_mxdataiter_names_the_backend_iterators():
    for cls in (mx.io.ImageRecordIter, mx.io.ImageRecordUInt8Iter, mx.io.ImageRecordInt8Iter,
                mx.io.ImageDetRecordIter, mx.io.CSVIter, mx.io.MNISTIter):
        assert issubclass(cls, mx.io.MXDataIter), cls
    for cls in (mx.io.NDArrayIter, mx.io.PrefetchingIter, mx.io.ResizeIter):
        assert not issubclass(cls, mx.io.MXDataIter), cls
    with mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=2) as it:
        assert isinstance(it, mx.io.MXDataIter) and isinstance(it, mx.io.DataIter)
    with pytest.raises(TypeError, match="handle"):
        mx.io.MXDataIter(None)


def test_int8_is_the_saturated_pixel_minus_mean():
    kw = dict(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=2)
    with mx.io.ImageRecordUInt8Iter(**kw) as it:
        raw = it.next().data[0].asnumpy().astype(np.float32)
    mean = dict(mean_r=200, mean_g=100, mean_b=100, std_r=2, scale=0.5)  # std and scale unused, as MXNet
    with mx.io.ImageRecordInt8Iter(**kw, **mean) as it:
        got = it.next().data[0].asnumpy()
    assert got.dtype == np.int8
    want = np.clip(raw - np.array([200, 100, 100], np.float32).reshape(1, 3, 1, 1), -128, 127)
    np.testing.assert_array_equal(got, want.astype(np.int8))
    # what MXNet 1.9.1 returned for the first pixels of this file and these means
    assert got.ravel()[:8].tolist() == [-89, -74, -73, -63, -62, -43, -35, -19]
    with mx.io.ImageRecordIter(**kw, dtype="int8") as it:
        assert it.next().data[0].asnumpy().max() == 127  # no mean: pixels above 127 saturate
