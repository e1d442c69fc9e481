"""RMSProp family, MXNet 1.x semantics, ``t = clip(rescale_grad * grad + wd * weight)``:

* ``rmsprop_update(weight, grad, n)`` (Tieleman & Hinton): ``n = (1-gamma1)*t^2 + gamma1*n``;
  ``weight -= lr * t / sqrt(n + epsilon)``
* ``rmspropalex_update(weight, grad, n, g, delta)`` (Graves 2013): ``n`` as above,
  ``g = (1-gamma1)*t + gamma1*g``, ``delta = gamma2*delta - lr * t / sqrt(n - g^2 + epsilon)``;
  ``weight += delta``

``clip_weights >= 0`` clips the new weight to ``[-clip_weights, clip_weights]`` (``delta`` is
kept as computed, as in MXNet 1.9.1). The states are updated in place.
"""
from __future__ import annotations

from plexnet.operator import Field, Params
from plexnet.optimizer import kernels

from ._common import UpdateProp, clip_field, lr_field, register_update, rescale_field, wd_field


class RMSPropParam(Params):
    lr = lr_field()
    gamma1 = Field(float, default=0.95, doc="decay rate of the mean square (rmspropalex: and of the mean)")
    epsilon = Field(float, default=1e-8, doc="a small constant for numerical stability")
    wd = wd_field()
    rescale_grad = rescale_field()
    clip_gradient = clip_field()
    clip_weights = Field(float, default=-1.0, doc="clip the new weight to [-clip_weights, clip_weights]; "
                                                  "a negative value turns it off")


class RMSPropAlexParam(RMSPropParam):
    #: MXNet's declaration order (positional parameters of nd.rmspropalex_update)
    field_order = ("lr", "gamma1", "gamma2")
    gamma2 = Field(float, default=0.9, doc="decay rate of delta (momentum)")


class RMSPropUpdateProp(UpdateProp):
    """Update function for RMSProp: ``t = clip(rescale_grad*grad + wd*weight)``;
    ``n = (1-gamma1)*t^2 + gamma1*n``; ``weight -= lr * t / sqrt(n + epsilon)``, then
    clipped by ``clip_weights``. ``n`` is updated in place."""
    param_cls = RMSPropParam
    states = ("n",)
    kernel = staticmethod(kernels.rmsprop)
    fixed = {"centered": False}


class RMSPropAlexUpdateProp(UpdateProp):
    """Update function for RMSPropAlex (centered RMSProp, Graves 2013):
    ``n = (1-gamma1)*t^2 + gamma1*n``; ``g = (1-gamma1)*t + gamma1*g``;
    ``delta = gamma2*delta - lr * t / sqrt(n - g^2 + epsilon)``; ``weight += delta``, then
    clipped by ``clip_weights``. ``n``, ``g``, ``delta`` are updated in place."""
    param_cls = RMSPropAlexParam
    states = ("n", "g", "delta")
    kernel = staticmethod(kernels.rmsprop)
    fixed = {"centered": True}


def register(registry):
    register_update(registry, "rmsprop_update", RMSPropUpdateProp)
    register_update(registry, "rmspropalex_update", RMSPropAlexUpdateProp)
