"""Convolution and Deconvolution through ``aten::convolution`` and
``aten::convolution_backward`` (oneDNN on x86 CPUs): 1-D, 2-D, 3-D, stride, dilate, pad,
num_group, bias; Deconvolution's ``adj`` / ``target_shape`` as torch's
``output_padding``. Channels-last layouts, dtypes other than float32/float64 and an
``adj`` torch cannot take run the ops-basic implementation.

**Per-shape choice.** oneDNN is not faster everywhere: on LeNet's first layer (one input
channel) ops-basic's im2col backward took half of torch's time. So the first call of a
geometry with at least ``TUNE_MIN_MACS`` multiply-adds times both implementations
(``TUNE_REPS`` alternating runs each, into scratch outputs) and keeps the faster one for
that geometry and phase (forward / backward), as MXNet's ``cudnn_tune`` does on GPUs.
``PLEXNET_TORCH_CONV_TUNE=0`` always takes torch."""
from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from plexnet_ops_basic.nn.convolution import ConvolutionOp
from plexnet_ops_basic.nn.deconvolution import DeconvolutionOp

from . import _base
from ._base import NULL, WRITE, T, TorchOp, store

#: geometries with fewer multiply-adds run through torch without a trial
TUNE_MIN_MACS = 20_000_000
TUNE_REPS = 2


def _prod(shape) -> int:
    n = 1
    for v in shape:
        n *= int(v)
    return n


class TorchConvBase(TorchOp):
    transposed = False

    def __init__(self, prop: Any) -> None:
        super().__init__(prop)
        self._choice: dict = {}
        self.tune = os.environ.get("PLEXNET_TORCH_CONV_TUNE", "1") != "0"

    def _uses_xp(self, phase: str, x: Any, w: Any, y: Any, trial) -> bool:
        """Whether ops-basic runs ``phase`` for this geometry; decided by ``trial(impl)``
        timings on first use (see the module docstring)."""
        key = (phase, x.shape, x.dtype.str)
        c = self._choice.get(key)
        if c is None:
            c = "torch"
            if self.tune and max(x.size, y.size) * _prod(w.shape[1:]) >= TUNE_MIN_MACS:
                best = {"torch": float("inf"), "xp": float("inf")}
                for _ in range(TUNE_REPS):
                    for impl in ("torch", "xp"):
                        t0 = time.perf_counter()
                        trial(impl)
                        best[impl] = min(best[impl], time.perf_counter() - t0)
                c = "xp" if best["xp"] < best["torch"] else "torch"
            self._choice[key] = c
        return c == "xp"

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] != NULL and self.supports(ctx, list(in_data) + list(out_data)):
            def trial(impl: str) -> None:
                scratch = [np.empty_like(out_data[0])]
                run = self.torch_forward if impl == "torch" else self.xp_op.forward
                run(ctx, in_data, [WRITE], scratch, aux_states)
            if not self._uses_xp("forward", in_data[0], in_data[1], out_data[0], trial):
                return self.torch_forward(ctx, in_data, req, out_data, aux_states)
        return self.xp_op.forward(ctx, in_data, req, out_data, aux_states)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if self.supports(ctx, list(out_grad) + list(in_data) + list(in_grad)):
            def trial(impl: str) -> None:
                scratch = [g if r == NULL else np.empty_like(g) for g, r in zip(in_grad, req)]
                reqs = [NULL if r == NULL else WRITE for r in req]
                run = self.torch_backward if impl == "torch" else self.xp_op.backward
                run(ctx, out_grad, in_data, out_data, reqs, scratch, aux_states)
            if not self._uses_xp("backward", in_data[0], in_data[1], out_grad[0], trial):
                return self.torch_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        return self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)

    def geometry(self, xshape: tuple) -> tuple[list, list, list, list] | None:
        """``(stride, pad, dilate, output_padding)`` for data of shape ``xshape``, or None
        when torch cannot run it."""
        p = self.p
        nd = len(p.kernel)
        return list(p.stride), list(p.pad), list(p.dilate), [0] * nd

    def supports(self, ctx, arrays):
        return not self.p.channels_last() and _base.ok_arrays(arrays)

    def torch_forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == NULL:
            return
        geo = self.geometry(tuple(in_data[0].shape))
        if geo is None:
            return self.xp_op.forward(ctx, in_data, req, out_data, aux_states)
        stride, pad, dilate, opad = geo
        b = None if self.p.no_bias else T(in_data[2])
        y = _base.torch.ops.aten.convolution(T(in_data[0]), T(in_data[1]), b, stride, pad, dilate,
                                             self.transposed, opad, self.p.num_group)
        store(out_data[0], req[0], y)

    def torch_backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        geo = self.geometry(tuple(in_data[0].shape))
        if geo is None:
            return self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        stride, pad, dilate, opad = geo
        need = [req[0] != NULL, req[1] != NULL, (not self.p.no_bias) and req[2] != NULL]
        if not any(need):
            return
        w = in_data[1]
        bias_sizes = [self.p.num_filter] if need[2] else None
        grads = _base.torch.ops.aten.convolution_backward(
            T(out_grad[0]), T(in_data[0]), T(w), bias_sizes, stride, pad, dilate, self.transposed, opad,
            self.p.num_group, need)
        for i, g in enumerate(grads):
            if need[i]:
                store(in_grad[i], req[i], g)


class TorchConvolutionOp(TorchConvBase):
    fallback = ConvolutionOp


class TorchDeconvolutionOp(TorchConvBase):
    fallback = DeconvolutionOp
    transposed = True

    def geometry(self, xshape):
        p = self.p
        pad, adj = p.infer_pad(xshape[2:])
        # torch wants output_padding below stride or dilation
        if any(a >= max(s, d) and a > 0 for a, s, d in zip(adj, p.stride, p.dilate)):
            return None
        return list(p.stride), list(pad), list(p.dilate), list(adj)


def register(registry: Any, available: Any) -> None:
    registry.register_impl("Convolution", "cpu", lambda prop, ctx: TorchConvolutionOp(prop), impl_name="torch",
                           priority=10, available=available)
    registry.register_impl("Deconvolution", "cpu", lambda prop, ctx: TorchDeconvolutionOp(prop),
                           impl_name="torch", priority=10, available=available)
