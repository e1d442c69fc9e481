"""MXNet's Python-level operator functions (``nd.maximum(2, x)``, ``sym.power``...) and the
creation operators ``_zeros``/``_ones``/``_full``/``_arange``/``_linspace``/``_eye``."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from opcheck import check_forward, make_prop
from plexnet.operator.params import ParamError

A = np.array([[1.0, -2.0, 3.0], [0.0, 5.0, -1.0]], dtype=np.float32)
B = np.array([2.0, -2.0, 1.0], dtype=np.float32)

# name, numpy reference (MXNet: x mod 0 = 0)
FUNCS = [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("divide", np.divide),
    ("true_divide", np.divide), ("modulo", lambda a, b: np.where(np.asarray(b) == 0, 0, np.mod(a, b))), ("maximum", np.maximum), ("minimum", np.minimum),
    ("hypot", np.hypot), ("equal", np.equal), ("not_equal", np.not_equal), ("greater", np.greater),
    ("greater_equal", np.greater_equal), ("lesser", np.less), ("lesser_equal", np.less_equal),
    ("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor),
]


@pytest.mark.parametrize("name,ref", FUNCS, ids=[f[0] for f in FUNCS])
def test_nd_function_scalar_either_side(name: str, ref) -> None:
    fn = getattr(mx.nd, name)
    a, b = mx.nd.array(A), mx.nd.array(B)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(fn(a, b).asnumpy(), ref(A, B).astype(np.float32), rtol=1e-6)
        np.testing.assert_allclose(fn(a, 2).asnumpy(), ref(A, np.float32(2)).astype(np.float32), rtol=1e-6)
        np.testing.assert_allclose(fn(3, a).asnumpy(), ref(np.float32(3), A).astype(np.float32), rtol=1e-6)
    r = fn(3, 2)
    assert not isinstance(r, mx.nd.NDArray)
    assert float(r) == pytest.approx(float(ref(3, 2)))


def test_nd_function_mxnet_specifics() -> None:
    assert mx.nd.equal(2, 2) == 1 and type(mx.nd.equal(2, 2)) is int
    assert mx.nd.maximum(2, 3) == 3
    np.testing.assert_array_equal(mx.nd.modulo(7, mx.nd.array([2, 3, 4])).asnumpy(), [1, 1, 3])
    np.testing.assert_array_equal(mx.nd.power(2, mx.nd.array([1, 2, 3])).asnumpy(), [2, 4, 8])
    with pytest.raises(TypeError):
        mx.nd.add("a", mx.nd.ones((2,)))


def test_sym_functions() -> None:
    x = mx.sym.Variable("x")
    y = mx.sym.Variable("y")
    for s, ref in [(mx.sym.power(x, y), A ** np.abs(A)), (mx.sym.power(x, 2), A ** 2), (mx.sym.power(2, x), 2 ** A),
                   (mx.sym.hypot(x, y), np.hypot(A, np.abs(A))), (mx.sym.hypot(x, 3), np.hypot(A, 3))]:
        args = {"x": mx.nd.array(A)}
        if "y" in s.list_arguments():
            args["y"] = mx.nd.array(np.abs(A))
        out = s.bind(mx.current_context(), args).forward()[0].asnumpy()
        np.testing.assert_allclose(out, ref, rtol=1e-5)
    assert mx.sym.power(2, 3) == 8 and mx.sym.hypot(3, 4) == 5.0


@pytest.mark.parametrize("sym_fn,kw,ref", [
    ("arange", dict(start=0, stop=5, step=2, repeat=2), [0, 0, 2, 2, 4, 4]),
    ("arange", dict(start=3), [0, 1, 2]),
    ("full", dict(shape=(2, 2), val=3.5), np.full((2, 2), 3.5)),
    ("eye", dict(N=2, M=3, k=1), np.eye(2, 3, 1)),
    ("linspace", dict(start=0, stop=1, num=5, endpoint=False), np.linspace(0, 1, 5, endpoint=False)),
])
def test_sym_creation(sym_fn: str, kw: dict, ref) -> None:
    s = getattr(mx.sym, sym_fn)(**kw)
    assert s.list_arguments() == []
    out = s.bind(mx.current_context(), {}).forward()[0]
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)


def test_nd_creation() -> None:
    np.testing.assert_array_equal(mx.nd.eye(3, 4, k=-1, dtype="int32").asnumpy(), np.eye(3, 4, -1, dtype=np.int32))
    np.testing.assert_allclose(mx.nd.linspace(1, 2, 3).asnumpy(), [1, 1.5, 2])
    check_forward("_full", [], {"shape": (2,), "value": 3.7, "dtype": "int32"}, np.array([3, 3]))
    check_forward("_zeros", [], {"shape": (0, 3)}, np.zeros((0, 3)))
    check_forward("_ones", [], {"shape": (2, 1), "dtype": "float64"}, np.ones((2, 1)))
    check_forward("_arange", [], {"start": 1, "stop": 0, "step": 1}, np.zeros((0,)))
    with pytest.raises(ParamError, match="_arange.*step"):
        make_prop("_arange", {"start": 0, "stop": 2, "step": 0})
    with pytest.raises(ParamError, match="_eye.*N"):
        make_prop("_eye", {"N": -1})
