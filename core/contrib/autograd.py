"""``mx.contrib.autograd``: MXNet's first imperative-autograd API (before
``mx.autograd``), kept for old scripts; a thin layer over ``plexnet.autograd``."""
from __future__ import annotations

import functools
from typing import Any, Callable

from .. import autograd as _ag
from ..autograd import mark_variables

__all__ = ["set_is_training", "TrainingStateScope", "train_section", "test_section", "mark_variables", "backward",
           "compute_gradient", "grad_and_loss", "grad", "zeros_like", "array"]


def set_is_training(is_train: bool) -> bool:
    """Switch recording and training together; returns the previous state."""
    prev = _ag.set_recording(is_train)
    _ag.set_training(is_train)
    return prev


class TrainingStateScope:
    """``with`` scope that records and trains (``enter_state=True``) or neither."""

    def __init__(self, enter_state: bool) -> None:
        self._enter_state = enter_state
        self._prev: tuple[bool, bool] | None = None

    def __enter__(self) -> None:
        self._prev = (_ag.set_recording(self._enter_state), _ag.set_training(self._enter_state))

    def __exit__(self, *exc: Any) -> None:
        assert self._prev is not None
        _ag.set_recording(self._prev[0])
        _ag.set_training(self._prev[1])


def train_section() -> TrainingStateScope:
    """``with train_section():`` record and run in training mode."""
    return TrainingStateScope(True)


def test_section() -> TrainingStateScope:
    """``with test_section():`` neither record nor train."""
    return TrainingStateScope(False)


test_section.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def backward(outputs: Any, out_grads: Any = None, retain_graph: bool = False) -> None:
    """Gradients of ``outputs`` into the marked variables."""
    _ag.backward(outputs, out_grads, retain_graph)


def compute_gradient(outputs: Any) -> None:
    """``backward(outputs)`` (deprecated in MXNet too)."""
    backward(outputs)


def grad_and_loss(func: Callable, argnum: Any = None) -> Callable:
    """A function returning ``(gradients of func w.r.t. its arguments, func's output)``;
    ``argnum`` picks which positional arguments (an int or a list)."""
    @functools.wraps(func)
    def wrapped(*args: Any) -> tuple[list, Any]:
        from ..ndarray import NDArray
        from ..ndarray.ndarray import zeros
        variables = list(args)
        if argnum is not None:
            idx = argnum if isinstance(argnum, list) else [argnum]
            variables = [args[i] for i in idx]
        for x in variables:
            if not isinstance(x, NDArray):
                raise TypeError("type of autograd input should NDArray.")
        grads = [zeros(x.shape, x.context, x.dtype) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        backward([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func: Callable, argnum: Any = None) -> Callable:
    """A function returning the gradients of ``func`` w.r.t. its arguments."""
    grad_with_loss_func = grad_and_loss(func, argnum)

    @functools.wraps(grad_with_loss_func)
    def wrapped(*args: Any) -> list:
        return grad_with_loss_func(*args)[0]
    return wrapped


def zeros_like(data: Any, **kwargs: Any) -> Any:
    from ..ndarray import op_function
    return op_function("zeros_like")(data, **kwargs)  # type: ignore[misc]


def array(source: Any, ctx: Any = None, dtype: Any = None) -> Any:
    return _ag.array(source, ctx=ctx, dtype=dtype)
