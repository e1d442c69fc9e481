"""plexnet.recordio: MXNet's RecordIO format, byte for byte, both ways."""
from __future__ import annotations

import io
import json
import os
import pickle
import struct
import subprocess
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plexnet import recordio
from plexnet.recordio import IRHeader, MXIndexedRecordIO, MXRecordIO, RecordIOError

MAGIC = struct.pack("<I", 0xCED7230A)

try:
    import PIL  # noqa: F401
    HAVE_PIL = True
except ImportError:  # the image extra is not installed
    HAVE_PIL = False
needs_pil = pytest.mark.skipif(not HAVE_PIL, reason="needs Pillow (the image extra)")


@pytest.fixture(scope="module")
def raw_expected(fixtures_dir):
    with open(os.path.join(fixtures_dir, "raw_expected.json")) as f:
        return [bytes.fromhex(h) for h in json.load(f)["payloads_hex"]]


def test_read_mxnet_indexed_fixture(fixtures_dir, raw_expected):
    r = MXIndexedRecordIO(os.path.join(fixtures_dir, "raw.idx"), os.path.join(fixtures_dir, "raw.rec"), "r")
    assert r.keys == list(range(len(raw_expected)))
    for k in reversed(r.keys):  # random access
        assert r.read_idx(k) == raw_expected[k]
    r.close()


def test_read_mxnet_fixture_sequentially(fixtures_dir, raw_expected):
    with MXRecordIO(os.path.join(fixtures_dir, "raw.rec"), "r") as r:
        assert [r.read() for _ in raw_expected] == raw_expected
        assert r.read() is None
        r.reset()
        assert r.read() == raw_expected[0]


def test_write_is_byte_identical_to_mxnet(fixtures_dir, raw_expected, tmp_path):
    idx, rec = tmp_path / "o.idx", tmp_path / "o.rec"
    w = MXIndexedRecordIO(str(idx), str(rec), "w")
    for i, p in enumerate(raw_expected):
        w.write_idx(i, p)
    w.close()
    with open(os.path.join(fixtures_dir, "raw.rec"), "rb") as f:
        assert rec.read_bytes() == f.read()
    with open(os.path.join(fixtures_dir, "raw.idx")) as f:
        assert idx.read_text() == f.read()


def test_magic_inside_payload_is_split_and_restored():
    enc = recordio.encode_record(b"xyzw" + MAGIC + b"tail")
    # two parts: cflag 1 (4 bytes) then cflag 3 (4 bytes); the magic itself is dropped
    assert enc == (MAGIC + struct.pack("<I", (1 << 29) | 4) + b"xyzw"
                   + MAGIC + struct.pack("<I", (3 << 29) | 4) + b"tail")
    # unaligned magic is left alone, with 4-byte padding
    enc = recordio.encode_record(b"xy" + MAGIC + b"z")
    assert enc == MAGIC + struct.pack("<I", 7) + b"xy" + MAGIC + b"z" + b"\0"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=64),
                          st.lists(st.sampled_from([MAGIC, b"ab", b"abcd", b"\0"]), max_size=8)
                          .map(b"".join)), max_size=8))
def test_roundtrip_any_payloads(payloads):
    buf = io.BytesIO(b"".join(recordio.encode_record(p) for p in payloads))
    got = []
    while (r := recordio._read_record(buf, "mem")) is not None:
        got.append(r)
    assert got == payloads


def test_scan_offsets_and_reader_match_index(fixtures_dir, raw_expected):
    rec = os.path.join(fixtures_dir, "raw.rec")
    r = MXIndexedRecordIO(os.path.join(fixtures_dir, "raw.idx"), rec, "r")
    assert recordio.scan_offsets(rec) == [r.idx[k] for k in r.keys]
    with recordio.RecordFileReader(rec) as fr:
        assert [fr.read_at(r.idx[k]) for k in r.keys] == raw_expected
        with pytest.raises(RecordIOError, match="not the start of a record|bad magic"):
            fr.read_at(r.idx[6] + 12)  # inside the split record
    r.close()


def test_corrupt_files_raise_clear_errors(tmp_path):
    p = tmp_path / "bad.rec"
    p.write_bytes(b"\x00" * 16)
    with MXRecordIO(str(p), "r") as r, pytest.raises(RecordIOError, match="bad magic"):
        r.read()
    good = recordio.encode_record(b"hello world")
    p.write_bytes(good[:-3])
    with MXRecordIO(str(p), "r") as r, pytest.raises(RecordIOError, match="truncated"):
        r.read()
    p.write_bytes(recordio.encode_record(b"abcd" + MAGIC + b"efgh")[:12])
    with MXRecordIO(str(p), "r") as r, pytest.raises(RecordIOError):
        r.read()


def test_too_large_record_is_refused():
    big = np.zeros(1 << 29, np.uint8)  # calloc'ed lazily: no 512 MiB actually touched
    with pytest.raises(RecordIOError, match="limited"):
        recordio.encode_record(big)


def test_wrong_mode_and_closed_errors(tmp_path):
    p = str(tmp_path / "a.rec")
    w = MXRecordIO(p, "w")
    with pytest.raises(RecordIOError, match="cannot read"):
        w.read()
    w.write("text is utf-8 encoded")
    w.close()
    with pytest.raises(RecordIOError, match="closed"):
        w.write(b"x")
    with pytest.raises(ValueError, match="flag"):
        MXRecordIO(p, "a")
    r = MXRecordIO(p, "r")
    assert r.read() == b"text is utf-8 encoded"
    with pytest.raises(RecordIOError, match="cannot write"):
        r.write(b"x")


def test_pickle_reopens(tmp_path):
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    w = MXIndexedRecordIO(idx, rec, "w")
    for i in range(3):
        w.write_idx(i, b"rec%d" % i)
    w.close()
    r = MXIndexedRecordIO(idx, rec, "r")
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.read_idx(2) == b"rec2" and r2.keys == [0, 1, 2]


def test_string_keys(tmp_path):
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    w = MXIndexedRecordIO(idx, rec, "w", key_type=str)
    w.write_idx("cat", b"meow")
    w.write_idx("dog", b"woof")
    w.close()
    r = MXIndexedRecordIO(idx, rec, "r", key_type=str)
    assert r.read_idx("dog") == b"woof"
    with pytest.raises(KeyError, match="cow"):
        r.read_idx("cow")


# -- image records ---------------------------------------------------------------------------

def test_pack_unpack_headers(raw_expected):
    h, s = recordio.unpack(raw_expected[10])  # written by mx.recordio.pack
    assert h == IRHeader(0, 3.5, 77, 1) and s == b"payload"
    h, s = recordio.unpack(raw_expected[11])
    assert h.flag == 3 and h.label.tolist() == [1.0, 2.0, 3.0] and s == b"multi"
    assert recordio.pack(IRHeader(0, 3.5, 77, 1), b"payload") == raw_expected[10]
    assert recordio.pack(IRHeader(0, [1.0, 2.0, 3.0], 78, 0), b"multi") == raw_expected[11]
    assert recordio.pack(IRHeader(0, np.float32(2), 1, 0), b"") == \
        recordio.pack(IRHeader(5, 2.0, 1, 0), b"")  # scalar label: flag forced to 0


@needs_pil
def test_pack_img_png_roundtrip_is_exact_and_bgr():
    rng = np.random.default_rng(0)
    bgr = rng.integers(0, 256, (7, 9, 3), dtype=np.uint8)
    s = recordio.pack_img(IRHeader(0, 1.0, 5, 0), bgr, quality=3, img_fmt=".png")
    h, back = recordio.unpack_img(s)
    assert h.label == 1.0 and h.id == 5
    np.testing.assert_array_equal(back, bgr)
    _, rgb = recordio.unpack_img(s, channel_order="RGB")
    np.testing.assert_array_equal(rgb, bgr[:, :, ::-1])
    _, gray = recordio.unpack_img(s, iscolor=0)
    assert gray.shape == (7, 9)


@needs_pil
def test_pack_img_jpeg_and_gray(fixtures_dir):
    y, x = np.mgrid[0:16, 0:16]
    img = np.stack([x * 15, y * 15, (x + y) * 7], -1).astype(np.uint8)
    s = recordio.pack_img(IRHeader(0, [1, 2], 0, 0), img, quality=95)
    h, back = recordio.unpack_img(s, iscolor=1)
    assert h.flag == 2 and back.shape == (16, 16, 3)
    assert np.abs(back.astype(int) - img).mean() < 3
    gray = np.arange(20, dtype=np.uint8).reshape(4, 5) * 10
    _, g = recordio.unpack_img(recordio.pack_img(IRHeader(0, 0, 0, 0), gray, img_fmt=".png"))
    np.testing.assert_array_equal(g, gray)
    _, g3 = recordio.unpack_img(recordio.pack_img(IRHeader(0, 0, 0, 0), gray, img_fmt=".png"), 1)
    assert g3.shape == (4, 5, 3)


@needs_pil
def test_unpack_img_of_mxnet_fixture(fixtures_dir):
    r = MXIndexedRecordIO(os.path.join(fixtures_dir, "images.idx"),
                          os.path.join(fixtures_dir, "images.rec"), "r")
    h, img = recordio.unpack_img(r.read_idx(0))  # a 20x24 RGB PNG
    assert h.id == 100 and h.label == 0.0 and img.shape == (20, 24, 3)
    h, img = recordio.unpack_img(r.read_idx(8))  # grayscale PNG stays 2-D with iscolor=-1
    assert h.id == 108 and img.ndim == 2
    r.close()


@pytest.fixture
def no_pillow(monkeypatch):
    """Importing ``PIL`` fails, as without Pillow installed."""
    import builtins
    real = builtins.__import__

    def fake(name, *a, **k):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("No module named 'PIL'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)


def test_pillow_missing_gives_install_hint(no_pillow):
    with pytest.raises(ImportError, match="Pillow"):
        recordio.unpack_img(recordio.pack(IRHeader(0, 0, 0, 0), b"\x89PNG"))


@pytest.fixture
def no_opencv(monkeypatch):
    """Importing ``cv2`` fails, as without OpenCV installed."""
    import builtins

    from plexnet.io import decode
    real = builtins.__import__

    def fake(name, *a, **k):
        if name == "cv2" or name.startswith("cv2."):
            raise ImportError("No module named 'cv2'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    monkeypatch.setattr(decode, "_cv2", None)


def test_image_record_iter_without_opencv_says_how_to_install(fixtures_dir, no_opencv):
    from plexnet.io import ImageRecordIter
    with pytest.raises(ImportError, match=r"pip install 'plexnet\[image\]'"):
        ImageRecordIter(path_imgrec=os.path.join(fixtures_dir, "images.rec"), data_shape=(3, 16, 16),
                        batch_size=2)


# -- the other direction: plexnet writes, Apache MXNet reads -------------------------------

@needs_pil
def test_mxnet_reads_plexnet_files(tmp_path, mxnet_python, raw_expected):
    idx, rec = str(tmp_path / "p.idx"), str(tmp_path / "p.rec")
    w = MXIndexedRecordIO(idx, rec, "w")
    for i, p in enumerate(raw_expected):
        w.write_idx(i, p)
    img = np.tile(np.arange(32, dtype=np.uint8)[None, :, None] * 8, (24, 1, 3))
    w.write_idx(len(raw_expected), recordio.pack_img(IRHeader(0, 7.0, 99, 0), img, img_fmt=".png"))
    w.close()
    script = textwrap.dedent(f"""
        import json, mxnet as mx
        r = mx.recordio.MXIndexedRecordIO({idx!r}, {rec!r}, 'r')
        out = [r.read_idx(k).hex() for k in r.keys[:-1]]
        h, s = mx.recordio.unpack(r.read_idx(r.keys[-1]))
        img = mx.image.imdecode(s, to_rgb=0).asnumpy()
        print(json.dumps({{"raw": out, "label": float(h.label), "id": int(h.id),
                           "img": img[:, :, 0].tolist()}}))
    """)
    res = subprocess.run([mxnet_python, "-c", script], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert [bytes.fromhex(h) for h in got["raw"]] == raw_expected
    assert got["label"] == 7.0 and got["id"] == 99
    np.testing.assert_array_equal(np.asarray(got["img"]), img[:, :, 0])


@needs_pil
def test_mxnet_image_record_iter_reads_plexnet_rec(tmp_path, mxnet_python):
    idx, rec = str(tmp_path / "i.idx"), str(tmp_path / "i.rec")
    w = MXIndexedRecordIO(idx, rec, "w")
    rng = np.random.default_rng(1)
    imgs = [rng.integers(0, 256, (8, 10, 3), dtype=np.uint8) for _ in range(5)]
    for i, im in enumerate(imgs):  # BGR in, like OpenCV
        w.write_idx(i, recordio.pack_img(IRHeader(0, float(i), i, 0), im, img_fmt=".png"))
    w.close()
    script = textwrap.dedent(f"""
        import json, mxnet as mx
        it = mx.io.ImageRecordIter(path_imgrec={rec!r}, path_imgidx={idx!r}, data_shape=(3, 8, 10),
                                   batch_size=5, dtype='uint8')
        b = it.next()
        print(json.dumps({{"data": b.data[0].asnumpy().tolist(), "label": b.label[0].asnumpy().tolist()}}))
    """)
    res = subprocess.run([mxnet_python, "-c", script], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["label"] == [0, 1, 2, 3, 4]
    # MXNet's iterator gives RGB, CHW
    np.testing.assert_array_equal(np.asarray(got["data"]),
                                  np.stack([im[:, :, ::-1].transpose(2, 0, 1) for im in imgs]))
