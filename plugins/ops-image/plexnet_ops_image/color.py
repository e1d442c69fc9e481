"""Colour and lighting augmentation of one ``(H, W, C)`` image (C = 1 or 3), MXNet 1.9.1's
arithmetic in float32 followed by ``saturate_cast``:

* brightness ``x * a``; contrast ``x * a + (1 - a) * mean(gray)``; hue: rotate the hue of
  every pixel by ``a * 360`` degrees through HLS; lighting: add AlexNet's PCA noise
  ``eigvec * (alpha * eigval)``;
* saturation: MXNet 1.9.1 blends each pixel with ``0.114 * blue`` (its gray sum assigns
  instead of accumulating); kept, so that augmented data equals MXNet's;
* ``random_*`` draw the factor uniformly from ``[min_factor, max_factor]``;
  ``random_color_jitter`` applies brightness, contrast, saturation and hue (factors
  ``1 + U(-b, b)`` ..., hue ``U(-h, h)``) in a random order, skipping zero ones (all
  zero: a copy, where MXNet leaves the output unwritten); ``random_lighting`` draws
  ``alpha ~ N(0, alpha_std)`` per channel.

The gradient is MXNet's pass-through. Single-channel images are copied by hue and
lighting, as MXNet's would be if it wrote its output.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._common import FloatTuple, HWCProp, register_op, saturate_cast

__all__ = ["register"]

F32 = np.float32
_COEF = np.array([0.299, 0.587, 0.114], dtype=F32)
_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]]).astype(F32)
#: HLS -> RGB: which of (p2, p1, falling, rising) each of b, g, r takes in each 60-degree sector
_SECTOR = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def _f(v: Any) -> float:
    """A float32 value as a Python float: exact, and usable with host and device arrays alike."""
    return float(F32(v))


def brightness(xp: Any, x: Any, a: float) -> Any:
    return x * _f(a)


def contrast(xp: Any, x: Any, a: float) -> Any:
    if x.shape[2] > 1:
        total = xp.matmul(x.reshape(-1, 3), xp.asarray(_COEF)).sum(dtype=np.float64)
    else:
        total = x.sum(dtype=np.float64)
    gray_mean = _f(float(total) / (x.shape[0] * x.shape[1]))
    return x * _f(a) + _f(_f(1 - _f(a)) * gray_mean)


def saturation(xp: Any, x: Any, a: float) -> Any:
    if x.shape[2] == 1:
        return x
    gray = x[..., 2:3] * _f(_COEF[2]) * _f(1 - _f(a))
    return gray + x * _f(a)


def hue(xp: Any, x: Any, a: float) -> Any:
    if x.shape[2] == 1:
        return x
    x = x / 255.0
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    vmax, vmin = xp.maximum(xp.maximum(r, g), b), xp.minimum(xp.minimum(r, g), b)
    diff = vmax - vmin
    light = (vmax + vmin) * 0.5
    chroma = diff > float(np.finfo(F32).eps)
    safe = xp.where(chroma, diff, 1.0)
    sat = xp.where(light < 0.5, safe / xp.where(chroma, vmax + vmin, 1.0),
                   safe / xp.where(chroma, 2.0 - vmax - vmin, 1.0))
    sat = xp.where(chroma, sat, 0.0)
    k = 60.0 / safe
    h = xp.where(vmax == r, (g - b) * k, xp.where(vmax == g, (b - r) * k + 120.0, (r - g) * k + 240.0))
    h = xp.where(h < 0, h + 360.0, h)
    h = xp.where(chroma, h, 0.0) + _f(_f(a) * 360.0)
    # back to RGB
    p2 = xp.where(light <= 0.5, light * (1.0 + sat), light + sat - light * sat)
    p1 = 2.0 * light - p2
    h = h * _f(1.0 / 60.0)
    h = h - 6.0 * xp.floor(h / 6.0)  # into [0, 6)
    h = xp.where(h >= 6, h - 6.0, h)
    sector = h.astype(np.int32)
    frac = h - sector.astype(np.float32)
    tab = xp.stack([p2, p1, p1 + (p2 - p1) * (1.0 - frac), p1 + (p2 - p1) * frac], axis=-1)
    pick = xp.asarray(_SECTOR)[sector]  # (..., 3): indices for b, g, r
    bgr = xp.take_along_axis(tab, pick, axis=-1)
    rgb = bgr[..., ::-1]
    rgb = xp.where((sat != 0)[..., None], rgb, light[..., None])
    return rgb * 255.0


def lighting(xp: Any, x: Any, alpha: Any) -> Any:
    if x.shape[2] == 1:
        return x
    pca = (_EIG * np.asarray(alpha, dtype=F32)[None, :]).sum(axis=1).astype(F32)
    x += xp.asarray(pca)  # x is the caller's float32 copy
    return x


class EnhanceParam(Params):
    min_factor = Field(float, low=0.0, doc="minimum factor")
    max_factor = Field(float, low=0.0, doc="maximum factor")


class _Adjust(HWCProp):
    """Base: draw (or take) the factor, apply, saturate_cast to the input dtype."""

    fn: Any = None

    def factor(self, rng: Any) -> Any:
        return float(F32(float(rng.uniform(self.param.min_factor, self.param.max_factor, 1)[0])))

    def compute(self, xp, x, rng):  # type: ignore[no-untyped-def]
        return saturate_cast(xp, type(self).fn(xp, x.astype(F32), self.factor(rng)), x.dtype)

    def forward_inplace_option(self, in_data, out_data):  # type: ignore[no-untyped-def]
        return [(in_data[0], out_data[0])]


class RandomBrightnessProp(_Adjust):
    """Scale an image's brightness by a factor drawn from [min_factor, max_factor]."""

    param_cls = EnhanceParam
    random = True
    fn = staticmethod(brightness)


class RandomContrastProp(RandomBrightnessProp):
    """Scale an image's contrast (around its mean gray) by a random factor."""

    fn = staticmethod(contrast)


class RandomSaturationProp(RandomBrightnessProp):
    """Scale an image's saturation by a random factor (MXNet 1.9.1's arithmetic)."""

    fn = staticmethod(saturation)


class RandomHueProp(RandomBrightnessProp):
    """Rotate an image's hue by a random fraction of a full turn."""

    fn = staticmethod(hue)


class ColorJitterParam(Params):
    brightness = Field(float, doc="how much to jitter brightness")
    contrast = Field(float, doc="how much to jitter contrast")
    saturation = Field(float, doc="how much to jitter saturation")
    hue = Field(float, doc="how much to jitter hue")


class RandomColorJitterProp(HWCProp):
    """Brightness, contrast, saturation and hue jitter in a random order."""

    param_cls = ColorJitterParam
    random = True

    def compute(self, xp, x, rng):  # type: ignore[no-untyped-def]
        p = self.param
        steps = [(brightness, p.brightness, 1.0), (contrast, p.contrast, 1.0), (saturation, p.saturation, 1.0),
                 (hue, p.hue, 0.0)]
        out = x
        for i in rng.permutation(4):
            fn, amount, base = steps[int(i)]
            if amount > 0:
                a = float(F32(base + float(F32(float(rng.uniform(-amount, amount, 1)[0])))))
                out = saturate_cast(xp, fn(xp, out.astype(F32), a), x.dtype)
        return out if out is not x else x.copy()


class AdjustLightingParam(Params):
    alpha = Field(FloatTuple, doc="the lighting alphas for the R, G, B channels")

    def __post_init__(self, op: str) -> None:
        if len(self.alpha) != 3:
            from plexnet.operator import ParamError
            raise ParamError(f"{op}: argument 'alpha' must have 3 values (R, G, B), got {tuple(self.alpha)}")


class AdjustLightingProp(_Adjust):
    """Add AlexNet-style PCA lighting noise with the given per-channel alphas."""

    param_cls = AdjustLightingParam
    fn = staticmethod(lighting)

    def factor(self, rng: Any) -> Any:
        return self.param.alpha


class RandomLightingParam(Params):
    alpha_std = Field(float, default=0.05, doc="level of the lighting noise")


class RandomLightingProp(_Adjust):
    """Add AlexNet-style PCA lighting noise with alphas drawn from N(0, alpha_std)."""

    param_cls = RandomLightingParam
    random = True
    fn = staticmethod(lighting)

    def factor(self, rng: Any) -> Any:
        return [float(F32(v)) for v in rng.normal(0.0, self.param.alpha_std, 3)] if self.param.alpha_std > 0 \
            else [0.0, 0.0, 0.0]


def register(registry: Any) -> None:
    for short, cls in (("random_brightness", RandomBrightnessProp), ("random_contrast", RandomContrastProp),
                       ("random_saturation", RandomSaturationProp), ("random_hue", RandomHueProp),
                       ("random_color_jitter", RandomColorJitterProp), ("adjust_lighting", AdjustLightingProp),
                       ("random_lighting", RandomLightingProp)):
        register_op(registry, short, cls)
