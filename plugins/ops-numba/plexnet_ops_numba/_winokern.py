"""numba kernels of the Winograd F(2x2, 3x3) convolution (``winograd.py``): the input
transform ``V = B^T d B`` of every 4x4 input tile and the output transform ``Y = A^T M A``
of every tile's 16 GEMM results into its 2x2 output block.

Layouts: ``V[k, c, p]`` and ``M[k, f, p]`` with ``k`` the 16 transform positions and ``p``
the tile (sample, tile row, tile column) of the chunk, so the 16 GEMMs ``M[k] = U[k] @ V[k]``
are one batched ``np.matmul``. Inner loops run over contiguous rows (the tiles of a tile
row), which LLVM vectorises."""
from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(nogil=True, cache=True)


@_jit
def input_tiles(x, V, pad_r, pad_c, th, tw, n0, n1):  # pragma: no cover - compiled
    """``V[k, c, (n - n0) * th * tw + i * tw + j]`` = position ``k`` of ``B^T d B`` for the
    4x4 tile ``d`` at rows ``2i - pad_r ..``, columns ``2j - pad_c ..`` of ``x[n, c]`` (zeros
    outside), for samples ``n0 <= n < n1``."""
    N, C, H, W = x.shape
    P = th * tw
    Hb, Wb = 2 * th + 2, 2 * tw + 2
    pb = np.zeros((Hb, Wb), x.dtype)   # the padded plane; its border stays zero
    t = np.empty((4, Wb), x.dtype)
    for n in range(n0, n1):
        for c in range(C):
            for i in range(H):
                pb[pad_r + i, pad_c:pad_c + W] = x[n, c, i, :]
            for ti in range(th):
                r0 = pb[2 * ti]
                r1 = pb[2 * ti + 1]
                r2 = pb[2 * ti + 2]
                r3 = pb[2 * ti + 3]
                t0 = t[0]
                t1 = t[1]
                t2 = t[2]
                t3 = t[3]
                for j in range(Wb):
                    t0[j] = r0[j] - r2[j]
                    t1[j] = r1[j] + r2[j]
                    t2[j] = r2[j] - r1[j]
                    t3[j] = r1[j] - r3[j]
                base = (n - n0) * P + ti * tw
                for r in range(4):
                    tr = t[r]
                    v0 = V[4 * r, c, base:base + tw]
                    v1 = V[4 * r + 1, c, base:base + tw]
                    v2 = V[4 * r + 2, c, base:base + tw]
                    v3 = V[4 * r + 3, c, base:base + tw]
                    for j in range(tw):
                        a = tr[2 * j]
                        b = tr[2 * j + 1]
                        e = tr[2 * j + 2]
                        d = tr[2 * j + 3]
                        v0[j] = a - e
                        v1[j] = b + e
                        v2[j] = e - b
                        v3[j] = b - d


@_jit
def output_tiles(M, y, th, tw, n0, n1, bias, has_bias, add):  # pragma: no cover - compiled
    """``y[n, f]`` (write, or add when ``add``) = ``A^T m A`` (+ ``bias[f]``) for each tile's
    16 values ``m`` in ``M[:, f, p]``; blocks past the output's edge are cut off."""
    N, F, Ho, Wo = y.shape
    P = th * tw
    t = np.empty((8, tw), M.dtype)
    u = np.empty((2, tw), M.dtype)
    ne = (Wo + 1) // 2
    no = Wo // 2
    for n in range(n0, n1):
        for f in range(F):
            bf = bias[f] if has_bias else M.dtype.type(0)
            for ti in range(th):
                base = (n - n0) * P + ti * tw
                for s in range(4):
                    m0 = M[s, f, base:base + tw]
                    m1 = M[4 + s, f, base:base + tw]
                    m2 = M[8 + s, f, base:base + tw]
                    m3 = M[12 + s, f, base:base + tw]
                    ts = t[s]
                    t4 = t[4 + s]
                    for j in range(tw):
                        a1 = m1[j]
                        a2 = m2[j]
                        ts[j] = m0[j] + a1 + a2
                        t4[j] = a1 - a2 - m3[j]
                for h in range(2):
                    o = 2 * ti + h
                    if o >= Ho:
                        break
                    t0 = t[4 * h]
                    t1 = t[4 * h + 1]
                    t2 = t[4 * h + 2]
                    t3 = t[4 * h + 3]
                    u0 = u[0]
                    u1 = u[1]
                    for j in range(tw):
                        u0[j] = t0[j] + t1[j] + t2[j] + bf
                        u1[j] = t1[j] - t2[j] - t3[j] + bf
                    row = y[n, f, o]
                    if add:
                        row[0::2] += u0[:ne]
                        row[1::2] += u1[:no]
                    else:
                        row[0::2] = u0[:ne]
                        row[1::2] = u1[:no]



@_jit
def gradient_tiles(dy, D, th, tw, n0, n1):  # pragma: no cover - compiled
    """``D[k, f, p]`` = position ``k`` of ``A e A^T`` for the 2x2 block ``e`` of the output
    gradient ``dy[n, f]`` at tile ``p`` (zeros past the edge): the weight gradient's
    transform, ``dU[k] = sum_p D[k, :, p] V[k, :, p]^T``."""
    N, F, Ho, Wo = dy.shape
    P = th * tw
    e = np.zeros((2, 2 * tw), dy.dtype)   # the tile row's two output rows, zero past the edge
    r = np.empty((4, 2 * tw), dy.dtype)
    for n in range(n0, n1):
        for f in range(F):
            for ti in range(th):
                for h in range(2):
                    o = 2 * ti + h
                    if o < Ho:
                        e[h, :Wo] = dy[n, f, o, :]
                    else:
                        e[h, :] = 0
                e0 = e[0]
                e1 = e[1]
                r0 = r[0]
                r1 = r[1]
                r2 = r[2]
                r3 = r[3]
                for j in range(2 * tw):
                    r0[j] = e0[j]
                    r1[j] = e0[j] + e1[j]
                    r2[j] = e0[j] - e1[j]
                    r3[j] = -e1[j]
                base = (n - n0) * P + ti * tw
                for s in range(4):
                    rs = r[s]
                    d0 = D[4 * s, f, base:base + tw]
                    d1 = D[4 * s + 1, f, base:base + tw]
                    d2 = D[4 * s + 2, f, base:base + tw]
                    d3 = D[4 * s + 3, f, base:base + tw]
                    for j in range(tw):
                        a = rs[2 * j]
                        b = rs[2 * j + 1]
                        d0[j] = a
                        d1[j] = a + b
                        d2[j] = a - b
                        d3[j] = -b
