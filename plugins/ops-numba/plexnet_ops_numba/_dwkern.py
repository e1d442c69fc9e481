"""numba kernels of depthwise convolution (``num_group`` == input channels: one input
channel per group, ``M = num_filter / channels`` filters each), 2-D, stride 1, any
kernel, pad, dilation: a direct sliding window instead of im2col + a batch of tiny GEMMs
(strides over 1: ``_phaseplanes.dw_forward`` / ``dw_backward``, the same contract).

Each output accumulates, kernel position by kernel position (row-major), the weight
times the input; the input padded into a flat plane makes each kernel position one
contiguous multiply-add run, which LLVM vectorises. The sums run in another order than OpenBLAS's GEMM (and the
weight gradient's dot products are reassociated): results equal ops-basic's to rounding,
not bit for bit."""
from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(nogil=True, cache=True)


@numba.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def _dot(a, b, zero):  # pragma: no cover - compiled
    """``sum(a * b)``, reassociated so that it vectorises (the weight gradient's
    reductions; without it LLVM keeps the sequential order: 3x slower)."""
    t = zero
    for i in range(a.shape[0]):
        t += a[i] * b[i]
    return t


@_jit
def _pad_plane(src, buf, ph, pw):  # pragma: no cover - compiled
    """``buf`` (PH, PW; border already zero) gets ``src`` (H, W) at ``(ph, pw)``."""
    H, W = src.shape
    for h in range(H):
        dst = buf[ph + h, pw:pw + W]
        row = src[h]
        for i in range(W):
            dst[i] = row[i]


@_jit
def dw_forward_s1(x, w, b, out, p, d, has_bias, add, zero):  # pragma: no cover - compiled
    """``dw_forward`` for stride 1: per channel, the input zero-padded into a plane of
    row length ``PW``; output ``(oh, ow)`` at flat position ``oh * PW + ow`` then reads
    plane position ``+ a * dh * PW + e * dw`` for kernel position ``(a, e)``: one long
    contiguous multiply-add per kernel position (junk columns past each row's end are
    computed and dropped)."""
    N, C, H, W = x.shape
    F, _, KH, KW = w.shape
    OH, OW = out.shape[2], out.shape[3]
    M = F // C
    ph, pw = p
    dh, dw = d
    PH, PW = H + 2 * ph, W + 2 * pw
    L = (OH - 1) * PW + OW
    plane = np.zeros((PH, PW), dtype=x.dtype)
    flat = plane.reshape(PH * PW)
    acc = np.empty(L, dtype=out.dtype)
    for n in range(N):
        for c in range(C):
            _pad_plane(x[n, c], plane, ph, pw)
            for f in range(c * M, c * M + M):
                acc[:] = zero
                for a in range(KH):
                    for e in range(KW):
                        wv = w[f, 0, a, e]
                        off = a * dh * PW + e * dw
                        src = flat[off:off + L]
                        for i in range(L):
                            acc[i] += wv * src[i]
                bf = b[f] if has_bias else zero
                for oh in range(OH):
                    dst = out[n, f, oh]
                    seg = acc[oh * PW:oh * PW + OW]
                    if add:
                        for i in range(OW):
                            dst[i] += seg[i] + bf
                    else:
                        for i in range(OW):
                            dst[i] = seg[i] + bf


@_jit
def dw_backward_s1(x, w, dy, dx, dwt, p, d, need_dx, add_dx, need_dw, zero):  # pragma: no cover - compiled
    """``dw_backward`` for stride 1 in ``dw_forward_s1``'s flat layout: ``dy`` laid out
    on rows of length ``PW`` (junk zero), the data gradient accumulated on the padded
    plane and cropped."""
    N, C, H, W = x.shape
    F, _, KH, KW = w.shape
    OH, OW = dy.shape[2], dy.shape[3]
    M = F // C
    ph, pw = p
    dh, dw = d
    PH, PW = H + 2 * ph, W + 2 * pw
    L = (OH - 1) * PW + OW
    plane = np.zeros((PH, PW), dtype=x.dtype)
    flat = plane.reshape(PH * PW)
    gplane = np.empty((PH, PW), dtype=dx.dtype)
    gflat = gplane.reshape(PH * PW)
    g = np.zeros(L, dtype=dy.dtype)
    if need_dw:
        dwt[...] = zero
    for n in range(N):
        for c in range(C):
            if need_dw:
                _pad_plane(x[n, c], plane, ph, pw)
            gplane[:, :] = zero
            for f in range(c * M, c * M + M):
                for oh in range(OH):
                    seg = g[oh * PW:oh * PW + OW]
                    src = dy[n, f, oh]
                    for i in range(OW):
                        seg[i] = src[i]
                for a in range(KH):
                    for e in range(KW):
                        off = a * dh * PW + e * dw
                        if need_dw:
                            dwt[f, 0, a, e] += _dot(g, flat[off:off + L], zero)
                        if need_dx:
                            wv = w[f, 0, a, e]
                            dst = gflat[off:off + L]
                            for i in range(L):
                                dst[i] += wv * g[i]
            if need_dx:
                for h in range(H):
                    row = gplane[ph + h, pw:pw + W]
                    drow = dx[n, c, h]
                    if add_dx:
                        for i in range(W):
                            drow[i] += row[i]
                    else:
                        for i in range(W):
                            drow[i] = row[i]
