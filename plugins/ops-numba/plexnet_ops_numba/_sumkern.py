"""numba kernels of MXNet's compensated summation (``reduce.py``): every column of a
``(K, M)`` array summed sequentially down its rows with Kahan compensation in the array's
dtype, the compensation reset where the running sum is infinite (mshadow's ``red::sum``;
ops-basic's ``tensor/_kahan.py`` has the same loop in numpy for short reductions).
``nrm2_rows`` is its scaled L2 norm (``red::nrm2``). Compiled without ``fastmath``:
reassociation would drop the compensation."""
from __future__ import annotations

import numpy as np
import numba

_jit = numba.njit(nogil=True, cache=True, error_model="numpy")   # no per-element zero-division test (see _phaseplanes)


@_jit
def kahan_rows(rows, out, skip_nan):  # pragma: no cover - compiled
    K, M = rows.shape
    zero = rows.dtype.type(0)
    r = np.zeros(M, dtype=rows.dtype)
    for m in range(M):
        out[m] = zero
    for k in range(K):
        for m in range(M):
            if skip_nan and np.isnan(rows[k, m]):   # nansum: NaN elements leave both unchanged
                continue
            y = rows[k, m] - r[m]
            t = out[m] + y
            if np.isinf(t):
                r[m] = zero
            else:
                r[m] = (t - out[m]) - y
            out[m] = t


@_jit
def nrm2_rows(rows, out):  # pragma: no cover - compiled
    K, M = rows.shape
    zero, one = rows.dtype.type(0), rows.dtype.type(1)
    scale = np.zeros(M, dtype=rows.dtype)
    for m in range(M):
        out[m] = zero
    for k in range(K):
        for m in range(M):
            v = rows[k, m]
            if v != zero:
                a = abs(v)
                if scale[m] < a:
                    q = scale[m] / a
                    out[m] = one + out[m] * q * q
                    scale[m] = a
                else:
                    p = a / scale[m]
                    out[m] = out[m] + p * p
    for m in range(M):
        out[m] = scale[m] * np.sqrt(out[m])

