"""BatchNorm's numba training passes against ops-basic's numpy operator: outputs, batch
statistics, the moving statistics' update, the three gradients, every req, fix_gamma,
aliasing (inplace), NaN spreading, two threads over the channels, and the cases left to
ops-basic."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from _numba_harness import force_split, prop, record_kernel_calls
from plexnet.engine.runctx import run_context
from plexnet.operator import OpContext, OpReqType
import plexnet
from plexnet_ops_basic.nn.batch_norm import BatchNormOp
from plexnet_ops_numba import _base
from plexnet_ops_numba.batch_norm import NumbaBatchNormOp

pytestmark = pytest.mark.timeout(180)
W, A, N_ = OpReqType.write, OpReqType.add, OpReqType.null
TOL = dict(rtol=2e-5, atol=2e-5)


@pytest.fixture(autouse=True)
def small_arrays(monkeypatch):
    monkeypatch.setattr(_base, "MIN_ELEMENTS", 0)


@pytest.fixture
def kernel_calls(monkeypatch):
    """Names of the numba kernels that run."""
    return record_kernel_calls(monkeypatch, "_bnkern", ("channel_stats", "normalize", "gradient_sums", "data_gradient"))


def _ctx(train=True):
    return OpContext(train, run_context(plexnet.cpu(), "test"), [])


def run(op, x, gamma, beta, dy, *, train=True, reqs=(W, W, W), fwd_reqs=(W, W, W), start=None, dtype=np.float32,
        inplace_dx=False):
    C = x.shape[1]
    mm, mv = np.full(C, 0.5, dtype), np.full(C, 2.0, dtype)
    outs = [np.zeros(x.shape, dtype), np.zeros(C, dtype), np.zeros(C, dtype)] if start is None else \
        [a.copy() for a in start[:3]]
    op.forward(_ctx(train), [x.copy(order="K"), gamma.copy(), beta.copy()], list(fwd_reqs), outs, [mm, mv])
    g = [np.ones(x.shape, dtype), np.ones(C, dtype), np.ones(C, dtype)]
    dyc = dy.copy()
    if inplace_dx:
        g[0] = dyc
    op.backward(_ctx(train), [dyc], [x.copy(order="K"), gamma.copy(), beta.copy()], outs, list(reqs), g, [mm, mv])
    return outs + [mm, mv] + g


def pair(**kw):
    pr = prop("BatchNorm", kw)
    return BatchNormOp(pr.param), NumbaBatchNormOp(pr)


def data(shape, seed=0, loc=0.0):
    rng = np.random.default_rng(seed)
    C = shape[1]
    return (rng.standard_normal(shape).astype(np.float32) * 3 + loc, rng.uniform(0.5, 2, C).astype(np.float32),
            rng.standard_normal(C).astype(np.float32), rng.standard_normal(shape).astype(np.float32))


NAMES = ["out", "mean", "invstd", "moving_mean", "moving_var", "dx", "dgamma", "dbeta"]


def compare(a, b, what=""):
    for name, u, v in zip(NAMES, a, b):
        s = max(1.0, float(np.abs(u).max()))
        np.testing.assert_allclose(v / s, u / s, **TOL, err_msg=f"{what} {name}")


@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (8, 16), (3, 4, 7), (2, 5, 3, 2, 2), (1, 2, 1, 1)])
@pytest.mark.parametrize("fix_gamma", [True, False])
def test_matches_numpy(kernel_calls, shape, fix_gamma):
    ref, nb = pair(fix_gamma=fix_gamma, eps=1e-5, momentum=0.9)
    x, gamma, beta, dy = data(shape)
    compare(run(ref, x, gamma, beta, dy), run(nb, x, gamma, beta, dy), f"{shape} {fix_gamma}")
    assert kernel_calls == ["channel_stats", "normalize", "gradient_sums", "data_gradient"]


@pytest.mark.parametrize("reqs", [(A, A, A), (N_, W, A), (W, N_, N_), (N_, N_, W)])
def test_backward_reqs(reqs):
    ref, nb = pair(fix_gamma=False)
    x, gamma, beta, dy = data((3, 4, 5, 5))
    compare(run(ref, x, gamma, beta, dy, reqs=reqs), run(nb, x, gamma, beta, dy, reqs=reqs), str(reqs))


def test_inplace_data_gradient_over_the_output_gradient():
    ref, nb = pair(fix_gamma=False)
    x, gamma, beta, dy = data((3, 4, 5, 5))
    compare(run(ref, x, gamma, beta, dy), run(nb, x, gamma, beta, dy, inplace_dx=True))


def test_data_far_from_zero_keeps_its_variance():
    """The sums are shifted by a value of the channel: no cancellation at mean 1e4."""
    ref, nb = pair(fix_gamma=False, eps=1e-5)
    x, gamma, beta, dy = data((4, 3, 8, 8), loc=1e4)
    a, b = run(ref, x, gamma, beta, dy), run(nb, x, gamma, beta, dy)
    var = x.astype(np.float64).var(axis=(0, 2, 3))
    np.testing.assert_allclose(1 / b[2].astype(np.float64) ** 2 - 1e-5, var, rtol=1e-5)
    np.testing.assert_allclose(b[0].mean(axis=(0, 2, 3)), beta, atol=1e-3)   # normalised output
    assert np.isfinite(a[0]).all() and np.isfinite(b[0]).all()


def test_nan_spreads_to_its_channel_only():
    ref, nb = pair(fix_gamma=False)
    x, gamma, beta, dy = data((2, 3, 4, 4))
    x[1, 2, 0, 0] = np.nan
    a, b = run(ref, x, gamma, beta, dy), run(nb, x, gamma, beta, dy)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(np.isnan(u), np.isnan(v))
    assert np.isnan(b[0][:, 2]).all() and not np.isnan(b[0][:, :2]).any()


def test_two_threads_take_half_the_channels_each(monkeypatch):
    from plexnet_ops_numba import batch_norm
    monkeypatch.setattr(batch_norm, "SPLIT_MIN_ELEMENTS", 0)
    ref, nb = pair(fix_gamma=False)
    x, gamma, beta, dy = data((4, 6, 5, 5))
    one = run(nb, x, gamma, beta, dy)
    shared = force_split(monkeypatch)
    two = run(nb, x, gamma, beta, dy)
    assert shared == [2, 2, 2, 2]
    for u, v in zip(one, two):
        np.testing.assert_array_equal(u, v)   # per channel, the same arithmetic
    compare(run(ref, x, gamma, beta, dy), two)


def test_small_passes_stay_on_one_thread(monkeypatch):
    shared = force_split(monkeypatch)
    nb = pair(fix_gamma=False)[1]
    x, gamma, beta, dy = data((4, 6, 5, 5))
    run(nb, x, gamma, beta, dy)
    assert shared == []


@pytest.mark.parametrize("case", ["inference", "global_stats", "axis_last", "float16", "fwd_add", "noncontig"])
def test_other_cases_run_ops_basic_bit_for_bit(kernel_calls, case):
    kw = dict(fix_gamma=False)
    if case == "global_stats":
        kw["use_global_stats"] = True
    if case == "axis_last":
        kw["axis"] = -1
    ref, nb = pair(**kw)
    x, gamma, beta, dy = data((3, 4, 5, 4))   # channel axis 1 or -1: 4 channels either way
    opts: dict = {}
    if case == "inference":
        opts["train"] = False
    if case == "float16":
        x, gamma, beta, dy = (a.astype(np.float16) for a in (x, gamma, beta, dy))
        opts["dtype"] = np.float16
    if case == "fwd_add":
        opts["fwd_reqs"] = (A, W, W)
    if case == "noncontig":
        x = np.asfortranarray(x)
    a, b = run(ref, x, gamma, beta, dy, **opts), run(nb, x, gamma, beta, dy, **opts)
    if case == "fwd_add":   # the forward is ops-basic's; the backward (write) takes the kernels
        for u, v in zip(a[:5], b[:5]):
            np.testing.assert_array_equal(u, v)
        compare(a, b)
        assert kernel_calls == ["gradient_sums", "data_gradient"]
        return
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert kernel_calls == []


def test_registered_and_chosen():
    from _numba_harness import default_impl, numba_record
    reg = plexnet.plugins.registries().operators
    numba_record("BatchNorm")
    pr = prop("BatchNorm", dict(fix_gamma=False))
    reg.force_impl("BatchNorm", "cpu", "numba")
    try:
        assert type(pr.create_operator(plexnet.cpu())) is NumbaBatchNormOp
    finally:
        reg.force_impl("BatchNorm", "cpu", None)
    # above ops-basic's (priority 0); ops-torch's (10), when installed, above it
    assert default_impl("BatchNorm") in ("numba", "torch")


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 4), c=st.integers(1, 5), h=st.integers(1, 6), w=st.integers(1, 6), fix=st.booleans(),
       seed=st.integers(0, 1000))
def test_property_equals_float64_batch_norm(n, c, h, w, fix, seed):
    """Any 4-D shape: output and gradients equal the float64 formulas within float32
    rounding (relative to each array's largest magnitude)."""
    _base.MIN_ELEMENTS, old = 0, _base.MIN_ELEMENTS
    try:
        x, gamma, beta, dy = data((n, c, h, w), seed)
        nb = pair(fix_gamma=fix, eps=1e-3)[1]
        out = run(nb, x, gamma, beta, dy)
    finally:
        _base.MIN_ELEMENTS = old
    X, DY = x.astype(np.float64), dy.astype(np.float64)
    g = np.ones(c) if fix else gamma.astype(np.float64)
    mu = X.mean(axis=(0, 2, 3), keepdims=True)
    var = X.var(axis=(0, 2, 3), keepdims=True)
    inv = 1 / np.sqrt(var + 1e-3)
    xhat = (X - mu) * inv
    y = xhat * g[None, :, None, None] + beta[None, :, None, None]
    m = n * h * w
    dbeta = DY.sum(axis=(0, 2, 3))
    dgamma = (DY * xhat).sum(axis=(0, 2, 3))
    k = g[None, :, None, None] * inv
    dx = k * (DY - dbeta[None, :, None, None] / m - xhat * dgamma[None, :, None, None] / m)
    for got, want in ((out[0], y), (out[5], dx), (out[7], dbeta)):
        s = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got / s, want / s, rtol=0, atol=5e-5)
    if not fix:
        s = max(1.0, float(np.abs(dgamma).max()))
        np.testing.assert_allclose(out[6] / s, dgamma / s, rtol=0, atol=5e-5)
