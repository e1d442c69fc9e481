"""``mx.nd.sparse``: CSR and row_sparse NDArrays and the operators that keep them sparse.

The classes and creation functions live here; the operators are the registry's
``nd.<op>`` functions, which run a sparse kernel when one matches the storage types of
their arguments and otherwise compute on dense copies (docs/sparse.md).
"""
from __future__ import annotations

import builtins as _builtins
from array import array as native_array  # noqa: F401 - MXNet's sparse.native_array is array.array
from typing import Any, Callable

from ...context import current_context  # noqa: F401 - part of MXNet's sparse namespace
from ..ndarray import NDArray, mx_real_t  # noqa: F401
from . import optim as _optim  # noqa: F401 - registers the lazy optimizer kernels
from . import embedding as _embedding  # noqa: F401 - Embedding over a row_sparse weight
from .base import STATE, BaseSparseNDArray, CSRNDArray, NotSupportedForSparseNDArray, RowSparseNDArray
from .convert import array, cast_storage, csr_matrix, empty, row_sparse_array, zeros
from .ops import add, divide, dot, dispatch, multiply, retain, slice, subtract, zeros_like
from .optim import adagrad_update

from .. import ndarray as _nd  # noqa: E402

_nd.plug_sparse(cast_storage=cast_storage, zeros=zeros, empty=empty, array=array)

py_slice = _builtins.slice
py_sum = _builtins.sum
gs_retain = retain

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "NotSupportedForSparseNDArray", "csr_matrix",
           "row_sparse_array", "zeros", "empty", "array", "cast_storage", "add", "subtract", "multiply", "divide",
           "dot", "retain", "gs_retain", "slice", "zeros_like", "adagrad_update", "wrap_op_function"]

#: the operators of MXNet's sparse namespace that are registry operators (``nd.<name>``)
_OPERATORS = ("ElementWiseSum Embedding FullyConnected LinearRegressionOutput LogisticRegressionOutput "
              "MAERegressionOutput abs adam_update add_n arccos arccosh arcsin arcsinh arctan arctanh broadcast_add "
              "broadcast_div broadcast_minus broadcast_mul broadcast_plus broadcast_sub cbrt ceil clip concat cos "
              "cosh degrees elemwise_add elemwise_div elemwise_mul elemwise_sub exp expm1 fix floor ftrl_update "
              "gamma gammaln log log10 log1p log2 make_loss mean negative norm radians relu rint round rsqrt "
              "sgd_mom_update sgd_update sigmoid sign sin sinh sqrt square stop_gradient sum tan tanh trunc "
              "where").split()


def _operator(name: str) -> Callable[..., Any]:
    def fn(*args: Any, **kwargs: Any) -> Any:
        from .ops import _op
        return _op(name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``mx.nd.{name}``, sparse-aware (docs/sparse.md lists the storage types)."
    return fn


for _name in _OPERATORS:
    globals()[_name] = _operator(_name)
del _name


def __getattr__(name: str) -> Any:
    # ``spsp``: scipy.sparse, or None without scipy (as MXNet's); imported on first use so
    # that ``import plexnet`` does not pay for scipy
    if name == "spsp":
        try:
            import scipy.sparse as spsp
        except ImportError:  # scipy is optional (docs/sparse.md)
            spsp = None
        globals()["spsp"] = spsp
        return spsp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _has_sparse(args: tuple, kwargs: dict[str, Any]) -> bool:
    for a in args:
        if isinstance(a, BaseSparseNDArray):
            return True
    for v in kwargs.values():
        if isinstance(v, BaseSparseNDArray):
            return True
    return False


#: operators that take sparse paths even with dense inputs
_ALWAYS = {"cast_storage": lambda fn, *a, **kw: cast_storage(*a, **kw)}


def wrap_op_function(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (an ``nd.<name>`` function) made sparse-aware: with a sparse argument the
    call goes through ``dispatch``; until a sparse array exists this costs one check."""
    always = _ALWAYS.get(name)
    if always is not None:
        def run_always(*args: Any, **kwargs: Any) -> Any:
            return always(fn, *args, **kwargs)
        _copy_meta(run_always, fn)
        return run_always

    direct = getattr(fn, "_invoke_direct", None)
    if direct is not None:  # nd's generated function: call what it calls (one frame less per call)
        def run_direct(*args: Any, **kwargs: Any) -> Any:
            if STATE.live and _has_sparse(args, kwargs):
                return dispatch(name, fn, args, kwargs)
            return direct(name, args, kwargs)
        _copy_meta(run_direct, fn)
        return run_direct

    def run(*args: Any, **kwargs: Any) -> Any:
        if STATE.live and _has_sparse(args, kwargs):
            return dispatch(name, fn, args, kwargs)
        return fn(*args, **kwargs)
    _copy_meta(run, fn)
    return run


def _copy_meta(dst: Callable[..., Any], src: Callable[..., Any]) -> None:
    dst.__name__ = dst.__qualname__ = getattr(src, "__name__", "op")
    dst.__doc__ = src.__doc__
    sig = getattr(src, "__signature__", None)
    if sig is not None:
        dst.__signature__ = sig  # type: ignore[attr-defined]
    dst.__wrapped__ = src  # type: ignore[attr-defined]
