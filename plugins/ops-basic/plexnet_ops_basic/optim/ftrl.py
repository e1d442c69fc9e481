"""Follow-the-regularized-leader family, MXNet 1.x semantics:

* ``ftrl_update(weight, grad, z, n)`` (McMahan et al., *Ad Click Prediction*)::

    t = clip(rescale_grad * grad)
    z += t - (sqrt(n + t^2) - sqrt(n)) * weight / lr ; n += t^2
    weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)

* ``ftml_update(weight, grad, d, v, z)`` (Zheng & Kwok, *Follow the Moving Leader*), ``t``
  the update count and ``clip_grad`` (MXNet's name) the gradient clip::

    g' = clip(rescale_grad * grad + wd * weight)
    v = beta2 * v + (1 - beta2) * g'^2
    d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon)
    z = beta1 * z + (1 - beta1) * g' - (d_t - beta1 * d) * weight ; d = d_t
    weight = -z / d_t

The states are updated in place.
"""
from __future__ import annotations

from plexnet.operator import Field, Params
from plexnet.optimizer import kernels

from ._common import UpdateProp, clip_field, lr_field, register_update, rescale_field, wd_field


class FtrlParam(Params):
    lr = lr_field()
    lamda1 = Field(float, default=0.01, doc="the L1 regularization coefficient")
    beta = Field(float, default=1.0, doc="per-coordinate learning rate beta")
    wd = wd_field()
    rescale_grad = rescale_field()
    clip_gradient = clip_field()


class FtmlParam(Params):
    lr = lr_field()
    beta1 = Field(float, default=0.6, doc="generally close to 0.5")
    beta2 = Field(float, default=0.999, doc="generally close to 1")
    epsilon = Field(float, default=1e-8, doc="avoids division by 0")
    t = Field(int, doc="number of the update (1 for the first)")
    wd = wd_field()
    rescale_grad = rescale_field()
    clip_grad = clip_field()


class FtrlUpdateProp(UpdateProp):
    """Update function for FTRL: ``t = clip(rescale_grad*grad)``;
    ``z += t - (sqrt(n + t^2) - sqrt(n)) * weight / lr``; ``n += t^2``;
    ``weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd) * (|z| > lamda1)``.
    ``z``, ``n`` are updated in place."""
    param_cls = FtrlParam
    states = ("z", "n")
    kernel = staticmethod(kernels.ftrl)


class FtmlUpdateProp(UpdateProp):
    """The FTML optimizer (Follow the Moving Leader): see the module docstring.
    ``d``, ``v``, ``z`` are updated in place."""
    param_cls = FtmlParam
    states = ("d", "v", "z")
    kernel = staticmethod(kernels.ftml)
    renamed = {"clip_grad": "clip_gradient"}


def register(registry):
    register_update(registry, "ftrl_update", FtrlUpdateProp)
    register_update(registry, "ftml_update", FtmlUpdateProp)
