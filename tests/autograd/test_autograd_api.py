"""mx.autograd behaviour: modes, variables, backward/grad, errors, Function, get_symbol."""
from __future__ import annotations

import numpy as np
import plexnet as mx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plexnet import autograd, nd


def test_modes_nest_and_restore() -> None:
    assert not autograd.is_recording() and not autograd.is_training()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
            with autograd.train_mode():
                assert autograd.is_training() and not autograd.is_recording()
        assert autograd.is_recording()
    with autograd.record(train_mode=False):
        assert autograd.is_recording() and not autograd.is_training()
        with autograd.predict_mode():
            assert not autograd.is_training()
    assert not autograd.is_recording() and not autograd.is_training()
    assert autograd.set_recording(True) is False
    assert autograd.set_recording(False) is True
    assert autograd.set_training(True) is False
    assert autograd.set_training(False) is True


def test_simple_gradients_and_arithmetic() -> None:
    x = nd.array([1., 2., 3.])
    x.attach_grad()
    with autograd.record():
        y = (x * x + 2 * x - 1 / (x + 1)) ** 2 / 3
        z = y.sum()
    z.backward()
    xv = np.array([1., 2., 3.])
    inner = xv * xv + 2 * xv - 1 / (xv + 1)
    expect = 2 * inner * (2 * xv + 2 + 1 / (xv + 1) ** 2) / 3
    np.testing.assert_allclose(x.grad.asnumpy(), expect, rtol=1e-5)


def test_grad_req_add_and_write() -> None:
    x = nd.array([1., 2.])
    x.attach_grad(grad_req="add")
    for _ in range(3):
        with autograd.record():
            y = x * x
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * 2 * np.array([1., 2.]))
    x.attach_grad()
    for _ in range(2):
        with autograd.record():
            y = x * x
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2., 4.])


def test_null_grad_req_gets_no_gradient() -> None:
    x = nd.array([1., 2.])
    w = nd.array([3., 4.])
    x.attach_grad()
    w.attach_grad(grad_req="null")
    with autograd.record():
        y = x * w
    y.backward()
    assert w.grad is None
    np.testing.assert_allclose(x.grad.asnumpy(), [3., 4.])


def test_head_grads_and_multiple_heads() -> None:
    x = nd.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        a = x * 2
        b = x * x
    autograd.backward([a, b], [nd.array([1., 10.]), nd.array([1., 1.])])
    np.testing.assert_allclose(x.grad.asnumpy(), [2 + 2, 20 + 4])
    with autograd.record():
        a = x * 3
    a.backward(nd.array([2., 2.]))
    np.testing.assert_allclose(x.grad.asnumpy(), [6., 6.])


def test_backward_twice_needs_retain_graph() -> None:
    x = nd.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        y = nd.exp(x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp([1., 2.]), rtol=1e-6)
    with pytest.raises(mx.PlexnetError, match="already freed.*retain_graph=True"):
        y.backward()


def test_backward_outside_graph_is_a_clear_error() -> None:
    with pytest.raises(mx.PlexnetError, match="not computed under autograd.record"):
        nd.ones((2, 3)).backward()
    x = nd.array([1., 2.])
    with autograd.record():
        y = x * 2  # x was never marked: nothing is recorded
    with pytest.raises(mx.PlexnetError, match=r"shape \(2,\)"):
        y.backward()


def test_inplace_write_to_graph_array_is_refused() -> None:
    x = nd.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        y = x * 2
        with pytest.raises(mx.PlexnetError, match="_plus_scalar.*output 0 of operator '_mul_scalar'"):
            y += 1
        with pytest.raises(mx.PlexnetError, match="setitem.*a variable"):
            x[:] = 0
        with pytest.raises(mx.PlexnetError, match="relu.*in-place"):
            nd.relu(x, out=y)
    x += 1  # outside recording: allowed (optimizer updates)
    np.testing.assert_allclose(x.asnumpy(), [2., 3.])


def test_detach_and_pause_cut_the_graph() -> None:
    x = nd.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        y = x * x
        c = y.detach() * x
        with autograd.pause():
            d = x * 100
        out = c + d
    out.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [1., 4.])  # only through c's second factor


def test_views_are_recorded() -> None:
    x = nd.array(np.arange(6, dtype=np.float32))
    x.attach_grad()
    with autograd.record():
        r = x.reshape((2, 3))
        y = (r[1] * 2).sum() + (r[:, 0] * 3).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3, 0, 0, 5, 2, 2])


def test_grad_returns_new_arrays() -> None:
    x = nd.array([1., 2.])
    w = nd.array([3., 5.])
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = x * w + x
    gx, gw = autograd.grad(y, [x, w])
    np.testing.assert_allclose(gx.asnumpy(), [4., 6.])
    np.testing.assert_allclose(gw.asnumpy(), [1., 2.])
    np.testing.assert_allclose(x.grad.asnumpy(), [0., 0.])  # untouched


def test_second_order_elementwise_and_dot() -> None:
    x = nd.array([1., 2., 3.])
    x.attach_grad()
    with autograd.record():
        y = x * x * x + nd.sin(x)
        g = autograd.grad(y, [x], create_graph=True)[0]  # 3x^2 + cos x
    np.testing.assert_allclose(g.asnumpy(), 3 * x.asnumpy() ** 2 + np.cos(x.asnumpy()), rtol=1e-5)
    g.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * x.asnumpy() - np.sin(x.asnumpy()), rtol=1e-5)
    a = nd.array(np.random.RandomState(0).randn(3, 4))
    b = nd.array(np.random.RandomState(1).randn(4, 2))
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        out = nd.dot(a, b)
        ga = autograd.grad(out.sum(), [a], create_graph=True)[0]  # ones . b^T
        z = (ga * ga).sum()
    z.backward()
    # z = sum_ij (sum_k b_jk)^2 * 3 rows -> dz/db_jk = 2 * 3 * sum_k b_jk
    np.testing.assert_allclose(b.grad.asnumpy(), np.repeat(6 * b.asnumpy().sum(1, keepdims=True), 2, 1), rtol=1e-5)


def test_second_order_unsupported_op_is_named() -> None:
    x = nd.array([[1., 2.]])
    x.attach_grad()
    with autograd.record():
        y = nd.softmax(x)
        with pytest.raises(mx.PlexnetError, match="softmax.*no differentiable gradient"):
            autograd.grad(y, [x], create_graph=True)


def test_function() -> None:
    class Sigmoid(autograd.Function):
        def forward(self, x):
            y = 1 / (1 + nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y)

    x = nd.array([-1., 0., 2.])
    x.attach_grad()
    with autograd.record():
        y = Sigmoid()(x) * 2
    y.backward()
    s = 1 / (1 + np.exp(-x.asnumpy()))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * s * (1 - s), rtol=1e-5)


def test_get_symbol() -> None:
    x = nd.array([1., 2.])
    x.attach_grad()
    with autograd.record():
        y = nd.relu(x * 2 + 1)
    s = autograd.get_symbol(y)
    assert s.list_arguments() == ["var0"]
    out = s.eval(var0=nd.array([1., -3.]))[0]
    np.testing.assert_allclose(out.asnumpy(), [3., 0.])


def test_mark_variables_checks() -> None:
    x = nd.array([1., 2.])
    with pytest.raises(ValueError, match="gradient of shape"):
        autograd.mark_variables([x], [nd.zeros((3,))])
    with pytest.raises(ValueError, match="1 variables but 2"):
        autograd.mark_variables([x], [nd.zeros((2,)), nd.zeros((2,))])
    g = nd.zeros((2,))
    autograd.mark_variables(x, g)
    with autograd.record():
        y = x * 4
    y.backward()
    np.testing.assert_allclose(g.asnumpy(), [4., 4.])
    with pytest.raises(ValueError, match="attach_grad: stype must be"):
        x.attach_grad(stype="rowsparse")
    x.attach_grad(stype="row_sparse")   # sparse gradients: tests/sparse/test_autograd_sparse.py
    assert x.grad.stype == "row_sparse"


def test_training_flag_reaches_operators() -> None:
    x = nd.ones((200,))
    x.attach_grad()
    with autograd.record():
        y = nd.Dropout(x, p=0.5)
    kept = (y.asnumpy() != 0).mean()
    assert 0.3 < kept < 0.7
    y.backward()
    np.testing.assert_allclose((x.grad.asnumpy() != 0), (y.asnumpy() != 0))
    with autograd.record(train_mode=False):
        y = nd.Dropout(x, p=0.5)
    np.testing.assert_allclose(y.asnumpy(), 1.0)


UNARY = ["exp", "log", "sin", "cos", "tanh", "sigmoid", "sqrt", "square", "abs", "relu", "negative",
         "log1p", "expm1", "arctan", "softsign"]


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(UNARY), st.integers(0, 2 ** 16))
def test_unary_ops_match_numerical_gradient(op: str, seed: int) -> None:
    rng = np.random.RandomState(seed)
    v = rng.uniform(0.2, 1.5, (3, 2)) * rng.choice([-1, 1], (3, 2))
    if op in ("log", "sqrt", "log1p"):
        v = np.abs(v)
    x = nd.array(v, dtype="float64")
    x.attach_grad()
    fn = getattr(nd, op)
    with autograd.record():
        y = (fn(x) * nd.array(np.arange(6).reshape(3, 2), dtype="float64")).sum()
    y.backward()
    eps = 1e-6
    w = np.arange(6).reshape(3, 2)

    def f(a: np.ndarray) -> float:
        return float((fn(nd.array(a, dtype="float64")).asnumpy() * w).sum())
    num = np.zeros_like(v)
    for i in np.ndindex(v.shape):
        p, m = v.copy(), v.copy()
        p[i] += eps
        m[i] -= eps
        num[i] = (f(p) - f(m)) / (2 * eps)
    np.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-4, atol=1e-6)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
                        "broadcast_power"]), st.integers(0, 2 ** 16))
def test_broadcast_binary_ops_match_numerical_gradient(op: str, seed: int) -> None:
    rng = np.random.RandomState(seed)
    av, bv = rng.uniform(0.5, 2, (3, 4)), rng.uniform(0.5, 2, (1, 4))
    a, b = nd.array(av, dtype="float64"), nd.array(bv, dtype="float64")
    a.attach_grad()
    b.attach_grad()
    fn = getattr(nd, op)
    with autograd.record():
        y = fn(a, b).sum()
    y.backward()
    eps = 1e-6

    def f(x: np.ndarray, z: np.ndarray) -> float:
        return float(fn(nd.array(x, dtype="float64"), nd.array(z, dtype="float64")).asnumpy().sum())
    for arr, val, which in ((a, av, 0), (b, bv, 1)):
        num = np.zeros_like(val)
        for i in np.ndindex(val.shape):
            p, m = val.copy(), val.copy()
            p[i] += eps
            m[i] -= eps
            num[i] = (f(p, bv) - f(m, bv)) / (2 * eps) if which == 0 else (f(av, p) - f(av, m)) / (2 * eps)
        np.testing.assert_allclose(arr.grad.asnumpy(), num, rtol=1e-4, atol=1e-6)


def test_custom_op_is_recorded() -> None:
    class Sqr(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * in_data[0])

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])

    @mx.operator.register("ag_sqr")
    class SqrProp(mx.operator.CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=True)

        def create_operator(self, ctx, shapes, dtypes):
            return Sqr()

    x = nd.array([1., 2., 3.])
    x.attach_grad()
    with autograd.record():
        y = nd.Custom(x, op_type="ag_sqr") * 3
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [6., 12., 18.])


def test_advanced_indexing_is_recorded() -> None:
    x = nd.array([1., 2., 3., 4.])
    x.attach_grad()
    with autograd.record():
        y = (x[nd.array([0, 2, 2])] * nd.array([1., 10., 100.])).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [1., 0., 110., 0.])


def test_contrib_autograd_legacy_api() -> None:
    from plexnet.contrib import autograd as cag

    def f(a, b):
        return (a * b).sum()
    a, b = nd.array([1., 2.]), nd.array([3., 4.])
    grads, loss = cag.grad_and_loss(f)(a, b)
    np.testing.assert_allclose(grads[0].asnumpy(), [3., 4.])
    np.testing.assert_allclose(grads[1].asnumpy(), [1., 2.])
    assert float(loss.asscalar()) == 11.0
    np.testing.assert_allclose(cag.grad(f, argnum=1)(a, b)[0].asnumpy(), [1., 2.])
    with cag.train_section():
        assert autograd.is_recording() and autograd.is_training()
        with cag.test_section():
            assert not autograd.is_recording() and not autograd.is_training()
    assert cag.set_is_training(True) is False
    assert cag.set_is_training(False) is True
    x = nd.array([2.])
    g = nd.zeros((1,))
    cag.mark_variables([x], [g])
    with cag.train_section():
        y = x * x
    cag.compute_gradient([y])
    np.testing.assert_allclose(g.asnumpy(), [4.])
    assert mx.contrib.autograd.zeros_like(x).shape == (1,)
