"""Point 8 of issue 13: no silent dtype promotion, and ``slice`` edge cases as MXNet.

Both replay tests/fixtures/mxnet_dtype_slice_rules.json, recorded from MXNet 1.9.1 by
tests/fixtures/make_mxnet_dtype_slice_fixtures.py.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import plexnet as mx
from plexnet.base import PlexnetError

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet_dtype_slice_rules.json")
with open(FIX) as _f:
    RULES = json.load(_f)
pytestmark = pytest.mark.timeout(60)


def _x(dt, s=(2, 2)):
    return mx.nd.ones(s, dtype=dt)


CASES = {
    "FullyConnected(data f32, weight f16)": lambda: mx.nd.FullyConnected(_x("float32"), _x("float16"),
                                                                          num_hidden=2, no_bias=True),
    "FullyConnected(data f16, weight f16, bias f32)": lambda: mx.nd.FullyConnected(
        _x("float16"), _x("float16"), _x("float32", (2,)), num_hidden=2),
    "elemwise_add(f32, f16)": lambda: mx.nd.elemwise_add(_x("float32"), _x("float16")),
    "concat(f32, int32)": lambda: mx.nd.concat(_x("float32"), _x("int32"), dim=0),
    "dot(f32, f16)": lambda: mx.nd.dot(_x("float32"), _x("float16")),
    "dot(f64, f32)": lambda: mx.nd.dot(_x("float64"), _x("float32")),
    "f32 + f16": lambda: _x("float32") + _x("float16"),
    "broadcast_mul(f32, int32)": lambda: mx.nd.broadcast_mul(_x("float32"), _x("int32")),
    "add_n(f32, f16)": lambda: mx.nd.add_n(_x("float32"), _x("float16")),
    "stack(f32, f64)": lambda: mx.nd.stack(_x("float32"), _x("float64")),
    "BatchNorm(data f16, params f32)": lambda: mx.nd.BatchNorm(
        _x("float16", (1, 2, 2, 1)), _x("float32", (2,)), _x("float32", (2,)), _x("float32", (2,)),
        _x("float32", (2,))),
    "BatchNorm(data f16, gamma f16)": lambda: mx.nd.BatchNorm(
        _x("float16", (1, 2, 2, 1)), _x("float16", (2,)), _x("float32", (2,)), _x("float32", (2,)),
        _x("float32", (2,))),
    "broadcast_like(f32, int32)": lambda: mx.nd.broadcast_like(_x("float32", (1, 2)), _x("int32")),
    "reshape_like(f32, f16)": lambda: mx.nd.reshape_like(_x("float32"), _x("float16", (4,))),
    "slice_like(f32, int32)": lambda: mx.nd.slice_like(_x("float32"), _x("int32", (1, 1))),
    "where(cond int32, f32, f32)": lambda: mx.nd.where(_x("int32"), _x("float32"), _x("float32")),
}


def test_fixture_covers_every_case():
    assert set(CASES) == set(RULES["mixed_dtypes"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_mixed_dtypes_as_mxnet(name):
    want = RULES["mixed_dtypes"][name]
    if want["ok"]:
        r = CASES[name]()
        assert np.dtype(r.dtype).name == want["dtype"]
    else:
        op = name.split("(")[0].strip()
        with pytest.raises(PlexnetError, match=r"(?s)requires .*input types: .*=.*do(es)? not promote"):
            CASES[name]().wait_to_read()
        try:
            CASES[name]()
        except PlexnetError as e:  # names the operator and every argument with its dtype
            msg = str(e)
            assert op.split()[0].lower() in msg.lower() or "broadcast_add" in msg


@pytest.mark.parametrize("build", [
    lambda a, b: mx.sym.FullyConnected(a, weight=b, num_hidden=2, no_bias=True, name="fc"),
    lambda a, b: mx.sym.elemwise_add(a, b, name="fc"),
    lambda a, b: mx.sym.concat(a, b, name="fc"),
    lambda a, b: mx.sym.dot(a, b, name="fc"),
])
def test_symbolic_infer_type_refuses_mixing(build):
    s = build(mx.sym.var("a"), mx.sym.var("b"))
    with pytest.raises(PlexnetError, match=r"Error in operator fc .*inconsistent for argument .*'b'.*float16"):
        s.infer_type(a="float32", b="float16")


def _slice(rec):
    x = mx.nd.array(np.arange(24, dtype=np.float32).reshape(4, 6))
    kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in rec["kwargs"].items()}
    return getattr(mx.nd, rec["op"])(x, **kw)


@pytest.mark.parametrize("rec", RULES["slices"], ids=lambda r: f"{r['op']}-{r['kwargs']}")
def test_slice_edges_as_mxnet(rec):
    mkldnn_only = not rec["ok"] and "sub-memory" in rec["error"]
    if rec["ok"] or mkldnn_only:
        # MXNet's shape inference clips a begin before the start; only its MKLDNN forward
        # then fails, so plexnet follows the shape inference
        r = _slice(rec)
        want = rec["shape"] if rec["ok"] else rec["infer_shape"]
        assert list(r.shape) == want
        if rec["ok"]:
            np.testing.assert_array_equal(r.asnumpy(), np.asarray(rec["values"], np.float32).reshape(want))
    else:
        with pytest.raises(PlexnetError, match=r"slice(_axis)?: .*(empty range|invalid range)"):
            _slice(rec).wait_to_read()
