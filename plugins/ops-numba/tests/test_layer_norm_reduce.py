"""The numba LayerNorm (last axis) and sum / mean / norm kernels: bit-equal to ops-basic's
numpy versions of MXNet's CPU order (which tests/operator/test_sum_order_mxnet.py pins
against MXNet 1.9.1)."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet.operator.params import dmlc_float
from plexnet_ops_basic.nn.layer_norm import _last_axis_as_mxnet
from plexnet_ops_basic.tensor import _kahan

pytest.importorskip("numba")


@pytest.mark.parametrize("shape", [(300, 768), (2, 100, 333)])
def test_layer_norm_kernel_equals_the_numpy_order(shape):
    rng = np.random.RandomState(0)
    x = (rng.randn(*shape) * 3 + 1).astype(np.float32)
    g = (rng.rand(shape[-1]) + 0.5).astype(np.float32)
    b = rng.randn(shape[-1]).astype(np.float32)
    y, mean, std = mx.nd.LayerNorm(mx.nd.array(x), mx.nd.array(g), mx.nd.array(b), eps=1e-6, output_mean_var=True)
    yr, mr, sr = _last_axis_as_mxnet(x, g, b, dmlc_float(1e-6))
    np.testing.assert_array_equal(y.asnumpy(), yr)
    np.testing.assert_array_equal(mean.asnumpy().reshape(-1), mr.reshape(-1))
    np.testing.assert_array_equal(std.asnumpy().reshape(-1), sr.reshape(-1))


def test_layer_norm_other_axis_falls_back():
    x = np.random.RandomState(1).randn(70, 1000).astype(np.float32)
    g, b = mx.nd.ones(70), mx.nd.zeros(70)
    y = mx.nd.LayerNorm(mx.nd.array(x), g, b, axis=0).asnumpy()
    np.testing.assert_allclose(y.mean(axis=0), 0, atol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_long_sums_and_norms_equal_the_numpy_loop(axis):
    # the compiled loop (reductions longer than 64) against ops-basic's numpy loop, run on
    # the same rows regardless of length
    x = np.random.RandomState(2).randn(130, 90).astype(np.float32) * 100
    axes = (0, 1) if axis is None else (axis,)
    rows = _kahan.as_rows(x, axes)
    a = mx.nd.array(x)
    s = mx.nd.sum(a) if axis is None else mx.nd.sum(a, axis=axis)
    n2 = mx.nd.norm(a) if axis is None else mx.nd.norm(a, axis=axis)
    n1 = mx.nd.norm(a, ord=1) if axis is None else mx.nd.norm(a, ord=1, axis=axis)
    np.testing.assert_array_equal(s.asnumpy().reshape(-1), _kahan.kahan_rows(rows))
    np.testing.assert_array_equal(n2.asnumpy().reshape(-1), _kahan.nrm2_rows(rows))
    np.testing.assert_array_equal(n1.asnumpy().reshape(-1), _kahan.kahan_rows(np.abs(rows)))
