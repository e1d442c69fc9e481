"""Crop, GridGenerator, BilinearSampler, SpatialTransformer, ROIPooling, Correlation,
im2col/col2im and the _v1 operators: numerical gradients, req, properties, errors (values
against MXNet: test_mxnet_fixtures.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from opcheck import check_gradient, check_req, make_prop, run_forward
from plexnet.base import ShapeError
from plexnet.operator.params import ParamError

REQS3 = ("null", "write", "add")


def rand(*shape: int, seed: int = 0, lo: float = -1, hi: float = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, shape)


AFF = np.array([[0.9, 0.1, 0.05, -0.2, 0.8, 0.1]])
CASES = [
    ("Crop", [rand(1, 2, 4, 5)], {"h_w": (2, 3), "offset": (1, 1)}, None),
    ("Crop", [rand(1, 2, 4, 5), rand(1, 1, 3, 3)], {"num_args": 2, "center_crop": True}, ["data"]),
    ("GridGenerator", [AFF], {"transform_type": "affine", "target_shape": (3, 4)}, None),
    ("GridGenerator", [rand(1, 2, 3, 4)], {"transform_type": "warp"}, None),
    ("BilinearSampler", [rand(1, 2, 4, 5), rand(1, 2, 3, 3, seed=1, lo=-1.1, hi=1.1)], {}, None),
    ("SpatialTransformer", [rand(1, 2, 4, 5), AFF], {"target_shape": (3, 3), "transform_type": "affine",
                                                     "sampler_type": "bilinear"}, None),
    ("ROIPooling", [np.random.default_rng(3).permutation(60).reshape(1, 2, 5, 6) / 60.0,
                    np.array([[0.0, 0, 0, 3, 2], [0, 1, 2, 5, 4]])], {"pooled_size": (2, 2), "spatial_scale": 1.0},
     ["data"]),
    ("Correlation", [rand(1, 2, 4, 5), rand(1, 2, 4, 5, seed=1)], {"kernel_size": 1, "max_displacement": 1,
                                                                   "pad_size": 1}, None),
    ("Correlation", [rand(1, 1, 6, 6), rand(1, 1, 6, 6, seed=1)], {"kernel_size": 3, "max_displacement": 2,
                                                                   "stride1": 2, "stride2": 2, "pad_size": 2}, None),
    ("im2col", [rand(1, 2, 4, 4)], {"kernel": (2, 2), "stride": (2, 1), "pad": (1, 0)}, None),
    ("col2im", [rand(1, 8, 9)], {"output_size": (4, 4), "kernel": (2, 2), "stride": (2, 2), "pad": (1, 1)}, None),
    ("Convolution_v1", [rand(1, 2, 4, 4), rand(3, 2, 3, 3, seed=1), rand(3, seed=2)], {"kernel": (3, 3),
                                                                                      "num_filter": 3}, None),
    ("Pooling_v1", [rand(1, 1, 5, 5)], {"kernel": (2, 2), "stride": (2, 2), "pool_type": "avg",
                                        "pooling_convention": "full"}, None),
]


@pytest.mark.parametrize("name,inputs,kw,wrt", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_gradient_and_req(name: str, inputs: list, kw: dict, wrt) -> None:
    check_gradient(name, inputs, kw, wrt=wrt, rtol=1e-4, atol=1e-6)
    check_req(name, inputs, kw, req=REQS3)


def test_identity_grid_samples_the_input() -> None:
    x = rand(2, 3, 4, 5)
    grid = run_forward("GridGenerator", [np.tile([1.0, 0, 0, 0, 1, 0], (2, 1))], {"transform_type": "affine",
                                                                               "target_shape": (4, 5)})[0]
    np.testing.assert_allclose(run_forward("BilinearSampler", [x, grid], {})[0], x, atol=1e-12)
    flow0 = run_forward("GridGenerator", [np.zeros((2, 2, 4, 5))], {"transform_type": "warp"})[0]
    np.testing.assert_allclose(flow0, grid, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 3), st.integers(3, 6), st.integers(3, 6), st.integers(1, 3), st.integers(1, 2),
       st.integers(0, 1))
def test_col2im_is_the_adjoint_of_im2col(c: int, h: int, w: int, k: int, s: int, pad: int) -> None:
    kw = {"kernel": (k, k), "stride": (s, s), "pad": (pad, pad)}
    x = rand(1, c, h, w)
    cols = run_forward("im2col", [x], kw)[0]
    y = rand(*cols.shape, seed=1)
    back = run_forward("col2im", [y], dict(kw, output_size=(h, w)))[0]
    assert np.isclose((cols * y).sum(), (x * back).sum())  # <im2col x, y> == <x, col2im y>


def test_batchnorm_v1_matches_batchnorm() -> None:
    x, gamma, beta = rand(4, 3, 2, 2), rand(3, seed=1), rand(3, seed=2)
    kw = {"fix_gamma": False, "eps": 1e-3}
    old = run_forward("BatchNorm_v1", [x, gamma, beta], kw, aux_init={"moving_var": 1.0})
    new = run_forward("BatchNorm", [x, gamma, beta], kw, aux_init={"moving_var": 1.0})
    np.testing.assert_allclose(old[0], new[0])
    np.testing.assert_allclose(old.aux[0], new.aux[0])
    assert make_prop("BatchNorm_v1", {}).get_params()["eps"] == "0.001"
    with pytest.raises(ParamError, match="BatchNorm_v1.*axis"):
        make_prop("BatchNorm_v1", {"axis": 1})


@pytest.mark.parametrize("name,kw,shapes,match", [
    ("Crop", {"h_w": (5, 2)}, [(1, 1, 4, 4)], r"Crop.*\(5, 2\).*\(1, 1, 4, 4\)"),
    ("GridGenerator", {"transform_type": "affine", "target_shape": (2, 2)}, [(2, 4)], r"GridGenerator.*\(2, 4\)"),
    ("BilinearSampler", {}, [(1, 2, 3, 3), (2, 2, 3, 3)], r"BilinearSampler.*\(2, 2, 3, 3\)"),
    ("SpatialTransformer", {"target_shape": (2, 2), "transform_type": "affine", "sampler_type": "bilinear"},
     [(1, 2, 3, 3), (1, 4)], r"SpatialTransformer.*\(1, 4\)"),
    ("ROIPooling", {"pooled_size": (2, 2), "spatial_scale": 1.0}, [(1, 2, 3, 3), (2, 4)], r"ROIPooling.*\(2, 4\)"),
    ("Correlation", {"max_displacement": 4}, [(1, 1, 3, 3), (1, 1, 3, 3)], r"Correlation.*\(1, 1, 3, 3\)"),
    ("im2col", {"kernel": (2, 2)}, [(1, 1, 4)], r"im2col.*\(1, 1, 4\)"),
    ("col2im", {"kernel": (2, 2), "output_size": (3, 3)}, [(1, 5, 4)], r"col2im.*\(1, 5, 4\)"),
])
def test_shape_errors(name: str, kw: dict, shapes: list, match: str) -> None:
    with pytest.raises(ShapeError, match=match):
        make_prop(name, kw).infer_shape(shapes)


def test_param_errors() -> None:
    with pytest.raises(ParamError, match="SpatialTransformer.*target_shape"):
        make_prop("SpatialTransformer", {"target_shape": (0, 2), "transform_type": "affine",
                                         "sampler_type": "bilinear"})
    with pytest.raises(ParamError, match="ROIPooling.*pooled_size"):
        make_prop("ROIPooling", {"pooled_size": (2,), "spatial_scale": 1.0})
    with pytest.raises(ParamError, match="im2col.*stride"):
        make_prop("im2col", {"kernel": (2, 2), "stride": (1,)})
    with pytest.raises(ParamError, match="Pooling_v1.*pooling_convention"):
        make_prop("Pooling_v1", {"kernel": (2, 2), "pooling_convention": "same"})


def _roi_pool_reference(data: np.ndarray, rois: np.ndarray, ph: int, pw: int, scale: float) -> np.ndarray:
    """MXNet's CPU loops (roi_pooling.cc), written out directly."""
    n, c, h, w = data.shape
    out = np.zeros((len(rois), c, ph, pw))
    for r, roi in enumerate(rois):
        b = int(roi[0])
        x1, y1, x2, y2 = (int(np.floor(v * scale + 0.5)) for v in roi[1:])
        bh, bw = max(y2 - y1 + 1, 1) / ph, max(x2 - x1 + 1, 1) / pw
        for i in range(ph):
            hs, he = (min(max(int(f((i + k) * bh)) + y1, 0), h) for k, f in ((0, np.floor), (1, np.ceil)))
            for j in range(pw):
                ws, we = (min(max(int(f((j + k) * bw)) + x1, 0), w) for k, f in ((0, np.floor), (1, np.ceil)))
                if he > hs and we > ws:
                    out[r, :, i, j] = data[b, :, hs:he, ws:we].reshape(c, -1).max(axis=1)
    return out


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 4))
def test_roi_pooling_matches_the_reference_loops(seed: int, ph: int, pw: int) -> None:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 4, (2, 3, 9, 11)).astype(np.float64)  # many ties
    x1, y1 = rng.uniform(-40, 160, 6), rng.uniform(-40, 140, 6)
    rois = np.stack([rng.integers(0, 2, 6), x1, y1, x1 + rng.uniform(0, 120, 6), y1 + rng.uniform(0, 120, 6)], 1)
    out = run_forward("ROIPooling", [data, rois], {"pooled_size": (ph, pw), "spatial_scale": 1 / 16})[0]
    np.testing.assert_array_equal(out, _roi_pool_reference(data, rois, ph, pw, 1 / 16))
