"""Vision datasets (MXNet 1.9.1 ``gluon.data.vision``) read from local files.

plexnet cannot download: MNIST/FashionMNIST/CIFAR read the files MXNet would have
downloaded from ``root`` (gzipped or not; CIFAR also from its extracted archive folder
or the ``.tar.gz`` itself), and raise an error that names the expected files and
``root`` when they are absent. Samples are what MXNet gives: an ``(h, w, c)`` uint8
NDArray and an int32 label.
"""
from __future__ import annotations

import gzip
import os
import struct
import tarfile
import warnings
from typing import Any, Callable

import numpy as np

from .... import ndarray as nd
from .... import recordio
from ....base import PlexnetError
from ...model_zoo.model_store import data_dir
from .. import dataset
from .... import image

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset", "ImageFolderDataset"]


def _missing(cls: str, root: str, names: list[str], extra: str = "") -> PlexnetError:
    return PlexnetError(f"{cls}: dataset files not found in {root!r}: expected {', '.join(names)}{extra}. plexnet "
                        f"cannot download them; copy them there (e.g. from MXNet's ~/.mxnet/datasets) or pass "
                        f"root=<directory holding them>.")


class _LocalDataset(dataset.Dataset):
    """``_data`` (NDArray of images) and ``_label`` (numpy) loaded by ``_get_data``."""

    def __init__(self, root: str, transform: Callable | None) -> None:
        self._transform = transform
        self._root = os.path.expanduser(root)
        self._data: Any = None
        self._label: Any = None
        self._get_data()

    def __getitem__(self, idx: int) -> Any:
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self) -> int:
        return len(self._label)

    def _get_data(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define _get_data")


class MNIST(_LocalDataset):
    """MNIST digits: ``(28, 28, 1)`` uint8 images from ``root``'s
    ``train-images-idx3-ubyte.gz`` / ``train-labels-idx1-ubyte.gz`` (``t10k-*`` with
    ``train=False``; the files may also be uncompressed)."""

    _files = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
              False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}

    def __init__(self, root: str = os.path.join(data_dir(), "datasets", "mnist"), train: bool = True,
                 transform: Callable | None = None) -> None:
        self._train = train
        super().__init__(root, transform)

    def _open(self, base: str) -> Any:
        for name, opener in ((base + ".gz", gzip.open), (base, open)):
            path = os.path.join(self._root, name)
            if os.path.exists(path):
                return opener(path, "rb")
        return None

    def _get_data(self) -> None:
        data_name, label_name = self._files[self._train]
        fl, fd = self._open(label_name), self._open(data_name)
        if fl is None or fd is None:
            for f in (fl, fd):
                if f is not None:
                    f.close()
            raise _missing(type(self).__name__, self._root, [data_name + ".gz", label_name + ".gz"],
                           " (or the same without .gz)")
        with fl:
            magic, n = struct.unpack(">II", fl.read(8))
            label = np.frombuffer(fl.read(), dtype=np.uint8).astype(np.int32)
        with fd:
            magic_d, nd_, rows, cols = struct.unpack(">IIII", fd.read(16))
            data = np.frombuffer(fd.read(), dtype=np.uint8)
        if magic != 2049 or magic_d != 2051 or len(label) != n or data.size != nd_ * rows * cols or n != nd_:
            raise PlexnetError(f"{type(self).__name__}: {data_name}/{label_name} in {self._root!r} are not a "
                               f"matching pair of IDX files (magic {magic_d}/{magic}, {nd_} images, {n} labels)")
        self._data = nd.array(data.reshape(n, rows, cols, 1), dtype=np.uint8)
        self._label = label


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, MNIST's file names and format."""

    def __init__(self, root: str = os.path.join(data_dir(), "datasets", "fashion-mnist"), train: bool = True,
                 transform: Callable | None = None) -> None:
        super().__init__(root, train, transform)


class CIFAR10(_LocalDataset):
    """CIFAR-10: ``(32, 32, 3)`` uint8 images from the binary version's
    ``data_batch_1..5.bin`` / ``test_batch.bin`` in ``root`` (or in
    ``root/cifar-10-batches-bin``, or extracted from ``root/cifar-10-binary.tar.gz``)."""

    _archive = "cifar-10-binary.tar.gz"
    _subdir = "cifar-10-batches-bin"
    _train_files = [f"data_batch_{i}.bin" for i in range(1, 6)]
    _test_files = ["test_batch.bin"]
    _label_bytes = 1

    def __init__(self, root: str = os.path.join(data_dir(), "datasets", "cifar10"), train: bool = True,
                 transform: Callable | None = None) -> None:
        self._train = train
        super().__init__(root, transform)

    def _read_batch(self, filename: str) -> tuple[np.ndarray, np.ndarray]:
        with open(filename, "rb") as fin:
            data = np.frombuffer(fin.read(), dtype=np.uint8).reshape(-1, 3072 + self._label_bytes)
        return (data[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1),
                data[:, self._label_column()].astype(np.int32))

    def _label_column(self) -> int:
        return 0

    def _find(self, names: list[str]) -> str | None:
        for d in (self._root, os.path.join(self._root, self._subdir)):
            if all(os.path.exists(os.path.join(d, n)) for n in names):
                return d
        return None

    def _get_data(self) -> None:
        names = self._train_files if self._train else self._test_files
        where = self._find(names)
        archive = os.path.join(self._root, self._archive)
        if where is None and os.path.exists(archive):
            with tarfile.open(archive) as tar:
                try:
                    tar.extractall(self._root, filter="data")  # no paths outside root
                except TypeError:  # Python without extraction filters
                    tar.extractall(self._root)  # noqa: S202
            where = self._find(names)
        if where is None:
            raise _missing(type(self).__name__, self._root, names,
                           f" (or in {self._subdir}/, or the archive {self._archive})")
        data, label = zip(*(self._read_batch(os.path.join(where, n)) for n in names))
        self._data = nd.array(np.concatenate(data), dtype=np.uint8)
        self._label = np.concatenate(label)


class CIFAR100(CIFAR10):
    """CIFAR-100 (binary version: ``train.bin`` / ``test.bin``); ``fine_label`` picks
    the 100 fine classes instead of the 20 coarse ones."""

    _archive = "cifar-100-binary.tar.gz"
    _subdir = "cifar-100-binary"
    _train_files = ["train.bin"]
    _test_files = ["test.bin"]
    _label_bytes = 2

    def __init__(self, root: str = os.path.join(data_dir(), "datasets", "cifar100"), fine_label: bool = False,
                 train: bool = True, transform: Callable | None = None) -> None:
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_column(self) -> int:
        return int(self._fine_label)


class ImageRecordDataset(dataset.RecordFileDataset):
    """Images with labels in a RecordIO file (``im2rec``): each sample is the decoded
    image (``flag`` 1: RGB, 0: grayscale) and the header's label."""

    def __init__(self, filename: str, flag: int = 1, transform: Callable | None = None) -> None:
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx: int) -> Any:
        record = super().__getitem__(idx)
        header, img = recordio.unpack(record)
        if self._transform is not None:
            return self._transform(image.imdecode(img, self._flag), header.label)
        return image.imdecode(img, self._flag), header.label


class ImageFolderDataset(dataset.Dataset):
    """Image files in one folder per class (``root/car/0001.jpg``, ``root/bus/1.png``):
    ``synsets[label]`` is the folder name; ``items`` the ``(filename, label)`` pairs."""

    def __init__(self, root: str, flag: int = 1, transform: Callable | None = None) -> None:
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = [".jpg", ".jpeg", ".png"]
        if not os.path.isdir(self._root):
            raise PlexnetError(f"ImageFolderDataset: {self._root!r} is not a directory (expected one sub-folder of "
                               f"images per class)")
        self._list_images(self._root)

    def _list_images(self, root: str) -> None:
        self.synsets: list[str] = []
        self.items: list[tuple[str, int]] = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename} of type {ext}. Only support {', '.join(self._exts)}",
                                  stacklevel=3)
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx: int) -> Any:
        img = image.imread(self.items[idx][0], self._flag)
        label = self.items[idx][1]
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self) -> int:
        return len(self.items)
