"""Concat, stack, SliceChannel/split (multi-output), add_n/ElementWiseSum."""
from __future__ import annotations

import numpy as np
import pytest
from tensorref import param_error, rand, shape_error

from opcheck import check_forward, check_gradient, check_req, make_prop, run_backward

REQS3 = ("null", "write", "add")


@pytest.mark.parametrize("name", ["Concat", "concat"])
@pytest.mark.parametrize("shapes,dim", [([(2, 3), (2, 4)], 1), ([(2, 3), (1, 3), (3, 3)], 0),
                                        ([(2, 3, 1), (2, 3, 2)], -1), ([(4,)], 0)], ids=str)
def test_concat(name: str, shapes: list, dim: int) -> None:
    xs = [rand(s, seed=i) for i, s in enumerate(shapes)]
    kw = {"num_args": len(xs), "dim": dim}
    prop = make_prop(name, kw)
    assert prop.list_arguments() == [f"arg{i}" for i in range(len(xs))]
    check_forward(name, xs, kw, np.concatenate(xs, axis=dim), rtol=0, atol=0)
    check_gradient(name, xs, kw)
    check_req(name, xs, kw, req=REQS3)


def test_concat_errors_and_partial() -> None:
    shape_error("Concat", {"num_args": 2, "dim": 1}, (2, 3), (3, 3), match=("arg1", "(3, 3)", "(2, 3)"))
    shape_error("Concat", {"num_args": 2}, (2, 3), (2, 3, 1), match=("(2, 3, 1)",))
    shape_error("Concat", {"num_args": 1, "dim": 2}, (2, 3), match=("dim",))
    assert make_prop("Concat", {"num_args": 2}).infer_shape([(2, 3), None])[1] == [None]
    param_error("Concat", {"num_args": 0}, "num_args")
    param_error("Concat", {"dim": 1}, "num_args")


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(axis: int) -> None:
    xs = [rand((2, 3), seed=i) for i in range(3)]
    kw = {"num_args": 3, "axis": axis}
    assert make_prop("stack", kw).list_arguments() == ["arg0", "arg1", "arg2"]
    check_forward("stack", xs, kw, np.stack(xs, axis=axis), rtol=0, atol=0)
    check_gradient("stack", xs, kw)
    check_req("stack", xs, kw, req=REQS3)


def test_stack_errors() -> None:
    shape_error("stack", {"num_args": 2}, (2, 3), (3, 2), match=("arg1", "(3, 2)", "(2, 3)"))
    shape_error("stack", {"num_args": 2, "axis": 3}, (2, 3), (2, 3), match=("axis",))


@pytest.mark.parametrize("name", ["SliceChannel", "split"])
@pytest.mark.parametrize("shape,kw", [((2, 6), {"num_outputs": 3}), ((4, 3), {"num_outputs": 2, "axis": 0}),
                                      ((2, 3, 2), {"num_outputs": 3, "axis": 1, "squeeze_axis": True}),
                                      ((2, 3), {"num_outputs": 1, "axis": -1})], ids=str)
def test_split(name: str, shape: tuple, kw: dict) -> None:
    x = rand(shape)
    n, axis = kw["num_outputs"], kw.get("axis", 1)
    parts = np.split(x, n, axis=axis)
    if kw.get("squeeze_axis"):
        parts = [np.squeeze(p, axis=axis) for p in parts]
    prop = make_prop(name, kw)
    assert prop.list_outputs() == [f"output{i}" for i in range(n)]
    assert prop.num_outputs() == n == prop.num_visible_outputs()
    check_forward(name, [x], kw, parts, rtol=0, atol=0)
    check_gradient(name, [x], kw)
    check_req(name, [x], kw, req=REQS3)


def test_split_gradient_of_some_outputs() -> None:
    x = rand((2, 6))
    g = run_backward("split", [x], {"num_outputs": 3},
                     out_grads=[np.ones((2, 2)), np.zeros((2, 2)), np.full((2, 2), 2.0)])[0]
    np.testing.assert_array_equal(g, [[1, 1, 0, 0, 2, 2]] * 2)


def test_split_errors() -> None:
    shape_error("SliceChannel", {"num_outputs": 2}, (2, 3), match=("(2, 3)", "num_outputs=2"))
    shape_error("SliceChannel", {"num_outputs": 2, "axis": 0, "squeeze_axis": True}, (4, 3),
                match=("squeeze_axis",))
    param_error("SliceChannel", {"num_outputs": "two"}, "num_outputs", "two")


@pytest.mark.parametrize("name", ["add_n", "ElementWiseSum"])
@pytest.mark.parametrize("n", [1, 2, 4])
def test_add_n(name: str, n: int) -> None:
    xs = [rand((2, 3), seed=i) for i in range(n)]
    kw = {"num_args": n}
    check_forward(name, xs, kw, sum(xs), rtol=1e-12, atol=1e-12)
    check_gradient(name, xs, kw)
    done = check_req(name, xs, kw, req=("null", "write", "add", "inplace"))
    assert "forward:inplace" in done


def test_add_n_errors() -> None:
    shape_error("add_n", {"num_args": 2}, (2, 3), (3, 2), match=("arg1", "(3, 2)"))
    assert make_prop("add_n", {"num_args": 2}).infer_shape([None, (2, 2)])[0] == [(2, 2), (2, 2)]
