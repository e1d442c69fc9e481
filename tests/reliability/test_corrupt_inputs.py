"""Point 6 of issue 13: corruption is detected and forged files are refused with
plexnet's own error naming the file and the field."""
from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess

import numpy as np
import pytest

import plexnet as mx
from plexnet.io.mnist_iter import read_idx_file
from plexnet.ndarray.serialize import TRAILER_MAGIC, NDArrayFormatError
from plexnet.recordio import MXIndexedRecordIO, RecordFileReader, RecordIOError
from plexnet.symbol.json_io import SymbolJSONError

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")
MXPY = os.environ.get("PLEXNET_MXNET_PYTHON", "/work/mxvenv/bin/python")
pytestmark = pytest.mark.timeout(120)


# -- .params checksums ------------------------------------------------------------------------
def test_plexnet_params_carry_a_checksum_and_a_flipped_bit_is_caught(tmp_path):
    f = str(tmp_path / "w.params")
    mx.nd.save(f, {"arg:w": mx.nd.array(np.arange(64, dtype=np.float32))})
    data = bytearray(open(f, "rb").read())
    assert data[-24:-16] == TRAILER_MAGIC
    data[100] ^= 0x01  # one bit of the weights: still parses, but is wrong
    open(f, "wb").write(bytes(data))
    with pytest.raises(NDArrayFormatError, match=r"w\.params: checksum mismatch"):
        mx.nd.load(f)


def test_mxnet_files_without_checksum_still_load():
    d = mx.nd.load(os.path.join(FIX, "mxnet_ndarray_dict.params"))
    assert d["arg:fc1_weight"].shape == (4, 3)
    assert len(mx.nd.load(os.path.join(FIX, "mxnet_cnn_bn-0000.params"))) > 0


@pytest.mark.skipif(not os.path.exists(MXPY), reason="no Apache MXNet venv")
def test_mxnet_loads_checksummed_files(tmp_path):
    f = str(tmp_path / "ours.params")
    mx.nd.save(f, {"arg:w": mx.nd.array(np.arange(6).reshape(2, 3)), "aux:v": mx.nd.array([1, 2], dtype="float64")})
    mx.model.save_checkpoint(str(tmp_path / "m"), 3, mx.sym.Variable("x") * 2,
                             {"w": mx.nd.ones((2,))}, {})
    code = (f"import mxnet as mx; d=mx.nd.load('{f}'); print(d['arg:w'].asnumpy().sum(), d['aux:v'].dtype); "
            f"s, a, x = mx.model.load_checkpoint('{tmp_path / 'm'}', 3); print(a['w'].asnumpy().sum())")
    out = subprocess.run([MXPY, "-c", code], capture_output=True, text=True, timeout=100,
                         env={**os.environ, "OPENBLAS_CORETYPE": "SkylakeX"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["15.0", "<class", "'numpy.float64'>", "2.0"]


def _ndfile(arrays_bytes: list[bytes], names: list[str]) -> bytes:
    out = struct.pack("<QQQ", 0x112, 0, len(arrays_bytes)) + b"".join(arrays_bytes)
    out += struct.pack("<Q", len(names))
    for n in names:
        out += struct.pack("<Q", len(n)) + n.encode()
    return out


def _array(shape, flag=0, data=b""):
    return (struct.pack("<IiI", 0xF993FAC9, 0, len(shape)) + struct.pack(f"<{len(shape)}q", *shape)
            + struct.pack("<iii", 1, 0, flag) + data)


def test_duplicate_names_are_an_error(tmp_path):
    f = tmp_path / "dup.params"
    one = _array((1,), data=np.float32(1).tobytes())
    f.write_bytes(_ndfile([one, one], ["arg:w", "arg:w"]))
    with pytest.raises(NDArrayFormatError, match=r"dup\.params: name 'arg:w' occurs more than once"):
        mx.nd.load(str(f))


@pytest.mark.parametrize("shape", [(2 ** 62, 2 ** 62, 4), (2 ** 32, 2 ** 32), (0, 2 ** 63 - 1, 2 ** 63 - 1)])
def test_int64_overflowing_shapes(tmp_path, shape):
    f = tmp_path / "big.params"
    f.write_bytes(_ndfile([_array(shape, data=b"\0" * 16)], ["w"]))
    with pytest.raises(NDArrayFormatError, match=r"big\.params: array 0"):
        mx.nd.load(str(f))


# -- RecordIO index ---------------------------------------------------------------------------
def test_negative_idx_offset(tmp_path):
    w = MXIndexedRecordIO(str(tmp_path / "d.idx"), str(tmp_path / "d.rec"), "w")
    w.write_idx(0, b"abc")
    w.close()
    (tmp_path / "d.idx").write_text("0\t0\n1\t-16\n")
    with pytest.raises(RecordIOError, match=r"d\.idx:2: negative offset -16"):
        MXIndexedRecordIO(str(tmp_path / "d.idx"), str(tmp_path / "d.rec"), "r")
    (tmp_path / "d.idx").write_text("0\tzz\n")
    with pytest.raises(RecordIOError, match=r"d\.idx:1: offset 'zz' is not an integer"):
        MXIndexedRecordIO(str(tmp_path / "d.idx"), str(tmp_path / "d.rec"), "r")
    with RecordFileReader(str(tmp_path / "d.rec")) as r:
        with pytest.raises(RecordIOError, match=r"d\.rec: negative record offset"):
            r.read_at(-8)


# -- MNIST headers ----------------------------------------------------------------------------
@pytest.mark.parametrize("gz", [False, True])
def test_forged_mnist_header(tmp_path, gz):
    f = tmp_path / ("img.gz" if gz else "img")
    body = b"\0\0\x08\x03" + struct.pack(">III", 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF) + b"\0" * 100
    f.write_bytes(gzip.compress(body) if gz else body)
    with pytest.raises(mx.base.MXNetError, match=r"img(\.gz)?: header says dimensions .* truncated or forged"):
        read_idx_file(str(f), 3)
    f.write_bytes(b"\0\0\x08\x03\0\0")  # header cut short
    with pytest.raises(mx.base.MXNetError, match="truncated in its header"):
        read_idx_file(str(f), 3)


# -- Symbol JSON ------------------------------------------------------------------------------
def _good():
    return json.loads(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc").tojson())


def _bad_docs():
    d = _good()
    d["nodes"][3]["inputs"][0][0] = -1
    yield "neg-input", d, r"nodes\[3\] \('fc'\)\.inputs\[0\]: node index -1"
    d = _good()
    d["heads"][0][0] = -2
    yield "neg-head", d, r"heads\[0\]: node index -2"
    d = _good()
    d["heads"][0][1] = 5
    yield "head-output", d, r"heads\[0\]: output index 5 of node 3 out of range"
    d = _good()
    d["nodes"][3]["inputs"] = {"a": 1}
    yield "inputs-type", d, r"nodes\[3\] \('fc'\)\.inputs: expected a list"
    d = _good()
    d["nodes"][3]["inputs"][1] = ["1", 0, 0]
    yield "index-type", d, r"inputs\[1\]: expected \[node, output, version\] integers"
    d = _good()
    d["nodes"] = "xyz"
    yield "nodes-type", d, r"'nodes' and 'heads' must be lists"
    d = _good()
    d["nodes"][0] = 7
    yield "node-type", d, r"nodes\[0\]: expected an object"
    d = _good()
    d["nodes"][3]["attrs"] = {"num_hidden": {"x": 1}}
    yield "attr-type", d, r"attrs\['num_hidden'\]: expected a string"
    d = _good()
    d["nodes"][3]["name"] = 12
    yield "name-type", d, r"'op' and 'name' must be strings"


@pytest.mark.parametrize("case", list(_bad_docs()), ids=lambda c: c[0])
def test_malformed_symbol_json(tmp_path, case):
    _, doc, pattern = case
    f = tmp_path / "net-symbol.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(SymbolJSONError, match=r"net-symbol\.json: .*" + pattern):
        mx.sym.load(str(f))


def test_deeply_nested_symbol_json(tmp_path):
    f = tmp_path / "deep.json"
    f.write_text('{"nodes": ' + "[" * 200000 + "]" * 200000 + ', "heads": []}')
    with pytest.raises(SymbolJSONError, match=r"deep\.json: JSON nested too deeply"):
        mx.sym.load(str(f))
    with pytest.raises(SymbolJSONError, match="symbol JSON: "):
        mx.sym.load_json('{"nodes": [[[[[]]]]], "heads": [[0, 0, 0]]}')


def test_good_symbol_json_still_loads():
    s = mx.sym.load(os.path.join(FIX, "mxnet_cnn_bn-symbol.json"))
    assert "data" in s.list_arguments()


# -- property: any single flipped bit of a plexnet file is an error, never other data -------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from plexnet.ndarray.serialize import dump_buffer, load_buffer  # noqa: E402

_dtypes = st.sampled_from(["float32", "float64", "float16", "int32", "int64", "uint8"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text("abcxyz:_", min_size=1, max_size=8), _dtypes,
                          st.lists(st.integers(0, 4), min_size=1, max_size=3)), min_size=1, max_size=4, unique_by=lambda t: t[0]),
       st.data())
def test_any_flipped_bit_is_detected(arrays, data):
    d = {name: np.arange(int(np.prod(shape)) if shape else 1).astype(dt).reshape(shape)
         for name, dt, shape in arrays}
    buf = dump_buffer(d)
    back = load_buffer(buf, "x.params")
    assert list(back) == list(d) and all(np.array_equal(back[k], d[k]) for k in d)
    pos = data.draw(st.integers(0, len(buf) - 1))
    bit = data.draw(st.integers(0, 7))
    bad = bytearray(buf)
    bad[pos] ^= 1 << bit
    with pytest.raises(NDArrayFormatError):
        load_buffer(bytes(bad), "x.params")
