"""SGD family, MXNet 1.x semantics (``clip`` = clip to ``[-clip_gradient, clip_gradient]``
when ``clip_gradient >= 0``):

* ``sgd_update(weight, grad)``: ``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad*grad)``
* ``sgd_mom_update(weight, grad, mom)``: ``mom = momentum*mom - lr*wd*weight -
  lr*clip(rescale_grad*grad)``; ``weight += mom``
* ``nag_mom_update(weight, grad, mom)`` (MXNet 1.9.1's form): ``t = clip(rescale_grad*grad) +
  wd*weight``; ``m = momentum*mom``; ``weight = weight - m + (momentum+1) * (m - lr*t)``;
  ``mom = m - lr * (clip(rescale_grad*grad) + wd*weight)``, where MXNet's kernel reads
  ``weight`` *after* writing the output: with ``out=weight`` (and always in
  ``mp_nag_mom_update``) the new weight, otherwise the old one. plexnet does the same.
* ``mp_sgd_update(weight, grad, weight32)``, ``mp_sgd_mom_update(weight, grad, mom, weight32)``,
  ``mp_nag_mom_update(weight, grad, mom, weight32)``: the same on the float32 master
  ``weight32`` (and a float32 ``mom``), the gradient cast to float32; the output is the
  master rounded to the weight's dtype (float16 weights).
"""
from __future__ import annotations

from plexnet.operator import Params
from plexnet.optimizer import kernels

from ._common import (UpdateProp, clip_field, lazy_field, lr_field, momentum_field, register_update,
                      rescale_field, wd_field)


class SGDParam(Params):
    lr = lr_field()
    wd = wd_field()
    rescale_grad = rescale_field()
    clip_gradient = clip_field()
    lazy_update = lazy_field()


class SGDMomParam(Params):
    lr = lr_field()
    momentum = momentum_field()
    wd = wd_field()
    rescale_grad = rescale_field()
    clip_gradient = clip_field()
    lazy_update = lazy_field()


class NAGMomParam(Params):
    lr = lr_field()
    momentum = momentum_field()
    wd = wd_field()
    rescale_grad = rescale_field()
    clip_gradient = clip_field()


class SGDUpdateProp(UpdateProp):
    """Update function for Stochastic Gradient Descent (SGD):
    ``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)``."""
    param_cls = SGDParam
    kernel = staticmethod(kernels.sgd)


class SGDMomUpdateProp(UpdateProp):
    """Momentum SGD: ``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``;
    ``weight += mom``. ``mom`` is updated in place."""
    param_cls = SGDMomParam
    states = ("mom",)
    kernel = staticmethod(kernels.sgd)


class NAGMomUpdateProp(UpdateProp):
    """Nesterov accelerated gradient (MXNet 1.9.1): ``t = clip(rescale_grad*grad) +
    wd*weight``; ``m = momentum*mom``; ``weight = weight - m + (momentum+1)*(m - lr*t)``;
    ``mom = m - lr*(clip(rescale_grad*grad) + wd*weight)`` with the new weight when
    ``out=weight`` (MXNet reads it after writing the output). ``mom`` is updated in place."""
    param_cls = NAGMomParam
    states = ("mom",)
    kernel = staticmethod(kernels.nag)
    alias_kwarg = "mom_uses_new_weight"


class MPSGDUpdateProp(SGDUpdateProp):
    """Multi-precision ``sgd_update``: updates the float32 master ``weight32`` in place
    and outputs it in the weight's dtype."""
    states = ("weight32",)
    mp = True


class MPSGDMomUpdateProp(SGDMomUpdateProp):
    """Multi-precision ``sgd_mom_update``: float32 ``mom`` and master ``weight32``,
    both updated in place; outputs the master in the weight's dtype."""
    states = ("mom", "weight32")
    mp = True


class MPNAGMomUpdateProp(NAGMomUpdateProp):
    """Multi-precision ``nag_mom_update``: float32 ``mom`` and master ``weight32``,
    both updated in place; outputs the master in the weight's dtype."""
    states = ("mom", "weight32")
    mp = True


def register(registry):
    register_update(registry, "sgd_update", SGDUpdateProp)
    register_update(registry, "sgd_mom_update", SGDMomUpdateProp)
    register_update(registry, "nag_mom_update", NAGMomUpdateProp)
    register_update(registry, "mp_sgd_update", MPSGDUpdateProp)
    register_update(registry, "mp_sgd_mom_update", MPSGDMomUpdateProp)
    register_update(registry, "mp_nag_mom_update", MPNAGMomUpdateProp)
