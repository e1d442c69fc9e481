"""``mx.io.MXDataIter``: the type MXNet gives its C++ iterators.

In MXNet, ``mx.io.ImageRecordIter(...)``, ``CSVIter``, ``MNISTIter`` and the other
backend iterators all return an ``MXDataIter`` wrapping a C handle, and scripts test
``isinstance(it, mx.io.MXDataIter)``. plexnet's equivalents are plain Python classes;
``MXDataIter`` names them as a group: ``isinstance``/``issubclass`` hold for every
iterator MXNet implements in C++ (and for subclasses of ``MXDataIter``). There are no C
handles, so it cannot be built from one.
"""
from __future__ import annotations

import importlib
from typing import Any

from .base import DataIter

__all__ = ["MXDataIter", "NATIVE_ITERS"]

#: MXNet's C++ iterators, as plexnet "module:class"
NATIVE_ITERS = (
    "plexnet.io.image_record_iter:ImageRecordIter", "plexnet.io.image_det_record_iter:ImageDetRecordIter",
    "plexnet.io.csv_iter:CSVIter", "plexnet.io.mnist_iter:MNISTIter", "plexnet.io.libsvm_iter:LibSVMIter",
)


def _native() -> tuple[type, ...]:
    out = []
    for target in NATIVE_ITERS:
        mod, attr = target.split(":")
        out.append(getattr(importlib.import_module(mod), attr))
    return tuple(out)


class _MXDataIterMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or isinstance(obj, _native())

    def __subclasscheck__(cls, sub: type) -> bool:
        return type.__subclasscheck__(cls, sub) or issubclass(sub, _native())


class MXDataIter(DataIter, metaclass=_MXDataIterMeta):
    """The group of MXNet's backend iterators (see the module); ``isinstance`` only."""

    def __init__(self, handle: Any = None, data_name: str = "data", label_name: str = "softmax_label",
                 **_: Any) -> None:
        raise TypeError("MXDataIter wraps a C iterator handle, which plexnet does not have: create the "
                        "iterator by name instead (mx.io.ImageRecordIter(...), mx.io.CSVIter(...), ...)")
