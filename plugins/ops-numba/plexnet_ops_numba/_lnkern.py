"""numba kernel of LayerNorm over the last axis (``layer_norm.py``): MXNet 1.9.1's CPU
kernel, the same operations in the same order as ops-basic's numpy version
(``nn/layer_norm._last_axis_as_mxnet``: sequential sums, two-pass variance,
``((x - mean) * gamma) / std + beta``), so bit-equal to it and to MXNet; one row at a time
in three passes that stay in L1 (numpy needs two full-size ``cumsum`` temporaries)."""
from __future__ import annotations

import numpy as np
import numba

_jit = numba.njit(nogil=True, cache=True, error_model="numpy")   # no per-element zero-division test (see _phaseplanes)


@_jit
def layer_norm_rows(x, gamma, beta, eps, y, mean, std):  # pragma: no cover - compiled
    M, W = x.shape
    zero = x.dtype.type(0)
    width = x.dtype.type(W)
    for i in range(M):
        s = zero
        for j in range(W):
            s += x[i, j]
        m = s / width
        q = zero
        for j in range(W):
            d = x[i, j] - m
            q += d * d
        sd = np.sqrt(q / width + eps)
        for j in range(W):
            y[i, j] = (x[i, j] - m) * gamma[j] / sd + beta[j]
        mean[i] = m
        std[i] = sd
