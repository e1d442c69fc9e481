"""1x1 convolutions as plain GEMMs (``_pointwise``): the same values and gradients as
the im2col path (``conv_forward`` / ``conv_backward`` on a ``ConvGeom``) for every
stride, dimension count, bias, req and batch folding, and the reference convolution."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nnref import ref_conv

from opcheck import check_gradient, random_args
from plexnet.operator import OpContext, OpReqType
from plexnet_ops_basic.nn import _pointwise
from plexnet_ops_basic.nn._convcore import ConvGeom, conv_backward, conv_forward
from plexnet_ops_basic.nn.convolution import ConvolutionOp, ConvolutionParam

W, A, NULL = OpReqType.write, OpReqType.add, OpReqType.null


class _RC:
    xp = np


def _op(nd, F, stride, bias):
    kw = dict(kernel=(1,) * nd, num_filter=F, stride=stride, no_bias=not bias)
    return ConvolutionOp(ConvolutionParam.parse("Convolution", kw))


def _general(x, w, b, stride):
    """The im2col path's forward and gradients for an all-ones upstream gradient."""
    nd = x.ndim - 2
    g = ConvGeom(x.shape[0], x.shape[1], w.shape[0], 1, x.shape[2:], (1,) * nd, stride, (1,) * nd, (0,) * nd)
    y = np.empty(g.out_shape, x.dtype)
    conv_forward(np, g, x, w, b, y, W)
    dy = np.random.default_rng(7).standard_normal(y.shape).astype(x.dtype)
    dx, dw = np.empty_like(x), np.empty_like(w)
    conv_backward(np, g, x, w, dy, dx, W, dw, W, None, NULL)
    return y, dy, dx, dw


@settings(max_examples=40, deadline=None)
@given(nd=st.integers(1, 3), n=st.integers(1, 3), c=st.integers(1, 5), f=st.integers(1, 5),
       size=st.integers(1, 9), stride=st.integers(1, 3), bias=st.booleans(), fold=st.booleans())
def test_equals_im2col_path(nd, n, c, f, size, stride, bias, fold):
    rng = np.random.default_rng(nd * 1000 + n * 100 + c * 10 + f)
    x = rng.standard_normal((n, c) + (size,) * nd)
    w = rng.standard_normal((f, c) + (1,) * nd)
    b = rng.standard_normal(f) if bias else None
    st_ = (stride,) * nd
    y0, dy, dx0, dw0 = _general(x, w, b, st_)
    old = _pointwise.FOLD_BELOW
    _pointwise.FOLD_BELOW = 10 ** 9 if fold else 0   # both layouts, whatever the size
    try:
        op = _op(nd, f, st_, bias)
        args = [x, w] + ([b] if bias else [])
        y = np.empty_like(y0)
        op.forward(OpContext(True, _RC(), []), args, [W], [y], [])
        np.testing.assert_allclose(y, y0, rtol=1e-12, atol=1e-12)
        dx, dw = np.full_like(x, np.nan), np.full_like(w, np.nan)
        grads = [dx, dw] + ([np.empty(f)] if bias else [])
        op.backward(OpContext(True, _RC(), []), [dy], args, [y], [W] * len(args), grads, [])
        np.testing.assert_allclose(dx, dx0, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(dw, dw0, rtol=1e-12, atol=1e-12)
        if bias:
            np.testing.assert_allclose(grads[2], dy.sum(axis=tuple(i for i in range(dy.ndim) if i != 1)))
    finally:
        _pointwise.FOLD_BELOW = old


@pytest.mark.parametrize("fold", [False, True])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2)])
def test_add_and_null_reqs(fold, stride, monkeypatch):
    monkeypatch.setattr(_pointwise, "FOLD_BELOW", 10 ** 9 if fold else 0)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 5))
    w = rng.standard_normal((4, 3, 1, 1))
    b = rng.standard_normal(4)
    y0, dy, dx0, dw0 = _general(x, w, b, stride)
    op = _op(2, 4, stride, True)
    ctx = OpContext(True, _RC(), [])
    y = np.ones_like(y0)
    op.forward(ctx, [x, w, b], [A], [y], [])
    np.testing.assert_allclose(y, y0 + 1, rtol=1e-12)
    dx, dw, db = np.ones_like(x), np.ones_like(w), np.ones(4)
    op.backward(ctx, [dy], [x, w, b], [y0], [A, A, A], [dx, dw, db], [])
    np.testing.assert_allclose(dx, dx0 + 1, rtol=1e-12)
    np.testing.assert_allclose(dw, dw0 + 1, rtol=1e-12)
    # null: nothing written (the data gradient may be absent)
    dw2 = np.full_like(w, 5.0)
    op.backward(ctx, [dy], [x, w, b], [y0], [NULL, W, NULL], [None, dw2, None], [])
    np.testing.assert_allclose(dw2, dw0, rtol=1e-12)


def test_reference_and_numeric_gradient():
    kw = dict(kernel=(1, 1), num_filter=3, stride=(2, 1), no_bias=False)
    a = random_args("Convolution", kw, data=(2, 4, 5, 4))
    x, w, b = a["data"], a["weight"], a["bias"]
    y = np.empty((2, 3, 3, 4))
    _op(2, 3, (2, 1), True).forward(OpContext(False, _RC(), []), [x, w, b], [W], [y], [])
    np.testing.assert_allclose(y, ref_conv(x, w, b, stride=(2, 1)), rtol=1e-10)
    check_gradient("Convolution", a, kw)


def test_padded_or_grouped_1x1_take_the_general_path():
    x = np.zeros((1, 4, 3, 3))
    assert _pointwise.eligible(ConvolutionParam.parse("Convolution", dict(kernel=(1, 1), num_filter=2)), x)
    for kw in (dict(kernel=(1, 1), num_filter=2, pad=(1, 1)), dict(kernel=(1, 1), num_filter=2, num_group=2),
               dict(kernel=(1, 3), num_filter=2)):
        assert not _pointwise.eligible(ConvolutionParam.parse("Convolution", kw), x)
    # an output that is not C-contiguous would make the (N, C, P) reshape a copy
    p = ConvolutionParam.parse("Convolution", dict(kernel=(1, 1), num_filter=2))
    assert not _pointwise.eligible(p, x, np.zeros((1, 2, 3, 6))[..., ::2])


@pytest.mark.parametrize("shape", [(0, 4, 8, 8), (0, 4, 3, 3), (2, 4, 0, 5)])
def test_zero_size_arrays(shape):
    """Zero-size data (numpy shape semantics): empty outputs and a zero weight gradient."""
    op = _op(2, 2, (1, 1), False)
    ctx = OpContext(True, _RC(), [])
    x, w = np.zeros(shape), np.ones((2, 4, 1, 1))
    y = np.empty((shape[0], 2) + shape[2:])
    op.forward(ctx, [x, w], [W], [y], [])
    dx, dw = np.empty_like(x), np.full_like(w, np.nan)
    op.backward(ctx, [np.ones_like(y)], [x, w], [y], [W, W], [dx, dw], [])
    np.testing.assert_array_equal(dw, 0)
