"""``mx.runtime``: which features this installation has (MXNet 1.9.1's ``Features``).

MXNet reports the switches its native library was compiled with; plexnet reports what is
usable here: CPU instruction sets as numpy detects them, the BLAS numpy links, and the
plugins installed (a GPU backend with devices, cuDNN, the distributed KVStore, OpenCV).
The names and their order are MXNet's, so ``Features().is_enabled('CUDA')`` works as there.
"""
from __future__ import annotations

import collections
import importlib
import importlib.util
from typing import Any, Callable

from .context import num_gpus

__all__ = ["Feature", "feature_list", "Features"]


class Feature:
    """One feature: ``name`` and ``enabled``; shown as ``✔ NAME`` / ``✖ NAME``."""

    __slots__ = ("name", "enabled")

    def __init__(self, name: str, enabled: bool) -> None:
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self) -> str:
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _cpu(flag: str) -> bool:
    for mod in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):  # numpy 2, numpy 1
        try:
            feats = importlib.import_module(mod).__cpu_features__
        except (ImportError, AttributeError):
            continue
        return bool(feats.get(flag, False))
    return False


def _blas_name() -> str:
    try:
        import numpy as np
        return str(np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]).lower()
    except Exception:  # noqa: BLE001 - old numpy: no dict form
        return ""


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


_CHECKS: list[tuple[str, Callable[[], bool]]] = [
    ("CUDA", lambda: num_gpus() > 0),
    ("CUDNN", lambda: num_gpus() > 0 and _have("plexnet_ops_cudnn")),
    ("NCCL", lambda: False),
    ("CUDA_RTC", lambda: False),
    ("TENSORRT", lambda: False),
    ("CPU_SSE", lambda: _cpu("SSE")),
    ("CPU_SSE2", lambda: _cpu("SSE2")),
    ("CPU_SSE3", lambda: _cpu("SSE3")),
    ("CPU_SSE4_1", lambda: _cpu("SSE41")),
    ("CPU_SSE4_2", lambda: _cpu("SSE42")),
    ("CPU_SSE4A", lambda: False),
    ("CPU_AVX", lambda: _cpu("AVX")),
    ("CPU_AVX2", lambda: _cpu("AVX2")),
    ("OPENMP", lambda: False),
    ("SSE", lambda: _cpu("SSE")),
    ("F16C", lambda: _cpu("F16C")),
    ("JEMALLOC", lambda: False),
    ("BLAS_OPEN", lambda: "openblas" in _blas_name()),
    ("BLAS_ATLAS", lambda: "atlas" in _blas_name()),
    ("BLAS_MKL", lambda: "mkl" in _blas_name()),
    ("BLAS_APPLE", lambda: "accelerate" in _blas_name()),
    ("LAPACK", lambda: True),
    ("MKLDNN", lambda: False),
    ("OPENCV", lambda: _have("cv2")),
    ("CAFFE", lambda: False),
    ("PROFILER", lambda: True),
    ("DIST_KVSTORE", lambda: _have("plexnet_kvstore_dist")),
    ("CXX14", lambda: False),
    ("INT64_TENSOR_SIZE", lambda: True),
    ("SIGNAL_HANDLER", lambda: False),
    ("DEBUG", lambda: False),
    ("TVM_OP", lambda: False),
]


def feature_list() -> list[Feature]:
    """Every feature, in MXNet's order."""
    return [Feature(name, check()) for name, check in _CHECKS]


class Features(collections.OrderedDict):
    """``OrderedDict`` of feature name to ``Feature`` (one instance per process, as MXNet)."""

    instance: Any = None

    def __new__(cls) -> "Features":
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super(Features, cls.instance).__init__([(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self) -> None:  # filled once in __new__
        pass

    def __repr__(self) -> str:
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether ``feature_name`` (any case) is enabled; RuntimeError for an unknown name."""
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError(f"Feature '{feature_name}' is unknown, known features are: {list(self.keys())}")
        return self[feature_name].enabled
