"""Parity pins found by running MXNet's v1.9.x maintenance-tree test_operator.py in full.

Each test pins a behaviour of MXNet 1.9.1 that plexnet deviated from (see
docs/porting-operators.md, "Results: the v1.9.x maintenance copy"); the expected values come
from numpy references of MXNet's kernels or from tests/porting/fixtures/op_parity_v19.json
(recorded from MXNet 1.9.1 by tests/porting/fixtures/make_op_parity_v19.py).
"""
from __future__ import annotations

import numpy as np

import plexnet as mx


def _sym_grads(sym, args, head):
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    ex = sym.bind(mx.cpu(), args={k: mx.nd.array(v) for k, v in args.items()}, args_grad=grads)
    ex.forward(is_train=True)
    ex.backward([mx.nd.array(head)])
    return {k: g.asnumpy() for k, g in grads.items()}


def test_integer_mod_has_zero_gradient():
    # MXNet's mod_grad / mod_rgrad are 0 for integer types (1 and -floor(a/b) only for floats)
    x = mx.sym.Variable("x")
    seven = mx.sym.cast(x * 0 + 7, dtype="int32")
    xs = np.array([5.0, 9.0, 12.0])
    head = np.array([1.0, 2.0, 3.5])
    for s in (mx.sym.broadcast_mod(mx.sym.cast(x, dtype="int32"), seven),
              mx.sym.cast(x, dtype="int32") % seven):
        np.testing.assert_array_equal(_sym_grads(s, {"x": xs}, head)["x"], [0, 0, 0])
    # float mod keeps the float gradients
    s = mx.sym.broadcast_mod(x, x * 0 + 7)
    np.testing.assert_array_equal(_sym_grads(s, {"x": xs}, head)["x"], head)
    for f in (lambda a: a % 3, lambda a: 7 % a):
        a = mx.nd.array([5, 9, 12], dtype="int32")
        a.attach_grad()
        with mx.autograd.record():
            y = f(a)
        y.backward(mx.nd.array([1, 2, 3], dtype="int32"))
        np.testing.assert_array_equal(a.grad.asnumpy(), [0, 0, 0])
    a = mx.nd.array([5.0, 9.0, 12.0])
    a.attach_grad()
    with mx.autograd.record():
        y = 7 % a
    y.backward(mx.nd.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(a.grad.asnumpy(), [-1, -0, -0])


def test_correlation_abs_difference_gradient_at_ties():
    # MXNet: sign = +1 where a - b >= 0 (ties count as +1 for data1 and -1 for data2)
    a = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    b = np.array([[[[1.0, 0.0], [3.0, 5.0]]]])
    d1, d2 = mx.sym.Variable("a"), mx.sym.Variable("b")
    s = mx.sym.Correlation(data1=d1, data2=d2, kernel_size=1, max_displacement=0,
                           stride1=1, stride2=1, pad_size=0, is_multiply=False)
    g = _sym_grads(s, {"a": a, "b": b}, np.ones((1, 1, 2, 2)))
    np.testing.assert_array_equal(g["a"], [[[[1, 1], [1, -1]]]])
    np.testing.assert_array_equal(g["b"], [[[[-1, -1], [-1, 1]]]])


def test_take_raise_mode_rejects_negative_indices():
    # MXNet 1.9.1: mode='raise' accepts 0 <= index < n only (negative indices raise too)
    a = mx.nd.ones((3, 2))
    for idx in ([5], [-1], [-3]):
        try:
            mx.nd.take(a, mx.nd.array(idx), mode="raise").asnumpy()
        except mx.base.MXNetError:
            continue
        raise AssertionError(f"take(mode='raise') accepted {idx}")
    np.testing.assert_array_equal(mx.nd.take(a, mx.nd.array([2, 0]), mode="raise").asnumpy(), np.ones((2, 2)))
    # clip / wrap are unchanged
    np.testing.assert_array_equal(mx.nd.take(mx.nd.array([1, 2, 3]), mx.nd.array([-1]), mode="wrap").asnumpy(), [3])


def test_dropout_p1_is_nan_in_training():
    # MXNet 1.9.1: mask = (r < 0) * (1 / 0) = 0 * inf = NaN, so training output and gradient are NaN
    d = mx.sym.Dropout(mx.sym.Variable("data"), p=1.0)
    e = d.simple_bind(mx.cpu(), data=(2, 3))
    e.arg_dict["data"][:] = 1
    e.forward(is_train=True)
    assert np.isnan(e.outputs[0].asnumpy()).all()
    e.backward([mx.nd.ones((2, 3))])
    assert np.isnan(e.grad_arrays[0].asnumpy()).all()
    e.forward(is_train=False)
    np.testing.assert_array_equal(e.outputs[0].asnumpy(), np.ones((2, 3)))
    out = mx.nd.Dropout(mx.nd.ones((2, 3)), p=1.0, axes=(0,), mode="always")
    assert np.isnan(out.asnumpy()).all()


def _raises(fn):
    try:
        fn()
    except mx.base.MXNetError:
        return True
    return False


def test_zero_size_min_max_raise_at_the_call_under_np_shape():
    # MXNet 1.9.1: min/max/argmax/argmin of a zero-size array fail (no identity); sum/prod work
    with mx.np_shape():
        a = mx.nd.zeros((5, 0))
        assert _raises(lambda: a.min())
        assert _raises(lambda: a.max(axis=1))
        assert _raises(lambda: a.max(axis=0))
        assert _raises(lambda: a.argmax(axis=1))
        np.testing.assert_array_equal(a.sum().asnumpy(), [0.0])
        np.testing.assert_array_equal(a.prod().asnumpy(), [1.0])
    np.testing.assert_array_equal(mx.nd.array([[1, 5], [3, 2]]).max(axis=0).asnumpy(), [3, 5])


def test_tile_zero_reps_outside_np_shape_raises():
    # MXNet 1.9.1 (test_tile.test_invalid_reps): a 0 in reps fails outside np_shape; under
    # np_shape it gives the zero-size result. The imperative shape cache must not mix the two.
    x = mx.nd.ones((2, 2))
    with mx.np_shape():
        assert mx.nd.tile(x, (1, 0)).shape == (2, 0)
    assert _raises(lambda: mx.nd.tile(x, (1, 0)))
    assert _raises(lambda: mx.nd.tile(x, reps=(1, 0, 3)))
    assert _raises(lambda: mx.nd.tile(x, reps=(1, 2, -3)))
    assert mx.nd.tile(x, (2, 1)).shape == (4, 2)
