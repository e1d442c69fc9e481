"""``sum`` / ``mean`` / ``norm`` in MXNet 1.9.1's summation order (sequential, Kahan-compensated, the
compensation reset at infinity), bit for bit against values recorded there
(``tests/fixtures/make_mxnet_sum_order_fixtures.py``; docs/porting.md, "Bit-for-bit
comparisons"). Reductions of up to 64 elements take ops-basic's numpy loop; longer ones
plexnet-ops-numba's compiled loop (without numba they keep numpy's pairwise sum)."""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

import plexnet as mx

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
sys.path.insert(0, FIXTURES)
import make_mxnet_sum_order_fixtures as gen  # noqa: E402  (the case table; MXNet only in main())



def _numba_runs() -> bool:
    """plexnet-ops-numba is installed and its probe says yes (not PLEXNET_NUMBA_DISABLE)."""
    if importlib.util.find_spec("plexnet_ops_numba") is None:
        return False
    from plexnet_ops_numba import _base
    return bool(_base.available())


HAS_NUMBA = _numba_runs()


@pytest.fixture(scope="module")
def ref() -> dict:
    with np.load(os.path.join(FIXTURES, "sum_order", "mxnet_sum_order.npz")) as d:
        return {k: d[k] for k in d.files}


@pytest.mark.parametrize("name", sorted(gen.CASES))
def test_sum_and_mean_are_mxnets(ref: dict, name: str) -> None:
    shape, axis, dt = gen.CASES[name]
    x = ref["in_" + name]
    K = int(np.prod(shape)) if axis is None else int(np.prod([shape[a] for a in np.atleast_1d(axis)]))
    if K > 64 and not HAS_NUMBA:
        pytest.skip("reductions longer than 64 elements need plexnet-ops-numba for MXNet's order")
    a = mx.nd.array(x, dtype=dt)
    s = mx.nd.sum(a) if axis is None else mx.nd.sum(a, axis=axis)
    m = mx.nd.mean(a) if axis is None else mx.nd.mean(a, axis=axis)
    np.testing.assert_array_equal(s.asnumpy(), ref["sum_" + name])
    np.testing.assert_array_equal(m.asnumpy(), ref["mean_" + name])
    assert s.dtype == np.dtype(dt)
    kw = {} if axis is None else {"axis": axis}
    np.testing.assert_array_equal(mx.nd.norm(a, **kw).asnumpy(), ref["norm2_" + name])     # scaled nrm2
    np.testing.assert_array_equal(mx.nd.norm(a, ord=1, **kw).asnumpy(), ref["norm1_" + name])


def test_infinities_and_signed_zeros_are_mxnets(ref: dict) -> None:
    for i in range(len(gen.SPECIAL)):
        got = mx.nd.sum(mx.nd.array(ref["in_special%d" % i])).asnumpy()
        np.testing.assert_array_equal(got, ref["sum_special%d" % i])
        np.testing.assert_array_equal(mx.nd.norm(mx.nd.array(ref["in_special%d" % i])).asnumpy(),
                                      ref["norm2_special%d" % i])
        if got[0] == 0:
            assert not np.signbit(got[0])        # 0 + (-0.0) is +0.0 in MXNet's loop


def test_short_reductions_take_the_numpy_loop_and_keep_gradients() -> None:
    from plexnet_ops_basic.tensor import _kahan
    x = np.random.RandomState(1).randn(5, 7).astype(np.float32)
    rows = _kahan.as_rows(x, (1,))
    assert rows.shape == (7, 5)
    assert _kahan.mxnet_sum(np, x, (1,), False).shape == (5,)
    assert _kahan.mxnet_sum(np, x.astype(np.int32), (1,), False) is None     # integers: numpy's sum
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.mean(a, axis=1)
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), np.full((5, 7), 1 / 7, np.float32))
    # keepdims / exclude / sum_axis alias go through the same order
    k = mx.nd.sum(a, axis=0, keepdims=True).asnumpy()
    assert k.shape == (1, 7)
    np.testing.assert_array_equal(mx.nd.sum_axis(a, axis=1).asnumpy(), mx.nd.sum(a, axis=1).asnumpy())
    np.testing.assert_array_equal(mx.nd.sum(a, axis=1, exclude=True).asnumpy(), k.reshape(7))


def _equal_outputs(ref: dict, name: str, y: mx.nd.NDArray, mean: mx.nd.NDArray, std: mx.nd.NDArray) -> None:
    """A normalization's output, mean and std equal MXNet's recorded ones bit for bit."""
    for key, got in (("out_", y), ("mean_", mean), ("std_", std)):
        np.testing.assert_array_equal(got.asnumpy(), ref[key + name])


@pytest.mark.parametrize("name", sorted(gen.LAYER_NORM))
def test_layer_norm_last_axis_is_mxnets(ref: dict, name: str) -> None:
    # MXNet's LayerNormCPUKernel: sequential sums, two-pass variance, ((x - mean) * g) / std + b
    _, eps = gen.LAYER_NORM[name]
    y, mean, std = mx.nd.LayerNorm(mx.nd.array(ref["in_" + name]), mx.nd.array(ref["gamma_" + name]),
                                   mx.nd.array(ref["beta_" + name]), eps=eps, output_mean_var=True)
    _equal_outputs(ref, name, y, mean, std)


@pytest.mark.parametrize("name", sorted(gen.L2_NORMALIZATION))
def test_l2_normalization_is_mxnets(ref: dict, name: str) -> None:
    _, mode = gen.L2_NORMALIZATION[name]
    got = mx.nd.L2Normalization(mx.nd.array(ref["in_" + name]), mode=mode).asnumpy()
    np.testing.assert_array_equal(got, ref["out_" + name])


@pytest.mark.parametrize("name", sorted(gen.INSTANCE_NORM))
def test_instance_norm_is_mxnets(ref: dict, name: str) -> None:
    # sequential sums scaled by a float32 1/n, two-pass variance, ((x - mean) * g) / sqrt(var + eps) + b
    got = mx.nd.InstanceNorm(mx.nd.array(ref["in_" + name]), mx.nd.array(ref["gamma_" + name]),
                             mx.nd.array(ref["beta_" + name])).asnumpy()
    np.testing.assert_array_equal(got, ref["out_" + name])


@pytest.mark.parametrize("name", sorted(gen.GROUP_NORM))
def test_group_norm_is_mxnets(ref: dict, name: str) -> None:
    # sums accumulated in double and rounded once, / n in float32, ((x - mean) / std) * g + b
    _, groups = gen.GROUP_NORM[name]
    y, mean, std = mx.nd.GroupNorm(mx.nd.array(ref["in_" + name]), mx.nd.array(ref["gamma_" + name]),
                                   mx.nd.array(ref["beta_" + name]), num_groups=groups, output_mean_var=True)
    _equal_outputs(ref, name, y, mean, std)


@pytest.mark.parametrize("name", ["nansum_short", "nansum_long"])
def test_nansum_is_mxnets(ref: dict, name: str) -> None:
    if name == "nansum_long" and not HAS_NUMBA:
        pytest.skip("reductions longer than 64 elements need plexnet-ops-numba for MXNet's order")
    got = mx.nd.nansum(mx.nd.array(ref["in_" + name]), axis=1).asnumpy()
    np.testing.assert_array_equal(got, ref["out_" + name])
    # MXNet's nansum([inf, 1]) is NaN (no reset at infinity, a kernel bug); plexnet keeps inf
    assert mx.nd.nansum(mx.nd.array([np.inf, 1.0, np.nan])).asnumpy()[0] == np.inf
