"""Array-with-scalar SimpleOps, clip and smooth_l1; the SimpleOp functions as the
NDArray fast path (called directly, one ufunc into ``ret``)."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from tensorref import ALL_REQS, away_from, param_error, rand, run_context, simple_op

from opcheck import check_forward, check_gradient, check_req, run_backward, run_forward
from plexnet.operator import OpReqType
from plexnet.operator.simple_op import EnvArguments


def _mod(a, b):
    with np.errstate(all="ignore"):
        return np.where(b == 0, 0.0, a - np.floor(a / b) * b)


# name: (reference f(x, s), data range, differentiable)
SCALAR = {
    "_plus_scalar": (lambda x, s: x + s, (-2, 2), True),
    "_minus_scalar": (lambda x, s: x - s, (-2, 2), True),
    "_rminus_scalar": (lambda x, s: s - x, (-2, 2), True),
    "_mul_scalar": (lambda x, s: x * s, (-2, 2), True),
    "_div_scalar": (lambda x, s: x / s, (-2, 2), True),
    "_rdiv_scalar": (lambda x, s: s / x, (0.5, 2), True),
    "_mod_scalar": (_mod, (-4, 4), True),
    "_rmod_scalar": (lambda x, s: _mod(s, x), (0.6, 2), True),
    "_power_scalar": (lambda x, s: x ** s, (0.5, 2), True),
    "_rpower_scalar": (lambda x, s: s ** x, (-2, 2), True),
    "_maximum_scalar": (np.maximum, (-2, 2), True),
    "_minimum_scalar": (np.minimum, (-2, 2), True),
    "_hypot_scalar": (np.hypot, (-2, 2), True),
    "_equal_scalar": (lambda x, s: (x == s) * 1.0, (-2, 2), False),
    "_not_equal_scalar": (lambda x, s: (x != s) * 1.0, (-2, 2), False),
    "_greater_scalar": (lambda x, s: (x > s) * 1.0, (-2, 2), False),
    "_greater_equal_scalar": (lambda x, s: (x >= s) * 1.0, (-2, 2), False),
    "_lesser_scalar": (lambda x, s: (x < s) * 1.0, (-2, 2), False),
    "_lesser_equal_scalar": (lambda x, s: (x <= s) * 1.0, (-2, 2), False),
    "_logical_and_scalar": (lambda x, s: np.logical_and(x, s) * 1.0, (-2, 2), False),
    "_logical_or_scalar": (lambda x, s: np.logical_or(x, s) * 1.0, (-2, 2), False),
    "_logical_xor_scalar": (lambda x, s: np.logical_xor(x, s) * 1.0, (-2, 2), False),
}
SCALARS = [1.7, -0.8, 2.0]


def _x(name: str, shape: tuple = (2, 3), seed: int = 0, s: float | None = None) -> np.ndarray:
    lo, hi = SCALAR[name][1]
    x = rand(shape, lo, hi, seed)
    if s is not None and name in ("_maximum_scalar", "_minimum_scalar"):
        x = away_from(x, [s])
    return x


@pytest.mark.parametrize("name", sorted(SCALAR))
@pytest.mark.parametrize("s", SCALARS)
def test_forward(name: str, s: float) -> None:
    if name == "_rpower_scalar" and s < 0:
        pytest.skip("negative base")
    x = _x(name, (3, 4))
    if SCALAR[name][2] is False:
        x[0, :2] = s  # ties for comparisons
    check_forward(name, [x], {"scalar": s}, SCALAR[name][0](x, s), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(n for n in SCALAR if SCALAR[n][2]))
def test_gradient(name: str) -> None:
    s = 1.7
    check_gradient(name, [_x(name, (2, 3), seed=1, s=s)], {"scalar": s}, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_req(name: str) -> None:
    check_req(name, [_x(name, seed=2, s=0.3)], {"scalar": 0.3}, req=ALL_REQS)


@pytest.mark.parametrize("name", sorted(n for n in SCALAR if not SCALAR[n][2]))
def test_comparison_gradient_is_zero(name: str) -> None:
    g = run_backward(name, [_x(name)], {"scalar": 0.1})
    np.testing.assert_array_equal(g[0], 0)


def test_scalar_is_cast_to_integer_dtype() -> None:
    x = np.array([1, 2, -7], dtype=np.int32)
    np.testing.assert_array_equal(run_forward("_plus_scalar", [x], {"scalar": 2.7})[0], [3, 4, -5])
    np.testing.assert_array_equal(run_forward("_mul_scalar", [x], {"scalar": 2.7})[0], [2, 4, -14])
    out = run_forward("_div_scalar", [x], {"scalar": 2})[0]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [0, 1, -3])


def test_mod_by_zero_is_zero() -> None:
    x = np.array([3.0, -4.0, 0.0])
    np.testing.assert_array_equal(run_forward("_mod_scalar", [x], {"scalar": 0})[0], 0)
    np.testing.assert_array_equal(run_forward("_rmod_scalar", [x], {"scalar": 5})[0], [2, -3, 0])


def test_scalar_param_errors() -> None:
    param_error("_plus_scalar", {"scalar": "abc"}, "scalar", "abc")
    param_error("_mul_scalar", {"scalr": 1}, "scalr")


# -- clip ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (0.0, 3.0), (-3.0, -1.0)])
def test_clip(bounds: tuple) -> None:
    kw = {"a_min": bounds[0], "a_max": bounds[1]}
    x = away_from(rand((3, 4), -2, 2), list(bounds))
    check_forward("clip", [x], kw, np.clip(x, *bounds), rtol=0, atol=0)
    check_gradient("clip", [x], kw)
    check_req("clip", [x], kw, req=ALL_REQS)


def test_clip_mxnet_strings_and_errors() -> None:
    x = np.array([1.0, 5.0, 9.0])
    check_forward("clip", [x], {"a_min": "2", "a_max": "6"}, np.array([2.0, 5.0, 6.0]))
    param_error("clip", {"a_min": 1.0}, "a_max")
    param_error("clip", {"a_min": "low", "a_max": 1.0}, "a_min", "low")
    # a_min > a_max: MXNet 1.9.1 accepts it and tests x > a_max first ([0, 1, 2, 3] -> [2, 2, 1, 1])
    check_forward("clip", [np.array([0.0, 1.0, 2.0, 3.0])], {"a_min": 2.0, "a_max": 1.0}, np.array([2.0, 2.0, 1.0, 1.0]))
    param_error("clip", {"a_min": 0.0, "a_max": 1.0, "scalar": 3}, "scalar")


# -- smooth_l1 ---------------------------------------------------------------------------------------------

def _smooth_l1(x: np.ndarray, sigma: float) -> np.ndarray:
    s2 = sigma * sigma
    return np.where(x > 1 / s2, x - 0.5 / s2, np.where(x < -1 / s2, -x - 0.5 / s2, 0.5 * x * x * s2))


@pytest.mark.parametrize("sigma", [1.0, 1.5, 3.0])
def test_smooth_l1(sigma: float) -> None:
    x = away_from(rand((3, 5), -2, 2), [1 / sigma ** 2, -1 / sigma ** 2])
    check_forward("smooth_l1", [x], {"scalar": sigma}, _smooth_l1(x, sigma), rtol=1e-12, atol=1e-12)
    check_gradient("smooth_l1", [x], {"scalar": sigma})
    check_req("smooth_l1", [x], {"scalar": sigma}, req=ALL_REQS)


def test_smooth_l1_matches_mxnet_values() -> None:
    # values printed by Apache MXNet 1.9.1: mx.nd.smooth_l1(x, scalar=1.5)
    x = np.array([-2, -0.3, 0.1, 0.5, 3], dtype=np.float32)
    check_forward("smooth_l1", [x], {"scalar": 1.5},
                  np.array([1.7777778, 0.10125001, 0.01125, 0.2777778, 2.7777777]),
                  rtol=1e-6)


def test_smooth_l1_registration_follows_the_seeds() -> None:
    from plexnet.operator.simple_op import SimpleOpInplaceOption as IO
    op = simple_op("smooth_l1")
    assert op.enable_scalar and op.grad_kind == "in_data"
    assert op.inplace == IO.kNoInplace and op.grad_inplace == IO.kInplaceOutIn


# -- the NDArray fast path ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,args", [("broadcast_add", 2), ("broadcast_mul", 2), ("broadcast_sub", 2),
                                       ("broadcast_div", 2), ("elemwise_add", 2), ("_plus_scalar", 1),
                                       ("_mul_scalar", 1), ("exp", 1), ("negative", 1), ("sqrt", 1)])
def test_fast_path_writes_into_ret_without_temporaries(name: str, args: int) -> None:
    op = simple_op(name)
    n = 1 << 18
    ins = [rand((n,), 0.5, 1.5, seed=i).astype(np.float32) for i in range(args)]
    ret = np.empty(n, dtype=np.float32)
    env = EnvArguments(2.0)
    rc = run_context()
    op.function(*ins, env, ret, OpReqType.write, rc)  # warm up
    tracemalloc.start()
    try:
        op.function(*ins, env, ret, OpReqType.write, rc)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n, f"{name}: write path allocated {peak} bytes"


def test_fast_path_add_and_null_and_broadcast() -> None:
    op = simple_op("broadcast_add")
    rc = run_context()
    l, r = rand((2, 3)), rand((3,), seed=1)
    ret = np.ones((2, 3))
    op.function(l, r, EnvArguments(), ret, OpReqType.add, rc)
    np.testing.assert_allclose(ret, 1 + l + r)
    op.function(l, r, EnvArguments(), ret, OpReqType.null, rc)
    np.testing.assert_allclose(ret, 1 + l + r)
    op.function(l, r, EnvArguments(), ret, OpReqType.write, rc)
    np.testing.assert_allclose(ret, l + r)
    # in place: ret is lhs (NDArray `a += b`)
    a = l.copy()
    op.function(a, r, EnvArguments(), a, OpReqType.write, rc)
    np.testing.assert_allclose(a, l + r)
    # plain ints work too (the NDArray may pass req as int)
    op.function(l, r, EnvArguments(), ret, 3, rc)
    np.testing.assert_allclose(ret, 2 * (l + r))
