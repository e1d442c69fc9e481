"""``ImageDetRecordIter`` against MXNet 1.9.1 (recorded by
``tests/fixtures/make_mxnet_det_fixtures.py`` on ``tests/fixtures/det/det.rec``): label
rows ``[c, h, w, n, label..., pad]``, padding, mirrored boxes, batch order and pad, and
the pixels, exactly (OpenCV decodes and resizes as in MXNet)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import plexnet as mx

pytest.importorskip("cv2")
pytestmark = pytest.mark.timeout(60)

_DET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "det")
with open(os.path.join(_DET, "expected.json")) as _f:
    CASES = json.load(_f)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[json.dumps(c["args"]) for c in CASES])
def test_matches_mxnet(case):
    it = mx.io.ImageDetRecordIter(path_imgrec=os.path.join(_DET, "det.rec"), **case["args"])
    try:
        assert list(it.provide_data[0].shape) == case["provide_data"]
        assert list(it.provide_label[0].shape) == case["provide_label"]
        got = list(it)
        assert len(got) == len(case["batches"])
        for b, want in zip(got, case["batches"]):
            np.testing.assert_allclose(b.label[0].asnumpy(), want["label"], rtol=1e-6, atol=1e-6)
            assert b.pad == want["pad"]
            data, wdata = b.data[0].asnumpy(), np.array(want["data"])
            np.testing.assert_allclose(data, wdata, atol=1e-3)
    finally:
        it.close()


def test_options_and_errors(tmp_path):
    rec = os.path.join(_DET, "det.rec")
    it = mx.io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=2, rand_crop_prob=0.0,
                                  resize_mode="force", min_crop_scales=(0.0,))
    assert it.label_pad_width == 17
    it.close()
    with pytest.raises(mx.base.MXNetError, match="min_crop_scales"):
        mx.io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=2, rand_crop_prob=0.5,
                                 min_crop_scales=(0.9,), max_crop_scales=(0.5,))
    with pytest.raises(mx.base.MXNetError, match="resize_mode"):
        mx.io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=2, resize_mode="fit")
    with pytest.raises(FileNotFoundError):
        mx.io.ImageDetRecordIter(path_imgrec=str(tmp_path / "none.rec"), data_shape=(3, 8, 8), batch_size=1)
    with pytest.raises(ValueError, match="rand_mirror_prob"):
        mx.io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=1, rand_mirror_prob=2)
