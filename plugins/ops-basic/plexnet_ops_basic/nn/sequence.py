"""Variable-length sequences: ``SequenceMask``, ``SequenceLast``, ``SequenceReverse``
(MXNet 1.x). ``data`` is ``(T, N, ...)`` (``axis=0``) or ``(N, T, ...)`` (``axis=1``);
with ``use_sequence_length`` a second input gives each sequence's length (float or
int; it gets no gradient), otherwise every sequence has length T.
"""
from __future__ import annotations

from typing import Any

import numpy as np  # dtype handling only

from plexnet.operator import Field, Params

from plexnet_ops_basic.tensor._fn import FnProp, register_fn

__all__ = ["register"]


class SequenceParam(Params):
    use_sequence_length = Field(bool, default=False, doc="take lengths from the sequence_length input")
    axis = Field(int, default=0, choices=(0, 1), doc="the time axis")


class SequenceMaskParam(Params):  # MXNet's field order: use_sequence_length, value, axis
    use_sequence_length = Field(bool, default=False, doc="take lengths from the sequence_length input")
    value = Field(float, default=0.0, doc="value of the masked steps")
    axis = Field(int, default=0, choices=(0, 1), doc="the time axis")
    #: MXNet's declaration order (positional parameters of nd/sym.SequenceMask)
    field_order = ("use_sequence_length", "value", "axis")


class _SeqProp(FnProp):
    def list_arguments(self) -> list[str]:
        return ["data", "sequence_length"] if self.param.use_sequence_length else ["data"]

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        t = in_type[0]
        ins = [t] + [x if x is not None else t for x in in_type[1:]]
        return ins, [t], []

    def _check(self, ins: list) -> None:
        d = ins[0]
        if len(d) < 2:
            raise self.error(f"data must have at least 2 dims (time and batch), got shape {d}")
        if self.param.use_sequence_length:
            n = d[1 - self.param.axis]
            if ins[1] != (n,):
                raise self.error(f"sequence_length must have shape ({n},) for data of shape {d} "
                                 f"(axis={self.param.axis}), got {ins[1]}")

    def _tn(self, x: Any) -> Any:
        """``x`` with time first, batch second."""
        return x if self.param.axis == 0 else x.swapaxes(0, 1)

    def _lengths(self, xp: Any, ins: list, t: int, n: int) -> Any:
        if not self.param.use_sequence_length:
            return xp.full((n,), t, dtype=np.int64)
        return xp.clip(xp.trunc(ins[1]).astype(np.int64), 0, t)

    def _valid(self, xp: Any, ins: list, x: Any) -> Any:
        """``(T, N, 1, ...)`` True where the step is inside its sequence."""
        t, n = x.shape[0], x.shape[1]
        ln = self._lengths(xp, ins, t, n)
        m = xp.arange(t).reshape(t, 1) < ln.reshape(1, n)
        return m.reshape((t, n) + (1,) * (x.ndim - 2))


class SequenceMaskProp(_SeqProp):
    """Steps beyond each sequence's length set to ``value``."""
    param_cls = SequenceMaskParam
    deps = ("out_grad", "in_data")
    inplace = ((0, 0),)

    def shapes(self, ins: list) -> tuple[list, list]:
        self._check(ins)
        return ins, [ins[0]]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = self._tn(ins[0])
        out = xp.where(self._valid(xp, ins, x), x, xp.asarray(self.param.value, dtype=x.dtype))
        return [self._tn(out)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        g = self._tn(ogs[0])
        return [self._tn(g * self._valid(xp, ins, g)), None][:len(ins)]


class SequenceLastProp(_SeqProp):
    """The last step of each sequence: ``(N, ...)``."""
    param_cls = SequenceParam
    deps = ("out_grad", "in_data")

    def shapes(self, ins: list) -> tuple[list, list]:
        self._check(ins)
        d = ins[0]
        return ins, [d[1:] if self.param.axis == 0 else d[:1] + d[2:]]

    def _index(self, xp: Any, ins: list, x: Any) -> tuple[Any, Any]:
        t, n = x.shape[0], x.shape[1]
        last = xp.maximum(self._lengths(xp, ins, t, n) - 1, 0)
        return last, xp.arange(n)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = self._tn(ins[0])
        return [x[self._index(xp, ins, x)]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        x = self._tn(ins[0])
        g = xp.zeros(x.shape, dtype=ogs[0].dtype)
        g[self._index(xp, ins, x)] = ogs[0]
        return [self._tn(g), None][:len(ins)]


class SequenceReverseProp(_SeqProp):
    """Each sequence's first ``length`` steps reversed; the padding stays in place."""
    param_cls = SequenceParam
    deps = ("out_grad", "in_data")

    def shapes(self, ins: list) -> tuple[list, list]:
        if self.param.axis != 0:
            raise self.error(f"only axis=0 is supported (as MXNet), got axis={self.param.axis}")
        self._check(ins)
        return ins, [ins[0]]

    def _perm(self, xp: Any, ins: list, x: Any) -> tuple[Any, Any]:
        t, n = x.shape[0], x.shape[1]
        ln = self._lengths(xp, ins, t, n).reshape(1, n)
        steps = xp.arange(t).reshape(t, 1)
        return xp.where(steps < ln, ln - 1 - steps, steps), xp.arange(n).reshape(1, n)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = ins[0]
        return [x[self._perm(xp, ins, x)]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        g = ogs[0]
        return [g[self._perm(xp, ins, g)], None][:len(ins)]  # the permutation is its own inverse


def register(registry: Any) -> None:
    register_fn(registry, "SequenceMask", SequenceMaskProp)
    register_fn(registry, "SequenceLast", SequenceLastProp)
    register_fn(registry, "SequenceReverse", SequenceReverseProp)
