"""MXNet 1.9.1's default image augmenter (``aug_default``) for the record iterators.

One image, OpenCV layout (``(h, w, c)`` uint8, BGR), in MXNet's order of operations:

1. ``resize``: shorter edge to ``resize`` (``inter_method``);
2. ``random_resized_crop``: a crop of random area (``[min_random_area, max_random_area]``
   of the image) and aspect ratio (``[min_aspect_ratio, max_aspect_ratio]``), width and
   height swapped with probability 1/2, resized to ``data_shape``; 10 tries, then the
   ordinary crop of step 5; *or else* an affine warp when any of ``max_rotate_angle``,
   ``rotate``, ``rotate_list``, ``max_shear_ratio``, ``min/max_random_scale``,
   ``max_aspect_ratio``, ``min/max_img_size`` is set (border ``fill_value``);
3. ``pad`` pixels of ``fill_value`` on every side;
4. (no random-resized crop) ``min/max_crop_size``: a square of random size, resized to
   ``data_shape``; or else a ``data_shape`` crop, random (``rand_crop``) or centred;
5. ``random_h/s/l``: offsets in OpenCV's HLS space (H clipped to 180);
6. ``brightness``, ``contrast``, ``saturation`` jitter, in a random order;
7. ``pca_noise``: AlexNet-style lighting noise with ImageNet's eigenvectors.

Random numbers come from a ``numpy.random.Generator`` the caller seeds (so results
are reproducible but not MXNet's ``std::mt19937`` draws). Deterministic settings
(resize, fixed ``rotate``, pad, fixed crop size, centre crop) give MXNet's pixels.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..base import MXNetError
from .decode import cv2, inter_method

__all__ = ["AugParams", "DefaultAugmenter", "AUG_PARAM_NAMES"]

#: ImageNet's RGB eigenvalues (x255) and eigenvectors, as MXNet's ``pca_noise`` uses them
_EIGVAL = np.array([55.46, 4.794, 1.148], np.float32)
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                    [-0.5808, -0.0045, -0.8140],
                    [-0.5836, -0.6948, 0.4203]], np.float32)


@dataclasses.dataclass
class AugParams:
    """The parameters of MXNet's ``DefaultImageAugmentParam`` (1.9.1), same defaults."""

    data_shape: tuple[int, int, int] = (3, 224, 224)
    resize: int = -1
    rand_crop: bool = False
    random_resized_crop: bool = False
    max_rotate_angle: int = 0
    max_aspect_ratio: float = 0.0
    min_aspect_ratio: float | None = None
    max_shear_ratio: float = 0.0
    max_crop_size: int = -1
    min_crop_size: int = -1
    max_random_scale: float = 1.0
    min_random_scale: float = 1.0
    max_random_area: float = 1.0
    min_random_area: float = 1.0
    max_img_size: float = 1e10
    min_img_size: float = 0.0
    brightness: float = 0.0
    contrast: float = 0.0
    saturation: float = 0.0
    pca_noise: float = 0.0
    random_h: int = 0
    random_s: int = 0
    random_l: int = 0
    rotate: int = -1
    rotate_list: tuple[int, ...] = ()
    fill_value: int = 255
    inter_method: int = 1
    pad: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.rotate_list, str):
            self.rotate_list = tuple(int(v) for v in self.rotate_list.split(",") if v.strip())
        self.rotate_list = tuple(int(v) for v in self.rotate_list)
        if self.inter_method not in (0, 1, 2, 3, 4, 9, 10):
            raise ValueError(f"ImageRecordIter: invalid inter_method {self.inter_method}: valid values are "
                             f"0 (nearest), 1 (bilinear), 2 (bicubic), 3 (area), 4 (lanczos4), 9 (auto), "
                             f"10 (random)")
        if self.random_resized_crop and (self.min_random_scale != 1.0 or self.max_random_scale != 1.0
                                         or self.min_crop_size != -1 or self.max_crop_size != -1
                                         or self.rand_crop):
            raise MXNetError("ImageRecordIter: random_resized_crop=True cannot be combined with "
                             "min_random_scale/max_random_scale, min_crop_size/max_crop_size or rand_crop "
                             "(MXNet refuses it too)")
        if (self.max_crop_size != -1 or self.min_crop_size != -1) and self.max_crop_size < self.min_crop_size:
            raise MXNetError(f"ImageRecordIter: max_crop_size {self.max_crop_size} < min_crop_size "
                             f"{self.min_crop_size}")

    @property
    def affine(self) -> bool:
        """Whether step 2's affine warp runs (MXNet's condition)."""
        return (self.max_rotate_angle > 0 or self.max_shear_ratio > 0 or self.rotate > 0
                or bool(self.rotate_list) or self.max_random_scale != 1.0 or self.min_random_scale != 1.0
                or self.max_aspect_ratio != 0.0 or self.min_aspect_ratio is not None
                or self.max_img_size != 1e10 or self.min_img_size != 0.0)


AUG_PARAM_NAMES = frozenset(f.name for f in dataclasses.fields(AugParams))


class DefaultAugmenter:
    """``process(img, rng)``: MXNet's ``aug_default`` on one BGR image (see the module)."""

    def __init__(self, params: AugParams) -> None:
        self.p = params
        self.c, self.h, self.w = params.data_shape

    def _check_not_nearest(self, step: str) -> None:
        if self.p.inter_method == 0:  # MXNet's CHECK in its resize and affine steps
            raise MXNetError(f"ImageRecordIter: inter_method 0 (nearest) is not accepted with {step} "
                             f"(MXNet allows 1, 2, 3, 4, 9, 10 there)")

    def _resize(self, img: np.ndarray, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        flag = inter_method(self.p.inter_method, img.shape[1], img.shape[0], w, h, rng)
        out = cv2().resize(img, (w, h), interpolation=flag)
        return out[:, :, None] if out.ndim == 2 else out

    def _affine(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p = self.p
        s = np.float32(rng.random() * p.max_shear_ratio * 2 - p.max_shear_ratio)
        angle = int(rng.integers(-p.max_rotate_angle, p.max_rotate_angle + 1))
        if p.rotate > 0:
            angle = p.rotate
        if p.rotate_list:
            angle = p.rotate_list[int(rng.integers(0, len(p.rotate_list)))]
        a = np.float32(math.cos(angle / 180.0 * math.pi))
        b = np.float32(math.sin(angle / 180.0 * math.pi))
        scale = np.float32(rng.random() * (p.max_random_scale - p.min_random_scale) + p.min_random_scale)
        if p.min_aspect_ratio is not None:
            ratio = np.float32(rng.uniform(p.min_aspect_ratio, p.max_aspect_ratio))
        else:
            ratio = np.float32(rng.random() * p.max_aspect_ratio * 2 - p.max_aspect_ratio + 1)
        hs = np.float32(2 * scale / (1 + ratio))
        ws = np.float32(ratio * hs)
        rows, cols = img.shape[:2]
        new_w = float(np.float32(max(p.min_img_size, min(p.max_img_size, float(scale * cols)))))
        new_h = float(np.float32(max(p.min_img_size, min(p.max_img_size, float(scale * rows)))))
        m = np.empty((2, 3), np.float32)
        m[0, 0] = hs * a - s * b * ws
        m[1, 0] = -b * ws
        m[0, 1] = hs * b + s * a * ws
        m[1, 1] = a * ws
        cw = m[0, 0] * cols + m[0, 1] * rows
        ch = m[1, 0] * cols + m[1, 1] * rows
        m[0, 2] = (np.float32(new_w) - cw) / 2
        m[1, 2] = (np.float32(new_h) - ch) / 2
        size = (int(new_w), int(new_h))  # cv::Size(float, float) truncates
        self._check_not_nearest("an affine transform (rotate, shear, scale, aspect ratio, img size)")
        flag = inter_method(p.inter_method, cols, rows, size[0], size[1], rng)
        cv = cv2()
        out = cv.warpAffine(img, m, size, flags=flag, borderMode=cv.BORDER_CONSTANT,
                            borderValue=(p.fill_value,) * 4)
        return out[:, :, None] if out.ndim == 2 else out

    def _random_resized_crop(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
        p = self.p
        lo_r = p.min_aspect_ratio if p.min_aspect_ratio is not None else 1 - p.max_aspect_ratio
        hi_r = p.max_aspect_ratio if p.min_aspect_ratio is not None else 1 + p.max_aspect_ratio
        if not (p.max_random_area != 1.0 or p.min_random_area != 1.0 or lo_r != 1.0 or hi_r != 1.0):
            return None
        if lo_r <= 0 or p.min_random_area > p.max_random_area or lo_r > hi_r:
            raise MXNetError(f"ImageRecordIter: random_resized_crop needs 0 < min_aspect_ratio <= "
                             f"max_aspect_ratio and min_random_area <= max_random_area, got aspect "
                             f"[{lo_r}, {hi_r}], area [{p.min_random_area}, {p.max_random_area}]")
        rows, cols = img.shape[:2]
        area = rows * cols
        for _ in range(10):
            target = area * rng.uniform(p.min_random_area, p.max_random_area)
            ratio = rng.uniform(lo_r, hi_r)
            ch = int(round(math.sqrt(target / ratio)))
            cw = int(round(math.sqrt(target * ratio)))
            if rng.random() > 0.5:
                ch, cw = cw, ch
            if 0 < ch <= rows and 0 < cw <= cols:
                y = int(rng.integers(0, rows - ch + 1))
                x = int(rng.integers(0, cols - cw + 1))
                return self._resize(img[y:y + ch, x:x + cw], self.w, self.h, rng)
        return None

    def _crop(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p = self.p
        rows, cols = img.shape[:2]
        if p.max_crop_size != -1 or p.min_crop_size != -1:
            if cols < p.max_crop_size or rows < p.max_crop_size:
                raise MXNetError(f"ImageRecordIter: image of {rows}x{cols} is smaller than max_crop_size "
                                 f"{p.max_crop_size}")
            size = int(rng.integers(p.min_crop_size, p.max_crop_size + 1))
            y, x = rows - size, cols - size
            if p.rand_crop:
                y, x = int(rng.integers(0, y + 1)), int(rng.integers(0, x + 1))
            else:
                y, x = y // 2, x // 2
            return self._resize(img[y:y + size, x:x + size], self.w, self.h, rng)
        # MXNet 1.9.1 scales an image smaller than data_shape up, keeping its aspect ratio: first
        # the rows to data_shape's height, then the columns to its width (sizes truncated)
        if rows < self.h:
            img = self._resize(img, cols * self.h // rows, self.h, rng)
            rows, cols = img.shape[:2]
        if cols < self.w:
            img = self._resize(img, self.w, rows * self.w // cols, rng)
            rows, cols = img.shape[:2]
        y, x = rows - self.h, cols - self.w
        if p.rand_crop:
            y, x = int(rng.integers(0, y + 1)), int(rng.integers(0, x + 1))
        else:
            y, x = y // 2, x // 2
        return img[y:y + self.h, x:x + self.w]

    def _hls(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p = self.p
        cv = cv2()
        dh = int(rng.random() * p.random_h * 2 - p.random_h)
        ds = int(rng.random() * p.random_s * 2 - p.random_s)
        dl = int(rng.random() * p.random_l * 2 - p.random_l)
        hls = cv.cvtColor(np.ascontiguousarray(img), cv.COLOR_BGR2HLS).astype(np.int16)
        hls += np.array([dh, dl, ds], np.int16)
        np.clip(hls, 0, np.array([180, 255, 255], np.int16), out=hls)
        return cv.cvtColor(hls.astype(np.uint8), cv.COLOR_HLS2BGR)

    def _jitter(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p = self.p
        cv = cv2()
        alpha_b = 1.0 + rng.uniform(-p.brightness, p.brightness)
        alpha_c = 1.0 + rng.uniform(-p.contrast, p.contrast)
        alpha_s = 1.0 + rng.uniform(-p.saturation, p.saturation)
        img = np.ascontiguousarray(img)
        for op in rng.permutation(3):
            if op == 0 and p.brightness > 0:
                img = cv.addWeighted(img, alpha_b, img, 0.0, 0.0)
            elif op == 1 and p.contrast > 0:
                # MXNet converts its BGR image with CV_RGB2GRAY here; kept for the same pixels
                gray_mean = cv.mean(cv.cvtColor(img, cv.COLOR_RGB2GRAY))[0]
                img = cv.addWeighted(img, alpha_c, img, 0.0, (1 - alpha_c) * gray_mean)
            elif op == 2 and p.saturation > 0:
                gray = cv.cvtColor(cv.cvtColor(img, cv.COLOR_RGB2GRAY), cv.COLOR_GRAY2BGR)
                img = cv.addWeighted(img, alpha_s, gray, 1 - alpha_s, 0.0)
        return img

    def _pca(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        alpha = rng.normal(0, self.p.pca_noise, 3).astype(np.float32)
        rgb = _EIGVEC @ (alpha * _EIGVAL)
        delta = np.trunc(rgb[::-1]).astype(np.int16)  # BGR order; int += float truncates
        out = img.astype(np.int16) + delta
        return np.clip(out, 0, 255).astype(np.uint8)

    def process(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Augment one ``(h, w, c)`` uint8 BGR image; returns ``(data_h, data_w, c)``."""
        p = self.p
        if p.resize != -1:
            rows, cols = img.shape[:2]
            if rows > cols:
                nh, nw = p.resize * rows // cols, p.resize
            else:
                nh, nw = p.resize, p.resize * cols // rows
            self._check_not_nearest("resize")
            img = self._resize(img, nw, nh, rng)
        cropped = False
        if p.random_resized_crop:
            out = self._random_resized_crop(img, rng)
            if out is not None:
                img, cropped = out, True
        elif p.affine:
            img = self._affine(img, rng)
        if p.pad > 0 and not cropped:
            cv = cv2()
            img = cv.copyMakeBorder(img, p.pad, p.pad, p.pad, p.pad, cv.BORDER_CONSTANT,
                                    value=(p.fill_value,) * 4)
            if img.ndim == 2:
                img = img[:, :, None]
        if not cropped:
            img = self._crop(img, rng)
        if img.shape[2] >= 3:
            if p.random_h or p.random_s or p.random_l:
                img = self._hls(img[:, :, :3], rng) if img.shape[2] == 3 else img
            if p.brightness > 0 or p.contrast > 0 or p.saturation > 0:
                if img.shape[2] == 3:
                    img = self._jitter(img, rng)
            if p.pca_noise > 0 and img.shape[2] == 3:
                img = self._pca(img, rng)
        return img


def split_aug_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pop the augmenter's parameters out of ``kwargs`` (an iterator's extra arguments)."""
    return {k: kwargs.pop(k) for k in list(kwargs) if k in AUG_PARAM_NAMES}
