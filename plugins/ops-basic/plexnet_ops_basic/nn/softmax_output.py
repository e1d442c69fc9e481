"""SoftmaxOutput (alias Softmax): softmax forward, cross-entropy gradient backward,
MXNet 1.x semantics.

Forward: softmax over the flattened non-batch axes (default), over axis 1
(``multi_output``) or over the last axis (``preserve_shape``).

Backward ignores the head gradient (``need_top_grad`` False; it reads only label and
output): ``grad = (softmax - onehot(label)) * grad_scale / normalizer`` where the
normaliser is, for ``normalization`` ``null`` / ``batch`` / ``valid``: 1 / rows / number
of non-ignored labels; with ``multi_output`` (MXNet's convention) ``null`` divides by
the spatial size and ``batch`` by batch x spatial size. ``use_ignore`` zeroes the
gradient where ``label == ignore_label``; ``smooth_alpha`` smooths the one-hot target;
a label of the data's shape is a probability target (``grad = (out - label) *
grad_scale``, no normaliser, as MXNet 1.9). The label
gets a zero gradient.
"""
from __future__ import annotations

import numpy as np  # dtype/shape arithmetic only

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params

from ._common import prod, writes
from .softmax import _softmax_into


class SoftmaxOutputParam(Params):
    grad_scale = Field(float, default=1.0, doc="scale of the gradient")
    ignore_label = Field(float, default=-1.0, doc="label ignored when use_ignore is set")
    multi_output = Field(bool, default=False, doc="softmax over axis 1 for every spatial position")
    use_ignore = Field(bool, default=False, doc="give ignore_label positions no gradient")
    preserve_shape = Field(bool, default=False, doc="softmax over the last axis only")
    normalization = Field(str, default="null", choices=("batch", "null", "valid"), doc="gradient normaliser")
    out_grad = Field(bool, default=False, doc="multiply the gradient by the head gradient")
    smooth_alpha = Field(float, default=0.0, low=0.0, doc="label smoothing")


class SoftmaxOutputOp(Operator):
    def __init__(self, param: SoftmaxOutputParam) -> None:
        self.p = param

    def _axis_view(self, a):
        """(array viewed for the softmax, axis)."""
        p = self.p
        if p.multi_output:
            return a.reshape(a.shape[0], a.shape[1], -1), 1
        if p.preserve_shape:
            return a, a.ndim - 1
        return a.reshape(a.shape[0], -1), 1

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        x, ax = self._axis_view(in_data[0])
        if writes(req[0]):
            _softmax_into(xp, x, ax, 1.0, out_data[0].reshape(x.shape))
        else:
            out_data[0] += _softmax_into(xp, x, ax, 1.0, xp.empty_like(x)).reshape(out_data[0].shape)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        p = self.p
        if len(in_grad) > 1 and writes(req[1]):
            in_grad[1][...] = 0
        if req[0] == OpReqType.null:
            return
        out, label = out_data[0], in_data[1]
        if label.shape == out.shape and not p.multi_output:  # probability target
            g = out - label
            scale = p.grad_scale  # MXNet 1.9 applies no normaliser to probability targets
        else:
            y, ax = self._axis_view(out)
            K = y.shape[ax]
            if p.multi_output:
                lab = label.reshape(y.shape[0], -1)  # (N, spatial)
                idx = lab.astype(np.int64)
                onehot = xp.arange(K).reshape(1, K, 1) == idx[:, None, :]
                keep = (lab != p.ignore_label)[:, None, :] if p.use_ignore else None
            else:
                rows = prod(y.shape[:-1])
                lab = label.reshape(-1)[:rows].reshape(y.shape[:-1])
                idx = lab.astype(np.int64)
                onehot = xp.arange(K) == idx[..., None]
                keep = (lab != p.ignore_label)[..., None] if p.use_ignore else None
            if p.smooth_alpha > 0:
                target = xp.where(onehot, 1.0 - p.smooth_alpha, p.smooth_alpha / max(K - 1, 1)).astype(y.dtype)
                g = y - target
            else:
                g = y - onehot
            if keep is not None:
                g *= keep
            if p.normalization == "valid":
                valid = int((lab != p.ignore_label).sum()) if p.use_ignore else lab.size
                scale = p.grad_scale / max(valid, 1)
            elif p.normalization == "batch":
                if p.multi_output:
                    rows = y.shape[0] * y.shape[2]
                elif p.preserve_shape:
                    rows = prod(y.shape[:-1])
                else:
                    rows = y.shape[0]
                scale = p.grad_scale / rows
            else:
                scale = p.grad_scale / (y.shape[2] if p.multi_output else 1)
            g = g.reshape(out.shape)
        if scale != 1.0:
            g = g * scale
        if p.out_grad:
            g = g * out_grad[0]
        g = g.astype(in_grad[0].dtype, copy=False)
        if writes(req[0]):
            xp.copyto(in_grad[0], g)
        else:
            in_grad[0] += g


class SoftmaxOutputProp(OperatorProperty):
    param_cls = SoftmaxOutputParam

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        p, op = self.param, self.op_name
        d = None if in_shape[0] is None else tuple(int(v) for v in in_shape[0])
        lab = None if in_shape[1] is None else tuple(int(v) for v in in_shape[1])
        if d is None:
            return [d, lab], [None], []
        if len(d) < 2 and not p.preserve_shape:
            raise ShapeError(f"{op}: data must have at least 2 dimensions, got shape {d}")
        if p.multi_output:
            cands = [(d[0], prod(d[2:])), (d[0],) + d[2:], (d[0], 1) + d[2:]]
        elif p.preserve_shape:
            cands = [d[:-1], d]
        else:
            cands = [d[:-1], d, (d[0],)]
        if lab is None:
            lab = cands[0]
        elif lab not in cands:
            raise ShapeError(f"{op}: label has shape {lab}; for data {d} expected "
                             f"{' or '.join(str(c) for c in cands)}")
        return [d, lab], [d], []

    def infer_type(self, in_type):
        t = in_type[0] if in_type[0] is not None else in_type[1]
        return [t, in_type[1] if in_type[1] is not None else t], [t], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = [in_data[1], out_data[0]]
        return deps + [out_grad[0]] if self.param.out_grad else deps

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_data[0], in_grad[0])]

    def need_top_grad(self):
        return self.param.out_grad


def register(registry):
    registry.register_property("SoftmaxOutput", SoftmaxOutputProp, aliases=("Softmax",))
    registry.register_impl("SoftmaxOutput", "*", lambda prop, ctx: SoftmaxOutputOp(prop.param), impl_name="xp")
