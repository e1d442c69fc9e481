"""``adam_update(weight, grad, mean, var)``, MXNet 1.x semantics::

    t = clip(rescale_grad * grad + wd * weight)
    mean = beta1 * mean + (1 - beta1) * t ; var = beta2 * var + (1 - beta2) * t^2
    weight -= lr * mean / (sqrt(var) + epsilon)

``lr`` is used as given (MXNet's ``Adam`` optimizer passes the bias-corrected rate);
``mean`` and ``var`` are updated in place.
"""
from __future__ import annotations

from plexnet.operator import Field, Params
from plexnet.optimizer import kernels

from ._common import UpdateProp, clip_field, lazy_field, lr_field, register_update, rescale_field, wd_field


class AdamParam(Params):
    lr = lr_field()
    beta1 = Field(float, default=0.9, doc="decay rate of the 1st moment estimates")
    beta2 = Field(float, default=0.999, doc="decay rate of the 2nd moment estimates")
    epsilon = Field(float, default=1e-8, doc="a small constant for numerical stability")
    wd = wd_field()
    rescale_grad = rescale_field()
    clip_gradient = clip_field()
    lazy_update = lazy_field()


class AdamUpdateProp(UpdateProp):
    """Update function for Adam: ``t = clip(rescale_grad*grad + wd*weight)``;
    ``mean = beta1*mean + (1-beta1)*t``; ``var = beta2*var + (1-beta2)*t^2``;
    ``weight -= lr * mean / (sqrt(var) + epsilon)``. ``mean``, ``var`` updated in place."""
    param_cls = AdamParam
    states = ("mean", "var")
    kernel = staticmethod(kernels.adam)


def register(registry):
    register_update(registry, "adam_update", AdamUpdateProp)
