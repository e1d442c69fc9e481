"""Fused multi-tensor updates of MXNet 1.x: ``multi_sgd_update``, ``multi_sgd_mom_update``,
``multi_mp_sgd_update``, ``multi_mp_sgd_mom_update``, their ``preloaded_*`` forms (learning
rates and weight decays as the last two input arrays instead of the ``lrs``/``wds``
parameters), ``multi_sum_sq`` and ``multi_lars``.

Inputs come interleaved per weight as MXNet takes them (``weight_0, grad_0[, mom_0][,
weight32_0], weight_1, ...``); output ``i`` is the new weight ``i`` (pass ``out=weights``
to update in place). The states (``mom``, the float32 master ``weight32``) are updated in
place: the property names them in ``mutate_inputs()`` (MXNet's ``FMutateInputs``) so the
engine orders the call as a write of them. The arithmetic is ``plexnet.optimizer.kernels``'
``sgd``, the kernel of ``sgd_update``/``sgd_mom_update``.
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np  # dtype arithmetic only

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, Params
from plexnet.operator.params import ParamError
from plexnet.operator.shape_utils import unify_groups
from plexnet.optimizer import kernels

from ._common import INPLACE, WRITE, _store, clip_field, momentum_field, rescale_field

__all__ = ["register"]


def _floats(v: Any) -> tuple[float, ...]:
    if isinstance(v, str):
        v = [x for x in v.strip("()[] ").split(",") if x.strip()]
    elif isinstance(v, (int, float)):
        v = [v]
    return tuple(float(x) for x in v)


class MultiSGDParam(Params):
    lrs = Field(_floats, doc="learning rate of each weight")
    wds = Field(_floats, doc="weight decay of each weight")
    rescale_grad = rescale_field()
    clip_gradient = clip_field()
    num_weights = Field(int, default=1, low=1, doc="number of weights")

    def __post_init__(self, op: str) -> None:
        for k in ("lrs", "wds"):
            if len(getattr(self, k)) != self.num_weights:
                raise ParamError(f"{op}: argument {k!r}={getattr(self, k)} must have num_weights="
                                 f"{self.num_weights} values")


class MultiSGDMomParam(MultiSGDParam):
    momentum = momentum_field()


class PreloadedSGDParam(Params):
    rescale_grad = rescale_field()
    clip_gradient = clip_field()
    num_weights = Field(int, default=1, low=1, doc="number of weights")


class PreloadedSGDMomParam(PreloadedSGDParam):
    momentum = momentum_field()


class MultiUpdateProp(OperatorProperty):
    """Shared signature, inference and in-place states of the fused SGD updates."""

    group: ClassVar[tuple[str, ...]] = ("weight", "grad")
    mp: ClassVar[bool] = False
    preloaded: ClassVar[bool] = False

    def list_arguments(self) -> list[str]:
        names = [f"{g}_{i}" for i in range(self.param.num_weights) for g in self.group]
        return names + (["lrs", "wds"] if self.preloaded else [])

    def list_outputs(self) -> list[str]:
        return self.default_output_names(self.param.num_weights)

    def mutate_inputs(self) -> list[int]:
        """Indices of the inputs updated in place (the states)."""
        k = len(self.group)
        return [i * k + j for i in range(self.param.num_weights) for j in range(2, k)]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        k, n = len(self.group), self.param.num_weights
        shapes = [tuple(s) if s is not None else None for s in in_shape]
        outs = unify_groups(self.op_name, self.group, n, shapes)
        if self.preloaded:
            for j, name in ((n * k, "lrs"), (n * k + 1, "wds")):
                if shapes[j] is not None and shapes[j] != (n,):
                    raise ShapeError(f"{self.op_name}: {name} must have shape ({n},), got {shapes[j]}")
                shapes[j] = (n,)
        return shapes, outs, []

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        k, n = len(self.group), self.param.num_weights
        types = list(in_type)
        for i in range(n):
            w = types[i * k]
            for j in range(1, k):
                if types[i * k + j] is None:
                    types[i * k + j] = np.dtype(np.float32) if self.mp and j >= 2 else w
        return types, [types[i * k] for i in range(n)], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return []

    def forward_inplace_option(self, in_data: list, out_data: list) -> list:
        k = len(self.group)
        return [(in_data[i * k], out_data[i]) for i in range(self.param.num_weights)]


class MultiUpdateOp(Operator):
    def __init__(self, prop: MultiUpdateProp) -> None:
        self.prop = prop
        self.p = prop.param

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp, p, prop = ctx.xp, self.p, self.prop
        k, n = len(prop.group), p.num_weights
        if prop.preloaded:
            lrs = [float(v) for v in _host(in_data[n * k])]
            wds = [float(v) for v in _host(in_data[n * k + 1])]
        else:
            lrs, wds = list(p.lrs), list(p.wds)
        # MultiSGDKernel: its own association, lrs/wds as float32 values (not parsed as floats)
        kw: dict[str, Any] = {"rescale_grad": p.rescale_grad, "clip_gradient": p.clip_gradient, "multi": True}
        if "momentum" in p.to_dict():
            kw["momentum"] = p.momentum
        for i in range(n):
            w, g = in_data[i * k], in_data[i * k + 1]
            states = list(in_data[i * k + 2:(i + 1) * k])
            out, r = out_data[i], int(req[i])
            args = dict(kw, lr=lrs[i], wd=wds[i])
            if prop.mp:
                w32 = states.pop()
                kernels.sgd(xp, w32, g, states, **args)
                _store(xp, out, r, w32)
            elif r == INPLACE or (r == WRITE and out is w):
                kernels.sgd(xp, out, g, states, **args)
            else:
                tmp = w.copy()
                kernels.sgd(xp, tmp, g, states, **args)
                _store(xp, out, r, tmp)

    def backward(self, *a: Any) -> None:
        raise ParamError(f"{self.prop.op_name}: an optimizer update has no gradient")


class MultiSGDProp(MultiUpdateProp):
    """``weight_i = (1 - lrs[i]*wds[i]) * weight_i - lrs[i] * clip(rescale_grad * grad_i)``."""
    param_cls = MultiSGDParam


class MultiSGDMomProp(MultiUpdateProp):
    """``mom_i = momentum*mom_i - lrs[i]*wds[i]*weight_i - lrs[i]*clip(rescale_grad*grad_i)``;
    ``weight_i += mom_i`` (``mom_i`` in place)."""
    param_cls = MultiSGDMomParam
    group = ("weight", "grad", "mom")


class MultiMPSGDProp(MultiUpdateProp):
    """``multi_sgd_update`` on float32 masters ``weight32_i`` (in place); outputs them in the
    weights' dtype."""
    param_cls = MultiSGDParam
    group = ("weight", "grad", "weight32")
    mp = True


class MultiMPSGDMomProp(MultiUpdateProp):
    """``multi_sgd_mom_update`` on float32 ``mom_i`` and masters ``weight32_i`` (in place)."""
    param_cls = MultiSGDMomParam
    group = ("weight", "grad", "mom", "weight32")
    mp = True


def _preloaded(base: type[MultiUpdateProp], pcls: type[Params]) -> type[MultiUpdateProp]:
    doc = (base.__doc__ or "").replace("lrs[i]", "lrs[i] (input)").replace("wds[i]", "wds[i] (input)")
    return type(f"Preloaded{base.__name__}", (base,), {"param_cls": pcls, "preloaded": True, "__doc__": doc})


class MultiSumSqParam(Params):
    num_arrays = Field(int, low=1, doc="number of arrays")


class MultiSumSqProp(OperatorProperty):
    """``(num_arrays,)`` float32: the sum of squares of each input (summed in order into
    a float32, as MXNet's CPU kernel)."""
    param_cls = MultiSumSqParam

    def list_arguments(self) -> list[str]:
        return [f"array_{i}" for i in range(self.param.num_arrays)]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        return list(in_shape), [(self.param.num_arrays,)], []

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        return list(in_type), [np.dtype(np.float32)], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return []


class MultiSumSqOp(Operator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp = ctx.xp
        vals = xp.asarray(np.array([kernels.sum_sq(xp, x) for x in in_data], dtype=np.float32))
        _store(xp, out_data[0], int(req[0]), vals)


class MultiLarsParam(Params):
    eta = Field(float, doc="LARS coefficient")
    eps = Field(float, doc="added to the denominator")
    rescale_grad = rescale_field()


class MultiLarsProp(OperatorProperty):
    """New learning rates ``lrs * eta * |w| / (|g| * rescale_grad + wds * |w| + eps)`` where
    both norms (square roots of the given sums of squares) are positive, else ``lrs``."""
    param_cls = MultiLarsParam

    def list_arguments(self) -> list[str]:
        return ["lrs", "weights_sum_sq", "grads_sum_sq", "wds"]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        known = next((tuple(s) for s in in_shape if s is not None), None)
        for name, s in zip(self.list_arguments(), in_shape):
            if s is not None and tuple(s) != known:
                raise ShapeError(f"{self.op_name}: {name} has shape {tuple(s)}, expected {known} (all inputs: "
                                 f"{in_shape})")
        return [known] * 4, [known], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return []


class MultiLarsOp(Operator):
    def __init__(self, prop: MultiLarsProp) -> None:
        self.p = prop.param

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp, p = ctx.xp, self.p
        f32 = np.float32
        lrs, wss, gss, wds = (a.astype(f32, copy=False) for a in in_data)
        eta, eps, rs = (kernels.mx_param(x) for x in (p.eta, p.eps, p.rescale_grad))
        wn, gn = xp.sqrt(wss), xp.sqrt(gss)
        ok = (wn > 0) & (gss > 0)
        with np.errstate(divide="ignore", invalid="ignore"):   # MultiLARSKernel's float association
            new = lrs * eta * wn / (gn * rs + wds * wn + eps)
        _store(xp, out_data[0], int(req[0]), xp.where(ok, new, lrs))


def _host(a: Any) -> Any:
    get = getattr(a, "get", None)
    return get() if callable(get) and not isinstance(a, np.ndarray) else a


def register(registry: Any) -> None:
    make = lambda prop, ctx: MultiUpdateOp(prop)  # noqa: E731
    for name, cls in (("multi_sgd_update", MultiSGDProp), ("multi_sgd_mom_update", MultiSGDMomProp),
                      ("multi_mp_sgd_update", MultiMPSGDProp), ("multi_mp_sgd_mom_update", MultiMPSGDMomProp)):
        pcls = PreloadedSGDMomParam if "mom" in name else PreloadedSGDParam
        for n, c in ((name, cls), ("preloaded_" + name, _preloaded(cls, pcls))):
            registry.register_property(n, c)
            registry.register_impl(n, "*", make, impl_name="xp")
    registry.register_property("multi_sum_sq", MultiSumSqProp)
    registry.register_impl("multi_sum_sq", "*", lambda prop, ctx: MultiSumSqOp(), impl_name="xp")
    registry.register_property("multi_lars", MultiLarsProp)
    registry.register_impl("multi_lars", "*", lambda prop, ctx: MultiLarsOp(prop), impl_name="xp")

