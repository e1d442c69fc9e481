"""The rest of MXNet 1.9.1's optimizers: Signum, FTML, Ftrl, LARS, LBSGD, LAMB, DCASGD,
SGLD, ccSGD, Adamax, Nadam, AdaDelta and ``Test``, updating step for step as MXNet's do
(``tests/optimizer/test_optimizers_mxnet.py`` replays MXNet's recorded trajectories).

The arithmetic runs as one engine operation per update through ``Optimizer._launch``
(``kernel(xp, weight, grad, states, **scalars)`` on raw arrays). Where MXNet tests a
clipping option by truthiness (``if self.clip_gradient:``) or by ``is not None``, this
module does the same, so edge values behave as in MXNet. Known MXNet bug not copied:
DCASGD with momentum fails there (``if mom:`` on an array); here it applies the momentum
as its documentation says.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from ..hookspecs import hookimpl
from . import kernels
from .builtin import SGD
from .optimizer import Optimizer, _zeros_like

__all__ = ["Signum", "FTML", "Ftrl", "LARS", "LBSGD", "LAMB", "DCASGD", "SGLD", "ccSGD", "Adamax", "Nadam",
           "AdaDelta", "Test", "MORE_OPTIMIZERS"]


def _clip_nn(xp: Any, t: Any, c: float | None) -> Any:
    """``clip(t, -c, c)`` when ``c is not None`` (MXNet's Python optimizers' test)."""
    if c is not None:
        xp.clip(t, -c, c, out=t)
    return t


def _truthy(c: float | None) -> float | None:
    """MXNet passes ``clip_gradient`` to its fused kernels only when truthy."""
    return c if c else None


class Signum(Optimizer):
    """signSGD with momentum (``signum_update``; ``signsgd_update`` without momentum)::

        mom = momentum * mom - (1 - momentum) * (clip(rescale * grad) + wd * weight)
        weight = (1 - lr * wd_lh) * weight + lr * sign(mom)
    """

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.9, wd_lh: float = 0.0,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index: Any, weight: Any) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        p["clip_gradient"] = _truthy(self.clip_gradient)
        if state is not None:
            self._launch(kernels.signum, weight, grad, [state], dict(p, momentum=self.momentum, wd_lh=self.wd_lh))
        else:
            self._launch(kernels.signsgd, weight, grad, [], p)


class FTML(Optimizer):
    """Follow the Moving Leader (``ftml_update``), states ``(d, v, z)``."""

    def __init__(self, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        p["clip_gradient"] = _truthy(self.clip_gradient)
        self._launch(kernels.ftml, weight, grad, list(state),
                     dict(p, beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
                          t=self._index_update_count[index]))


class Ftrl(Optimizer):
    """Follow the Regularized Leader (``ftrl_update``), states ``(z, n)``; learning rate
    0.1 by default."""

    def __init__(self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        p["clip_gradient"] = _truthy(self.clip_gradient)
        self._launch(kernels.ftrl, weight, grad, list(state), dict(p, lamda1=self.lamda1, beta=self.beta))


def _lars_sgd(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float, rescale_grad: float,
              clip_gradient: float | None, momentum: float, eta: float, eps: float, use_lars: bool) -> None:
    """``multi_sum_sq`` and ``multi_lars`` (the layer-wise rate, in float32), then the
    ``preloaded_multi_sgd(_mom)_update`` MXNet 1.9.1's LARS runs for dense weights."""
    if use_lars:
        lr = kernels.lars_rate(lr, wd, kernels.sum_sq(xp, w), kernels.sum_sq(xp, g), eta=eta, eps=eps,
                               rescale_grad=rescale_grad)
    kernels.sgd(xp, w, g, s, lr=lr, wd=wd, rescale_grad=rescale_grad, clip_gradient=clip_gradient,
                momentum=momentum, multi=True)


class LARS(Optimizer):
    """Layer-wise adaptive rate scaling (You et al.): SGD whose rate for each weight is
    ``lr * eta * |w| / (|rescale * g| + wd * |w| + eps)`` (not for ``*bias``, ``*gamma``,
    ``*beta``); with ``momentum_correction`` the momentum scales with the rate's change."""

    _mp_state_first = True  # MXNet: (momentum, weight32)

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, eta: float = 0.001, eps: float = 0,
                 momentum_correction: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr: float | None = None
        self.cur_lr: float | None = None

    def _get_lrs(self, indices: Sequence[Any]) -> list[float]:
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return super()._get_lrs(indices)

    def create_state(self, index: Any, weight: Any) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        p["clip_gradient"] = _truthy(self.clip_gradient)
        momentum = self.momentum
        if momentum > 0 and self.momentum_correction and self.last_lr:
            momentum = self.momentum * (self.cur_lr / self.last_lr)
        name = self.idx2name.get(index, str(index))
        use_lars = not name.endswith(("gamma", "beta", "bias"))
        self._launch(_lars_sgd, weight, grad, [] if state is None else [state],
                     dict(p, momentum=momentum if state is not None else 0.0, eta=self.eta, eps=self.eps,
                          use_lars=use_lars))


LARS._mp_update_owner = LARS


class LBSGD(Optimizer):
    """Large-batch SGD: gradients are accumulated over ``batch_scale`` updates and
    applied with a warm-up multiplier of the rate (``linear``, ``power2``, ``sqrt``) or a
    LARS-style one (``lars``)."""

    def __init__(self, momentum: float = 0.0, multi_precision: bool = False, warmup_strategy: str = "linear",
                 warmup_epochs: int = 5, batch_scale: int = 1, updates_per_epoch: int = 32, begin_epoch: int = 0,
                 num_epochs: int = 60, **kwargs: Any) -> None:
        super().__init__(multi_precision=multi_precision, **kwargs)
        self.momentum = momentum
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads: dict[Any, dict[str, Any]] = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index: Any, weight: Any) -> Any:
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def _get_lbmult(self, nup: int) -> float:
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        if self.warmup_strategy == "linear":
            return 1.0 + (maxmult - 1) * nup / nwup
        if self.warmup_strategy == "power2":
            return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        if self.warmup_strategy == "sqrt":
            return 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        return 1.0

    @staticmethod
    def _l2norm(v: Any) -> float:
        """Sum of squares (MXNet's name for it)."""
        a = v.asnumpy()
        return float((a * a).sum())

    def _get_lars(self, weight: Any, g: Any, wd: float) -> float:
        w2, g2 = self._l2norm(weight), self._l2norm(g)
        return min(max(math.sqrt(w2 / (g2 + wd * w2 + 1e-18)), 0.01), 100.0)

    def _cumulate_gradient(self, grad: Any, index: Any) -> dict[str, Any]:
        c = self.cumgrads.get(index)
        if c and c["num_cums"] > 0:
            c = {"cum_grad": c["cum_grad"] + grad, "num_cums": c["num_cums"] + 1}
        else:
            c = {"cum_grad": grad, "num_cums": self.init_updates + 1}
        self.cumgrads[index] = c
        return c

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        lr, wd = self._get_lr(index), self._get_wd(index)
        self._update_count(index)
        c = self._cumulate_gradient(grad, index)
        if c["num_cums"] % self.batch_scale != 0:
            return  # MXNet runs sgd_update with lr=0: the weight is unchanged
        grad = c["cum_grad"] / self.batch_scale
        mult = self._get_lars(weight, grad, wd) if self.warmup_strategy == "lars" else self._get_lbmult(c["num_cums"])
        p = {"lr": lr * mult, "wd": wd, "rescale_grad": self.rescale_grad,
             "clip_gradient": _truthy(self.clip_gradient)}
        self._launch(kernels.sgd, weight, grad, [] if state is None else [state],
                     dict(p, momentum=self.momentum if state is not None else 0.0))
        c["cum_grad"] = 0


def _lamb(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float, rescale_grad: float,
          clip_gradient: float | None, beta1: float, beta2: float, epsilon: float, t: int, bias_correction: bool,
          lower_bound: float | None, upper_bound: float | None) -> None:
    """``lamb_update_phase1``, the norms ``r1 = |w|``, ``r2 = |g'|``, then
    ``lamb_update_phase2`` (MXNet passes the bounds only when truthy)."""
    mean, var = s
    upd = kernels.lamb_phase1(xp, w, g, mean, var, wd=wd, rescale_grad=rescale_grad, clip_gradient=clip_gradient,
                              beta1=beta1, beta2=beta2, epsilon=epsilon, t=t, bias_correction=bias_correction)
    r1, r2 = kernels.l2_norm(xp, w), kernels.l2_norm(xp, upd)
    w[...] = kernels.lamb_phase2(xp, w, upd, r1, r2, lr=lr, lower_bound=lower_bound or None,
                                 upper_bound=upper_bound or None)


class LAMB(Optimizer):
    """Layer-wise adaptive moments (You et al. 2019): an Adam step scaled per layer by
    ``|w| / |step|`` (``|w|`` bounded by ``lower_bound``/``upper_bound``)."""

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None, upper_bound: float | None = None,
                 bias_correction: bool = True, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self.bias_correction = bias_correction

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        p["clip_gradient"] = _truthy(self.clip_gradient)
        self._launch(_lamb, weight, grad, list(state),
                     dict(p, beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
                          t=self._index_update_count[index], bias_correction=self.bias_correction,
                          lower_bound=self.lower_bound, upper_bound=self.upper_bound))


def _dcasgd(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float, rescale_grad: float,
            clip_gradient: float | None, momentum: float, lamda: float) -> None:
    t = _clip_nn(xp, xp.multiply(g, rescale_grad, dtype=w.dtype), clip_gradient)
    prev = s[-1]
    upd = -lr * (t + wd * w + lamda * t * t * (w - prev))
    if len(s) == 2:
        mom = s[0]
        mom *= momentum
        mom += upd
        upd = mom
    prev[...] = w
    w += upd


LAMB._mp_update_owner = LAMB


class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al.)::

        step = -lr * (g + wd * w + lamda * g^2 * (w - w_previous)) ; w_previous = w
        mom = momentum * mom + step (with momentum) ; w += mom (or step)
    """

    def __init__(self, momentum: float = 0.0, lamda: float = 0.04, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous: dict = {}
        self.lamda = lamda

    def create_state(self, index: Any, weight: Any) -> Any:
        prev = weight.copy()
        return (None, prev) if self.momentum == 0.0 else (_zeros_like(weight), prev)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        mom, prev = state
        self._launch(_dcasgd, weight, grad, [prev] if mom is None else [mom, prev],
                     dict(p, momentum=self.momentum, lamda=self.lamda))


def _sgld_step(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float, rescale_grad: float,
               clip_gradient: float | None) -> None:
    t = _clip_nn(xp, xp.multiply(g, rescale_grad, dtype=w.dtype), clip_gradient)
    w -= (lr / 2) * (t + wd * w)


class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics:
    ``w += -lr/2 * (g + wd * w) + N(0, sqrt(lr))`` (noise from plexnet's generator)."""

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        self._launch(_sgld_step, weight, grad, [], p)
        from ..ndarray import random as nd_random
        if hasattr(weight, "context"):
            weight += nd_random.normal(0, math.sqrt(p["lr"]), shape=weight.shape, dtype=weight.dtype,
                                       ctx=weight.context)
        else:
            import numpy as np
            weight += np.random.normal(0, math.sqrt(p["lr"]), size=weight.shape).astype(weight.dtype)


class ccSGD(SGD):  # noqa: N801 - MXNet's name
    """Deprecated alias of ``SGD`` (MXNet keeps it registered as ``ccsgd``)."""


def _adamax(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float, rescale_grad: float,
            clip_gradient: float | None, beta1: float, beta2: float) -> None:
    m, u = s
    t = xp.multiply(g, rescale_grad, dtype=w.dtype)
    if wd:
        t += wd * w
    _clip_nn(xp, t, clip_gradient)
    m *= beta1
    m += (1.0 - beta1) * t
    xp.maximum(beta2 * u, xp.abs(t), out=u)
    w -= lr * m / u


class Adamax(Optimizer):
    """AdaMax (Kingma & Ba, the infinity-norm Adam)::

        m = beta1 * m + (1 - beta1) * g ; u = max(beta2 * u, |g|)
        w -= lr / (1 - beta1^t) * m / u
    """

    def __init__(self, learning_rate: float = 0.002, beta1: float = 0.9, beta2: float = 0.999,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2 = beta1, beta2

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        p["lr"] /= 1.0 - self.beta1 ** self._index_update_count[index]
        self._launch(_adamax, weight, grad, list(state), dict(p, beta1=self.beta1, beta2=self.beta2))


def _nadam(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float, rescale_grad: float,
           clip_gradient: float | None, beta1: float, beta2: float, epsilon: float, t: int, momentum_t: float,
           momentum_t_1: float, m_schedule: float, m_schedule_next: float) -> None:
    m, v = s
    gr = xp.multiply(g, rescale_grad, dtype=w.dtype)
    if wd:
        gr += wd * w
    _clip_nn(xp, gr, clip_gradient)
    m *= beta1
    m += (1.0 - beta1) * gr
    v *= beta2
    v += (1.0 - beta2) * gr * gr
    m_bar = (1.0 - momentum_t) * (gr / (1.0 - m_schedule)) + momentum_t_1 * (m / (1.0 - m_schedule_next))
    v_prime = v / (1.0 - beta2 ** t)
    w -= lr * m_bar / (xp.sqrt(v_prime) + epsilon)


class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat), with the momentum schedule
    ``beta1 * (1 - 0.5 * 0.96^(t * schedule_decay))``."""

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, schedule_decay: float = 0.004, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        t = self._index_update_count[index]
        momentum_t = self.beta1 * (1.0 - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1.0 - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * momentum_t
        self._launch(_nadam, weight, grad, list(state),
                     dict(p, beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon, t=t, momentum_t=momentum_t,
                          momentum_t_1=momentum_t_1, m_schedule=self.m_schedule,
                          m_schedule_next=self.m_schedule * momentum_t_1))


def _adadelta(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float, rescale_grad: float,
              clip_gradient: float | None, rho: float, epsilon: float) -> None:
    acc_g, acc_delta = s
    t = _clip_nn(xp, xp.multiply(g, rescale_grad, dtype=w.dtype), clip_gradient)
    acc_g *= rho
    acc_g += (1.0 - rho) * t * t
    delta = xp.sqrt(acc_delta + epsilon) / xp.sqrt(acc_g + epsilon) * t
    acc_delta *= rho
    acc_delta += (1.0 - rho) * delta * delta
    w -= delta + wd * w


class AdaDelta(Optimizer):
    """AdaDelta (Zeiler): no learning rate; ``w -= delta + wd * w`` with
    ``delta = sqrt(acc_delta + eps) / sqrt(acc_g + eps) * g``."""

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rho, self.epsilon = rho, epsilon

    def create_state(self, index: Any, weight: Any) -> Any:
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        p = self._common(index)
        self._launch(_adadelta, weight, grad, list(state), dict(p, rho=self.rho, epsilon=self.epsilon))


def _test_step(xp: Any, w: Any, g: Any, s: Sequence[Any], *, rescale_grad: float) -> None:
    w += g * rescale_grad
    s[0][...] = w


class Test(Optimizer):
    """MXNet's test optimizer: ``w += rescale_grad * g``; the state is a copy of ``w``."""

    def create_state(self, index: Any, weight: Any) -> Any:
        return _zeros_like(weight)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._launch(_test_step, weight, grad, [state], {"rescale_grad": self.rescale_grad})


MORE_OPTIMIZERS: dict[str, type] = {
    "signum": Signum, "ftml": FTML, "ftrl": Ftrl, "lars": LARS, "lbsgd": LBSGD, "lamb": LAMB, "dcasgd": DCASGD,
    "sgld": SGLD, "ccsgd": ccSGD, "adamax": Adamax, "nadam": Nadam, "adadelta": AdaDelta, "test": Test,
}


@hookimpl
def plexnet_register_optimizers(register: Any) -> None:
    """An internal plugin (``plexnet.plugins.INTERNAL_PLUGINS``) beside ``builtin``."""
    for name, cls in MORE_OPTIMIZERS.items():
        register(name, cls)
