"""Optimizer update kernels, written once against an array module ``xp`` (numpy or CuPy).

These are the arithmetic of MXNet 1.x's fused optimizer operators
(``src/operator/optimizer_op-inl.h``). They are shared by the ``Optimizer`` classes of
``plexnet.optimizer`` and by the update operators of plexnet-ops-basic (``sgd_update``,
``adam_update``, ...), so the math exists once.

Every kernel has the signature ::

    kernel(xp, weight, grad, states, *, lr, wd, rescale_grad, clip_gradient, **hyper)

and updates ``weight`` and the arrays in ``states`` (a list, in the operator's input
order) **in place**; ``grad`` is only read. Scalars are plain Python numbers.
Arithmetic runs in the weight's dtype (the gradient is cast to it), as MXNet's kernels do.
``clip(x)`` below is ``clip(x, -clip_gradient, clip_gradient)``; it applies when
``clip_gradient`` is not None and ``>= 0`` (MXNet's test: a negative value, the operators'
default ``-1``, turns clipping off, ``0`` clips everything to 0).

=================  ===========  ==============================================================
kernel             states       update
=================  ===========  ==============================================================
``sgd``            ``[]``       ``w = (1 - lr*wd) * w - lr * clip(rescale*g)``
``sgd``            ``[mom]``    ``mom = momentum*mom - lr*wd*w - lr*clip(rescale*g); w += mom``
``nag``            ``[mom]``    ``t = clip(rescale*g) + wd*w; m' = momentum*mom;``
                                ``w += momentum*m' - (1+momentum)*lr*t; mom = m' - lr*t'``
                                (MXNet 1.9.1; ``t'``: ``t`` with the new ``w``, see ``nag``;
                                no state: ``w -= lr*t``)
``adam``           mean, var    ``t = clip(rescale*g + wd*w); mean = b1*mean + (1-b1)*t;``
                                ``var = b2*var + (1-b2)*t^2; w -= lr * mean / (sqrt(var) + eps)``
``adagrad``        history      ``t = clip(rescale*g); h += t^2; w -= lr * (t/sqrt(h + eps) + wd*w)``
``rmsprop``        n            ``t = clip(rescale*g + wd*w); n = (1-g1)*t^2 + g1*n;``
                                ``w -= lr * t / sqrt(n + eps)``
``rmsprop``        n, g, delta  (``centered``) ``g = (1-g1)*t + g1*g;``
  (centered)                    ``delta = g2*delta - lr * t / sqrt(n - g^2 + eps); w += delta``
``signsgd``        ``[]``       ``w = (1 - lr*wd) * w - lr * sign(g)`` (rescale and clip unused)
``signum``         mom          ``mom = momentum*mom - (1-momentum) * (wd*w + clip(rescale*g));``
                                ``w = (1 - lr*wd_lh) * w + lr * sign(mom)``
``ftrl``           z, n         ``t = clip(rescale*g); z += t - (sqrt(n + t^2) - sqrt(n)) * w / lr;``
                                ``n += t^2; w = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd)``
                                ``* (|z| > lamda1)``
``ftml``           d, v, z      ``t' = clip(rescale*g + wd*w); v = b2*v + (1-b2)*t'^2;``
                                ``d_t = (1 - b1^t) / lr * (sqrt(v / (1 - b2^t)) + eps);``
                                ``z = b1*z + (1-b1)*t' - (d_t - b1*d)*w; d = d_t; w = -z / d_t``
=================  ===========  ==============================================================

``rmsprop`` clips the new weight to ``[-clip_weights, clip_weights]`` when
``clip_weights`` is not None and ``>= 0``. ``adam`` takes the learning rate as given; the
``Adam`` optimizer folds the bias correction ``sqrt(1 - b2^n) / (1 - b1^n)`` into it, as
MXNet's Python optimizer does.

``multi_precision(kernel, xp, weight, grad, states, weight32, **params)`` is the
``mp_*`` form: the kernel runs on the float32 master copy ``weight32`` (and float32
states) with the gradient cast to float32, then ``weight`` receives the master rounded to
its own dtype.

``KERNELS`` maps the names above to the functions.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

__all__ = ["clip_on", "rescaled_grad", "sgd", "nag", "adam", "adagrad", "rmsprop", "signsgd",
           "signum", "ftrl", "ftml", "multi_precision", "KERNELS"]


def clip_on(c: float | None) -> bool:
    """Whether a ``clip_gradient`` / ``clip_weights`` value turns clipping on (MXNet: ``>= 0``)."""
    return c is not None and c >= 0


def rescaled_grad(xp: Any, w: Any, g: Any, rescale_grad: float, clip_gradient: float | None,
                  wd: float = 0.0, wd_first: bool = False) -> Any:
    """A fresh array ``t = rescale_grad * g`` in the weight's dtype, with ``wd * w``
    added before clipping when ``wd_first`` (Adam, RMSProp, FTML), then clipped."""
    t = xp.multiply(g, rescale_grad, dtype=w.dtype)
    if wd_first and wd:
        t += wd * w
    if clip_on(clip_gradient):
        xp.clip(t, -clip_gradient, clip_gradient, out=t)  # type: ignore[operator]  # clip_on: not None
    return t


def sgd(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
        clip_gradient: float | None = None, momentum: float = 0.0) -> None:
    """``sgd_update`` (``s == []``) / ``sgd_mom_update`` (``s == [mom]``)."""
    t = rescaled_grad(xp, w, g, rescale_grad, clip_gradient)
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


def nag(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
        clip_gradient: float | None = None, momentum: float = 0.0, mom_uses_new_weight: bool = True) -> None:
    """``nag_mom_update`` (``s == [mom]``) as MXNet 1.9.1 computes it; without a state,
    plain SGD (``w -= lr * (clip(rescale*g) + wd*w)``).

    MXNet 1.9.1's kernel writes the new weight *before* it reads the weight again for the
    momentum's weight-decay term; with ``out=weight`` (how its optimizers call it, and
    always in ``mp_nag_mom_update``) that term sees the new weight. ``mom_uses_new_weight``
    selects that (default) or the old weight (an output separate from the weight)."""
    c = rescaled_grad(xp, w, g, rescale_grad, clip_gradient)
    if not s:
        if wd:
            c += wd * w
        c *= lr
        w -= c
        return
    # m' = momentum * mom ; t = clip(rescale*g) + wd*w
    # w = w - m' + (momentum + 1) * (m' - lr * t) ; mom = m' - lr * (clip(rescale*g) + wd*w_read)
    mom = s[0]
    mom *= momentum
    step = c + wd * w if wd else c.copy()
    step *= lr
    upd = mom - step
    upd *= momentum + 1.0
    upd -= mom
    w += upd
    if wd and mom_uses_new_weight:
        c += wd * w
        c *= lr
        mom -= c
    else:
        mom -= step


def adam(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
         clip_gradient: float | None = None, beta1: float = 0.9, beta2: float = 0.999,
         epsilon: float = 1e-8) -> None:
    """``adam_update``, ``s == [mean, var]``."""
    mean, var = s
    t = rescaled_grad(xp, w, g, rescale_grad, clip_gradient, wd, wd_first=True)
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


def adagrad(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
            clip_gradient: float | None = None, eps: float = 1e-7) -> None:
    """MXNet's Python ``AdaGrad`` (dense), ``s == [history]``."""
    hist = s[0]
    t = rescaled_grad(xp, w, g, rescale_grad, clip_gradient)
    hist += t * t
    t /= xp.sqrt(hist + eps)
    if wd:
        t += wd * w
    t *= lr
    w -= t


def rmsprop(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
            clip_gradient: float | None = None, gamma1: float = 0.95, gamma2: float = 0.9,
            epsilon: float = 1e-8, centered: bool = False, clip_weights: float | None = None) -> None:
    """``rmsprop_update`` (``s == [n]``) or, with ``centered``, ``rmspropalex_update``
    (``s == [n, g, delta]``). As in MXNet 1.9.1, ``clip_weights`` clips the new weight
    and leaves ``delta`` as computed."""
    t = rescaled_grad(xp, w, g, rescale_grad, clip_gradient, wd, wd_first=True)
    if not centered:
        n = s[0]
        n *= gamma1
        n += (1.0 - gamma1) * (t * t)
        t /= xp.sqrt(n + epsilon)
        t *= lr
        w -= t
    else:
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
    if clip_on(clip_weights):
        xp.clip(w, -clip_weights, clip_weights, out=w)  # type: ignore[operator]  # clip_on: not None


def signsgd(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
            clip_gradient: float | None = None) -> None:
    """``signsgd_update``: ``w = (1 - lr*wd) * w - lr * sign(g)``. MXNet's kernel ignores
    ``rescale_grad`` and ``clip_gradient`` (the parameters exist for a uniform signature)."""
    t = xp.sign(g).astype(w.dtype, copy=False)
    if wd:
        w *= 1.0 - lr * wd
    t *= lr
    w -= t


def signum(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
           clip_gradient: float | None = None, momentum: float = 0.0, wd_lh: float = 0.0) -> None:
    """``signum_update``, ``s == [mom]``. ``mom`` holds the *negative* running average
    (MXNet's convention), hence ``+ lr * sign(mom)``."""
    mom = s[0]
    t = rescaled_grad(xp, w, g, rescale_grad, clip_gradient)
    if wd:
        t += wd * w
    t *= 1.0 - momentum
    mom *= momentum
    mom -= t
    if wd_lh:
        w *= 1.0 - lr * wd_lh
    xp.sign(mom, out=t)
    t *= lr
    w += t


def ftrl(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
         clip_gradient: float | None = None, lamda1: float = 0.01, beta: float = 1.0) -> None:
    """``ftrl_update``, ``s == [z, n]`` (MXNet's input order)."""
    z, n = s
    t = rescaled_grad(xp, w, g, rescale_grad, clip_gradient)
    sq_old = xp.sqrt(n)
    n += t * t
    sq_new = xp.sqrt(n)
    # z += t - (sqrt(n + t^2) - sqrt(n)) * w / lr
    sq_old -= sq_new            # -(sqrt(n_new) - sqrt(n_old))
    sq_old *= w
    sq_old /= lr
    t += sq_old
    z += t
    # w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)
    sq_new += beta
    sq_new /= lr
    sq_new += wd
    num = xp.sign(z) * lamda1
    num -= z
    num /= sq_new
    num *= xp.abs(z) > lamda1
    w[...] = num


def ftml(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
         clip_gradient: float | None = None, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8,
         t: int = 1) -> None:
    """``ftml_update``, ``s == [d, v, z]``; ``t`` is the (1-based) update count."""
    d, v, z = s
    gi = rescaled_grad(xp, w, g, rescale_grad, clip_gradient, wd, wd_first=True)
    v *= beta2
    v += (1.0 - beta2) * (gi * gi)
    d_t = xp.sqrt(v / (1.0 - beta2 ** t))
    d_t += epsilon
    d_t *= (1.0 - beta1 ** t) / lr
    gi *= 1.0 - beta1
    d *= beta1
    d -= d_t                     # -(d_t - beta1 * d)
    d *= w
    gi += d
    z *= beta1
    z += gi
    d[...] = d_t
    xp.divide(z, d_t, out=w)
    xp.negative(w, out=w)


def multi_precision(kernel: Callable[..., None], xp: Any, weight: Any, grad: Any, states: Sequence[Any],
                    weight32: Any, **params: Any) -> None:
    """The ``mp_*`` update: ``kernel`` on the float32 master ``weight32`` (states in
    float32, the gradient cast to float32), then ``weight = weight32`` in weight's dtype.
    ``weight`` may be ``weight32`` itself (a float32 model)."""
    kernel(xp, weight32, grad, states, **params)
    if weight is not weight32:
        xp.copyto(weight, weight32, casting="same_kind")


KERNELS: dict[str, Callable[..., None]] = {
    "sgd": sgd, "nag": nag, "adam": adam, "adagrad": adagrad, "rmsprop": rmsprop, "signsgd": signsgd,
    "signum": signum, "ftrl": ftrl, "ftml": ftml,
}
