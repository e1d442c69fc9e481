"""Optimizer update kernels, written once against an array module ``xp`` (numpy or CuPy).

These are the arithmetic of MXNet 1.x's fused optimizer operators
(``src/operator/optimizer_op-inl.h``). They are shared by the ``Optimizer`` classes of
``plexnet.optimizer`` and by the update operators of plexnet-ops-basic (``sgd_update``,
``adam_update``, ...), so the math exists once.

Every kernel has the signature ::

    kernel(xp, weight, grad, states, *, lr, wd, rescale_grad, clip_gradient, **hyper)

and updates ``weight`` and the arrays in ``states`` (a list, in the operator's input
order) **in place**; ``grad`` is only read. Scalars are plain Python numbers.
Arithmetic runs in the weight's dtype (the gradient is cast to it), as MXNet's kernels do,
and the fused kernels' (``sgd``, ``nag``, ``adam``, ``rmsprop``, ``ftml``, the LAMB phases)
round as MXNet 1.9.1's C++ does, bit for bit in float32: every hyper-parameter is the
``float`` MXNet's parameter parser makes of it (``mx_param``; ``1 - beta1`` is computed in
that dtype, not in Python double) and each expression keeps MXNet's association
(``tests/optimizer/test_optimizer_bits_mxnet.py`` pins them against recorded MXNet
results). float64 weights keep their hyper-parameters in double.
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
                                no state: ``sgd``)
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

import math
from typing import Any, Callable, Sequence

import numpy as np  # scalar arithmetic of the constants only

from ..operator.params import dmlc_float

__all__ = ["clip_on", "mx_param", "rescaled_grad", "sgd", "nag", "adam", "adagrad", "rmsprop", "signsgd",
           "signum", "ftrl", "ftml", "lamb_phase1", "l2_norm", "lamb_phase2", "sum_sq", "lars_rate",
           "multi_precision", "KERNELS"]


def clip_on(c: float | None) -> bool:
    """Whether a ``clip_gradient`` / ``clip_weights`` value turns clipping on (MXNet: ``>= 0``)."""
    return c is not None and c >= 0


def mx_param(x: float, dtype: Any = np.float32, double: bool = False) -> Any:
    """The hyper-parameter ``x`` as MXNet's kernels use it: parsed as MXNet parses its
    ``float`` parameter fields (``double=True``: a ``double`` field), then
    ``static_cast<DType>`` to the weight's dtype ``dtype``; a numpy scalar of ``dtype``.

    float64 weights are the exception: they get ``x`` itself (MXNet would round it to
    float first; plexnet keeps float64 updates at full precision)."""
    f = np.dtype(dtype).type
    if np.dtype(dtype).itemsize >= 8:
        return f(x)
    return f(dmlc_float(float(x), double))


def _consts(w: Any, *xs: float) -> list[Any]:
    """``mx_param`` of each of ``xs`` in the dtype of ``w``."""
    return [mx_param(x, w.dtype) for x in xs]


def rescaled_grad(xp: Any, w: Any, g: Any, rescale_grad: float, clip_gradient: float | None,
                  wd: float = 0.0, wd_first: bool = False, parsed: bool = False) -> Any:
    """A fresh array ``t = g * rescale_grad`` in the weight's dtype, with ``w * wd``
    added before clipping when ``wd_first``, then clipped. The constants are the Python
    floats rounded to the weight's dtype (MXNet's NDArray scalar operators), or with
    ``parsed`` ``mx_param`` of them (MXNet's fused kernels)."""
    conv = (lambda x: mx_param(x, w.dtype)) if parsed else (lambda x: x)
    t = xp.multiply(g, conv(rescale_grad), dtype=w.dtype)
    if wd_first and wd:
        t += w * conv(wd)
    if clip_on(clip_gradient):
        c = conv(clip_gradient)
        xp.clip(t, -c, c, out=t)  # type: ignore[operator]  # clip_on: not None
    return t


def _kernel_grad(xp: Any, w: Any, g: Any, rescale_grad: float, clip_gradient: float | None,
                 wd: float = 0.0, wd_first: bool = False) -> Any:
    """``rescaled_grad`` as MXNet's fused kernels compute it (``w``'s dtype; for the LAMB
    phase 1 the states')."""
    return rescaled_grad(xp, w, g, rescale_grad, clip_gradient, wd, wd_first, parsed=True)


def _lr_grad(xp: Any, w: Any, g: Any, lr: Any, rs: Any, clip_gradient: float | None) -> Any:
    """A fresh array: ``lr * clip(rescale*g)``, or ``(lr * rescale) * g`` without clipping
    (MXNet's SGD kernels associate so)."""
    if clip_on(clip_gradient):
        c, = _consts(w, clip_gradient)   # type: ignore[arg-type]  # clip_on: not None
        t = xp.multiply(g, rs, dtype=w.dtype)
        xp.clip(t, -c, c, out=t)
        t *= lr
        return t
    return xp.multiply(g, lr * rs, dtype=w.dtype)


def sgd(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
        clip_gradient: float | None = None, momentum: float = 0.0, multi: bool = False) -> None:
    """``sgd_update`` (``s == []``) / ``sgd_mom_update`` (``s == [mom]``), in MXNet's
    association (``SGDKernel`` / ``SGDMomKernel``, every constant in the weight's dtype)::

        mom = ((momentum*mom) - (lr*wd)*w) - step ; w = w + mom
        no state: w = (1 - lr*wd)*w - step
        step = lr*clip(rescale*g), or (lr*rescale)*g without clipping

    ``multi=True``: ``multi_sgd_update``'s ``MultiSGDKernel`` (what MXNet 1.9.1's ``SGD``
    and ``LARS`` optimizers run for dense weights), which without a state computes
    ``w + ((0 - (lr*wd)*w) - step)``, i.e. ``w - ((lr*wd)*w + step)``, and takes ``lr``
    and ``wd`` from its ``lrs``/``wds`` tuples (or arrays), which round correctly (not
    ``mx_param``)."""
    rs, = _consts(w, rescale_grad)
    lr_, wd_ = (w.dtype.type(lr), w.dtype.type(wd)) if multi else _consts(w, lr, wd)
    t = _lr_grad(xp, w, g, lr_, rs, clip_gradient)
    if s:
        mom = s[0]
        mom *= _consts(w, momentum)[0]
        if wd:
            mom -= w * (lr_ * wd_)
        mom -= t
        w += mom
    elif multi:
        if wd:
            t += w * (lr_ * wd_)
        w -= t
    else:
        if wd:
            w *= w.dtype.type(1) - lr_ * wd_
        w -= t


def nag(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
        clip_gradient: float | None = None, momentum: float = 0.0, mom_uses_new_weight: bool = True) -> None:
    """``nag_mom_update`` (``s == [mom]``) as MXNet 1.9.1's ``NAGMomKernel`` computes it
    (``c = clip(rescale*g)``, constants in the weight's dtype)::

        m' = momentum*mom
        w = (w - m') + (momentum + 1) * (m' - lr*(c + wd*w))
        mom = m' - lr*(c + wd*w_read)

    The kernel writes the new weight *before* it reads the weight again for the
    momentum's weight-decay term; with ``out=weight`` (how its optimizers call it, and
    always in ``mp_nag_mom_update``) ``w_read`` is the new weight.
    ``mom_uses_new_weight`` selects that (default) or the old weight (an output separate
    from the weight). Without a state it is ``sgd_update`` (MXNet's NAG optimizer runs
    that without momentum)."""
    if not s:
        sgd(xp, w, g, s, lr=lr, wd=wd, rescale_grad=rescale_grad, clip_gradient=clip_gradient)
        return
    lr_, wd_, mo, rs = _consts(w, lr, wd, momentum, rescale_grad)
    c = xp.multiply(g, rs, dtype=w.dtype)
    if clip_on(clip_gradient):
        cg, = _consts(w, clip_gradient)   # type: ignore[arg-type]  # clip_on: not None
        xp.clip(c, -cg, cg, out=c)
    mom = s[0]
    mom *= mo
    step = w * wd_ if wd else xp.zeros_like(c)
    step += c
    step *= lr_                          # lr*(c + wd*w)
    upd = mom - step
    upd *= mo + w.dtype.type(1)          # (momentum+1)*(m' - step)
    w -= mom
    w += upd
    if wd and mom_uses_new_weight:
        xp.multiply(w, wd_, out=step)
        step += c
        step *= lr_
    mom -= step


def _moments(xp: Any, t: Any, mean: Any, var: Any, b1: Any, b2: Any) -> Any:
    """Adam's, LAMB's and centered RMSProp's moments in MXNet's order, in place:
    ``mean = b1*mean + (1 - b1)*t``, ``var = b2*var + ((1 - b2)*t)*t``; returns a scratch
    array shaped like ``t``."""
    one = mean.dtype.type(1)
    u = xp.multiply(t, one - b1)
    mean *= b1
    mean += u
    xp.multiply(t, one - b2, out=u)
    u *= t
    var *= b2
    var += u
    return u


def _square_mean(xp: Any, t: Any, acc: Any, b: Any) -> Any:
    """RMSProp's and FTML's ``acc = (1 - b)*(t*t) + b*acc`` in MXNet's order, in place;
    returns a scratch array shaped like ``t`` (``_moments`` has Adam's ``((1 - b)*t)*t``)."""
    u = xp.multiply(t, t)
    u *= acc.dtype.type(1) - b
    acc *= b
    acc += u
    return u


def adam(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
         clip_gradient: float | None = None, beta1: float = 0.9, beta2: float = 0.999,
         epsilon: float = 1e-8) -> None:
    """``adam_update``, ``s == [mean, var]``, as MXNet's ``AdamUpdateKernel`` (constants in
    the weight's dtype, ``t = clip(g*rescale + w*wd)``)::

        mean = beta1*mean + (1 - beta1)*t ; var = beta2*var + ((1 - beta2)*t)*t
        w = w - (lr*mean) / (sqrt(var) + epsilon)
    """
    mean, var = s
    lr_, b1, b2, eps = _consts(w, lr, beta1, beta2, epsilon)
    t = _kernel_grad(xp, w, g, rescale_grad, clip_gradient, wd, wd_first=True)
    u = _moments(xp, t, mean, var, b1, b2)
    xp.sqrt(var, out=u)
    u += eps
    xp.multiply(mean, lr_, out=t)
    t /= u
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
    (``s == [n, g, delta]``), as MXNet 1.9.1's ``RMSPropUpdateKernel`` /
    ``RMSPropAlexUpdateKernel`` (constants in the weight's dtype,
    ``t = clip(rescale*g + wd*w)``)::

        plain:    n = (1 - g1)*(t*t) + g1*n ; w = w - lr*(t / sqrt(n + eps))
        centered: n = ((1 - g1)*t)*t + g1*n ; g = (1 - g1)*t + g1*g
                  delta = g2*delta - (lr*t) / sqrt((n - g*g) + eps) ; w = w + delta

    ``clip_weights`` clips the new weight and leaves ``delta`` as computed."""
    lr_, g1, eps = _consts(w, lr, gamma1, epsilon)
    t = _kernel_grad(xp, w, g, rescale_grad, clip_gradient, wd, wd_first=True)
    if not centered:
        n = s[0]
        u = _square_mean(xp, t, n, g1)
        xp.add(n, eps, out=u)
        xp.sqrt(u, out=u)
        t /= u
        t *= lr_
        w -= t
    else:
        n, gm, delta = s
        g2, = _consts(w, gamma2)
        u = _moments(xp, t, gm, n, g1, g1)     # gm: the mean, n: ((1 - g1)*t)*t
        xp.multiply(gm, gm, out=u)
        xp.subtract(n, u, out=u)
        u += eps
        xp.sqrt(u, out=u)
        t *= lr_
        t /= u
        delta *= g2
        delta -= t
        w += delta
    if clip_on(clip_weights):
        cw, = _consts(w, clip_weights)   # type: ignore[arg-type]  # clip_on: not None
        xp.clip(w, -cw, cw, out=w)


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


def _pow(f: Any, a: Any, b: Any) -> Any:
    """MXNet's ``power::Map`` on two scalars of the float type ``f``: ``pow`` in double,
    rounded to ``f``."""
    return f(math.pow(float(a), float(b)))


def ftml(xp: Any, w: Any, g: Any, s: Sequence[Any], *, lr: float, wd: float = 0.0, rescale_grad: float = 1.0,
         clip_gradient: float | None = None, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8,
         t: int = 1) -> None:
    """``ftml_update``, ``s == [d, v, z]``; ``t`` is the (1-based) update count. MXNet's
    ``FTMLKernel``, constants (``t`` too) in the weight's dtype, ``gi = clip(rescale*g + wd*w)``::

        v = beta2*v + (1 - beta2)*(gi*gi)
        d_t = ((1 - beta1^t) / lr) * (sqrt(v / (1 - beta2^t)) + epsilon)
        z = (beta1*z + (1 - beta1)*gi) - (d_t - beta1*d)*w ; d = d_t ; w = -z / d_t
    """
    d, v, z = s
    f = w.dtype.type
    one = f(1)
    lr_, b1, b2 = _consts(w, lr, beta1, beta2)
    eps = mx_param(epsilon, w.dtype, double=True)   # FTMLParam's epsilon is a double field
    tt = f(t)
    c1 = (one - _pow(f, b1, tt)) / lr_
    c2 = one - _pow(f, b2, tt)
    gi = _kernel_grad(xp, w, g, rescale_grad, clip_gradient, wd, wd_first=True)
    u = _square_mean(xp, gi, v, b2)
    xp.divide(v, c2, out=u)
    xp.sqrt(u, out=u)
    u += eps
    u *= c1                      # d_t
    d *= b1
    xp.subtract(u, d, out=d)     # d_t - beta1*d
    d *= w
    gi *= one - b1
    z *= b1
    z += gi
    z -= d
    d[...] = u
    xp.divide(z, u, out=w)
    xp.negative(w, out=w)


def lamb_phase1(xp: Any, w: Any, g: Any, mean: Any, var: Any, *, wd: float, rescale_grad: float = 1.0,
                clip_gradient: float | None = None, beta1: float = 0.9, beta2: float = 0.999,
                epsilon: float = 1e-6, t: int = 1, bias_correction: bool = True) -> Any:
    """``lamb_update_phase1`` (``mp_``: ``w`` the float32 master): updates ``mean`` and
    ``var`` in place and returns the direction ``g'``, as MXNet's
    ``LambUpdatePhaseOneKernel`` in the states' dtype (``gr = clip(g*rescale)``)::

        mean = beta1*mean + (1 - beta1)*gr ; var = beta2*var + ((1 - beta2)*gr)*gr
        g' = mean / (sqrt(var) + eps) + wd*w, or with bias correction
        g' = m / (sqrt(var / (1 - beta2^t)) + eps) + wd*w, m = mean / (1. - beta1^t)

    where ``beta^t`` is ``std::pow(float, int)`` (double, rounded to the dtype) and ``m``
    divides in double (MXNet's ``1.`` literal) rounded once. With a float16 ``g`` and
    float32 states (``mp_``), ``g*rescale`` is rounded to float16 first, as mshadow's
    ``half_t`` product is."""
    f = mean.dtype.type
    one = f(1)
    b1, b2, eps, wd_ = _consts(mean, beta1, beta2, epsilon, wd)
    if g.dtype != mean.dtype:
        # mp_: ``float grad_rescaled = grad * rescale_grad`` multiplies a half_t, which
        # mshadow rounds to half before the float variable gets it
        rs, = _consts(mean, rescale_grad)
        gr = xp.multiply(g, rs, dtype=mean.dtype).astype(g.dtype).astype(mean.dtype)
        if clip_on(clip_gradient):
            c, = _consts(mean, clip_gradient)   # type: ignore[arg-type]  # clip_on: not None
            xp.clip(gr, -c, c, out=gr)
    else:
        gr = _kernel_grad(xp, mean, g, rescale_grad, clip_gradient)
    u = _moments(xp, gr, mean, var, b1, b2)
    if bias_correction:
        b1t, b2t = _pow(f, b1, t), _pow(f, b2, t)
        m = xp.divide(mean, np.float64(1.0) - np.float64(b1t), dtype=np.float64).astype(mean.dtype)
        xp.divide(var, one - b2t, out=u)
    else:
        m = mean.copy()
        u[...] = var
    xp.sqrt(u, out=u)
    u += eps
    m /= u
    xp.multiply(w, wd_, out=u)
    m += u
    return m


def sum_sq(xp: Any, x: Any) -> Any:
    """``multi_sum_sq`` of one array as MXNet's CPU kernel computes it: the squares in
    ``x``'s dtype summed one after the other into a float32 (``np.cumsum`` is such a
    sequential sum; CuPy's is a parallel scan, close but not always equal); a float32
    scalar."""
    sq = xp.multiply(x.ravel(), x.ravel())
    if sq.size == 0:
        return np.float32(0)
    return np.float32(float(xp.cumsum(sq, dtype=np.float32)[-1]))


def lars_rate(lr: float, wd: float, w_sum_sq: Any, g_sum_sq: Any, *, eta: float, eps: float,
              rescale_grad: float) -> Any:
    """``multi_lars`` for one weight (MXNet's ``MultiLARSKernel``, float32): with
    ``w_norm = sqrt(w_sum_sq)``, ``((lr*eta)*w_norm) / ((sqrt(g_sum_sq)*rescale_grad +
    wd*w_norm) + eps)`` when both sums are positive, else ``lr``; ``lr``, ``wd`` rounded
    to float32 (they come in float32 arrays), ``eta``, ``eps``, ``rescale_grad`` as
    ``mx_param``; a float32 scalar."""
    f = np.float32
    lr_, wd_ = f(lr), f(wd)
    w_norm = np.sqrt(f(w_sum_sq))
    if not (w_norm > 0 and f(g_sum_sq) > 0):
        return lr_
    eta_, eps_, rs = (mx_param(x) for x in (eta, eps, rescale_grad))
    return lr_ * eta_ * w_norm / (np.sqrt(f(g_sum_sq)) * rs + wd_ * w_norm + eps_)


#: arrays up to this size get ``l2_norm``'s exact emulation of MXNet's sequential reduction
NORM_EXACT_MAX = 4096


def l2_norm(xp: Any, x: Any) -> Any:
    """``NDArray.norm()`` of a float array as MXNet 1.9.1 computes it on the CPU: one
    sequential pass of the scaled ``nrm2`` reducer in the array's dtype
    (``ssq = 1 + ssq*(s/a)*(s/a); s = a`` when ``|x| = a`` exceeds the scale ``s``, else
    ``ssq += (a/s)*(a/s)``; the norm is ``s * sqrt(ssq)``); a scalar of ``x``'s dtype.

    The recurrence has no vectorised form, so it runs element by element only for numpy
    arrays of at most ``NORM_EXACT_MAX`` elements; larger (or device) arrays get the
    norm accumulated in float64 and rounded once (within an ulp or two of MXNet's)."""
    f = x.dtype.type
    if isinstance(x, np.ndarray) and x.size <= NORM_EXACT_MAX:
        ssq, scale, one = f(0), f(0), f(1)
        for v in np.abs(x.ravel()):
            if v != 0:
                if scale < v:
                    r = scale / v
                    ssq = one + ssq * r * r
                    scale = v
                else:
                    r = v / scale
                    ssq = ssq + r * r
        return f(scale * np.sqrt(ssq))
    return f(float(xp.sqrt(xp.sum(xp.square(x, dtype=np.float64)))))


def lamb_phase2(xp: Any, w: Any, g: Any, r1: Any, r2: Any, *, lr: float, lower_bound: float | None = None,
                upper_bound: float | None = None) -> Any:
    """``lamb_update_phase2``: a fresh array ``w - lr' * g`` in ``g``'s dtype, MXNet's
    ``LambUpdatePhaseTwoKernel``: ``r1`` clamped to ``[lower_bound, upper_bound]`` (each
    when ``>= 0``), ``lr' = (lr * r1) / r2``, or ``lr`` when ``r1`` or ``r2`` is 0; the
    scalars (``r1``, ``r2``: numbers or one-element arrays) in ``g``'s dtype."""
    r1_ = xp.asarray(r1).astype(g.dtype)
    r2_ = xp.asarray(r2).astype(g.dtype)
    if clip_on(lower_bound):
        r1_ = xp.maximum(r1_, mx_param(lower_bound, g.dtype))   # type: ignore[arg-type]
    if clip_on(upper_bound):
        r1_ = xp.minimum(r1_, mx_param(upper_bound, g.dtype))   # type: ignore[arg-type]
    lr_ = mx_param(lr, g.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = xp.where((r1_ == 0) | (r2_ == 0), lr_, lr_ * r1_ / r2_).astype(g.dtype)
    out = xp.multiply(g, rate)
    xp.subtract(w, out, out=out, casting="unsafe")
    return out


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
