import numpy as np
import pytest

from opcheck import REQS, check_forward, check_gradient, check_req, infer_shapes, make_prop, run_forward
from plexnet.base import ShapeError
from plexnet.operator import ParamError


def np_softmax(x, axis=-1, t=1.0):
    z = x / t
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


CASES = [((5,), {}), ((3, 4), {}), ((3, 4), dict(axis=0)), ((2, 3, 4), dict(axis=1, temperature=2.0)),
         ((2, 3, 4), dict(axis=-1, temperature=0.5))]


@pytest.mark.parametrize("shape,kw", CASES)
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "softmin"])
def test_forward_gradient(op, shape, kw, rng):
    x = rng.uniform(-3, 3, shape)
    ax, t = kw.get("axis", -1), kw.get("temperature", 1.0)
    ref = {"softmax": lambda: np_softmax(x, ax, t), "log_softmax": lambda: np.log(np_softmax(x, ax, t)),
           "softmin": lambda: np_softmax(-x, ax, t)}[op]()
    check_forward(op, [x.astype("f4")], kw, ref, rtol=1e-5, atol=1e-6)
    check_gradient(op, [x], kw)


@pytest.mark.parametrize("req", REQS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "softmin", "SoftmaxActivation"])
def test_req(op, req, rng):
    check_req(op, [rng.uniform(-2, 2, (3, 4))], {}, req=req)


def test_large_inputs_stable():
    y = run_forward("softmax", [np.array([[1000.0, 1001.0, 999.0]], dtype="f4")], {})[0]
    np.testing.assert_allclose(y, np_softmax(np.array([[0.0, 1.0, -1.0]])), rtol=1e-6)


def test_dtype():
    y = run_forward("softmax", [np.array([[1.0, 2.0, 3.0]], dtype="f4")], dict(dtype="float64"))[0]
    assert y.dtype == np.float64
    assert make_prop("softmax", dict(dtype="float64")).forward_inplace_option([0], [1]) == []


def test_use_length(rng):
    x = rng.uniform(-2, 2, (2, 3, 2))
    length = np.array([[1, 2], [3, 0]], dtype="int32")
    kw = dict(axis=1, use_length=True)
    assert make_prop("softmax", kw).list_arguments() == ["data", "length"]
    assert infer_shapes("softmax", kw, data=(2, 3, 2))[0][1] == (2, 2)
    exp = np.zeros_like(x)
    for n in range(2):
        for j in range(2):
            L = length[n, j]
            if L:
                exp[n, :L, j] = np_softmax(x[n, :L, j])
    check_forward("softmax", [x, length], kw, exp, rtol=1e-6, atol=1e-7)
    check_gradient("softmax", [x, length.astype("f8")], kw, wrt=["data"])
    with pytest.raises(ParamError):
        make_prop("log_softmax", kw)


def test_softmax_activation(rng):
    x = rng.uniform(-2, 2, (2, 3, 2, 2))
    check_forward("SoftmaxActivation", [x], dict(mode="channel"), np_softmax(x, 1))
    check_forward("SoftmaxActivation", [x], {}, np_softmax(x.reshape(2, -1), 1).reshape(x.shape))
    check_gradient("SoftmaxActivation", [x], dict(mode="channel"))
    check_gradient("SoftmaxActivation", [x], dict(mode="instance"))


def test_contract():
    p = make_prop("softmax", {})
    assert p.declare_backward_dependency([0], [1], [2]) == [0, 2]
    assert p.forward_inplace_option([1], [2]) == [(1, 2)]
    with pytest.raises(ShapeError, match="axis"):
        infer_shapes("softmax", dict(axis=3), data=(2, 3))
