"""``plexnet.autograd``: imperative differentiation (MXNet 1.x ``mx.autograd``).

::

    x = nd.array([1., 2., 3.]); x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    y.backward()           # x.grad == 2 * x

Under ``record()`` every operator called through ``plexnet.nd`` (NDArray arithmetic,
any plugin's operators, CustomOp) with an input that is part of a graph is put on a
tape (``plexnet.tape``, below the arrays); ``backward``/``grad`` replay the operators' registered gradients
as engine operations (``backward.py``), so backward returns at once and the work runs
asynchronously like the forward pass. ``grad(..., create_graph=True)`` builds the
gradient from recorded operators again (``higher.py``), for higher-order derivatives.

The training flag (``is_train`` of the operators' ``OpContext``: Dropout, BatchNorm)
is separate from recording: ``record(train_mode=True)`` sets both, ``train_mode()`` /
``predict_mode()`` only the flag.
"""
from __future__ import annotations

from typing import Any

from ..ndarray.ndarray import NDArray, array as _array
from ..operator.contract import OpReqType
from ..symbol.symbol import Symbol
from .. import upcalls
from ..tape import STATE, Leaf, check_inplace, mark_variable  # noqa: F401 - re-exported
from .backward import run_backward
from .function import Function
from .symbolic import get_symbol

__all__ = [
    "Function",
    "backward",
    "get_symbol",
    "grad",
    "is_recording",
    "is_training",
    "mark_variables",
    "pause",
    "predict_mode",
    "record",
    "set_recording",
    "set_training",
    "train_mode",
    "array",
    "NDArray",  # MXNet's ``from mxnet.autograd import *`` brings these two as well
    "Symbol",
]


# NDArray.backward (a layer below) runs the backward pass through this up-call
upcalls.provide(upcalls.BACKWARD, run_backward)


def array(source: Any, ctx: Any = None, dtype: Any = None) -> Any:
    """``nd.array`` (MXNet's autograd module exposes it too)."""
    return _array(source, ctx=ctx, dtype=dtype)


def is_training() -> bool:
    """Whether operators run in training mode on this thread."""
    return STATE.training


def set_training(train_mode: bool) -> bool:
    """Set the training flag for this thread; returns the previous value."""
    prev = STATE.training
    STATE.training = bool(train_mode)
    return prev


def is_recording() -> bool:
    """Whether operator calls are recorded on this thread."""
    return STATE.recording


def set_recording(is_recording: bool) -> bool:
    """Switch recording for this thread; returns the previous value."""
    prev = STATE.recording
    STATE.recording = bool(is_recording)
    return prev


class _RecordingStateScope:
    """Sets recording and/or training on enter, restores both on exit."""

    def __init__(self, is_record: bool | None, train_mode: bool | None) -> None:
        self._enter_is_record = is_record
        self._enter_train_mode = train_mode
        self._prev: tuple[bool, bool] | None = None

    def __enter__(self) -> None:
        self._prev = (STATE.recording, STATE.training)
        if self._enter_is_record is not None:
            STATE.recording = self._enter_is_record
        if self._enter_train_mode is not None:
            STATE.training = self._enter_train_mode

    def __exit__(self, *exc: object) -> None:
        assert self._prev is not None
        STATE.recording, STATE.training = self._prev


def record(train_mode: bool = True) -> _RecordingStateScope:
    """``with autograd.record():`` record operator calls for differentiation (and run
    them in training mode unless ``train_mode=False``)."""
    return _RecordingStateScope(True, train_mode)


def pause(train_mode: bool = False) -> _RecordingStateScope:
    """``with autograd.pause():`` stop recording inside a ``record()`` block."""
    return _RecordingStateScope(False, train_mode)


def train_mode() -> _RecordingStateScope:
    """``with autograd.train_mode():`` operators run in training mode (recording unchanged)."""
    return _RecordingStateScope(None, True)


def predict_mode() -> _RecordingStateScope:
    """``with autograd.predict_mode():`` operators run in inference mode."""
    return _RecordingStateScope(None, False)


def _as_list(x: Any) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def mark_variables(variables: Any, gradients: Any, grad_reqs: Any = "write") -> None:
    """Mark arrays as variables: their gradients go into ``gradients`` (``write``
    overwrites, ``add`` accumulates, ``null`` none)."""
    variables, gradients = _as_list(variables), _as_list(gradients)
    if len(variables) != len(gradients):
        raise ValueError(f"mark_variables: {len(variables)} variables but {len(gradients)} gradient arrays")
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, (str, OpReqType)) else list(grad_reqs)
    if len(reqs) != len(variables):
        raise ValueError(f"mark_variables: {len(reqs)} grad_reqs for {len(variables)} variables")
    for v, g, r in zip(variables, gradients, reqs):
        req = OpReqType.parse(r) if not isinstance(r, OpReqType) else r
        if req == OpReqType.inplace:
            req = OpReqType.write
        if g is not None and tuple(g.shape) != tuple(v.shape):
            raise ValueError(f"mark_variables: gradient of shape {tuple(g.shape)} for a variable of shape "
                             f"{tuple(v.shape)}")
        mark_variable(v, g, req)


def backward(heads: Any, head_grads: Any = None, retain_graph: bool = False, train_mode: bool = True) -> None:
    """Compute the gradients of ``heads`` with respect to every marked variable they
    depend on (into the variables' gradient arrays). Asynchronous: reading a gradient
    waits for it."""
    heads = _as_list(heads)
    hg = None if head_grads is None else _as_list(head_grads)
    run_backward(heads, hg, None, retain_graph, train_mode)


def grad(heads: Any, variables: Any, head_grads: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, train_mode: bool = True) -> list:
    """Gradients of ``heads`` with respect to ``variables``, returned as new arrays
    (the variables' ``.grad`` are left alone). With ``create_graph`` the gradients are
    themselves recorded, so they can be differentiated again."""
    heads = _as_list(heads)
    variables = _as_list(variables)
    if not variables:
        raise ValueError("grad: no variables given")
    if retain_graph is None:
        retain_graph = create_graph
    hg = None if head_grads is None else _as_list(head_grads)
    res = run_backward(heads, hg, variables, bool(retain_graph), train_mode, create_graph)
    assert res is not None
    return res

