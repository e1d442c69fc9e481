"""Image operators through the front end: namespaces, random draws and seeds, resize
implementations, gradients, errors naming operator, argument and shapes."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from opcheck import check_gradient, check_req, run_forward

NAMES = ['adjust_lighting', 'crop', 'flip_left_right', 'flip_top_bottom', 'normalize', 'random_brightness',
         'random_color_jitter', 'random_contrast', 'random_flip_left_right', 'random_flip_top_bottom', 'random_hue',
         'random_lighting', 'random_saturation', 'resize', 'to_tensor']


def img(h=4, w=5, c=3, seed=0, dtype=np.uint8):
    return np.random.default_rng(seed).integers(0, 256, (h, w, c)).astype(dtype)


def test_plugin_is_listed() -> None:
    report = {r["name"]: r for r in mx.plugins.get_manager().report()}
    assert report["ops_image"]["status"] == "ok"
    assert {"_image_" + n for n in NAMES} <= set(report["ops_image"]["registered"]["operators"])


@pytest.mark.parametrize("name", NAMES)
def test_namespaces(name: str) -> None:
    assert callable(getattr(mx.nd.image, name)) and callable(getattr(mx.sym.image, name))


def test_to_tensor_then_normalize_symbolically() -> None:
    data = mx.sym.var("data")
    net = mx.sym.image.normalize(mx.sym.image.to_tensor(data), mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))
    assert "_image_to_tensor" in net.tojson()
    x = img()
    exe = net.simple_bind(mx.cpu(), data=x.shape, type_dict={"data": np.uint8})
    exe.arg_dict["data"][:] = mx.nd.array(x, dtype=np.uint8)
    out = exe.forward()[0].asnumpy()
    np.testing.assert_allclose(out, (x.transpose(2, 0, 1) / 255.0 - 0.5) / 0.25, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op,kw,shape", [
    ("_image_normalize", {"mean": (0.1, 0.2, 0.3), "std": (0.5, 1.0, 2.0)}, (3, 2, 2)),
    ("_image_crop", {"x": 1, "y": 0, "width": 2, "height": 2}, (3, 4, 3)),
    ("_image_to_tensor", {}, (2, 3, 3)),
])
def test_gradients(op, kw, shape) -> None:
    x = np.random.default_rng(1).random(shape)
    # to_tensor computes in float32 whatever the input: wider differences
    eps, rtol = (1e-2, 1e-3) if op == "_image_to_tensor" else (1e-6, 1e-5)
    check_gradient(op, [x], kw, eps=eps, rtol=rtol)
    check_req(op, [x], kw, req=("null", "write", "add"))


@pytest.mark.parametrize("name,kw", [
    ("random_brightness", {"min_factor": 0.5, "max_factor": 1.5}),
    ("random_contrast", {"min_factor": 0.5, "max_factor": 1.5}),
    ("random_saturation", {"min_factor": 0.5, "max_factor": 1.5}),
    ("random_hue", {"min_factor": 0.0, "max_factor": 0.5}),
    ("random_color_jitter", {"brightness": 0.3, "contrast": 0.3, "saturation": 0.3, "hue": 0.1}),
    ("random_lighting", {"alpha_std": 0.1}),
    ("random_flip_left_right", {}),
    ("random_flip_top_bottom", {}),
])
def test_random_ops_are_seeded_and_vary(name, kw) -> None:
    x = mx.nd.array(img(6, 7, 3, seed=3), dtype=np.uint8)
    f = getattr(mx.nd.image, name)
    mx.random.seed(10)
    a = [f(x, **kw).asnumpy() for _ in range(6)]
    mx.random.seed(10)
    b = [f(x, **kw).asnumpy() for _ in range(6)]
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
        assert u.dtype == np.uint8 and u.shape == (6, 7, 3)
    assert len({u.tobytes() for u in a}) > 1  # the factor is drawn per call


def test_random_flip_is_a_flip_or_a_copy_half_the_time() -> None:
    x = img(3, 4)
    mx.random.seed(0)
    outs = [mx.nd.image.random_flip_left_right(mx.nd.array(x, dtype=np.uint8)).asnumpy() for _ in range(200)]
    flipped = sum(np.array_equal(o, x[:, ::-1]) for o in outs)
    assert all(np.array_equal(o, x) or np.array_equal(o, x[:, ::-1]) for o in outs)
    assert 70 < flipped < 130


def test_brightness_factor_within_range() -> None:
    x = np.full((2, 2, 3), 100.0, dtype=np.float32)
    mx.random.seed(1)
    vals = [float(mx.nd.image.random_brightness(mx.nd.array(x), min_factor=0.5, max_factor=0.8).asnumpy()[0, 0, 0])
            for _ in range(50)]
    assert 50 <= min(vals) and max(vals) <= 80 and max(vals) - min(vals) > 10


def test_color_jitter_with_zero_factors_copies() -> None:
    x = img()
    out = mx.nd.image.random_color_jitter(mx.nd.array(x, dtype=np.uint8), brightness=0, contrast=0, saturation=0,
                                          hue=0).asnumpy()
    np.testing.assert_array_equal(out, x)


def test_hue_full_turn_is_identity_up_to_rounding() -> None:
    x = img(5, 5).astype(np.float32)
    out = run_forward("_image_random_hue", [x], {"min_factor": 1.0, "max_factor": 1.0})[0]
    np.testing.assert_allclose(out, x, atol=1e-3)


@pytest.mark.parametrize("interp", [0, 1])
@pytest.mark.parametrize("shape,size", [((5, 6, 3), (3, 4)), ((3, 4, 1), (7, 5)), ((2, 6, 6, 3), (4, 4))])
def test_xp_resize_agrees_with_opencv(interp, shape, size) -> None:
    """The device-generic implementation (used on GPUs) against the OpenCV one: equal up to
    OpenCV's fixed-point rounding of uint8 (at most 1)."""
    from plexnet.plugins import registries
    reg = registries().operators
    x = np.random.default_rng(2).integers(0, 256, shape).astype(np.uint8)
    kw = {"size": size, "interp": interp}
    cv = run_forward("_image_resize", [x], kw, mirror=False)[0]  # OpenCV: CPU only
    reg.force_impl("_image_resize", "cpu", "xp")
    try:
        xp_out = run_forward("_image_resize", [x], kw, mirror=False)[0]
    finally:
        reg.force_impl("_image_resize", "cpu", None)
    assert xp_out.shape == cv.shape
    assert np.abs(xp_out.astype(int) - cv.astype(int)).max() <= 1


def test_xp_resize_names_interp_it_cannot_do() -> None:
    from plexnet.plugins import registries
    reg = registries().operators
    reg.force_impl("_image_resize", "cpu", "xp")
    try:
        with pytest.raises(Exception, match=r"_image_resize: interp=3 needs OpenCV"):
            mx.nd.image.resize(mx.nd.ones((4, 4, 3)), size=(2, 2), interp=3).asnumpy()
    finally:
        reg.force_impl("_image_resize", "cpu", None)


@pytest.mark.parametrize("call,exc,pattern", [
    (lambda: mx.nd.image.crop(mx.nd.ones((4, 4, 3)), x=2, y=2, width=3, height=3), mx.base.ShapeError,
     r"_image_crop: x \+ width \(2 \+ 3\) should not be greater than the input width, but got data shape \(4, 4, 3\)"),
    (lambda: mx.nd.image.normalize(mx.nd.ones((3, 2, 2))), mx.base.ShapeError,
     r"_image_normalize: invalid mean \(0.0, 0.0, 0.0, 0.0\): it must have either 1 or 3 elements.*\(3, 2, 2\)"),
    (lambda: mx.nd.image.normalize(mx.nd.ones((4, 2, 2)), mean=0.5, std=0.5), mx.base.ShapeError,
     r"_image_normalize: the channel dimension must have either 1 or 3 elements"),
    (lambda: mx.nd.image.resize(mx.nd.ones((4, 4)), size=(2, 2)), mx.base.ShapeError,
     r"_image_resize: input image must have shape \(height, width, channels\).*\(4, 4\)"),
    (lambda: mx.nd.image.resize(mx.nd.ones((4, 4, 3)), size=(1, 2, 3)), mx.operator.ParamError,
     r"_image_resize: argument 'size' must have 1 or 2 values"),
    (lambda: mx.nd.image.random_hue(mx.nd.ones((4, 4, 3)), min_factor=-1, max_factor=1), mx.operator.ParamError,
     r"_image_random_hue: value -1 for argument 'min_factor' is out of range"),
    (lambda: mx.nd.image.adjust_lighting(mx.nd.ones((4, 4, 3)), alpha=(0.1, 0.2)), mx.operator.ParamError,
     r"_image_adjust_lighting: argument 'alpha' must have 3 values"),
    (lambda: mx.nd.image.flip_left_right(mx.nd.ones((2, 4, 4, 3))), mx.base.ShapeError,
     r"_image_flip_left_right: input image must have shape \(height, width, channels\), but got data shape "
     r"\(2, 4, 4, 3\)"),
])
def test_errors_name_operator_argument_and_shape(call, exc, pattern) -> None:
    with pytest.raises(exc, match=pattern):
        call()
