"""``mx.image`` against Apache MXNet 1.9.1 (``fixtures/make_mxnet_image.py`` recorded
it): decoding, resizing, crops, borders, normalisation exactly; the random augmenters
under the same ``random``/``np.random`` seeds; ``CreateAugmenter`` and ``ImageIter``."""
from __future__ import annotations

import functools
import os
import random

import numpy as np
import pytest

pytest.importorskip("cv2", reason="mx.image needs OpenCV (the image extra)")

import plexnet as mx  # noqa: E402
from plexnet.base import MXNetError  # noqa: E402

pytestmark = pytest.mark.timeout(60)
HERE = os.path.dirname(os.path.abspath(__file__))
IO_FIX = os.path.join(HERE, "..", "io", "fixtures")
REC, IDX = os.path.join(IO_FIX, "aug.rec"), os.path.join(IO_FIX, "aug.idx")
EXP = np.load(os.path.join(HERE, "fixtures", "image_expected.npz"))


@pytest.fixture(scope="module")
def bufs():
    r = mx.recordio.MXIndexedRecordIO(IDX, REC, "r")
    out = [mx.recordio.unpack(r.read_idx(i))[1] for i in range(6)]
    r.close()
    return out


def seeded(s):
    random.seed(s)
    np.random.seed(s)


def test_namespaces():
    assert mx.img is mx.image
    assert mx.image.det.ImageDetIter is mx.image.ImageDetIter


@pytest.mark.parametrize("i", range(6))
def test_imdecode_matches_mxnet(bufs, i):
    np.testing.assert_array_equal(mx.image.imdecode(bufs[i]).asnumpy(), EXP[f"decode{i}"])
    np.testing.assert_array_equal(mx.image.imdecode(bufs[i], flag=0).asnumpy(), EXP[f"decode_gray{i}"])
    np.testing.assert_array_equal(mx.image.imdecode(bufs[i], to_rgb=0).asnumpy(), EXP[f"decode_bgr{i}"])
    nd_buf = mx.nd.array(np.frombuffer(bufs[i], np.uint8), dtype=np.uint8)
    np.testing.assert_array_equal(mx.image.imdecode(nd_buf).asnumpy(), EXP[f"decode{i}"])


def test_imread(tmp_path, bufs):
    p = tmp_path / "a.jpg"
    p.write_bytes(bufs[0])
    np.testing.assert_array_equal(mx.image.imread(str(p)).asnumpy(), EXP["decode0"])
    with pytest.raises(MXNetError, match="no such file"):
        mx.image.imread(str(tmp_path / "missing.jpg"))


def test_decode_errors():
    with pytest.raises(ValueError, match="bytes"):
        mx.image.imdecode("not bytes")
    with pytest.raises(MXNetError, match="cannot decode"):
        mx.image.imdecode(b"garbage!")


#: bicubic/lanczos in OpenCV 5 round a few pixels differently from MXNet's OpenCV 3
TOL = {"imresize2": 1, "imresize4": 1, "resize_short": 1, "resize_short_auto": 1, "center_crop": 1,
       "imresize_float": 1e-3}


@pytest.mark.parametrize("name,fn", [
    *[(f"imresize{k}", functools.partial(lambda x, k: mx.image.imresize(x, 27, 19, interp=k), k=k))
      for k in range(5)],
    ("imresize_float", lambda x: mx.image.imresize(x.astype("float32"), 33, 21, interp=1)),
    ("resize_short", lambda x: mx.image.resize_short(x, 17)),
    ("resize_short_auto", lambda x: mx.image.resize_short(x, 50, interp=9)),
    ("center_crop", lambda x: mx.image.center_crop(x, (20, 12))[0]),
    ("center_crop_up", lambda x: mx.image.center_crop(x, (50, 20), interp=1)[0]),
    ("fixed_crop", lambda x: mx.image.fixed_crop(x, 3, 4, 10, 12, size=(16, 16), interp=3)),
    *[(f"border{t}", functools.partial(lambda x, t: mx.image.copyMakeBorder(x, 2, 3, 4, 1, type=t,
                                                                              values=(10, 20, 30)), t=t))
      for t in range(5)],
    ("color_normalize", lambda x: mx.image.color_normalize(x.astype("float32"), mx.nd.array([100, 110, 120]),
                                                            mx.nd.array([50, 60, 70]))),
])
def test_functions_match_mxnet(bufs, name, fn):
    got = fn(mx.image.imdecode(bufs[0])).asnumpy()
    want = EXP[name]
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.abs(got.astype(np.float64) - want).max() <= TOL.get(name, 0)


def test_scale_down():
    assert mx.image.scale_down((640, 480), (720, 120)) == (640, 106)
    assert mx.image.scale_down((100, 100), (50, 60)) == (50, 60)


AUGS = {
    "random_crop": lambda x: mx.image.random_crop(x, (16, 16))[0],
    "random_size_crop": lambda x: mx.image.random_size_crop(x, (16, 16), 0.3, (0.75, 1.33))[0],
    "flip": mx.image.HorizontalFlipAug(0.5),
    "brightness": mx.image.BrightnessJitterAug(0.4),
    "contrast": mx.image.ContrastJitterAug(0.4),
    "saturation": mx.image.SaturationJitterAug(0.4),
    "hue": mx.image.HueJitterAug(0.3),
    "color_jitter": mx.image.ColorJitterAug(0.3, 0.3, 0.3),
    "lighting": mx.image.LightingAug(0.1, mx.image.image.EIGVAL, mx.image.image.EIGVEC),
    "gray": mx.image.RandomGrayAug(1.0),
    "force_resize": mx.image.ForceResizeAug((14, 18), interp=10),
}


@pytest.mark.parametrize("name", sorted(AUGS))
@pytest.mark.parametrize("s", range(3))
def test_random_augmenters_match_mxnet_under_the_same_seed(bufs, name, s):
    img = mx.image.imdecode(bufs[0]).astype("float32")
    seeded(s)
    got = AUGS[name](img).asnumpy()
    want = EXP[f"{name}/s{s}"]
    assert got.shape == want.shape
    atol = 1.0 if name in ("random_size_crop", "force_resize", "random_crop") else 2e-3
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol)


def test_create_augmenter_pipeline_matches_mxnet(bufs):
    img = mx.image.imdecode(bufs[0])
    seeded(7)
    pipe = mx.image.CreateAugmenter((3, 16, 16), resize=20, rand_crop=True, rand_resize=True, rand_mirror=True,
                                    mean=True, std=True, brightness=0.2, contrast=0.2, saturation=0.2, hue=0.1,
                                    pca_noise=0.1, rand_gray=0.3, inter_method=1)
    names = [type(a).__name__ for a in pipe]
    assert names == ["ResizeAug", "RandomSizedCropAug", "HorizontalFlipAug", "CastAug", "ColorJitterAug",
                     "HueJitterAug", "LightingAug", "RandomGrayAug", "ColorNormalizeAug"]
    for s in range(3):
        x = img
        for a in pipe:
            x = a(x)
        np.testing.assert_allclose(x.asnumpy(), EXP[f"create_augmenter/{s}"], rtol=1e-4, atol=1e-3)


def test_image_iter_matches_mxnet():
    seeded(3)
    it = mx.image.ImageIter(batch_size=4, data_shape=(3, 16, 16), path_imgrec=REC, path_imgidx=IDX, shuffle=True,
                            resize=18, rand_crop=True, rand_mirror=True)
    assert it.provide_data[0].shape == (4, 3, 16, 16) and it.provide_label[0].shape == (4,)
    for e in range(2):
        batches = list(it)
        assert len(batches) == 2
        for k, b in enumerate(batches):
            np.testing.assert_array_equal(b.label[0].asnumpy(), EXP[f"imageiter/e{e}/b{k}/label"])
            assert b.pad == int(EXP[f"imageiter/e{e}/b{k}/pad"])
            np.testing.assert_allclose(b.data[0].asnumpy(), EXP[f"imageiter/e{e}/b{k}/data"], atol=1)
        it.reset()


def test_image_iter_from_list_and_last_batch(tmp_path, bufs):
    for i in range(5):
        (tmp_path / f"{i}.jpg").write_bytes(bufs[i])
    lst = tmp_path / "a.lst"
    lst.write_text("".join(f"{i}\t{i * 1.5}\t{i}.jpg\n" for i in range(5)))
    it = mx.image.ImageIter(2, (3, 8, 8), path_imglist=str(lst), path_root=str(tmp_path))
    got = list(it)
    assert [b.pad for b in got] == [0, 0, 1]
    assert got[0].label[0].asnumpy().tolist() == [0.0, 1.5]
    assert got[2].label[0].asnumpy().tolist() == [6.0, 0.0]  # padded from the start
    it = mx.image.ImageIter(2, (3, 8, 8), imglist=[[float(i), f"{i}.jpg"] for i in range(5)],
                            path_root=str(tmp_path), last_batch_handle="discard")
    assert len(list(it)) == 2
    it = mx.image.ImageIter(2, (3, 8, 8), imglist=[[float(i), f"{i}.jpg"] for i in range(5)],
                            path_root=str(tmp_path), last_batch_handle="roll_over")
    assert len(list(it)) == 2
    it.reset()
    first = next(iter(it))
    assert first.label[0].asnumpy().tolist() == [4.0, 0.0]  # the rolled-over image opens the epoch
    with pytest.raises(ValueError, match="3 channels"):
        mx.image.ImageIter(2, (1, 8, 8), path_imgrec=REC)
    with pytest.raises(ValueError, match="last_batch_handle"):
        mx.image.ImageIter(2, (3, 8, 8), path_imgrec=REC, last_batch_handle="bogus")


def test_augmenter_dumps_and_sequential():
    aug = mx.image.ResizeAug(10, interp=1)
    assert aug.dumps() == '["resizeaug", {"size": 10, "interp": 1}]'
    seq = mx.image.SequentialAug([mx.image.CastAug(), mx.image.ColorNormalizeAug(np.array([1.0, 2, 3]), None)])
    out = seq(mx.nd.array(np.ones((2, 2, 3), np.uint8), dtype=np.uint8)).asnumpy()
    np.testing.assert_array_equal(out[0, 0], [0, -1, -2])
    assert seq.dumps()[0] == "sequentialaug"


def test_imrotate_quarter_turns_and_errors():
    img = np.arange(2 * 5 * 5, dtype=np.float32).reshape(2, 5, 5)
    np.testing.assert_allclose(mx.image.imrotate(mx.nd.array(img), 0).asnumpy(), img, atol=1e-4)
    r = mx.image.imrotate(mx.nd.array(img), 90).asnumpy()
    np.testing.assert_allclose(np.abs(r).sum(), np.abs(np.rot90(img, axes=(1, 2))).sum(), rtol=1e-4)
    batch = mx.image.random_rotate(mx.nd.array(np.stack([img, img])), (-10, 10))
    assert batch.shape == (2, 2, 5, 5)
    with pytest.raises(TypeError, match="float32"):
        mx.image.imrotate(mx.nd.array(img.astype(np.uint8), dtype=np.uint8), 10)
    with pytest.raises(ValueError, match="zoom"):
        mx.image.imrotate(mx.nd.array(img), 10, zoom_in=True, zoom_out=True)
