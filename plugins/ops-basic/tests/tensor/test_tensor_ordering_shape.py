"""sort/argsort/topk/cumsum, reshape_like/slice_like/shape_array/size_array,
depth_to_space/space_to_depth, diag, gather_nd/scatter_nd, ravel/unravel, the legacy
row pickers, Pad, moments/histogram/khatri_rao and the small tensor operators:
numerical gradients, every req, properties and errors (values against MXNet:
test_mxnet_fixtures.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from opcheck import check_forward, check_gradient, check_req, make_prop, run_forward
from plexnet.base import ShapeError
from plexnet.operator.params import ParamError

REQS3 = ("null", "write", "add")


def distinct(*shape: int, seed: int = 0) -> np.ndarray:
    n = int(np.prod(shape))
    return np.random.default_rng(seed).permutation(n).reshape(shape).astype(np.float64) / n


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape)


# name, inputs, kwargs, arguments to check numerically
GRAD_CASES = [
    ("sort", [distinct(3, 4)], {"axis": 0}, None),
    ("sort", [distinct(2, 3)], {"axis": None, "is_ascend": False}, None),
    ("topk", [distinct(3, 5)], {"k": 2, "ret_typ": "value"}, None),
    ("topk", [distinct(2, 3, 4)], {"k": 2, "axis": 1, "ret_typ": "both"}, None),
    ("cumsum", [rand(3, 4)], {"axis": 1}, None),
    ("cumsum", [rand(2, 3)], {}, None),
    ("reshape_like", [rand(2, 6), rand(3, 4)], {}, ["lhs"]),
    ("slice_like", [rand(3, 4), rand(2, 2)], {"axes": (1,)}, ["data"]),
    ("depth_to_space", [rand(1, 4, 2, 3)], {"block_size": 2}, None),
    ("space_to_depth", [rand(1, 1, 4, 2)], {"block_size": 2}, None),
    ("diag", [rand(3, 4)], {"k": -1}, None),
    ("diag", [rand(3)], {"k": 1}, None),
    ("diag", [rand(2, 3, 3)], {"axis1": 1, "axis2": 2}, None),
    ("gather_nd", [rand(3, 2), np.array([[0, 2, 0], [1, 1, 1]])], {}, ["data"]),
    ("_backward_gather_nd", [rand(3), np.array([[0, 2, 0], [1, 1, 1]])], {"shape": (3, 2)}, ["data"]),
    ("_identity_with_attr_like_rhs", [rand(2, 3), rand(2, 3, seed=1)], {}, ["lhs"]),
    ("scatter_nd", [rand(2, 2), np.array([[0, 2]])], {"shape": (3, 2)}, ["data"]),
    ("choose_element_0index", [rand(3, 4), np.array([1, 0, 3])], {}, ["data"]),
    ("fill_element_0index", [rand(3, 4), rand(3), np.array([1, 0, 3])], {}, ["lhs", "mhs"]),
    ("Pad", [rand(1, 1, 3, 3)], {"mode": "reflect", "pad_width": (0, 0, 0, 0, 2, 1, 1, 2)}, None),
    ("Pad", [rand(1, 2, 2, 2)], {"mode": "edge", "pad_width": (0, 0, 0, 0, 2, 1, 1, 2)}, None),
    ("Pad", [rand(1, 1, 2, 2, 2)], {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 0, 0, 1, 1, 1),
                                    "constant_value": 3.0}, None),
    ("moments", [rand(3, 4)], {"axes": (0,)}, None),
    ("moments", [rand(2, 3)], {"keepdims": True}, None),
    ("khatri_rao", [rand(2, 3), rand(3, 3), rand(2, 3)], {"num_args": 3}, None),
    ("hard_sigmoid", [np.array([-4.0, -1.0, 0.3, 2.0, 4.0])], {}, None),
    ("amp_cast", [rand(2, 2)], {"dtype": "float64"}, None),
    ("_split_v2", [rand(4, 3)], {"axis": 0, "indices": (0, 1, 3)}, None),
    ("_split_v2", [rand(2, 3)], {"axis": 1, "sections": 3, "squeeze_axis": True}, None),
    ("cast_storage", [rand(2, 3)], {"stype": "row_sparse"}, None),
]


@pytest.mark.parametrize("name,inputs,kw,wrt", GRAD_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(GRAD_CASES)])
def test_gradient_and_req(name: str, inputs: list, kw: dict, wrt) -> None:
    check_gradient(name, inputs, kw, wrt=wrt)
    check_req(name, inputs, kw, req=REQS3)


def test_ordering_values() -> None:
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    check_forward("argsort", [x], {"is_ascend": False}, np.array([[0, 2, 1], [1, 2, 0]]))
    assert run_forward("argsort", [x], {})[0].dtype == np.float32
    assert run_forward("topk", [x], {"dtype": "int64"})[0].dtype == np.int64
    check_forward("topk", [x], {"k": 2, "ret_typ": "mask"}, np.array([[1, 0, 1], [0, 1, 1]]))
    check_forward("topk", [x], {"k": 0, "ret_typ": "value", "is_ascend": True}, np.sort(x, axis=-1))
    # ties keep input order (stable), ascending and descending
    t = np.array([1.0, 2.0, 1.0, 2.0])
    check_forward("argsort", [t], {}, np.array([0, 2, 1, 3]))
    check_forward("argsort", [t], {"is_ascend": False}, np.array([1, 3, 0, 2]))
    check_forward("cumsum", [np.array([[1, 2], [3, 4]], dtype=np.int32)], {"axis": 0, "dtype": "int64"},
                  np.array([[1, 2], [4, 6]]))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=12), st.booleans())
def test_sort_is_a_permutation_in_order(values: list, ascend: bool) -> None:
    x = np.array(values, dtype=np.float64)
    s = run_forward("sort", [x], {"is_ascend": ascend})[0]
    idx = run_forward("argsort", [x], {"is_ascend": ascend})[0].astype(int)
    np.testing.assert_array_equal(np.sort(s), np.sort(x))
    np.testing.assert_array_equal(x[idx], s)
    assert np.all(np.diff(s) >= 0) if ascend else np.all(np.diff(s) <= 0)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 10_000))
def test_ravel_unravel_roundtrip(shape: list, seed: int) -> None:
    n = int(np.prod(shape))
    flat = np.random.default_rng(seed).integers(0, n, 5).astype(np.float64)
    multi = run_forward("unravel_index", [flat], {"shape": tuple(shape)})[0]
    np.testing.assert_array_equal(multi, np.array(np.unravel_index(flat.astype(int), shape)))
    back = run_forward("ravel_multi_index", [multi.astype(np.float64)], {"shape": tuple(shape)})[0]
    np.testing.assert_array_equal(back, flat)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_depth_space_inverse(n: int, c: int, h: int, b: int) -> None:
    x = rand(n, c * b * b, h, h + 1)
    y = run_forward("depth_to_space", [x], {"block_size": b})[0]
    np.testing.assert_array_equal(run_forward("space_to_depth", [y], {"block_size": b})[0], x)


def test_shape_and_size_array() -> None:
    out = run_forward("shape_array", [rand(2, 3, 4)], {})[0]
    assert out.dtype == np.int64 and out.tolist() == [2, 3, 4]
    assert run_forward("size_array", [rand(0, 3)], {})[0].tolist() == [0]


def test_histogram_and_misc() -> None:
    x = np.array([0.0, 1, 2, 2, 5, 9])
    outs = run_forward("_histogram", [x], {"bin_cnt": 3, "range": (0, 9)})
    assert outs[0].tolist() == [4, 1, 1] and outs[0].dtype == np.int64
    np.testing.assert_allclose(outs[1], [0, 3, 6, 9])
    outs = run_forward("_histogram", [x, np.array([0.0, 2, 5, 10])], {})
    assert outs[0].tolist() == [2, 2, 2]
    assert run_forward("all_finite", [np.array([1.0, np.nan])], {})[0].tolist() == [0.0]
    assert run_forward("multi_all_finite", [np.ones(2), np.ones(3)], {"num_arrays": 2})[0].tolist() == [1.0]
    prop = make_prop("amp_multicast", {"num_outputs": 2})
    assert prop.infer_type([np.dtype("float16"), np.dtype("float32")])[1] == [np.float32, np.float32]
    prop = make_prop("amp_multicast", {"num_outputs": 2, "cast_narrow": True})
    assert prop.infer_type([np.dtype("float16"), np.dtype("float32")])[1] == [np.float16, np.float16]


def test_nd_functions_over_the_operators() -> None:
    import plexnet as mx
    parts = mx.nd.split_v2(mx.nd.arange(10), (2, 5))
    assert [p.asnumpy().tolist() for p in parts] == [[0, 1], [2, 3, 4], [5, 6, 7, 8, 9]]
    counts, edges = mx.nd.histogram(mx.nd.array([0, 1, 2, 2, 5, 9]), bins=3, range=(0, 9))
    assert counts.asnumpy().tolist() == [4, 1, 1]
    o = mx.nd.zeros((3, 4))
    mx.nd.onehot_encode(mx.nd.array([1, 3, 0]), o)
    np.testing.assert_array_equal(o.asnumpy(), np.eye(4)[[1, 3, 0]])
    a, b = mx.nd.ones((2,)), mx.nd.ones((3,))
    mx.nd.reset_arrays(a, b, num_arrays=2)
    assert a.asnumpy().sum() == 0 and b.asnumpy().sum() == 0


@pytest.mark.parametrize("name,kw,shapes,match", [
    ("topk", {"k": 5}, [(2, 3)], r"topk.*'k'=5.*\(2, 3\)"),
    ("sort", {"axis": 2}, [(2, 3)], r"sort.*'axis'=2.*\(2, 3\)"),
    ("reshape_like", {}, [(2, 3), (4, 2)], r"reshape_like.*\(2, 3\).*\(4, 2\)"),
    ("slice_like", {}, [(2, 3), (3, 3)], r"slice_like.*\(3, 3\).*\(2, 3\)"),
    ("depth_to_space", {"block_size": 2}, [(1, 3, 2, 2)], r"depth_to_space.*\(1, 3, 2, 2\)"),
    ("space_to_depth", {"block_size": 2}, [(1, 3, 3, 2)], r"space_to_depth.*\(1, 3, 3, 2\)"),
    ("gather_nd", {}, [(2, 3), (3, 4)], r"gather_nd.*\(3, 4\).*\(2, 3\)"),
    ("scatter_nd", {"shape": (3, 3)}, [(2,), (2, 4)], r"scatter_nd.*\(2,\).*\(2, 4\).*\(3, 3\)"),
    ("ravel_multi_index", {"shape": (2, 3)}, [(3, 4)], r"ravel_multi_index.*\(3, 4\)"),
    ("diag", {"axis1": 1, "axis2": 1}, [(2, 3)], r"diag.*axis"),
    ("Pad", {"mode": "reflect", "pad_width": (0, 0, 0, 0, 3, 0, 0, 0)}, [(1, 1, 3, 3)], r"Pad.*\(1, 1, 3, 3\)"),
    ("Pad", {"mode": "edge", "pad_width": (0, 0, 0, 0, 1, 0, 0, 0)}, [(1, 1, 3)], r"Pad.*\(1, 1, 3\)"),
    ("khatri_rao", {"num_args": 2}, [(2, 3), (2, 4)], r"khatri_rao.*\(2, 3\).*\(2, 4\)"),
    ("batch_take", {}, [(2, 3), (3,)], r"batch_take.*\(2, 3\).*\(3,\)"),
])
def test_shape_errors(name: str, kw: dict, shapes: list, match: str) -> None:
    with pytest.raises(ShapeError, match=match):
        make_prop(name, kw).infer_shape(shapes)


@pytest.mark.parametrize("name,kw,match", [
    ("topk", {"ret_typ": "values"}, "ret_typ"),
    ("Pad", {"pad_width": (0, 0, 1, 0, 0, 0, 0, 0)}, "pad_width"),
    ("Pad", {"pad_width": (0, 0, 0, 0)}, "pad_width"),
    ("_split_v2", {"sections": 2, "indices": (0, 1)}, "sections"),
    ("_histogram", {"bin_cnt": 3}, "range"),
    ("argsort", {"dtype": "complex64"}, "dtype"),
])
def test_param_errors(name: str, kw: dict, match: str) -> None:
    with pytest.raises(ParamError, match=f"{name}.*{match}"):
        make_prop(name, kw)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(0, 60), st.booleans(), st.sampled_from(["float32", "int32"]),
       st.integers(0, 10_000))
def test_topk_paths_agree_with_a_stable_sort(n: int, k: int, ascend: bool, dtype: str, seed: int) -> None:
    # small k (argmax passes), k < n/4 (argpartition) and the full sort must order ties alike
    k = min(k, n)
    x = np.random.default_rng(seed).integers(0, 6, (3, n)).astype(dtype)
    got = run_forward("topk", [x], {"k": k, "ret_typ": "indices", "is_ascend": ascend, "dtype": "int64"})[0]
    keys = x.astype(np.int64) if ascend else -x.astype(np.int64)
    ref = np.argsort(keys, axis=-1, kind="stable")[:, :k if k >= 1 else n]
    np.testing.assert_array_equal(got, ref)


def test_reset_arrays_and_onehot_encode_through_the_harness() -> None:
    a, b = rand(2, 3), rand(4)
    outs = run_forward("reset_arrays", [a, b], {"num_arrays": 2}, check_inputs=False)
    assert len(outs) == 0 and not outs.inputs[0].any() and not outs.inputs[1].any()  # the harness's copies
    assert make_prop("reset_arrays", {"num_arrays": 2}).mutate_inputs() == [0, 1]
    check_forward("_onehot_encode", [np.array([1.0, 3, 0]), np.zeros((3, 4))], {}, np.eye(4)[[1, 3, 0]])
    outs = run_forward("amp_multicast", [rand(2), rand(3).astype(np.float32)], {"num_outputs": 2})
    assert outs[0].dtype == outs[1].dtype == np.float64
    check_gradient("amp_multicast", [rand(2), rand(3)], {"num_outputs": 2})


def test_slice_assign_values() -> None:
    """_slice_assign / _slice_assign_scalar (MXNet's x[b:e] = v as operators): forward only,
    as MXNet registers no gradient for them."""
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    v = -np.ones((2, 2))
    want = x.copy()
    want[0:2, 1:3] = v
    check_forward("_slice_assign", [x, v], {"begin": (0, 1), "end": (2, 3)}, want)
    want = x.copy()
    want[1:3, ::2] = 7.0
    check_forward("_slice_assign_scalar", [x], {"scalar": 7.0, "begin": (1, None), "end": (3, None),
                                                "step": (1, 2)}, want)
