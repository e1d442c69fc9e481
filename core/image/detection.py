"""``mx.image`` detection: augmenters that move boxes with the pixels, and ``ImageDetIter``.

A label is an ``(n, 5+)`` array of objects ``[class, xmin, ymin, xmax, ymax, ...]`` with
coordinates relative to the image (in ``[0, 1]``). Random draws use Python's ``random``
where MXNet does.
"""
from __future__ import annotations

import logging
import random
import warnings
from math import sqrt
from numbers import Number
from typing import Any, Sequence

import numpy as np

from ..io.base import DataDesc
from ._util import as_nd, as_np
from .image import (EIGVAL, EIGVEC, Augmenter, CastAug, ColorJitterAug, ColorNormalizeAug, ForceResizeAug,
                    HueJitterAug, LightingAug, RandomGrayAug, ResizeAug, _mean_std, _Settings, copyMakeBorder,
                    fixed_crop)
from .image_iter import ImageIter

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug", "DetRandomCropAug",
           "DetRandomPadAug", "CreateMultiRandCropAugmenter", "CreateDetAugmenter", "ImageDetIter"]

log = logging.getLogger(__name__)


def _pair(v: Any, what: str, cls: str) -> tuple[float, float]:
    if isinstance(v, (tuple, list)):
        return float(v[0]), float(v[1])
    if not isinstance(v, Number):
        raise TypeError(f"{cls}: {what} must be a number or a (min, max) pair, got {v!r}")
    return float(v), float(v)  # type: ignore[arg-type]


def _areas(boxes: np.ndarray) -> np.ndarray:
    """Areas of ``(n, 4)`` ``[xmin, ymin, xmax, ymax]`` boxes (0 when empty)."""
    return np.maximum(0, boxes[:, 3] - boxes[:, 1]) * np.maximum(0, boxes[:, 2] - boxes[:, 0])


class DetAugmenter(_Settings):
    """Detection augmenter base class: ``__call__(src, label) -> (src, label)``."""

    def __call__(self, src: Any, label: np.ndarray) -> tuple[Any, np.ndarray]:
        raise NotImplementedError(f"{type(self).__name__} must override __call__")


class DetBorrowAug(DetAugmenter):
    """Use an image-only ``Augmenter`` (one that keeps relative box positions)."""

    def __init__(self, augmenter: Augmenter) -> None:
        if not isinstance(augmenter, Augmenter):
            raise TypeError("Borrowing from invalid Augmenter")
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self) -> Any:
        return [self.__class__.__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src: Any, label: np.ndarray) -> tuple[Any, np.ndarray]:
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """Apply one of ``aug_list`` picked at random, or none with probability ``skip_prob``."""

    def __init__(self, aug_list: Any, skip_prob: float = 0) -> None:
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError("Allow DetAugmenter in list only")
        self.aug_list = list(aug_list)
        self.skip_prob = 1 if not aug_list else skip_prob

    def dumps(self) -> Any:
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.aug_list]]

    def __call__(self, src: Any, label: np.ndarray) -> tuple[Any, np.ndarray]:
        if random.random() < self.skip_prob:
            return src, label
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Flip image and boxes left-right with probability ``p``."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p

    def __call__(self, src: Any, label: np.ndarray) -> tuple[Any, np.ndarray]:
        if random.random() < self.p:
            src = as_nd(as_np(src)[:, ::-1])
            self._flip_label(label)
        return src, label

    @staticmethod
    def _flip_label(label: np.ndarray) -> None:
        tmp = 1.0 - label[:, 1]
        label[:, 1] = 1.0 - label[:, 3]
        label[:, 3] = tmp


class DetRandomCropAug(DetAugmenter):
    """SSD's random crop: a crop of random aspect ratio and area that covers at least
    ``min_object_covered`` of every object it touches; objects keeping less than
    ``min_eject_coverage`` are dropped, the rest clipped to the crop. Up to
    ``max_attempts`` tries; invalid ranges disable it (with a warning)."""

    def __init__(self, min_object_covered: float = 0.1, aspect_ratio_range: Any = (0.75, 1.33),
                 area_range: Any = (0.05, 1.0), min_eject_coverage: float = 0.3, max_attempts: int = 50) -> None:
        aspect_ratio_range = _pair(aspect_ratio_range, "aspect_ratio_range", "DetRandomCropAug")
        area_range = _pair(area_range, "area_range", "DetRandomCropAug")
        super().__init__(min_object_covered=min_object_covered, aspect_ratio_range=aspect_ratio_range,
                         area_range=area_range, min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = False
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warnings.warn(f"Skip DetRandomCropAug due to invalid area_range: {area_range}", stacklevel=2)
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn(f"Skip DetRandomCropAug due to invalid aspect_ratio_range: {aspect_ratio_range}",
                          stacklevel=2)
        else:
            self.enabled = True

    def __call__(self, src: Any, label: np.ndarray) -> tuple[Any, np.ndarray]:
        shape = as_np(src).shape
        crop = self._random_crop_proposal(label, shape[0], shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    @staticmethod
    def _intersect(boxes: np.ndarray, xmin: float, ymin: float, xmax: float, ymax: float) -> np.ndarray:
        out = boxes.copy()
        out[:, 0] = np.maximum(boxes[:, 0], xmin)
        out[:, 1] = np.maximum(boxes[:, 1], ymin)
        out[:, 2] = np.minimum(boxes[:, 2], xmax)
        out[:, 3] = np.minimum(boxes[:, 3], ymax)
        out[(out[:, 0] >= out[:, 2]) | (out[:, 1] >= out[:, 3]), :] = 0
        return out

    def _satisfies(self, label: np.ndarray, xmin: int, ymin: int, xmax: int, ymax: int, width: int,
                   height: int) -> bool:
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False
        areas = _areas(label[:, 1:5])
        valid = np.where(areas * width * height > 2)[0]
        if valid.size < 1:
            return False
        inter = self._intersect(label[valid, 1:5], xmin / width, ymin / height, xmax / width, ymax / height)
        cov = _areas(inter) / areas[valid]
        cov = cov[cov > 0]
        return bool(cov.size > 0 and cov.min() > self.min_object_covered)

    def _update_labels(self, label: np.ndarray, box: tuple[int, int, int, int], height: int,
                       width: int) -> np.ndarray | None:
        xmin, ymin = box[0] / width, box[1] / height
        w, h = box[2] / width, box[3] / height
        out = label.copy()
        out[:, (1, 3)] -= xmin
        out[:, (2, 4)] -= ymin
        out[:, (1, 3)] /= w
        out[:, (2, 4)] /= h
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        coverage = _areas(out[:, 1:5]) * w * h / _areas(label[:, 1:5])
        valid = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & (coverage > self.min_eject_coverage)
        return out[valid] if valid.any() else None

    def _random_crop_proposal(self, label: np.ndarray, height: int, width: int) -> tuple:
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = int(round(sqrt(min_area / ratio)))
            max_h = int(round(sqrt(max_area / ratio)))
            if round(max_h * ratio) > width:
                max_h = int((width + 0.4999999) / ratio)  # keep round(max_h * ratio) <= width
            max_h = min(max_h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            area = w * h
            if area < min_area:
                h += 1
                w = int(round(h * ratio))
                area = w * h
            if area > max_area:
                h -= 1
                w = int(round(h * ratio))
                area = w * h
            if not (min_area <= area <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._satisfies(label, x, y, x + w, y + h, width, height):
                new_label = self._update_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return x, y, w, h, new_label
        return ()


class DetRandomPadAug(DetAugmenter):
    """Place the image at a random spot of a larger canvas (area ``area_range`` times
    the image's, aspect ratio in ``aspect_ratio_range``) filled with ``pad_val``."""

    def __init__(self, aspect_ratio_range: Any = (0.75, 1.33), area_range: Any = (1.0, 3.0),
                 max_attempts: int = 50, pad_val: Any = (128, 128, 128)) -> None:
        aspect_ratio_range = _pair(aspect_ratio_range, "aspect_ratio_range", "DetRandomPadAug")
        area_range = _pair(area_range, "area_range", "DetRandomPadAug")
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range, max_attempts=max_attempts,
                         pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn(f"Skip DetRandomPadAug due to invalid parameters: {area_range}", stacklevel=2)
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn(f"Skip DetRandomPadAug due to invalid aspect_ratio_range: {aspect_ratio_range}",
                          stacklevel=2)
        else:
            self.enabled = True

    def __call__(self, src: Any, label: np.ndarray) -> tuple[Any, np.ndarray]:
        height, width = as_np(src).shape[:2]
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            vals = self.pad_val if isinstance(self.pad_val, (list, tuple)) else (self.pad_val,)
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 16, values=vals)
        return src, label

    @staticmethod
    def _update_labels(label: np.ndarray, box: tuple[int, int, int, int], height: int, width: int) -> np.ndarray:
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + box[0]) / box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + box[1]) / box[3]
        return out

    def _random_pad_proposal(self, label: np.ndarray, height: int, width: int) -> tuple:
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = int(round(sqrt(min_area / ratio)))
            max_h = int(round(sqrt(max_area / ratio)))
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)
            h = max(h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if h - height < 2 or w - width < 2:
                continue
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return x, y, w, h, self._update_labels(label, (x, y, w, h), height, width)
        return ()


def CreateMultiRandCropAugmenter(min_object_covered: Any = 0.1, aspect_ratio_range: Any = (0.75, 1.33),  # noqa: N802
                                 area_range: Any = (0.05, 1.0), min_eject_coverage: Any = 0.3,
                                 max_attempts: Any = 50, skip_prob: float = 0) -> DetRandomSelectAug:
    """One ``DetRandomCropAug`` per setting (list arguments are zipped, scalars
    broadcast), one of them picked at random per image."""
    params = [min_object_covered, aspect_ratio_range, area_range, min_eject_coverage, max_attempts]
    lists = [p if isinstance(p, list) else [p] for p in params]
    num = max(len(p) for p in lists)
    for k, p in enumerate(lists):
        if len(p) != num:
            if len(p) != 1:
                raise ValueError(f"CreateMultiRandCropAugmenter: list arguments must have the same length "
                                 f"({num}), got {len(p)}")
            lists[k] = p * num
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma) for moc, arr, ar, mec, ma in zip(*lists)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape: Sequence[int], resize: int = 0, rand_crop: float = 0,  # noqa: N802
                       rand_pad: float = 0, rand_gray: float = 0, rand_mirror: bool = False, mean: Any = None,
                       std: Any = None, brightness: float = 0, contrast: float = 0, saturation: float = 0,
                       pca_noise: float = 0, hue: float = 0, inter_method: int = 2, min_object_covered: Any = 0.1,
                       aspect_ratio_range: Any = (0.75, 1.33), area_range: Any = (0.05, 3.0),
                       min_eject_coverage: Any = 0.3, max_attempts: Any = 50,
                       pad_val: Any = (127, 127, 127)) -> list[DetAugmenter]:
    """MXNet's standard detection augmenters: resize, random crop (probability
    ``rand_crop``), mirror, random pad (probability ``rand_pad``), force-resize to
    ``data_shape``, cast, colour jitter, hue, lighting, gray, normalisation."""
    auglist: list[DetAugmenter] = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range, area_range,
                                                    min_eject_coverage, max_attempts, skip_prob=1 - rand_crop))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:
        pad_aug = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts, pad_val)
        auglist.append(DetRandomSelectAug([pad_aug], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        auglist.append(DetBorrowAug(LightingAug(pca_noise, EIGVAL, EIGVEC)))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    mean, std = _mean_std(mean, std)
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist


class ImageDetIter(ImageIter):
    """``ImageIter`` for detection: labels ``[header_width, object_width, header...,
    objects...]`` become ``(n, object_width)`` arrays, batches' labels are
    ``(batch, max objects, object_width)`` padded with -1; augmenters from
    ``CreateDetAugmenter(data_shape, **kwargs)`` unless ``aug_list`` is given."""

    def __init__(self, batch_size: int, data_shape: Sequence[int], path_imgrec: str | None = None,
                 path_imglist: str | None = None, path_root: str | None = None, path_imgidx: str | None = None,
                 shuffle: bool = False, part_index: int = 0, num_parts: int = 1, aug_list: list | None = None,
                 imglist: list | None = None, data_name: str = "data", label_name: str = "label",
                 last_batch_handle: str = "pad", **kwargs: Any) -> None:
        super().__init__(batch_size=batch_size, data_shape=data_shape, path_imgrec=path_imgrec,
                         path_imglist=path_imglist, path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[], imglist=imglist,
                         data_name=data_name, label_name=label_name, last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.label_shape = self._estimate_label_shape()
        self.provide_label = [DataDesc(label_name, (self.batch_size,) + self.label_shape)]

    def _check_valid_label(self, label: np.ndarray) -> None:
        if label.ndim != 2 or label.shape[1] < 5:
            raise RuntimeError(f"Label with shape (1+, 5+) required, {label} received.")
        ok = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not ok.any():
            raise RuntimeError("Invalid label occurs.")

    def _estimate_label_shape(self) -> tuple[int, int]:
        max_count, width = 0, 5
        self.reset()
        try:
            while True:
                label = self._parse_label(self.next_sample()[0])
                max_count, width = max(max_count, label.shape[0]), label.shape[1]
        except StopIteration:
            pass
        self.reset()
        return max_count, width

    def _parse_label(self, label: Any) -> np.ndarray:
        raw = np.asarray(as_np(label), np.float32).ravel()
        if raw.size < 7:
            raise RuntimeError(f"Label shape is invalid: {raw.shape}")
        header_width, obj_width = int(raw[0]), int(raw[1])
        if obj_width < 1 or (raw.size - header_width) % obj_width != 0:
            raise RuntimeError(f"Label shape {raw.shape} inconsistent with annotation width {obj_width}.")
        out = raw[header_width:].reshape(-1, obj_width)
        valid = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2])
        if not valid.any():
            raise RuntimeError("Encounter sample with no valid label.")
        return out[valid]

    def check_label_shape(self, label_shape: Sequence[int]) -> None:
        """Two dimensions, no fewer objects than now, the same object width."""
        if len(label_shape) != 2:
            raise ValueError("label_shape should have length 2")
        if label_shape[0] < self.label_shape[0]:
            raise ValueError(f"Attempts to reduce label count from {self.label_shape[0]} to {label_shape[0]}, "
                             f"not allowed.")
        if label_shape[1] != self.provide_label[0].shape[2]:
            raise ValueError(f"label_shape object width inconsistent: {self.provide_label[0].shape[2]} vs "
                             f"{label_shape[1]}.")

    def reshape(self, data_shape: Sequence[int] | None = None, label_shape: Sequence[int] | None = None) -> None:
        """Change the data and/or label shape of the batches to come."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [DataDesc(self.provide_data[0].name, (self.batch_size,) + tuple(data_shape))]
            self.data_shape = tuple(data_shape)
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [DataDesc(self.provide_label[0].name, (self.batch_size,) + tuple(label_shape))]
            self.label_shape = tuple(label_shape)  # type: ignore[assignment]

    def _batchify(self, data: np.ndarray, label: np.ndarray, start: int = 0) -> int:
        i = start
        try:
            while i < self.batch_size:
                lab, s = self.next_sample()
                img = self.imdecode(s)
                try:
                    self.check_valid_image([img])
                    lab = self._parse_label(lab)
                    img, lab = self.augmentation_transform(img, lab)
                    self._check_valid_label(lab)
                except RuntimeError as e:
                    log.debug("Invalid image, skipping: %s", e)
                    continue
                data[i] = as_np(self.postprocess_data(img))
                n = min(lab.shape[0], label.shape[1])
                label[i, :n] = lab[:n]
                label[i, n:] = -1
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _empty_labels(self) -> np.ndarray:
        return np.full(self.provide_label[0].shape, -1, np.float32)

    def augmentation_transform(self, data: Any, label: Any = None) -> Any:  # type: ignore[override]
        """Run the detection augmenters in order on ``(image, label)``."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def sync_label_shape(self, it: "ImageDetIter", verbose: bool = False) -> "ImageDetIter":
        """Give this iterator and ``it`` the same (larger) label shape; returns ``it``."""
        if not isinstance(it, ImageDetIter):
            raise TypeError("Synchronize with invalid iterator.")
        if self.label_shape[1] != it.label_shape[1]:
            raise ValueError("object width mismatch.")
        max_count = max(self.label_shape[0], it.label_shape[0])
        if max_count > self.label_shape[0]:
            self.reshape(None, (max_count, self.label_shape[1]))
        if max_count > it.label_shape[0]:
            it.reshape(None, (max_count, it.label_shape[1]))
        if verbose:
            log.info("Resized label_shape to (%d, %d).", max_count, self.label_shape[1])
        return it

    def draw_next(self, color: Any = None, thickness: int = 2, mean: Any = None, std: Any = None,
                  clip: bool = True, waitKey: Any = None, window_name: str = "draw_next",  # noqa: N803
                  id2labels: dict | None = None) -> Any:
        """Yield the next images (BGR uint8, augmented, de-normalised) with their boxes drawn."""
        from ..io.decode import cv2
        cv = cv2()
        mean, std = _mean_std(mean, std)
        while True:
            try:
                lab, s = self.next_sample()
            except StopIteration:
                return
            img = self.imdecode(s)
            try:
                lab = self._parse_label(lab)
            except RuntimeError as e:
                log.debug("Invalid image, skipping: %s", e)
                continue
            img, lab = self.augmentation_transform(img, lab)
            image = as_np(img).astype(np.float64)
            if std is not None:
                image *= as_np(std)
            if mean is not None:
                image += as_np(mean)
            image = image[:, :, ::-1]
            if clip:
                image = np.clip(image, 0, 255)
            image = np.ascontiguousarray(image.astype(np.uint8))
            height, width = image.shape[:2]
            for obj in lab:
                if obj[1] * width < 0:
                    continue
                p1 = (int(obj[1] * width), int(obj[2] * height))
                p2 = (int(obj[3] * width), int(obj[4] * height))
                bc = tuple(color[::-1]) if color else tuple(float(v) for v in np.random.rand(3) * 255)
                cv.rectangle(image, p1, p2, bc, thickness)
                if id2labels is not None and int(obj[0]) in id2labels:
                    cv.putText(image, str(id2labels[int(obj[0])]), (p1[0] + 5, p1[1] + 15),
                               cv.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 2)
            if waitKey is not None:
                cv.imshow(window_name, image)
                cv.waitKey(waitKey)
            yield image
