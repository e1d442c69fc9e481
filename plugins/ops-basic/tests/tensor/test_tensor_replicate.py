"""tile, repeat, reverse/flip, broadcast_to/axis/like, Cast."""
from __future__ import annotations

import numpy as np
import pytest
from tensorref import param_error, rand, shape_error

from opcheck import check_forward, check_gradient, check_req, make_prop, run_backward, run_forward

REQS3 = ("null", "write", "add")


@pytest.mark.parametrize("shape,reps", [((2, 3), (2,)), ((2, 3), (2, 1, 3)), ((2, 3), ()), ((3,), (2, 2)),
                                        ((2, 1, 2), (1, 3, 2))], ids=str)
def test_tile(shape: tuple, reps: tuple) -> None:
    x = rand(shape)
    kw = {"reps": reps}
    check_forward("tile", [x], kw, np.tile(x, reps), rtol=0, atol=0)
    check_gradient("tile", [x], kw)
    check_req("tile", [x], kw, req=REQS3)


@pytest.mark.parametrize("kw", [{"repeats": 2}, {"repeats": 3, "axis": 0}, {"repeats": 2, "axis": -1}], ids=str)
def test_repeat(kw: dict) -> None:
    x = rand((2, 3))
    axis = kw.get("axis")
    ref = np.repeat(x.reshape(-1) if axis is None else x, kw["repeats"], axis=None if axis is None else axis)
    check_forward("repeat", [x], kw, ref, rtol=0, atol=0)
    check_gradient("repeat", [x], kw)
    check_req("repeat", [x], kw, req=REQS3)


@pytest.mark.parametrize("name", ["reverse", "flip"])
@pytest.mark.parametrize("axis", [0, (0, 1), -1], ids=str)
def test_reverse(name: str, axis) -> None:
    x = rand((3, 4))
    check_forward(name, [x], {"axis": axis}, np.flip(x, axis), rtol=0, atol=0)
    check_gradient(name, [x], {"axis": axis})
    check_req(name, [x], {"axis": axis}, req=REQS3)


def test_replicate_errors() -> None:
    param_error("tile", {"reps": (2, -1)}, "reps")
    param_error("repeat", {"repeats": -1}, "repeats")
    shape_error("repeat", {"repeats": 2, "axis": 2}, (2, 3), match=("axis",))
    shape_error("reverse", {"axis": 2}, (2, 3), match=("axis",))


@pytest.mark.parametrize("name,kw,src,out", [
    ("broadcast_to", {"shape": (2, 3)}, (2, 1), (2, 3)),
    ("broadcast_to", {"shape": (0, 3)}, (2, 1), (2, 3)),
    ("broadcast_to", {"shape": (4, 2, 3)}, (1, 2, 1), (4, 2, 3)),
    ("broadcast_axis", {"axis": 1, "size": 3}, (2, 1), (2, 3)),
    ("broadcast_axes", {"axis": (0, 2), "size": (2, 4)}, (1, 3, 1), (2, 3, 4)),
], ids=str)
def test_broadcast_to_axis(name: str, kw: dict, src: tuple, out: tuple) -> None:
    x = rand(src)
    check_forward(name, [x], kw, np.broadcast_to(x, out), rtol=0, atol=0)
    check_gradient(name, [x], kw)
    check_req(name, [x], kw, req=REQS3)


def test_broadcast_like() -> None:
    x, like = rand((2, 1)), rand((2, 3))
    check_forward("broadcast_like", [x, like], {}, np.broadcast_to(x, (2, 3)), rtol=0, atol=0)
    check_gradient("broadcast_like", [x, like], {})
    g = run_backward("broadcast_like", [x, like], {})
    np.testing.assert_array_equal(g[1], 0)
    kw = {"lhs_axes": (1,), "rhs_axes": (0,)}
    check_forward("broadcast_like", [x, rand((4, 7))], kw, np.broadcast_to(x, (2, 4)), rtol=0, atol=0)


def test_broadcast_errors() -> None:
    shape_error("broadcast_to", {"shape": (2, 3)}, (2, 2), match=("(2, 2)", "(2, 3)"))
    shape_error("broadcast_to", {"shape": (4, 2, 3)}, (2, 1), match=("(2, 1)", "(4, 2, 3)"))
    shape_error("broadcast_axis", {"axis": 0, "size": 3}, (2, 1), match=("(2, 1)",))
    shape_error("broadcast_like", {}, (2, 2), (2, 3), match=("(2, 2)", "(2, 3)"))
    param_error("broadcast_axis", {"axis": (0, 1), "size": (3,)}, "axis", "size")


# -- Cast ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["Cast", "cast"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "int8", "uint8", "bool"])
def test_cast(name: str, dtype: str) -> None:
    x = np.array([[1.7, -2.7, 0.0], [3.2, 100.4, 0.5]])
    if dtype in ("uint8",):
        x = np.abs(x)
    prop = make_prop(name, {"dtype": dtype})
    assert prop.infer_type([np.dtype("float64")])[1] == [np.dtype(dtype)]
    outs = run_forward(name, [x], {"dtype": dtype})
    assert outs[0].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(outs[0], x.astype(dtype))
    g = run_backward(name, [x], {"dtype": dtype})
    assert g[0].dtype == x.dtype
    check_req(name, [x], {"dtype": dtype}, req=REQS3, backward=dtype.startswith("float"),
              rtol=1e-3 if dtype == "float16" else 1e-5)


def test_cast_gradient() -> None:
    check_gradient("Cast", [rand((2, 3))], {"dtype": "float64"})
    g = run_backward("Cast", [rand((2, 3))], {"dtype": np.float32}, out_grads=[np.full((2, 3), 0.5)])
    np.testing.assert_array_equal(g[0], 0.5)


def test_cast_errors() -> None:
    param_error("Cast", {"dtype": "foo"}, "dtype", "foo")
    param_error("Cast", {}, "dtype")
    param_error("cast", {"dtype": "complex128"}, "dtype", "complex128")
