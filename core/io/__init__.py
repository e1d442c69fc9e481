"""``plexnet.io`` (``mx.io``): data iterators with MXNet 1.x names and semantics.

Built-in: ``NDArrayIter``, ``CSVIter``, ``LibSVMIter`` (CSR batches), ``MNISTIter``, ``ImageRecordIter`` (needs
OpenCV), ``ImageRecordUInt8Iter``, ``ImageRecordInt8Iter``, ``ImageDetRecordIter``,
``PrefetchingIter``, ``ResizeIter``; ``MXDataIter`` names the ones MXNet implements in
C++ (``isinstance`` checks). Iterators that plugins register through
``plexnet_register_data_iters`` appear here by name too (``plexnet.io.<Name>``).
See docs/io.md.
"""
from __future__ import annotations

from typing import Any

from .base import DataBatch, DataDesc, DataIter, ResizeIter, to_ndarray
from .csv_iter import CSVIter
from .image_det_record_iter import ImageDetRecordIter
from .image_record_iter import ImageRecordInt8Iter, ImageRecordIter, ImageRecordUInt8Iter
from .libsvm_iter import LibSVMIter
from .mnist_iter import MNISTIter
from .mxdataiter import MXDataIter
from .ndarray_iter import NDArrayIter
from .ndarray_iter import _init_data as _init_host_data
from .partition import partition_indices, partition_range
from .prefetch import PrefetchingIter

#: MXNet's legacy names for the same iterators
ImageRecordIter_v1 = ImageRecordIter
ImageRecordUInt8Iter_v1 = ImageRecordUInt8Iter

__all__ = ["DataDesc", "DataBatch", "DataIter", "NDArrayIter", "CSVIter", "MNISTIter",
           "ImageRecordIter", "ImageRecordUInt8Iter", "ImageDetRecordIter", "PrefetchingIter", "ResizeIter",
           "partition_range", "partition_indices", "list_data_iters", "ImageRecordIter_v1",
           "ImageRecordUInt8Iter_v1", "ImageRecordInt8Iter", "MXDataIter", "LibSVMIter"]


def _init_data(data: Any, allow_empty: bool, default_name: str) -> list[tuple[str, Any]]:
    """MXNet's ``mx.io._init_data``: ``[(name, NDArray)]`` sorted by name (a single array is
    named ``default_name``, a list ``_0_<name>, _1_<name>, ...``). Scripts call it to rename an
    ``NDArrayIter``'s label (example/svm_mnist)."""
    return [(k, to_ndarray(v, owned=True)) for k, v in _init_host_data(data, allow_empty, default_name)]


def list_data_iters() -> list[str]:
    """Names of every registered data iterator (built-in and from plugins)."""
    from ..plugins import registries
    return sorted(registries().data_iters)


def __getattr__(name: str) -> Any:
    # only public, iterator-like names go to the registry (keeps import machinery and
    # attribute probes such as __path__ from loading every plugin)
    if name.startswith("_"):
        raise AttributeError(f"module 'plexnet.io' has no attribute {name!r}")
    from ..plugins import registries
    cls = registries().data_iters.get(name)
    if cls is None:
        raise AttributeError(f"module 'plexnet.io' has no attribute {name!r}; registered data "
                             f"iterators: {', '.join(sorted(registries().data_iters))}")
    return cls


def __dir__() -> list[str]:
    try:
        from ..plugins import registries
        names = set(registries().data_iters)
    except Exception:  # noqa: BLE001 - dir() must not fail
        names = set()
    return sorted(set(globals()) | names)
