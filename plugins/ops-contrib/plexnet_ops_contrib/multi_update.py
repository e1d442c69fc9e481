"""Fused multi-tensor AdamW and LAMB updates of MXNet 1.9.1 (the operators behind
``nd.contrib.multi_adamw_update``, ``multi_mp_adamw_update``, ``multi_lamb_update`` and
``multi_mp_lamb_update``).

Inputs come interleaved per tensor as MXNet takes them: ``weight_i, grad_i, mean_i,
var_i[, weight32_i]`` (then ``rescale_grad``, an array, for AdamW). Output ``i`` is the new
weight ``i`` (pass ``out=weights`` to update in place); ``mean``, ``var`` and the float32
master ``weight32`` are updated in place (``mutate_inputs``, MXNet's ``FMutateInputs``).

* ``_multi_adamw_update``: per tensor the step of ``_adamw_update`` with ``lrs[i]``,
  ``wds[i]``, ``etas[i]``; a NaN, infinite or 0 ``rescale_grad`` skips the whole call.
* ``_multi_lamb_update``: per tensor ``g = clip(rescale_grad * grad)``, moments as Adam,
  ``d = m / (sqrt(v) + epsilon) + wds[i] * w`` (``m``, ``v`` bias-corrected with
  ``step_count[i]`` when ``bias_correction``), ``r1 = |weight|`` (of the weights, even for
  ``mp_``: squares in their dtype, summed in float32, as MXNet's ``multi_sum_sq``) clamped to
  ``[lower_bound, upper_bound]`` (each when >= 0), ``r2 = |d|``,
  ``w -= lrs[i] * (r1 / r2 if both are non-zero else 1) * d``; for ``mp_`` the arithmetic
  runs on ``weight32`` (written back).
"""
from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np  # dtype arithmetic only

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params, assign
from plexnet.operator.params import ParamError
from plexnet.operator.shape_utils import unify_groups

__all__ = ["register"]


def _floats(v: Any) -> tuple[float, ...]:
    if isinstance(v, str):
        v = [x for x in v.strip("()[] ").split(",") if x.strip()]
    elif isinstance(v, (int, float)):
        v = [v]
    return tuple(float(x) for x in v)


def _ints(v: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in _floats(v))


class _CountCheck(Params):
    #: (count parameter, per-tensor tuple parameters)
    tuples: ClassVar[tuple[str, ...]] = ()
    count: ClassVar[str] = ""

    def __post_init__(self, op: str) -> None:
        n = getattr(self, self.count)
        for k in self.tuples:
            if len(getattr(self, k)) != n:
                raise ParamError(f"{op}: argument {k!r}={getattr(self, k)} must have {self.count}={n} values")


class MultiAdamWParam(_CountCheck):
    lrs = Field(_floats, doc="learning rate of each tensor")
    wds = Field(_floats, doc="decoupled weight decay of each tensor")
    etas = Field(_floats, doc="schedule multiplier of each tensor's step")
    beta1 = Field(float, default=0.9, doc="decay of the first moment")
    beta2 = Field(float, default=0.999, doc="decay of the second moment")
    epsilon = Field(float, default=1e-8, doc="added to the root of the second moment")
    clip_gradient = Field(float, default=-1.0, doc="clip the rescaled gradient to [-c, c] (c < 0: off)")
    num_weights = Field(int, default=1, low=1, doc="number of tensors")
    tuples = ("lrs", "wds", "etas")
    count = "num_weights"


class MultiLambParam(_CountCheck):
    learning_rates = Field(_floats, doc="learning rate of each tensor")
    wds = Field(_floats, doc="weight decay of each tensor")
    step_count = Field(_ints, doc="step number of each tensor (for the bias correction)")
    beta1 = Field(float, default=0.9, doc="decay of the first moment")
    beta2 = Field(float, default=0.999, doc="decay of the second moment")
    epsilon = Field(float, default=1e-6, doc="added to the root of the second moment")
    rescale_grad = Field(float, default=1.0, doc="gradient scale")
    lower_bound = Field(float, default=-1.0, doc="lower clamp of the weight norm (< 0: off)")
    upper_bound = Field(float, default=-1.0, doc="upper clamp of the weight norm (< 0: off)")
    clip_gradient = Field(float, default=-1.0, doc="clip the rescaled gradient to [-c, c] (c < 0: off)")
    bias_correction = Field(bool, default=True, doc="divide the moments by 1 - beta^t")
    num_tensors = Field(int, default=1, low=1, doc="number of tensors")
    tuples = ("learning_rates", "wds", "step_count")
    count = "num_tensors"


class MultiUpdateProp(OperatorProperty):
    """Signature, inference and in-place states shared by the fused AdamW/LAMB updates."""

    mp: ClassVar[bool] = False
    rescale_input: ClassVar[bool] = False  # AdamW takes rescale_grad as the last input

    @property
    def group(self) -> tuple[str, ...]:
        return ("weight", "grad", "mean", "var") + (("weight32",) if self.mp else ())

    @property
    def n(self) -> int:
        return int(getattr(self.param, "num_weights", None) or self.param.num_tensors)

    def list_arguments(self) -> list[str]:
        names = [f"{g}_{i}" for i in range(self.n) for g in self.group]
        return names + (["rescale_grad"] if self.rescale_input else [])

    def list_outputs(self) -> list[str]:
        return self.default_output_names(self.n)

    def mutate_inputs(self) -> list[int]:
        """Indices of the inputs updated in place: the moments (and ``weight32``)."""
        k = len(self.group)
        return [i * k + j for i in range(self.n) for j in range(2, k)]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        k, n = len(self.group), self.n
        shapes = [tuple(s) if s is not None else None for s in in_shape]
        outs = unify_groups(self.op_name, self.group, n, shapes)
        if self.rescale_input:
            rs = shapes[n * k]
            if rs is not None and int(np.prod(rs)) != 1:
                raise ShapeError(f"{self.op_name}: rescale_grad must hold one value, got shape {shapes[n * k]}")
            shapes[n * k] = shapes[n * k] or (1,)
        return shapes, outs, []

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        k, n = len(self.group), self.n
        types = list(in_type)
        f32 = np.dtype(np.float32)
        for i in range(n):
            w = types[i * k] if types[i * k] is not None else f32
            types[i * k] = w
            for j in range(1, k):
                if types[i * k + j] is None:
                    types[i * k + j] = f32 if self.mp and j >= 2 else w
        if self.rescale_input and types[n * k] is None:
            types[n * k] = f32
        return types, [types[i * k] for i in range(n)], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return []

    def forward_inplace_option(self, in_data: list, out_data: list) -> list:
        k = len(self.group)
        return [(in_data[i * k], out_data[i]) for i in range(self.n)]


class MultiUpdateOp(Operator):
    """Runs the per-tensor step (AdamW here, LAMB in the subclass) over the interleaved inputs."""

    def __init__(self, prop: MultiUpdateProp) -> None:
        self.prop, self.p = prop, prop.param

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        prop, xp = self.prop, ctx.xp
        k, n = len(prop.group), prop.n
        if prop.rescale_input:
            r = float(_host(in_data[n * k]).reshape(-1)[0])
            if not math.isfinite(r) or r == 0:  # MXNet skips the call; outputs keep the weights
                for i in range(n):
                    self._store(out_data[i], req[i], in_data[i * k])
                return
        else:
            r = self.p.rescale_grad
        for i in range(n):
            w, g, mean, var = in_data[i * k:i * k + 4]
            master = in_data[i * k + 4] if prop.mp else w
            new = self.step(xp, i, w, master, g, mean, var, r)
            if prop.mp:
                master[...] = new
            self._store(out_data[i], req[i], new)

    @staticmethod
    def _store(out: Any, r: Any, value: Any) -> None:
        if r != OpReqType.null:
            assign(out, r, value.astype(out.dtype, copy=False))

    def step(self, xp: Any, i: int, w: Any, master: Any, g: Any, mean: Any, var: Any, r: float) -> Any:
        """The AdamW step of tensor ``i`` (``MultiLambOp`` overrides it); returns the new weight.

        MXNet's fused kernel (``MultiMPAdamWKernel``), not ``_adamw_update``'s: every
        constant in the master's dtype and the moments as ``beta * (m - g) + g``, which
        rounds otherwise than ``beta * m + (1 - beta) * g`` (the two operators' results
        differ in the last bits, in MXNet as here)."""
        p, f = self.p, master.dtype.type
        g = g.astype(master.dtype) * f(r)
        if p.clip_gradient >= 0:
            g = xp.clip(g, -f(p.clip_gradient), f(p.clip_gradient))
        mean[...] = f(p.beta1) * (mean - g) + g
        adj = g * g
        var[...] = f(p.beta2) * (var - adj) + adj
        return master - f(p.etas[i]) * (f(p.lrs[i]) * mean / (xp.sqrt(var) + f(p.epsilon)) + f(p.wds[i]) * master)

    def backward(self, *a: Any) -> None:
        raise ParamError(f"{self.prop.op_name}: an optimizer update has no gradient")


class MultiLambOp(MultiUpdateOp):
    def _moments(self, xp: Any, master: Any, g: Any, mean: Any, var: Any, r: float) -> None:
        p, f = self.p, mean.dtype.type   # MXNet's float kernel: 1 - beta in the states' dtype
        g = g.astype(master.dtype) * master.dtype.type(r)
        if p.clip_gradient >= 0:
            g = xp.clip(g, -p.clip_gradient, p.clip_gradient)
        mean *= p.beta1
        mean += (f(1) - f(p.beta1)) * g
        var *= p.beta2
        var += (f(1) - f(p.beta2)) * g * g

    def step(self, xp: Any, i: int, w: Any, master: Any, g: Any, mean: Any, var: Any, r: float) -> Any:
        p = self.p
        self._moments(xp, master, g, mean, var, r)
        if p.bias_correction:
            t, f = p.step_count[i], mean.dtype.type
            m = mean / (f(1) - f(p.beta1) ** t)
            v = var / (f(1) - f(p.beta2) ** t)
        else:
            m, v = mean, var
        d = m / (xp.sqrt(v) + p.epsilon) + p.wds[i] * master
        # MXNet's multi_sum_sq: squares in the weights' dtype (float16 too), summed in float32;
        # the norm is of the weights, not of the float32 masters
        r1 = float(xp.sqrt(xp.square(w).astype(np.float32).sum()))
        r2 = float(xp.sqrt(xp.square(d.astype(np.float32)).sum()))
        if p.lower_bound >= 0:
            r1 = max(r1, p.lower_bound)
        if p.upper_bound >= 0:
            r1 = min(r1, p.upper_bound)
        ratio = 1.0 if r1 == 0 or r2 == 0 else r1 / r2
        return master - p.learning_rates[i] * ratio * d


class MultiAdamWProp(MultiUpdateProp):
    """AdamW steps of ``num_weights`` tensors in one call (``lrs``, ``wds``, ``etas`` per tensor)."""
    param_cls = MultiAdamWParam
    rescale_input = True


class MultiMPAdamWProp(MultiAdamWProp):
    """``_multi_adamw_update`` on float32 masters ``weight32_i`` (updated in place)."""
    mp = True


class MultiLambProp(MultiUpdateProp):
    """LAMB steps of ``num_tensors`` tensors in one call (trust ratio per tensor)."""
    param_cls = MultiLambParam


class MultiMPLambProp(MultiLambProp):
    """``_multi_lamb_update`` on float32 masters ``weight32_i`` (updated in place)."""
    mp = True


def _host(a: Any) -> Any:
    get = getattr(a, "get", None)
    return get() if callable(get) and not isinstance(a, np.ndarray) else np.asarray(a)


def register(registry: Any) -> None:
    for name, cls, op in (("_multi_adamw_update", MultiAdamWProp, MultiUpdateOp),
                          ("_multi_mp_adamw_update", MultiMPAdamWProp, MultiUpdateOp),
                          ("_multi_lamb_update", MultiLambProp, MultiLambOp),
                          ("_multi_mp_lamb_update", MultiMPLambProp, MultiLambOp)):
        registry.register_property(name, cls)
        registry.register_impl(name, "*", lambda prop, ctx, op=op: op(prop), impl_name="xp")
