"""Shape and type inference with partial information, against MXNet 1.9.1 (recorded by
``tests/fixtures/make_mxnet_frontend_fixtures.py``): the symbols are MXNet's own JSON."""
from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import plexnet as mx

pytestmark = pytest.mark.timeout(120)

_FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "mxnet_frontend.json")
with open(_FIX) as _f:
    DOC = json.load(_f)

KNOWN: dict[tuple, str] = {}


def _norm(r):
    if r is None:
        return None
    if isinstance(r, (list, tuple)):
        return [_norm(x) for x in r]
    if isinstance(r, type):
        return np.dtype(r).name
    return r


def _covers(got, want):
    """Per shape: ``got`` agrees with MXNet wherever MXNet knows a dimension; where MXNet
    has no shape at all (``()``), plexnet may know more."""
    assert len(got) == len(want) == 3
    for g_list, w_list in zip(got, want):
        assert len(g_list) == len(w_list)
        for g, w in zip(g_list, w_list):
            if w == []:
                continue
            if len(g) != len(w) or any(wd != 0 and gd != wd for gd, wd in zip(g, w)):
                return False
    return True


CASES = [(c, mode) for c in DOC["infer"] for mode in ("full", "partial")]


@pytest.mark.parametrize("case,mode", CASES,
                         ids=[f"{c['symbol']}-{c['kind']}-{json.dumps(c['spec'])}-{m}" for c, m in CASES])
def test_inference_matches_mxnet(case, mode):
    key = (case["symbol"], case["kind"], json.dumps(case["spec"]), mode)
    if key not in KNOWN:
        _check_inference(case, mode)
        return
    try:
        _check_inference(case, mode)
    except (Exception, pytest.fail.Exception):  # noqa: BLE001 - the known difference
        pytest.xfail(KNOWN[key])
    pytest.fail(f"known difference {key} is gone: remove it from KNOWN")


def _check_inference(case, mode):
    s = mx.sym.load_json(case["json"])
    fn = getattr(s, f"infer_{case['kind']}" + ("_partial" if mode == "partial" else ""))
    want = case[mode]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if "error" in want:
            with pytest.raises(mx.base.MXNetError):
                fn(**case["spec"])
            return
        got = _norm(list(fn(**case["spec"])))
    if want["result"] == [None, None, None]:
        assert got == [None, None, None]
        assert w, "infer_* must warn when it cannot decide"
        return
    assert not any("Cannot decide" in str(x.message) for x in w)
    if mode == "full" or case["kind"] == "type":
        assert got == want["result"]
    else:
        assert _covers(got, want["result"]), (got, want["result"])
    if case["kind"] == "shape":
        assert s.list_arguments() == case["arguments"]
        assert s.list_outputs() == case["outputs"]
        assert s.list_auxiliary_states() == case["aux"]


def test_partial_never_raises_for_missing_inputs():
    data = mx.sym.Variable("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="sm")
    arg, out, aux = net.infer_shape_partial()
    assert arg == [(), (), (), ()] and out == [()] and aux == []
    arg, out, _ = net.infer_shape_partial(data=(0, 5))
    assert arg == [(0, 5), (3, 5), (3,), (0,)] and out == [(0, 3)]
    # positional () means unknown too
    assert net.infer_shape_partial((), (3, 5))[0][1] == (3, 5)
    # a later, fuller spec fills the unknown dimension
    assert net.infer_shape(data=(4, 5))[1] == [(4, 3)]


def test_shape_attr_with_unknown_dimension():
    a = mx.sym.Variable("a", shape=(0, 3))
    fc = mx.sym.FullyConnected(a, num_hidden=2, name="fc")
    assert fc.infer_shape_partial()[1] == [(0, 2)]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert fc.infer_shape() == (None, None, None)
        assert "0s in shape" in str(w[0].message)
    # a keyword shape overrides the attribute
    assert fc.infer_shape(a=(5, 3))[1] == [(5, 2)]
