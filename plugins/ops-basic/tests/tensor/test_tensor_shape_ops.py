"""Reshape (MXNet codes, reverse, legacy target_shape), Flatten, transpose, SwapAxis,
expand_dims, squeeze."""
from __future__ import annotations

import numpy as np
import pytest
from tensorref import param_error, rand, shape_error

from opcheck import check_forward, check_gradient, check_req, make_prop

REQS3 = ("null", "write", "add")

# input shape, kwargs, output shape (as Apache MXNet 1.9.1 gives them)
RESHAPE = [
    ((2, 3, 4), {"shape": (6, 4)}, (6, 4)),
    ((2, 3, 4), {"shape": (0, -1)}, (2, 12)),
    ((2, 3, 4), {"shape": (-2,)}, (2, 3, 4)),
    ((2, 3, 4), {"shape": (-3, -2)}, (6, 4)),
    ((2, 3, 4), {"shape": (-4, 1, 2, -2)}, (1, 2, 3, 4)),
    ((2, 3, 4), {"shape": (-4, -1, 1, -2)}, (2, 1, 3, 4)),
    ((2, 3, 4), {"shape": (2, 0, 0, 1)}, (2, 3, 4, 1)),
    ((10, 5, 4), {"shape": (-1, 0), "reverse": True}, (50, 4)),
    ((2, 3, 4), {"shape": "(0, -1)"}, (2, 12)),
    ((2, 3, 4), {"target_shape": (4, 0)}, (4, 6)),
    ((2, 3, 4), {"target_shape": (0, 0), "keep_highest": True}, (2, 12)),
    ((2, 3, 4), {"target_shape": (5, 0, 2), "keep_highest": True}, (2, 6, 2)),
]


@pytest.mark.parametrize("name", ["Reshape", "reshape"])
@pytest.mark.parametrize("src,kw,out", RESHAPE, ids=str)
def test_reshape(name: str, src: tuple, kw: dict, out: tuple) -> None:
    assert make_prop(name, kw).infer_shape([src])[1] == [out]
    x = rand(src)
    check_forward(name, [x], kw, x.reshape(out), rtol=0, atol=0)
    if name == "Reshape":
        check_gradient(name, [rand(src, seed=1)], kw)
        check_req(name, [x], kw, req=REQS3)


def test_reshape_errors() -> None:
    shape_error("Reshape", {"shape": (4, 2)}, (2, 3), match=("(2, 3)", "(4, 2)"))
    shape_error("Reshape", {"shape": (-1, -1)}, (2, 3), match=("-1",))
    shape_error("Reshape", {"target_shape": (5, 0)}, (2, 3), match=("(2, 3)",))
    param_error("Reshape", {}, "shape")
    param_error("Reshape", {"shape": "(2, x)"}, "shape", "(2, x)")


def test_view_ops_declare_inplace() -> None:
    prop = make_prop("Reshape", {"shape": (-1,)})
    assert prop.forward_inplace_option([0], [1]) == [(0, 1)]
    assert prop.backward_inplace_option([0], [1], [2], [3]) == [(0, 3)]
    assert prop.declare_backward_dependency([0], [1], [2]) == [0]


@pytest.mark.parametrize("name", ["Flatten", "flatten"])
@pytest.mark.parametrize("src,out", [((2, 3, 4), (2, 12)), ((5,), (5, 1)), ((2, 3), (2, 3))], ids=str)
def test_flatten(name: str, src: tuple, out: tuple) -> None:
    x = rand(src)
    check_forward(name, [x], {}, x.reshape(out), rtol=0, atol=0)
    check_gradient(name, [x], {})
    check_req(name, [x], {}, req=REQS3)


@pytest.mark.parametrize("src,axes", [((2, 3), ()), ((2, 3, 4), ()), ((2, 3, 4), (1, 0, 2)),
                                      ((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (-1, 0, 1))], ids=str)
def test_transpose(src: tuple, axes: tuple) -> None:
    x = rand(src)
    kw = {"axes": axes}
    check_forward("transpose", [x], kw, np.transpose(x, axes or None), rtol=0, atol=0)
    check_gradient("transpose", [x], kw)
    check_req("transpose", [x], kw, req=REQS3)


def test_transpose_errors() -> None:
    shape_error("transpose", {"axes": (0, 0)}, (2, 3), match=("axes",))
    shape_error("transpose", {"axes": (0, 1)}, (2, 3, 4), match=("axes", "(2, 3, 4)"))
    shape_error("transpose", {"axes": (0, 3)}, (2, 3), match=("axes",))


@pytest.mark.parametrize("name", ["SwapAxis", "swapaxes"])
@pytest.mark.parametrize("kw", [{"dim1": 0, "dim2": 2}, {"dim1": -1, "dim2": 1}, {}], ids=str)
def test_swapaxis(name: str, kw: dict) -> None:
    x = rand((2, 3, 4))
    check_forward(name, [x], kw, np.swapaxes(x, kw.get("dim1", 0), kw.get("dim2", 0)), rtol=0, atol=0)
    check_gradient(name, [x], kw)
    check_req(name, [x], kw, req=REQS3)
    shape_error(name, {"dim1": 3}, (2, 3, 4), match=("dim1", "(2, 3, 4)"))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_expand_dims(axis: int) -> None:
    x = rand((2, 3))
    check_forward("expand_dims", [x], {"axis": axis}, np.expand_dims(x, axis), rtol=0, atol=0)
    check_gradient("expand_dims", [x], {"axis": axis})
    check_req("expand_dims", [x], {"axis": axis}, req=REQS3)


def test_expand_dims_errors() -> None:
    shape_error("expand_dims", {"axis": 3}, (2, 3), match=("axis", "3"))
    param_error("expand_dims", {}, "axis")


@pytest.mark.parametrize("src,kw,out", [((1, 2, 1, 3), {}, (2, 3)), ((1, 2, 1), {"axis": -1}, (1, 2)),
                                        ((1, 2, 1), {"axis": (0, 2)}, (2,)), ((1, 1), {}, (1,))], ids=str)
def test_squeeze(src: tuple, kw: dict, out: tuple) -> None:
    x = rand(src)
    check_forward("squeeze", [x], kw, x.reshape(out), rtol=0, atol=0)
    check_gradient("squeeze", [x], kw)
    check_req("squeeze", [x], kw, req=REQS3)


def test_squeeze_error() -> None:
    shape_error("squeeze", {"axis": 1}, (1, 2), match=("(1, 2)", "axis"))


def test_inplace_when_shapes_agree() -> None:
    x = rand((2, 3))
    assert "forward:inplace" in check_req("Reshape", [x], {"shape": (2, 3)}, req=("inplace",))
