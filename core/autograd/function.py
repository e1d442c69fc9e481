"""``autograd.Function``: a differentiable function with a hand-written backward
(MXNet 1.x ``mx.autograd.Function``).

::

    class Sigmoid(autograd.Function):
        def forward(self, x):
            y = 1 / (1 + nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y)

``forward`` runs without recording; when an input is part of a graph the call is one
tape node whose backward calls ``backward`` with the output gradients (on the thread
that runs ``autograd.backward``; the NDArray operations it issues are asynchronous).
"""
from __future__ import annotations

from typing import Any

from ..base import PlexnetError
from ..ndarray.ndarray import NDArray
from ..operator.contract import OpReqType
from ..tape import STATE, TapeNode, copy_into, fill

__all__ = ["Function"]


class Function:
    """Subclass and define ``forward(*inputs)`` and ``backward(*output_grads)``."""

    def __init__(self) -> None:
        self._used = False
        self.saved_tensors: tuple = ()

    def save_for_backward(self, *args: Any) -> None:
        self.saved_tensors = args

    def forward(self, *inputs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def backward(self, *output_grads: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.backward is not defined")

    def __call__(self, *inputs: Any) -> Any:
        if self._used:
            raise PlexnetError(f"{type(self).__name__}: each Function instance can be called only once; create a "
                               f"new instance for every call")
        self._used = True
        prev = STATE.recording
        STATE.recording = False
        try:
            outputs = self.forward(*inputs)
        finally:
            STATE.recording = prev
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        if prev and any(isinstance(x, NDArray) and x._ag is not None for x in inputs):
            # outputs that alias an input would tie the input into its own graph
            outs = [o.copy() if any(o._chunk is x._chunk for x in inputs) else o for o in outs]
            node = FunctionNode(self, [x for x in inputs], outs)
            for i, o in enumerate(outs):
                o._ag = (node, i)
        return outs[0] if single else outs


class FunctionNode(TapeNode):
    """The tape node of a ``Function`` call."""

    __slots__ = ("fn",)

    def __init__(self, fn: Function, inputs: list, outs: list) -> None:
        TapeNode.__init__(self, type(fn).__name__, inputs, len(inputs), outs)
        self.fn = fn

    def free(self) -> None:
        TapeNode.free(self)
        self.fn = None  # type: ignore[assignment]

    def user_grads(self, out_grads: list) -> list:
        grads = self.fn.backward(*out_grads)
        if isinstance(grads, NDArray):
            grads = [grads]
        grads = list(grads)
        if len(grads) != self.n_args:
            raise PlexnetError(f"{self.name}.backward returned {len(grads)} gradients for {self.n_args} inputs")
        for i, (g, x) in enumerate(zip(grads, self.inputs)):
            if g is not None and tuple(g.shape) != tuple(x.shape):
                raise PlexnetError(f"{self.name}.backward: gradient {i} has shape {tuple(g.shape)}, the input has "
                                   f"{tuple(x.shape)}")
        return grads

    def push_backward(self, out_grads: list, targets: list, is_train: bool) -> None:
        prev = STATE.recording
        STATE.recording = False
        try:
            grads = self.user_grads(out_grads)
        finally:
            STATE.recording = prev
        for t, g in zip(targets, grads):
            if t is None:
                continue
            if g is not None:
                copy_into(t[0], g, t[1])
            elif t[1] != OpReqType.add:
                fill(t[0], 0.0)
