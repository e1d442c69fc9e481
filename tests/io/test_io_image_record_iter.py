"""ImageRecordIter on the RecordIO fixture written by Apache MXNet 1.9.1, compared with
what MXNet's own ImageRecordIter returned for it (images_expected.*)."""
from __future__ import annotations

import gc
import json
import os
import traceback

import numpy as np
import pytest

import plexnet as mx
from plexnet import recordio
from plexnet.base import MXNetError
from plexnet.io import ImageRecordIter, ImageRecordUInt8Iter
from plexnet.recordio import IRHeader

pytest.importorskip("cv2", reason="ImageRecordIter needs OpenCV (the image extra)")
pytestmark = pytest.mark.timeout(120)
N = 10  # images in the fixture, ids 100..109


@pytest.fixture(scope="module")
def expected(fixtures_dir):
    with open(os.path.join(fixtures_dir, "images_expected.json")) as f:
        meta = json.load(f)
    return meta, np.load(os.path.join(fixtures_dir, "images_expected.npz"))


@pytest.fixture
def rec(fixtures_dir):
    return dict(path_imgrec=os.path.join(fixtures_dir, "images.rec"),
                path_imgidx=os.path.join(fixtures_dir, "images.idx"))


def _kwargs(meta, name):
    kw = dict(meta[name]["kwargs"])
    kw["data_shape"] = tuple(kw["data_shape"])
    return kw


def _epoch(it):
    out = [(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad, list(map(int, b.index))) for b in it]
    it.reset()
    return out


@pytest.mark.parametrize("name,atol", [("plain", 0), ("norm", 1e-4), ("mirror", 0), ("gray", 0),
                                       ("resize", 0)])
@pytest.mark.parametrize("threads", [1, 2])
def test_matches_mxnet(expected, rec, name, atol, threads, no_leaked_threads):
    meta, arrs = expected
    with ImageRecordIter(**rec, **_kwargs(meta, name), preprocess_threads=threads) as it:
        assert [list(d.shape) for d in it.provide_data] == meta[name]["provide_data"]
        assert [list(d.shape) for d in it.provide_label] == meta[name]["provide_label"]
        for e in range(2):
            got = _epoch(it)
            exp_meta = meta[name]["epochs"][e]
            assert [g[2] for g in got] == [m["pad"] for m in exp_meta]
            data = np.stack([g[0] for g in got]).astype(np.float64)
            np.testing.assert_array_equal(np.stack([g[1] for g in got]), arrs[f"{name}/e{e}/label"])
            diff = np.abs(data - arrs[f"{name}/e{e}/data"])
            assert diff.max() <= atol, (name, e, diff.max())
            assert got[0][0].dtype == (np.uint8 if "dtype" in meta[name]["kwargs"] else np.float32)


def test_round_batch_epochs_continue_after_the_wrapped_examples(rec):
    with ImageRecordIter(**rec, data_shape=(3, 16, 16), batch_size=4, dtype="uint8") as it:
        e0, e1, e2 = _epoch(it), _epoch(it), _epoch(it)
    ids = lambda ep: [g[3] for g in ep]  # noqa: E731
    assert ids(e0) == [[100, 101, 102, 103], [104, 105, 106, 107], [108, 109, 100, 101]]
    assert [g[2] for g in e0] == [0, 0, 2]
    assert ids(e1) == [[102, 103, 104, 105], [106, 107, 108, 109]]
    assert ids(e2) == ids(e0)


def test_no_round_batch_reports_the_real_pad(expected, rec):
    meta, arrs = expected
    with ImageRecordIter(**rec, **_kwargs(meta, "norm_noround")) as it:
        got = _epoch(it)
    # MXNet 1.9.1 reports pad=0 here and leaves uninitialised memory in the tail
    assert [m["pad"] for m in meta["norm_noround"]["epochs"][0]] == [0, 0, 0]
    assert [g[2] for g in got] == [0, 0, 2]
    exp = arrs["norm_noround/e0/data"]
    np.testing.assert_allclose(np.stack([g[0] for g in got[:2]]), exp[:2], atol=1e-4)
    np.testing.assert_allclose(got[2][0][:2], exp[2][:2], atol=1e-4)
    assert got[2][3] == [108, 109, 108, 109]


def test_without_index_file_is_the_same(rec):
    kw = dict(data_shape=(3, 16, 16), batch_size=3, dtype="uint8", shuffle=True, seed=4)
    with ImageRecordIter(**rec, **kw) as a, ImageRecordIter(path_imgrec=rec["path_imgrec"], **kw) as b:
        for _ in range(2):
            for x, y in zip(_epoch(a), _epoch(b)):
                np.testing.assert_array_equal(x[0], y[0])
                assert x[2:] == y[2:]


@pytest.mark.parametrize("num_parts", [1, 2, 3, 4, 7, 10])
def test_parts_cover_every_record_exactly_once(rec, num_parts):
    seen = []
    for k in range(num_parts):
        with ImageRecordIter(**rec, data_shape=(3, 16, 16), batch_size=1, num_parts=num_parts,
                             part_index=k, dtype="uint8", shuffle=True) as it:
            seen += [i for g in _epoch(it) for i in g[3]]
    assert sorted(seen) == list(range(100, 100 + N))


def test_shuffle_visits_a_new_permutation_each_epoch(rec):
    with ImageRecordIter(**rec, data_shape=(3, 16, 16), batch_size=5, shuffle=True, seed=1,
                         dtype="uint8") as it:
        orders = [[i for g in _epoch(it) for i in g[3]] for _ in range(3)]
    for o in orders:
        assert sorted(o) == list(range(100, 110))
    assert orders[0] != orders[1] != orders[2]


def _run_script(it, calls):
    """Run a fixed sequence of next()/reset() calls; collect everything seen."""
    out = []
    for c in calls:
        if c == "r":
            it.reset()
            out.append("reset")
            continue
        try:
            b = it.next()
        except StopIteration:
            out.append("stop")
            continue
        out.append((b.data[0].asnumpy().tobytes(), b.label[0].asnumpy().tolist(), b.pad, b.index.tolist()))
    return out


def test_deterministic_whatever_the_threads_and_read_ahead(rec):
    """Shuffle + random crop/mirror + mid-epoch resets: identical with 1 thread and no
    read-ahead, and with 2 threads and a deep read-ahead that must be rewound."""
    calls = ["n", "r", "n", "n", "n", "n", "r", "n", "n", "n", "n", "n", "n", "r", "n"]
    kw = dict(data_shape=(3, 12, 12), batch_size=3, shuffle=True, seed=7, rand_crop=True,
              rand_mirror=True, mean_r=100, std_g=2.0)
    with ImageRecordIter(**rec, **kw, preprocess_threads=1, prefetch_buffer=1) as a, \
            ImageRecordIter(**rec, **kw, preprocess_threads=2, prefetch_buffer=8) as b:
        ra, rb = _run_script(a, calls), _run_script(b, calls)
    assert ra == rb
    assert "stop" in ra


def test_reset_in_the_middle_starts_over(rec):
    with ImageRecordIter(**rec, data_shape=(3, 16, 16), batch_size=4, dtype="uint8",
                         prefetch_buffer=6) as it:
        first = it.next().index.tolist()
        it.reset()
        assert [g[3] for g in _epoch(it)][0] == first == [100, 101, 102, 103]


def test_random_mirror_and_crop_are_plausible(expected, rec):
    meta, arrs = expected
    plain = arrs["plain/e0/data"].reshape(-1, 3, 16, 16)[:N]
    with ImageRecordIter(**rec, data_shape=(3, 16, 16), batch_size=5, dtype="uint8",
                         rand_mirror=True, seed=3) as it:
        flips = []
        for g in _epoch(it) + _epoch(it):
            for img, i in zip(g[0], g[3]):
                ref = plain[i - 100]
                if np.array_equal(img, ref):
                    flips.append(False)
                else:
                    np.testing.assert_array_equal(img, ref[:, :, ::-1])
                    flips.append(True)
    assert 0 < sum(flips) < len(flips)
    with ImageRecordIter(**rec, data_shape=(3, 14, 14), batch_size=5, dtype="uint8",
                         rand_crop=True, seed=3) as it:
        crops = [img for g in _epoch(it) for img in g[0]]
    assert all(c.shape == (3, 14, 14) for c in crops)


def _write_rec(tmp_path, items, idx=True):
    rec = str(tmp_path / "t.rec")
    w = recordio.MXIndexedRecordIO(str(tmp_path / "t.idx"), rec, "w")
    for i, (label, payload) in enumerate(items):
        w.write_idx(i, recordio.pack(IRHeader(0, label, i, 0), payload))
    w.close()
    return rec


def _png(h, w, c=3, v=0):
    return recordio.encode_image(np.full((h, w, c), v, np.uint8), img_fmt=".png")


def test_multi_label(tmp_path):
    items = [([float(i), float(-i)], _png(8, 8, v=i)) for i in range(4)]
    rec = _write_rec(tmp_path, items)
    with ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, label_width=2) as it:
        assert it.provide_label[0].shape == (2, 2)
        labels = [g[1].tolist() for g in _epoch(it)]
    assert labels == [[[0, 0], [1, -1]], [[2, -2], [3, -3]]]
    with ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2) as it, \
            pytest.raises(MXNetError, match="label_width"):
        it.next()


def test_worker_errors_reach_the_consumer_with_their_traceback(tmp_path, no_leaked_threads):
    items = [(0.0, _png(8, 8)), (1.0, b"this is not an image"), (2.0, _png(8, 8))]
    rec = _write_rec(tmp_path, items)
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=1, preprocess_threads=2)
    it.next()
    with pytest.raises(MXNetError, match="cannot decode the image of record 1") as ei:
        it.next()
    frames = [f.name for f in traceback.extract_tb(ei.value.__traceback__)]
    assert "_build_batch" in frames  # raised on the worker, re-raised here
    assert it.next().index.tolist() == [2]  # the iterator goes on
    it.close()


def test_too_small_image_is_scaled_up(tmp_path):
    # MXNet 1.9.1 scales an image smaller than data_shape up (aspect kept) before cropping
    # (pixels against MXNet: tests/porting/test_examples_data.py)
    rec = _write_rec(tmp_path, [(0.0, _png(6, 20))])
    with ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=1) as it:
        assert it.next().data[0].shape == (1, 3, 8, 8)
    with ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=1, resize=8) as it:
        assert it.next().data[0].shape == (1, 3, 8, 8)


@pytest.mark.parametrize("ext", [".npy", ".nd"])
def test_mean_img_computed_saved_and_reused(tmp_path, rec, ext):
    path = str(tmp_path / ("mean" + ext))
    kw = dict(data_shape=(3, 16, 16), batch_size=5, round_batch=False)
    with ImageRecordIter(**rec, **kw, dtype="uint8") as it:
        raw = np.concatenate([g[0] for g in _epoch(it)]).astype(np.float64)
    with ImageRecordIter(**rec, **kw, mean_img=path) as it:
        assert os.path.exists(path)
        got = np.concatenate([g[0] for g in _epoch(it)])
    mean = raw.mean(axis=0)
    np.testing.assert_allclose(got, raw - mean, atol=1e-3)
    with ImageRecordIter(**rec, **kw, mean_img=path, scale=2.0) as it:  # loads the saved file
        np.testing.assert_allclose(np.concatenate([g[0] for g in _epoch(it)]), (raw - mean) * 2, atol=2e-3)


def test_no_thread_leaks_on_close_and_gc(rec, no_leaked_threads):
    it = ImageRecordIter(**rec, data_shape=(3, 16, 16), batch_size=2, preprocess_threads=2)
    it.next()
    it.close()
    it.close()  # idempotent
    with pytest.raises(RuntimeError, match="close"):
        it.next()
    it = ImageRecordIter(**rec, data_shape=(3, 16, 16), batch_size=2, preprocess_threads=2)
    it.next()
    del it
    gc.collect()


def test_arguments(rec):
    kw = dict(**rec, data_shape=(3, 16, 16), batch_size=2)
    with ImageRecordIter(**kw, max_rotate_angle=0, verbose=True) as it:  # MXNet defaults accepted
        assert it.next().data[0].dtype == np.float32
    with pytest.raises(NotImplementedError, match="aug_seq"):
        ImageRecordIter(**kw, aug_seq="det_aug_default")
    with pytest.warns(UserWarning, match="unknown"):  # MXNet ignores unknown arguments
        ImageRecordIter(**kw, no_such_option=1).close()
    with pytest.raises(ValueError, match="data_shape"):
        ImageRecordIter(**{**kw, "data_shape": (2, 16, 16)})
    with pytest.raises(FileNotFoundError):
        ImageRecordIter(**{**kw, "path_imgrec": "/nonexistent.rec", "path_imgidx": ""})
    with ImageRecordUInt8Iter(**kw) as it:
        b = it.next()
        assert b.data[0].dtype == np.uint8 and isinstance(b.data[0], mx.nd.NDArray)
    with ImageRecordIter(**kw, dtype="float16", mean_r=1) as it:
        assert it.next().data[0].dtype == np.float16


def test_registered_and_reachable_by_name():
    assert mx.io.ImageRecordIter is ImageRecordIter
    from plexnet.plugins import registries
    assert registries().data_iters["ImageRecordIter"] is ImageRecordIter
