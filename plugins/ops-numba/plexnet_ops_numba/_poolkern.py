"""numba kernels of Pooling (max / avg / sum), on arrays seen as ``(N*C, D, H, W)``
(2-D and 1-D pooling as 3-D with unit leading axes).

They reproduce ops-basic's arithmetic exactly (``nn/pooling.py``): padded positions are
``-inf`` for max (they never win, but an all-padding window is ``-inf``) and 0 for sums;
the max propagates NaN; sums run in row-major window order in the array's dtype; avg
divides by ops-basic's divisor array; max backward routes each output gradient to the
first position of its window that equals the output (row-major; padding included), to
the last position when none does and the output is not NaN, and adds ``dy * 0`` to the
others (so a NaN or infinite ``dy`` spreads as in ops-basic); gradient contributions of
overlapping windows are added in row-major offset order, as ops-basic's slice additions.

Each channel is first copied into a buffer padded with the fill value (when the windows
reach past the input), so that the window loops carry no bounds tests, and with a
stride over 1 split into column phases (``_split_phases``), so that every inner loop runs
over a contiguous row; the backward scatters into zeroed per-channel phases offset by
offset (ops-basic's order) and then crops them into ``dx``. Selections are written as
``a if cond else b`` on non-short-circuit conditions (``|``, ``&``): with random data,
branches on comparisons mispredict (LeNet's max-pool backward took 1.8 ms with an
``elif`` chain, 0.6 ms without).

Geometry arguments are 3-tuples ``(kd, kh, kw)`` etc.; ``ext`` is the padded extent.
Every kernel is compiled with ``nogil`` (engine workers run them concurrently) and
cached on disk."""
from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(nogil=True, cache=True, error_model="numpy")   # no per-element zero-division test (see _phaseplanes)

MAX, AVG, SUM = 0, 1, 2


@_jit
def _source(x, c, buf, p, padded):  # pragma: no cover - compiled
    """Channel ``c`` of ``x``, copied into ``buf`` (whose border holds the fill) when
    ``padded``."""
    if not padded:
        return x[c]
    D, H, W = x.shape[1], x.shape[2], x.shape[3]
    for d in range(D):
        for h in range(H):
            for q in range(W):
                buf[p[0] + d, p[1] + h, p[2] + q] = x[c, d, h, q]
    return buf


@_jit
def _split_phases(src, ph):  # pragma: no cover - compiled
    """``ph[q, d, h, j] = src[d, h, j * sw + q]`` (``sw = ph.shape[0]``): the columns of a
    (padded) channel split by their residue modulo the stride, so that the window
    offset ``e`` of consecutive outputs is a contiguous run of phase ``e % sw``."""
    sw = ph.shape[0]
    ED, EH, EW = src.shape
    for d in range(ED):
        for h in range(EH):
            row = src[d, h]
            for q in range(sw):
                dst = ph[q, d, h]
                for j in range((EW - q + sw - 1) // sw):
                    dst[j] = row[j * sw + q]


@_jit
def _max_row(arow, row, sw):  # pragma: no cover - compiled
    if sw == 1:   # unit stride: a loop LLVM vectorises
        for ow in range(arow.shape[0]):
            v = row[ow]
            r = arow[ow]
            arow[ow] = v if (v > r) | (v != v) else r
    else:
        for ow in range(arow.shape[0]):
            v = row[ow * sw]
            r = arow[ow]
            arow[ow] = v if (v > r) | (v != v) else r


@_jit
def _sum_row(arow, row, sw):  # pragma: no cover - compiled
    if sw == 1:
        for ow in range(arow.shape[0]):
            arow[ow] += row[ow]
    else:
        for ow in range(arow.shape[0]):
            arow[ow] += row[ow * sw]


@_jit
def pool_forward(x, out, k, s, p, ext, padded, mode, div, add, zero, ninf):  # pragma: no cover - compiled
    """``out (=|+=) pool(x)``; ``div`` (OD, OH, OW): avg's divisor. Per channel, window
    offset by window offset into an accumulator (ops-basic's order; long inner loops
    over the output row instead of short ones over a window)."""
    NC = x.shape[0]
    OD, OH, OW = out.shape[1], out.shape[2], out.shape[3]
    kd, kh, kw = k
    sd, sh, sw = s
    buf = np.empty(ext, dtype=x.dtype)
    buf[...] = ninf if mode == MAX else zero
    acc = np.empty((OD, OH, OW), dtype=x.dtype)
    ph = np.empty((sw, ext[0], ext[1], (ext[2] + sw - 1) // sw), dtype=x.dtype)
    for c in range(NC):
        src = _source(x, c, buf, p, padded)
        if sw > 1:
            _split_phases(src, ph)
        acc[...] = ninf if mode == MAX else zero
        for a in range(kd):
            for b in range(kh):
                for e in range(kw):
                    for od in range(OD):
                        for oh in range(OH):
                            if sw > 1:
                                row = ph[e % sw, od * sd + a, oh * sh + b, e // sw:]
                            else:
                                row = src[od * sd + a, oh * sh + b, e:]
                            if mode == MAX:
                                _max_row(acc[od, oh], row, 1)
                            else:
                                _sum_row(acc[od, oh], row, 1)
        oc = out[c]
        if mode == AVG:
            if add:
                for od in range(OD):
                    for oh in range(OH):
                        for ow in range(OW):
                            oc[od, oh, ow] += acc[od, oh, ow] / div[od, oh, ow]
            else:
                for od in range(OD):
                    for oh in range(OH):
                        for ow in range(OW):
                            oc[od, oh, ow] = acc[od, oh, ow] / div[od, oh, ow]
        elif add:
            oc += acc
        else:
            oc[...] = acc


@_jit
def pool2x2_forward(x, out, mode, div, add, zero):  # pragma: no cover - compiled
    """2x2 windows, stride 2, no padding, tiling the input (LeNet's pooling), unrolled:
    ``x`` (NC, H, W), ``out`` (NC, H/2, W/2); ``div`` (H/2, W/2)."""
    NC, OH, OW = out.shape
    for c in range(NC):
        for oh in range(OH):
            h = 2 * oh
            for ow in range(OW):
                q = 2 * ow
                a = x[c, h, q]
                b = x[c, h, q + 1]
                d = x[c, h + 1, q]
                e = x[c, h + 1, q + 1]
                if mode == MAX:
                    r = a if (a > b) | (a != a) else b
                    r = d if (d > r) | (d != d) else r
                    r = e if (e > r) | (e != e) else r
                else:
                    r = (((zero + a) + b) + d) + e
                    if mode == AVG:
                        r = r / div[oh, ow]
                if add:
                    out[c, oh, ow] += r
                else:
                    out[c, oh, ow] = r


@_jit
def _winner(src, y, d0, h0, w0, k):  # pragma: no cover - compiled
    """Row-major index in the window at ``(d0, h0, w0)`` of ``src`` (padded) of the
    position max backward routes ``y``'s gradient to (-1: none)."""
    kd, kh, kw = k
    n = kd * kh * kw
    win = n
    i = 0
    for a in range(kd):
        for b in range(kh):
            for e in range(kw):
                hit = (src[d0 + a, h0 + b, w0 + e] == y) & (win == n)
                win = i if hit else win
                i += 1
    if win == n:
        win = n - 1 if (n > 1) & (y == y) else -1
    return win


@_jit
def pool_backward(x, y, dy, dx, k, s, p, ext, padded, mode, div, add, zero, ninf):  # pragma: no cover - compiled
    """``dx (=|+=)`` the pooling gradient (any geometry): per channel, the contributions
    scattered into a zeroed padded buffer offset by offset, then cropped into ``dx``."""
    NC, D, H, W = dx.shape
    OD, OH, OW = dy.shape[1], dy.shape[2], dy.shape[3]
    kd, kh, kw = k
    sd, sh, sw = s
    pd, ph, pw = p
    xbuf = np.empty(ext, dtype=dx.dtype)
    xbuf[...] = ninf
    PQ = (ext[2] + sw - 1) // sw
    gph = np.empty((sw, ext[0], ext[1], PQ), dtype=dx.dtype)   # the gradient's column phases
    win = np.empty((OD, OH, OW), dtype=np.int64)
    gd = np.empty((OD, OH, OW), dtype=dx.dtype)
    for c in range(NC):
        for od in range(OD):
            for oh in range(OH):
                for ow in range(OW):
                    g = dy[c, od, oh, ow]
                    gd[od, oh, ow] = g / div[od, oh, ow] if mode == AVG else g
        if mode == MAX:
            src = _source(x, c, xbuf, p, padded)
            for od in range(OD):
                for oh in range(OH):
                    for ow in range(OW):
                        win[od, oh, ow] = _winner(src, y[c, od, oh, ow], od * sd, oh * sh, ow * sw, k)
        gph[...] = zero
        i = 0
        for a in range(kd):
            for b in range(kh):
                for e in range(kw):
                    for od in range(OD):
                        for oh in range(OH):
                            grow = gph[e % sw, od * sd + a, oh * sh + b, e // sw:e // sw + OW]
                            grad = gd[od, oh]
                            if mode == MAX:
                                wrow = win[od, oh]
                                for ow in range(OW):
                                    g = grad[ow]
                                    grow[ow] += g if wrow[ow] == i else g * zero
                            else:
                                for ow in range(OW):
                                    grow[ow] += grad[ow]
                    i += 1
        for d in range(D):
            for h in range(H):
                for q in range(W):
                    t = pw + q
                    v = gph[t % sw, pd + d, ph + h, t // sw]
                    if add:
                        dx[c, d, h, q] += v
                    else:
                        dx[c, d, h, q] = v


@_jit
def pool_backward_tiles(x, y, dy, dx, k, mode, div, add, zero):  # pragma: no cover - compiled
    """The gradient where the windows tile the input exactly (kernel == stride, no
    padding): each position belongs to one window and is written once (no zeroing pass,
    no buffer)."""
    NC, OD, OH, OW = dy.shape
    kd, kh, kw = k
    for c in range(NC):
        src = x[c]
        for od in range(OD):
            for oh in range(OH):
                for ow in range(OW):
                    g = dy[c, od, oh, ow]
                    wi = -2
                    if mode == MAX:
                        wi = _winner(src, y[c, od, oh, ow], od * kd, oh * kh, ow * kw, k)
                        g0 = g * zero
                    elif mode == AVG:
                        g = g / div[od, oh, ow]
                        g0 = g
                    else:
                        g0 = g
                    i = 0
                    for a in range(kd):
                        for b in range(kh):
                            for e in range(kw):
                                v = g if (wi == i) | (wi == -2) else g0
                                if add:
                                    dx[c, od * kd + a, oh * kh + b, ow * kw + e] += zero + v
                                else:
                                    dx[c, od * kd + a, oh * kh + b, ow * kw + e] = v
                                i += 1


@_jit
def _max2x2_backward(x, y, dy, dx, zero):  # pragma: no cover - compiled
    """``pool2x2_backward`` for max, req write: one loop per ``dx`` row. Both rows written
    in one loop interleave over ``oh``, LLVM's alias check (hoisted out of that loop) fails
    and its scalar loop runs; so did a branch around the stores, and ``&`` / ``not`` on
    the comparisons. Here chained selects, ``r`` being ``g`` while no position has matched
    yet; same values. LeNet's pool1 backward 0.45 -> 0.24 ms, pool2 0.21 -> 0.15."""
    NC, OH, OW = dy.shape
    for c in range(NC):
        for oh in range(OH):
            h = 2 * oh
            x0 = x[c, h]
            x1 = x[c, h + 1]
            m = y[c, oh]
            gr = dy[c, oh]
            d = dx[c, h]
            for ow in range(OW):
                q = 2 * ow
                g = gr[ow]
                mv = m[ow]
                g0 = g * zero
                d[q] = g if x0[q] == mv else g0
                r = g0 if x0[q] == mv else g
                d[q + 1] = r if x0[q + 1] == mv else g0
            d = dx[c, h + 1]
            for ow in range(OW):
                q = 2 * ow
                g = gr[ow]
                mv = m[ow]
                g0 = g * zero
                r = g0 if x0[q] == mv else g
                r = g0 if x0[q + 1] == mv else r
                d[q] = r if x1[q] == mv else g0
                r = g0 if x1[q] == mv else r
                d[q + 1] = r if mv == mv else g0


@_jit
def pool2x2_backward(x, y, dy, dx, mode, div, add, zero):  # pragma: no cover - compiled
    """``pool_backward_tiles`` for 2x2/2 windows on ``(NC, H, W)`` arrays, unrolled and
    branch-free; max with req write by ``_max2x2_backward``."""
    if mode == MAX and not add:
        _max2x2_backward(x, y, dy, dx, zero)
    else:
        _pool2x2_backward(x, y, dy, dx, mode, div, add, zero)


@_jit
def _pool2x2_backward(x, y, dy, dx, mode, div, add, zero):  # pragma: no cover - compiled
    NC, OH, OW = dy.shape
    for c in range(NC):
        for oh in range(OH):
            h = 2 * oh
            for ow in range(OW):
                q = 2 * ow
                g = dy[c, oh, ow]
                if mode == MAX:
                    m = y[c, oh, ow]
                    g0 = g * zero
                    # the first of the four equal to the max (else the last, unless m is NaN)
                    e0 = x[c, h, q] == m
                    e1 = (x[c, h, q + 1] == m) & (not e0)
                    t = e0 | e1
                    e2 = (x[c, h + 1, q] == m) & (not t)
                    e3 = (m == m) & (not (t | e2))
                    v0 = g if e0 else g0
                    v1 = g if e1 else g0
                    v2 = g if e2 else g0
                    v3 = g if e3 else g0
                else:
                    if mode == AVG:
                        g = g / div[oh, ow]
                    v0 = v1 = v2 = v3 = g
                if add:
                    dx[c, h, q] += zero + v0
                    dx[c, h, q + 1] += zero + v1
                    dx[c, h + 1, q] += zero + v2
                    dx[c, h + 1, q + 1] += zero + v3
                else:
                    dx[c, h, q] = v0
                    dx[c, h, q + 1] = v1
                    dx[c, h + 1, q] = v2
                    dx[c, h + 1, q + 1] = v3
