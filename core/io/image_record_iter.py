"""``ImageRecordIter``: decoded, augmented image batches from RecordIO files.

MXNet 1.x's ``mx.io.ImageRecordIter`` with the same parameters, augmenters (see
``augment``) and batching semantics, decoding and resizing with OpenCV as MXNet does.

Pipeline. The consumer's thread plans batches (which records, in which order: see
``batching.BatchPlanner``); up to ``max(prefetch_buffer, preprocess_threads)`` planned
batches are built at once by a pool of ``preprocess_threads`` worker threads, each
worker building one whole batch: read the records (``os.pread``, no shared file
position), decode, resize, crop, mirror, normalise straight into the batch array.
Batches come out in plan order. OpenCV and numpy release the GIL while decoding,
resizing and normalising, which is where the time goes.

Reproducible: the shuffle order depends on ``(seed, pass)`` and the augmentation of a
batch on ``(seed_aug, batch serial)`` only, never on thread timing; ``reset()`` in the
middle of an epoch rewinds the read-ahead exactly.
"""
from __future__ import annotations

import collections
import concurrent.futures as cf
import logging
import os
import sys
import threading
import warnings
from typing import Any, Sequence

import numpy as np

from .. import recordio
from ..base import FileOpenError, MXNetError
from ..fileio import atomic_open
from .augment import AUG_PARAM_NAMES, AugParams, DefaultAugmenter
from .base import DataDesc, DataIter, IterDataError, to_ndarray, warn_unknown_args
from .batching import BatchPlanner, Plan
from .decode import cv2, imdecode_bgr
from .partition import partition_range

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter", "ImageRecordInt8Iter"]

log = logging.getLogger(__name__)

#: MXNet parameters plexnet accepts at their default only
_UNSUPPORTED_DEFAULTS: dict[str, Any] = {"aug_seq": "aug_default"}
#: MXNet parameters that have no effect here.
_IGNORED = {"verbose", "ctx", "device_id", "shuffle_chunk_size", "shuffle_chunk_seed",
            "num_decode_threads", "silent"}

#: the augmentation parameters beyond the named ones of ``ImageRecordIter.__init__``
_AUG_EXTRA = (AUG_PARAM_NAMES - {"data_shape", "resize", "rand_crop", "pad", "fill_value", "inter_method"}) | {
    "max_random_contrast", "max_random_illumination"}

_DTYPES = {"float32": np.float32, "uint8": np.uint8, "float16": np.float16, "int8": np.int8}


def _shape3(s: Any) -> tuple[int, int, int]:
    if isinstance(s, str):
        s = [int(x) for x in s.strip("()[] ").split(",") if x.strip()]
    s = tuple(int(x) for x in s)
    if len(s) != 3 or s[0] not in (1, 3, 4) or s[1] < 1 or s[2] < 1:
        raise IterDataError(f"ImageRecordIter: data_shape must be (channels, height, width) with 1, 3 or "
                            f"4 channels, got {s!r}")
    return s  # type: ignore[return-value]


def _to_rgb(arr: np.ndarray) -> np.ndarray:
    """OpenCV's BGR(A) -> RGB(A) view (gray unchanged)."""
    if arr.shape[2] == 3:
        return arr[:, :, ::-1]
    if arr.shape[2] == 4:
        return arr[:, :, [2, 1, 0, 3]]
    return arr


class _Augmenter:
    """Decode + augment (``augment.DefaultAugmenter``) + mirror one record
    (``__call__``, per image), then normalise a whole batch at once (``finish``)."""

    def __init__(self, data_shape: tuple[int, int, int], resize: int, rand_crop: bool,
                 rand_mirror: bool, mirror: bool, pad: int, fill_value: int, inter_method: int,
                 mean: np.ndarray | None, mult: np.ndarray, out_dtype: np.dtype,
                 label_width: int, max_random_contrast: float = 0.0,
                 max_random_illumination: float = 0.0, **aug: Any) -> None:
        self.c, self.h, self.w = data_shape
        shape = (int(data_shape[0]), int(data_shape[1]), int(data_shape[2]))
        self.params = AugParams(data_shape=shape, resize=int(resize), rand_crop=bool(rand_crop), pad=int(pad),
                                fill_value=int(fill_value), inter_method=int(inter_method), **aug)
        self.default = DefaultAugmenter(self.params)
        self.resize = int(resize)
        self.rand_crop, self.rand_mirror, self.mirror = bool(rand_crop), bool(rand_mirror), bool(mirror)
        self.pad, self.fill_value = int(pad), int(fill_value)
        self.inter_method = int(inter_method)
        self.mean = mean          # (c,1,1) or (c,h,w) float32, or None (raw pixels out)
        self.mult = mult          # (c,1,1) float32: scale / std
        self.out_dtype = out_dtype
        self.label_width = int(label_width)
        self.max_random_contrast = float(max_random_contrast)
        self.max_random_illumination = float(max_random_illumination)
        cv2()  # fail early, with the install hint, when OpenCV is missing

    def _decode(self, img: bytes) -> np.ndarray:
        """``(h, w, c)`` uint8, OpenCV's BGR(A) order."""
        return imdecode_bgr(img, self.c)

    #: record id -> labels from ``path_imglist`` (replacing the records' own labels)
    label_map: dict[int, np.ndarray] | None = None

    def _label(self, header: recordio.IRHeader, label_out: np.ndarray) -> None:
        if self.label_map is not None:
            lab = self.label_map.get(int(header.id))
            if lab is None:
                raise MXNetError(f"record {header.id} has no line in path_imglist")
            label_out[:] = lab
            return
        if header.flag > 0:
            if header.flag != self.label_width:
                raise MXNetError(f"record {header.id} holds a {header.flag}-dimensional label but "
                                 f"label_width is {self.label_width}")
            label_out[:] = header.label
        else:
            if self.label_width != 1:
                raise MXNetError(f"record {header.id} holds one label but label_width is "
                                 f"{self.label_width}")
            label_out[0] = header.label

    def load(self, payload: bytes, u: np.ndarray, label_out: np.ndarray,
             rng: np.random.Generator | None = None) -> tuple[np.ndarray, int, bool]:
        """Label into ``label_out``; returns the augmented ``(h, w, c)`` uint8 image in
        OpenCV's BGR(A) order, the record id and whether to mirror it. ``u``: this image's
        uniform numbers (``u[2]``: mirror); ``rng``: the augmenter's random numbers."""
        header, img = recordio.unpack(payload)
        self._label(header, label_out)
        try:
            arr = self._decode(img)
        except Exception as e:  # noqa: BLE001
            raise MXNetError(f"cannot decode the image of record {header.id} ({len(img)} bytes): "
                             f"{e}") from e
        if rng is None:
            rng = np.random.default_rng(int(u[0] * 2**53))
        try:
            arr = self.default.process(arr, rng)
        except MXNetError as e:
            raise MXNetError(f"record {header.id}: {e}") from e
        return arr, int(header.id), self.mirror or (self.rand_mirror and bool(u[2] < 0.5))

    def __call__(self, payload: bytes, u: np.ndarray, label_out: np.ndarray,
                 rng: np.random.Generator | None = None) -> tuple[np.ndarray, int]:
        """``load``, as an ``(h, w, c)`` uint8 RGB(A) image, mirrored if drawn."""
        arr, rec_id, mirrored = self.load(payload, u, label_out, rng)
        arr = _to_rgb(arr)
        return (arr[:, ::-1] if mirrored else arr), rec_id

    def normalise_into(self, bgr: np.ndarray, mirrored: bool, out: np.ndarray, u: np.ndarray) -> None:
        """One image of ``load`` into its ``(c, h, w)`` slot of the output batch:
        ``((pixel - mean) * contrast + illumination) * scale / std``, plane by plane
        (contiguous planes from ``cv2.split``: 3x faster than a strided transpose)."""
        assert self.mean is not None
        if bgr.shape[2] == 1:
            planes = [bgr[:, :, 0]]
        else:
            split = cv2().split(bgr)
            planes = [split[2], split[1], split[0]] + list(split[3:])
        contrast = illum = None
        if self.max_random_contrast > 0 or self.max_random_illumination > 0:
            contrast = np.float32(1 + (u[4] * 2 - 1) * self.max_random_contrast)
            illum = np.float32((u[5] * 2 - 1) * self.max_random_illumination)
        per_pixel = self.mean.shape[1] > 1
        for ch, plane in enumerate(planes):
            m = self.mean[ch] if per_pixel else self.mean[ch, 0, 0]
            if mirrored:
                plane = plane[:, ::-1]
                if per_pixel:
                    m = m[:, ::-1]
            if self.out_dtype == np.int8:
                out[ch] = np.clip(np.subtract(plane, m, dtype=np.float32), -128, 127)
                continue
            o = out[ch]
            np.subtract(plane, m, out=o, dtype=self.out_dtype, casting="unsafe")
            if contrast is not None:
                o *= contrast
                o += illum
            o *= self.mult[ch, 0, 0]

    def finish(self, raw: np.ndarray) -> np.ndarray:
        """``(bs, h, w, c)`` uint8 -> ``(bs, c, h, w)`` raw pixels (no normalisation)."""
        return np.ascontiguousarray(raw.transpose(0, 3, 1, 2), dtype=self.out_dtype)


class _BufferPool:
    """Batch arrays handed out again once nothing references them (``sys.getrefcount``:
    the batch's NDArray, views and pending futures all hold references). A 64x3x224x224
    float32 batch is 38 MB, above glibc's largest mmap threshold, so a fresh one is
    mapped, page-faulted in (about 4 ms) and unmapped every time; a reused one is not."""

    #: references while idle: the pool's list, the loop variable, getrefcount's argument
    _IDLE_REFS = 3

    def __init__(self, limit: int) -> None:
        self._bufs: list[np.ndarray] = []
        self._limit = int(limit)
        self._lock = threading.Lock()

    def get(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        with self._lock:
            for b in self._bufs:
                if b.shape == shape and b.dtype == dtype and sys.getrefcount(b) <= self._IDLE_REFS:
                    return b
            a = np.empty(shape, dtype)
            if len(self._bufs) < self._limit:
                self._bufs.append(a)
            return a


def _build_batch(reader: recordio.RecordFileReader, offsets: np.ndarray, aug: _Augmenter,
                 plan: Plan, seed: int, label_width: int,
                 pool: _BufferPool | None = None) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Worker: read, decode and augment the records of one plan into fresh arrays."""
    bs = len(plan.positions)
    label = np.empty((bs, label_width), dtype=np.float32)
    index = np.empty(bs, dtype=np.uint64)
    rng = np.random.default_rng([seed, plan.serial])
    # per image: (unused), (unused), mirror, (unused), contrast, illumination
    u = rng.random((bs, 6))
    if aug.mean is None:  # raw pixels: gather HWC, one transpose at the end
        raw = np.empty((bs, aug.h, aug.w, aug.c), dtype=np.uint8)
        for slot, pos in enumerate(plan.positions):
            raw[slot], index[slot] = aug(reader.read_at(int(offsets[pos])), u[slot], label[slot], rng)
        data = aug.finish(raw)
    else:
        shape = (bs, aug.c, aug.h, aug.w)
        data = pool.get(shape, aug.out_dtype) if pool is not None else np.empty(shape, aug.out_dtype)
        for slot, pos in enumerate(plan.positions):
            img, index[slot], mirrored = aug.load(reader.read_at(int(offsets[pos])), u[slot], label[slot], rng)
            aug.normalise_into(img, mirrored, data[slot], u[slot])
    return data, (label[:, 0].copy() if label_width == 1 else label), plan.pad, index


def _read_imglist(path: str, label_width: int) -> dict[int, np.ndarray]:
    """``index<TAB>label...<TAB>path`` lines -> ``{index: label_width labels}`` (MXNet's
    ``path_imglist``: labels looked up by the record's ``IRHeader.id``)."""
    out: dict[int, np.ndarray] = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            fields = line.strip().split("\t")
            if fields == [""]:
                continue
            if len(fields) < 2 + label_width:
                raise MXNetError(f"{path}:{lineno}: expected index, {label_width} label(s) and a path, "
                                 f"tab-separated; got {len(fields)} fields")
            try:
                out[int(float(fields[0]))] = np.array(fields[1:1 + label_width], np.float32)
            except ValueError as e:
                raise MXNetError(f"{path}:{lineno}: {e}") from e
    return out


class ImageRecordIter(DataIter):
    """Iterate over images packed in a RecordIO file (``mx.io.ImageRecordIter``).

    Parameters
    ----------
    path_imgrec : str
        The ``.rec`` file (records made with ``recordio.pack``/``pack_img`` or ``im2rec``).
    path_imgidx : str, optional
        Its ``.idx`` file; without one the ``.rec`` is scanned once for record offsets.
    path_imglist : str, optional
        A ``.lst`` file (``index<TAB>labels<TAB>path``) whose labels replace the records'
        own, looked up by each record's ``IRHeader.id`` (as MXNet).
    data_shape : (channels, height, width)
        Output shape of one image; 1 channel decodes to grayscale, 3 to RGB, 4 to RGBA.
    batch_size : int
    shuffle : bool
        Visit the records in a new random order every pass (from ``seed``).
    seed : int
        Seed of the shuffle (and of the augmentation unless ``seed_aug`` is given).
    resize : int
        Resize the shorter edge to this before cropping (-1: no resize).
    rand_crop : bool
        Crop at a random place instead of the centre.
    rand_mirror, mirror : bool
        Flip horizontally with probability 1/2, or always.
    mean_r, mean_g, mean_b, mean_a, std_r, std_g, std_b, std_a, scale : float
        Output = ``(pixel - mean) / std * scale`` per channel (float outputs only).
    mean_img : str, optional
        File of a mean image ``(c, h, w)`` (MXNet's NDArray format, or ``.npy``) to
        subtract instead of ``mean_*``; if missing it is computed from the data (centre
        crops, after ``resize``) and saved there.
    label_width : int
        Number of labels per image.
    preprocess_threads : int
        Worker threads decoding and augmenting (capped at the CPU count).
    prefetch_buffer : int
        Batches prepared ahead.
    num_parts, part_index : int
        Iterate over part ``part_index`` of ``num_parts`` disjoint parts.
    round_batch : bool
        How a short last batch is completed (see ``plexnet.io.batching``); ``pad`` is
        reported in both modes.
    dtype : 'float32' | 'uint8' | 'float16' | 'int8'
        Output dtype; ``'uint8'`` gives raw pixels (no normalisation), ``'int8'``
        ``saturate(pixel - mean)`` (as MXNet: ``std``/``scale`` unused).
    resize, rand_crop, random_resized_crop, max_rotate_angle, rotate, rotate_list,
    max_aspect_ratio, min_aspect_ratio, max_shear_ratio, max_crop_size, min_crop_size,
    max_random_scale, min_random_scale, max_random_area, min_random_area, max_img_size,
    min_img_size, brightness, contrast, saturation, pca_noise, random_h, random_s,
    random_l : MXNet 1.9.1's ``aug_default`` augmenter, in its order (``augment``).
    max_random_contrast, max_random_illumination : float
        Per-image ``(pixel - mean) * c + i`` with ``c`` in ``1 +- max_random_contrast``,
        ``i`` in ``+- max_random_illumination``, before ``scale / std``.
    inter_method : int
        Resize filter: 0 nearest, 1 bilinear (default), 2 bicubic, 3 area, 4 lanczos,
        9 auto, 10 random.
    pad, fill_value : int
        Pad every side by ``pad`` pixels of ``fill_value`` before cropping.
    data_name, label_name : str

    ``index`` of a batch holds the records' ``IRHeader.id``.
    """

    _batches_carry_descs = True

    def __init__(self, path_imgrec: str, data_shape: Sequence[int], batch_size: int,
                 path_imgidx: str = "", shuffle: bool = False, seed: int = 0, resize: int = -1,
                 rand_crop: bool = False, rand_mirror: bool = False, mirror: bool = False,
                 mean_r: float = 0.0, mean_g: float = 0.0, mean_b: float = 0.0, mean_a: float = 0.0,
                 std_r: float = 1.0, std_g: float = 1.0, std_b: float = 1.0, std_a: float = 1.0,
                 mean_img: str = "", scale: float = 1.0, label_width: int = 1,
                 preprocess_threads: int = 4, prefetch_buffer: int = 4, num_parts: int = 1,
                 part_index: int = 0, round_batch: bool = True, dtype: str = "float32",
                 inter_method: int = 1, pad: int = 0, fill_value: int = 255,
                 seed_aug: int | None = None, data_name: str = "data",
                 label_name: str = "softmax_label", **kwargs: Any) -> None:
        super().__init__(int(batch_size))
        self._closed = True  # until fully built: __del__/close() must cope
        self._pool: cf.ThreadPoolExecutor | None = None
        self._reader: recordio.RecordFileReader | None = None
        aug_extra: dict[str, Any] = {}
        unknown: dict[str, Any] = {}
        path_imglist = os.fspath(kwargs.pop("path_imglist", "") or "")
        for k, v in kwargs.items():
            if k in _AUG_EXTRA:
                aug_extra[k] = v
                continue
            if k in _IGNORED:
                continue
            if k in _UNSUPPORTED_DEFAULTS:
                if v != _UNSUPPORTED_DEFAULTS[k] and str(v) != str(_UNSUPPORTED_DEFAULTS[k]):
                    raise NotImplementedError(f"ImageRecordIter: {k}={v!r} is not supported by plexnet")
                continue
            unknown[k] = v
        warn_unknown_args("ImageRecordIter", unknown)
        cv2()  # fail early, with the install hint, when OpenCV is missing
        if self.batch_size < 1:
            raise ValueError(f"ImageRecordIter: batch_size must be >= 1, got {batch_size}")
        self.data_shape = _shape3(data_shape)
        if str(dtype) not in _DTYPES:
            raise ValueError(f"ImageRecordIter: dtype must be one of {sorted(_DTYPES)}, got {dtype!r}")
        out_dtype = np.dtype(_DTYPES[str(dtype)])
        self.label_width = int(label_width)
        if self.label_width < 1:
            raise ValueError(f"ImageRecordIter: label_width must be >= 1, got {label_width}")
        path_imgrec = os.fspath(path_imgrec)
        if not os.path.exists(path_imgrec):
            raise FileOpenError(f"ImageRecordIter: path_imgrec {path_imgrec!r} does not exist")
        # -- the records of this part, in file order ---------------------------------------
        if path_imgidx:
            path_imgidx = os.fspath(path_imgidx)
            offsets = []
            with open(path_imgidx) as f:
                for lineno, line in enumerate(f, 1):
                    fields = line.split()
                    if not fields:
                        continue
                    if len(fields) < 2:
                        raise MXNetError(f"{path_imgidx}:{lineno}: expected 'key<TAB>offset'")
                    offsets.append(int(fields[1]))
            all_offsets = np.unique(np.asarray(offsets, dtype=np.int64))
        else:
            all_offsets = np.asarray(recordio.scan_offsets(path_imgrec), dtype=np.int64)
        start, end = partition_range(len(all_offsets), num_parts, part_index)
        self._offsets = all_offsets[start:end]
        self.num_parts, self.part_index = int(num_parts), int(part_index)
        if len(self._offsets) == 0:
            raise MXNetError(f"ImageRecordIter: {path_imgrec} part {part_index} of {num_parts} holds "
                             f"no records")
        self.path_imgrec, self.path_imgidx = path_imgrec, path_imgidx
        self.seed = int(seed)
        self.seed_aug = int(seed_aug) if seed_aug is not None else self.seed
        # -- normalisation ------------------------------------------------------------------
        c = self.data_shape[0]
        means = np.array([mean_r, mean_g, mean_b, mean_a][:c] if c > 1 else [mean_r], np.float32)
        stds = np.array([std_r, std_g, std_b, std_a][:c] if c > 1 else [std_r], np.float32)
        if np.any(stds == 0):
            raise ValueError("ImageRecordIter: std_* must not be 0")
        normalise = out_dtype.kind == "f" or out_dtype == np.int8
        mult = (np.float32(scale) / stds).reshape(c, 1, 1).astype(np.float32)
        if out_dtype == np.int8:  # MXNet: saturate(pixel - mean); std and scale unused
            mult = np.ones((c, 1, 1), np.float32)
        mean = means.reshape(c, 1, 1) if normalise else None
        self._reader = recordio.RecordFileReader(path_imgrec)
        aug_args = (self.data_shape, resize, rand_crop, rand_mirror, mirror, pad, fill_value,
                    int(inter_method))
        if mean_img and normalise:
            mean = self._mean_image(os.fspath(mean_img), aug_args)
        self._aug = _Augmenter(*aug_args, mean, mult, out_dtype, self.label_width, **aug_extra)
        if path_imglist:
            self._aug.label_map = _read_imglist(path_imglist, self.label_width)
        # -- batching + workers -------------------------------------------------------------
        self.round_batch = bool(round_batch)
        self._planner = BatchPlanner(len(self._offsets), self.batch_size, round_batch=self.round_batch,
                                     shuffle=bool(shuffle), seed=self.seed)
        self.preprocess_threads = max(1, min(int(preprocess_threads), os.cpu_count() or 1))
        self.prefetch_buffer = max(1, int(prefetch_buffer))
        self._window = max(self.prefetch_buffer, self.preprocess_threads)
        self._pending: collections.deque[tuple[cf.Future, Any]] = collections.deque()
        self._exhausted = False
        self._buffers = _BufferPool(self._window + 2)
        self._pool = cf.ThreadPoolExecutor(self.preprocess_threads,
                                           thread_name_prefix="plexnet-io-ImageRecordIter")
        b = self.batch_size
        self._provide_data = [DataDesc(data_name, (b,) + self.data_shape, out_dtype.type)]
        lshape = (b,) if self.label_width == 1 else (b, self.label_width)
        self._provide_label = [DataDesc(label_name, lshape, np.float32)]
        self._cur: tuple[list[Any], list[Any], int, np.ndarray] | None = None
        self._closed = False
        self._fill()

    # -- mean image --------------------------------------------------------------------------
    def _mean_image(self, path: str, aug_args: tuple) -> np.ndarray:
        c, h, w = self.data_shape
        if os.path.exists(path):
            if path.endswith(".npy"):
                m = np.load(path)
            else:
                from ..ndarray import load
                loaded = load(path)
                vals = list(loaded.values()) if isinstance(loaded, dict) else list(loaded)
                if len(vals) != 1:
                    raise MXNetError(f"ImageRecordIter: invalid mean image file {path}: "
                                     f"{len(vals)} arrays")
                m = vals[0].asnumpy()
            m = np.asarray(m, dtype=np.float32)
            if m.shape != (c, h, w):
                raise MXNetError(f"ImageRecordIter: mean image {path} has shape {m.shape}, "
                                 f"expected {(c, h, w)}")
            return m
        log.info("ImageRecordIter: computing the mean image into %s", path)
        shape, resize, _, _, _, pad, fill, inter = aug_args
        aug = _Augmenter(shape, resize, False, False, False, pad, fill, inter,  # centre crop, no mirror
                         None, np.ones((c, 1, 1), np.float32), np.dtype(np.float32), self.label_width)
        acc = np.zeros((h, w, c), np.float64)
        lab = np.empty(self.label_width, np.float32)
        u = np.zeros(4)
        assert self._reader is not None
        for off in self._offsets:
            acc += aug(self._reader.read_at(int(off)), u, lab)[0]
        acc = acc.transpose(2, 0, 1)
        m = (acc / len(self._offsets)).astype(np.float32)
        if path.endswith(".npy"):
            with atomic_open(path) as f:  # old or new file, never half
                np.save(f, m)
        else:
            from ..ndarray import save
            save(path, {"mean_img": to_ndarray(m.copy(), owned=True)})
        return m

    # -- read-ahead ---------------------------------------------------------------------------
    def _fill(self) -> None:
        while not self._exhausted and len(self._pending) < self._window:
            before = self._planner.state()
            plan = self._planner.next_plan()
            if plan is None:
                self._exhausted = True
                self._pending.append((None, before))  # type: ignore[arg-type]
                break
            assert self._pool is not None and self._reader is not None
            fut = self._pool.submit(_build_batch, self._reader, self._offsets, self._aug, plan,
                                    self.seed_aug, self.label_width, self._buffers)
            self._pending.append((fut, before))

    def _drop_pending(self) -> None:
        """Forget the read-ahead and rewind the planner to the first undelivered batch."""
        if self._pending:
            self._planner.restore(self._pending[0][1])
        for fut, _ in self._pending:
            if fut is not None:
                fut.cancel()
        self._pending.clear()
        self._exhausted = False

    def reset(self) -> None:
        if self._closed:
            raise RuntimeError("ImageRecordIter: reset() after close()")
        self._drop_pending()
        self._planner.reset()
        self._cur = None
        self._fill()

    def iter_next(self) -> bool:
        if self._closed:
            raise RuntimeError("ImageRecordIter: next() after close()")
        self._fill()
        if not self._pending:
            return False
        fut, before = self._pending[0]
        if fut is None:  # end-of-epoch marker: stays until reset()
            self._cur = None
            return False
        self._pending.popleft()
        try:
            data, label, pad, index = fut.result()
        finally:
            self._fill()
        self._cur = ([to_ndarray(data, owned=True)], [to_ndarray(label, owned=True)], pad, index)
        return True

    def _current(self) -> tuple[list[Any], list[Any], int, np.ndarray]:
        if self._cur is None:
            raise RuntimeError("ImageRecordIter: no current batch; call iter_next() first")
        return self._cur

    _get_returns_array = True  # one NDArray, as MXNet's MXDataIter

    def getdata(self) -> Any:
        return self._current()[0][0]

    def getlabel(self) -> Any:
        return self._current()[1][0]

    def getpad(self) -> int:
        return self._current()[2]

    def getindex(self) -> np.ndarray:
        return self._current()[3]

    def close(self, wait: bool = True) -> None:
        """Stop the worker threads and close the file (idempotent); ``wait``: join the threads."""
        self._closed = True
        for fut, _ in getattr(self, "_pending", ()):
            if fut is not None:
                fut.cancel()
        pool, self._pool = getattr(self, "_pool", None), None
        if pool is not None:
            pool.shutdown(wait=wait, cancel_futures=True)
        reader = getattr(self, "_reader", None)
        if reader is not None:
            reader.close()
        self._cur = None

    def __del__(self) -> None:
        try:  # no join: GC can run this inside threading's own locks (a new thread's start), where it deadlocks
            self.close(wait=False)
        except Exception as e:  # noqa: BLE001 - never raise from GC
            warnings.warn(f"ImageRecordIter: {e}", RuntimeWarning, stacklevel=1)


class ImageRecordInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` with ``dtype='int8'``: ``saturate(pixel - mean)`` as int8."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["dtype"] = "int8"
        super().__init__(*args, **kwargs)


class ImageRecordUInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` with ``dtype='uint8'`` (raw pixels; MXNet's deprecated alias)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["dtype"] = "uint8"
        super().__init__(*args, **kwargs)
