"""ImageDetRecordIter's detection augmenters (MXNet 1.9.1's ``det_aug_default``):
shapes, valid boxes, seeds, and the unit behaviour of crop, pad, mirror and colour."""
from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("cv2", reason="ImageDetRecordIter needs OpenCV (the image extra)")

import plexnet as mx  # noqa: E402
from plexnet.base import MXNetError  # noqa: E402
from plexnet.io.det_augment import DetAugmenter, DetAugParams  # noqa: E402

pytestmark = pytest.mark.timeout(60)
DET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "det", "det.rec")
LABEL = np.array([2, 5, 0, 0.1, 0.2, 0.5, 0.9, 1, 0.4, 0.1, 0.9, 0.6], np.float32)
AUG = dict(rand_crop_prob=1.0, min_crop_scales=(0.3, 0.5), max_crop_scales=(1.0, 0.9),
           min_crop_aspect_ratios=(0.5,), max_crop_aspect_ratios=(2.0,), num_crop_sampler=2, max_crop_trials=(30,),
           rand_pad_prob=0.5, max_pad_scale=2.0, max_random_hue=10, random_hue_prob=0.5,
           max_random_saturation=20, random_saturation_prob=0.5, max_random_illumination=20,
           random_illumination_prob=0.5, max_random_contrast=0.3, random_contrast_prob=0.5, rand_mirror_prob=0.5)


def _epoch(seed, threads=1, **kw):
    it = mx.io.ImageDetRecordIter(path_imgrec=DET, data_shape=(3, 16, 16), batch_size=2, seed_aug=seed,
                                  preprocess_threads=threads, **kw)
    try:
        return [(b.data[0].asnumpy(), b.label[0].asnumpy()) for b in it]
    finally:
        it.close()


def test_iterator_with_every_augmentation_is_valid_and_reproducible():
    a, b, c = _epoch(1, **AUG), _epoch(1, threads=2, **AUG), _epoch(2, **AUG)
    for (da, la), (db, lb) in zip(a, b):
        np.testing.assert_array_equal(da, db)
        np.testing.assert_array_equal(la, lb)
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(a, c))
    plain = _epoch(1)
    assert any(not np.array_equal(x[1], y[1]) for x, y in zip(a, plain))  # boxes moved
    for data, label in a:
        assert data.shape == (2, 3, 16, 16)
        for row in label:
            assert tuple(row[:3]) == (3, 16, 16)
            n = int(row[3])
            raw = row[4:4 + n]
            objs = raw[int(raw[0]):].reshape(-1, int(raw[1]))
            assert len(objs) >= 1
            assert (objs[:, 1:5] >= 0).all() and (objs[:, 1:5] <= 1).all()
            assert (objs[:, 3] > objs[:, 1]).all() and (objs[:, 4] > objs[:, 2]).all()
            assert (row[4 + n:] == -1).all()


def _aug(**kw):
    return DetAugmenter(DetAugParams(data_shape=(3, 20, 20), **kw))


def _img():
    return np.random.RandomState(0).randint(0, 256, (40, 50, 3)).astype(np.uint8)


def test_mirror_flips_boxes():
    img, lab = _aug(rand_mirror_prob=1.0).process(_img(), LABEL, np.random.default_rng(0), 0.0)
    np.testing.assert_allclose(lab[2:].reshape(-1, 5)[:, [1, 3]], [[0.5, 0.9], [0.1, 0.6]], atol=1e-6)
    ref, _ = _aug().process(_img()[:, ::-1], LABEL, np.random.default_rng(0), 0.0)
    np.testing.assert_array_equal(img, ref)


def test_pad_shrinks_boxes_and_fills():
    aug = _aug(rand_pad_prob=1.0, max_pad_scale=3.0, fill_value=7)
    for s in range(10):
        img, lab = aug.process(_img(), LABEL, np.random.default_rng(s), 1.0)
        objs = lab[2:].reshape(-1, 5)
        assert img.shape == (20, 20, 3)
        assert (objs[:, 3] - objs[:, 1] <= LABEL[2:].reshape(-1, 5)[:, 3] - LABEL[2:].reshape(-1, 5)[:, 1] + 1e-6).all()


def test_crop_emit_modes_keep_only_objects_inside():
    for mode in ("center", "overlap"):
        aug = _aug(rand_crop_prob=1.0, min_crop_scales=(0.3,), max_crop_scales=(0.6,), crop_emit_mode=mode,
                   min_crop_aspect_ratios=(0.5,), max_crop_aspect_ratios=(2.0,))
        for s in range(10):
            img, lab = aug.process(_img(), LABEL, np.random.default_rng(s), 1.0)
            objs = lab[2:].reshape(-1, 5)
            assert img.shape == (20, 20, 3) and len(objs) >= 1
            assert (objs[:, 1:5] >= 0).all() and (objs[:, 1:5] <= 1).all()


def test_contrast_scales_pixels():
    img = np.full((8, 8, 3), 100, np.uint8)
    aug = _aug(max_random_contrast=0.5, random_contrast_prob=1.0)
    vals = {int(aug.process(img, LABEL, np.random.default_rng(s), 1.0)[0][0, 0, 0]) for s in range(10)}
    assert len(vals) > 3 and min(vals) >= 50 and max(vals) <= 150


def test_invalid_labels_and_parameters():
    with pytest.raises(MXNetError, match="at least 7"):
        DetAugmenter.parse(np.array([2, 5, 0, 1], np.float32))
    with pytest.raises(MXNetError, match="object_width"):
        DetAugmenter.parse(np.array([2, 4, 0, 1, 1, 1, 1, 1], np.float32))
    with pytest.raises(MXNetError, match="num_crop_sampler"):
        DetAugParams(num_crop_sampler=2, min_crop_scales=(0.1, 0.2, 0.3))
    with pytest.raises(MXNetError, match="crop_emit_mode"):
        DetAugParams(crop_emit_mode="edge")
    with pytest.raises(MXNetError, match="resize_mode"):
        DetAugParams(resize_mode="shrink")
    _, objs = DetAugmenter.parse(np.array([2, 5, 0, 0.5, 0.5, 0.4, 0.9, 1, 0.1, 0.1, 0.2, 0.2], np.float32))
    assert len(objs) == 1  # the empty box is dropped, as MXNet does
