"""``MNISTIter``: batches from MNIST idx files (MXNet 1.x ``mx.io.MNISTIter``)."""
from __future__ import annotations

import gzip
import os
import struct
from typing import Any

import numpy as np

from ..base import FileOpenError, MXNetError
from .base import DataDesc, DataIter, to_ndarray, warn_unknown_args
from .partition import partition_range

__all__ = ["MNISTIter", "read_idx_file"]


def _open(path: str) -> Any:
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def read_idx_file(path: str, expect_dims: int | None = None) -> np.ndarray:
    """Read an idx(-ubyte) file (optionally gzip-compressed) into a numpy array.

    The header is two zero bytes, a type code (0x08 = uint8, 0x09 int8, 0x0B int16,
    0x0C int32, 0x0D float32, 0x0E float64), the number of dimensions, then one
    big-endian uint32 per dimension; the data follow big-endian.
    """
    types = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    if not os.path.exists(path):
        raise FileOpenError(f"MNISTIter: {path!r} does not exist")
    with _open(path) as f:
        head = f.read(4)
        if len(head) != 4 or head[0] != 0 or head[1] != 0 or head[2] not in types:
            raise MXNetError(f"MNISTIter: {path} is not an idx file (bad magic {head.hex()})")
        ndim = head[3]
        if expect_dims is not None and ndim != expect_dims:
            raise MXNetError(f"MNISTIter: {path} has {ndim} dimensions, expected {expect_dims} "
                             f"(image and label files swapped?)")
        raw = f.read(4 * ndim)
        if len(raw) != 4 * ndim:
            raise MXNetError(f"MNISTIter: {path} is truncated in its header: {ndim} dimensions need "
                             f"{4 * ndim} bytes, the file has {len(raw)}")
        dims = struct.unpack(f">{ndim}I", raw)
        dt = np.dtype(types[head[2]])
        need = dt.itemsize
        for d in dims:  # Python ints: no int64 wrap-around
            need *= d
        # read in bounded chunks: a forged header must not make us allocate its claim
        chunks, got = [], 0
        while got < need:
            c = f.read(min(need - got, 1 << 24))
            if not c:
                break
            chunks.append(c)
            got += len(c)
        if got != need:
            raise MXNetError(f"MNISTIter: {path}: header says dimensions {list(dims)} ({need} data bytes), "
                             f"the file holds {got}: truncated or forged header")
        buf = b"".join(chunks)
    return np.frombuffer(buf, dt).reshape(dims).astype(dt.newbyteorder("="))


class MNISTIter(DataIter):
    """Iterate over MNIST (``mx.io.MNISTIter``).

    Parameters
    ----------
    image, label : str
        Paths of the idx image (``N x rows x cols``) and label (``N``) files; gzip
        compressed files (``.gz``) are read directly.
    batch_size : int
    shuffle : bool
        Shuffle the examples (default True) once, when loading, with ``seed``; every
        epoch then visits them in that order (as MXNet). The permutation differs from
        MXNet's C++ ``std::shuffle``.
    flat : bool
        Data of shape ``(batch, rows*cols)`` instead of ``(batch, 1, rows, cols)``.
    seed : int
    num_parts, part_index : int
        Use only part ``part_index`` of ``num_parts`` disjoint parts (see
        ``plexnet.io.partition``); the part is cut before shuffling.

    Pixels are scaled by 1/256 to float32, as MXNet does. A short last batch is dropped.
    ``index`` holds each example's position in the files (MXNet reported zeros).
    """

    _batches_carry_descs = True

    def __init__(self, image: str = "./train-images-idx3-ubyte", label: str = "./train-labels-idx1-ubyte",
                 batch_size: int = 128, shuffle: bool = True, flat: bool = False, seed: int = 0,
                 silent: bool = False, num_parts: int = 1, part_index: int = 0,
                 data_name: str = "data", label_name: str = "softmax_label",
                 prefetch_buffer: int = 4, ctx: str = "cpu", dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(int(batch_size))
        # scripts pass the shape of one example; MXNet ignores it (only ``flat`` decides the
        # shape: gluon/image_classification.py passes (1, 32, 32) and gets 28x28 images)
        kwargs.pop("input_shape", None)
        kwargs.pop("data_shape", None)
        warn_unknown_args("MNISTIter", kwargs)
        if self.batch_size < 1:
            raise ValueError(f"MNISTIter: batch_size must be >= 1, got {batch_size}")
        imgs = read_idx_file(os.fspath(image), expect_dims=3)
        labs = read_idx_file(os.fspath(label), expect_dims=1)
        if imgs.shape[0] != labs.shape[0]:
            raise MXNetError(f"MNISTIter: {image} holds {imgs.shape[0]} images but {label} "
                             f"{labs.shape[0]} labels")
        start, end = partition_range(imgs.shape[0], num_parts, part_index)
        order = np.arange(start, end)
        if shuffle:
            np.random.RandomState(int(seed)).shuffle(order)
        self._index = order.astype(np.uint64)
        rows, cols = imgs.shape[1:]
        self.flat = bool(flat)
        # scaled once up front, like MXNet
        self._images = (imgs[order].astype(np.float32) * np.float32(1.0 / 256.0))
        self._images = self._images.reshape((-1, rows * cols) if self.flat else (-1, 1, rows, cols))
        self._labels = labs[order].astype(np.float32)
        self.num_data = len(order)
        if self.num_data < self.batch_size:
            raise ValueError(f"MNISTIter: part {part_index} of {num_parts} holds {self.num_data} "
                             f"images, fewer than batch_size={self.batch_size}")
        if not silent:
            import logging
            logging.getLogger(__name__).info("MNISTIter: load %d images, shuffle=%d, shape=%s",
                                             self.num_data, int(bool(shuffle)),
                                             (self.batch_size,) + self._images.shape[1:])
        self._loc = 0
        self._cur = -1
        b = self.batch_size
        self._provide_data = [DataDesc(data_name, (b,) + self._images.shape[1:], np.float32)]
        self._provide_label = [DataDesc(label_name, (b,), np.float32)]

    def reset(self) -> None:
        self._loc = 0
        self._cur = -1

    def iter_next(self) -> bool:
        if self._loc + self.batch_size <= self.num_data:
            self._cur = self._loc
            self._loc += self.batch_size
            return True
        self._cur = -1
        return False

    def _sl(self) -> slice:
        if self._cur < 0:
            raise RuntimeError("MNISTIter: no current batch; call iter_next() first")
        return slice(self._cur, self._cur + self.batch_size)

    _get_returns_array = True  # one NDArray, as MXNet's MXDataIter

    def getdata(self) -> Any:
        return to_ndarray(self._images[self._sl()].copy(), owned=True)

    def getlabel(self) -> Any:
        return to_ndarray(self._labels[self._sl()].copy(), owned=True)

    def getindex(self) -> np.ndarray:
        return self._index[self._sl()].copy()

    def getpad(self) -> int:
        return 0
