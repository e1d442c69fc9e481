"""``hawkesll``: log likelihood of (independent, per mark) univariate Hawkes processes with
exponential kernels, and the exposed ``backward_hawkesll``, MXNet 1.9.1's recursions.

For sample ``i`` with events ``(t_j, k_j)`` (``t`` the running sum of ``lags``, the first
``valid_length[i]``), intensity ``lda_k + alpha_k beta_k s_k(t)`` with the memory
``s_k`` (``state`` at time 0, each mark's clock starting at 0):
``ll = sum_j log lambda_{k_j}(t_j) - sum_k compensator_k(0, max_time)``; the second
output is ``s_k(max_time)``. Gradients flow to ``lda``, ``alpha`` and ``beta`` from the
log likelihood (as MXNet's; ``state`` and the observations get none). The recursions run
over the event axis, vectorised over the batch.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._common import FnProp, register as _register

__all__ = ["register"]

ARGS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")


def _pass(xp: Any, mu: Any, alpha: Any, beta: Any, state: Any, lags: Any, marks: Any, valid: Any,
          max_time: Any, grads: bool) -> tuple:
    """One sweep over the events: log likelihood, final state and (with ``grads``) the
    per-sample gradients of mu (N, K), alpha (N, K), beta (N, K)."""
    n, k = mu.shape
    rows = xp.arange(n)
    ll = xp.zeros(n, dtype=mu.dtype)
    t = xp.zeros(n, dtype=mu.dtype)
    last = xp.zeros((n, k), dtype=mu.dtype)
    s = state.astype(mu.dtype).copy()
    ds = xp.zeros((n, k), dtype=mu.dtype)
    gmu, gal, gbe = (xp.zeros((n, k), dtype=mu.dtype) for _ in range(3))
    marks = marks.astype(np.int64)
    for j in range(lags.shape[1]):
        act = j < valid
        if not bool(act.any()):
            break
        c = marks[:, j]
        t = t + xp.where(act, lags[:, j], 0)
        d = t - last[rows, c]
        a, b = alpha[c], beta[c]
        ed = xp.exp(-b * d)
        sc, dsc = s[rows, c], ds[rows, c]
        lda = mu[rows, c] + a * b * sc * ed
        comp = mu[rows, c] * d + a * sc * (1 - ed)
        ll = ll + xp.where(act, xp.log(xp.where(act, lda, 1)) - comp, 0)
        if grads:
            safe = xp.where(act, lda, 1)
            gmu[rows, c] += xp.where(act, 1 / safe - d, 0)
            gal[rows, c] += xp.where(act, b * sc * ed / safe - sc * (1 - ed), 0)
            gbe[rows, c] += xp.where(act, a * ed * (sc * (1 - b * d) + b * dsc) / safe
                                     - a * (dsc * (1 - ed) + sc * d * ed), 0)
            ds[rows, c] = xp.where(act, ed * (-d * sc + dsc), dsc)
        s[rows, c] = xp.where(act, 1 + sc * ed, sc)
        last[rows, c] = xp.where(act, t, last[rows, c])
    d = max_time[:, None] - last
    ed = xp.exp(-beta[None, :] * d)
    ll = ll - (mu * d + alpha[None, :] * s * (1 - ed)).sum(axis=1)
    if grads:
        gmu = gmu - d
        gal = gal - s * (1 - ed)
        gbe = gbe - alpha[None, :] * (ds * (1 - ed) + s * d * ed)
    return ll, s * ed, gmu, gal, gbe


class HawkesLLProp(FnProp):
    """Log likelihood and final state of Hawkes processes (see the module docstring)."""

    arguments = ARGS
    outputs = ("output", "out_state")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        mu, al, be, st, lags, marks, vl, mt = shapes
        n, k = (mu[0], mu[1]) if len(mu) == 2 else (None, None)
        ok = (len(mu) == 2 and tuple(al) == (k,) and tuple(be) == (k,) and tuple(st) == (n, k) and len(lags) == 2
              and lags[0] == n and tuple(marks) == tuple(lags) and tuple(vl) == (n,) and tuple(mt) == (n,))
        if not ok:
            raise self.error("expected lda (N, K), alpha (K,), beta (K,), state (N, K), lags and marks (N, T), "
                             "valid_length and max_time (N,)", shapes)
        return [(n,), (n, k)]

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        t = in_type[0] if in_type[0] is not None else np.dtype(np.float32)
        return [t, t, t, t, t, np.dtype(np.int32), t, t], [t, t], []

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        ll, state, *_ = _pass(xp, *ins, grads=False)
        return [ll, state]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        _ll, _s, gmu, gal, gbe = _pass(xp, *ins, grads=True)
        og = ogs[0][:, None]
        zeros = [xp.zeros(x.shape, dtype=x.dtype) for x in ins[3:]]
        return [gmu * og, (gal * og).sum(axis=0), (gbe * og).sum(axis=0)] + zeros


class BackwardHawkesLLProp(FnProp):
    """``hawkesll``'s backward as an operator: inputs ``(out_grad_ll, out_grad_state, lda,
    alpha, beta, state, lags, marks, valid_length, max_time)``, outputs the eight input
    gradients."""

    arguments = ("ograd", "ograd_state") + ARGS
    outputs = tuple(f"{a}_grad" for a in ARGS)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        return [tuple(s) for s in shapes[2:]]

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        t = in_type[0] if in_type[0] is not None else np.dtype(np.float32)
        ins = [t, t, t, t, t, t, t, np.dtype(np.int32), t, t]
        return ins, ins[2:], []

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return HawkesLLProp.backward(self, xp, ins[2:], [], [ins[0]])  # type: ignore[arg-type]


def register(registry: Any) -> None:
    _register(registry, {"hawkesll": HawkesLLProp, "backward_hawkesll": BackwardHawkesLLProp})
