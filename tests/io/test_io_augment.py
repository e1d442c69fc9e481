"""ImageRecordIter's augmenters: deterministic settings pixel-identical to MXNet 1.9.1
(``fixtures/make_mxnet_aug.py`` recorded them), random ones by their properties."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

pytest.importorskip("cv2", reason="ImageRecordIter needs OpenCV (the image extra)")

from plexnet.base import MXNetError  # noqa: E402
from plexnet.io import ImageRecordIter  # noqa: E402
from plexnet.io.augment import AugParams, DefaultAugmenter  # noqa: E402

pytestmark = pytest.mark.timeout(60)
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REC = dict(path_imgrec=os.path.join(HERE, "aug.rec"), path_imgidx=os.path.join(HERE, "aug.idx"))
N = 6
with open(os.path.join(HERE, "aug_expected.json")) as _f:
    CONFIGS = json.load(_f)


def _batch(threads: int = 1, **kw) -> np.ndarray:
    with ImageRecordIter(**REC, batch_size=N, preprocess_threads=threads, **kw) as it:
        return it.next().data[0].asnumpy()


#: OpenCV 5's bicubic resize and warpAffine round a few pixels differently from the
#: OpenCV 3 inside MXNet's wheel (bilinear, area, lanczos4 resizes are bit-identical)
TOLERANCE = {"resize_inter2": (1, 0.1), "upscale_inter9": (1, 0.1), "crop_size_fixed": (1, 0.1),
             "max_img_size": (1, 0.1), "rotate30_fill0": (8, 0.5)}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_deterministic_augmentations_match_mxnet(name):
    want = np.load(os.path.join(HERE, "aug_expected.npz"))[name]
    got = _batch(dtype="uint8", **CONFIGS[name])
    assert got.shape == want.shape
    atol, mean_tol = TOLERANCE.get(name, (0, 0))
    diff = np.abs(got.astype(np.int16) - want)
    assert diff.max() <= atol and diff.mean() <= mean_tol, (diff.max(), diff.mean())


def test_float_output_is_the_normalised_uint8_output():
    kw = dict(data_shape=(3, 20, 20), resize=22, rotate=15, fill_value=3)
    raw = _batch(dtype="uint8", **kw).astype(np.float32)
    norm = _batch(mean_r=10, mean_g=20, mean_b=30, std_r=2, std_g=4, std_b=8, scale=0.5, **kw)
    mean = np.array([10, 20, 30], np.float32).reshape(3, 1, 1)
    mult = (0.5 / np.array([2, 4, 8], np.float32)).reshape(3, 1, 1)
    np.testing.assert_allclose(norm, (raw - mean) * mult, rtol=1e-6)


RANDOM = {
    "rotate_shear": dict(max_rotate_angle=30, max_shear_ratio=0.2, fill_value=0),
    "scale_aspect": dict(min_random_scale=0.8, max_random_scale=1.3, max_aspect_ratio=0.3, resize=40),
    "aspect_range": dict(min_aspect_ratio=0.7, max_aspect_ratio=1.4, min_random_scale=1.0),
    "rotate_list": dict(rotate_list="0,90,180"),
    "crop_size": dict(min_crop_size=16, max_crop_size=26, rand_crop=True),
    "hsl": dict(random_h=20, random_s=30, random_l=40),
    "jitter": dict(brightness=0.4, contrast=0.4, saturation=0.4),
    "pca": dict(pca_noise=0.1),
    "rrc": dict(random_resized_crop=True, min_random_area=0.2, max_random_area=1.0, min_aspect_ratio=0.75,
                max_aspect_ratio=1.33),
    "inter_random": dict(inter_method=10, resize=30, rand_crop=True),
    "contrast_illum": dict(max_random_contrast=0.3, max_random_illumination=20, mean_r=1.0),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_augmentations_shapes_ranges_and_seeds(name):
    kw = dict(data_shape=(3, 24, 24), rand_mirror=True, **RANDOM[name])
    if "mean_r" not in kw:
        kw["dtype"] = "uint8"
    a = _batch(seed_aug=3, **kw)
    b = _batch(seed_aug=3, threads=2, **kw)
    c = _batch(seed_aug=4, **kw)
    assert a.shape == (N, 3, 24, 24)
    np.testing.assert_array_equal(a, b)  # same seed, any threads: same pixels
    assert not np.array_equal(a, c)      # another seed: other draws
    if a.dtype == np.uint8:
        assert a.min() >= 0 and a.max() <= 255
    plain = _batch(data_shape=(3, 24, 24), dtype="uint8", rand_mirror=True, seed_aug=3)
    assert not np.array_equal(a.astype(np.float32), plain.astype(np.float32))  # it did something


def _img(h=40, w=50, seed=0):
    return np.random.RandomState(seed).randint(0, 256, (h, w, 3)).astype(np.uint8)


def test_hsl_zero_offsets_round_trip_and_clip():
    aug = DefaultAugmenter(AugParams(data_shape=(3, 40, 50), random_l=255))
    img = _img()
    rng = np.random.default_rng(0)
    out = aug.process(img, rng)
    assert out.shape == img.shape and out.dtype == np.uint8
    # a +-255 lightness offset drives the image to (almost) black or white
    assert out.mean() < 40 or out.mean() > 215


def test_brightness_scales_pixels():
    img = np.full((10, 10, 3), 100, np.uint8)
    aug = DefaultAugmenter(AugParams(data_shape=(3, 10, 10), brightness=0.5))
    vals = {int(aug.process(img, np.random.default_rng(s))[0, 0, 0]) for s in range(20)}
    assert min(vals) >= 50 and max(vals) <= 150 and len(vals) > 5


def test_saturation_zero_gives_gray():
    img = _img(8, 8)
    p = AugParams(data_shape=(3, 8, 8), saturation=1.0)
    aug = DefaultAugmenter(p)
    for s in range(30):
        out = aug.process(img, np.random.default_rng(s)).astype(int)
        assert out.shape == (8, 8, 3)


def test_random_resized_crop_falls_back_to_the_centre_crop_and_output_shape():
    p = AugParams(data_shape=(3, 16, 16), random_resized_crop=True, min_random_area=0.05, max_random_area=0.3)
    aug = DefaultAugmenter(p)
    for s in range(10):
        assert aug.process(_img(), np.random.default_rng(s)).shape == (16, 16, 3)


def test_pca_noise_shifts_whole_channels():
    img = np.full((6, 6, 3), 128, np.uint8)
    out = DefaultAugmenter(AugParams(data_shape=(3, 6, 6), pca_noise=1.0)).process(img, np.random.default_rng(1))
    assert (out == out[0, 0]).all() and not (out == 128).all()


def test_errors_name_the_argument():
    kw = dict(**REC, batch_size=2)
    with pytest.raises(MXNetError, match="random_resized_crop"):
        ImageRecordIter(data_shape=(3, 16, 16), random_resized_crop=True, rand_crop=True, **kw)
    with pytest.raises(MXNetError, match="max_crop_size"):
        ImageRecordIter(data_shape=(3, 16, 16), min_crop_size=20, max_crop_size=10, **kw)
    with pytest.raises(ValueError, match="inter_method"):
        ImageRecordIter(data_shape=(3, 16, 16), inter_method=7, **kw)
    with pytest.raises(MXNetError, match="inter_method 0"):
        ImageRecordIter(data_shape=(3, 16, 16), resize=20, inter_method=0, **kw).next()
    with pytest.raises(MXNetError, match="max_crop_size"):
        ImageRecordIter(data_shape=(3, 16, 16), min_crop_size=60, max_crop_size=60, **kw).next()


def test_path_imglist_labels_replace_the_records_labels(tmp_path):
    # MXNet 1.9.1 returned [10..15] and [[10, 20], ...] for these lists on aug.rec
    lst = tmp_path / "a.lst"
    lst.write_text("".join(f"{i}\t{10 + i}\t{i}.jpg\n" for i in range(N)))
    with ImageRecordIter(**REC, path_imglist=str(lst), data_shape=(3, 16, 16), batch_size=N) as it:
        assert it.next().label[0].asnumpy().tolist() == [10.0, 11.0, 12.0, 13.0, 14.0, 15.0]
    lst.write_text("".join(f"{i}\t{10 + i}\t{20 + i}\t{i}.jpg\n" for i in range(N)))
    with ImageRecordIter(**REC, path_imglist=str(lst), data_shape=(3, 16, 16), batch_size=N, label_width=2) as it:
        assert it.next().label[0].asnumpy().tolist() == [[10.0 + i, 20.0 + i] for i in range(N)]
    lst.write_text("0\t1\ta.jpg\n")
    with ImageRecordIter(**REC, path_imglist=str(lst), data_shape=(3, 16, 16), batch_size=N) as it:
        with pytest.raises(MXNetError, match="no line in path_imglist"):
            it.next()
    lst.write_text("0\ta.jpg\n")
    with pytest.raises(MXNetError, match="tab-separated"):
        ImageRecordIter(**REC, path_imglist=str(lst), data_shape=(3, 16, 16), batch_size=N)


@pytest.fixture(scope="module")
def const_rec(tmp_path_factory):
    """8 copies of a flat BGR (200, 150, 100) image."""
    import cv2

    from plexnet import recordio
    d = tmp_path_factory.mktemp("const")
    rec = str(d / "c.rec")
    w = recordio.MXRecordIO(rec, "w")
    img = np.zeros((20, 20, 3), np.uint8)
    img[:] = (200, 150, 100)
    for i in range(8):
        w.write(recordio.pack(recordio.IRHeader(0, 0, i, 0), cv2.imencode(".png", img)[1].tobytes()))
    w.close()
    return rec


#: settings MXNet 1.9.1 was run with on these 8 flat images: every output image stayed one
#: colour, G stayed 150 under random_s, R (and nearly B) under random_h, G within 150 +- 4
#: under contrast (its gray level comes from CV_RGB2GRAY on BGR data)
FLAT_RANGES = {
    "brightness": dict(brightness=0.5), "contrast": dict(contrast=0.5), "saturation": dict(saturation=0.9),
    "pca_noise": dict(pca_noise=0.5), "random_l": dict(random_l=50), "random_s": dict(random_s=50),
    "random_h": dict(random_h=20),
}


@pytest.mark.parametrize("name", sorted(FLAT_RANGES))
def test_colour_augmenters_keep_flat_images_flat_like_mxnet(const_rec, name):
    with ImageRecordIter(path_imgrec=const_rec, data_shape=(3, 16, 16), batch_size=8, dtype="uint8",
                         **FLAT_RANGES[name]) as it:
        d = it.next().data[0].asnumpy().astype(int).reshape(8, 3, -1)
    assert (d == d[:, :, :1]).all()  # one colour per image, as MXNet
    r, g, b = d[:, 0, 0], d[:, 1, 0], d[:, 2, 0]
    assert len(set(map(tuple, d[:, :, 0].tolist()))) > 1  # the images differ
    if name == "random_s":
        assert (g == 150).all()
    if name == "random_h":
        assert (r == 100).all() and (b >= 190).all()
    if name == "contrast":
        assert (abs(g - 150) <= 10).all()


def test_exif_orientation_is_ignored_as_mxnet_does(tmp_path):
    """MXNet 1.9.1 (OpenCV 3) decodes a JPEG tagged 'rotate 90' as stored: 20x30 stays 20x30."""
    PIL = pytest.importorskip("PIL.Image")
    import io

    from plexnet import recordio
    img = np.zeros((20, 30, 3), np.uint8)
    img[:, :10] = 255
    im = PIL.fromarray(img)
    exif = im.getexif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    im.save(buf, format="JPEG", exif=exif.tobytes(), quality=95)
    rec = str(tmp_path / "exif.rec")
    w = recordio.MXRecordIO(rec, "w")
    w.write(recordio.pack(recordio.IRHeader(0, 0, 0, 0), buf.getvalue()))
    w.close()
    with ImageRecordIter(path_imgrec=rec, data_shape=(3, 20, 30), batch_size=1, dtype="uint8") as it:
        d = it.next().data[0].asnumpy()[0]
    assert d[:, :, :8].min() > 200 and d[:, :, 12:].max() < 50  # white band still on the left
    import plexnet as mx
    assert mx.image.imdecode(buf.getvalue()).shape == (20, 30, 3)
