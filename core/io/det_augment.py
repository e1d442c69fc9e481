"""MXNet 1.9.1's default detection augmenter (``det_aug_default``) for ``ImageDetRecordIter``.

One BGR image and its raw label ``[header_width, object_width, header..., objects...]``
(objects ``[id, xmin, ymin, xmax, ymax, extra...]`` in ``[0, 1]``), in MXNet's order:

1. ``resize``: shorter edge to ``resize``;
2. colour, each with its probability: HLS offsets ``max_random_hue``,
   ``max_random_saturation``, ``max_random_illumination`` (OpenCV's HLS, as MXNet) and
   a contrast factor ``1 + c``, ``c`` in ``+-max_random_contrast``;
3. mirror with probability ``rand_mirror_prob`` (boxes too);
4. pad with probability ``rand_pad_prob`` to a square canvas ``U(1, max_pad_scale)``
   times the image (``fill_value``; skipped below 1.05);
5. crop with probability ``rand_crop_prob``: the samplers in a random order, each
   ``max_crop_trials`` boxes of scale/aspect ratio in its ranges, accepted when an
   object meets its overlap / coverage ranges; objects kept by ``crop_emit_mode``
   (``center``: centre inside the crop; ``overlap``: more than ``emit_overlap_thresh``
   of it inside) and clipped to the crop;
6. force-resize to ``data_shape``.

Objects with an empty box are dropped when the label is read, as MXNet does. Random
numbers come from the caller's ``numpy.random.Generator``.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from ..base import MXNetError
from .decode import cv2, inter_method

__all__ = ["DetAugParams", "DetAugmenter", "DET_AUG_PARAM_NAMES"]

_SAMPLER_FIELDS = ("min_crop_scales", "max_crop_scales", "min_crop_aspect_ratios", "max_crop_aspect_ratios",
                   "min_crop_overlaps", "max_crop_overlaps", "min_crop_sample_coverages",
                   "max_crop_sample_coverages", "min_crop_object_coverages", "max_crop_object_coverages",
                   "max_crop_trials")


def _tuple(v: Any) -> tuple[float, ...]:
    if isinstance(v, str):
        v = [x for x in v.strip("()[] ").split(",") if x.strip()]
    return tuple(float(x) for x in np.atleast_1d(v))


@dataclasses.dataclass
class DetAugParams:
    """``DefaultImageDetAugmentParam`` of MXNet 1.9.1 (same names and defaults)."""

    data_shape: tuple[int, int, int] = (3, 300, 300)
    resize: int = -1
    rand_crop_prob: float = 0.0
    min_crop_scales: Sequence[float] = (0.0,)
    max_crop_scales: Sequence[float] = (1.0,)
    min_crop_aspect_ratios: Sequence[float] = (1.0,)
    max_crop_aspect_ratios: Sequence[float] = (1.0,)
    min_crop_overlaps: Sequence[float] = (0.0,)
    max_crop_overlaps: Sequence[float] = (1.0,)
    min_crop_sample_coverages: Sequence[float] = (0.0,)
    max_crop_sample_coverages: Sequence[float] = (1.0,)
    min_crop_object_coverages: Sequence[float] = (0.0,)
    max_crop_object_coverages: Sequence[float] = (1.0,)
    num_crop_sampler: int = 1
    crop_emit_mode: str = "center"
    emit_overlap_thresh: float = 0.3
    max_crop_trials: Sequence[float] = (25,)
    rand_pad_prob: float = 0.0
    max_pad_scale: float = 1.0
    max_random_hue: int = 0
    random_hue_prob: float = 0.0
    max_random_saturation: int = 0
    random_saturation_prob: float = 0.0
    max_random_illumination: int = 0
    random_illumination_prob: float = 0.0
    max_random_contrast: float = 0.0
    random_contrast_prob: float = 0.0
    rand_mirror_prob: float = 0.0
    fill_value: int = 127
    inter_method: int = 1
    resize_mode: str = "force"

    def __post_init__(self) -> None:
        if self.inter_method not in (1, 2, 3, 4, 9, 10):
            raise MXNetError(f"ImageDetRecordIter: invalid inter_method {self.inter_method}: valid values are "
                             f"1, 2, 3, 4, 9, 10")
        if self.resize_mode != "force":
            raise MXNetError(f"ImageDetRecordIter: resize_mode={self.resize_mode!r} is not supported by plexnet "
                             f"(only 'force': images are resized to data_shape)")
        if self.crop_emit_mode not in ("center", "overlap"):
            raise MXNetError(f"ImageDetRecordIter: crop_emit_mode must be 'center' or 'overlap', got "
                             f"{self.crop_emit_mode!r}")
        n = int(self.num_crop_sampler)
        for name in _SAMPLER_FIELDS:
            v = _tuple(getattr(self, name))
            if n == 1 and len(v) != 1:
                raise MXNetError(f"ImageDetRecordIter: {name} has {len(v)} values for 1 crop sampler")
            if n > 1 and len(v) == 1:
                v = v * n
            elif n > 1 and len(v) != n:
                raise MXNetError(f"ImageDetRecordIter: {name} has {len(v)} values for num_crop_sampler={n}")
            setattr(self, name, v)
        for i in range(n):
            lo, hi = self.min_crop_scales[i], self.max_crop_scales[i]
            if not (0 <= lo < hi <= 1):
                raise MXNetError(f"ImageDetRecordIter: crop sampler {i}: need 0 <= min_crop_scales < "
                                 f"max_crop_scales <= 1, got {lo}, {hi}")
            for a, b in (("min_crop_aspect_ratios", "max_crop_aspect_ratios"), ("min_crop_overlaps",
                         "max_crop_overlaps"), ("min_crop_sample_coverages", "max_crop_sample_coverages"),
                         ("min_crop_object_coverages", "max_crop_object_coverages")):
                if getattr(self, b)[i] < getattr(self, a)[i]:
                    raise MXNetError(f"ImageDetRecordIter: crop sampler {i}: {b} < {a}")
        if self.emit_overlap_thresh < 0:
            raise MXNetError("ImageDetRecordIter: emit_overlap_thresh must be >= 0")


DET_AUG_PARAM_NAMES = frozenset(f.name for f in dataclasses.fields(DetAugParams))


def _inter_area(a: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
    """Intersection areas of ``(n, 4)`` ``[l, t, r, b]`` boxes with ``box`` (x, y, w, h)."""
    x, y, w, h = box
    iw = np.minimum(a[:, 2], x + w) - np.maximum(a[:, 0], x)
    ih = np.minimum(a[:, 3], y + h) - np.maximum(a[:, 1], y)
    return np.where((iw > 0) & (ih > 0), iw * ih, 0.0)


class DetAugmenter:
    """``process(img, label, rng, mirror_u)``: MXNet's ``det_aug_default`` (see the module)."""

    def __init__(self, params: DetAugParams) -> None:
        self.p = params

    @staticmethod
    def parse(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(header, objects)`` of a raw label; objects with empty boxes dropped."""
        raw = np.asarray(raw, np.float32).ravel()
        if raw.size < 7:
            raise MXNetError(f"detection label needs at least 7 values, got {raw.size}")
        hw, ow = int(raw[0]), int(raw[1])
        if hw < 2 or ow < 5 or (raw.size - hw) % ow:
            raise MXNetError(f"detection label {raw.tolist()[:6]}... is not [header_width >= 2, object_width >= 5, "
                             f"header..., objects of object_width values]")
        objs = raw[hw:].reshape(-1, ow).astype(np.float32)
        return raw[:hw].copy(), objs[(objs[:, 3] > objs[:, 1]) & (objs[:, 4] > objs[:, 2])]

    @staticmethod
    def _project(objs: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
        x, y, w, h = box
        out = objs.copy()
        out[:, 1] = np.maximum(0, (objs[:, 1] - x) / w)
        out[:, 2] = np.maximum(0, (objs[:, 2] - y) / h)
        out[:, 3] = np.minimum(1, (objs[:, 3] - x) / w)
        out[:, 4] = np.minimum(1, (objs[:, 4] - y) / h)
        return out

    def _color(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p = self.p
        h = int(rng.uniform(-1, 1) * p.max_random_hue)
        s = int(rng.uniform(-1, 1) * p.max_random_saturation)
        lum = int(rng.uniform(-1, 1) * p.max_random_illumination)
        c = float(np.float32(rng.uniform(-1, 1) * p.max_random_contrast))
        h = h if rng.random() < p.random_hue_prob else 0
        s = s if rng.random() < p.random_saturation_prob else 0
        lum = lum if rng.random() < p.random_illumination_prob else 0
        c = c if rng.random() < p.random_contrast_prob else 0.0
        cv = cv2()
        if (h or s or lum) and img.shape[2] == 3:
            hls = cv.cvtColor(np.ascontiguousarray(img), cv.COLOR_BGR2HLS).astype(np.int16)
            hls += np.array([h, lum, s], np.int16)
            np.clip(hls, 0, np.array([180, 255, 255], np.int16), out=hls)
            img = cv.cvtColor(hls.astype(np.uint8), cv.COLOR_HLS2BGR)
        if abs(c) > 1e-3:
            img = np.ascontiguousarray(img)
            img = cv.addWeighted(img, c + 1.0, img, 0.0, 0.0)
            img = img[:, :, None] if img.ndim == 2 else img
        return img

    def _crop_box(self, i: int, rng: np.random.Generator, img_ratio: float) -> tuple[float, float, float, float]:
        p = self.p
        f32 = np.float32
        scale = f32(rng.uniform(p.min_crop_scales[i], p.max_crop_scales[i])) + f32(1e-12)
        lo = max(f32(p.min_crop_aspect_ratios[i] / img_ratio), scale * scale)
        hi = min(f32(p.max_crop_aspect_ratios[i] / img_ratio), f32(1.0))  # MXNet: 1. / s * s
        ratio = f32(np.sqrt(f32(rng.uniform(lo, hi))))
        w = min(f32(1), scale * ratio)
        h = min(f32(1), scale / ratio)
        x0 = f32(rng.uniform(0, 1 - w))
        y0 = f32(rng.uniform(0, 1 - h))
        return float(x0), float(y0), float(w), float(h)

    def _try_crop(self, objs: np.ndarray, box: tuple[float, float, float, float], i: int) -> np.ndarray | None:
        p = self.p
        if len(objs) == 0:
            return objs
        lims = [(p.min_crop_overlaps[i], p.max_crop_overlaps[i]),
                (p.min_crop_sample_coverages[i], p.max_crop_sample_coverages[i]),
                (p.min_crop_object_coverages[i], p.max_crop_object_coverages[i])]
        if all(lo > 0 and hi < 1 for lo, hi in lims):  # MXNet checks objects only then
            boxes = objs[:, 1:5]
            inter = _inter_area(boxes, box)
            gt_area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
            crop_area = box[2] * box[3]
            iou = np.where(inter > 0, inter / (crop_area + gt_area - inter), 0.0)
            ok = np.ones(len(objs), bool)
            for v, (lo, hi) in zip((iou, inter / crop_area, inter / gt_area), lims):
                ok &= (v >= lo) & (v <= hi)
            if not ok.any():
                return None
        x, y, w, h = box
        if p.crop_emit_mode == "center":
            cx = (objs[:, 1] + objs[:, 3]) * 0.5
            cy = (objs[:, 2] + objs[:, 4]) * 0.5
            keep = (cx >= x) & (cx < x + w) & (cy >= y) & (cy < y + h)
        else:
            boxes = objs[:, 1:5]
            gt_area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
            keep = _inter_area(boxes, box) / gt_area > p.emit_overlap_thresh
        if not keep.any():
            return None
        return self._project(objs[keep], box)

    def process(self, img: np.ndarray, raw_label: np.ndarray, rng: np.random.Generator,
                mirror_u: float) -> tuple[np.ndarray, np.ndarray]:
        """Augment one ``(h, w, c)`` BGR image and its raw label; returns both (the label
        raw again: header, then the surviving objects)."""
        p = self.p
        cv = cv2()
        header, objs = self.parse(raw_label)
        if p.resize != -1:
            rows, cols = img.shape[:2]
            nh, nw = (p.resize * rows // cols, p.resize) if rows > cols else (p.resize, p.resize * cols // rows)
            img = cv.resize(img, (nw, nh), interpolation=inter_method(p.inter_method, cols, rows, nw, nh, rng))
            img = img[:, :, None] if img.ndim == 2 else img
        if p.random_hue_prob > 0 or p.random_saturation_prob > 0 or p.random_illumination_prob > 0 \
                or p.random_contrast_prob > 0:
            img = self._color(img, rng)
        if p.rand_mirror_prob > 0 and mirror_u < p.rand_mirror_prob:
            new_left = 1.0 - objs[:, 3]
            objs[:, 3] = 1.0 - objs[:, 1]
            objs[:, 1] = new_left
            img = img[:, ::-1]
        if p.rand_pad_prob > 0 and p.max_pad_scale > 1 and rng.random() < p.rand_pad_prob:
            s = float(np.float32(rng.uniform(1, p.max_pad_scale)))
            if s >= 1.05:
                x0 = float(np.float32(rng.uniform(0, s - 1)))
                y0 = float(np.float32(rng.uniform(0, s - 1)))
                objs = self._project(objs, (-x0, -y0, s, s))
                rows, cols = img.shape[:2]
                left, top = int(x0 * cols), int(y0 * rows)
                right, bot = int((s - x0 - 1) * cols), int((s - y0 - 1) * rows)
                img = cv.copyMakeBorder(np.ascontiguousarray(img), top, bot, left, right, cv.BORDER_CONSTANT,
                                        value=(p.fill_value,) * 4)
                img = img[:, :, None] if img.ndim == 2 else img
        if p.rand_crop_prob > 0 and p.num_crop_sampler > 0 and rng.random() < p.rand_crop_prob:
            rows, cols = img.shape[:2]
            for i in rng.permutation(int(p.num_crop_sampler)):
                done = False
                for _ in range(int(p.max_crop_trials[i])):
                    box = self._crop_box(int(i), rng, cols / rows)
                    new = self._try_crop(objs, box, int(i))
                    if new is not None:
                        objs = new
                        x, y = int(box[0] * cols), int(box[1] * rows)
                        img = img[y:y + int(box[3] * rows), x:x + int(box[2] * cols)]
                        done = True
                        break
                if done:
                    break
        rows, cols = img.shape[:2]
        _, h, w = p.data_shape
        img = cv.resize(np.ascontiguousarray(img), (w, h),
                        interpolation=inter_method(p.inter_method, cols, rows, w, h, rng))
        img = img[:, :, None] if img.ndim == 2 else img
        return img, np.concatenate([header, objs.ravel()])
