"""Sign-based optimizers, MXNet 1.x semantics:

* ``signsgd_update(weight, grad)``: ``weight = (1 - lr*wd) * weight - lr * sign(grad)``
  (MXNet's kernel does not use ``rescale_grad`` or ``clip_gradient``)
* ``signum_update(weight, grad, mom)``: ``mom = momentum*mom - (1-momentum) *
  (wd*weight + clip(rescale_grad*grad))``; ``weight = (1 - lr*wd_lh) * weight + lr * sign(mom)``
  (``mom`` holds the negated running average, as MXNet's; updated in place)
"""
from __future__ import annotations

from plexnet.operator import Field, Params
from plexnet.optimizer import kernels

from ._common import UpdateProp, clip_field, lr_field, momentum_field, register_update, rescale_field, wd_field


class SignSGDParam(Params):
    lr = lr_field()
    wd = wd_field()
    rescale_grad = rescale_field()
    clip_gradient = clip_field()


class SignumParam(Params):
    lr = lr_field()
    momentum = momentum_field()
    wd = wd_field()
    rescale_grad = rescale_field()
    clip_gradient = clip_field()
    wd_lh = Field(float, default=0.0, doc="decoupled weight decay, applied to the weight directly")


class SignSGDUpdateProp(UpdateProp):
    """Update function for SignSGD: ``weight = (1 - lr*wd) * weight - lr * sign(grad)``."""
    param_cls = SignSGDParam
    kernel = staticmethod(kernels.signsgd)


class SignumUpdateProp(UpdateProp):
    """SIGN momentUM (Signum): ``mom = momentum*mom - (1-momentum)*(wd*weight +
    clip(rescale_grad*grad))``; ``weight = (1 - lr*wd_lh)*weight + lr*sign(mom)``. ``mom``
    is updated in place."""
    param_cls = SignumParam
    states = ("mom",)
    kernel = staticmethod(kernels.signum)


def register(registry):
    register_update(registry, "signsgd_update", SignSGDUpdateProp)
    register_update(registry, "signum_update", SignumUpdateProp)
