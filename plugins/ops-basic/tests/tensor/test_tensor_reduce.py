"""Reductions: sum/mean/max/min/prod/nansum/nanprod with axis/keepdims/exclude, norm,
argmax/argmin."""
from __future__ import annotations

import numpy as np
import pytest
from tensorref import param_error, rand, shape_error

from opcheck import check_forward, check_gradient, check_req, make_prop, run_backward, run_forward

REF = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
       "nansum": np.nansum, "nanprod": np.nanprod}
ALIASES = {"sum_axis": "sum", "max_axis": "max", "min_axis": "min"}

# kwargs, input shape
CASES = [
    ({}, (2, 3, 4)),
    ({"axis": 1}, (2, 3, 4)),
    ({"axis": -1, "keepdims": True}, (2, 3, 4)),
    ({"axis": (0, 2)}, (2, 3, 4)),
    ({"axis": "(0, 2)", "keepdims": "1"}, (2, 3, 4)),
    ({"axis": 1, "exclude": True}, (2, 3, 4)),
    ({"axis": ()}, (3, 2)),
    ({"keepdims": True}, (3, 2)),
    ({"axis": 0}, (5,)),
]


def _axes(kw: dict, ndim: int) -> tuple | None:
    a = kw.get("axis")
    if isinstance(a, str):
        a = eval(a)  # noqa: S307 - test literal
    if a is None or a == ():
        return None
    a = (a,) if isinstance(a, int) else tuple(a)
    a = tuple(x % ndim for x in a)
    if kw.get("exclude"):
        a = tuple(i for i in range(ndim) if i not in a)
    return a


def _ref(name: str, kw: dict, x: np.ndarray) -> np.ndarray:
    axes = _axes(kw, x.ndim)
    keep = kw.get("keepdims") in (True, "1", "True")
    y = REF[name](x, axis=axes, keepdims=keep)
    y = np.asarray(y)
    return y.reshape(1) if y.ndim == 0 else y


def _data(name: str, shape: tuple, seed: int = 0) -> np.ndarray:
    x = rand(shape, 0.5, 1.5, seed) if "prod" in name else rand(shape, -2, 2, seed)
    if name.startswith("nan"):
        x.reshape(-1)[::5] = np.nan
    return x


@pytest.mark.parametrize("name", sorted(REF))
@pytest.mark.parametrize("kw,shape", CASES, ids=str)
def test_forward(name: str, kw: dict, shape: tuple) -> None:
    x = _data(name, shape)
    check_forward(name, [x], kw, _ref(name, kw, x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(REF))
@pytest.mark.parametrize("kw,shape", [CASES[0], CASES[2], CASES[3], CASES[5]], ids=str)
def test_gradient(name: str, kw: dict, shape: tuple) -> None:
    x = _data(name, (2, 3, 2), seed=1)
    if name.startswith("nan"):
        # numeric differences through NaN entries are NaN; check the non-NaN entries only
        g = run_backward(name, [x], kw)[0]
        assert np.all(g[np.isnan(x)] == 0)
        x = np.where(np.isnan(x), 0.7, x)
        check_gradient(name, [x], kw)  # the nan-op's own backward, on NaN-free data
        return
    check_gradient(name, [x], kw, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", sorted(REF))
def test_req(name: str) -> None:
    check_req(name, [_data(name, (2, 3, 2), seed=2)], {"axis": 1}, req=("null", "write", "add"))


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_aliases(alias: str) -> None:
    x = rand((2, 3))
    check_forward(alias, [x], {"axis": 1}, REF[ALIASES[alias]](x, axis=1))


def test_max_gradient_goes_to_every_tie() -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
    g = run_backward("max", [x], {"axis": 1}, out_grads=[np.array([1.0, 2.0])])[0]
    np.testing.assert_array_equal(g, [[0, 1, 1], [2, 0, 0]])


def test_integer_reductions_keep_dtype() -> None:
    x = np.array([[1, 2], [3, 4]], dtype=np.int32)
    out = run_forward("max", [x], {"axis": 0})[0]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [3, 4])
    np.testing.assert_array_equal(run_forward("mean", [x], {"axis": 1})[0], [1, 3])


def test_shapes_and_errors() -> None:
    assert make_prop("sum", {}).infer_shape([(2, 3)])[1] == [(1,)]
    assert make_prop("sum", {"keepdims": True}).infer_shape([(2, 3)])[1] == [(1, 1)]
    assert make_prop("sum", {"axis": (0, 1), "exclude": True}).infer_shape([(2, 3)])[1] == [(2, 3)]
    assert make_prop("sum", {"axis": 1}).infer_shape([None])[1] == [None]
    shape_error("sum", {"axis": 2}, (2, 3), match=("axis", "(2, 3)"))
    shape_error("mean", {"axis": (0, 0)}, (2, 3), match=("axis",))
    param_error("sum", {"axis": "x"}, "axis", "x")
    param_error("sum", {"keep_dims": True}, "keep_dims")


# -- norm ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"ord": 1}, {"axis": 1}, {"ord": 1, "axis": (0, 2)}, {"axis": -1, "keepdims": True}],
                         ids=str)
def test_norm(kw: dict) -> None:
    x = rand((2, 3, 4), -2, 2)
    ord_ = kw.get("ord", 2)
    axes = kw.get("axis")
    axes = (axes,) if isinstance(axes, int) else axes
    ref = np.sum(np.abs(x), axis=axes, keepdims=kw.get("keepdims", False)) if ord_ == 1 else \
        np.sqrt(np.sum(x * x, axis=axes, keepdims=kw.get("keepdims", False)))
    ref = np.asarray(ref).reshape(-1) if np.ndim(ref) == 0 else ref
    check_forward("norm", [x], kw, ref, rtol=1e-12, atol=1e-12)
    check_gradient("norm", [rand((2, 3, 4), -2, 2, seed=3)], kw)
    check_req("norm", [x], kw, req=("null", "write", "add"))


def test_integer_l2_norm_as_mxnet() -> None:
    """MXNet 1.9.1 runs its scaled nrm2 reducer in the integer type: max|x| times the square
    root of how often it occurs, truncated (values recorded from MXNet 1.9.1)."""
    def norm(x, dtype, **kw):
        return run_forward("norm", [np.array(x, dtype=dtype)], kw)[0].tolist()
    assert norm([3, 4], np.int32) == [4]
    assert norm([-3, 4, 2, -4], np.int32) == [5]
    assert norm([200, 100], np.uint8) == [200]
    assert norm([200, 100], np.uint8, ord=1) == [44]
    assert norm([[3, 4], [6, 8]], np.int32, axis=1) == [4, 8]
    assert norm([[0, 0], [6, 8]], np.int32, axis=1, keepdims=True) == [[0], [8]]
    assert norm([[3, 4], [6, 8]], np.int64, axis=(0, 1)) == [8]


def test_norm_params() -> None:
    np.testing.assert_allclose(run_forward("norm", [np.array([[3.0, 4.0], [6.0, 8.0]])], {"ord": 1, "axis": 1})[0],
                               [7, 14])
    out = run_forward("norm", [np.array([3.0, 4.0], dtype=np.float32)], {"out_dtype": "float64"})[0]
    assert out.dtype == np.float64 and out.tolist() == [5.0]
    param_error("norm", {"ord": 3}, "ord", "3")
    g = run_backward("norm", [np.zeros(3)], {})[0]
    assert np.isnan(g).all()   # MXNet 1.9.1: x / norm(x) is 0 / 0 at a zero vector


# -- argmax / argmin ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": -1, "keepdims": True}, {"axis": 0}, {"keepdims": True}],
                         ids=str)
def test_argmax(name: str, kw: dict) -> None:
    x = rand((3, 4), seed=4)
    fn = getattr(np, name)
    axis = kw.get("axis")
    if axis is None:
        ref = np.array([fn(x)], dtype=np.float64)
        if kw.get("keepdims"):
            ref = ref.reshape(1, 1)
    else:
        ref = fn(x, axis=axis, keepdims=kw.get("keepdims", False)).astype(np.float64)
    outs = check_forward(name, [x], kw, ref, rtol=0, atol=0)
    assert outs[0].dtype == x.dtype
    g = run_backward(name, [x], kw)
    np.testing.assert_array_equal(g[0], 0)
    check_req(name, [x], kw, req=("null", "write", "add"))


def test_argmax_integer_input() -> None:
    x = np.array([[1, 5, 5], [7, 7, 2]], dtype=np.int32)
    out = run_forward("argmin", [x], {"axis": 1})[0]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [0, 2])
    np.testing.assert_array_equal(run_forward("argmax", [x], {"axis": 1})[0], [1, 0])
    shape_error("argmax", {"axis": 2}, (2, 3), match=("axis",))
