"""Calling conventions and fluent methods against MXNet 1.9.1 (recorded by
``tests/fixtures/make_mxnet_frontend_fixtures.py``)."""
from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import plexnet as mx
from plexnet.operator.calling import positional_params
from plexnet.plugins import registries

pytestmark = pytest.mark.timeout(120)

_FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "mxnet_frontend.json")
with open(_FIX) as _f:
    DOC = json.load(_f)

# known differences, each with the reason
KNOWN: dict[str, str] = {}


def _needs(expr: str) -> list[str]:
    """Operators an expression needs that no installed plugin provides."""
    ops = registries().operators
    missing = []
    for name in ("sort", "argsort", "topk", "diag", "size_array", "shape_array", "slice_like", "_split_v2"):
        if f"{name}(" in expr and name not in ops:
            missing.append(name)
    return missing


def _compare(got, want, expr):
    if "list" in want:
        assert isinstance(got, (list, tuple)), expr
        assert len(got) == len(want["list"]), expr
        for g, w in zip(got, want["list"]):
            _compare(g, w, expr)
    elif "shape" in want:
        assert isinstance(got, mx.nd.NDArray), (expr, type(got))
        a = got.asnumpy()
        assert list(a.shape) == want["shape"], expr
        assert a.dtype.name == want["dtype"], (expr, a.dtype)
        np.testing.assert_allclose(a.astype("float64").ravel(), want["values"], rtol=1e-5, atol=1e-6, err_msg=expr)
    elif "scalar" in want:
        assert isinstance(got, np.generic), (expr, type(got))
        assert np.dtype(type(got)).name == want["dtype"]
        assert got.item() == pytest.approx(want["scalar"])
    else:
        assert got == want["python"], expr


@pytest.mark.parametrize("case", DOC["calls"], ids=[c["expr"][:60] for c in DOC["calls"]])
def test_call_matches_mxnet(case):
    expr = case["expr"]
    if expr not in KNOWN:
        _check_call(case)
        return
    try:
        _check_call(case)
    except (Exception, pytest.fail.Exception):  # noqa: BLE001 - the known difference
        pytest.xfail(KNOWN[expr])
    pytest.fail(f"known difference {expr!r} is gone: remove it from KNOWN")


def _check_call(case):
    expr = case["expr"]
    missing = _needs(expr)
    if missing:
        pytest.skip(f"operators {missing} not registered")
    env = {"mx": mx, "np": np}
    exec(DOC["setup"], env)
    if "error" in case:
        with pytest.raises(Exception):
            eval(expr, env)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = eval(expr, env)
    _compare(got, case["result"], expr)


def test_positional_parameter_order_matches_mxnet():
    """Every registered operator MXNet has takes its parameters positionally in MXNet's
    order (the generated signature: inputs, then parameters in declaration order)."""
    ops = registries().operators
    checked = 0
    for name, sig in DOC["signatures"].items():
        if name not in ops or sig["varargs"]:
            continue
        mine = positional_params(ops.property_class(name))
        theirs = [p for p in sig["params"] if p in mine]
        assert [p for p in mine if p in theirs] == theirs, name
        checked += 1
    if not checked:
        pytest.skip("needs an operator plugin (pip install plexnet-ops-basic)")
    assert checked > 100


def test_out_writes_and_returns_the_given_array():
    x = mx.nd.array([[1.0, -2.0]])
    for fn, args in ((mx.nd.relu, ()), (mx.nd.clip, (0, 1)), (mx.nd.sum, (1,)), (mx.nd.exp, ())):
        ref = fn(x, *args)
        out = mx.nd.zeros(ref.shape)
        assert fn(x, *args, out=out) is out
        np.testing.assert_array_equal(out.asnumpy(), ref.asnumpy())
    o = mx.nd.zeros((2, 2))
    assert mx.nd.ones((2, 2), out=o) is o and o.asnumpy().sum() == 4
    assert mx.nd.full((2, 2), 3, out=o) is o and o.asnumpy().sum() == 12
    assert mx.nd.zeros((2, 2), out=o) is o and o.asnumpy().sum() == 0
    with pytest.raises(ValueError, match="out="):
        mx.nd.ones((3,), out=o)
    with pytest.raises(Exception, match="out="):
        mx.nd.exp(x, out=mx.nd.zeros((5,)))


def test_positional_errors_name_the_operator():
    x = mx.nd.ones((2, 2))
    with pytest.raises(Exception, match="clip.*too many positional"):
        mx.nd.clip(x, 0, 1, None, None, 5)
    with pytest.raises(Exception, match="clip.*positionally and by keyword"):
        mx.nd.clip(x, 0, 1, a_min=0)
    with pytest.raises(Exception, match="Concat.*positional"):
        mx.nd.Concat(x, x, 0)


def test_ndarray_method_table_covers_mxnet():
    import plexnet.operator.fluent as fl
    for name in fl.FLUENT_METHODS:
        assert name in vars(mx.nd.NDArray) or hasattr(mx.nd.NDArray, name), name
        assert hasattr(mx.sym.Symbol, name), name
    assert mx.nd.NDArray.exp.__name__ == "exp" and "exp" in mx.nd.NDArray.exp.__doc__


def test_asscalar_and_views():
    x = mx.nd.array([[3.5]])
    s = x.asscalar()
    assert isinstance(s, np.float32) and s == 3.5
    with pytest.raises(ValueError):
        mx.nd.ones((2,)).asscalar()
    y = mx.nd.zeros((2, 3))
    v = y.flatten(inplace=True)
    v[:] = 1
    assert y.asnumpy().sum() == 6  # a view
    c = y.flatten()
    c[:] = 5
    assert y.asnumpy().sum() == 6  # a copy
    e = y.expand_dims(0, inplace=True)
    assert e.shape == (1, 2, 3)
    assert y.astype("float32", copy=False) is y
    assert y.astype("float32") is not y
    assert y.tostype("csr").stype == "csr"  # sparse storage: tests/sparse
    assert y.as_in_context(y.context) is y


def test_an_array_after_the_inputs_of_a_parameterless_operator_is_out():
    """MXNet's generated ``abs(data=None, out=None, name=None)``: ``nd.abs(x, y)`` writes
    into ``y`` and returns it (a second array is not a second input); the name follows."""
    x = mx.nd.array([[-1.0, 2.0]])
    y = mx.nd.zeros((1, 2))
    assert mx.nd.abs(x, y) is y
    np.testing.assert_array_equal(y.asnumpy(), [[1.0, 2.0]])
    z = mx.nd.zeros((1, 2))
    assert mx.nd.relu(x, z, "act") is z
    np.testing.assert_array_equal(z.asnumpy(), [[0.0, 2.0]])
    w = mx.nd.zeros((1, 2))
    assert mx.nd.elemwise_add(x, x, w) is w                  # two inputs, then out
    np.testing.assert_array_equal(w.asnumpy(), [[-2.0, 4.0]])
    assert mx.nd.abs(x, y) is y                               # again (no cached plan for it)
    with pytest.raises(Exception, match="abs.*too many positional"):
        mx.nd.abs(x, y, "n", 5)
    with pytest.raises(Exception, match="FullyConnected"):
        mx.nd.FullyConnected(x, x, x, x)                     # parameters are not out
