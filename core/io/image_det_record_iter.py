"""``ImageDetRecordIter``: batches of images with object-detection labels from RecordIO
files (MXNet 1.x's ``mx.io.ImageDetRecordIter``), on ``ImageRecordIter``'s pipeline.

A record's label is ``[header_width, object_width, extra header..., objects...]`` with
one object per ``object_width`` values (``class, xmin, ymin, xmax, ymax`` in [0, 1] ...).
Each batch row is, as in MXNet, ``[c, h, w, n, label (n values)]`` padded with
``label_pad_value`` to ``4 + label_pad_width`` (default width: the longest label in the
file, found by one scan). Images are resized to ``data_shape`` (``resize_mode='force'``);
``rand_mirror_prob`` flips images and boxes (``xmin, xmax -> 1 - xmax, 1 - xmin``).
MXNet's other detection augmentations (random crops by overlap, padding, colour) are
accepted at their default (off) values only.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from .. import recordio
from ..base import MXNetError
from .decode import cv2, inter_method
from .image_record_iter import ImageRecordIter, _Augmenter

__all__ = ["ImageDetRecordIter"]

#: MXNet's detection augmentation parameters with their (off) defaults
_DET_DEFAULTS: dict[str, Any] = {
    "rand_crop_prob": 0.0, "min_crop_scales": (0.0,), "max_crop_scales": (1.0,), "min_crop_aspect_ratios": (1.0,),
    "max_crop_aspect_ratios": (1.0,), "min_crop_overlaps": (0.0,), "max_crop_overlaps": (1.0,),
    "min_crop_sample_coverages": (0.0,), "max_crop_sample_coverages": (1.0,),
    "min_crop_object_coverages": (0.0,), "max_crop_object_coverages": (1.0,), "num_crop_sampler": 1,
    "crop_emit_mode": "center", "emit_overlap_thresh": 0.3, "max_crop_trials": (25,), "rand_pad_prob": 0.0,
    "max_pad_scale": 1.0, "max_random_hue": 0, "random_hue_prob": 0.0, "max_random_saturation": 0,
    "random_saturation_prob": 0.0, "max_random_illumination": 0, "random_illumination_prob": 0.0,
    "max_random_contrast": 0.0, "random_contrast_prob": 0.0, "resize_mode": "force", "aug_seq": "det_aug_default",
    "path_imglist": "", "mean_img": "",
}


def _is_default(value: Any, default: Any) -> bool:
    if isinstance(default, tuple):
        try:
            return tuple(float(v) for v in np.atleast_1d(value)) == tuple(float(v) for v in default)
        except (TypeError, ValueError):
            return False
    return value == default or str(value) == str(default)


class _DetAugmenter(_Augmenter):
    """Decode, force-resize, mirror (with the boxes) one record; the padded label row."""

    def __init__(self, *args: Any, mirror_prob: float, pad_value: float) -> None:
        super().__init__(*args)
        self.mirror_prob = float(mirror_prob)
        self.pad_value = float(pad_value)

    def load(self, payload: bytes, u: np.ndarray, label_out: np.ndarray,
             rng: np.random.Generator | None = None) -> tuple[np.ndarray, int, bool]:
        header, img = recordio.unpack(payload)
        label = np.atleast_1d(np.asarray(header.label, dtype=np.float32)).copy()
        if 4 + len(label) > len(label_out):
            raise MXNetError(f"record {header.id}: label of {len(label)} values does not fit label_pad_width "
                             f"{len(label_out) - 4}")
        try:
            arr = self._decode(img)
        except Exception as e:  # noqa: BLE001
            raise MXNetError(f"cannot decode the image of record {header.id} ({len(img)} bytes): {e}") from e
        h, w = arr.shape[:2]
        if (w, h) != (self.w, self.h):
            flag = inter_method(self.inter_method, w, h, self.w, self.h, rng)
            arr = cv2().resize(arr, (self.w, self.h), interpolation=flag)
            if arr.ndim == 2:
                arr = arr[:, :, None]
        mirrored = bool(self.mirror_prob > 0 and u[2] < self.mirror_prob)
        if mirrored:
            _flip_boxes(label, header.id)
        label_out[:] = self.pad_value
        label_out[:4] = (self.c, self.h, self.w, len(label))
        label_out[4:4 + len(label)] = label
        return arr, int(header.id), mirrored


def _flip_boxes(label: np.ndarray, rec_id: int) -> None:
    """Mirror the boxes of a detection label in place (x coordinates in [0, 1])."""
    if len(label) < 2:
        return
    a, b = int(label[0]), int(label[1])
    if a < 2 or b < 5 or (len(label) - a) % b:
        raise MXNetError(f"record {rec_id}: label {label.tolist()[:6]}... is not [header_width, object_width, "
                         f"..., objects of object_width values]")
    objs = label[a:].reshape(-1, b)
    xmin = objs[:, 1].copy()
    objs[:, 1] = 1.0 - objs[:, 3]
    objs[:, 3] = 1.0 - xmin


def _max_label_length(path_imgrec: str) -> int:
    reader = recordio.RecordFileReader(path_imgrec)
    try:
        longest = 0
        for off in recordio.scan_offsets(path_imgrec):
            header, _ = recordio.unpack(reader.read_at(int(off)))
            longest = max(longest, int(np.atleast_1d(header.label).size))
        return longest
    finally:
        close = getattr(reader, "close", None)
        if close is not None:
            close()


class ImageDetRecordIter(ImageRecordIter):
    """Images and detection labels from a RecordIO file (``mx.io.ImageDetRecordIter``).

    Parameters as MXNet's: ``path_imgrec``, ``path_imgidx``, ``data_shape``,
    ``batch_size``, ``label_pad_width`` (0: the longest label), ``label_pad_value``,
    ``rand_mirror_prob``, ``shuffle``, ``seed``, ``mean_*``/``std_*`` (``std`` 0 means 1,
    as MXNet), ``scale``, ``inter_method``, ``preprocess_threads``, ``prefetch_buffer``,
    ``num_parts``/``part_index``, ``round_batch``, ``dtype``, ``data_name``,
    ``label_name``; the detection augmentations at their defaults only.
    """

    def __init__(self, path_imgrec: str, data_shape: Any, batch_size: int, label_pad_width: int = 0,
                 label_pad_value: float = -1.0, rand_mirror_prob: float = 0.0, label_width: int = -1,
                 std_r: float = 0.0, std_g: float = 0.0, std_b: float = 0.0, std_a: float = 0.0,
                 fill_value: int = 127, **kwargs: Any) -> None:
        for k in list(kwargs):
            if k in _DET_DEFAULTS:
                v = kwargs.pop(k)
                if not _is_default(v, _DET_DEFAULTS[k]):
                    raise MXNetError(f"ImageDetRecordIter: {k}={v!r} is not supported by plexnet (only its "
                                     f"default {_DET_DEFAULTS[k]!r}, i.e. that augmentation off)")
        for k in ("resize", "rand_crop", "rand_mirror", "mirror", "pad"):
            if k in kwargs and kwargs[k] not in (-1, 0, False):
                raise MXNetError(f"ImageDetRecordIter: {k}={kwargs[k]!r} is not supported (images are resized to "
                                 f"data_shape; use rand_mirror_prob to mirror)")
            kwargs.pop(k, None)
        if not 0.0 <= float(rand_mirror_prob) <= 1.0:
            raise ValueError(f"ImageDetRecordIter: rand_mirror_prob must be in [0, 1], got {rand_mirror_prob}")
        path = os.fspath(path_imgrec)
        if not os.path.exists(path):
            raise FileNotFoundError(f"ImageDetRecordIter: path_imgrec {path!r} does not exist")
        longest = _max_label_length(path)
        pad = max(int(label_pad_width), longest)
        self._det = (float(rand_mirror_prob), float(label_pad_value))
        self._det_ready = False
        stds = [s if s else 1.0 for s in (std_r, std_g, std_b, std_a)]
        super().__init__(path, data_shape, batch_size, label_width=4 + pad, std_r=stds[0], std_g=stds[1],
                         std_b=stds[2], std_a=stds[3], fill_value=fill_value, **kwargs)
        self.label_pad_width = pad
        a = self._aug
        self._aug = _DetAugmenter((a.c, a.h, a.w), -1, False, False, False, 0, a.fill_value, a.inter_method,
                                  a.mean, a.mult, a.out_dtype, self.label_width, mirror_prob=self._det[0],
                                  pad_value=self._det[1])
        self._det_ready = True
        self._fill()

    def _fill(self) -> None:
        # the base class starts reading ahead in __init__: wait for the detection augmenter
        if getattr(self, "_det_ready", True):
            super()._fill()
