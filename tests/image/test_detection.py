"""``mx.image`` detection augmenters and ``ImageDetIter`` against Apache MXNet 1.9.1
under the same ``random``/``np.random`` seeds (``fixtures/make_mxnet_image.py``)."""
from __future__ import annotations

import os
import random

import numpy as np
import pytest

pytest.importorskip("cv2", reason="mx.image needs OpenCV (the image extra)")

import plexnet as mx  # noqa: E402

pytestmark = pytest.mark.timeout(60)
HERE = os.path.dirname(os.path.abspath(__file__))
REC, IDX = (os.path.join(HERE, "..", "io", "fixtures", f"aug.{e}") for e in ("rec", "idx"))
DET, DET_IDX = (os.path.join(HERE, "..", "fixtures", "det", f"det.{e}") for e in ("rec", "idx"))
EXP = np.load(os.path.join(HERE, "fixtures", "image_expected.npz"))
LABEL = np.array([[0, 0.1, 0.2, 0.5, 0.9], [1, 0.4, 0.1, 0.9, 0.6]], np.float32)


def _img():
    r = mx.recordio.MXIndexedRecordIO(IDX, REC, "r")
    buf = mx.recordio.unpack(r.read_idx(0))[1]
    r.close()
    return mx.image.imdecode(buf).astype("float32")


def _augs():
    return {
        "det_flip": mx.image.DetHorizontalFlipAug(0.5),
        "det_crop": mx.image.DetRandomCropAug(min_object_covered=0.3, area_range=(0.2, 1.0)),
        "det_pad": mx.image.DetRandomPadAug(area_range=(1.0, 2.5), pad_val=(1, 2, 3)),
        "det_select": mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5],
                                                            area_range=[(0.1, 1.0), (0.3, 1.0)], skip_prob=0.2),
    }


@pytest.mark.parametrize("name", ["det_flip", "det_crop", "det_pad", "det_select"])
@pytest.mark.parametrize("s", range(3))
def test_det_augmenters_match_mxnet(name, s):
    aug = _augs()[name]
    random.seed(s)
    np.random.seed(s)
    img, lab = aug(_img(), LABEL.copy())
    np.testing.assert_allclose(np.asarray(lab), EXP[f"{name}/s{s}/label"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(img.asnumpy(), EXP[f"{name}/s{s}/img"], atol=1e-4)


def test_image_det_iter_matches_mxnet():
    random.seed(5)
    np.random.seed(5)
    it = mx.image.ImageDetIter(batch_size=2, data_shape=(3, 16, 16), path_imgrec=DET, path_imgidx=DET_IDX,
                               shuffle=True, rand_crop=0.5, rand_pad=0.5, rand_mirror=True, mean=True, std=True,
                               inter_method=1)
    assert tuple(it.provide_label[0].shape) == tuple(EXP["detiter/label_shape"])
    batches = list(it)
    assert len(batches) == 3
    for k, b in enumerate(batches):
        assert b.pad == int(EXP[f"detiter/b{k}/pad"])
        np.testing.assert_allclose(b.label[0].asnumpy(), EXP[f"detiter/b{k}/label"], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(b.data[0].asnumpy(), EXP[f"detiter/b{k}/data"], atol=1e-2)


def test_det_crop_keeps_boxes_inside_and_pad_shrinks_them():
    crop = mx.image.DetRandomCropAug(min_object_covered=0.5, area_range=(0.3, 0.8))
    pad = mx.image.DetRandomPadAug(area_range=(1.5, 3.0))
    for s in range(20):
        random.seed(s)
        img, lab = crop(_img(), LABEL.copy())
        assert lab.shape[1] == 5 and (lab[:, 1:] >= 0).all() and (lab[:, 1:] <= 1).all()
        assert img.shape[2] == 3 and img.shape[0] <= 30 and img.shape[1] <= 40
        img, lab = pad(_img(), LABEL.copy())
        assert img.shape[0] >= 30 and img.shape[1] >= 40
        assert ((lab[:, 3] - lab[:, 1]) <= (LABEL[:, 3] - LABEL[:, 1]) + 1e-6).all()


def test_create_det_augmenter_order_and_invalid_ranges():
    augs = mx.image.CreateDetAugmenter((3, 32, 32), resize=40, rand_crop=0.5, rand_pad=0.5, rand_mirror=True,
                                       brightness=0.1, hue=0.1, pca_noise=0.1, rand_gray=0.1, mean=True, std=True)
    names = [type(a).__name__ for a in augs]
    assert names == ["DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug", "DetRandomSelectAug",
                     "DetBorrowAug", "DetBorrowAug", "DetBorrowAug", "DetBorrowAug", "DetBorrowAug", "DetBorrowAug",
                     "DetBorrowAug"]
    with pytest.warns(UserWarning, match="area_range"):
        assert not mx.image.DetRandomCropAug(area_range=(0.8, 0.2)).enabled
    with pytest.warns(UserWarning, match="aspect_ratio_range"):
        assert not mx.image.DetRandomPadAug(aspect_ratio_range=(0, 1)).enabled
    with pytest.raises(TypeError, match="Augmenter"):
        mx.image.DetBorrowAug("not an augmenter")
    with pytest.raises(ValueError, match="DetAugmenter"):
        mx.image.DetRandomSelectAug([mx.image.CastAug()])


def test_image_det_iter_reshape_sync_and_draw():
    a = mx.image.ImageDetIter(2, (3, 16, 16), path_imgrec=DET, path_imgidx=DET_IDX)
    b = mx.image.ImageDetIter(2, (3, 16, 16), path_imgrec=DET, path_imgidx=DET_IDX)
    b.reshape(label_shape=(6, 5))
    a.sync_label_shape(b)
    assert a.label_shape == (6, 5) and a.provide_label[0].shape == (2, 6, 5)
    with pytest.raises(ValueError, match="reduce"):
        a.reshape(label_shape=(1, 5))
    img = next(a.draw_next(color=(255, 0, 0)))
    assert img.dtype == np.uint8 and img.shape == (16, 16, 3)
