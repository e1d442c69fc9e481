"""Batchify functions: how a list of samples becomes a batch (``DataLoader(batchify_fn=...)``).

MXNet 1.9.1 has only ``default_batchify_fn``; these are the composable ones of MXNet
2.x's ``gluon.data.batchify`` (and GluonNLP): ``Stack``, ``Pad``, ``Append``, ``Group``
and ``AsList``. Each returns NDArrays (``Group``/``AsList``: a tuple/list of them).
They work in DataLoader workers too (the arrays travel through shared memory).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ... import ndarray as nd
from ...context import Context
from ...ndarray import NDArray

__all__ = ["Stack", "Pad", "Append", "Group", "AsList"]


def _np(x: Any) -> np.ndarray:
    return x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)


def _ctx(use_shared_mem: bool) -> Context | None:
    return Context("cpu_shared", 0) if use_shared_mem else None


class Stack:
    """Stack samples of one shape along a new first axis: ``[(3, 4)] * 5 -> (5, 3, 4)``.

    ``dtype`` overrides the result type (default: the samples' own)."""

    def __init__(self, use_shared_mem: bool = False, dtype: Any = None) -> None:
        self._use_shared_mem = use_shared_mem
        self._dtype = dtype

    def __call__(self, data: Sequence) -> NDArray:
        arrs = [_np(d) for d in data]
        shapes = {a.shape for a in arrs}
        if len(shapes) > 1:
            raise ValueError(f"batchify.Stack: samples of different shapes {sorted(shapes)}; use batchify.Pad")
        out = np.stack(arrs)
        if self._dtype is not None:
            out = out.astype(self._dtype)
        return nd.array(out, dtype=out.dtype, ctx=_ctx(self._use_shared_mem))


class Pad:
    """Pad samples to the largest size along every axis with ``val`` and stack them:
    ``[(2,), (4,), (3,)] -> (3, 4)``. ``round_to`` rounds the padded sizes up to a
    multiple; ``dtype`` overrides the result type."""

    def __init__(self, val: float = 0, dtype: Any = None, round_to: int | None = None,
                 use_shared_mem: bool = False) -> None:
        self._val = 0 if val is None else val
        self._dtype = dtype
        self._round_to = round_to
        self._use_shared_mem = use_shared_mem

    def __call__(self, data: Sequence) -> NDArray:
        if not isinstance(data[0], (NDArray, np.ndarray, list)):
            raise TypeError(f"batchify.Pad: samples must be arrays or lists, got {type(data[0]).__name__}")
        arrs = [_np(d) for d in data]
        ndims = {a.ndim for a in arrs}
        if len(ndims) != 1:
            raise ValueError(f"batchify.Pad: samples must have the same number of dimensions, got {sorted(ndims)}")
        shape = np.max([a.shape for a in arrs], axis=0) if arrs[0].ndim else np.zeros(0, dtype=int)
        if self._round_to:
            shape = -(-shape // self._round_to) * self._round_to
        dtype = self._dtype if self._dtype is not None else arrs[0].dtype
        out = np.full((len(arrs), *[int(s) for s in shape]), self._val, dtype=dtype)
        for i, a in enumerate(arrs):
            out[(i,) + tuple(slice(0, s) for s in a.shape)] = a
        return nd.array(out, dtype=out.dtype, ctx=_ctx(self._use_shared_mem))


class Append:
    """Keep the samples apart: a list of arrays, each with a new batch axis of size 1
    at ``batch_axis`` when ``expand`` (for variable-sized samples)."""

    def __init__(self, expand: bool = True, batch_axis: int = 0, use_shared_mem: bool = False) -> None:
        self._expand = expand
        self._batch_axis = batch_axis
        self._use_shared_mem = use_shared_mem

    def __call__(self, data: Sequence) -> list:
        out = []
        for d in data:
            a = _np(d)
            if self._expand:
                a = np.expand_dims(a, axis=self._batch_axis)
            out.append(nd.array(a, dtype=a.dtype, ctx=_ctx(self._use_shared_mem)))
        return out


class Group:
    """Apply one batchify function per field of tuple samples:
    ``Group(Stack(), Pad())`` on ``[(img, tokens), ...]`` gives ``(images, padded)``."""

    def __init__(self, fn: Any, *args: Callable) -> None:
        fns = list(fn) if isinstance(fn, (list, tuple)) else [fn]
        fns.extend(args)
        for f in fns:
            if not callable(f):
                raise TypeError(f"batchify.Group: {f!r} is not callable")
        self._fn = fns

    def __call__(self, data: Sequence) -> tuple:
        if len(data[0]) != len(self._fn):
            raise ValueError(f"batchify.Group: {len(self._fn)} functions for samples with {len(data[0])} fields")
        return tuple(f([d[i] for d in data]) for i, f in enumerate(self._fn))


class AsList:
    """The samples as a plain Python list (no conversion)."""

    def __call__(self, data: Sequence) -> list:
        return list(data)
