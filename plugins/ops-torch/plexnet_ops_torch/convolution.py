"""Convolution and Deconvolution through ``aten::convolution`` and
``aten::convolution_backward`` (oneDNN on x86 CPUs): 1-D, 2-D, 3-D, stride, dilate, pad,
num_group, bias; Deconvolution's ``adj`` / ``target_shape`` as torch's
``output_padding``. Channels-last layouts, dtypes other than float32/float64 and an
``adj`` torch cannot take run the ops-basic implementation.

**Single-channel inputs stay on ops-basic.** oneDNN is not faster everywhere: on one
input channel per group (LeNet's first layer: 1 x 5x5) ops-basic's im2col + GEMM
backward took about half of torch's time (2.4-2.7 ms against 4.7-5.5 ms), while on
ResNet's three-channel stem the two were level (3.9 / 4.0 ms) and torch's forward
faster. So inputs with fewer than ``TORCH_MIN_CHANNELS`` channels per group run
ops-basic. A timed trial per geometry was tried first and dropped: on this shared host
the timings of one trial were too noisy to choose by (it picked numpy for ResNet layers
that torch runs twice as fast)."""
from __future__ import annotations

from typing import Any

from plexnet_ops_basic.nn.convolution import ConvolutionOp
from plexnet_ops_basic.nn.deconvolution import DeconvolutionOp

from . import _base
from ._base import NULL, T, TorchOp, store

#: fewest input channels per group run through torch
TORCH_MIN_CHANNELS = 2


class TorchConvBase(TorchOp):
    transposed = False

    def geometry(self, xshape: tuple) -> tuple[list, list, list, list] | None:
        """``(stride, pad, dilate, output_padding)`` for data of shape ``xshape``, or None
        when torch cannot run it."""
        p = self.p
        if self.channels(xshape) < TORCH_MIN_CHANNELS:
            return None
        nd = len(p.kernel)
        return list(p.stride), list(p.pad), list(p.dilate), [0] * nd

    def supports(self, ctx, arrays):
        return not self.p.channels_last() and _base.ok_arrays(arrays)

    def takes(self, data: Any) -> bool:
        return data is None or self.geometry(tuple(data.shape)) is not None

    def channels(self, xshape: tuple) -> int:
        """Input channels per group of the convolution."""
        return int(xshape[1]) // self.p.num_group

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

    def channels(self, xshape):
        # the convolution whose data gradient this is reads num_filter channels
        return super().channels((xshape[0], self.p.num_filter))

    def geometry(self, xshape):
        p = self.p
        if self.channels(xshape) < TORCH_MIN_CHANNELS:
            return None
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
