"""Module-level helpers of MXNet 1.9.1's ``mx.nd``: the indexing helpers its ``__getitem__``
uses (``get_indexing_dispatch_code``, ``indexing_key_expand_implicit_axes``,
``get_oshape_of_gather_nd_op``), ``to_dlpack_for_read/write`` and the deprecated
``imdecode`` (image bytes to a ``(channels, h, w)`` array)."""
from __future__ import annotations

import importlib
from typing import Any, Sequence

import numpy as np

from ..base import PlexnetError
from .ndarray import NDArray, array

__all__ = ["get_indexing_dispatch_code", "indexing_key_expand_implicit_axes", "get_oshape_of_gather_nd_op",
           "to_dlpack_for_read", "to_dlpack_for_write", "imdecode"]

_NDARRAY_UNSUPPORTED_INDEXING = -1
_NDARRAY_BASIC_INDEXING = 0
_NDARRAY_ADVANCED_INDEXING = 1
_NDARRAY_EMPTY_TUPLE_INDEXING = 2

_NDARRAY_NO_ZERO_DIM_BOOL_ARRAY = -1
_NDARRAY_ZERO_DIM_BOOL_ARRAY_FALSE = 0
_NDARRAY_ZERO_DIM_BOOL_ARRAY_TRUE = 1

#: MXNet's ``base.integer_types``: other numpy integer types are not basic indices there
_INTEGER_TYPES = (int, np.int32, np.int64)


def get_indexing_dispatch_code(key: tuple) -> int:
    """Basic (0), advanced (1) or empty-tuple (2) indexing for the tuple ``key``; a key
    of another type raises ``ValueError`` (MXNet's rule)."""
    assert isinstance(key, tuple)
    for idx in key:
        if isinstance(idx, (NDArray, np.ndarray, list, tuple, range)):
            if isinstance(idx, tuple) and len(idx) == 0:
                return _NDARRAY_EMPTY_TUPLE_INDEXING
            return _NDARRAY_ADVANCED_INDEXING
        if not (isinstance(idx, (slice, *_INTEGER_TYPES)) or idx is None):
            raise ValueError(f"NDArray does not support slicing with key {idx} of type {type(idx)}.")
    return _NDARRAY_BASIC_INDEXING


def _check_boolean_array_dimension(array_shape: Sequence[int], axis: int, bool_shape: Sequence[int]) -> None:
    for i, val in enumerate(bool_shape):
        if array_shape[axis + i] != val:
            raise IndexError(f"boolean index did not match indexed array along axis {axis + i}; size is "
                             f"{array_shape[axis + i]} but corresponding boolean size is {val}")


def indexing_key_expand_implicit_axes(key: Any, shape: Sequence[int]) -> tuple[tuple, int]:
    """``(key with implicit axes made explicit slices, prepend)`` for an array of ``shape``:
    an ``Ellipsis`` (given or implied at the end) becomes the ``slice(None)`` it stands
    for; ``prepend`` records a 0-d boolean index (-1 none, 0 ``False``, 1 ``True``).
    Boolean array indices need MXNet's numpy mode, which plexnet's legacy ``nd`` has not:
    a matching one raises ``ValueError`` as MXNet does outside ``npx.set_np()``."""
    if not isinstance(key, tuple):
        key = (key,)
    ell_idx = None
    num_none = 0
    nonell_key: list[Any] = []
    prepend = _NDARRAY_NO_ZERO_DIM_BOOL_ARRAY
    axis = 0
    for i, idx in enumerate(key):
        if idx is Ellipsis:
            if ell_idx is not None:
                raise IndexError("Cannot use more than one ellipsis (`...`) for indexing")
            ell_idx = i
            continue
        if idx is None:
            num_none += 1
        if isinstance(idx, (bool, np.bool_)):  # a 0-d boolean: a new axis of length 1 (True) or 0
            prepend = _NDARRAY_ZERO_DIM_BOOL_ARRAY_TRUE if idx else _NDARRAY_ZERO_DIM_BOOL_ARRAY_FALSE
        elif isinstance(idx, NDArray) and idx.ndim == 0 and idx.dtype == np.bool_:
            prepend = _NDARRAY_ZERO_DIM_BOOL_ARRAY_TRUE if idx.asscalar() else _NDARRAY_ZERO_DIM_BOOL_ARRAY_FALSE
        elif isinstance(idx, NDArray) and idx.ndim == 0:
            nonell_key.append(int(idx.asscalar()))
            axis += 1
        elif isinstance(idx, NDArray) and idx.dtype == np.bool_:
            _check_boolean_array_dimension(shape, axis, idx.shape)
            raise ValueError("Cannot perform boolean indexing in legacy mode. Please activate numpy semantics by "
                             "calling `npx.set_np()` in the global scope before calling this function.")
        else:
            nonell_key.append(idx)
            axis += 1
    if ell_idx is None:  # "too few" indices: the ellipsis is implied after the last one
        ell_idx = len(nonell_key)
    ell_ndim = len(shape) + num_none - len(nonell_key)
    return tuple(nonell_key[:ell_idx]) + (slice(None),) * ell_ndim + tuple(nonell_key[ell_idx:]), prepend


def get_oshape_of_gather_nd_op(dshape: Sequence[int], ishape: Sequence[int]) -> tuple[int, ...]:
    """The output shape of ``gather_nd`` for data of shape ``dshape`` and indices of shape ``ishape``."""
    assert len(dshape) > 0 and len(ishape) > 0
    oshape = list(ishape[1:])
    if ishape[0] < len(dshape):
        oshape.extend(dshape[ishape[0]:])
    return tuple(oshape)


def to_dlpack_for_read(data: NDArray) -> Any:
    """A DLPack capsule of ``data`` once pending writes are done (``data.to_dlpack_for_read()``)."""
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data: NDArray) -> Any:
    """A DLPack capsule of ``data`` once pending reads and writes are done."""
    return data.to_dlpack_for_write()


def imdecode(str_img: Any, clip_rect: Sequence[int] = (0, 0, 0, 0), out: NDArray | None = None, index: int = 0,
             channels: int = 3, mean: NDArray | None = None) -> NDArray:
    """DEPRECATED (use ``mx.image.imdecode``): decode image bytes into a float
    ``(channels, h, w)`` array in OpenCV's channel order (BGR), as MXNet's C++ ``Imdecode``.

    ``clip_rect=(x0, y0, x1, y1)`` keeps that rectangle (all zeros: the whole image);
    ``mean`` (``(channels, h, w)``) is subtracted and gives the result's dtype; ``out``
    may be ``(channels, h, w)`` or ``(n, channels, h, w)`` (then slice ``index`` is
    written). MXNet 1.9.1's own Python wrapper fails on every input (the bytes reach
    OpenCV mangled); this follows its C++ implementation."""
    # mx.image sits a layer above the arrays: resolved at the call, as plexnet.model resolves Module
    decode = importlib.import_module("plexnet.image").imdecode
    img = decode(str_img, flag=0 if channels == 1 else -1, to_rgb=False).asnumpy()
    if channels > img.shape[2]:
        raise PlexnetError(f"imdecode: {channels} channels asked, the image has {img.shape[2]}")
    x0, y0, x1, y1 = (int(v) for v in clip_rect)
    if y1 - y0 == 0:
        x0, x1, y0, y1 = 0, img.shape[1], 0, img.shape[0]
    if not (x1 <= img.shape[1] and y1 <= img.shape[0]):
        raise PlexnetError(f"imdecode: clip_rect {tuple(clip_rect)} is outside the {img.shape[1]}x{img.shape[0]} "
                           f"image")
    chw = img[y0:y1, x0:x1, :channels].transpose(2, 0, 1)
    if out is None:
        dtype = np.float32 if mean is None else mean.dtype
        target_shape: tuple = chw.shape
    else:
        dtype = out.dtype
        if out.ndim == 4:
            target_shape = tuple(out.shape[1:])
        elif out.ndim == 3:
            target_shape = tuple(out.shape)
        else:
            raise PlexnetError(f"imdecode: out= must have 3 or 4 dimensions, got shape {out.shape}")
    if target_shape != chw.shape:
        raise PlexnetError(f"imdecode: the decoded image is {chw.shape} (channels, h, w), the output expects "
                           f"{target_shape}")
    vals = chw.astype(np.float64)
    if mean is not None:
        if tuple(mean.shape) != chw.shape or (out is not None and mean.dtype != out.dtype):
            raise PlexnetError(f"imdecode: mean has shape {mean.shape} and dtype {np.dtype(mean.dtype).name}; "
                               f"expected {chw.shape} and the output's dtype")
        vals = vals - mean.asnumpy()
    res = vals.astype(dtype)
    if out is None:
        return array(res, dtype=dtype)
    if out.ndim == 4:
        out[index] = res
    else:
        out[:] = res
    return out
