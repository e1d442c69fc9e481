"""MXNet 1.9.1 autograd / test_utils behaviours that MXNet's own test_autograd.py relies on."""
import plexnet as mx


def test_star_imports_bring_what_mxnet_tests_use():
    ns: dict = {}
    exec("from plexnet.autograd import *", ns)
    assert ns["NDArray"] is mx.nd.NDArray and ns["Symbol"] is mx.sym.Symbol
    assert {"record", "pause", "mark_variables", "backward", "Function", "get_symbol"} <= set(ns)
    ns = {}
    exec("from plexnet.test_utils import *", ns)
    assert ns["mx"] is mx and ns["np"].__name__ == "numpy"
    assert {"os", "sys", "time", "assert_almost_equal", "same", "discard_stderr"} <= set(ns)


def test_fresh_grad_flag():
    x = mx.nd.ones((2, 2))
    dx = mx.nd.zeros_like(x)
    y = mx.nd.ones_like(x)
    dy = mx.nd.zeros_like(x)
    mx.autograd.mark_variables([x, y], [dx, dy])
    assert x._fresh_grad is False and y._fresh_grad is False
    with mx.autograd.record():
        (x + 2 + y).backward()
    assert x._fresh_grad is True and y._fresh_grad is True
    x._fresh_grad = False
    y._fresh_grad = False
    with mx.autograd.record():
        ((x + 2).detach() + y).backward()
    assert y._fresh_grad is True and x._fresh_grad is False
    assert (dx.asnumpy() == 1).all()  # untouched by the second backward
    assert mx.nd.ones((1,))._fresh_grad is False  # not a variable


import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

# second derivatives MXNet 1.9.1 supports (its test_higher_order_grad.py pattern)
_SECOND = {
    "log2": (lambda x: -1 / (x ** 2 * math.log(2)), "pos"),
    "log10": (lambda x: -1 / (x ** 2 * math.log(10)), "pos"),
    "tan": (lambda x: 2 * np.tan(x) * (1 + np.tan(x) ** 2), "any"),
    "sinh": (np.sinh, "any"),
    "cosh": (np.cosh, "any"),
    "arcsin": (lambda x: x / (1 - x ** 2) ** 1.5, "unit"),
    "arccos": (lambda x: -x / (1 - x ** 2) ** 1.5, "unit"),
    "arctan": (lambda x: -2 * x / (1 + x ** 2) ** 2, "any"),
    # MXNet 1.9.1's sign (the true second derivative is -x/(x^2+1)^1.5; plexnet keeps MXNet's)
    "arcsinh": (lambda x: x / (x ** 2 + 1) ** 1.5, "any"),
    "arccosh": (lambda x: -x / (x ** 2 - 1) ** 1.5, "gt1"),
    "arctanh": (lambda x: 2 * x / (1 - x ** 2) ** 2, "unit"),
    "rsqrt": (lambda x: 0.75 / x ** 2.5, "pos"),
    "cbrt": (lambda x: -2.0 / (9.0 * x ** (5.0 / 3.0)), "pos"),
    "rcbrt": (lambda x: 4.0 / (9.0 * x ** (7.0 / 3.0)), "pos"),
    "erf": (lambda x: -4 * x / math.sqrt(math.pi) * np.exp(-x ** 2), "any"),
}


@pytest.mark.parametrize("name", sorted(_SECOND))
def test_second_order_gradient(name):
    gg, dom = _SECOND[name]
    rs = np.random.RandomState(0)
    a = rs.uniform(-1, 1, (3, 4))
    a = {"pos": np.abs(a) + 0.5, "unit": a * 0.8, "gt1": np.abs(a) + 1.5}.get(dom, a)
    x = mx.nd.array(a)
    x.attach_grad()
    op = getattr(mx.nd, name)
    head = mx.nd.array(rs.normal(size=a.shape))
    with mx.autograd.record():
        y = op(x)
        dx = mx.autograd.grad(y, x, head_grads=head, create_graph=True, retain_graph=True)[0]
    head2 = mx.nd.array(rs.normal(size=a.shape))
    dx.backward(head2)
    expected = gg(a.astype(np.float32)) * head.asnumpy() * head2.asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-3, atol=1e-4)


def test_second_order_clip_is_zero_inside_and_outside():
    x = mx.nd.array([-2.0, 0.1, 0.3, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.clip(x, -0.5, 0.5) * x  # d/dx = clip'(x) x + clip(x); d2/dx2 = 2 clip'(x)
        dx = mx.autograd.grad(y, x, create_graph=True, retain_graph=True)[0]
    dx.backward()
    assert x.grad.asnumpy().tolist() == [0.0, 2.0, 2.0, 0.0]


def test_array_of_a_freed_graph_is_a_constant_in_a_new_graph():
    # MXNet 1.9.1: backward without retain_graph clears the graph; its arrays become constants
    x = mx.nd.ones((2,))
    x.attach_grad()
    w = mx.nd.ones((2,))
    w.attach_grad()
    with mx.autograd.record():
        b = x + 1
        (b * 2).backward()
    with mx.autograd.record():
        c = b * w
    c.backward()
    assert w.grad.asnumpy().tolist() == [2.0, 2.0]
    assert x.grad.asnumpy().tolist() == [2.0, 2.0]  # untouched by the second backward
    with pytest.raises(mx.base.MXNetError):  # a freed head itself still cannot be differentiated again
        b.backward()


def test_get_symbol_through_a_hybridized_block():
    # MXNet's test_gluon.test_inline calls autograd.get_symbol on a hybridized block's output
    # (plexnet raised "no operator form"); its graph is inlined with the recorded inputs
    import json
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(4, activation="relu"), mx.gluon.nn.Dense(3))
    net.initialize()
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 5))
    x.attach_grad()
    with mx.autograd.record():
        y = net(x) * 2
    s = mx.autograd.get_symbol(y)
    ops = [n["op"] for n in json.loads(s.tojson())["nodes"] if n["op"] != "null"]
    assert ops == ["FullyConnected", "Activation", "FullyConnected", "_mul_scalar"]
    p = net.collect_params()
    arrays = [x] + [p[k].data() for k in p.keys()]  # var0 = x, then dense0 weight/bias, dense1 ...
    assert len(s.list_arguments()) == 5
    out = s.bind(mx.cpu(), dict(zip(s.list_arguments(), arrays))).forward()[0]
    assert np.allclose(out.asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)
