"""Index keys and shape arguments of NDArray methods, checked as MXNet 1.x checks them
(what it accepts, what it refuses and with which error), apart from the array class."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..base import PlexnetError

if TYPE_CHECKING:
    from .ndarray import NDArray

_BASIC_INDEX = (int, np.integer, slice, type(Ellipsis), type(None))


def _slices(a: NDArray, begin: Sequence[Any], end: Sequence[Any], step: Sequence[Any]) -> tuple:
    step = tuple(step) if step else (None,) * len(begin)
    if not len(begin) == len(end) == len(step) or len(begin) > a.ndim:
        raise ValueError(f"slice_assign: begin {tuple(begin)}, end {tuple(end)}, step {tuple(step)} do not fit "
                         f"an array of shape {a.shape}")
    return tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))


def _expand(shape: tuple, axis: int) -> tuple:
    n = len(shape) + 1
    if not -n <= axis < n:
        raise ValueError(f"expand_dims: axis {axis} out of range for {len(shape)}-d array")
    axis %= n
    return shape[:axis] + (1,) + shape[axis:]


def _whole(key: Any) -> bool:
    """``x[:]``, ``x[...]``, ``x[:, :]``: a key naming the whole array."""
    k = key if isinstance(key, tuple) else (key,)
    return all(i is Ellipsis or (isinstance(i, slice) and i == slice(None)) for i in k)


def _one_element_key(data: Any, key: Any) -> tuple[Any, Any]:
    """MXNet 1.x (outside ``np_shape``) has no 0-d arrays: an index naming one element
    (``x[1]`` of a 1-D array, ``x[1, 2]``) gives shape ``(1,)``. The key with its last
    integer made a one-element slice (so autograd scatters through it), and that view."""
    k = list(key) if isinstance(key, tuple) else [key]
    ints = [j for j, i in enumerate(k) if isinstance(i, (int, np.integer))]
    if ints and Ellipsis not in k and len(ints) == data.ndim:
        j = ints[-1]
        i = int(k[j]) % data.shape[j] if data.shape[j] else int(k[j])
        k[j] = slice(i, i + 1)
        return tuple(k), data[tuple(k)]
    return key, data[key].reshape((1,))  # e.g. x[..., 0] of a 1-D array


def _is_basic(key: Any) -> bool:
    if isinstance(key, tuple):
        return all(isinstance(k, _BASIC_INDEX) and not isinstance(k, bool) for k in key)
    return isinstance(key, _BASIC_INDEX) and not isinstance(key, bool)


class InvalidSliceError(PlexnetError, IndexError):
    """A slice MXNet refuses (start past stop for its step): an ``MXNetError`` as there."""


def _refuse_reversed(arr: NDArray, key: Any, what: str) -> None:
    """MXNet refuses a slice whose (clipped) start lies past its stop for the step's
    direction (``x[2:1]``; numpy gives an empty array): raise naming the axis and shape."""
    k = [i for i in (key if isinstance(key, tuple) else (key,)) if i is not None]
    for j, i in enumerate(k):
        if i is Ellipsis:
            k = k[:j] + [slice(None)] * (arr.ndim - len(k) + 1) + k[j + 1:]
            break
    for ax, (i, n) in enumerate(zip(k, arr.shape)):
        if isinstance(i, slice):
            b, e, st = i.indices(n)
            if (st > 0 and b > e) or (st < 0 and b < e):
                raise InvalidSliceError(
                    f"cannot {what} NDArray of shape {arr.shape} with slice {i.start}:{i.stop}"
                    f"{'' if i.step is None else ':' + str(i.step)} on axis {ax}: invalid slicing range [{b}, {e}) "
                    f"for step {st} (MXNet refuses it; numpy would give an empty array)")
