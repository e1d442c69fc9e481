"""Optimizer updates with row_sparse gradients: MXNet's lazy updates.

With ``lazy_update=True`` (MXNet's default) and a row_sparse gradient, only the rows
listed in ``grad.indices`` of the weight and of the optimizer states change (weight decay
too is applied to those rows only). Each update is one engine operation that reads the
gradient's compact arrays and writes the weight and states in place (asynchronous).
Dense gradients, ``lazy_update=False`` and sparse weights run the dense operator on
dense copies (MXNet's standard update).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...base import PlexnetError
from .. import ndarray as _nd
from ..ndarray import NDArray
from .base import RowSparseNDArray, host, new_rsp
from .ops import IMPLS, Impl, _register

__all__ = ["adagrad_update"]


def _clip(g: np.ndarray, clip_gradient: float | None) -> np.ndarray:
    return np.clip(g, -clip_gradient, clip_gradient) if clip_gradient is not None and clip_gradient >= 0 else g


def _lazy(name: str, weight: NDArray, states: tuple[NDArray, ...], grad: RowSparseNDArray, out: Any,
          kernel: Callable[..., None]) -> NDArray:
    """``kernel(rows, grad_rows, weight_rows_view..., )`` on the listed rows, in place."""
    target = weight if out is None or out is weight else out
    if target is not weight:
        weight.copyto(target)
    gv, gi = grad.data, grad.indices
    # a row_sparse weight/state storing every row (Gluon's) is updated through its compact
    # values, which are its dense value: in place, as one engine operation like a dense one
    arrays = tuple(a.data if isinstance(a, RowSparseNDArray) and a.indices.shape[0] == a.shape[0] else a
                   for a in (target, *states))
    if target.context.device_type != "cpu" or any(isinstance(a, RowSparseNDArray) for a in arrays):
        # row_sparse weights/states, or another device: on the host, after pending writes
        rows = host(gi)
        # private host copies (a dense array may still be read by pushed operations; the
        # write back below is an engine write, ordered after them)
        hosts = [host(a._dense()) if isinstance(a, RowSparseNDArray) else a.asnumpy() for a in arrays]
        kernel(rows, host(gv), *hosts)
        for a, h in zip(arrays, hosts):
            if isinstance(a, RowSparseNDArray):  # keeps its stored rows plus the updated ones
                keep = np.union1d(host(a.indices), rows).astype(np.int64)
                a._assign(new_rsp(h[keep], keep, a.shape, a.context))
            else:
                a[:] = h
        return target
    gvd, gid = gv._data, gi._data
    datas = [a._data for a in arrays]
    _nd._push(lambda rc: kernel(gid, gvd, *datas), arrays[0], (gv, gi), arrays, name)
    return target


def _sparse_grad(weight: Any, grad: Any, lazy_update: bool) -> bool:
    return isinstance(grad, RowSparseNDArray) and bool(lazy_update) and isinstance(weight, NDArray)


@_register("sgd_update")
def _sgd(fn: Impl, weight: Any = None, grad: Any = None, lr: float = 0.0, wd: float = 0.0, rescale_grad: float = 1.0,
         clip_gradient: float = -1.0, lazy_update: bool = True, out: Any = None, **kw: Any) -> Any:
    if not _sparse_grad(weight, grad, lazy_update):
        return NotImplemented

    def k(rows: Any, g: Any, w: Any) -> None:
        w[rows] = (1 - lr * wd) * w[rows] - lr * _clip(rescale_grad * g, clip_gradient)
    return _lazy("sgd_update", weight, (), grad, out, k)


@_register("sgd_mom_update")
def _sgd_mom(fn: Impl, weight: Any = None, grad: Any = None, mom: Any = None, lr: float = 0.0, momentum: float = 0.0,
             wd: float = 0.0, rescale_grad: float = 1.0, clip_gradient: float = -1.0, lazy_update: bool = True,
             out: Any = None, **kw: Any) -> Any:
    if not _sparse_grad(weight, grad, lazy_update):
        return NotImplemented

    def k(rows: Any, g: Any, w: Any, m: Any) -> None:
        m[rows] = momentum * m[rows] - lr * wd * w[rows] - lr * _clip(rescale_grad * g, clip_gradient)
        w[rows] = w[rows] + m[rows]
    return _lazy("sgd_mom_update", weight, (mom,), grad, out, k)


@_register("adam_update")
def _adam(fn: Impl, weight: Any = None, grad: Any = None, mean: Any = None, var: Any = None, lr: float = 0.0,
          beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8, wd: float = 0.0, rescale_grad: float = 1.0,
          clip_gradient: float = -1.0, lazy_update: bool = True, out: Any = None, **kw: Any) -> Any:
    if not _sparse_grad(weight, grad, lazy_update):
        return NotImplemented

    def k(rows: Any, g: Any, w: Any, m: Any, v: Any) -> None:
        gg = _clip(rescale_grad * g + wd * w[rows], clip_gradient)
        m[rows] = beta1 * m[rows] + (1 - beta1) * gg
        v[rows] = beta2 * v[rows] + (1 - beta2) * gg * gg
        w[rows] = w[rows] - lr * m[rows] / (np.sqrt(v[rows]) + epsilon)
    return _lazy("adam_update", weight, (mean, var), grad, out, k)


@_register("ftrl_update")
def _ftrl(fn: Impl, weight: Any = None, grad: Any = None, z: Any = None, n: Any = None, lr: float = 0.0,
          lamda1: float = 0.01, beta: float = 1.0, wd: float = 0.0, rescale_grad: float = 1.0,
          clip_gradient: float = -1.0, out: Any = None, **kw: Any) -> Any:
    # MXNet 1.9.1 updates lazily only when weight, z and n are row_sparse too; with dense
    # states it falls back to the dense (every row) update
    if not (_sparse_grad(weight, grad, True) and all(isinstance(a, RowSparseNDArray) for a in (weight, z, n))):
        return NotImplemented

    def k(rows: Any, g: Any, w: Any, zz: Any, nn: Any) -> None:
        gg = _clip(rescale_grad * g, clip_gradient)
        wr, nr = w[rows], nn[rows]
        zz[rows] = zz[rows] + gg - (np.sqrt(nr + gg * gg) - np.sqrt(nr)) * wr / lr
        nn[rows] = nr + gg * gg
        zr, nr2 = zz[rows], nn[rows]
        w[rows] = (np.sign(zr) * lamda1 - zr) / ((beta + np.sqrt(nr2)) / lr + wd) * (np.abs(zr) > lamda1)
    return _lazy("ftrl_update", weight, (z, n), grad, out, k)


def adagrad_update(weight: Any = None, grad: Any = None, history: Any = None, lr: float = 0.0,
                   epsilon: float = 1e-7, wd: float = 0.0, rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                   out: Any = None, name: Any = None) -> NDArray:
    """MXNet's sparse AdaGrad: ``history += g**2; weight -= lr * g / (sqrt(history) + epsilon)``
    on the rows of a row_sparse ``grad``; ``wd`` must be 0."""
    if wd != 0:
        raise PlexnetError(f"sparse adagrad_update does not support wd; got wd={wd}")

    def k(rows: Any, g: Any, w: Any, h: Any) -> None:
        gg = _clip(rescale_grad * g, clip_gradient)
        h[rows] = h[rows] + gg * gg
        w[rows] = w[rows] - lr * gg / (np.sqrt(h[rows]) + epsilon)
    if not isinstance(grad, RowSparseNDArray):
        # MXNet 1.9.1: "Operator not implemented: operator = _sparse_adagrad_update" for dense inputs
        raise PlexnetError(f"adagrad_update: grad must be a row_sparse array (MXNet's sparse AdaGrad); got "
                           f"storage type {getattr(grad, 'stype', type(grad).__name__)}. Dense AdaGrad is "
                           f"mx.optimizer.AdaGrad")
    return _lazy("adagrad_update", weight, (history,), grad, out, k)


# the registry has no dense adagrad_update operator: reached from the dispatcher too
IMPLS["_sparse_adagrad_update"] = lambda fn, *a, **kw: adagrad_update(*a, **kw)
