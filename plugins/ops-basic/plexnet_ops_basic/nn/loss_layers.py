"""Loss layers of MXNet 1.x: ``MakeLoss``, ``SVMOutput``, ``softmax_cross_entropy``,
``IdentityAttachKLSparseReg``.

``MakeLoss`` and ``SVMOutput`` are loss *outputs*: forward is the identity and backward
ignores the head gradient (``need_top_grad`` is False), as in MXNet.
"""
from __future__ import annotations

from typing import Any

import numpy as np  # dtype handling only

from plexnet.operator import Field, Params

from plexnet_ops_basic.tensor._fn import FnOp, FnProp, register_fn

from ._common import ShapeError, fmt_shape

__all__ = ["register"]


class MakeLossParam(Params):
    grad_scale = Field(float, default=1.0, doc="gradient scale")
    valid_thresh = Field(float, default=0.0, doc="elements above it count as valid ('valid' normalization)")
    normalization = Field(str, default="null", choices=("null", "batch", "valid"),
                          doc="divide the gradient by nothing, the batch size or the valid count")


class MakeLossProp(FnProp):
    """Identity forward; the gradient is ``grad_scale`` (normalized), whatever the head."""
    param_cls = MakeLossParam
    deps = ("in_data",)

    def need_top_grad(self) -> bool:
        return False

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [ins[0]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        x, p = ins[0], self.param
        scale = p.grad_scale
        if p.normalization == "batch":
            scale = scale / max(x.shape[0], 1) if x.ndim else scale
            return [xp.full(x.shape, scale, dtype=x.dtype)]
        if p.normalization == "valid":
            n = xp.maximum((x > p.valid_thresh).sum(), 1)
            return [xp.ones(x.shape, dtype=x.dtype) * (scale / n)]
        return [xp.full(x.shape, scale, dtype=x.dtype)]


class SVMOutputParam(Params):
    margin = Field(float, default=1.0, doc="margin")
    regularization_coefficient = Field(float, default=1.0, doc="scale of the gradient")
    use_linear = Field(bool, default=False, doc="L1-SVM (hinge) instead of L2-SVM (squared hinge)")


class SVMOutputProp(FnProp):
    """Identity forward; backward is the (squared) hinge-loss gradient of the scores
    (classes on the last axis) against ``label`` (``data.shape[:-1]``)."""
    param_cls = SVMOutputParam
    arguments = ("data", "label")
    deps = ("in_data",)

    def need_top_grad(self) -> bool:
        return False

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        d = in_shape[0]
        if d is None:
            return list(in_shape), [None], []
        d = tuple(d)
        want = d[:-1]  # classes on the last axis (MXNet flattens data to 2-D)
        lab = in_shape[1]
        if lab is not None and tuple(lab) != want:
            raise ShapeError(f"{self.op_name}: argument 'label' has shape {fmt_shape(lab)}, expected {want} "
                             f"for data of shape {d}")
        return [d, want], [d], []

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [ins[0]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        x, label = ins
        p = self.param
        x2 = x.reshape(-1, x.shape[-1])
        k = xp.trunc(label.reshape(-1)).astype(np.int64)
        rows = xp.arange(x2.shape[0])
        onehot = xp.zeros(x2.shape, dtype=bool)
        onehot[rows, k] = True
        m, c = p.margin, p.regularization_coefficient
        if p.use_linear:
            g = xp.where(onehot, -1.0 * (m > x2), 1.0 * (m > -x2)) * c
        else:
            g = xp.where(onehot, -2.0 * xp.maximum(m - x2, 0), 2.0 * xp.maximum(m + x2, 0)) * c
        return [g.reshape(x.shape).astype(x.dtype), None]


class SoftmaxCEProp(FnProp):
    """Sum over the batch of ``-log softmax(data)[label]``: output shape (1,)."""
    arguments = ("data", "label")
    deps = ("out_grad", "in_data")

    def shapes(self, ins: list) -> tuple[list, list]:
        d, lab = ins
        if len(d) != 2 or lab != (d[0],):
            raise self.error(f"data must be 2-D (batch, classes) and label (batch,), got {d} and {lab}")
        return ins, [(1,)]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        d = in_shape[0]
        if d is not None and in_shape[1] is None:
            in_shape = [d, (tuple(d)[0],) if len(d) else None]
        return super().infer_shape(in_shape)

    def _softmax(self, xp: Any, x: Any) -> Any:
        e = xp.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x, label = ins
        k = xp.trunc(label).astype(np.int64)
        sm = self._softmax(xp, x)
        return [-xp.log(sm[xp.arange(x.shape[0]), k]).sum().reshape(1)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        x, label = ins
        g = self._softmax(xp, x)
        g[xp.arange(x.shape[0]), xp.trunc(label).astype(np.int64)] -= 1
        return [g * ogs[0].reshape(1, 1), None]


class KLSparseRegParam(Params):
    sparseness_target = Field(float, default=0.1, low=0.0, high=1.0, doc="target mean activation")
    penalty = Field(float, default=0.001, doc="weight of the sparseness penalty")
    momentum = Field(float, default=0.9, doc="momentum of the running average")


class KLSparseRegProp(FnProp):
    """Identity forward; backward adds ``penalty * KL'(target || moving_avg)`` per channel
    and updates the ``moving_avg`` aux state with the batch mean of the activations
    (axis 1 is the channel; the others are averaged), as MXNet does in backward."""
    param_cls = KLSparseRegParam
    deps = ("out_grad", "in_data")

    def list_auxiliary_states(self) -> list[str]:
        return ["moving_avg"]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        d = in_shape[0]
        if d is None:
            return [None], [None], [None]
        d = tuple(d)
        if len(d) < 2:
            raise ShapeError(f"{self.op_name}: data must have at least 2 dims (batch, channel), got {d}")
        return [d], [d], [(d[1],)]

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        return list(in_type), [in_type[0]], [in_type[0]]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [ins[0]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [ogs[0]]  # _KLSparseRegOp adds the penalty before handing the gradient over


class _KLSparseRegOp(FnOp):
    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        p = self.param
        x = in_data[0]
        axes = (0,) + tuple(range(2, x.ndim))
        ma = aux[0]
        ma[...] = p.momentum * ma + (1 - p.momentum) * x.mean(axis=axes)
        a = ma.reshape((1, -1) + (1,) * (x.ndim - 2))
        t = p.sparseness_target
        g = out_grad[0] + p.penalty * (-t / a + (1 - t) / (1 - a))
        super().backward(ctx, [g], in_data, out_data, req, in_grad, aux)


def register(registry: Any) -> None:
    register_fn(registry, "MakeLoss", MakeLossProp)
    register_fn(registry, "SVMOutput", SVMOutputProp)
    register_fn(registry, "softmax_cross_entropy", SoftmaxCEProp)
    registry.register_property("IdentityAttachKLSparseReg", KLSparseRegProp)
    registry.register_impl("IdentityAttachKLSparseReg", "*", lambda prop, ctx: _KLSparseRegOp(prop), impl_name="xp")
