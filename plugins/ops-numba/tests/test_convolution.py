"""Convolution: ops-basic's algorithm with the numba layout passes gives ops-basic's
results bit for bit (same GEMMs, same order of additions) in the flat and csn layouts,
every req; the other layouts run ops-basic's code."""
from __future__ import annotations

import numpy as np
import pytest

from _numba_harness import assert_same, prop, run_pair
from plexnet_ops_basic.nn import _convcore
from plexnet_ops_basic.nn.convolution import ConvolutionOp
from plexnet_ops_numba import _base, convolution
from plexnet_ops_numba.convolution import NumbaConvGeom, NumbaConvolutionOp

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _slice_col2im(monkeypatch):
    """col2im as slice additions at every size in both (ops-basic does small ones as a
    float64 ``bincount``, which numba leaves to it)."""
    monkeypatch.setattr(_convcore, "SMALL_COL2IM", 0)
    monkeypatch.setattr(convolution, "SMALL_COL2IM", 0)


def pair(kw):
    pr = prop("Convolution", kw)
    return [ConvolutionOp(pr.param), NumbaConvolutionOp(pr)]


CASES = [
    (dict(kernel=(5, 5), num_filter=4), (3, 1, 12, 12)),                         # flat (LeNet conv1)
    (dict(kernel=(3, 3), num_filter=5, pad=(1, 1)), (2, 3, 7, 6)),               # flat, padded
    (dict(kernel=(3,), num_filter=4, pad=(2,)), (3, 2, 11)),                     # flat 1-D
    (dict(kernel=(3, 3), num_filter=6, dilate=(2, 2)), (2, 2, 9, 9)),            # flat, dilated
    (dict(kernel=(5, 5), num_filter=6), (3, 4, 9, 8)),                           # csn (LeNet conv2)
    (dict(kernel=(3, 3), num_filter=6, pad=(1, 2)), (2, 8, 6, 7)),               # csn, padded
    (dict(kernel=(3, 3), num_filter=6, pad=(1, 1), no_bias=True), (2, 8, 6, 6)),
    (dict(kernel=(3, 3), num_filter=8, pad=(1, 1), num_group=2), (2, 16, 5, 5)),  # csn, groups
    (dict(kernel=(7,), num_filter=3), (2, 10, 12)),                              # csn 1-D
    (dict(kernel=(3, 3), num_filter=4, num_group=2, pad=(1, 1)), (2, 4, 6, 6)),  # groups, flat
    (dict(kernel=(3, 3), num_filter=4, stride=(2, 2), pad=(1, 1)), (2, 3, 9, 9)),  # strided (col2im in numba)
    (dict(kernel=(3, 2), num_filter=3, stride=(2, 3), pad=(1, 0), dilate=(2, 1)), (2, 2, 11, 10)),
    (dict(kernel=(1, 1), num_filter=5, stride=(2, 2), no_bias=True), (3, 4, 8, 8)),     # ResNet's shortcut
    (dict(kernel=(3,), num_filter=3, stride=(2,), pad=(1,)), (2, 3, 9)),            # strided 1-D: ops-basic
    (dict(kernel=(2, 2, 2), num_filter=3), (2, 2, 4, 4, 4)),                     # 3-D: ops-basic
]


@pytest.mark.parametrize("kw,shape", CASES)
@pytest.mark.parametrize("req", ["write", "add", "null"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_ops_basic(kw, shape, req, dtype):
    assert_same(run_pair("Convolution", kw, [shape], pair(kw), dtype=dtype, req=req), what=str(kw))


def test_lenet_shapes_take_the_numba_kernels(monkeypatch):
    """LeNet's two convolutions at batch 64 (the production col2im threshold): every numba
    pass runs, and the results equal ops-basic's."""
    monkeypatch.undo()
    calls = []
    K = _base.kernels("_convkern")
    for name in ("col2im_flat", "col2im_rows", "out_to_cols_flat", "cols_to_out_flat", "nchw_to_chwn",
                 "chwn_to_nchw"):
        f = getattr(K, name)
        monkeypatch.setattr(K, name, lambda *a, _f=f, _n=name: calls.append(_n) or _f(*a))
    for kw, shape in ((dict(kernel=(5, 5), num_filter=20), (64, 1, 28, 28)),
                      (dict(kernel=(5, 5), num_filter=50), (64, 20, 12, 12))):
        assert_same(run_pair("Convolution", kw, [shape], pair(kw)), what=str(kw))
    assert set(calls) == {"col2im_flat", "col2im_rows", "out_to_cols_flat", "cols_to_out_flat", "nchw_to_chwn",
                          "chwn_to_nchw"}


def test_strided_col2im_runs_the_kernel(monkeypatch):
    """A stride-2 3x3 convolution's data gradient scatters its columns with
    ``col2im_strided`` (bit-equal to ops-basic's slice additions)."""
    calls = []
    K = _base.kernels("_convkern")
    f = K.col2im_strided
    monkeypatch.setattr(K, "col2im_strided", lambda *a: calls.append(1) or f(*a))
    kw = dict(kernel=(3, 3), num_filter=6, stride=(2, 2), pad=(1, 1), no_bias=True)
    assert_same(run_pair("Convolution", kw, [(4, 5, 10, 11)], pair(kw)), what=str(kw))
    assert calls


def test_geometry_is_numba_and_fallbacks(monkeypatch):
    op = pair(dict(kernel=(3, 3), num_filter=2))[1]
    assert isinstance(op.geom((1, 1, 5, 5)), NumbaConvGeom)
    # float16 and kernels that fail to load: ops-basic's code throughout
    assert_same(run_pair("Convolution", dict(kernel=(3, 3), num_filter=2), [(2, 3, 6, 6)],
                         pair(dict(kernel=(3, 3), num_filter=2)), dtype=np.float16))
    monkeypatch.setattr(_base, "_kernels", {"_convkern": None})
    assert_same(run_pair("Convolution", dict(kernel=(5, 5), num_filter=6), [(3, 4, 9, 8)],
                         pair(dict(kernel=(5, 5), num_filter=6))))


def test_registered_and_forceable():
    import plexnet as mx
    from _numba_harness import default_impl, numba_record
    reg = mx.plugins.registries().operators
    p = prop("Convolution", dict(kernel=(3, 3), num_filter=2))
    for name in ("Convolution", "Deconvolution"):
        numba_record(name)
        assert default_impl(name) in ("numba", "torch")
    for which, cls in (("numba", NumbaConvolutionOp), ("xp", ConvolutionOp)):
        reg.force_impl("Convolution", "cpu", which)
        try:
            assert type(p.create_operator(mx.cpu())) is cls
        finally:
            reg.force_impl("Convolution", "cpu", None)


DW_TOL = {np.float32: dict(rtol=2e-5, atol=2e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}
DW_CASES = [
    (dict(kernel=(3, 3), num_filter=8, num_group=8, pad=(1, 1)), (2, 8, 9, 9)),                  # MobileNet's
    (dict(kernel=(3, 3), num_filter=8, num_group=8, pad=(1, 1), stride=(2, 2)), (2, 8, 9, 10)),
    (dict(kernel=(3, 3), num_filter=16, num_group=8, pad=(2, 1), dilate=(2, 1), no_bias=True), (2, 8, 9, 10)),
    (dict(kernel=(5, 3), num_filter=4, num_group=4, stride=(2, 3), pad=(0, 2)), (1, 4, 11, 13)),
    (dict(kernel=(1, 2), num_filter=6, num_group=3, stride=(3, 1), pad=(2, 0)), (2, 3, 5, 4)),
    (dict(kernel=(3, 3), num_filter=8, num_group=4, stride=(2, 2), dilate=(2, 2), pad=(2, 1)), (2, 4, 11, 10)),
]


@pytest.mark.parametrize("kw,shape", DW_CASES)
@pytest.mark.parametrize("req", ["write", "add", "null"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_depthwise_matches_ops_basic(monkeypatch, kw, shape, req, dtype):
    calls = []
    for mod, names in (("_dwkern", ("dw_forward_s1", "dw_backward_s1")), ("_phaseplanes", ("dw_forward", "dw_backward"))):
        K = _base.kernels(mod)
        for name in names:
            f = getattr(K, name)
            monkeypatch.setattr(K, name, lambda *a, _f=f, _n=name: calls.append(_n) or _f(*a))
    assert_same(run_pair("Convolution", kw, [shape], pair(kw), dtype=dtype, req=req), exact=False,
                tol=DW_TOL[dtype], what=str(kw))
    if req != "null":
        assert len(calls) == 3   # forward (req), forward (write), backward


@pytest.mark.parametrize("kw,shape", [(dict(kernel=(1, 1), num_filter=7), (1, 80, 7, 9)),
                                      (dict(kernel=(1, 1), num_filter=7, no_bias=True), (1, 80, 7, 9)),
                                      (dict(kernel=(1,), num_filter=70), (1, 80, 9)),
                                      (dict(kernel=(1, 1), num_filter=7), (2, 80, 3, 3))])
@pytest.mark.parametrize("req", ["write", "add"])
def test_pointwise_runs_ops_basics_gemms(monkeypatch, kw, shape, req):
    """1x1 convolutions through the numba operator take ops-basic's plain GEMMs
    (``nn/_pointwise``, whose own tests compare them with the im2col path), forward and
    backward, with ops-basic's results."""
    from plexnet_ops_basic.nn import _pointwise
    calls = []
    for name in ("forward", "backward"):
        f = getattr(_pointwise, name)
        monkeypatch.setattr(_pointwise, name, lambda *a, _f=f, _n=name: calls.append(_n) or _f(*a))
    assert_same(run_pair("Convolution", kw, [shape], pair(kw), req=req), what=str(kw))
    assert "forward" in calls and "backward" in calls


@pytest.mark.parametrize("kw,shape", [
    (dict(kernel=(5, 5), num_filter=1), (3, 4, 8, 8)),                                   # flat
    (dict(kernel=(3, 3), num_filter=20, pad=(1, 1)), (2, 8, 6, 7)),                      # csn
    (dict(kernel=(3, 3), num_filter=8, stride=(2, 2), pad=(1, 1), adj=(1, 1)), (2, 3, 4, 4)),  # strided
    (dict(kernel=(4,), num_filter=6, num_group=2), (2, 4, 9)),
])
@pytest.mark.parametrize("req", ["write", "add"])
def test_deconvolution_matches_ops_basic(kw, shape, req):
    from plexnet_ops_basic.nn.deconvolution import DeconvolutionOp
    from plexnet_ops_numba.convolution import NumbaDeconvolutionOp
    pr = prop("Deconvolution", kw)
    assert_same(run_pair("Deconvolution", kw, [shape], [DeconvolutionOp(pr.param), NumbaDeconvolutionOp(pr)],
                         req=req), what=str(kw))
