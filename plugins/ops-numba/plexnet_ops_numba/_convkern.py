"""numba kernels of Convolution's layout passes (``plexnet_ops_basic.nn._convcore``):
col2im in the flat, csn and strided (2-D) column layouts, out_to_cols in the flat layout, and the
forward's copy of the GEMM result (plus bias) into the ``(N, F, *out)`` output.

Each keeps ops-basic's arithmetic: col2im adds the kernel offsets' columns in row-major
offset order onto zeros (one row of the data gradient at a time, which stays in the L1
cache, instead of ``prod(kernel)`` passes over the whole buffer); the bias is added to
the GEMM result before it is stored. Inner loops run over contiguous row slices, which
LLVM vectorises (indexing with computed offsets instead did not)."""
from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(nogil=True, cache=True)


@_jit
def col2im_flat(dc, offs, dxt, zero):  # pragma: no cover - compiled
    """``dc`` (C, K, N, L), ``offs`` (K,): flat offsets of the kernel positions on the
    padded grid; ``dxt`` (C, N, P) = sum over k of ``dc[:, k]`` shifted by ``offs[k]``."""
    C, K, N, L = dc.shape
    for c in range(C):
        for n in range(N):
            row = dxt[c, n]
            row[:] = zero
            for k in range(K):
                dst = row[offs[k]:offs[k] + L]
                src = dc[c, k, n]
                for i in range(L):
                    dst[i] += src[i]


@_jit
def col2im_rows(dc, roffs, coffs, dxt, zero):  # pragma: no cover - compiled
    """The csn layout (2-D and 1-D as rows): ``dc`` (C, K, OH, J), ``dxt`` (C, PH, Q);
    kernel position ``k`` adds ``dc[c, k, oh]`` to row ``oh + roffs[k]`` of channel ``c``
    from column ``coffs[k]`` on."""
    C, K, OH, J = dc.shape
    for c in range(C):
        plane = dxt[c]
        plane[:, :] = zero
        for k in range(K):
            for oh in range(OH):
                dst = plane[oh + roffs[k], coffs[k]:coffs[k] + J]
                src = dc[c, k, oh]
                for i in range(J):
                    dst[i] += src[i]


@_jit
def col2im_strided(dc, roffs, coffs, sh, sw, dxt, zero):  # pragma: no cover - compiled
    """The strided 2-D layout (stride > 1): ``dc`` (C, K, N, OH, OW), ``dxt`` (C, N, PH,
    PW); kernel position ``k`` adds ``dc[c, k, n, oh, ow]`` to ``dxt[c, n, roffs[k] + oh
    sh, coffs[k] + ow sw]``, one (c, n) plane at a time (it stays in the cache). Rows of at
    least ``8`` outputs are summed in ``sw`` column phases, so that each row's additions
    are contiguous (vectorised), then interleaved into the plane; shorter rows directly.
    The additions per element keep ops-basic's order (k ascending, onto zero); ops-basic
    made ``K`` strided passes over the whole buffer. ResNet-18's stride-2 3x3 layers at
    batch 32 (medians of 10 calls, ops-basic's then this, one process per figure, 2026-12-07):
    64 channels 5.7-6.4 -> 3.5-3.8 ms, 128: 4.6-4.8 -> 2.5-4.1, 256: 4.3 -> 1.2."""
    C, K, N, OH, OW = dc.shape
    PH, PW = dxt.shape[2], dxt.shape[3]
    QW = (PW + sw - 1) // sw
    phased = OW >= 8
    ph = np.empty((sw, PH, QW) if phased else (1, 1, 1), dxt.dtype)
    for c in range(C):
        for n in range(N):
            plane = dxt[c, n]
            if not phased:
                plane[:, :] = zero
                for k in range(K):
                    r0 = roffs[k]
                    c0 = coffs[k]
                    for oh in range(OH):
                        dst = plane[r0 + oh * sh]
                        src = dc[c, k, n, oh]
                        for ow in range(OW):
                            dst[c0 + ow * sw] += src[ow]
                continue
            ph[:, :, :] = zero
            for k in range(K):
                r0 = roffs[k]
                q0 = coffs[k] // sw
                phase = ph[coffs[k] % sw]
                for oh in range(OH):
                    dst = phase[r0 + oh * sh, q0:q0 + OW]
                    src = dc[c, k, n, oh]
                    for ow in range(OW):
                        dst[ow] += src[ow]
            for r in range(PH):
                row = plane[r]
                for f in range(sw):
                    prow = ph[f, r]
                    for q in range((PW - f + sw - 1) // sw):
                        row[q * sw + f] = prow[q]


@_jit
def out_to_cols_flat(dy, y, PW):  # pragma: no cover - compiled
    """``dy`` (N, F, OA, OW) -> ``y`` (F, N, L): output row ``a`` of a sample at
    ``a * PW`` (PW: the padded input's row length), junk columns zero."""
    N, F, OA, OW = dy.shape
    for f in range(F):
        for n in range(N):
            dst = y[f, n]
            dst[:] = 0
            for a in range(OA):
                src = dy[n, f, a]
                seg = dst[a * PW:a * PW + OW]
                for i in range(OW):
                    seg[i] = src[i]


@_jit
def cols_to_out_flat(y, b, out, PW, has_bias, add):  # pragma: no cover - compiled
    """``out`` (N, F, OA, OW) (=|+=) ``y`` (F, N, L) (+ ``b[f]``), output row ``a`` of a
    sample read at ``a * PW``."""
    N, F, OA, OW = out.shape
    for n in range(N):
        for f in range(F):
            bf = b[f]
            for a in range(OA):
                src = y[f, n, a * PW:a * PW + OW]
                dst = out[n, f, a]
                if add and has_bias:   # ops-basic: out += y, then out += b
                    for i in range(OW):
                        dst[i] = (dst[i] + src[i]) + bf
                elif add:
                    for i in range(OW):
                        dst[i] += src[i]
                elif has_bias:
                    for i in range(OW):
                        dst[i] = src[i] + bf
                else:
                    for i in range(OW):
                        dst[i] = src[i]


@_jit
def nchw_to_chwn(x, xc, ph, pw, zero):  # pragma: no cover - compiled
    """``xc`` (C, PH, PW, N) = ``x`` (N, C, H, W) moved batch-innermost at offset
    ``(ph, pw)``, the border zero (the csn layout's padded input). One (W, N) block at a
    time: it stays in the L1 cache, so the strided side of the transposition is cheap."""
    N, C, H, W = x.shape
    PH, PW = xc.shape[1], xc.shape[2]
    for c in range(C):
        if ph > 0 or pw > 0:
            for h in range(PH):
                for q in range(PW):
                    if h < ph or h >= ph + H or q < pw or q >= pw + W:
                        xc[c, h, q, :] = zero
        for h in range(H):
            blk = xc[c, ph + h, pw:pw + W]
            for n in range(N):
                src = x[n, c, h]
                for q in range(W):
                    blk[q, n] = src[q]


@_jit
def chwn_to_nchw(src, dst, ph, pw, b, has_bias, add):  # pragma: no cover - compiled
    """``dst`` (N, C, H, W) (=|+=) ``src[:, ph:ph+H, pw:pw+W, :]`` (C, PH, PW, N) moved
    batch-outermost (+ ``b[c]``; with ``add``, ops-basic's ``(dst + src) + b``)."""
    N, C, H, W = dst.shape
    for c in range(C):
        bc = b[c]
        for h in range(H):
            blk = src[c, ph + h, pw:pw + W]
            for n in range(N):
                d = dst[n, c, h]
                if add and has_bias:
                    for q in range(W):
                        d[q] = (d[q] + blk[q, n]) + bc
                elif add:
                    for q in range(W):
                        d[q] += blk[q, n]
                elif has_bias:
                    for q in range(W):
                        d[q] = blk[q, n] + bc
                else:
                    for q in range(W):
                        d[q] = blk[q, n]
