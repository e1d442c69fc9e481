"""``mx.image.ImageIter``: images from a ``.rec`` file or an image list, through a list of
``mx.image`` augmenters, in MXNet 1.x's order and with its last-batch handling."""
from __future__ import annotations

import logging
import os
import random
from numbers import Number
from typing import Any, Sequence

import numpy as np

from .. import recordio
from ..base import MXNetError
from ..io.base import DataBatch, DataDesc, DataIter
from ._util import as_nd, as_np
from .image import Augmenter, CreateAugmenter, imdecode

__all__ = ["ImageIter"]

log = logging.getLogger(__name__)


class ImageIter(DataIter):
    """Iterate over images from ``path_imgrec`` (with ``path_imgidx`` for shuffling and
    parts), from ``path_imglist`` (``index<TAB>labels...<TAB>path`` under ``path_root``)
    or from ``imglist`` (``[label(s)..., path]`` entries), augmented by ``aug_list``
    (default: ``CreateAugmenter(data_shape, **kwargs)``).

    ``last_batch_handle``: ``'pad'`` (fill the last batch from the start, report
    ``pad``), ``'discard'``, or ``'roll_over'`` (the rest opens the next epoch).
    Shuffling uses Python's ``random`` as MXNet does.
    """

    def __init__(self, batch_size: int, data_shape: Sequence[int], label_width: int = 1,
                 path_imgrec: str | None = None, path_imglist: str | None = None, path_root: str | None = None,
                 path_imgidx: str | None = None, shuffle: bool = False, part_index: int = 0, num_parts: int = 1,
                 aug_list: list[Augmenter] | None = None, imglist: list | None = None, data_name: str = "data",
                 label_name: str = "softmax_label", dtype: str = "float32", last_batch_handle: str = "pad",
                 **kwargs: Any) -> None:
        super().__init__(int(batch_size))
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ValueError("ImageIter: give path_imgrec, path_imglist or imglist")
        if dtype not in ("int32", "float32", "int64", "float64"):
            raise ValueError(f"ImageIter: label dtype {dtype} not supported")
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError(f"ImageIter: last_batch_handle must be 'pad', 'discard' or 'roll_over', "
                             f"got {last_batch_handle!r}")
        self.imgrec: Any = None
        self.imgidx: list | None = None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
        imgkeys: list = []
        self.imglist: dict | None = None
        if path_imglist:
            self.imglist = {}
            with open(path_imglist) as fin:
                for line in fin:
                    fields = line.strip().split("\t")
                    if len(fields) < 3:
                        continue
                    imgkeys.append(int(fields[0]))
                    self.imglist[imgkeys[-1]] = (np.array(fields[1:-1], dtype=dtype), fields[-1])
        elif isinstance(imglist, list):
            self.imglist = {}
            for index, img in enumerate(imglist, 1):
                key = str(index)
                if len(img) > 2:
                    label = np.array(img[:-1], dtype=dtype)
                elif isinstance(img[0], Number):
                    label = np.array([img[0]], dtype=dtype)
                else:
                    label = np.array(as_np(img[0]), dtype=dtype)
                self.imglist[key] = (label, img[-1])
                imgkeys.append(key)
        self.path_root = path_root or ""
        self.check_data_shape(data_shape)
        self.data_shape = tuple(int(d) for d in data_shape)
        self.label_width = int(label_width)
        self.provide_data = [DataDesc(data_name, (self.batch_size,) + self.data_shape)]
        lshape = (self.batch_size, self.label_width) if self.label_width > 1 else (self.batch_size,)
        self.provide_label = [DataDesc(label_name, lshape)]
        self.shuffle = bool(shuffle)
        self.dtype = dtype
        if self.imgrec is None:
            self.seq: list | None = imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise MXNetError("ImageIter: shuffle and num_parts > 1 need path_imgidx")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise ValueError(f"ImageIter: part_index {part_index} not in [0, {num_parts})")
            assert self.seq is not None
            c = len(self.seq) // num_parts
            self.seq = self.seq[part_index * c:(part_index + 1) * c]
        self.auglist: list[Any] = CreateAugmenter(self.data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache: tuple[np.ndarray, np.ndarray, int] | None = None
        self.reset()

    # -- epochs ------------------------------------------------------------------------------
    def reset(self) -> None:
        """Next epoch (reshuffled); with ``'roll_over'`` the cached rest opens it."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self) -> None:
        """Start over, dropping any rolled-over rest."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache = None

    # -- samples -----------------------------------------------------------------------------
    def next_sample(self) -> tuple[Any, bytes]:
        """``(label, encoded image)`` of the next image; ``StopIteration`` at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is not None:
            if self.cur >= self.num_image:  # type: ignore[operator]
                if self.last_batch_handle != "discard":
                    self.cur = 0
                raise StopIteration
            idx = self.seq[self.cur]
            self.cur += 1
            if self.imgrec is not None:
                header, img = recordio.unpack(self.imgrec.read_idx(idx))
                return (header.label if self.imglist is None else self.imglist[idx][0]), img
            assert self.imglist is not None
            label, fname = self.imglist[idx]
            return label, self.read_image(fname)
        s = self.imgrec.read()
        if s is None:
            if self.last_batch_handle != "discard":
                self.imgrec.reset()
            raise StopIteration
        header, img = recordio.unpack(s)
        return header.label, img

    def _batchify(self, data: np.ndarray, label: np.ndarray, start: int = 0) -> int:
        i = start
        try:
            while i < self.batch_size:
                lab, s = self.next_sample()
                img = self.imdecode(s)
                try:
                    self.check_valid_image(img)
                except RuntimeError as e:
                    log.debug("Invalid image, skipping: %s", e)
                    continue
                img = self.augmentation_transform(img)
                data[i] = as_np(self.postprocess_data(img))
                label[i] = as_np(lab).reshape(label[i].shape) if label.ndim > 1 else float(np.ravel(as_np(lab))[0])
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self) -> DataBatch:
        c, h, w = self.data_shape
        if self._cache is not None:
            data, label, i = self._cache
        else:
            data = np.zeros((self.batch_size, c, h, w), np.float32)
            label = self._empty_labels()
            i = self._batchify(data, label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache is None:
                self._cache = (data, label, i)
                raise StopIteration
            self._batchify(data, label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache = None
        return DataBatch([as_nd(data)], [as_nd(label)], pad=pad)

    def _empty_labels(self) -> np.ndarray:
        """The label array of a new batch (``ImageDetIter``: filled with -1)."""
        return np.zeros(self.provide_label[0].shape, np.float32)

    # -- hooks subclasses override (MXNet's names) ------------------------------------------------
    def check_data_shape(self, data_shape: Sequence[int]) -> None:
        """Three dimensions, three channels."""
        if len(data_shape) != 3:
            raise ValueError("data_shape should have length 3, with dimensions CxHxW")
        if data_shape[0] != 3:
            raise ValueError("This iterator expects inputs to have 3 channels.")

    def check_valid_image(self, data: Any) -> None:
        """``RuntimeError`` for an empty image (it is skipped)."""
        if len(as_np(data[0] if isinstance(data, list) else data).shape) == 0:
            raise RuntimeError("Data shape is wrong")

    def imdecode(self, s: bytes) -> Any:
        """Decode one image; ``RuntimeError`` naming the record or file when it fails."""
        try:
            return imdecode(s)
        except Exception as e:  # noqa: BLE001
            where = self.seq[(self.cur - 1) % len(self.seq)] if self.seq else self.cur - 1
            name = f"filename: {self.imglist[where][1]}" if self.imglist is not None and self.seq else f"index: {where}"
            raise RuntimeError(f"Broken image {name}, {e}") from e

    def read_image(self, fname: str) -> bytes:
        """The bytes of ``path_root/fname``."""
        with open(os.path.join(self.path_root, fname), "rb") as fin:
            return fin.read()

    def augmentation_transform(self, data: Any) -> Any:
        """Run the augmenters in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum: Any) -> Any:
        """``(h, w, c)`` -> ``(c, h, w)``."""
        return as_nd(np.ascontiguousarray(as_np(datum).transpose(2, 0, 1)))
