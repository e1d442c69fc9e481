"""slice / crop, slice_axis, take, pick, one_hot, where."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensorref import param_error, rand, shape_error

from opcheck import check_forward, check_gradient, check_req, make_prop, run_backward, run_forward

REQS3 = ("null", "write", "add")


# shape, begin, end, step
SLICES = [
    ((4, 5), (1, 0), (3, 4), ()),
    ((4, 5), (None, 1), (None, None), (None, 2)),
    ((4, 5, 2), (1,), (4,), ()),
    ((5,), (None,), (None,), (-2,)),
    ((5,), (-1,), (-6,), (-1,)),
    ((5, 3), (1,), (3,), (-1,)),  # empty with a negative step: allowed, as MXNet
    ((5, 3), (-3, 1), (-1, 3), (1, 1)),
]


@pytest.mark.parametrize("name", ["slice", "crop"])
@pytest.mark.parametrize("shape,begin,end,step", SLICES, ids=str)
def test_slice(name: str, shape: tuple, begin: tuple, end: tuple, step: tuple) -> None:
    x = rand(shape)
    kw = {"begin": begin, "end": end, "step": step}
    key = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step or (None,) * len(begin)))
    check_forward(name, [x], kw, x[key], rtol=0, atol=0)
    if x[key].size:
        check_gradient(name, [x], kw)
    check_req(name, [x], kw, req=REQS3)


def test_slice_mxnet_strings_and_errors() -> None:
    # MXNet 1.9.1 refuses an empty range with a positive step (tests/fixtures/mxnet_dtype_slice_rules.json)
    shape_error("slice", {"begin": (10,), "end": (None,)}, (5, 3), match=("empty range", "axis 0"))
    shape_error("slice", {"begin": (3,), "end": (1,)}, (5, 3), match=("empty range", "begin=3"))
    x = rand((4, 5))
    check_forward("slice", [x], {"begin": "(1, None)", "end": "(None, 3)"}, x[1:, :3])
    param_error("slice", {"begin": (1,), "end": (2,), "step": (0,)}, "step")
    param_error("slice", {"begin": (1,), "end": (2, 3)}, "begin", "end")
    param_error("slice", {"begin": (1,)}, "end")
    shape_error("slice", {"begin": (0, 0, 0), "end": (1, 1, 1)}, (4, 5), match=("begin", "(4, 5)"))


@pytest.mark.parametrize("kw", [{"axis": 0, "begin": 1, "end": 3}, {"axis": 1, "begin": -3, "end": None},
                                {"axis": -1, "begin": 0, "end": -1}], ids=str)
def test_slice_axis(kw: dict) -> None:
    x = rand((4, 5))
    key = [slice(None)] * 2
    key[kw["axis"]] = slice(kw["begin"], kw["end"])
    check_forward("slice_axis", [x], kw, x[tuple(key)], rtol=0, atol=0)
    if x[tuple(key)].size:
        check_gradient("slice_axis", [x], kw)
    check_req("slice_axis", [x], kw, req=REQS3)


def test_slice_axis_errors() -> None:
    shape_error("slice_axis", {"axis": 0, "begin": 2, "end": 2}, (5,), match=("begin=2", "end=2"))  # as MXNet
    shape_error("slice_axis", {"axis": 0, "begin": 1, "end": 10}, (5,), match=("end=10", "(5,)"))
    shape_error("slice_axis", {"axis": 2, "begin": 0, "end": 1}, (5, 2), match=("axis",))
    param_error("slice_axis", {"axis": 0, "begin": 0}, "end")


# -- take ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take(mode: str, axis: int) -> None:
    a = rand((3, 4, 2))
    n = a.shape[axis]
    if mode == "raise":
        idx = np.array([[0, n - 1], [1, 0], [n - 1, n - 1]], dtype=np.float64)
        ref_idx = idx.astype(int)
    else:
        idx = np.array([[0, n + 1], [-1, 1], [1, 1]], dtype=np.float64)  # repeats: gradient accumulates
        ref_idx = np.clip(idx.astype(int), 0, n - 1) if mode == "clip" else np.mod(idx.astype(int), n)
    kw = {"axis": axis, "mode": mode}
    check_forward("take", [a, idx], kw, np.take(a, ref_idx, axis=axis), rtol=0, atol=0)
    check_gradient("take", [a, idx], kw, wrt=["a"])
    g = run_backward("take", [a, idx], kw)
    np.testing.assert_array_equal(g[1], 0)
    check_req("take", [a, idx], kw, req=REQS3)


def test_take_mxnet_values() -> None:
    # Apache MXNet 1.9.1: take([[1,2],[3,4],[5,6]], [[0,5],[-1,1]]) and float indices truncate
    a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out = run_forward("take", [a, np.array([[0.0, 5.0], [-1.0, 1.0]])])[0]
    np.testing.assert_array_equal(out, [[[1, 2], [5, 6]], [[1, 2], [3, 4]]])
    np.testing.assert_array_equal(run_forward("take", [np.array([1.0, 2.0, 3.0]), np.array([1.7, -0.6])])[0], [2, 1])
    np.testing.assert_array_equal(run_forward("take", [np.arange(4.0), np.array([5.0, -1.0])], {"mode": "wrap"})[0],
                                  [1, 3])
    with pytest.raises(IndexError, match="take"):
        run_forward("take", [np.arange(4.0), np.array([4.0])], {"mode": "raise"})


def test_take_types_and_errors() -> None:
    prop = make_prop("take")
    assert prop.list_arguments() == ["a", "indices"]
    assert prop.infer_type([np.dtype("float32"), np.dtype("int32")])[0] == [np.dtype("float32"), np.dtype("int32")]
    out = run_forward("take", [rand((3, 2), dtype=np.float32), np.array([2, 0], dtype=np.int64)])[0]
    assert out.dtype == np.float32
    param_error("take", {"mode": "nearest"}, "mode", "nearest")
    shape_error("take", {"axis": 2}, (3, 2), (4,), match=("axis", "(3, 2)"))


# -- pick ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{"axis": 1}, {"axis": 0}, {"axis": -1, "keepdims": True},
                                {"axis": 1, "mode": "wrap"}], ids=str)
def test_pick(kw: dict) -> None:
    x = rand((3, 4))
    axis = kw["axis"] % 2
    n = x.shape[axis]
    other = x.shape[1 - axis]
    idx = np.array([0, n + 2, -1, 1, 2][:other], dtype=np.float64)
    fixed = np.mod(idx.astype(int), n) if kw.get("mode") == "wrap" else np.clip(idx.astype(int), 0, n - 1)
    ref = np.take_along_axis(x, np.expand_dims(fixed, axis), axis)
    if not kw.get("keepdims"):
        ref = ref.squeeze(axis)
    check_forward("pick", [x, idx], kw, ref, rtol=0, atol=0)
    check_gradient("pick", [x, idx], kw, wrt=["data"])
    check_req("pick", [x, idx], kw, req=REQS3)


def test_pick_mxnet_values_and_errors() -> None:
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(run_forward("pick", [x, np.array([0.0, 5.0])], {"axis": 1})[0], [1, 4])
    np.testing.assert_array_equal(run_forward("pick", [x, np.array([-1.0, 5.0])], {"axis": 1, "mode": "wrap"})[0],
                                  [2, 4])
    shape_error("pick", {"axis": 1}, (2, 3), (3,), match=("index", "(3,)"))
    param_error("pick", {"axis": None}, "axis")
    param_error("pick", {"mode": "raise"}, "mode", "raise")


# -- one_hot -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{"depth": 3}, {"depth": 4, "on_value": 5, "off_value": -1},
                                {"depth": 3, "dtype": "int32"}], ids=str)
def test_one_hot(kw: dict) -> None:
    idx = np.array([[1.0, 0.0, 5.0], [-1.0, 2.7, 2.0]])
    depth = kw["depth"]
    on, off = kw.get("on_value", 1), kw.get("off_value", 0)
    ii = idx.astype(int)
    ref = np.where(ii[..., None] == np.arange(depth), on, off).astype(np.float64)
    outs = check_forward("one_hot", [idx], kw, ref, rtol=0, atol=0)
    assert outs[0].dtype == np.dtype(kw.get("dtype", "float32"))
    np.testing.assert_array_equal(run_backward("one_hot", [idx], kw)[0], 0)
    check_req("one_hot", [idx], kw, req=REQS3)


def test_one_hot_errors() -> None:
    param_error("one_hot", {"depth": 3, "dtype": "complex64"}, "dtype", "complex64")
    param_error("one_hot", {"depth": -1}, "depth")
    param_error("one_hot", {}, "depth")


# -- where ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cshape", [(2, 3), (2,)], ids=str)
def test_where(cshape: tuple) -> None:
    cond = (rand(cshape, seed=5) > 0).astype(np.float64)
    cond.reshape(-1)[0], cond.reshape(-1)[-1] = 1.0, 0.0
    x, y = rand((2, 3), seed=1), rand((2, 3), seed=2)
    c = cond if cond.ndim == 2 else cond[:, None]
    check_forward("where", [cond, x, y], {}, np.where(c != 0, x, y), rtol=0, atol=0)
    check_gradient("where", [cond, x, y], {}, wrt=["x", "y"])
    g = run_backward("where", [cond, x, y], {})
    np.testing.assert_array_equal(g[0], 0)
    check_req("where", [cond, x, y], {}, req=REQS3)


def test_where_errors_and_types() -> None:
    assert make_prop("where").list_arguments() == ["condition", "x", "y"]
    shape_error("where", {}, (3,), (2, 3), (2, 3), match=("condition", "(3,)", "(2, 3)"))
    shape_error("where", {}, (2, 3), (2, 3), (3, 2), match=("(2, 3)", "(3, 2)"))
    cond = np.array([1, 0, 1], dtype=np.int32)
    out = run_forward("where", [cond, np.ones(3, np.float32), np.zeros(3, np.float32)])[0]
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1, 0, 1])


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 300), vocab=st.integers(1, 50), width=st.sampled_from([(), (3,), (2, 4)]),
       seed=st.integers(0, 2 ** 16))
def test_scatter_add_rows_equals_add_at(n, vocab, width, seed):
    """The split (indices seen once by one fancy addition, repeated ones by add.at) gives
    np.add.at's values bit for bit, on both sides of its size threshold."""
    from plexnet_ops_basic.tensor.indexing import scatter_add_rows
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, vocab, n)
    rows = rng.standard_normal((n,) + width).astype(np.float32)
    base = rng.standard_normal((vocab,) + width).astype(np.float32)
    want = base.copy()
    np.add.at(want, idx, rows)
    got = base.copy()
    scatter_add_rows(np, got, idx, rows)
    np.testing.assert_array_equal(got, want)
