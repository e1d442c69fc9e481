import numpy as np
import pytest

from opcheck import REQS, check_forward, check_req, infer_shapes, make_prop, run_backward
from plexnet.base import ShapeError


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def onehot(lab, k, axis):
    oh = np.eye(k)[lab.astype(int)]  # (..., k)
    return np.moveaxis(oh, -1, axis)


def expected_grad(x, lab, kw):
    """MXNet 1.9's SoftmaxOutput gradient, written out per case (checked against MXNet)."""
    multi, pres = kw.get("multi_output", False), kw.get("preserve_shape", False)
    norm, scale = kw.get("normalization", "null"), kw.get("grad_scale", 1.0)
    if multi:
        y = np_softmax(x, 1)
        lab = lab.reshape((x.shape[0],) + x.shape[2:])
        g = y - onehot(lab, x.shape[1], 1)
        spatial = int(np.prod(x.shape[2:]))
    elif pres:
        y = np_softmax(x, -1)
        g = y - onehot(lab, x.shape[-1], -1)
    else:
        y = np_softmax(x.reshape(x.shape[0], -1), 1)
        g = (y - onehot(lab.reshape(-1), y.shape[1], -1)).reshape(x.shape)
    if kw.get("use_ignore"):
        keep = lab != kw.get("ignore_label", -1)
        g = g * (np.expand_dims(keep, 1) if multi else keep.reshape(keep.shape + (1,) * (g.ndim - keep.ndim)))
        valid = keep.sum()
    else:
        valid = lab.size
    if norm == "valid":
        scale /= max(valid, 1)
    elif norm == "batch":
        scale /= x.shape[0] * spatial if multi else (int(np.prod(x.shape[:-1])) if pres else x.shape[0])
    elif multi:
        scale /= spatial
    return g * scale


CASES = [
    ((4, 5), (4,), {}),
    ((4, 5), (4,), dict(normalization="batch", grad_scale=2.0)),
    ((4, 5), (4,), dict(normalization="valid", use_ignore=True, ignore_label=1)),
    ((4, 5), (4,), dict(use_ignore=True, ignore_label=2)),
    ((2, 3, 4), (2, 3), dict(preserve_shape=True, normalization="batch")),
    ((2, 3, 4), (2, 3), dict(preserve_shape=True, normalization="valid")),
    ((2, 3, 4), (2, 4), dict(multi_output=True)),
    ((2, 3, 4), (2, 4), dict(multi_output=True, normalization="batch")),
    ((2, 3, 4, 2), (2, 4, 2), dict(multi_output=True, normalization="valid", use_ignore=True, ignore_label=0)),
    ((2, 3, 4, 2), (2, 8), dict(multi_output=True, normalization="null")),
]


@pytest.mark.parametrize("dshape,lshape,kw", CASES)
def test_forward_backward(dshape, lshape, kw, rng):
    x = rng.standard_normal(dshape)
    k = dshape[1] if kw.get("multi_output") else dshape[-1]
    lab = rng.integers(0, k, lshape).astype("f8")
    lab.reshape(-1)[:2] = [1, 0]  # make sure ignore cases see some ignored labels
    if kw.get("multi_output"):
        yref = np_softmax(x, 1)
    elif kw.get("preserve_shape"):
        yref = np_softmax(x, -1)
    else:
        yref = np_softmax(x.reshape(dshape[0], -1), 1).reshape(dshape)
    check_forward("SoftmaxOutput", [x, lab], kw, yref, rtol=1e-6, atol=1e-8)
    # the head gradient is ignored
    g = run_backward("SoftmaxOutput", [x, lab], kw, out_grads=[np.full(dshape, 7.0)])
    np.testing.assert_allclose(g[0], expected_grad(x, lab, kw), rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(g[1], 0)


def test_smooth_alpha(rng):
    x = rng.standard_normal((3, 4))
    lab = np.array([0.0, 3.0, 1.0])
    g = run_backward("SoftmaxOutput", [x, lab], dict(smooth_alpha=0.3))[0]
    target = np.where(np.eye(4)[[0, 3, 1]] > 0, 0.7, 0.1)
    np.testing.assert_allclose(g, np_softmax(x) - target, rtol=1e-6)


def test_probability_label(rng):
    x = rng.standard_normal((3, 4))
    p = rng.dirichlet(np.ones(4), 3)
    g = run_backward("SoftmaxOutput", [x, p], dict(grad_scale=0.5, normalization="batch"))[0]
    np.testing.assert_allclose(g, (np_softmax(x) - p) * 0.5, rtol=1e-6)


def test_out_grad_flag(rng):
    x = rng.standard_normal((3, 4))
    lab = np.array([0.0, 3.0, 1.0])
    head = rng.uniform(1, 2, (3, 4))
    prop = make_prop("SoftmaxOutput", dict(out_grad=True))
    assert prop.need_top_grad() and 0 in prop.declare_backward_dependency([0], [1, 2], [3])
    g = run_backward("SoftmaxOutput", [x, lab], dict(out_grad=True), out_grads=[head])[0]
    np.testing.assert_allclose(g, (np_softmax(x) - np.eye(4)[[0, 3, 1]]) * head, rtol=1e-6)


@pytest.mark.parametrize("req", REQS)
def test_req(req, rng):
    x = rng.standard_normal((4, 5))
    lab = rng.integers(0, 5, (4,)).astype("f8")
    check_req("SoftmaxOutput", [x, lab], dict(normalization="batch"), req=req)


def test_contract_and_shapes():
    p = make_prop("SoftmaxOutput", {})
    assert p.list_arguments() == ["data", "label"]
    assert not p.need_top_grad()
    assert sorted(p.declare_backward_dependency([0], [1, 2], [3])) == [2, 3]
    assert make_prop("Softmax", {}).op_name in ("SoftmaxOutput", "Softmax")
    assert infer_shapes("SoftmaxOutput", {}, data=(8, 10))[0][1] == (8,)
    assert infer_shapes("SoftmaxOutput", dict(multi_output=True), data=(2, 3, 4, 5))[0][1] == (2, 20)
    assert infer_shapes("SoftmaxOutput", dict(preserve_shape=True), data=(2, 3, 4))[0][1] == (2, 3)
    assert infer_shapes("SoftmaxOutput", dict(multi_output=True), data=(2, 3, 4), label=(2, 4))[1] == [(2, 3, 4)]
    with pytest.raises(ShapeError, match="label"):
        infer_shapes("SoftmaxOutput", {}, data=(8, 10), label=(7,))
