"""The standard optimizers, an internal plugin: SGD, NAG, Adam, AdaGrad, RMSProp.

Each ``update`` fixes the scalars (learning rate, weight decay, step count) at call time
and runs one kernel written against the array module ``xp`` (numpy or CuPy) on raw
arrays: as one engine operation for NDArrays, at once for raw arrays. Formulas follow
MXNet 1.x's fused kernels (``sgd_mom_update``, ``nag_mom_update``, ``adam_update``,
``rmsprop_update``, ``rmspropalex_update``) and its Python AdaGrad; ``clip(x)`` below is
``clip(x, -clip_gradient, clip_gradient)`` and is skipped when ``clip_gradient`` is None
or negative.
"""
from __future__ import annotations

import math
from typing import Any

from ..hookspecs import hookimpl
from .optimizer import Optimizer, _zeros_like

__all__ = ["SGD", "NAG", "Adam", "AdaGrad", "RMSProp", "BUILTIN_OPTIMIZERS"]


def _scaled_grad(xp: Any, w: Any, g: Any, rescale_grad: float, clip_gradient: float | None,
                 wd: float = 0.0, wd_first: bool = False) -> Any:
    """A fresh array ``t = rescale_grad * g`` in the weight's dtype, with ``wd * w``
    added before clipping when ``wd_first`` (Adam, RMSProp), then clipped."""
    t = xp.multiply(g, rescale_grad, dtype=w.dtype)
    if wd_first and wd:
        t += wd * w
    if clip_gradient is not None and clip_gradient >= 0:
        xp.clip(t, -clip_gradient, clip_gradient, out=t)
    return t


def _sgd_kernel(xp: Any, w: Any, g: Any, s: list, *, lr: float, wd: float, rescale_grad: float,
                clip_gradient: float | None, momentum: float) -> None:
    # t = clip(rescale * g)
    t = _scaled_grad(xp, w, g, rescale_grad, clip_gradient)
    if s:
        # mom = momentum * mom - lr * wd * w - lr * t ; w += mom
        mom = s[0]
        t *= lr
        if wd:
            t += (lr * wd) * w
        mom *= momentum
        mom -= t
        w += mom
    else:
        # w = (1 - lr * wd) * w - lr * t
        if wd:
            w *= 1.0 - lr * wd
        t *= lr
        w -= t


def _nag_kernel(xp: Any, w: Any, g: Any, s: list, *, lr: float, wd: float, rescale_grad: float,
                clip_gradient: float | None, momentum: float) -> None:
    # t = clip(rescale * g) + wd * w
    t = _scaled_grad(xp, w, g, rescale_grad, clip_gradient)
    if wd:
        t += wd * w
    if s:
        # mom = momentum * mom + t ; w -= lr * (momentum * mom + t)
        mom = s[0]
        mom *= momentum
        mom += t
        t += momentum * mom
    t *= lr
    w -= t


def _adam_kernel(xp: Any, w: Any, g: Any, s: list, *, lr: float, wd: float, rescale_grad: float,
                 clip_gradient: float | None, beta1: float, beta2: float, epsilon: float) -> None:
    # t = clip(rescale * g + wd * w); m = b1 m + (1-b1) t; v = b2 v + (1-b2) t^2
    # w -= lr_t * m / (sqrt(v) + eps)   with lr_t = lr * sqrt(1 - b2^n) / (1 - b1^n)
    mean, var = s
    t = _scaled_grad(xp, w, g, rescale_grad, clip_gradient, wd, wd_first=True)
    mean *= beta1
    mean += (1.0 - beta1) * t
    t *= t
    var *= beta2
    var += (1.0 - beta2) * t
    xp.sqrt(var, out=t)
    t += epsilon
    xp.divide(mean, t, out=t)
    t *= lr
    w -= t


def _adagrad_kernel(xp: Any, w: Any, g: Any, s: list, *, lr: float, wd: float, rescale_grad: float,
                    clip_gradient: float | None, eps: float) -> None:
    # t = clip(rescale * g); h += t^2; w -= lr * (t / sqrt(h + eps) + wd * w)
    hist = s[0]
    t = _scaled_grad(xp, w, g, rescale_grad, clip_gradient)
    hist += t * t
    t /= xp.sqrt(hist + eps)
    if wd:
        t += wd * w
    t *= lr
    w -= t


def _rmsprop_kernel(xp: Any, w: Any, g: Any, s: list, *, lr: float, wd: float, rescale_grad: float,
                    clip_gradient: float | None, gamma1: float, gamma2: float, epsilon: float,
                    centered: bool, clip_weights: float | None) -> None:
    t = _scaled_grad(xp, w, g, rescale_grad, clip_gradient, wd, wd_first=True)
    if not centered:
        # n = (1-g1) t^2 + g1 n ; w -= lr * t / sqrt(n + eps)
        n = s[0]
        n *= gamma1
        n += (1.0 - gamma1) * (t * t)
        t /= xp.sqrt(n + epsilon)
        t *= lr
        w -= t
    else:
        # n = (1-g1) t^2 + g1 n ; gm = (1-g1) t + g1 gm
        # delta = g2 delta - lr * t / sqrt(n - gm^2 + eps) ; w += delta
        n, gm, delta = s
        n *= gamma1
        n += (1.0 - gamma1) * (t * t)
        gm *= gamma1
        gm += (1.0 - gamma1) * t
        t /= xp.sqrt(n - gm * gm + epsilon)
        t *= lr
        delta *= gamma2
        delta -= t
        w += delta
    if clip_weights is not None and clip_weights >= 0:
        xp.clip(w, -clip_weights, clip_weights, out=w)


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (MXNet ``sgd_update`` /
    ``sgd_mom_update``)::

        t = clip(rescale_grad * grad)
        momentum == 0:  weight = (1 - lr * wd) * weight - lr * t
        momentum > 0:   mom = momentum * mom - lr * wd * weight - lr * t ; weight += mom

    ``multi_precision=True`` keeps a float32 master copy of float16 weights.
    """

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: Any) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        self._launch(_sgd_kernel, weight, grad, [] if state is None else [state],
                     dict(p, momentum=self.momentum))


class NAG(Optimizer):
    """Nesterov accelerated gradient (MXNet ``nag_mom_update``)::

        t = clip(rescale_grad * grad) + wd * weight
        mom = momentum * mom + t ; weight -= lr * (momentum * mom + t)

    Without momentum it is plain SGD.
    """

    def __init__(self, momentum: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index: Any, weight: Any) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        self._launch(_nag_kernel, weight, grad, [] if state is None else [state],
                     dict(p, momentum=self.momentum))


class Adam(Optimizer):
    """Adam (Kingma & Ba), MXNet ``adam_update`` with bias correction folded into the
    rate::

        t = clip(rescale_grad * grad + wd * weight)
        mean = beta1 * mean + (1 - beta1) * t ; var = beta2 * var + (1 - beta2) * t^2
        weight -= lr * sqrt(1 - beta2^n) / (1 - beta1^n) * mean / (sqrt(var) + epsilon)

    where ``n`` counts this weight's updates.
    """

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        t = self._index_update_count[index]
        p["lr"] *= math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        self._launch(_adam_kernel, weight, grad, list(state),
                     dict(p, beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon))


class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al.)::

        t = clip(rescale_grad * grad) ; history += t^2
        weight -= lr * (t / sqrt(history + eps) + wd * weight)
    """

    def __init__(self, eps: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: Any) -> Any:
        return _zeros_like(weight)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        self._launch(_adagrad_kernel, weight, grad, [state], dict(p, eps=self.float_stable_eps))


class RMSProp(Optimizer):
    """RMSProp (Tieleman & Hinton), or the centered variant of Graves 2013 with
    ``centered=True`` (MXNet ``rmsprop_update`` / ``rmspropalex_update``)::

        t = clip(rescale_grad * grad + wd * weight)
        n = (1 - gamma1) * t^2 + gamma1 * n
        plain:     weight -= lr * t / sqrt(n + epsilon)
        centered:  g = (1 - gamma1) * t + gamma1 * g
                   delta = gamma2 * delta - lr * t / sqrt(n - g^2 + epsilon) ; weight += delta

    ``clip_weights`` clips the weight to ``[-clip_weights, clip_weights]`` afterwards.
    """

    def __init__(self, learning_rate: float = 0.001, gamma1: float = 0.9, gamma2: float = 0.9,
                 epsilon: float = 1e-8, centered: bool = False, clip_weights: float | None = None,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index: Any, weight: Any) -> Any:
        if self.centered:
            return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))
        return (_zeros_like(weight),)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        self._launch(_rmsprop_kernel, weight, grad, list(state),
                     dict(p, gamma1=self.gamma1, gamma2=self.gamma2, epsilon=self.epsilon,
                          centered=self.centered, clip_weights=self.clip_weights))


BUILTIN_OPTIMIZERS: dict[str, type] = {"sgd": SGD, "nag": NAG, "adam": Adam, "adagrad": AdaGrad,
                                       "rmsprop": RMSProp}


@hookimpl
def plexnet_register_optimizers(register: Any) -> None:
    for name, cls in BUILTIN_OPTIMIZERS.items():
        register(name, cls)
