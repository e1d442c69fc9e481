"""Keyword arguments of ``Executor.forward``, shared by the executors (graph, dynamic,
sparse)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ndarray.ndarray import NDArray

__all__ = ["copy_forward_arguments"]


def copy_forward_arguments(arg_dict: dict[str, NDArray], arg_names: Sequence[str], kwargs: dict[str, Any]) -> None:
    """``forward(**kwargs)``: each array copied into the argument of its name, checked as
    MXNet checks (the value's type, then the name: a TypeError, then the shape) before any copy."""
    for k, v in kwargs.items():
        if not isinstance(v, (NDArray, np.ndarray)):
            raise ValueError(f"forward: only NDArrays and numpy arrays are accepted as arguments; {k!r} is a "
                             f"{type(v).__name__}")
        if k not in arg_dict:
            raise TypeError(f"forward: unknown argument {k!r}; arguments are {list(arg_names)}")
        if tuple(v.shape) != tuple(arg_dict[k].shape):
            raise ValueError(f"Shape not match! Argument {k}, need: {tuple(arg_dict[k].shape)}, received: "
                             f"{tuple(v.shape)}")
    for k, v in kwargs.items():
        arg_dict[k][:] = v
