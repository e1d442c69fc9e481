"""nd.contrib / sym.contrib through the front end: namespaces, the Python-level functions
(control flow, isfinite/isnan/isinf, boolean_mask, rand_zipfian), errors."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx

OPS = ["AdaptiveAvgPooling2D", "BilinearResize2D", "ROIAlign", "allclose", "arange_like", "backward_gradientmultiplier",
       "backward_index_copy", "backward_quadratic", "bipartite_matching", "box_decode", "box_encode", "box_iou",
       "box_nms", "box_non_maximum_suppression", "div_sqrt_dim", "fft", "gradientmultiplier", "ifft", "index_array",
       "index_copy", "quadratic", "round_ste", "sign_ste", "interleaved_matmul_selfatt_qk",
       "interleaved_matmul_selfatt_valatt", "interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_valatt",
       "MultiBoxPrior", "MultiBoxDetection", "MultiBoxTarget", "SparseEmbedding", "count_sketch", "PSROIPooling",
       "BatchNormWithReLU", "SyncBatchNorm", "Proposal", "MultiProposal", "RROIAlign", "hawkesll",
       "backward_hawkesll", "DeformablePSROIPooling", "DeformableConvolution", "ModulatedDeformableConvolution"]
PYTHON = ["foreach", "while_loop", "cond", "isfinite", "isnan", "isinf", "boolean_mask", "rand_zipfian",
          "current_context", "uniform"]


def test_plugin_is_listed() -> None:
    report = {r["name"]: r for r in mx.plugins.get_manager().report()}
    assert report["ops_contrib"]["status"] == "ok"
    assert {"_contrib_box_nms", "_contrib_ROIAlign"} <= set(report["ops_contrib"]["registered"]["operators"])


@pytest.mark.parametrize("name", OPS)
def test_operators_in_nd_and_sym(name: str) -> None:
    assert callable(getattr(mx.nd.contrib, name)) and callable(getattr(mx.sym.contrib, name))


@pytest.mark.parametrize("name", PYTHON)
def test_python_functions_in_nd(name: str) -> None:
    assert callable(getattr(mx.nd.contrib, name)) and name in dir(mx.nd.contrib)


def test_symbolic_box_nms_and_roialign_run_in_the_executor() -> None:
    data, rois = mx.sym.var("data"), mx.sym.var("rois")
    net = mx.sym.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=1.0)
    assert '"_contrib_ROIAlign"' in net.tojson()
    exe = net.simple_bind(mx.cpu(), data=(1, 1, 4, 4), rois=(1, 5))
    exe.arg_dict["data"][:] = mx.nd.array(np.arange(16.0).reshape(1, 1, 4, 4))
    exe.arg_dict["rois"][:] = mx.nd.array([[0, 0, 0, 3, 3]])
    out = exe.forward(is_train=True)[0].asnumpy()
    assert out.shape == (1, 1, 2, 2) and np.all(np.diff(out.ravel()) != 0)
    exe.backward([mx.nd.ones((1, 1, 2, 2))])
    assert abs(exe.grad_dict["data"].asnumpy().sum() - 4.0) < 1e-5  # each bin's weights sum to 1


def test_foreach_cumulative_sum_and_gradient() -> None:
    data = mx.nd.array(np.arange(12.0).reshape(4, 3))
    data.attach_grad()
    with mx.autograd.record():
        outs, state = mx.nd.contrib.foreach(lambda x, s: (x + s, x + s), data, mx.nd.zeros((3,)))
        loss = outs.sum()
    np.testing.assert_allclose(outs.asnumpy(), np.cumsum(np.arange(12.0).reshape(4, 3), axis=0))
    np.testing.assert_allclose(state.asnumpy(), np.arange(12.0).reshape(4, 3).sum(0))
    loss.backward()
    np.testing.assert_allclose(data.grad.asnumpy(), np.repeat([[4.0], [3.0], [2.0], [1.0]], 3, axis=1))


def test_foreach_with_lists() -> None:
    a, b = mx.nd.ones((3, 2)), mx.nd.arange(6).reshape((3, 2))
    outs, states = mx.nd.contrib.foreach(lambda xs, ss: ([xs[0] * xs[1]], [ss[0] + xs[1]]), [a, b], [mx.nd.zeros((2,))])
    np.testing.assert_allclose(outs[0].asnumpy(), np.arange(6).reshape(3, 2))
    np.testing.assert_allclose(states[0].asnumpy(), [6, 9])


def test_while_loop_pads_to_max_iterations() -> None:
    outs, (i, s) = mx.nd.contrib.while_loop(
        cond=lambda i, s: i < 3, func=lambda i, s: ([i * 2], [i + 1, s + i]),
        loop_vars=[mx.nd.array([0.0]), mx.nd.array([0.0])], max_iterations=5)
    assert outs[0].shape == (5, 1)
    np.testing.assert_allclose(outs[0].asnumpy()[:3].ravel(), [0, 2, 4])
    assert i.asscalar() == 3 and s.asscalar() == 3
    with pytest.raises(ValueError, match="max_iterations"):
        mx.nd.contrib.while_loop(lambda i: i < 1, lambda i: ([], [i]), [mx.nd.zeros((1,))])


def test_cond() -> None:
    assert mx.nd.contrib.cond(mx.nd.array([1]), lambda: 1, lambda: 2) == 1
    assert mx.nd.contrib.cond(mx.nd.array([0]), lambda: 1, lambda: 2) == 2


def test_isfinite_isnan_isinf() -> None:
    x = mx.nd.array([1.0, np.nan, np.inf, -np.inf, 0.0])
    np.testing.assert_array_equal(mx.nd.contrib.isfinite(x).asnumpy(), [1, 0, 0, 0, 1])
    np.testing.assert_array_equal(mx.nd.contrib.isnan(x).asnumpy(), [0, 1, 0, 0, 0])
    np.testing.assert_array_equal(mx.nd.contrib.isinf(x).asnumpy(), [0, 0, 1, 1, 0])


def test_boolean_mask_errors() -> None:
    with pytest.raises(mx.base.ShapeError, match=r"_contrib_boolean_mask: index must be 1-D.*\(3, 2\).*\(2,\)"):
        mx.nd.contrib.boolean_mask(mx.nd.ones((3, 2)), mx.nd.ones((2,)))
    with pytest.raises(ValueError, match="axis=1 is not supported"):
        mx.nd.contrib.boolean_mask(mx.nd.ones((3, 2)), mx.nd.ones((3,)), axis=1)


def test_rand_zipfian() -> None:
    mx.random.seed(0)
    s, ct, cs = mx.nd.contrib.rand_zipfian(mx.nd.array([0, 3, 9]), 1000, 10)
    s = s.asnumpy()
    assert s.dtype == np.int64 and s.min() >= 0 and s.max() < 10
    counts = np.bincount(s, minlength=10)
    assert counts[0] > counts[5] > 0  # log-uniform: small classes are frequent
    np.testing.assert_allclose(ct.asnumpy(), np.log((np.array([0, 3, 9]) + 2) / (np.array([0, 3, 9]) + 1))
                               / np.log(11) * 1000)
    assert cs.shape == (1000,)


def test_fft_roundtrip_and_gradient() -> None:
    from opcheck import check_gradient, run_forward
    x = np.random.default_rng(0).normal(size=(3, 8))
    f = run_forward("_contrib_fft", [x])[0]
    z = np.fft.fft(x, axis=-1)
    np.testing.assert_allclose(f[:, 0::2], z.real, atol=1e-9)
    np.testing.assert_allclose(f[:, 1::2], z.imag, atol=1e-9)
    np.testing.assert_allclose(run_forward("_contrib_ifft", [f])[0], 8 * x, atol=1e-9)  # unnormalised, as cuFFT
    check_gradient("_contrib_fft", [x], rtol=1e-4, atol=1e-6)
    check_gradient("_contrib_ifft", [f], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("call,pattern", [
    (lambda: mx.nd.contrib.box_nms(mx.nd.ones((4, 4))), r"_contrib_box_nms: the last dimension must have at least 5"),
    (lambda: mx.nd.contrib.box_iou(mx.nd.ones((4, 3)), mx.nd.ones((2, 4))), r"_contrib_box_iou: argument 'lhs'.*lhs=\(4, 3\)"),
    (lambda: mx.nd.contrib.ROIAlign(mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((2, 4)), pooled_size=(2, 2),
                                    spatial_scale=1.0), r"_contrib_ROIAlign: rois must have shape \(num_rois, 5\)"),
    (lambda: mx.nd.contrib.index_copy(mx.nd.ones((4, 3)), mx.nd.array([0]), mx.nd.ones((2, 3))),
     r"_contrib_index_copy: .*new_tensor=\(2, 3\)"),
    (lambda: mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.ones((4, 3))), r"_contrib_AdaptiveAvgPooling2D: data must be 4-D"),
])
def test_errors_name_operator_and_shapes(call, pattern) -> None:
    with pytest.raises(mx.base.ShapeError, match=pattern):
        call()


def test_count_sketch_doc_example_and_gradient() -> None:
    from opcheck import check_gradient
    x = mx.nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]])
    h, s = mx.nd.array([[0, 3, 4]]), mx.nd.array([[1, -1, 1]])
    out = mx.nd.contrib.count_sketch(x, h, s, out_dim=5).asnumpy()
    np.testing.assert_allclose(out, [[1.2, 0, 0, -2.5, 3.4], [3.2, 0, 0, -5.7, 6.6]], rtol=1e-6)
    check_gradient("_contrib_count_sketch", [np.random.default_rng(0).normal(size=(2, 3)), np.array([[0.0, 3, 3]]),
                                             np.array([[1.0, -1, 1]])], {"out_dim": 5}, wrt=["data"])


def test_contrib_uniform_is_the_random_sampler() -> None:
    mx.random.seed(3)
    a = mx.nd.contrib.uniform(0, 1, shape=(4,)).asnumpy()
    mx.random.seed(3)
    np.testing.assert_array_equal(a, mx.nd.random.uniform(0, 1, shape=(4,)).asnumpy())


def test_sym_contrib_python_functions() -> None:
    assert mx.sym.contrib.AttrScope is mx.sym.AttrScope
    assert "_random_uniform" in mx.sym.contrib.uniform(0, 1, shape=(2,)).tojson()
    s, ct, cs = mx.sym.contrib.rand_zipfian(mx.sym.var("t"), 6, 10)
    exe = mx.sym.Group([s, ct, cs]).simple_bind(mx.cpu(), t=(3,))
    exe.arg_dict["t"][:] = mx.nd.array([0, 3, 9])
    mx.random.seed(1)
    sampled, count_true, count_sampled = (o.asnumpy() for o in exe.forward())
    assert sampled.shape == (6,) and sampled.min() >= 0 and sampled.max() < 10
    np.testing.assert_allclose(count_true, np.log(np.array([2, 5, 11]) / np.array([1, 4, 10])) / np.log(11) * 6,
                               rtol=1e-6)
    np.testing.assert_allclose(count_sampled, np.log((sampled + 2.0) / (sampled + 1.0)) / np.log(11) * 6, rtol=1e-6)


def test_backward_hawkesll_operator_gives_hawkesll_gradients() -> None:
    from opcheck import run_backward, run_forward
    rng = np.random.default_rng(3)
    ins = [rng.uniform(0.5, 2, (2, 2)), np.array([0.3, 0.5]), np.array([1.0, 2.0]), rng.uniform(0, 1, (2, 2)),
           rng.uniform(0.1, 1, (2, 4)), rng.integers(0, 2, (2, 4)).astype(np.int32), np.array([4.0, 3.0]),
           np.array([5.0, 5.0])]
    og = np.array([1.0, -2.0])
    want = run_backward("_contrib_hawkesll", ins, out_grads=[og, np.zeros((2, 2))])
    got = run_forward("_contrib_backward_hawkesll", [og, np.zeros((2, 2))] + ins)
    for k in range(3):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12)
