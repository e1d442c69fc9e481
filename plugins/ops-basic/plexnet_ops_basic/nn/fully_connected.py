"""FullyConnected: ``out = dot(data, weight.T) + bias`` (MXNet 1.x semantics).

``flatten=True`` (default) collapses every axis but the first of ``data``;
``flatten=False`` applies the layer to the last axis only.

Under the engine's opt-in ``split`` CPU policy (``PLEXNET_CPU_POLICY=split``: BLAS on one
thread in the workers) large products share their rows with the helper thread
(``_split``) where the engine lends a second core: the forward and the data gradient by
batch rows, the weight gradient by output units. Under the default policy a product
alone on the engine runs on OpenBLAS's two threads instead, which won for the MLP anchor
(1.6-1.7 ms a step against 2.4-2.5 with the helper: a sub-millisecond GEMM cannot hide
the helper's wake-up and the GIL hand-offs; docs/performance.md, session 7).
"""
from __future__ import annotations

import contextlib
from typing import Any

from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params

from ._common import prod, shape_assign, writes
from ._split import MIN_ELEMENTS, backed_off, one_blas_thread, run_items, ways

#: multiply-adds below which a product stays on one thread: waking the helper costs tens
#: of microseconds, and a 16M-MAC GEMM takes about 0.3 ms on one core here (4M-MAC
#: products split overlapped at 0.45-0.55)
SPLIT_MIN_MACS = 1 << 24


class FullyConnectedParam(Params):
    num_hidden = Field(int, low=1, doc="number of hidden units (output size)")
    no_bias = Field(bool, default=False, doc="do not use a bias term")
    flatten = Field(bool, default=True, doc="flatten all but the first axis of the input")


def _matmul_into(xp: Any, a: Any, b: Any, out: Any, req: OpReqType) -> None:
    if req == OpReqType.null:
        return
    if writes(req):
        xp.matmul(a, b, out=out)
    else:
        out += xp.matmul(a, b)


_WRITE_OR_NULL = (OpReqType.write, OpReqType.inplace, OpReqType.null)


def _split_ways(xp: Any, x: Any, w: Any, products: int = 1) -> int:
    """2 when ``products`` GEMMs of ``x``'s rows by ``w`` are worth sharing with the helper."""
    m, k = x.shape
    n = w.shape[0]
    if m < 2 or n < 2 or products * m * n * k < SPLIT_MIN_MACS:
        return 1
    return ways(xp, m, MIN_ELEMENTS)     # the multiply-adds decided the size


class FullyConnectedOp(Operator):
    def __init__(self, param: FullyConnectedParam) -> None:
        self.p = param

    def _2d(self, x: Any) -> Any:
        # explicit sizes, not -1: a zero-size batch cannot infer the other axis
        if self.p.flatten:
            return x.reshape(x.shape[0], prod(x.shape[1:]))
        return x.reshape(prod(x.shape[:-1]), x.shape[-1])

    def forward(self, ctx, in_data, req, out_data, aux_states):
        # one BLAS thread while the convolutions' self-check finds no second core (_split)
        with one_blas_thread() if backed_off(ctx.xp) else contextlib.nullcontext():
            self._forward(ctx, in_data, req, out_data)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        with one_blas_thread() if backed_off(ctx.xp) else contextlib.nullcontext():
            self._backward(ctx, out_grad, in_data, req, in_grad)

    def _forward(self, ctx, in_data, req, out_data):
        xp = ctx.xp
        if req[0] == OpReqType.null:
            return
        x = self._2d(in_data[0])
        w = in_data[1]
        out = out_data[0].reshape(x.shape[0], self.p.num_hidden)
        if writes(req[0]) and _split_ways(xp, x, w) == 2:
            b = None if self.p.no_bias else in_data[2].reshape(-1)
            h = x.shape[0] // 2

            def rows(a: int, z: int) -> None:
                xp.matmul(x[a:z], w.T, out=out[a:z])
                if b is not None:
                    out[a:z] += b
            run_items(2, lambda i, slot: rows(0, h) if i == 0 else rows(h, x.shape[0]))
            return
        if writes(req[0]):
            xp.matmul(x, w.T, out=out)
            if not self.p.no_bias:
                out += in_data[2].reshape(-1)
        else:
            y = xp.matmul(x, w.T)
            if not self.p.no_bias:
                y += in_data[2].reshape(-1)
            out += y

    def _backward(self, ctx, out_grad, in_data, req, in_grad):
        xp = ctx.xp
        x = self._2d(in_data[0])
        w = in_data[1]
        dy = out_grad[0].reshape(x.shape[0], self.p.num_hidden)
        products = (req[0] != OpReqType.null) + (req[1] != OpReqType.null)
        if (products and req[0] in _WRITE_OR_NULL and req[1] in _WRITE_OR_NULL
                and _split_ways(xp, x, w, products) == 2):
            self._backward_split(xp, x, w, dy, req, in_grad)
        else:
            _matmul_into(xp, dy.T, x, in_grad[1], req[1])
            if req[0] != OpReqType.null:
                _matmul_into(xp, dy, w, in_grad[0].reshape(x.shape), req[0])
        if not self.p.no_bias and req[2] != OpReqType.null:
            if writes(req[2]):
                xp.sum(dy, axis=0, out=in_grad[2].reshape(-1))
            else:
                in_grad[2] += dy.sum(axis=0).reshape(in_grad[2].shape)

    def _backward_split(self, xp, x, w, dy, req, in_grad):
        """The weight gradient by halves of the output units, the data gradient by halves
        of the batch: up to four products taken by this thread and the helper."""
        parts = []
        if req[1] != OpReqType.null:
            dw, k = in_grad[1], self.p.num_hidden // 2
            parts += [lambda: xp.matmul(dy[:, :k].T, x, out=dw[:k]),
                      lambda: xp.matmul(dy[:, k:].T, x, out=dw[k:])]
        if req[0] != OpReqType.null:
            dx, h = in_grad[0].reshape(x.shape), x.shape[0] // 2
            parts += [lambda: xp.matmul(dy[:h], w, out=dx[:h]),
                      lambda: xp.matmul(dy[h:], w, out=dx[h:])]
        run_items(len(parts), lambda i, slot: parts[i]())


class FullyConnectedProp(OperatorProperty):
    param_cls = FullyConnectedParam

    def list_arguments(self):
        return ["data", "weight"] if self.param.no_bias else ["data", "weight", "bias"]

    def infer_shape(self, in_shape):
        p, op, names = self.param, self.op_name, self.list_arguments()
        shapes = [None if s is None else tuple(s) for s in in_shape]
        d = shapes[0]
        if d is None:
            return shapes, [None], []
        if len(d) == 0:
            raise self._err(f"data must have at least one dimension, got shape {d}")
        if p.flatten:
            in_dim = prod(d[1:])
            out = (d[0], p.num_hidden)
        else:
            in_dim = d[-1]
            out = tuple(d[:-1]) + (p.num_hidden,)
        shape_assign(op, shapes, 1, names, (p.num_hidden, in_dim))
        # MXNet 1.x also takes a (num_hidden, 1) bias (its shape check tries both)
        if not p.no_bias and shapes[2] != (p.num_hidden, 1):
            shape_assign(op, shapes, 2, names, (p.num_hidden,))
        return shapes, [out], []

    def _err(self, msg):
        from plexnet.base import ShapeError
        return ShapeError(f"{self.op_name}: {msg}")

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1]]


def register(registry):
    registry.register_property("FullyConnected", FullyConnectedProp)
    registry.register_impl("FullyConnected", "*", lambda prop, ctx: FullyConnectedOp(prop.param), impl_name="xp")
