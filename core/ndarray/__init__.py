"""``plexnet.nd``: asynchronous NDArrays and every registered operator as a function.

Operators come from the registry: ``nd.FullyConnected``, ``nd.Convolution`` ... and any
third-party plugin's operators appear here by name once installed.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..operator import namespaces as _namespaces
from ..operator.hints import missing_fluent_message, providing_distribution
from ..operator.registry import OperatorNotFound, OpFunctionCache
from .ndarray import (NDArray, arange, array, empty, from_numpy_view, full, mx_real_t, ones, plug_operator_calls,
                      waitall, zeros)
from .invoke import _binary, _invoke, _unary, make_op_function
from .serialize import load, load_frombuffer, save
from .legacy import (get_indexing_dispatch_code, get_oshape_of_gather_nd_op, imdecode,
                     indexing_key_expand_implicit_axes, to_dlpack_for_read, to_dlpack_for_write)
from .arith import *  # noqa: F401,F403 - MXNet's Python-level operator functions
from .ndarray import split_v2  # noqa: E402,F811 - NDArray.split_v2's slices, not arith's _split_v2 operator
from .creation import ones, zeros  # noqa: F811 - MXNet's shape checks for the public functions
from . import sparse
from .sparse import cast_storage, wrap_op_function as _sparse_aware

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "waitall", "save", "load", "load_frombuffer",
           "from_dlpack", "from_numpy", "concatenate", "op_function", "mx_real_t", "get_indexing_dispatch_code",
           "get_oshape_of_gather_nd_op", "imdecode", "indexing_key_expand_implicit_axes", "to_dlpack_for_read",
           "to_dlpack_for_write", "split_v2", "moveaxis", "sparse", "cast_storage"]


# every nd.<op> function is sparse-aware: a csr/row_sparse argument takes the operator's sparse
# kernel or the dense fallback (plexnet.ndarray.sparse.ops.dispatch, docs/sparse.md)
_functions = OpFunctionCache(lambda name: _sparse_aware(name, make_op_function(name)))
#: operator sub-namespaces built from name prefixes (``_linalg_gemm`` -> ``nd.linalg.gemm``)
_SUBSPACES = ("linalg", "image", "contrib")
for _sub in _SUBSPACES:  # cheap: names resolve on access; ``import plexnet.<this>.linalg`` works
    globals()[_sub] = _namespaces.namespace(__name__, _sub, _functions.get,
                                            extras_module=__name__ + "._contrib" if _sub == "contrib" else None)
del _sub


def op_function(name: str) -> Any | None:
    """The ``nd.<name>`` function, or None when no operator has that name."""
    return _functions.get(name)


# NDArray's methods run operators through these (the class sits below them: see ndarray.py)
plug_operator_calls(_invoke, _binary, _unary, op_function)


def _assign_target(lhs: NDArray, out: NDArray | None) -> NDArray:
    if out is None:
        return lhs.copy()
    if out is not lhs:
        out[:] = lhs
    return out


def _slice_assign(lhs: NDArray, rhs: NDArray, begin: Any, end: Any, step: Any = (), out: NDArray | None = None,
                  **_: Any) -> NDArray:
    """MXNet's ``_slice_assign`` (alias ``_crop_assign``): ``lhs`` with
    ``[begin:end:step]`` replaced by ``rhs``; in place with ``out=lhs``."""
    return _assign_target(lhs, out).slice_assign(rhs, begin, end, step)


def _slice_assign_scalar(lhs: NDArray, scalar: float = 0.0, begin: Any = (), end: Any = (), step: Any = (),
                         out: NDArray | None = None, **_: Any) -> NDArray:
    """MXNet's ``_slice_assign_scalar`` (alias ``_crop_assign_scalar``)."""
    return _assign_target(lhs, out).slice_assign_scalar(scalar, begin, end, step)


_PY_INTERNALS = {"_slice_assign": _slice_assign, "_crop_assign": _slice_assign,
                 "_slice_assign_scalar": _slice_assign_scalar, "_crop_assign_scalar": _slice_assign_scalar}


class _Internal:
    """``nd._internal``: MXNet scripts reach operators such as ``_plus_scalar`` or
    ``_copy`` through it (and the slice-assign helpers, which plexnet runs as indexing)."""

    def __getattr__(self, name: str) -> Any:
        if name in _PY_INTERNALS and op_function(name) is None:
            return _PY_INTERNALS[name]
        if name == "_CachedOp":  # a Symbol run imperatively: the CachedOp a layer above
            import importlib
            return importlib.import_module("plexnet.gluon.cached_op").cached_op_call
        fn = op_function(name) or (op_function(name[1:]) if name.startswith("_") else None)
        if fn is None:
            if providing_distribution(name) is not None:
                raise OperatorNotFound(missing_fluent_message(f"mx.nd._internal.{name}", name))
            raise AttributeError(f"plexnet.nd._internal has no operator {name!r}")
        return fn


_internal = _Internal()


#: MXNet's ``mx.nd`` names implemented a layer above the arrays, resolved on first use
#: (``CachedOp`` runs a Symbol on the executor, as a hybridized block does)
_ABOVE = {"CachedOp": ("plexnet.gluon.cached_op", "CachedOp")}


def __getattr__(name: str) -> Any:
    if name == "random":
        import importlib
        return importlib.import_module(__name__ + ".random")
    if name in _ABOVE:
        import importlib
        mod, attr = _ABOVE[name]
        return getattr(importlib.import_module(mod), attr)
    fn = op_function(name) or op_function(_namespaces.flat_name(name) or "")
    if fn is None:
        from ..operator.hints import missing_operator_message
        from ..plugins import registries
        raise AttributeError(missing_operator_message(f"mx.nd.{name}", name, registries().operators, globals()))
    return fn


def __dir__() -> list[str]:
    from ..plugins import registries
    ops = registries().operators
    return sorted(set(globals()) | set(ops) | {"random", *_SUBSPACES, *_ABOVE}
                  | {n[1:] for n in ops if _namespaces.flat_name(n[1:])})


class _Capsule:
    """A DLPack capsule (``to_dlpack_for_read/write``, ``torch.utils.dlpack.to_dlpack``) as
    the protocol object ``from_dlpack`` of numpy/CuPy takes; the capsule is consumed once."""

    def __init__(self, capsule: Any, device: tuple[int, int]) -> None:
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **_kw: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


class _WritableView:
    """The ``__array_interface__`` of a read-only DLPack import, marked writable; keeps the
    import (and so the exporter's memory) alive as the view's base."""

    def __init__(self, a: Any) -> None:
        self._import = a
        self.__array_interface__ = dict(a.__array_interface__, data=(a.__array_interface__["data"][0], False))


def _host_import(obj: Any) -> Any:
    """``np.from_dlpack(obj)``. numpy 1.x imports every DLPack tensor read-only (the legacy
    protocol has no read-only flag; numpy 2 reads DLPack 1.0's), where MXNet, PyTorch and
    CuPy treat it as writable: on numpy 1.x the import is made writable."""
    import numpy as np
    a = np.from_dlpack(obj)
    if not a.flags.writeable and a.size and int(np.__version__.split(".")[0]) < 2:
        a = np.asarray(_WritableView(a))
    return a


def from_dlpack(obj: Any) -> NDArray:
    """Zero-copy NDArray from a DLPack-capable object (numpy, CuPy, PyTorch) or a DLPack
    capsule (MXNet's ``to_dlpack_for_read/write`` give capsules)."""
    from ..context import Context
    if type(obj).__name__ == "PyCapsule":
        try:  # a host tensor; numpy refuses a device one without consuming the capsule
            return from_numpy_view(_host_import(_Capsule(obj, (1, 0))), Context("cpu", 0))
        except (BufferError, RuntimeError, ValueError, TypeError):
            from ..backends import get_backend
            arr = get_backend("gpu").xp.from_dlpack(_Capsule(obj, (2, 0)))
            return from_numpy_view(arr, Context("gpu", int(arr.device.id)))
    dev_type, dev_id = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (1, 0)
    if int(dev_type) == 1:
        return from_numpy_view(_host_import(obj), Context("cpu", 0))
    from ..backends import get_backend
    be = get_backend("gpu")
    arr = be.xp.from_dlpack(obj)
    return from_numpy_view(arr, Context("gpu", int(dev_id)))


def _need(op: str, helper: str) -> Any:
    """The function of operator ``op`` that ``nd.<helper>`` runs (the error names what to install)."""
    fn = op_function(op)
    if fn is None:
        raise OperatorNotFound(missing_fluent_message(f"mx.nd.{helper}", op))
    return fn


def from_numpy(ndarray: Any, zero_copy: bool = True) -> NDArray:
    """An NDArray of the numpy array ``ndarray``; ``zero_copy`` (the default, as MXNet's):
    sharing its memory, which must be C-contiguous (``ValueError`` otherwise). As MXNet, the
    numpy array is then made read-only (the NDArray owns the memory; its writes show there)."""
    if not zero_copy:
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError("Only c-contiguous arrays are supported for zero-copy")
    if ndarray.flags["WRITEABLE"] or ndarray.nbytes == 0:
        view = ndarray.view()  # keeps its writeable flag when the caller's array loses it
    else:  # already read-only (given twice): MXNet's DLPack alias writes the memory all the same
        import ctypes
        buf = (ctypes.c_char * ndarray.nbytes).from_address(ndarray.ctypes.data)
        view = np.frombuffer(buf, dtype=ndarray.dtype).reshape(ndarray.shape)
    ndarray.flags["WRITEABLE"] = False
    out = from_numpy_view(view)
    out._chunk.ext = (view, ndarray)  # the alias does not keep the numpy array alive by itself
    return out


def concatenate(arrays: list[NDArray], axis: int = 0, always_copy: bool = True) -> NDArray:
    """Concatenate along ``axis`` (MXNet's ``nd.concatenate``)."""
    return _need("Concat", "concatenate")(*arrays, dim=axis)


def moveaxis(tensor: NDArray, source: Any, destination: Any) -> NDArray:
    """Move axes ``source`` (an int or a sequence of ints, in [-ndim, ndim), as MXNet) to
    positions ``destination``, the other axes keeping their order."""
    a = tensor

    def norm(what: str, axes: Any) -> list[int]:
        # numpy's normalize_axis_tuple, as MXNet: an int, else any iterable (a range too)
        seq: list[Any] = [axes] if isinstance(axes, numbers.Integral) else list(axes)
        for ax in seq:
            if not -a.ndim <= ax < a.ndim:
                raise ValueError(f"moveaxis: {what} should verify 0 <= {what.lower()} < tensor.ndim "
                                 f"({a.ndim}); got {ax}")
        out = [int(ax) % a.ndim for ax in seq]
        if len(set(out)) != len(out):
            raise ValueError(f"moveaxis: repeated axis in `{what.lower()}` argument")
        return out
    src, dst = norm("Source", source), norm("Destination", destination)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    axes = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        axes.insert(d, s)
    return _need("transpose", "moveaxis")(a, axes=tuple(axes))

