"""``ImageDetRecordIter``: batches of images with object-detection labels from RecordIO
files (MXNet 1.x's ``mx.io.ImageDetRecordIter``), on ``ImageRecordIter``'s pipeline.

A record's label is ``[header_width, object_width, extra header..., objects...]`` with
one object per ``object_width`` values (``class, xmin, ymin, xmax, ymax`` in [0, 1] ...).
Each batch row is, as in MXNet, ``[c, h, w, n, label (n values)]`` padded with
``label_pad_value`` to ``4 + label_pad_width`` (default width: the longest label in the
file, found by one scan). Augmentation is MXNet 1.9.1's ``det_aug_default``
(``det_augment``): ``resize``, colour (``max_random_hue``/``saturation``/
``illumination``/``contrast`` with their ``random_*_prob``), ``rand_mirror_prob``,
``rand_pad_prob``/``max_pad_scale``, ``rand_crop_prob`` with its crop samplers, then
images are resized to ``data_shape`` (``resize_mode='force'``; the others are refused).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from .. import recordio
from ..base import FileOpenError, MXNetError
from .det_augment import DET_AUG_PARAM_NAMES, DetAugmenter, DetAugParams
from .image_record_iter import ImageRecordIter, _Augmenter

__all__ = ["ImageDetRecordIter"]

#: MXNet parameters accepted at their default only
_DET_DEFAULTS: dict[str, Any] = {"aug_seq": "det_aug_default", "path_imglist": "", "mean_img": ""}


def _is_default(value: Any, default: Any) -> bool:
    if isinstance(default, tuple):
        try:
            return tuple(float(v) for v in np.atleast_1d(value)) == tuple(float(v) for v in default)
        except (TypeError, ValueError):
            return False
    return value == default or str(value) == str(default)


class _DetAugmenter(_Augmenter):
    """Decode, ``det_augment.DetAugmenter`` (resize, colour, mirror, pad, crop with the
    boxes, force-resize), then the padded label row."""

    def __init__(self, *args: Any, det: DetAugParams, pad_value: float) -> None:
        super().__init__(*args)
        self.det = DetAugmenter(det)
        self.pad_value = float(pad_value)

    def load(self, payload: bytes, u: np.ndarray, label_out: np.ndarray,
             rng: np.random.Generator | None = None) -> tuple[np.ndarray, int, bool]:
        header, img = recordio.unpack(payload)
        try:
            arr = self._decode(img)
        except Exception as e:  # noqa: BLE001
            raise MXNetError(f"cannot decode the image of record {header.id} ({len(img)} bytes): {e}") from e
        if rng is None:
            rng = np.random.default_rng(int(u[0] * 2**53))
        try:
            arr, label = self.det.process(arr, np.atleast_1d(np.asarray(header.label, np.float32)), rng,
                                          float(u[2]))
        except MXNetError as e:
            raise MXNetError(f"record {header.id}: {e}") from e
        if 4 + len(label) > len(label_out):
            raise MXNetError(f"record {header.id}: label of {len(label)} values does not fit label_pad_width "
                             f"{len(label_out) - 4}")
        label_out[:] = self.pad_value
        label_out[:4] = (self.c, self.h, self.w, len(label))
        label_out[4:4 + len(label)] = label
        return arr, int(header.id), False


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
    ``label_name``, and the detection augmentations of ``det_augment.DetAugParams``.
    """

    def __init__(self, path_imgrec: str, data_shape: Any, batch_size: int, label_pad_width: int = 0,
                 label_pad_value: float = -1.0, rand_mirror_prob: float = 0.0, label_width: int = -1,
                 std_r: float = 0.0, std_g: float = 0.0, std_b: float = 0.0, std_a: float = 0.0,
                 fill_value: int = 127, **kwargs: Any) -> None:
        det_kw: dict[str, Any] = {}
        for k in list(kwargs):
            if k in _DET_DEFAULTS:
                v = kwargs.pop(k)
                if not _is_default(v, _DET_DEFAULTS[k]):
                    raise MXNetError(f"ImageDetRecordIter: {k}={v!r} is not supported by plexnet (only its "
                                     f"default {_DET_DEFAULTS[k]!r})")
            elif k in DET_AUG_PARAM_NAMES - {"data_shape", "fill_value", "inter_method", "rand_mirror_prob"}:
                det_kw[k] = kwargs.pop(k)
        for k in ("rand_crop", "rand_mirror", "mirror", "pad"):
            if k in kwargs and kwargs[k] not in (-1, 0, False):
                raise MXNetError(f"ImageDetRecordIter: {k}={kwargs[k]!r} is not supported (use rand_crop_prob, "
                                 f"rand_pad_prob, rand_mirror_prob)")
            kwargs.pop(k, None)
        if not 0.0 <= float(rand_mirror_prob) <= 1.0:
            raise ValueError(f"ImageDetRecordIter: rand_mirror_prob must be in [0, 1], got {rand_mirror_prob}")
        path = os.fspath(path_imgrec)
        if not os.path.exists(path):
            raise FileOpenError(f"ImageDetRecordIter: path_imgrec {path!r} does not exist")
        longest = _max_label_length(path)
        pad = max(int(label_pad_width), longest)
        self._det = (float(rand_mirror_prob), float(label_pad_value))
        self._det_ready = False
        stds = [s if s else 1.0 for s in (std_r, std_g, std_b, std_a)]
        super().__init__(path, data_shape, batch_size, label_width=4 + pad, std_r=stds[0], std_g=stds[1],
                         std_b=stds[2], std_a=stds[3], fill_value=fill_value, **kwargs)
        self.label_pad_width = pad
        a = self._aug
        det = DetAugParams(data_shape=(a.c, a.h, a.w), fill_value=a.fill_value, inter_method=a.inter_method,
                           rand_mirror_prob=self._det[0], **det_kw)
        self._aug = _DetAugmenter((a.c, a.h, a.w), -1, False, False, False, 0, a.fill_value, a.inter_method,
                                  a.mean, a.mult, a.out_dtype, self.label_width, det=det, pad_value=self._det[1])
        self._det_ready = True
        self._fill()

    def _fill(self) -> None:
        # the base class starts reading ahead in __init__: wait for the detection augmenter
        if getattr(self, "_det_ready", True):
            super()._fill()
