"""mx.nd names and behaviours against MXNet 1.9.1 (``tests/fixtures/make_mxnet_frontend2_fixtures.py``):
``CachedOp``, the indexing helpers, slices MXNet refuses, ``broadcast_like``, positional
calls, average pooling's border gradient; plus ``imdecode`` and the DLPack helpers."""
from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, nd
from plexnet.ndarray import legacy

pytestmark = pytest.mark.timeout(120)

_FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "mxnet_frontend2.json")
with open(_FIX) as _f:
    DOC = json.load(_f)


def _check(got, want, what=""):
    a = got.asnumpy()
    assert list(a.shape) == want["shape"], what
    np.testing.assert_allclose(a.astype("float64").ravel(), want["values"], rtol=1e-4, atol=1e-5, err_msg=what)


# -- CachedOp ------------------------------------------------------------------------------------------

def _cached_inputs():
    c = DOC["cached_op"]
    return c, [nd.array(np.array(c["values"][n]).reshape(c["shapes"][n])) for n in c["inputs"]]


def test_cached_op_matches_mxnet():
    c, ins = _cached_inputs()
    s = mx.sym.load_json(c["json"])
    assert s.list_inputs() == c["inputs"]
    op = nd.CachedOp(s)
    for got, want in zip(op(*ins), c["infer"]):
        _check(got, want, "inference")
    for a in ins[:5]:
        a.attach_grad()
    head = nd.array(np.array(c["head"]).reshape(4, 3))
    with autograd.record():
        r = op(*ins)
        loss = (r[0] * head).sum() + (r[1] * r[1]).sum()
    loss.backward()
    rec = c["record"]
    for got, want in zip(r, rec["outputs"]):
        _check(got, want, "training outputs")
    for n, a in zip(c["inputs"][:5], ins[:5]):
        _check(a.grad, rec["grads"][n], f"gradient of {n}")
    for n, a in zip(c["inputs"][5:], ins[5:]):  # BatchNorm's moving statistics updated in the caller's arrays
        _check(a, rec["aux_after"][n], n)


def test_cached_op_flags_and_errors():
    c, ins = _cached_inputs()
    fc = mx.sym.load_json(c["json"]).get_internals()["fc_output"]
    flagged = nd.CachedOp(fc, [("data_indices", [0]), ("param_indices", [1, 2])])
    _check(flagged(*ins[:3]), c["flagged"])
    op = nd.CachedOp(mx.sym.load_json(c["json"]))
    with pytest.raises(mx.base.MXNetError, match="takes 7 inputs"):
        op(ins[0])
    with pytest.raises(TypeError, match=re.escape(c["errors"]["unknown_kwarg"]["message"])):
        op(*ins, foo=1)
    with pytest.raises(mx.base.MXNetError, match="foo"):
        nd.CachedOp(fc, [("foo", 1)])
    with pytest.raises(mx.base.MXNetError, match="cover"):
        nd.CachedOp(fc, [("data_indices", [0])])
    nd.CachedOp(fc, [("static_alloc", True), ("static_shape", "true")])  # accepted, as MXNet


def test_cached_op_reuses_and_rebinds():
    x = mx.sym.var("x")
    w = mx.sym.var("w")
    op = nd.CachedOp(mx.sym.dot(x, w), [("data_indices", [0]), ("param_indices", [1])])
    W = nd.array(np.eye(3) * 2)
    for k in range(3):  # new data each call, same parameter: one executor
        xv = np.arange(6, dtype=np.float32).reshape(2, 3) + k
        np.testing.assert_allclose(op(nd.array(xv), W).asnumpy(), xv * 2)
    assert sum(len(v) for v in op._bound.values()) == 1
    np.testing.assert_allclose(op(nd.ones((4, 3)), W).asnumpy(), np.full((4, 3), 2.0))  # a new shape
    W2 = nd.array(np.eye(3) * 3)  # another parameter array: rebound, not stale
    np.testing.assert_allclose(op(nd.ones((4, 3)), W2).asnumpy(), np.full((4, 3), 3.0))
    out = nd.zeros((4, 3))
    assert op(nd.ones((4, 3)), W, out=out) is out
    np.testing.assert_allclose(out.asnumpy(), np.full((4, 3), 2.0))


def test_cached_op_two_calls_in_one_record():
    x, w = mx.sym.var("x"), mx.sym.var("w")
    op = nd.CachedOp(x * w)
    a, b, W = nd.array([1.0, 2.0]), nd.array([3.0, 4.0]), nd.array([5.0, 6.0])
    W.attach_grad()
    a.attach_grad()
    with autograd.record():
        y = op(a, W) + op(b, W)  # the first executor is still needed by backward
    y.backward()
    np.testing.assert_allclose(W.grad.asnumpy(), [4.0, 6.0])
    np.testing.assert_allclose(a.grad.asnumpy(), [5.0, 6.0])


# -- indexing helpers ---------------------------------------------------------------------------------------

def _key_repr(k):
    out = []
    for i in k:
        if isinstance(i, slice):
            out.append(["slice", i.start, i.stop, i.step])
        elif i is None:
            out.append(["none"])
        elif isinstance(i, (list, np.ndarray)):
            out.append(["array", np.asarray(i).tolist()])
        else:
            out.append(["int", int(i)])
    return out


_ERRORS = {"IndexError": IndexError, "ValueError": ValueError, "TypeError": TypeError}


@pytest.mark.parametrize("case", DOC["indexing"]["expand"], ids=[c["key"] for c in DOC["indexing"]["expand"]])
def test_indexing_key_expand_implicit_axes(case):
    key = eval(case["key"], {"mx": mx, "np": np})
    if "error" in case:
        with pytest.raises(_ERRORS[case["error"]], match=re.escape(case["message"][:30])):
            nd.indexing_key_expand_implicit_axes(key, tuple(case["shape"]))
        return
    k, prepend = nd.indexing_key_expand_implicit_axes(key, tuple(case["shape"]))
    assert _key_repr(k) == case["result"]
    assert prepend == case["prepend"]


@pytest.mark.parametrize("case", DOC["indexing"]["dispatch"], ids=[c["key"] for c in DOC["indexing"]["dispatch"]])
def test_get_indexing_dispatch_code(case):
    key = eval(case["key"], {"mx": mx, "np": np})
    if "error" in case:
        with pytest.raises(ValueError, match="does not support slicing"):
            nd.get_indexing_dispatch_code(key)
        return
    assert nd.get_indexing_dispatch_code(key) == case["code"]


def test_get_oshape_of_gather_nd_op():
    for c in DOC["indexing"]["gather"]:
        assert list(nd.get_oshape_of_gather_nd_op(tuple(c["dshape"]), tuple(c["ishape"]))) == c["oshape"]
        x = nd.array(np.arange(np.prod(c["dshape"])).reshape(c["dshape"]))
        idx = nd.array(np.zeros(c["ishape"]))
        if c["ishape"][0] <= len(c["dshape"]):  # the operator agrees
            assert list(nd.gather_nd(x, idx).shape) == c["oshape"]
    with pytest.raises(AssertionError):
        nd.get_oshape_of_gather_nd_op((), (1,))
    with pytest.raises(AssertionError):
        nd.get_indexing_dispatch_code([1])


# -- slices, broadcast_like, positional calls -------------------------------------------------------------------

def _run(kind, expr):
    env = {"mx": mx, "np": np}
    exec(DOC["slicing"]["setup"], env)
    if kind == "writes":
        exec(expr, env)
        return env["x"]
    return eval(expr, env)


CASES = [(kind, c) for kind in ("reads", "writes", "calls") for c in DOC["slicing"][kind]]


@pytest.mark.parametrize("kind,case", CASES, ids=[f"{k}:{c['expr']}" for k, c in CASES])
def test_slicing_and_calls_match_mxnet(kind, case):
    if "error" in case:
        exc = _ERRORS.get(case["error"], Exception)
        with pytest.raises(exc):
            _run(kind, case["expr"])
        return
    _check(_run(kind, case["expr"]), case["result"], case["expr"])


def test_refused_slice_names_axis_and_shape():
    x = nd.zeros((4, 3))
    with pytest.raises(mx.base.MXNetError, match=r"shape \(4, 3\) with slice 2:1 on axis 0"):
        x[2:1]
    with pytest.raises(IndexError, match="axis 1"):
        x[:, 2:1] = 1.0
    assert x[2:1, 0].shape == (0,)  # a tuple key reads as numpy, as MXNet


# -- pooling -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(DOC["pooling"]))
def test_average_pooling_matches_mxnet_reference_kernels(name):
    """MXNet's reference kernels divide the border windows of ``full`` pooling by the
    clipped window in forward and backward alike (its MKLDNN backward uses the whole
    kernel for unpadded 2-D input, inconsistent with its own forward; plexnet follows
    the reference kernels)."""
    c = DOC["pooling"][name]
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in c["kwargs"].items()}
    x = nd.array(np.arange(np.prod(c["shape"]), dtype=np.float32).reshape(c["shape"]) / 10.0)
    x.attach_grad()
    with autograd.record():
        y = nd.Pooling(x, pool_type="avg", **kw)
    y.backward(nd.array(np.arange(np.prod(y.shape), dtype=np.float32).reshape(y.shape) + 1))
    _check(y, c["y"], "output")
    _check(x.grad, c["dx"], "input gradient")


# -- zero-size batch --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,kw", [((0, 4), {}), ((0, 2, 2), {}), ((2, 0, 4), {"flatten": False})])
def test_fully_connected_on_an_empty_batch(shape, kw):
    """plexnet runs zero-size arrays (docs/operators.md; MXNet 1.x's legacy shapes refuse them)."""
    # nd.ones refuses a 0 dim outside np_shape, as MXNet's _ones; nd.array does not
    a, w, b = nd.array(np.ones(shape, np.float32)), nd.ones((3, 4)), nd.ones((3,))
    for q in (a, w, b):
        q.attach_grad()
    with autograd.record():
        o = nd.FullyConnected(a, w, b, num_hidden=3, **kw)
    o.backward()
    assert o.shape == shape[:-1] + (3,) if kw else o.shape == (0, 3)
    np.testing.assert_array_equal(w.grad.asnumpy(), np.zeros((3, 4)))
    np.testing.assert_array_equal(b.grad.asnumpy(), np.zeros(3))
    assert a.grad.shape == shape


# -- imdecode, DLPack -----------------------------------------------------------------------------------------

def _png(img):
    import cv2
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return buf.tobytes()


def test_imdecode_gives_chw_float_in_opencv_order():
    pytest.importorskip("cv2")
    img = (np.arange(5 * 6 * 3) % 251).astype(np.uint8).reshape(5, 6, 3)
    buf = _png(img)
    r = nd.imdecode(buf)
    assert r.shape == (3, 5, 6) and r.dtype == np.float32
    np.testing.assert_array_equal(r.asnumpy(), img.transpose(2, 0, 1))
    r = nd.imdecode(buf, clip_rect=(1, 1, 4, 3))
    np.testing.assert_array_equal(r.asnumpy(), img[1:3, 1:4].transpose(2, 0, 1))
    mean = nd.ones((3, 5, 6), dtype="float64")
    r = nd.imdecode(buf, mean=mean)
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r.asnumpy(), img.transpose(2, 0, 1) - 1.0)
    out = nd.zeros((2, 3, 5, 6))
    assert nd.imdecode(buf, out=out, index=1) is out
    np.testing.assert_array_equal(out.asnumpy()[1], img.transpose(2, 0, 1))
    assert out.asnumpy()[0].sum() == 0
    assert nd.imdecode(buf, channels=1).shape == (1, 5, 6)
    with pytest.raises(mx.base.MXNetError, match="clip_rect"):
        nd.imdecode(buf, clip_rect=(0, 0, 9, 9))
    with pytest.raises(mx.base.MXNetError, match="expects"):
        nd.imdecode(buf, out=nd.zeros((3, 4, 6)))
    with pytest.raises(Exception):
        nd.imdecode(b"not an image")


def test_dlpack_round_trips():
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = nd.from_dlpack(nd.to_dlpack_for_read(x))
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    z = nd.from_dlpack(nd.to_dlpack_for_write(x))
    z += 1  # writes through to x
    np.testing.assert_array_equal(x.asnumpy(), np.arange(6).reshape(2, 3) + 1)
    assert legacy.to_dlpack_for_read is nd.to_dlpack_for_read
