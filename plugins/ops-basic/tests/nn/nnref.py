"""float64 numpy references for the nn operator tests (straightforward loops, written
independently of the operators' vectorised code)."""
from __future__ import annotations

import itertools
import math

import numpy as np


def conv_out(i, k, s, d, p):
    return (i + 2 * p - d * (k - 1) - 1) // s + 1


def ref_conv(x, w, b=None, stride=None, pad=None, dilate=None, num_group=1):
    x, w = x.astype(np.float64), w.astype(np.float64)
    nd = x.ndim - 2
    stride, pad, dilate = stride or (1,) * nd, pad or (0,) * nd, dilate or (1,) * nd
    N, C = x.shape[:2]
    F, Cg = w.shape[:2]
    G = num_group
    Fg = F // G
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    osp = tuple(conv_out(i, k, s, d, p) for i, k, s, d, p in zip(x.shape[2:], w.shape[2:], stride, dilate, pad))
    y = np.zeros((N, F) + osp)
    for n in range(N):
        for f in range(F):
            g = f // Fg
            for o in itertools.product(*[range(v) for v in osp]):
                acc = 0.0
                for c in range(Cg):
                    for k in itertools.product(*[range(v) for v in w.shape[2:]]):
                        idx = tuple(oo * s + kk * d for oo, kk, s, d in zip(o, k, stride, dilate))
                        acc += xp[(n, g * Cg + c) + idx] * w[(f, c) + k]
                y[(n, f) + o] = acc
    if b is not None:
        y += b.astype(np.float64).reshape((1, F) + (1,) * nd)
    return y


def ref_deconv(x, w, b=None, stride=None, pad=None, dilate=None, adj=None, num_group=1, out_sp=None):
    """Transposed convolution by scattering (the definition)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    nd = x.ndim - 2
    stride, pad, dilate = stride or (1,) * nd, pad or (0,) * nd, dilate or (1,) * nd
    adj = adj or (0,) * nd
    N, C = x.shape[:2]
    Cw, Fg = w.shape[:2]
    G = num_group
    Cg = C // G
    F = Fg * G
    K = w.shape[2:]
    full = tuple(s * (i - 1) + d * (k - 1) + 1 for i, s, d, k in zip(x.shape[2:], stride, dilate, K))
    if out_sp is None:
        out_sp = tuple(f - 2 * p + a for f, p, a in zip(full, pad, adj))
    big = tuple(max(f, o + p) for f, o, p in zip(full, out_sp, pad))
    y = np.zeros((N, F) + big)
    for n in range(N):
        for c in range(C):
            g = c // Cg
            for i in itertools.product(*[range(v) for v in x.shape[2:]]):
                for k in itertools.product(*[range(v) for v in K]):
                    pos = tuple(ii * s + kk * d for ii, kk, s, d in zip(i, k, stride, dilate))
                    for f in range(Fg):
                        y[(n, g * Fg + f) + pos] += x[(n, c) + i] * w[(c, f) + k]
    y = y[(slice(None), slice(None)) + tuple(slice(p, p + o) for p, o in zip(pad, out_sp))]
    if b is not None:
        y = y + b.astype(np.float64).reshape((1, F) + (1,) * nd)
    return y


def ref_pool(x, kernel, stride=None, pad=None, pool_type="max", convention="valid", count_include_pad=True,
             global_pool=False, p_value=None):
    """MXNet's CPU pooling loops (pool.h), any dimensionality."""
    x = x.astype(np.float64)
    nd = x.ndim - 2
    sp = x.shape[2:]
    if global_pool:
        kernel, stride, pad = sp, (1,) * nd, (0,) * nd
    stride, pad = stride or (1,) * nd, pad or (0,) * nd
    if convention == "valid":
        osp = tuple(1 + (i + 2 * p - k) // s for i, k, s, p in zip(sp, kernel, stride, pad))
    else:
        osp = tuple(1 + int(math.ceil((i + 2 * p - k) / s)) for i, k, s, p in zip(sp, kernel, stride, pad))
    if global_pool:
        osp = (1,) * nd
    y = np.zeros(x.shape[:2] + osp)
    for o in itertools.product(*[range(v) for v in osp]):
        start = [oo * s - p for oo, s, p in zip(o, stride, pad)]
        end = [min(st + k, i + p) for st, k, i, p in zip(start, kernel, sp, pad)]
        size = int(np.prod([e - st for st, e in zip(start, end)]))
        cs = [max(st, 0) for st in start]
        ce = [min(e, i) for e, i in zip(end, sp)]
        if not count_include_pad:
            size = int(np.prod([e - st for st, e in zip(cs, ce)]))
        win = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(cs, ce))]
        win = win.reshape(x.shape[:2] + (-1,))
        if pool_type == "max":
            v = win.max(-1)
        elif pool_type == "sum":
            v = win.sum(-1)
        elif pool_type == "avg":
            v = win.sum(-1) / size
        else:
            s = (win ** p_value).sum(-1)
            v = np.cbrt(s) if p_value == 3 else s ** (1.0 / p_value)
        y[(slice(None), slice(None)) + o] = v
    return y


def ref_pool_max_grad(x, dy, kernel, stride=None, pad=None, convention="valid"):
    """MXNet CPU max-pool backward: the first maximum of each window gets the gradient."""
    x = x.astype(np.float64)
    nd = x.ndim - 2
    sp = x.shape[2:]
    stride, pad = stride or (1,) * nd, pad or (0,) * nd
    y = ref_pool(x, kernel, stride, pad, "max", convention)
    dx = np.zeros_like(x)
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for o in itertools.product(*[range(v) for v in y.shape[2:]]):
                start = [oo * s - p for oo, s, p in zip(o, stride, pad)]
                cs = [max(st, 0) for st in start]
                ce = [min(st + k, i) for st, k, i in zip(start, kernel, sp)]
                done = False
                for pos in itertools.product(*[range(a, b) for a, b in zip(cs, ce)]):
                    if x[(n, c) + pos] == y[(n, c) + o]:
                        dx[(n, c) + pos] += dy[(n, c) + o]
                        done = True
                        break
                assert done
    return dx
