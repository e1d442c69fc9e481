"""Point 8 of issue 13: no silent dtype promotion, and ``slice`` edge cases as MXNet.

Both replay tests/fixtures/mxnet_dtype_slice_rules.json, recorded from MXNet 1.9.1 by
tests/fixtures/make_mxnet_dtype_slice_fixtures.py.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

import plexnet as mx
from plexnet.base import PlexnetError

FIXDIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
FIX = os.path.join(FIXDIR, "mxnet_dtype_slice_rules.json")
if FIXDIR not in sys.path:
    sys.path.insert(0, FIXDIR)
from dtype_slice_cases import mixed_dtype_cases  # noqa: E402
with open(FIX) as _f:
    RULES = json.load(_f)
pytestmark = pytest.mark.timeout(60)


CASES = mixed_dtype_cases(mx)


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
