"""The standard optimizers, an internal plugin: SGD, NAG, Adam, AdaGrad, RMSProp.

Each ``update`` fixes the scalars (learning rate, weight decay, step count) at call time
and runs one kernel of ``plexnet.optimizer.kernels`` (written against the array module
``xp``, numpy or CuPy, and shared with the ``sgd_update``/``adam_update``/... operators of
plexnet-ops-basic) on raw arrays: as one engine operation for NDArrays, at once for raw
arrays. Formulas follow MXNet 1.x's fused kernels (``sgd_mom_update``,
``nag_mom_update``, ``adam_update``, ``rmsprop_update``, ``rmspropalex_update``) and its
Python AdaGrad; ``clip(x)`` below is ``clip(x, -clip_gradient, clip_gradient)`` and is
skipped when ``clip_gradient`` is None or negative.
"""
from __future__ import annotations

import math
from typing import Any

from ..base import PlexnetError
from ..hookspecs import hookimpl
from . import kernels
from .optimizer import PURE_LAUNCH_UPDATES, Optimizer, _zeros_like

__all__ = ["SGD", "NAG", "Adam", "AdaGrad", "RMSProp", "BUILTIN_OPTIMIZERS"]


def _row_sparse(grad: Any) -> bool:
    return getattr(grad, "stype", "default") == "row_sparse"


def _lazy_rows(op: str, weight: Any, grad: Any, states: list[Any], params: dict[str, Any]) -> None:
    """MXNet's lazy update: a row_sparse gradient changes only the weight and state rows it
    lists (the ``op`` operator's sparse kernel, plexnet.ndarray.sparse.optim)."""
    from ..ndarray import op_function
    fn = op_function(op)
    if fn is None:
        raise PlexnetError(f"lazy update: operator {op!r} is not registered (install plexnet-ops-basic)")
    fn(weight, grad, *states, out=weight, lazy_update=True, **params)


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (MXNet ``sgd_update`` /
    ``sgd_mom_update``)::

        t = clip(rescale_grad * grad)
        momentum == 0:  weight = (1 - lr * wd) * weight - lr * t
        momentum > 0:   mom = momentum * mom - lr * wd * weight - lr * t ; weight += mom

    ``multi_precision=True`` keeps a float32 master copy of float16 weights.
    """

    _mp_state_first = True  # MXNet: (momentum, weight32)

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: Any) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        if self.lazy_update and _row_sparse(grad):
            if state is None:
                _lazy_rows("sgd_update", weight, grad, [], p)
            else:
                _lazy_rows("sgd_mom_update", weight, grad, [state], dict(p, momentum=self.momentum))
            return
        p["momentum"] = self.momentum  # _common's dict is this call's own
        p["multi"] = True  # MXNet 1.9.1's SGD runs multi_sgd(_mom)_update for dense weights
        self._launch(kernels.sgd, weight, grad, [] if state is None else [state], p)


class NAG(Optimizer):
    """Nesterov accelerated gradient (MXNet 1.9.1 ``nag_mom_update`` with ``out=weight``)::

        t = clip(rescale_grad * grad) + wd * weight ; m = momentum * mom
        weight = weight - m + (momentum + 1) * (m - lr * t)
        mom = m - lr * (clip(rescale_grad * grad) + wd * weight)     # the *new* weight

    (MXNet's kernel reads the weight again after overwriting it.) Without momentum it is
    plain SGD.
    """

    _mp_state_first = True  # MXNet: (momentum, weight32)

    def __init__(self, momentum: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index: Any, weight: Any) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        self._launch(kernels.nag, weight, grad, [] if state is None else [state],
                     dict(p, momentum=self.momentum))


SGD._mp_update_owner = SGD
NAG._mp_update_owner = NAG


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
        if self.lazy_update and _row_sparse(grad):
            _lazy_rows("adam_update", weight, grad, list(state),
                       dict(p, beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon))
            return
        self._launch(kernels.adam, weight, grad, list(state),
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
        self._launch(kernels.adagrad, weight, grad, [state], dict(p, eps=self.float_stable_eps))


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
        self._launch(kernels.rmsprop, weight, grad, list(state),
                     dict(p, gamma1=self.gamma1, gamma2=self.gamma2, epsilon=self.epsilon,
                          centered=self.centered, clip_weights=self.clip_weights))


BUILTIN_OPTIMIZERS: dict[str, type[Optimizer]] = {"sgd": SGD, "nag": NAG, "adam": Adam, "adagrad": AdaGrad,
                                                  "rmsprop": RMSProp}
# their ``update`` only runs a kernel through ``_launch``: an Updater may batch them
PURE_LAUNCH_UPDATES.update(cls.update for cls in BUILTIN_OPTIMIZERS.values())


@hookimpl
def plexnet_register_optimizers(register: Any) -> None:
    # the rest of MXNet's optimizers register from plexnet.optimizer.more, an internal
    # plugin of its own (it imports SGD from here)
    for name, cls in BUILTIN_OPTIMIZERS.items():
        register(name, cls)
