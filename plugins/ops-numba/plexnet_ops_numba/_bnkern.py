"""numba kernels of BatchNorm's training passes (``batch_norm.py``) over an ``(N, C, S)``
view of the data (``S`` the pixels of one channel plane), for the channels
``c0 <= c < c1`` (two threads may take half the channels each).

ops-basic's numpy BatchNorm makes five to eight whole-array passes each way (sums, centring,
the squares' sum, scaling, shifting; backward the same with the gradient); here the
forward reads the data twice and writes once, the backward reads data and gradient twice
and writes once. Sums run in float64 (numpy's float32 sums are pairwise; a plain float32
loop over 32768 values per channel would lose digits), in any order LLVM vectorises them
(``reassoc``, not the NaN-ignoring ``fastmath`` flags: a NaN still spreads)."""
from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(nogil=True, cache=True)
_sums = numba.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})


@_sums
def channel_stats(x3, mean, var, c0, c1):  # pragma: no cover - compiled
    """``mean[c]``, ``var[c]`` (biased; float64) of ``x3[:, c, :]``; the sums are shifted by
    the channel's first value (no cancellation for data far from zero)."""
    N, C, S = x3.shape
    m = N * S
    for c in range(c0, c1):
        k = np.float64(x3[0, c, 0])
        s1 = 0.0
        s2 = 0.0
        for n in range(N):
            row = x3[n, c]
            for i in range(S):
                d = np.float64(row[i]) - k
                s1 += d
                s2 += d * d
        mu = s1 / m
        mean[c] = k + mu
        var[c] = max(s2 / m - mu * mu, 0.0)


@_jit
def normalize(x3, y3, mean, scale, shift, c0, c1):  # pragma: no cover - compiled
    """``y = (x - mean[c]) * scale[c] + shift[c]`` (``y`` may be ``x``)."""
    N, C, S = x3.shape
    for n in range(N):
        for c in range(c0, c1):
            mu = mean[c]
            sc = scale[c]
            b = shift[c]
            src = x3[n, c]
            dst = y3[n, c]
            for i in range(S):
                dst[i] = (src[i] - mu) * sc + b


@_sums
def gradient_sums(x3, dy3, mean, sum_dy, sum_dy_xc, c0, c1):  # pragma: no cover - compiled
    """``sum_dy[c]`` = the sum of ``dy[:, c]``, ``sum_dy_xc[c]`` = that of ``dy * (x - mean[c])``
    (float64)."""
    N, C, S = x3.shape
    for c in range(c0, c1):
        mu = np.float64(mean[c])
        a = 0.0
        b = 0.0
        for n in range(N):
            xr = x3[n, c]
            gr = dy3[n, c]
            for i in range(S):
                g = np.float64(gr[i])
                a += g
                b += g * (np.float64(xr[i]) - mu)
        sum_dy[c] = a
        sum_dy_xc[c] = b


@_jit
def data_gradient(x3, dy3, dx3, mean, k, b, e, add, c0, c1):  # pragma: no cover - compiled
    """``dx (=, or += when add) k[c] * dy + b[c] * (x - mean[c]) + e[c]`` (``dx`` may be
    ``dy``)."""
    N, C, S = x3.shape
    for n in range(N):
        for c in range(c0, c1):
            mu = mean[c]
            kc = k[c]
            bc = b[c]
            ec = e[c]
            xr = x3[n, c]
            gr = dy3[n, c]
            out = dx3[n, c]
            if add:
                for i in range(S):
                    out[i] += kc * gr[i] + bc * (xr[i] - mu) + ec
            else:
                for i in range(S):
                    out[i] = kc * gr[i] + bc * (xr[i] - mu) + ec
