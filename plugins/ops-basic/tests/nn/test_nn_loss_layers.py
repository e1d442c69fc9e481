"""MakeLoss, SVMOutput, softmax_cross_entropy, IdentityAttachKLSparseReg, CTCLoss:
gradients (numerical where the head gradient is used), MXNet's recorded values, errors."""
from __future__ import annotations

import numpy as np
import pytest

from opcheck import check_gradient, check_req, make_prop, run_backward, run_forward
from plexnet.base import ShapeError
from plexnet.operator.params import ParamError

X = np.array([[1.0, -2, 0.5], [0.3, 0.2, -1]])


def test_make_loss_ignores_the_head_gradient() -> None:
    assert make_prop("MakeLoss", {}).need_top_grad() is False
    g = run_backward("MakeLoss", [X], {"grad_scale": 3, "normalization": "valid", "valid_thresh": 0.4},
                     [np.full(X.shape, 7.0)])
    np.testing.assert_allclose(g[0], np.full(X.shape, 1.5))  # 3 / two elements above 0.4 (MXNet 1.9.1)
    g = run_backward("MakeLoss", [X], {"grad_scale": 3, "normalization": "batch"})
    np.testing.assert_allclose(g[0], np.full(X.shape, 1.5))


def test_svm_output_gradients_as_mxnet() -> None:
    lab = np.array([0.0, 2.0])
    g = run_backward("SVMOutput", [X, lab], {})
    np.testing.assert_allclose(g[0], [[0, 0, 3], [2.6, 2.4, -4]], rtol=1e-12)
    g = run_backward("SVMOutput", [X, lab], {"use_linear": True, "margin": 0.5, "regularization_coefficient": 2})
    np.testing.assert_allclose(g[0], [[0, 0, 2], [2, 2, -2]])
    with pytest.raises(ShapeError, match=r"SVMOutput.*'label'.*\(3,\)"):
        make_prop("SVMOutput", {}).infer_shape([(2, 3), (3,)])


def test_softmax_cross_entropy() -> None:
    lab = np.array([0.0, 2.0])
    out = run_forward("softmax_cross_entropy", [X, lab], {})[0]
    assert out.shape == (1,)
    np.testing.assert_allclose(out, [2.5827143], rtol=1e-6)  # MXNet 1.9.1
    check_gradient("softmax_cross_entropy", [X, lab], {}, wrt=["data"])
    check_req("softmax_cross_entropy", [X, lab], {}, req=("null", "write", "add"))


def test_kl_sparse_reg_as_mxnet() -> None:
    x = 1 / (1 + np.exp(-X))
    ma = np.array([0.5, 0.2, 0.3])
    kw = {"sparseness_target": 0.2, "penalty": 0.01, "momentum": 0.9}
    g = run_backward("IdentityAttachKLSparseReg", [x], kw, [np.ones(X.shape)], aux=[ma])
    np.testing.assert_allclose(g.aux[0], [0.51527506, 0.21345185, 0.31457007], rtol=1e-6)  # MXNet 1.9.1
    np.testing.assert_allclose(g[0], np.tile([1.0126228, 1.0008012, 1.0053136], (2, 1)), rtol=1e-6)
    np.testing.assert_array_equal(run_forward("IdentityAttachKLSparseReg", [x], kw, aux=[ma])[0], x)


def test_ctc_gradient_and_lengths() -> None:
    rng = np.random.default_rng(0)
    data = rng.uniform(-2, 2, (4, 2, 3))
    lab = np.array([[1.0, 2.0], [2.0, 0.0]])
    check_gradient("CTCLoss", [data, lab], {}, wrt=["data"], rtol=1e-5, atol=1e-7)
    kw = {"use_data_lengths": True, "use_label_lengths": True}
    args = [data, np.array([[1.0, 1.0], [2.0, 2.0]]), np.array([4.0, 3.0]), np.array([2.0, 1.0])]
    check_gradient("CTCLoss", args, kw, wrt=["data"], rtol=1e-5, atol=1e-7)
    g = run_backward("CTCLoss", args, kw)
    assert np.all(g[0][3:, 1] == 0)  # beyond data_lengths: no gradient
    # repeated labels need a blank between them: 2 labels 'a a' need at least 3 steps
    out = run_forward("ctc_loss", [data[:2], np.array([[1.0, 1.0], [1.0, 0.0]])], {})
    assert np.isinf(out[0][0]) and np.isfinite(out[0][1])


def test_ctc_errors() -> None:
    with pytest.raises(ShapeError, match=r"CTCLoss.*'data'.*\(4, 3\)"):
        make_prop("CTCLoss", {}).infer_shape([(4, 3), None])
    with pytest.raises(ShapeError, match=r"CTCLoss.*'label'.*\(3, 2\)"):
        make_prop("CTCLoss", {}).infer_shape([(4, 2, 3), (3, 2)])
    with pytest.raises(ParamError, match="CTCLoss.*blank_label"):
        make_prop("CTCLoss", {"blank_label": "middle"})
