"""The closures the executor pushes to the engine, one per node: forward (sync and
async), backward (with its ``is_train=False`` variant), gradient sums and zero fills.
Each rebuilds its ``OpContext`` only when the engine hands another ``RunContext``."""
from __future__ import annotations

from typing import Any

from ..operator.contract import OpContext, OpReqType

_INPLACE, _ADD = OpReqType.inplace, OpReqType.add


def _fwd_call(fwd: Any, is_train: bool, requested: list, ins: list, req: list, outs: list, aux: list) -> Any:
    # the OpContext is rebuilt only when the engine hands another RunContext (worker)
    cache: list = [(None, None)]

    def call(rc: Any) -> None:
        c = cache[0]  # one tuple: safe if two workers ever race here
        if c[0] is not rc:
            c = cache[0] = (rc, OpContext(is_train, rc, requested))
        fwd(c[1], ins, req, outs, aux)
    return call


def _fwd_async_call(fwd: Any, is_train: bool, requested: list, ins: list, req: list, outs: list,
                    aux: list) -> Any:
    def call(rc: Any, on_complete: Any) -> None:
        fwd(OpContext(is_train, rc, requested), ins, req, outs, aux, on_complete)
    return call


class _bwd_call:
    """Backward closure; ``with_train`` gives the ``is_train=False`` variant; with
    ``is_async`` it takes the completion callback too (``backward_async``)."""

    __slots__ = ("bwd", "requested", "og", "ind", "outd", "req", "ig", "aux", "is_train", "is_async", "_cache",
                 "__weakref__")

    def __init__(self, bwd: Any, requested: list, og: list, ind: list, outd: list, req: list, ig: list,
                 aux: list, is_train: bool = True, is_async: bool = False) -> None:
        self.bwd, self.requested, self.og, self.ind, self.outd = bwd, requested, og, ind, outd
        self.req, self.ig, self.aux, self.is_train, self.is_async = req, ig, aux, is_train, is_async
        self._cache: tuple = (None, None)

    def __call__(self, rc: Any, *on_complete: Any) -> None:
        c = self._cache
        if c[0] is not rc:
            c = self._cache = (rc, OpContext(self.is_train, rc, self.requested))
        self.bwd(c[1], self.og, self.ind, self.outd, self.req, self.ig, self.aux, *on_complete)

    def with_train(self, is_train: bool) -> "_bwd_call":
        return _bwd_call(self.bwd, self.requested, self.og, self.ind, self.outd, self.req, self.ig, self.aux,
                         is_train, self.is_async)


def _sum_call(ins: list, out: Any, req: OpReqType) -> Any:
    first, rest = ins[0], ins[1:]
    inplace = req == _INPLACE
    add = req == _ADD

    def call(rc: Any) -> None:
        xp = rc.xp
        if add:
            for x in ins:
                xp.add(out, x, out=out)
        elif inplace:  # out shares the first input's buffer
            for x in rest:
                xp.add(out, x, out=out)
        elif rest:
            xp.add(first, rest[0], out=out)
            for x in rest[1:]:
                xp.add(out, x, out=out)
        else:
            out[...] = first
    return call


def _zeros_call(out: Any) -> Any:
    def call(rc: Any) -> None:
        out[...] = 0
    return call
