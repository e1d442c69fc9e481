"""``calibrate_entropy``: the threshold whose quantized histogram is closest (KL
divergence) to the clipped reference histogram, as MXNet 1.9.1's ``calibrate.cc``
(float32 arithmetic, histogram counts truncated to integers as its ``size_t`` copy does).
The search runs on the host: it is a scalar loop over candidate thresholds."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._base import F32, QuantProp, register as _register

__all__ = ["register", "entropy_threshold"]


def _smooth(p: np.ndarray, eps: float = 0.0001) -> np.ndarray | None:
    """Zeros become ``eps``; the non-zeros give that mass back evenly. None when malformed."""
    zeros = p == 0
    n_zero = int(zeros.sum())
    n_nonzero = p.size - n_zero
    if not n_nonzero:
        return None
    eps1 = np.float32(np.float32(eps) * np.float32(n_zero) / np.float32(n_nonzero))
    if eps1 >= 1.0:
        return None
    return (p + np.where(zeros, np.float32(eps), -eps1).astype(np.float32)).astype(np.float32)


def _kl(p: np.ndarray, q: np.ndarray) -> np.float32:
    p = p / np.float32(p.sum(dtype=np.float32))
    q = q / np.float32(q.sum(dtype=np.float32))
    return np.float32((p * np.log(p / q)).sum(dtype=np.float32))


def entropy_threshold(hist: np.ndarray, edges: np.ndarray, num_quantized_bins: int) -> tuple[float, float]:
    """``(threshold, divergence)`` for a histogram centred on zero and its edges."""
    hist = np.asarray(hist, dtype=np.float32).ravel()
    edges = np.asarray(edges, dtype=np.float32).ravel()
    num_bins = hist.size
    counts = np.trunc(hist).astype(np.int64)  # MXNet copies the counts into size_t
    zero = num_bins // 2
    half = num_quantized_bins // 2
    best_i, best = 0, np.float32(np.finfo(np.float32).max)
    thresholds = []
    for k, i in enumerate(range(half, zero + 1)):
        start, stop = zero - i, zero + i + 1
        thresholds.append(edges[stop])
        sliced = counts[start:stop].copy()
        sliced[0] = 0  # MXNet folds the bins up to ``start`` into p[0] only
        p = hist[start:stop].astype(np.float32).copy()
        p[0] = hist[:start + 1].sum(dtype=np.float32)
        p[-1] = np.float32(hist[stop - 1] + hist[stop:].sum(dtype=np.float32))  # outliers join the last bin
        merged = sliced.size // num_quantized_bins
        q = np.zeros(sliced.size, dtype=np.float32)
        for j in range(num_quantized_bins):
            lo = j * merged
            hi = sliced.size if j == num_quantized_bins - 1 else (j + 1) * merged
            total = sliced[lo:(j + 1) * merged].sum()
            if j == num_quantized_bins - 1:
                total += sliced[num_quantized_bins * merged:].sum()
            norm = int((sliced[lo:hi] != 0).sum())
            if norm:
                q[lo:hi] = np.where(p[lo:hi] != 0, np.float32(total) / np.float32(norm), np.float32(0))
        ps, qs = _smooth(p), _smooth(q)
        div = np.float32(np.inf) if qs is None or ps is None else _kl(ps, qs)
        if div < best:
            best, best_i = div, k
    return float(thresholds[best_i]), float(best)


class CalibrateEntropyParam(Params):
    num_quantized_bins = Field(int, default=255, low=1, doc="number of quantized bins")


class CalibrateEntropyProp(QuantProp):
    """Inputs ``hist`` (counts, float32) and ``hist_edges`` (``len(hist) + 1``); outputs
    the calibrated ``threshold`` and its KL ``divergence``."""

    param_cls = CalibrateEntropyParam
    arguments = ("hist", "hist_edges")
    outputs = ("threshold", "divergence")
    data_types = {0: (F32,), 1: (F32,)}
    range_inputs = ()
    differentiable = False

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        h, e = shapes
        if len(h) != 1 or e != (h[0] + 1,):
            raise self.shape_error("hist must be 1-d and hist_edges must have len(hist) + 1 values", shapes)
        if h[0] // 2 < self.param.num_quantized_bins // 2:
            raise self.shape_error(f"hist needs at least {self.param.num_quantized_bins} bins "
                                   f"(num_quantized_bins)", shapes)
        return [(1,), (1,)]

    def out_types(self, types):  # type: ignore[no-untyped-def]
        return [F32, F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        host = [a.get() if hasattr(a, "get") else np.asarray(a) for a in ins]
        t, d = entropy_threshold(host[0], host[1], self.param.num_quantized_bins)
        return [np.float32(t), np.float32(d)]


def register(registry: Any) -> None:
    _register(registry, {"calibrate_entropy": CalibrateEntropyProp})
