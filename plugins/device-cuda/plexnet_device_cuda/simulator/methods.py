"""The ``cupy.ndarray`` methods the simulator forwards to numpy: every method of CuPy's
``ndarray`` (per the snapshot) that numpy's has and ``arrays.py`` does not implement
itself, with CuPy's signature check and the kernel's reads and writes recorded."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import runtime
from .arrays import HOST_ARG, kernel_result, ndarray, unwrap_args
from .snapshot import CLASSES, Params

# methods that write their array (besides ``out=``)
_WRITING_METHODS = {"fill", "sort", "put", "partition", "scatter_add", "scatter_max", "scatter_min"}
# ndarray members implemented explicitly in arrays.py (not by the generic numpy forwarder)
_EXPLICIT = {"get", "set", "item", "tolist", "tobytes", "tofile", "dump", "dumps", "astype", "view", "fill",
             "reduced_view", "scatter_add", "scatter_max", "scatter_min", "toDlpack", "copy", "T", "mT",
             "base", "data", "device", "dtype", "flags", "imag", "real", "itemsize", "nbytes", "ndim", "shape",
             "size", "strides", "flat", "cstruct", "mdspan", "put"}


def _make_method(name: str, spec: str | None) -> Callable:
    params = Params(f"cupy.ndarray.{name}", spec)
    writes_self = name in _WRITING_METHODS
    host_arg = HOST_ARG.get(f"ndarray.{name}")

    def method(self: ndarray, *args: Any, **kwargs: Any) -> Any:
        params.check(args, kwargs)
        reads: list[ndarray] = [self]
        uargs, ukw = unwrap_args(args, kwargs, reads, False, host_arg)
        writes: list[ndarray] = []
        out = kwargs.get("out")
        if isinstance(out, ndarray):
            writes.append(out)
        if writes_self:
            writes.append(self)
        with np.errstate(all="ignore"):  # CuPy kernels never warn about nan/inf
            r = getattr(self._a, name)(*uargs, **ukw)
        return kernel_result(runtime.RT, f"ndarray.{name}", r, reads, writes)

    method.__name__ = method.__qualname__ = name
    return method


def install() -> None:
    """Set the forwarded methods on ``ndarray`` (once, when the package is imported)."""
    for name, ent in CLASSES["cupy.ndarray"].items():
        if name.startswith("__") or name in _EXPLICIT or ent["kind"] != "method":
            continue
        if hasattr(np.ndarray, name):
            setattr(ndarray, name, _make_method(name, ent.get("params")))
