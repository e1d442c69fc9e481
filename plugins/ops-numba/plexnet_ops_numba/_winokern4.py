"""numba kernels of the Winograd F(4x4, 3x3) convolution (``winograd.py``): the input
transform ``V = B^T d B`` of every 6x6 input tile, the output transform ``Y = A^T M A`` of
every tile's 36 GEMM results into its 4x4 output block, and the weight gradient's
transform ``A e A^T`` of every 4x4 block of the output gradient.

The matrices are Lavin & Gray's for the interpolation points 0, 1, -1, 2, -2 and infinity
(those of oneDNN and cuDNN), written out term by term: most entries are 0 or +-1.

Channels last: ``V[k, p, c]``, ``M[k, p, f]``, ``D[k, p, f]`` with ``k = 6 * row + column``
the 36 transform positions and ``p`` the tile (sample, tile row, tile column) of the chunk.
Every inner loop runs over the channels (contiguous, vectorised by LLVM), so a
tile costs the same per channel whatever the image size; F(2x2, 3x3)'s kernels
(``_winokern``) run over the tiles of a tile row instead, which for ResNet's 8x8 and 4x4
stages is one to four elements. Each sample is first copied channels-last into a padded
buffer (one pass over the input) and each output sample copied back (one pass over the
output)."""
from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(nogil=True, cache=True)


#: the channel / column block of the layout copies: 8x8 blocks took half the time of a
#: plain loop (whose stores stride over whole pixels)
_B = 8


@_jit
def _to_channels_last(src, dst, r0, c0):  # pragma: no cover - compiled
    """``dst[r0 + i, c0 + j, c] = src[c, i, j]`` for one sample ``src`` (C, H, W)."""
    C, H, W = src.shape
    B = _B
    for i in range(H):
        row = dst[r0 + i]
        for cb in range(0, C - C % B, B):
            for jb in range(0, W - W % B, B):
                for cc in range(B):
                    for jj in range(B):
                        row[c0 + jb + jj, cb + cc] = src[cb + cc, i, jb + jj]
            for j in range(W - W % B, W):
                for cc in range(B):
                    row[c0 + j, cb + cc] = src[cb + cc, i, j]
        for c in range(C - C % B, C):
            for j in range(W):
                row[c0 + j, c] = src[c, i, j]


@_jit
def _from_channels_last(src, dst, r0, c0, add, bias, has_bias):  # pragma: no cover - compiled
    """``dst[c, i, j] (=, or += when add) src[r0 + i, c0 + j, c] (+ bias[c])`` for one
    sample ``dst`` (C, H, W)."""
    C, H, W = dst.shape
    B = _B
    zero = dst.dtype.type(0)
    for i in range(H):
        row = src[r0 + i]
        for cb in range(0, C - C % B, B):
            for jb in range(0, W - W % B, B):
                for cc in range(B):
                    bc = bias[cb + cc] if has_bias else zero
                    for jj in range(B):
                        v = row[c0 + jb + jj, cb + cc] + bc
                        if add:
                            dst[cb + cc, i, jb + jj] += v
                        else:
                            dst[cb + cc, i, jb + jj] = v
            for j in range(W - W % B, W):
                for cc in range(B):
                    v = row[c0 + j, cb + cc] + (bias[cb + cc] if has_bias else zero)
                    if add:
                        dst[cb + cc, i, j] += v
                    else:
                        dst[cb + cc, i, j] = v
        for c in range(C - C % B, C):
            bc = bias[c] if has_bias else zero
            for j in range(W):
                v = row[c0 + j, c] + bc
                if add:
                    dst[c, i, j] += v
                else:
                    dst[c, i, j] = v


@_jit
def input_tiles(x, V, pad_r, pad_c, th, tw, n0, n1):  # pragma: no cover - compiled
    """``V[k, (n - n0) * th * tw + i * tw + j, c]`` = position ``k`` of ``B^T d B`` for the
    6x6 tile ``d`` at rows ``4i - pad_r ..``, columns ``4j - pad_c ..`` of ``x[n, c]`` (zeros
    outside), for samples ``n0 <= n < n1``."""
    # integer literal * float32 element is float64 in numba (2-2.5x slower: no vectors)
    two, four, five = x.dtype.type(2), x.dtype.type(4), x.dtype.type(5)
    N, C, H, W = x.shape
    P = th * tw
    xb = np.zeros((4 * th + 2, 4 * tw + 2, C), x.dtype)   # padded, channels last; border stays 0
    t = np.empty((36, C), x.dtype)
    for n in range(n0, n1):
        _to_channels_last(x[n], xb, pad_r, pad_c)
        for ti in range(th):
            R = 4 * ti
            for tj in range(tw):
                Q = 4 * tj
                p = (n - n0) * P + ti * tw + tj
                for r in range(6):   # B along tile row r: t[6 b + r]
                    row = xb[R + r]
                    s0 = row[Q]
                    s1 = row[Q + 1]
                    s2 = row[Q + 2]
                    s3 = row[Q + 3]
                    s4 = row[Q + 4]
                    s5 = row[Q + 5]
                    t0 = t[r]
                    t1 = t[6 + r]
                    t2 = t[12 + r]
                    t3 = t[18 + r]
                    t4 = t[24 + r]
                    t5 = t[30 + r]
                    for c in range(C):
                        a = s1[c]
                        b = s2[c]
                        d = s3[c]
                        e = s4[c]
                        t0[c] = four * s0[c] - five * b + e
                        t1[c] = e + d - four * (a + b)
                        t2[c] = e - d + four * (a - b)
                        t3[c] = e - b + two * (d - a)
                        t4[c] = e - b - two * (d - a)
                        t5[c] = four * a - five * d + s5[c]
                for q in range(6):   # then B^T down column q: V[6 a + q]
                    k = 6 * q
                    u0 = t[k]
                    u1 = t[k + 1]
                    u2 = t[k + 2]
                    u3 = t[k + 3]
                    u4 = t[k + 4]
                    u5 = t[k + 5]
                    v0 = V[q, p]
                    v1 = V[6 + q, p]
                    v2 = V[12 + q, p]
                    v3 = V[18 + q, p]
                    v4 = V[24 + q, p]
                    v5 = V[30 + q, p]
                    for c in range(C):
                        a = u1[c]
                        b = u2[c]
                        d = u3[c]
                        e = u4[c]
                        v0[c] = four * u0[c] - five * b + e
                        v1[c] = e + d - four * (a + b)
                        v2[c] = e - d + four * (a - b)
                        v3[c] = e - b + two * (d - a)
                        v4[c] = e - b - two * (d - a)
                        v5[c] = four * a - five * d + u5[c]


@_jit
def output_tiles(M, y, th, tw, n0, n1, bias, has_bias, add):  # pragma: no cover - compiled
    """``y[n, f]`` (write, or add when ``add``) = ``A^T m A`` (+ ``bias[f]``) for each tile's
    36 values ``m`` in ``M[:, p, f]``; blocks past the output's edge are cut off."""
    # integer literal * float32 element is float64 in numba (2-2.5x slower: no vectors)
    two, four, eight = M.dtype.type(2), M.dtype.type(4), M.dtype.type(8)
    N, F, Ho, Wo = y.shape
    P = th * tw
    yb = np.empty((4 * th, 4 * tw, F), M.dtype)   # one sample's output, channels last
    t = np.empty((24, F), M.dtype)
    for n in range(n0, n1):
        for ti in range(th):
            R = 4 * ti
            for tj in range(tw):
                Q = 4 * tj
                p = (n - n0) * P + ti * tw + tj
                for k in range(6):   # A^T down each column: t[6 h + k]
                    m0 = M[k, p]
                    m1 = M[6 + k, p]
                    m2 = M[12 + k, p]
                    m3 = M[18 + k, p]
                    m4 = M[24 + k, p]
                    m5 = M[30 + k, p]
                    t0 = t[k]
                    t1 = t[6 + k]
                    t2 = t[12 + k]
                    t3 = t[18 + k]
                    for f in range(F):
                        s = m1[f] + m2[f]
                        d = m1[f] - m2[f]
                        s2 = m3[f] + m4[f]
                        d2 = m3[f] - m4[f]
                        t0[f] = m0[f] + s + s2
                        t1[f] = d + two * d2
                        t2[f] = s + four * s2
                        t3[f] = d + eight * d2 + m5[f]
                for h in range(4):   # then along each row
                    k = 6 * h
                    c0 = t[k]
                    c1 = t[k + 1]
                    c2 = t[k + 2]
                    c3 = t[k + 3]
                    c4 = t[k + 4]
                    c5 = t[k + 5]
                    o0 = yb[R + h, Q]
                    o1 = yb[R + h, Q + 1]
                    o2 = yb[R + h, Q + 2]
                    o3 = yb[R + h, Q + 3]
                    for f in range(F):
                        s = c1[f] + c2[f]
                        d = c1[f] - c2[f]
                        s2 = c3[f] + c4[f]
                        d2 = c3[f] - c4[f]
                        o0[f] = c0[f] + s + s2
                        o1[f] = d + two * d2
                        o2[f] = s + four * s2
                        o3[f] = d + eight * d2 + c5[f]
        _from_channels_last(yb, y[n], 0, 0, add, bias, has_bias)


@_jit
def gradient_tiles(dy, D, th, tw, n0, n1):  # pragma: no cover - compiled
    """``D[k, p, f]`` = position ``k`` of ``A e A^T`` for the 4x4 block ``e`` of the output
    gradient ``dy[n, f]`` at tile ``p`` (zeros past the edge): the weight gradient's
    transform, ``dU[k] = sum_p D[k, p, :]^T V[k, p, :]``."""
    # integer literal * float32 element is float64 in numba (2-2.5x slower: no vectors)
    two, four, eight = dy.dtype.type(2), dy.dtype.type(4), dy.dtype.type(8)
    N, F, Ho, Wo = dy.shape
    P = th * tw
    eb = np.zeros((4 * th, 4 * tw, F), dy.dtype)   # channels last; zero past the edge
    t = np.empty((24, F), dy.dtype)
    for n in range(n0, n1):
        _to_channels_last(dy[n], eb, 0, 0)
        for ti in range(th):
            R = 4 * ti
            for tj in range(tw):
                Q = 4 * tj
                p = (n - n0) * P + ti * tw + tj
                for h in range(4):   # A along row h of the 4x4 block: t[4 b + h]
                    row = eb[R + h]
                    e0 = row[Q]
                    e1 = row[Q + 1]
                    e2 = row[Q + 2]
                    e3 = row[Q + 3]
                    t0 = t[h]
                    t1 = t[4 + h]
                    t2 = t[8 + h]
                    t3 = t[12 + h]
                    t4 = t[16 + h]
                    t5 = t[20 + h]
                    for f in range(F):
                        s = e0[f] + e2[f]
                        d = e1[f] + e3[f]
                        s4 = e0[f] + four * e2[f]
                        d8 = two * e1[f] + eight * e3[f]
                        t0[f] = e0[f]
                        t1[f] = s + d
                        t2[f] = s - d
                        t3[f] = s4 + d8
                        t4[f] = s4 - d8
                        t5[f] = e3[f]
                for b in range(6):   # then A down column b: D[6 a + b]
                    k = 4 * b
                    a = t[k]
                    bb = t[k + 1]
                    c = t[k + 2]
                    dd = t[k + 3]
                    g0 = D[b, p]
                    g1 = D[6 + b, p]
                    g2 = D[12 + b, p]
                    g3 = D[18 + b, p]
                    g4 = D[24 + b, p]
                    g5 = D[30 + b, p]
                    for f in range(F):
                        s = a[f] + c[f]
                        q = bb[f] + dd[f]
                        s4 = a[f] + four * c[f]
                        d8 = two * bb[f] + eight * dd[f]
                        g0[f] = a[f]
                        g1[f] = s + q
                        g2[f] = s - q
                        g3[f] = s4 + d8
                        g4[f] = s4 - d8
                        g5[f] = dd[f]


@_jit
def filter_tiles(w, U, rotated, f0, f1):  # pragma: no cover - compiled
    """``U[k, f, c]`` = position ``k`` of ``G g G^T`` for the 3x3 filter ``g = w[f, c]``
    (rotated by 180 degrees when ``rotated``), for G of the points 0, +-1, +-2, infinity;
    filters ``f0 <= f < f1``."""
    C = w.shape[1]
    g = np.empty((9, C), w.dtype)    # one filter row's weights, tap-major (vectors over c)
    a = np.empty((18, C), w.dtype)   # G down each of the 3 columns: a[3 i + j]
    s6 = w.dtype.type(1.0 / 6.0)
    s12 = w.dtype.type(1.0 / 12.0)
    s24 = w.dtype.type(1.0 / 24.0)
    s4 = w.dtype.type(0.25)
    w9 = w.reshape((w.shape[0], C, 9))   # a 180-degree rotation reverses the 9 taps
    for f in range(f0, f1):
        wf = w9[f]
        if rotated:
            for c in range(C):
                for j in range(9):
                    g[j, c] = wf[c, 8 - j]
        else:
            for c in range(C):
                for j in range(9):
                    g[j, c] = wf[c, j]
        for r in range(3):   # G along filter row r: a[3 b + r]
            g0 = g[3 * r]
            g1 = g[3 * r + 1]
            g2 = g[3 * r + 2]
            a0 = a[r]
            a1 = a[3 + r]
            a2 = a[6 + r]
            a3 = a[9 + r]
            a4 = a[12 + r]
            a5 = a[15 + r]
            for c in range(C):
                p = g0[c] + g2[c]
                a0[c] = s4 * g0[c]
                a1[c] = -s6 * (p + g1[c])
                a2[c] = -s6 * (p - g1[c])
                a3[c] = s24 * g0[c] + s12 * g1[c] + s6 * g2[c]
                a4[c] = s24 * g0[c] - s12 * g1[c] + s6 * g2[c]
                a5[c] = g2[c]
        for b in range(6):   # then G down column b: U[6 a + b]
            b0 = a[3 * b]
            b1 = a[3 * b + 1]
            b2 = a[3 * b + 2]
            u0 = U[b, f]
            u1 = U[6 + b, f]
            u2 = U[12 + b, f]
            u3 = U[18 + b, f]
            u4 = U[24 + b, f]
            u5 = U[30 + b, f]
            for c in range(C):
                p = b0[c] + b2[c]
                u0[c] = s4 * b0[c]
                u1[c] = -s6 * (p + b1[c])
                u2[c] = -s6 * (p - b1[c])
                u3[c] = s24 * b0[c] + s12 * b1[c] + s6 * b2[c]
                u4[c] = s24 * b0[c] - s12 * b1[c] + s6 * b2[c]
                u5[c] = b2[c]


@_jit
def filter_gradient(dU, dw, add, f0, f1):  # pragma: no cover - compiled
    """``dw[f, c] (=, or += when add) G^T dU[:, f, c] G`` for ``f0 <= f < f1``: the weight
    gradient from the gradient of the transformed filters (the transpose of
    ``filter_tiles``)."""
    C = dw.shape[1]
    a = np.empty((18, C), dw.dtype)   # G^T along each of the 6 rows: a[6 j + i]
    o = np.empty((9, C), dw.dtype)    # the filter, tap-major (vectors over c)
    s6 = dw.dtype.type(1.0 / 6.0)
    s12 = dw.dtype.type(1.0 / 12.0)
    s24 = dw.dtype.type(1.0 / 24.0)
    s4 = dw.dtype.type(0.25)
    dw9 = dw.reshape((dw.shape[0], C, 9))
    for f in range(f0, f1):
        for i in range(6):
            u0 = dU[6 * i, f]
            u1 = dU[6 * i + 1, f]
            u2 = dU[6 * i + 2, f]
            u3 = dU[6 * i + 3, f]
            u4 = dU[6 * i + 4, f]
            u5 = dU[6 * i + 5, f]
            b0 = a[i]
            b1 = a[6 + i]
            b2 = a[12 + i]
            for c in range(C):
                m = u1[c] + u2[c]
                d = u1[c] - u2[c]
                m2 = u3[c] + u4[c]
                d2 = u3[c] - u4[c]
                b0[c] = s4 * u0[c] - s6 * m + s24 * m2
                b1[c] = -s6 * d + s12 * d2
                b2[c] = -s6 * m + s6 * m2 + u5[c]
        for j in range(3):   # then down column j: o[3 r + j]
            k = 6 * j
            r0 = a[k]
            r1 = a[k + 1]
            r2 = a[k + 2]
            r3 = a[k + 3]
            r4 = a[k + 4]
            r5 = a[k + 5]
            o0 = o[j]
            o1 = o[3 + j]
            o2 = o[6 + j]
            for c in range(C):
                m = r1[c] + r2[c]
                d = r1[c] - r2[c]
                m2 = r3[c] + r4[c]
                d2 = r3[c] - r4[c]
                o0[c] = s4 * r0[c] - s6 * m + s24 * m2
                o1[c] = -s6 * d + s12 * d2
                o2[c] = -s6 * m + s6 * m2 + r5[c]
        wf = dw9[f]
        if add:
            for c in range(C):
                for j in range(9):
                    wf[c, j] += o[j, c]
        else:
            for c in range(C):
                for j in range(9):
                    wf[c, j] = o[j, c]


@_jit
def input_adjoint(dV, dx, pad_r, pad_c, th, tw, n0, n1, add):  # pragma: no cover - compiled
    """``dx[n]`` (write, or add when ``add``) = the sum over tiles of ``B dv B^T`` placed at
    the tile's 6x6 window (overlapping windows add up; padding is cut off), for the 36
    values ``dv`` of each tile in ``dV[:, p, c]``: the transpose of ``input_tiles``, i.e.
    the data gradient from the gradient of the transformed input."""
    # integer literal * float32 element is float64 in numba (2-2.5x slower: no vectors)
    two, four, five = dx.dtype.type(2), dx.dtype.type(4), dx.dtype.type(5)
    N, C, H, W = dx.shape
    P = th * tw
    xb = np.empty((4 * th + 2, 4 * tw + 2, C), dx.dtype)
    t = np.empty((36, C), dx.dtype)
    for n in range(n0, n1):
        xb[:] = 0
        for ti in range(th):
            R = 4 * ti
            for tj in range(tw):
                Q = 4 * tj
                p = (n - n0) * P + ti * tw + tj
                for a in range(6):   # B along row a of the 6x6: t[6 j + a]
                    v0 = dV[6 * a, p]
                    v1 = dV[6 * a + 1, p]
                    v2 = dV[6 * a + 2, p]
                    v3 = dV[6 * a + 3, p]
                    v4 = dV[6 * a + 4, p]
                    v5 = dV[6 * a + 5, p]
                    t0 = t[a]
                    t1 = t[6 + a]
                    t2 = t[12 + a]
                    t3 = t[18 + a]
                    t4 = t[24 + a]
                    t5 = t[30 + a]
                    for c in range(C):
                        s = v1[c] + v2[c]
                        d = v2[c] - v1[c]
                        s2 = v3[c] + v4[c]
                        d2 = v4[c] - v3[c]
                        t0[c] = four * v0[c]
                        t1[c] = four * d + two * d2 + four * v5[c]
                        t2[c] = -five * v0[c] - four * s - s2
                        t3[c] = -d - two * d2 - five * v5[c]
                        t4[c] = v0[c] + s + s2
                        t5[c] = v5[c]
                for j in range(6):   # then down column j, added into the window
                    k = 6 * j
                    u0 = t[k]
                    u1 = t[k + 1]
                    u2 = t[k + 2]
                    u3 = t[k + 3]
                    u4 = t[k + 4]
                    u5 = t[k + 5]
                    o0 = xb[R, Q + j]
                    o1 = xb[R + 1, Q + j]
                    o2 = xb[R + 2, Q + j]
                    o3 = xb[R + 3, Q + j]
                    o4 = xb[R + 4, Q + j]
                    o5 = xb[R + 5, Q + j]
                    for c in range(C):
                        s = u1[c] + u2[c]
                        d = u2[c] - u1[c]
                        s2 = u3[c] + u4[c]
                        d2 = u4[c] - u3[c]
                        o0[c] += four * u0[c]
                        o1[c] += four * d + two * d2 + four * u5[c]
                        o2[c] += -five * u0[c] - four * s - s2
                        o3[c] += -d - two * d2 - five * u5[c]
                        o4[c] += u0[c] + s + s2
                        o5[c] += u5[c]
        _from_channels_last(xb, dx[n], pad_r, pad_c, add, dx[n, :, 0, 0], False)

