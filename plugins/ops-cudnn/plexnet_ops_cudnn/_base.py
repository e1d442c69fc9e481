"""The base of every cuDNN operator: lazy xp fallback, counters, small helpers."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from plexnet.operator import Operator, OpReqType

from . import _fe

NULL, WRITE, INPLACE, ADD = OpReqType.null, OpReqType.write, OpReqType.inplace, OpReqType.add


def writes(req: Any) -> bool:
    return req == WRITE or req == INPLACE


def contiguous(*arrays: Any) -> bool:
    return all(a is None or (_fe.is_gpu_array(a) and a.flags.c_contiguous) for a in arrays)


def prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


class CudnnOp(Operator):
    """An operator run through cuDNN graphs, with the ops-basic xp implementation for
    whatever cuDNN cannot build (decided per shape and cached)."""

    kind = ""

    def __init__(self, prop: Any, ctx: Any) -> None:
        self.prop = prop
        self.p = prop.param
        self.ctx = ctx
        self._xp_op: Any = None

    @property
    def xp_op(self) -> Any:
        if self._xp_op is None:
            self._xp_op = _fe.xp_operator(self.prop, self.ctx)
        return self._xp_op

    def xp_forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        _fe.count(f"{self.kind}.forward.xp")
        self.xp_op.forward(ctx, in_data, req, out_data, aux)

    def xp_backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                    aux: Any) -> None:
        _fe.count(f"{self.kind}.backward.xp")
        self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux)

    def cudnn_ran(self, phase: str) -> None:
        _fe.count(f"{self.kind}.{phase}.cudnn")

    def run_graph(self, ctx: Any, g: Any, dev: int, inputs: dict, out_name: str, out: Any, req: Any,
                  phase: str) -> None:
        """Execute ``g`` on ``inputs`` writing its tensor ``out_name`` into ``out`` by
        ``req`` (``add``: through a scratch temporary, then added)."""
        add = req == ADD
        sc = _fe.scratch(ctx, [g.workspace, out.nbytes if add else 0])
        with _fe.on_stream(ctx.run_ctx):
            target = sc.array(1, out.shape, out.dtype) if add else out
            _fe.execute(g, ctx.run_ctx, dev, {**inputs, out_name: target}, sc.ptr(0))
            if add:
                out += target
        self.cudnn_ran(phase)


def store(out: Any, req: Any, value: Any) -> None:
    """Write ``value`` into ``out`` honouring ``req`` (on the current stream)."""
    if req == NULL:
        return
    if req == ADD:
        out += value
    elif value is not out:
        out[...] = value


def supported_dtype(dtype: Any, allow_double: bool = True) -> bool:
    dt = np.dtype(dtype)
    return dt in (np.dtype(np.float32), np.dtype(np.float16)) or (allow_double and dt == np.dtype(np.float64))


def cudnn_ready(*arrays: Any) -> bool:
    """Every array is a contiguous GPU array, of one dtype that cuDNN takes."""
    dt = arrays[0].dtype
    return contiguous(*arrays) and supported_dtype(dt) and all(a.dtype == dt for a in arrays[1:])
