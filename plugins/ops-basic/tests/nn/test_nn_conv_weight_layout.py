"""The weight gradient of Convolution in both GEMM orientations: ``(cols @ dy^T)^T`` where a
filter has fewer weights than the GEMM has columns (LeNet, ResNet's first stages), ``dy @
cols^T`` straight into the gradient's layout where it has more (ResNet's deep stages), so
no transposed copy of the gradient is made. Both equal the direct sums, every req."""
import numpy as np
import pytest

from plexnet.operator import OpReqType
from plexnet_ops_basic.nn._convcore import ConvGeom, conv_backward


def _ref_dw(x, dy, k, pad):
    """float64 direct weight gradient of a stride-1 convolution."""
    n, c, h, w = x.shape
    f, ho, wo = dy.shape[1], dy.shape[2], dy.shape[3]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dw = np.zeros((f, c, k, k))
    for i in range(k):
        for j in range(k):
            dw[:, :, i, j] = np.einsum("nfhw,nchw->fc", dy.astype(np.float64), xp[:, :, i:i + ho, j:j + wo])
    return dw


@pytest.mark.parametrize("shape,f", [((2, 64, 4, 4), 16),      # 32 columns < 576 weights: dy @ cols^T
                                     ((2, 3, 9, 9), 4)])       # 162 columns > 27 weights: (cols @ dy^T)^T
@pytest.mark.parametrize("req", [OpReqType.write, OpReqType.add])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weight_gradient_both_orientations(shape, f, req, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    n, c, h, w = shape
    g = ConvGeom(n, c, f, 1, (h, w), (3, 3), (1, 1), (1, 1), (1, 1))
    dy = rng.standard_normal((n, f, h, w)).astype(dtype)
    start = rng.standard_normal((f, c, 3, 3)).astype(dtype)
    dw = start.copy()
    conv_backward(np, g, x, None, dy, None, OpReqType.null, dw, req, None, OpReqType.null)
    want = _ref_dw(x, dy, 3, 1) + (start if req == OpReqType.add else 0)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(dw, want, rtol=tol, atol=tol)


def test_strided_gradient_array_takes_the_copy_path():
    """A weight gradient that is not one contiguous block (a view) is still written in place."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 64, 4, 4)).astype(np.float32)
    dy = rng.standard_normal((2, 16, 4, 4)).astype(np.float32)
    g = ConvGeom(2, 64, 16, 1, (4, 4), (3, 3), (1, 1), (1, 1), (1, 1))
    big = np.zeros((16, 128, 3, 3), np.float32)
    dw = big[:, ::2]
    conv_backward(np, g, x, None, dy, None, OpReqType.null, dw, OpReqType.write, None, OpReqType.null)
    np.testing.assert_allclose(big[:, ::2], _ref_dw(x, dy, 3, 1), rtol=1e-4, atol=1e-4)
    assert not big[:, 1::2].any()
