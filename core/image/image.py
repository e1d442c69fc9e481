"""``mx.image``: MXNet 1.x's image functions, augmenters and ``ImageIter``, on OpenCV.

Images are ``(h, w, c)`` NDArrays in RGB order, as in MXNet. The functions decode and
resize with OpenCV (the library MXNet's ``_cvimdecode``/``_cvimresize`` operators call,
so pixels match), do their arithmetic in numpy and hand back NDArrays. Random choices
use Python's ``random`` and numpy's global generator exactly where MXNet does, so
``random.seed``/``np.random.seed`` reproduce a run.
"""
from __future__ import annotations

import json
import os
import random
import warnings
from numbers import Number
from typing import Any, Sequence

import numpy as np

from ..base import MXNetError
from ..io.decode import cv2 as _cv2
from ..io.decode import imdecode_bgr
from ._util import as_nd, as_np

__all__ = ["imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short", "fixed_crop",
           "random_crop", "center_crop", "color_normalize", "random_size_crop", "imrotate", "random_rotate",
           "Augmenter", "SequentialAug", "ResizeAug", "ForceResizeAug", "RandomCropAug", "RandomSizedCropAug",
           "CenterCropAug", "RandomOrderAug", "BrightnessJitterAug", "ContrastJitterAug", "SaturationJitterAug",
           "HueJitterAug", "ColorJitterAug", "LightingAug", "ColorNormalizeAug", "RandomGrayAug",
           "HorizontalFlipAug", "CastAug", "CreateAugmenter", "Number", "cv2"]

try:  # MXNet exposes OpenCV's module as mx.image.cv2 (None without it)
    import cv2
except ImportError:  # pragma: no cover - depends on the environment
    cv2 = None  # type: ignore[assignment]

_GRAY = np.array([0.299, 0.587, 0.114], np.float32)
#: ImageNet's RGB PCA (eigenvalues x255, eigenvectors), MXNet's ``pca_noise`` defaults
EIGVAL = np.array([55.46, 4.794, 1.148])
EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])


# -- decoding, resizing, cropping -------------------------------------------------------------

def _decode_np(buf: Any, flag: int = 1, to_rgb: bool = True) -> np.ndarray:
    if hasattr(buf, "asnumpy"):
        buf = buf.asnumpy().astype(np.uint8, copy=False)
    elif not isinstance(buf, (bytes, bytearray, np.ndarray)):
        raise ValueError("imdecode: buf must be of type bytes, bytearray or numpy.ndarray, got "
                         f"{type(buf).__name__}; convert a str to bytes first")
    channels = {0: 1, 1: 3, -1: 4}.get(int(flag), 3)
    if int(flag) == -1:  # keep the file's channels
        arr = np.frombuffer(buf, np.uint8) if not isinstance(buf, np.ndarray) else buf.astype(np.uint8).ravel()
        img = _cv2().imdecode(arr, _cv2().IMREAD_UNCHANGED)
        if img is None:
            raise MXNetError(f"imdecode: cannot decode an image of {arr.size} bytes")
        img = img[:, :, None] if img.ndim == 2 else img
    else:
        img = imdecode_bgr(bytes(buf) if isinstance(buf, bytearray) else buf, channels)
    if to_rgb and img.shape[2] >= 3:
        img = img[:, :, [2, 1, 0] + list(range(3, img.shape[2]))]
    return np.ascontiguousarray(img)


def imdecode(buf: Any, flag: int = 1, to_rgb: bool | int = True, out: Any = None) -> Any:
    """Decode an encoded image (bytes, bytearray, uint8 numpy array or NDArray) to an
    ``(h, w, 3)`` uint8 NDArray (``flag=0``: ``(h, w, 1)`` grayscale; ``to_rgb=False``:
    OpenCV's BGR order)."""
    return as_nd(_decode_np(buf, flag, bool(to_rgb)), out)


def imread(filename: str, flag: int = 1, to_rgb: bool | int = True, out: Any = None) -> Any:
    """Read and decode an image file (see ``imdecode``)."""
    if not os.path.isfile(filename):
        raise MXNetError(f"imread: cannot open {filename!r}: no such file")
    with open(filename, "rb") as f:
        data = f.read()
    try:
        return imdecode(data, flag, to_rgb, out)
    except MXNetError as e:
        raise MXNetError(f"imread: {filename}: {e}") from e


def _interp(interp: int, sizes: Sequence[int] = ()) -> int:
    """MXNet's ``_get_interp_method``: 9 picks by direction ((oh, ow, nh, nw) sizes;
    bicubic without them), 10 a random one of 0-4 (Python's ``random``)."""
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f"Unknown interp method {interp}")
    return int(interp)


def _resize_np(src: np.ndarray, w: int, h: int, interp: int) -> np.ndarray:
    if w <= 0 or h <= 0:
        raise MXNetError(f"imresize: target size must be positive, got w={w}, h={h}")
    interp = interp if interp == 5 else _interp(interp)  # 5: OpenCV's INTER_LINEAR_EXACT
    out = _cv2().resize(np.ascontiguousarray(src), (int(w), int(h)), interpolation=interp)
    return out[:, :, None] if out.ndim == 2 else out


def imresize(src: Any, w: int, h: int, interp: int = 1, out: Any = None) -> Any:
    """Resize an ``(h, w, c)`` image to width ``w`` and height ``h`` with OpenCV
    (``interp`` 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 lanczos4, 5 exact bilinear;
    as MXNet's operator, others (also 9/10) are an MXNetError)."""
    a = as_np(src)
    if a.ndim != 3:
        raise MXNetError(f"imresize: expects an (h, w, c) image, got shape {a.shape}")
    # MXNet's operator hands interp straight to cv::resize (0-5; 5 is INTER_LINEAR_EXACT):
    # 9/10 are resolved by the Python augmenters only, anything else is OpenCV's error.
    if int(interp) not in (0, 1, 2, 3, 4, 5):
        raise MXNetError(f"imresize: Unknown interpolation method interp={interp} (OpenCV accepts 0-5)")
    return as_nd(_resize_np(a, w, h, int(interp)), out)


def scale_down(src_size: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """Shrink a ``(w, h)`` crop size, keeping its aspect ratio, to fit ``src_size`` ``(w, h)``."""
    w, h = float(size[0]), float(size[1])
    sw, sh = src_size
    if sh < h:
        w, h = w * sh / h, sh
    if sw < w:
        w, h = sw, h * sw / w
    return int(w), int(h)


def copyMakeBorder(src: Any, top: int, bot: int, left: int, right: int, type: int = 0,  # noqa: A002
                   value: float = 0.0, values: Sequence[float] = (), out: Any = None) -> Any:
    """Pad an image with OpenCV. ``type`` is OpenCV's border code, passed through as
    MXNet does: 0 constant, 1 replicate, 2 reflect, 3 wrap, 4 reflect-101 (+16:
    isolated); ``values`` per channel, else ``value``."""
    a = as_np(src)
    if int(type) & ~16 not in (0, 1, 2, 3, 4):
        raise MXNetError(f"copyMakeBorder: unknown border type {type}")
    fill = tuple(float(v) for v in values) if len(values) else (float(value),) * 4
    res = _cv2().copyMakeBorder(np.ascontiguousarray(a), int(top), int(bot), int(left), int(right), int(type),
                                value=fill + (fill[-1],) * (4 - len(fill)))
    return as_nd(res[:, :, None] if res.ndim == 2 else res, out)


def resize_short(src: Any, size: int, interp: int = 2) -> Any:
    """Resize the shorter edge to ``size`` (the longer one in proportion, rounded down)."""
    a = as_np(src)
    h, w = a.shape[:2]
    nh, nw = (size * h // w, size) if h > w else (size, size * w // h)
    return as_nd(_resize_np(a, nw, nh, _interp(interp, (h, w, nh, nw))))


def fixed_crop(src: Any, x0: int, y0: int, w: int, h: int, size: tuple[int, int] | None = None,
               interp: int = 2) -> Any:
    """Crop ``(x0, y0, w, h)``; resize to ``size`` ``(w, h)`` when given and different."""
    a = as_np(src)[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        a = _resize_np(a, size[0], size[1], _interp(interp, (h, w, size[1], size[0])))
    return as_nd(a)


def random_crop(src: Any, size: tuple[int, int], interp: int = 2) -> tuple[Any, tuple[int, int, int, int]]:
    """A crop of ``size`` ``(w, h)`` at a random place (scaled down to fit, then resized
    to ``size``); returns the image and ``(x0, y0, w, h)``."""
    h, w = as_np(src).shape[:2]
    nw, nh = scale_down((w, h), size)
    x0 = random.randint(0, w - nw)
    y0 = random.randint(0, h - nh)
    return fixed_crop(src, x0, y0, nw, nh, size, interp), (x0, y0, nw, nh)


def center_crop(src: Any, size: tuple[int, int], interp: int = 2) -> tuple[Any, tuple[int, int, int, int]]:
    """The centred crop of ``size`` ``(w, h)`` (scaled down to fit, resized to ``size``)."""
    h, w = as_np(src).shape[:2]
    nw, nh = scale_down((w, h), size)
    x0, y0 = int((w - nw) / 2), int((h - nh) / 2)
    return fixed_crop(src, x0, y0, nw, nh, size, interp), (x0, y0, nw, nh)


def color_normalize(src: Any, mean: Any, std: Any = None) -> Any:
    """``(src - mean) / std`` (either may be None); in place when ``src`` is an NDArray."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src: Any, size: tuple[int, int], area: Any, ratio: tuple[float, float], interp: int = 2,
                     **kwargs: Any) -> tuple[Any, tuple[int, int, int, int]]:
    """A crop of random area (``area``: min fraction, or ``(min, max)``) and aspect ratio
    (log-uniform in ``ratio``), resized to ``size``; the centre crop after 10 misses."""
    if "min_area" in kwargs:
        warnings.warn("`min_area` is deprecated. Please use `area` instead.", DeprecationWarning, stacklevel=2)
        area = kwargs.pop("min_area")
    if kwargs:
        raise TypeError(f"random_size_crop: unexpected keyword arguments {sorted(kwargs)}")
    h, w = as_np(src).shape[:2]
    if isinstance(area, Number):
        area = (area, 1.0)
    for _ in range(10):
        target = random.uniform(area[0], area[1]) * h * w
        new_ratio = np.exp(random.uniform(np.log(ratio[0]), np.log(ratio[1])))
        nw = int(round(np.sqrt(target * new_ratio)))
        nh = int(round(np.sqrt(target / new_ratio)))
        if nw <= w and nh <= h:
            x0 = random.randint(0, w - nw)
            y0 = random.randint(0, h - nh)
            return fixed_crop(src, x0, y0, nw, nh, size, interp), (x0, y0, nw, nh)
    return center_crop(src, size, interp)


def imrotate(src: Any, rotation_degrees: Any, zoom_in: bool = False, zoom_out: bool = False) -> Any:
    """Rotate float32 ``(c, h, w)`` image(s) (or a ``(n, c, h, w)`` batch, one angle each)
    about the centre with bilinear sampling and zero fill, as MXNet's ``BilinearSampler``
    grid; ``zoom_in`` hides the padding, ``zoom_out`` keeps the whole image."""
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    a = as_np(src)
    if a.dtype != np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    single = a.ndim == 3
    if single:
        if not isinstance(rotation_degrees, (int, float)):
            raise TypeError("When a single image is passed the rotation angle is required to be a scalar.")
        a = a[None]
    elif a.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    angles = (np.full(len(a), float(rotation_degrees)) if isinstance(rotation_degrees, (int, float))
              else as_np(rotation_degrees).astype(np.float64).ravel())
    if len(angles) != len(a):
        raise ValueError("The number of images must be equal to the number of rotation angles")
    n, c, h, w = a.shape
    out = np.empty_like(a)
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    ys, xs = ys - hs, xs - ws
    for i in range(n):
        rad = np.pi * angles[i] / 180
        ca, sa = np.cos(rad), np.sin(rad)
        gx = (xs * ca - ys * sa) / ws if ws else xs * 0
        gy = (xs * sa + ys * ca) / hs if hs else ys * 0
        scale = 1.0
        if zoom_in or zoom_out:
            rho, ang = np.hypot(h, w), np.arctan(h / w)
            mx_ = max(abs(rho * np.cos(ang + abs(rad))), abs(rho * np.cos(ang - abs(rad))))
            my_ = max(abs(rho * np.sin(ang + abs(rad))), abs(rho * np.sin(ang - abs(rad))))
            scale = max(mx_ / w, my_ / h) if zoom_out else min(w / mx_, h / my_)
        px = (gx * scale + 1) * (w - 1) / 2  # BilinearSampler's grid -> pixel coordinates
        py = (gy * scale + 1) * (h - 1) / 2
        x0, y0 = np.floor(px).astype(np.int64), np.floor(py).astype(np.int64)
        fx, fy = px - x0, py - y0
        acc = np.zeros((c, h, w), np.float64)
        for dy, dx, wt in ((0, 0, (1 - fx) * (1 - fy)), (0, 1, fx * (1 - fy)), (1, 0, (1 - fx) * fy),
                           (1, 1, fx * fy)):
            yy, xx = y0 + dy, x0 + dx
            ok = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            vals = a[i][:, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
            acc += np.where(ok, wt, 0.0) * vals
        out[i] = acc
    return as_nd(out[0] if single else out)


def random_rotate(src: Any, angle_limits: tuple[float, float], zoom_in: bool = False,
                  zoom_out: bool = False) -> Any:
    """``imrotate`` by a uniformly random angle in ``angle_limits`` (one per image)."""
    a = as_np(src)
    if a.ndim == 3:
        return imrotate(src, float(np.random.uniform(*angle_limits)), zoom_in, zoom_out)
    deg = np.asarray(np.random.uniform(*angle_limits, size=a.shape[0]), np.float32)
    return imrotate(src, as_nd(deg), zoom_in, zoom_out)


# -- augmenters ----------------------------------------------------------------------------------

class _Settings:
    """Keeps the constructor's settings (arrays as lists) for ``dumps()``."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        for k, v in self._kwargs.items():
            if hasattr(v, "asnumpy"):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self) -> Any:
        """``[class name lower-cased, settings]`` as JSON."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])


class Augmenter(_Settings):
    """Image augmenter base class: ``__call__(src) -> src``; ``dumps()`` its settings."""

    def __call__(self, src: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must override __call__")


class SequentialAug(Augmenter):
    """Apply ``ts`` in order."""

    def __init__(self, ts: list[Augmenter]) -> None:
        super().__init__()
        self.ts = ts

    def dumps(self) -> Any:
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]

    def __call__(self, src: Any) -> Any:
        for aug in self.ts:
            src = aug(src)
        return src


class RandomOrderAug(SequentialAug):
    """Apply ``ts`` in a random order (``random.shuffle``)."""

    def __call__(self, src: Any) -> Any:
        random.shuffle(self.ts)
        return super().__call__(src)


class ResizeAug(Augmenter):
    """``resize_short(src, size, interp)``."""

    def __init__(self, size: int, interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: Any) -> Any:
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(Augmenter):
    """Resize to ``size`` ``(w, h)`` regardless of the aspect ratio."""

    def __init__(self, size: tuple[int, int], interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: Any) -> Any:
        a = as_np(src)
        sizes = (a.shape[0], a.shape[1], self.size[1], self.size[0])
        return as_nd(_resize_np(a, self.size[0], self.size[1], _interp(self.interp, sizes)))


class RandomCropAug(Augmenter):
    """``random_crop(src, size, interp)``."""

    def __init__(self, size: tuple[int, int], interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: Any) -> Any:
        return random_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """``random_size_crop(src, size, area, ratio, interp)``."""

    def __init__(self, size: tuple[int, int], area: Any, ratio: tuple[float, float], interp: int = 2,
                 **kwargs: Any) -> None:
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        if "min_area" in kwargs:
            warnings.warn("`min_area` is deprecated. Please use `area` instead.", DeprecationWarning, stacklevel=2)
            area = kwargs.pop("min_area")
        if kwargs:
            raise TypeError(f"RandomSizedCropAug: unexpected keyword arguments {sorted(kwargs)}")
        self.size, self.area, self.ratio, self.interp = size, area, ratio, interp

    def __call__(self, src: Any) -> Any:
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(Augmenter):
    """``center_crop(src, size, interp)``."""

    def __init__(self, size: tuple[int, int], interp: int = 2) -> None:
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src: Any) -> Any:
        return center_crop(src, self.size, self.interp)[0]


class BrightnessJitterAug(Augmenter):
    """Multiply by ``1 + U(-brightness, brightness)``."""

    def __init__(self, brightness: float) -> None:
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src: Any) -> Any:
        alpha = 1.0 + random.uniform(-self.brightness, self.brightness)
        return as_nd(as_np(src) * np.float32(alpha))


class ContrastJitterAug(Augmenter):
    """Blend with the mean gray level: ``alpha * src + (1 - alpha) * mean(gray)``."""

    def __init__(self, contrast: float) -> None:
        super().__init__(contrast=contrast)
        self.contrast = contrast

    def __call__(self, src: Any) -> Any:
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        a = as_np(src)
        gray = 3.0 * (1.0 - alpha) / a.size * float((a * _GRAY).sum())
        return as_nd(a * np.float32(alpha) + np.float32(gray))


class SaturationJitterAug(Augmenter):
    """Blend each pixel with its gray level: ``alpha * src + (1 - alpha) * gray``."""

    def __init__(self, saturation: float) -> None:
        super().__init__(saturation=saturation)
        self.saturation = saturation

    def __call__(self, src: Any) -> Any:
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        a = as_np(src)
        gray = (a * _GRAY).sum(axis=2, keepdims=True) * np.float32(1.0 - alpha)
        return as_nd(a * np.float32(alpha) + gray)


class HueJitterAug(Augmenter):
    """Rotate the hue by ``U(-hue, hue) * pi`` in YIQ space."""

    def __init__(self, hue: float) -> None:
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
        self.ityiq = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])

    def __call__(self, src: Any) -> Any:
        alpha = random.uniform(-self.hue, self.hue)
        u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        bt = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = np.dot(np.dot(self.ityiq, bt), self.tyiq).T
        a = as_np(src)
        return as_nd(np.dot(a, t.astype(np.float32)).astype(a.dtype, copy=False))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter (those > 0) in a random order."""

    def __init__(self, brightness: float, contrast: float, saturation: float) -> None:
        ts: list[Augmenter] = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet's PCA lighting noise: add ``eigvec @ (alpha * eigval)``, ``alpha ~ N(0, alphastd)``."""

    def __init__(self, alphastd: float, eigval: Any, eigvec: Any) -> None:
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd, self.eigval, self.eigvec = alphastd, np.asarray(eigval), np.asarray(eigvec)

    def __call__(self, src: Any) -> Any:
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = np.dot(self.eigvec * alpha, self.eigval)
        a = as_np(src)
        return as_nd((a + rgb.astype(np.float32)).astype(a.dtype, copy=False))


class ColorNormalizeAug(Augmenter):
    """``color_normalize(src, mean, std)``."""

    def __init__(self, mean: Any, std: Any) -> None:
        super().__init__(mean=mean, std=std)
        self.mean = None if mean is None else np.asarray(as_np(mean), np.float32)
        self.std = None if std is None else np.asarray(as_np(std), np.float32)

    def __call__(self, src: Any) -> Any:
        a = as_np(src).astype(np.float32)
        return as_nd(color_normalize(a, self.mean, self.std))


class RandomGrayAug(Augmenter):
    """With probability ``p``, replace every channel by the luma (0.21 R + 0.72 G + 0.07 B)."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p
        self.mat = np.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]], np.float32)

    def __call__(self, src: Any) -> Any:
        if random.random() < self.p:
            a = as_np(src)
            return as_nd(np.dot(a, self.mat).astype(a.dtype, copy=False))
        return src


class HorizontalFlipAug(Augmenter):
    """Flip left-right with probability ``p``."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p

    def __call__(self, src: Any) -> Any:
        if random.random() < self.p:
            return as_nd(as_np(src)[:, ::-1])
        return src


class CastAug(Augmenter):
    """Cast to ``typ`` (float32 by default)."""

    def __init__(self, typ: str = "float32") -> None:
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src: Any) -> Any:
        return as_nd(as_np(src).astype(self.typ))


def CreateAugmenter(data_shape: Sequence[int], resize: int = 0, rand_crop: bool = False,  # noqa: N802
                    rand_resize: bool = False, rand_mirror: bool = False, mean: Any = None, std: Any = None,
                    brightness: float = 0, contrast: float = 0, saturation: float = 0, hue: float = 0,
                    pca_noise: float = 0, rand_gray: float = 0, inter_method: int = 2) -> list[Augmenter]:
    """MXNet's standard augmenter list: resize, crop (random-sized, random or centre),
    mirror, cast, colour jitter, hue, lighting, gray, normalisation (``mean``/``std``
    True: ImageNet's)."""
    auglist: list[Augmenter] = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise ValueError("CreateAugmenter: rand_resize=True needs rand_crop=True")
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        auglist.append(LightingAug(pca_noise, EIGVAL, EIGVEC))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    mean, std = _mean_std(mean, std)
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


def _mean_std(mean: Any, std: Any) -> tuple[Any, Any]:
    if mean is True:
        mean = np.array([123.68, 116.28, 103.53])
    elif mean is not None and as_np(mean).shape[0] not in (1, 3):
        raise ValueError(f"mean must hold 1 or 3 values, got shape {as_np(mean).shape}")
    if std is True:
        std = np.array([58.395, 57.12, 57.375])
    elif std is not None and as_np(std).shape[0] not in (1, 3):
        raise ValueError(f"std must hold 1 or 3 values, got shape {as_np(std).shape}")
    return mean, std
