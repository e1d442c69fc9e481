"""CSVIter and MNISTIter against what Apache MXNet 1.9.1 returned (iters_expected.json)."""
from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from plexnet.base import MXNetError
from plexnet.io import CSVIter, MNISTIter


def _descs(ds):
    return [[d.name, list(d.shape), np.dtype(d.dtype).name, d.layout] for d in ds]


def _check(got, exp, index=True):
    assert len(got) == len(exp)
    for g_ep, e_ep in zip(got, exp):
        assert len(g_ep) == len(e_ep), ([g["index"] for g in g_ep], [e["index"] for e in e_ep])
        for g, e in zip(g_ep, e_ep):
            assert g["pad"] == e["pad"]
            if index:
                assert g["index"] == e["index"]
            for a, b in zip(g["data"] + g["label"], e["data"] + e["label"]):
                np.testing.assert_allclose(a, np.asarray(b, dtype=a.dtype), rtol=0, atol=1e-6)


# -- CSVIter ---------------------------------------------------------------------------------

@pytest.fixture
def csv_files(tmp_path, iters_expected):
    inp = iters_expected["csv"]["inputs"]
    paths = {}
    for key, fname in (("data", "d.csv"), ("label", "l.csv"), ("label2", "l2.csv")):
        p = tmp_path / fname
        arr = np.asarray(inp[key])
        np.savetxt(p, arr.reshape(len(arr), -1), delimiter=",", fmt="%g")
        paths[key] = str(p)
    return paths


@pytest.mark.parametrize("round_batch", [True, False])
@pytest.mark.parametrize("key", ["l1", "l2", "none"])
def test_csv_matches_mxnet(csv_files, iters_expected, collect, round_batch, key):
    exp = iters_expected["csv"][f"{key}/round{int(round_batch)}"]
    extra = {"l1": dict(label_csv=csv_files["label"]),
             "l2": dict(label_csv=csv_files["label2"], label_shape=(2,)), "none": {}}[key]
    it = CSVIter(data_csv=csv_files["data"], data_shape=(2, 3), batch_size=4, round_batch=round_batch,
                 **extra)
    assert _descs(it.provide_data) == exp["provide_data"]
    assert _descs(it.provide_label) == exp["provide_label"]
    got = collect(it, 3)
    if round_batch:
        _check(got, exp["epochs"])
    else:
        # MXNet leaves stale rows in the tail of the padded batch; plexnet repeats the
        # batch's own rows. pad, batch count and the real rows agree.
        for g_ep, e_ep in zip(got, exp["epochs"]):
            assert [g["pad"] for g in g_ep] == [e["pad"] for e in e_ep] == [0, 0, 2]
            last_g, last_e = g_ep[-1], e_ep[-1]
            np.testing.assert_allclose(last_g["data"][0][:2], np.asarray(last_e["data"][0])[:2])
            assert last_g["index"] == [8, 9, 8, 9]
        _check([ep[:-1] for ep in got], [ep[:-1] for ep in exp["epochs"]])
    it.close()


def test_csv_streams_without_reading_the_whole_file(tmp_path):
    p = tmp_path / "big.csv"
    with open(p, "w") as f:
        for i in range(1000):
            f.write(f"{i},{i}\n")
    it = CSVIter(data_csv=str(p), data_shape=(2,), batch_size=10)
    b = next(it)
    assert b.data[0].asnumpy()[:, 0].tolist() == list(range(10))
    # only the first batch's lines have been read
    assert it._data.lineno == 10
    it.close()


def test_csv_dtype_and_errors(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,2,3\n4,5,6\n\n7,8,9\n")
    it = CSVIter(data_csv=str(p), data_shape=(3,), batch_size=3, dtype="int32")
    b = next(it)
    assert b.data[0].dtype == np.int32
    assert b.data[0].asnumpy().tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    it.close()
    with pytest.raises(MXNetError, match="expected 4"):
        next(CSVIter(data_csv=str(p), data_shape=(4,), batch_size=2))
    with pytest.raises(FileNotFoundError):
        CSVIter(data_csv=str(tmp_path / "nope.csv"), data_shape=(3,), batch_size=2)
    short = tmp_path / "l.csv"
    short.write_text("1\n")
    with pytest.raises(MXNetError, match="fewer rows"):
        list(CSVIter(data_csv=str(p), data_shape=(3,), label_csv=str(short), batch_size=2))
    with pytest.warns(UserWarning, match="unknown"):  # MXNet ignores unknown arguments
        CSVIter(data_csv=str(p), data_shape=(3,), batch_size=2, bogus=1)


def test_csv_fewer_rows_than_batch_wraps(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1\n2\n3\n")
    it = CSVIter(data_csv=str(p), data_shape=(1,), batch_size=7)
    b = next(it)
    assert b.data[0].asnumpy()[:, 0].tolist() == [1, 2, 3, 1, 2, 3, 1]
    assert b.pad == 4
    it.close()


# -- MNISTIter -------------------------------------------------------------------------------

def _write_idx(path, arr, gz=False):
    arr = np.asarray(arr, dtype=np.uint8)
    head = struct.pack(">HBB", 0, 0x08, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    opener = gzip.open if gz else open
    with opener(path, "wb") as f:
        f.write(head + arr.tobytes())


@pytest.fixture
def mnist_files(tmp_path, iters_expected):
    inp = iters_expected["mnist"]["inputs"]
    img, lab = str(tmp_path / "img-idx3-ubyte"), str(tmp_path / "lab-idx1-ubyte")
    _write_idx(img, inp["images"])
    _write_idx(lab, inp["labels"])
    return img, lab


@pytest.mark.parametrize("key,kw", [("plain", dict(shuffle=False)), ("flat", dict(shuffle=False, flat=True))])
def test_mnist_matches_mxnet(mnist_files, iters_expected, collect, key, kw):
    exp = iters_expected["mnist"][key]
    it = MNISTIter(image=mnist_files[0], label=mnist_files[1], batch_size=3, **kw)
    assert _descs(it.provide_data) == exp["provide_data"]
    assert _descs(it.provide_label) == exp["provide_label"]
    got = collect(it, 2)
    _check(got, exp["epochs"], index=False)  # MXNet reports index 0 for every example
    assert got[0][1]["index"] == [3, 4, 5]


def test_mnist_parts_cover_everything_once(mnist_files, iters_expected):
    n = len(iters_expected["mnist"]["inputs"]["labels"])
    seen = []
    for k in range(3):
        it = MNISTIter(image=mnist_files[0], label=mnist_files[1], batch_size=1, shuffle=True,
                       num_parts=3, part_index=k, seed=5)
        seen += [int(i) for b in it for i in b.index]
    assert sorted(seen) == list(range(n))


def test_mnist_shuffle_is_seeded_and_fixed_across_epochs(mnist_files):
    def order(seed):
        it = MNISTIter(image=mnist_files[0], label=mnist_files[1], batch_size=2, shuffle=True, seed=seed)
        eps = []
        for _ in range(2):
            eps.append([int(i) for b in it for i in b.index])
            it.reset()
        return eps

    a, b = order(1), order(1)
    assert a == b and a[0] == a[1]
    assert sorted(a[0]) == sorted(order(2)[0]) and a[0] != list(range(10))


def test_mnist_gzip_and_label_pairing(tmp_path):
    imgs = np.arange(6 * 2 * 2).reshape(6, 2, 2) % 256
    labs = np.arange(6)
    img, lab = str(tmp_path / "i.gz"), str(tmp_path / "l.gz")
    _write_idx(img, imgs, gz=True)
    _write_idx(lab, labs, gz=True)
    it = MNISTIter(image=img, label=lab, batch_size=2, shuffle=True, seed=3)
    for b in it:
        x, y, idx = b.data[0].asnumpy(), b.label[0].asnumpy(), b.index
        np.testing.assert_allclose(x.reshape(2, -1) * 256, imgs.reshape(6, -1)[idx.astype(int)])
        np.testing.assert_array_equal(y, labs[idx.astype(int)])


def test_mnist_errors(tmp_path, mnist_files):
    with pytest.raises(MXNetError, match="dimensions"):
        MNISTIter(image=mnist_files[1], label=mnist_files[0], batch_size=2)
    bad = tmp_path / "bad"
    bad.write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(MXNetError, match="not an idx file"):
        MNISTIter(image=str(bad), label=mnist_files[1], batch_size=2)
    with pytest.raises(FileNotFoundError):
        MNISTIter(image=str(tmp_path / "nope"), label=mnist_files[1], batch_size=2)
    with pytest.raises(ValueError, match="part_index"):
        MNISTIter(image=mnist_files[0], label=mnist_files[1], batch_size=2, num_parts=2, part_index=2)
