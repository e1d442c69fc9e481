"""The internal plugin ``io:builtin``: registers plexnet's own data iterators.

It goes through the same hook as a third-party plugin (``plexnet_register_data_iters``),
so ``plexnet plugins`` lists them and ``plexnet.io.<Name>`` resolves either kind.
"""
from __future__ import annotations

from typing import Callable

from ..hookspecs import hookimpl

#: name -> "module:attribute" of every built-in iterator (imported when registered)
BUILTIN_ITERS = {
    "NDArrayIter": "plexnet.io.ndarray_iter:NDArrayIter",
    "CSVIter": "plexnet.io.csv_iter:CSVIter",
    "LibSVMIter": "plexnet.io.libsvm_iter:LibSVMIter",
    "MNISTIter": "plexnet.io.mnist_iter:MNISTIter",
    "ImageRecordIter": "plexnet.io.image_record_iter:ImageRecordIter",
    "ImageRecordUInt8Iter": "plexnet.io.image_record_iter:ImageRecordUInt8Iter",
    "PrefetchingIter": "plexnet.io.prefetch:PrefetchingIter",
    "ResizeIter": "plexnet.io.base:ResizeIter",
}


@hookimpl
def plexnet_register_data_iters(register: Callable[..., None]) -> None:
    import importlib
    for name, target in BUILTIN_ITERS.items():
        mod, attr = target.split(":")
        register(name, getattr(importlib.import_module(mod), attr))
