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
