"""nd.save / nd.load: MXNet's binary format both ways, atomic writes, clear errors."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import plexnet as mx
from plexnet.ndarray.serialize import NDArrayFormatError

nd = mx.nd
FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")
pytestmark = pytest.mark.timeout(60)


def test_roundtrip_list_and_dict(tmp_path):
    f = str(tmp_path / "x.nd")
    arrs = [nd.array(np.arange(6).reshape(2, 3)), nd.array([1, 2], dtype="int64"), nd.ones((2,), dtype="float16")]
    nd.save(f, arrs)
    back = nd.load(f)
    for a, b in zip(arrs, back):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    nd.save(f, {"arg:w": arrs[0], "aux:m": arrs[1]})
    d = nd.load(f)
    assert sorted(d) == ["arg:w", "aux:m"]
    np.testing.assert_array_equal(d["arg:w"].asnumpy(), arrs[0].asnumpy())


def test_loads_files_written_by_mxnet():
    d = nd.load(os.path.join(FIX, "mxnet_ndarray_dict.params"))
    assert d["arg:fc1_weight"].shape == (4, 3)
    np.testing.assert_array_equal(d["arg:fc1_bias"].asnumpy(), np.arange(4))
    assert d["aux:bn_moving_var"].dtype == np.float64
    assert d["int"].dtype == np.int32
    lst = nd.load(os.path.join(FIX, "mxnet_ndarray_list.nd"))
    assert [a.dtype for a in lst] == [np.float32, np.int64, np.float16]
    np.testing.assert_array_equal(lst[2].asnumpy(), [[1.5, 2.5]])


@pytest.mark.parametrize("cut", [5, 20, 40, -3])
def test_truncated_file_raises(tmp_path, cut):
    f = str(tmp_path / "t.nd")
    nd.save(f, {"w": nd.ones((10, 10))})
    data = open(f, "rb").read()
    open(f, "wb").write(data[:cut])
    with pytest.raises(NDArrayFormatError, match="truncated|corrupted"):
        nd.load(f)


def test_garbage_file_raises(tmp_path):
    f = str(tmp_path / "g.nd")
    open(f, "wb").write(b"\x00" * 64)
    with pytest.raises(NDArrayFormatError, match="not an NDArray file"):
        nd.load(f)
    open(f, "wb").write(b"\x12\x01" + b"\xff" * 62)
    with pytest.raises(NDArrayFormatError):
        nd.load(f)


def test_save_is_atomic(tmp_path, monkeypatch):
    f = str(tmp_path / "a.nd")
    nd.save(f, [nd.ones((2,))])

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        nd.save(f, [nd.zeros((3,))])
    np.testing.assert_array_equal(nd.load(f)[0].asnumpy(), [1, 1])  # old file intact


MXPY = os.environ.get("PLEXNET_MXNET_PYTHON", "/work/mxvenv/bin/python")


@pytest.mark.skipif(not shutil.which(MXPY) and not os.path.exists(MXPY), reason="no Apache MXNet venv")
def test_mxnet_loads_our_files(tmp_path):
    f = str(tmp_path / "ours.params")
    nd.save(f, {"arg:w": nd.array(np.arange(6).reshape(2, 3)), "aux:v": nd.array([1, 2], dtype="float64")})
    out = subprocess.run([MXPY, "-c", f"import mxnet as mx; d=mx.nd.load('{f}'); "
                          "print(d['arg:w'].asnumpy().sum(), d['aux:v'].dtype)"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:2] == ["15.0", "<class"]
