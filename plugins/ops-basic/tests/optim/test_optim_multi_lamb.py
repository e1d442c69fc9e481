"""Fused multi-tensor SGD updates, multi_sum_sq, multi_lars and the LAMB phases: MXNet
1.9.1's values (recorded by hand from the mxvenv), in-place states through nd (the engine
orders them as writes), errors."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from opcheck import make_prop
from plexnet.base import ShapeError
from plexnet.operator.params import ParamError

W = [np.array([1.0, 2, 3]), np.array([[0.5, -1]])]
G = [np.array([0.1, -0.2, 0.3]), np.array([[1.0, 2]])]
M = [np.array([0.1, 0.1, 0.1]), np.array([[0.0, 1]])]


def nd(a, dtype="float32"):
    return mx.nd.array(a, dtype=dtype)


def test_multi_sgd_mom_update_as_mxnet() -> None:
    w, g, m = [nd(x) for x in W], [nd(x) for x in G], [nd(x) for x in M]
    outs = [x.copy() for x in w]
    mx.nd.multi_sgd_mom_update(w[0], g[0], m[0], w[1], g[1], m[1], lrs=(0.1, 0.2), wds=(0.01, 0.0), momentum=0.9,
                               num_weights=2, out=outs)
    np.testing.assert_allclose(outs[0].asnumpy(), [1.079, 2.108, 3.057], rtol=1e-6)
    np.testing.assert_allclose(outs[1].asnumpy(), [[0.3, -0.5]], rtol=1e-6)
    np.testing.assert_allclose(m[0].asnumpy(), [0.079, 0.108, 0.057], rtol=1e-5)  # updated in place
    np.testing.assert_array_equal(w[0].asnumpy(), W[0])  # out= other arrays: weights untouched


def test_multi_sgd_in_place_and_preloaded() -> None:
    w, g = [nd(x) for x in W], [nd(x) for x in G]
    mx.nd.multi_sgd_update(w[0], g[0], w[1], g[1], lrs=(0.1, 0.2), wds=(0.01, 0.0), num_weights=2,
                           clip_gradient=0.15, rescale_grad=2, out=w)
    np.testing.assert_allclose(w[0].asnumpy(), [0.984, 2.013, 2.982], rtol=1e-6)
    np.testing.assert_allclose(w[1].asnumpy(), [[0.47, -1.03]], rtol=1e-6)
    w = [nd(x) for x in W]
    out = [x.copy() for x in w]
    mx.nd.preloaded_multi_sgd_update(w[0], g[0], w[1], g[1], nd([0.1, 0.2]), nd([0.01, 0.0]), num_weights=2,
                                     out=out)
    np.testing.assert_allclose(out[0].asnumpy(), [0.989, 2.018, 2.967], rtol=1e-6)
    np.testing.assert_allclose(out[1].asnumpy(), [[0.3, -1.4]], rtol=1e-6)


def test_multi_mp_sgd_mom_update_as_mxnet() -> None:
    w16 = [nd(x, "float16") for x in W]
    w32 = [nd(x) for x in W]
    g16 = [nd(x, "float16") for x in G]
    m = [nd([0.079, 0.108, 0.057]), nd([[-0.2, 0.5]])]  # the states MXNet's run had
    mx.nd.multi_mp_sgd_mom_update(w16[0], g16[0], m[0], w32[0], w16[1], g16[1], m[1], w32[1], lrs=(0.1, 0.2),
                                  wds=(0.01, 0.0), momentum=0.9, num_weights=2, out=w16)
    assert w16[0].dtype == np.float16
    np.testing.assert_allclose(w32[0].asnumpy(), [1.0601025, 2.115195, 3.018295], rtol=1e-6)
    np.testing.assert_allclose(m[1].asnumpy(), [[-0.38, 0.05]], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(w16[0].asnumpy(), [1.061, 2.115, 3.018], rtol=1e-3)


def test_multi_sum_sq_and_lars() -> None:
    np.testing.assert_allclose(mx.nd.multi_sum_sq(nd(W[0]), nd(W[1]), num_arrays=2).asnumpy(), [14.0, 1.25])
    out = mx.nd.multi_lars(nd([0.1, 0.2, 0.3]), nd([4.0, 0, 9]), nd([1.0, 1, 0]), nd([0.1, 0.1, 0.1]), eta=0.5,
                           eps=1e-3, rescale_grad=2)
    np.testing.assert_allclose(out.asnumpy(), [0.04543389, 0.2, 0.3], rtol=1e-6)


def test_lamb_phases_as_mxnet() -> None:
    mean, var = mx.nd.zeros(3), mx.nd.zeros(3)
    gg = mx.nd.lamb_update_phase1(nd(W[0]), nd(G[0]), mean, var, beta1=0.9, beta2=0.999, epsilon=1e-6, t=1,
                                  bias_correction=True, wd=0.01)
    np.testing.assert_allclose(gg.asnumpy(), [1.0099901, -0.979995, 1.0299966], rtol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), [9.9998715e-06, 3.9999486e-05, 8.9998844e-05], rtol=1e-6)
    for kw, want in (({}, [0.59600395, 2.391998, 2.5880013]),
                     ({"lower_bound": 0.1, "upper_bound": 1.5}, [0.69700295, 2.2939985, 2.691001])):
        out = mx.nd.lamb_update_phase2(nd(W[0]), gg, nd([2.0]), nd([0.5]), lr=0.1, **kw)
        np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    out = mx.nd.lamb_update_phase2(nd(W[0]), gg, nd([0.0]), nd([0.5]), lr=0.1)
    np.testing.assert_allclose(out.asnumpy(), [0.899001, 2.0979996, 2.8970003], rtol=1e-6)
    w32 = nd(W[0])
    mean, var = mx.nd.zeros(3), mx.nd.zeros(3)
    gg = mx.nd.mp_lamb_update_phase1(nd(W[0], "float16"), nd(G[0], "float16"), mean, var, w32, t=2, wd=0.01,
                                     bias_correction=False, clip_gradient=0.2, rescale_grad=0.5)
    assert gg.dtype == np.float32
    np.testing.assert_allclose(gg.asnumpy(), [3.1702993, -3.1412988, 3.1916325], rtol=1e-4)
    o = mx.nd.mp_lamb_update_phase2(nd(W[0], "float16"), gg, nd([2.0]), nd([0.5]), w32, lr=0.1)
    assert o.dtype == np.float16
    np.testing.assert_allclose(o.asnumpy(), [-0.268, 3.256, 1.724], rtol=2e-3)
    np.testing.assert_array_equal(w32.asnumpy(), W[0])  # MXNet 1.9.1 leaves weight32 alone here


def test_errors() -> None:
    with pytest.raises(ParamError, match=r"multi_sgd_update.*'lrs'.*num_weights=2"):
        make_prop("multi_sgd_update", {"lrs": (0.1,), "wds": (0.0, 0.0), "num_weights": 2})
    with pytest.raises(ShapeError, match=r"multi_sgd_mom_update.*mom_0.*\(3,\)"):
        make_prop("multi_sgd_mom_update", {"lrs": (0.1,), "wds": (0.0,)}).infer_shape([(2,), (2,), (3,)])
    with pytest.raises(ShapeError, match=r"lamb_update_phase2.*r1.*\(2,\)"):
        make_prop("lamb_update_phase2", {"lr": 0.1}).infer_shape([(3,), (3,), (2,), (1,)])
    assert make_prop("multi_mp_sgd_mom_update", {"lrs": (0.1, 0.1), "wds": (0, 0), "num_weights": 2}
                     ).mutate_inputs() == [2, 3, 6, 7]
