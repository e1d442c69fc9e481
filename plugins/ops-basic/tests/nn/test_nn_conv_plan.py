"""The per-shape caches behind the small-call fast paths of Convolution, Pooling and
BatchNorm: one operator object serves every call with the same parameters, so what it
caches must be keyed by everything that changes between calls (shape, dtype)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nnref import ref_conv, ref_pool

import plexnet as mx
from plexnet.operator import OpContext, OpReqType
from plexnet.testing.opcheck import make_prop
from plexnet.resource import ResourceRequest
from plexnet_ops_basic.nn import _convcore
from plexnet_ops_basic.nn._convcore import ConvGeom, conv_backward, conv_forward
from plexnet_ops_basic.nn.batch_norm import BatchNormOp, BatchNormParam
from plexnet_ops_basic.nn.convolution import ConvolutionOp, ConvolutionParam, ConvolutionProp

W = OpReqType.write


class _RC:
    xp = np


def _ctx(train=False):
    return OpContext(train, _RC(), [])


def test_one_operator_many_shapes_and_dtypes():
    """Alternating shapes and dtypes through one ConvolutionOp (its chunk plans, view
    strides and geometries are cached per shape / item size) gives the reference each time."""
    op = ConvolutionOp(ConvolutionParam.parse("Convolution", dict(kernel=(3, 3), num_filter=3, pad=(1, 1))))
    rng = np.random.default_rng(0)
    cases = [((1, 2, 6, 6), np.float32), ((3, 2, 5, 7), np.float64), ((1, 2, 6, 6), np.float64),
             ((2, 2, 9, 4), np.float32), ((3, 2, 5, 7), np.float32)]
    for _ in range(2):
        for shape, dt in cases:
            x = rng.standard_normal(shape).astype(dt)
            w = rng.standard_normal((3, 2, 3, 3)).astype(dt)
            b = rng.standard_normal(3).astype(dt)
            want = ref_conv(x, w, b, pad=(1, 1))
            y = np.empty(want.shape, dt)
            op.forward(_ctx(), [x, w, b], [W], [y], [])
            np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


def test_nd_calls_with_changing_shapes():
    """The same through nd (one cached operator for the parameters)."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((2, 1, 3, 3)).astype(np.float32)
    for shape in [(1, 1, 6, 6), (2, 1, 8, 5), (1, 1, 6, 6), (4, 1, 7, 7)]:
        x = rng.standard_normal(shape).astype(np.float32)
        got = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), kernel=(3, 3), num_filter=2, no_bias=True)
        np.testing.assert_allclose(got.asnumpy(), ref_conv(x, w), rtol=1e-4, atol=1e-5)


def _geom(N, C, F, G, sp, k, s, d, p):
    return ConvGeom(N, C, F, G, sp, k, s, d, p)


@settings(max_examples=30, deadline=None)
@given(N=st.integers(1, 3), Cg=st.integers(1, 3), G=st.integers(1, 2), H=st.integers(3, 8), Wd=st.integers(3, 8),
       k=st.integers(1, 3), s=st.integers(1, 2), d=st.integers(1, 2), p=st.integers(0, 1), csn=st.booleans())
def test_col2im_bincount_matches_slice_adds(N, Cg, G, H, Wd, k, s, d, p, csn):
    """The bincount col2im (small problems) equals the slice additions, in every layout
    (flat, strided, csn)."""
    if (H + 2 * p) < d * (k - 1) + 1 or (Wd + 2 * p) < d * (k - 1) + 1:
        return
    old = _convcore.CSN_MIN_ROWS
    try:
        _convcore.CSN_MIN_ROWS = 1 if csn else 10 ** 9
        g = _geom(N, Cg * G, 2 * G, G, (H, Wd), (k, k), (s, s), (d, d), (p, p))
    finally:
        _convcore.CSN_MIN_ROWS = old
    rng = np.random.default_rng(N * 1000 + H * 10 + Wd)
    dcols = rng.standard_normal((g.CK, g.N * g.ncols))
    a = g.col2im(np, dcols, np.full(g.dx_shape, np.nan))
    old_small = _convcore.SMALL_COL2IM
    try:
        _convcore.SMALL_COL2IM = -1  # the slice additions
        b = g.col2im(np, dcols, np.full(g.dx_shape, np.nan))
    finally:
        _convcore.SMALL_COL2IM = old_small
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("small", [True, False])
def test_backward_both_col2im_paths(small, monkeypatch):
    """conv_backward's data gradient against the adjoint identity <conv(x), dy> = <x, dx>."""
    monkeypatch.setattr(_convcore, "SMALL_COL2IM", 1 << 30 if small else -1)
    rng = np.random.default_rng(2)
    g = _geom(2, 3, 4, 1, (7, 6), (3, 2), (2, 1), (1, 1), (1, 0))
    x = rng.standard_normal(g.in_shape)
    w = rng.standard_normal((4, 3, 3, 2))
    dy = rng.standard_normal(g.out_shape)
    y = np.empty(g.out_shape)
    conv_forward(np, g, x, w, None, y, W)
    dx = np.empty_like(x)
    conv_backward(np, g, x, w, dy, dx, W, None, OpReqType.null, None, OpReqType.null)
    np.testing.assert_allclose((y * dy).sum(), (x * dx).sum(), rtol=1e-10)


def test_strided_views_fall_back_for_non_contiguous():
    """``strided`` of a non-contiguous array takes as_strided (same view)."""
    a = np.arange(24.0).reshape(4, 6)[:, ::2]
    v = _convcore.strided(np, a, (2, 2), a.strides)
    np.testing.assert_array_equal(v, a[:2, :2])
    c = np.arange(12.0)
    np.testing.assert_array_equal(_convcore.strided(np, c, (3, 2), (32, 8)), c.reshape(3, 4)[:, :2])
    with pytest.raises((TypeError, ValueError)):  # the constructor checks the bounds
        _convcore.strided(np, c, (3, 2), (48, 8))


def test_temp_space_only_for_large_convolutions():
    prop = make_prop("Convolution", dict(kernel=(3, 3), num_filter=2))
    assert isinstance(prop, ConvolutionProp)
    assert prop.forward_resource([(1, 1, 6, 6), (2, 1, 3, 3), (2,)]) == []
    assert prop.backward_resource([(1, 1, 6, 6), (2, 1, 3, 3), (2,)]) == []
    big = [(64, 1, 28, 28), (2, 1, 3, 3), (2,)]
    assert prop.forward_resource(big) == [ResourceRequest(ResourceRequest.kTempSpace)]
    assert prop.backward_resource(big) == [ResourceRequest(ResourceRequest.kTempSpace)]
    assert prop.forward_resource([None, None, None]) == [ResourceRequest(ResourceRequest.kTempSpace)]


def test_pooling_through_nd_with_changing_shapes():
    rng = np.random.default_rng(3)
    for shape in [(1, 2, 6, 6), (2, 3, 5, 7), (1, 2, 6, 6)]:
        x = rng.standard_normal(shape).astype(np.float32)
        got = mx.nd.Pooling(mx.nd.array(x), kernel=(2, 2), stride=(2, 2), pad=(1, 1), pool_type="max")
        np.testing.assert_allclose(got.asnumpy(), ref_pool(x, (2, 2), (2, 2), (1, 1), "max"), rtol=1e-6)


def test_batchnorm_one_operator_many_shapes():
    """BatchNormOp caches its axes per shape: alternating shapes (and axis counts) stay right."""
    op = BatchNormOp(BatchNormParam.parse("BatchNorm", dict(fix_gamma=False, eps=1e-5)))
    rng = np.random.default_rng(4)
    for shape in [(4, 3, 5, 5), (6, 3), (4, 3, 5, 5), (2, 3, 4)]:
        x = rng.standard_normal(shape).astype(np.float32)
        gamma, beta = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
        mm, mv = np.zeros(3, np.float32), np.ones(3, np.float32)
        y, m, v = np.empty_like(x), np.empty(3, np.float32), np.empty(3, np.float32)
        op.forward(_ctx(True), [x, gamma, beta], [W] * 3, [y, m, v], [mm, mv])
        axes = tuple(i for i in range(x.ndim) if i != 1)
        bs = (1, 3) + (1,) * (x.ndim - 2)
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        want = (x - mean.reshape(bs)) / np.sqrt(var.reshape(bs) + 1e-5) * gamma.reshape(bs) + beta.reshape(bs)
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(m, mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(mm, 0)   # the moving statistics move in backward (MXNet's CPU op)
        dx, dg, db = np.empty_like(x), np.empty(3, np.float32), np.empty(3, np.float32)
        op.backward(_ctx(True), [np.ones_like(x)], [x, gamma, beta], [y, m, v], [W] * 3, [dx, dg, db], [mm, mv])
        np.testing.assert_allclose(mm, 0.1 * mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(mv, 0.9 + 0.1 * var, rtol=1e-4, atol=1e-5)
