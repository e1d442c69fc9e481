"""numba kernels on *flat phase planes*: 1-D / 2-D Pooling (max / avg / sum, any kernel,
stride and padding) and strided depthwise convolution, each window offset (kernel
position) one long contiguous loop.

Each channel of the padded input is split by the stride into ``sh x sw`` phase planes
``P[rh, rw, i, j] = padded[i sh + rh, j sw + rw]`` of ``PH x PW`` elements. Window offset
``(a, b)`` of output ``(oh, ow)`` reads ``padded[oh sh + a, ow sw + b]`` =
``P[a % sh, b % sw, oh + a // sh, ow + b // sw]``: in the plane flattened with pitch
``PW``, position ``(a // sh) PW + b // sw + oh PW + ow``. So over the outputs laid out
with the same pitch (``OH x PW``, the columns ``ow >= OW`` computed and dropped) each
offset is one loop over ``OH PW`` consecutive elements, which LLVM vectorises, instead
of ``OH`` loops of ``OW`` as ``_poolkern``'s generic kernels run. Pooling forward +
backward through autograd, against those kernels / MXNet 1.9.1 in one sitting:
SqueezeNet's 3x3/2 max on (8, 96, 109, 109) 19-21 ms against 68-69 / 16; ResNet-50's
3x3/2 pad 1 on (32, 64, 112, 112) 64-66 against 201-204 / 40; 3x3/1 avg on (32, 64, 56,
56) 13-14 against 73-84 (ops-basic's numpy: avg had no numba kernel) / 25.

Pooling: the same arithmetic as ops-basic (``nn/pooling.py``) and ``_poolkern``: offsets
in row-major window order, max with NaN propagation (``v > r or v != v``), sums in the array's dtype,
avg divided by ops-basic's divisor; max backward routes each output's gradient to the
first window position equal to the output (else the last, when the output is not NaN)
and adds ``dy * 0`` at the others, offset by offset. The dropped columns get a zero
gradient, which adds ``+0`` where ops-basic adds nothing: only a ``-0`` can tell.

Depthwise convolution with a stride over 1 (MobileNet's downsampling layers). Stride 1
keeps ``_dwkern``'s padded flat plane: these kernels give its bits there too, but took
10-25 % longer (one thread, forward / backward: (8, 32, 112, 112) 2.50 / 4.58 ms against
2.14 / 4.21; (32, 256, 14, 14) 2.38 / 4.38 against 1.94 / 3.47), the cost of the
phase split's row loops. each output sums its kernel positions in row-major
order, as ``_dwkern``'s kernels (and the strided ones these replaced) do; the data
gradient adds up over the kernel positions in another order than they did. Results equal
ops-basic's to rounding, as ``_dwkern``'s."""
from __future__ import annotations

import numba
import numpy as np

#: error_model="numpy": no zero-division test per element (numba's default raises, which keeps
#: every loop holding a division scalar: avg pooling's crop 4.9 -> 0.6 ms)
_jit = numba.njit(nogil=True, cache=True, error_model="numpy")

MAX, AVG, SUM = 0, 1, 2


@_jit
def _to_phases(xc, P, ph_, pw_):  # pragma: no cover - compiled
    """Channel ``xc`` (H, W) into the interior of the phase planes ``P`` (sh, sw, PH, PW)
    (padding offset ``ph_, pw_``); the planes' other elements keep the fill. Row phase by
    row phase, so that the rows one loop writes stay in their own planes (see
    ``_winokern4``'s rule); stride 2 reads each row once and deinterleaves it into its
    two column phases (2.2 ms for (768, 109, 109), against 10-12 ms with a strided
    gather per phase)."""
    sh, sw = P.shape[0], P.shape[1]
    H, W = xc.shape
    for rh in range(sh):
        h0 = (rh - ph_) % sh            # first input row of this row phase
        i0 = (ph_ + h0) // sh
        nh = (H - h0 + sh - 1) // sh if h0 < H else 0
        if sw == 2:
            pa, ja = pw_ % 2, pw_ // 2             # even input columns: phase, first column
            pb, jb = (pw_ + 1) % 2, (pw_ + 1) // 2  # odd ones
            pairs = W // 2
            A = P[rh, pa]
            B = P[rh, pb]
            for t in range(nh):
                src = xc[h0 + sh * t]
                ra = A[i0 + t, ja:]
                rb = B[i0 + t, jb:]
                for u in range(pairs):
                    ra[u] = src[2 * u]
                    rb[u] = src[2 * u + 1]
                if W % 2:
                    ra[pairs] = src[W - 1]
            continue
        for rw in range(sw):
            q0 = (rw - pw_) % sw        # first input column of this phase
            j0 = (pw_ + q0) // sw
            n = (W - q0 + sw - 1) // sw if q0 < W else 0
            plane = P[rh, rw]
            for t in range(nh):
                # slices, not offset indices: numba's negative-index wraparound on a
                # computed index keeps a loop scalar (docs/ops-numba.md)
                src = xc[h0 + sh * t, q0:]
                row = plane[i0 + t, j0:j0 + n]
                if sw == 1:             # a literal unit stride: a plain vectorised copy
                    for u in range(n):
                        row[u] = src[u]
                else:
                    for u in range(n):
                        row[u] = src[sw * u]


@_jit
def _from_phases(P, dxc, ph_, pw_, add):  # pragma: no cover - compiled
    """``dxc`` (H, W) (=, or += when ``add``) the interior of the phase planes ``P``,
    plane by plane as ``_to_phases``."""
    sh, sw = P.shape[0], P.shape[1]
    H, W = dxc.shape
    for rh in range(sh):
        h0 = (rh - ph_) % sh
        i0 = (ph_ + h0) // sh
        nh = (H - h0 + sh - 1) // sh if h0 < H else 0
        for rw in range(sw):
            q0 = (rw - pw_) % sw
            j0 = (pw_ + q0) // sw
            n = (W - q0 + sw - 1) // sw if q0 < W else 0
            plane = P[rh, rw]
            for t in range(nh):
                dst = dxc[h0 + sh * t, q0:]
                row = plane[i0 + t, j0:j0 + n]
                if sw == 1:
                    if add:
                        for u in range(n):
                            dst[u] += row[u]
                    else:
                        for u in range(n):
                            dst[u] = row[u]
                elif add:
                    for u in range(n):
                        dst[sw * u] += row[u]
                else:
                    for u in range(n):
                        dst[sw * u] = row[u]


@_jit
def pool_forward(x, out, kh, kw, sh, sw, ph_, pw_, PH, PW, mode, div, add, zero,  # pragma: no cover
                 ninf):
    """``out (=|+=) pool(x)`` for ``x`` (NC, H, W), ``out`` (NC, OH, OW); ``div`` (OH, OW):
    avg's divisor; ``PH, PW``: the phase planes' size (``PH`` one row more than the
    windows reach, so every offset's run stays inside its plane)."""
    NC = x.shape[0]
    OH = out.shape[1]
    fill = ninf if mode == MAX else zero
    P = np.empty((sh, sw, PH, PW), dtype=x.dtype)
    P[...] = fill
    Pf = P.reshape((sh, sw, PH * PW))   # the planes flattened (a view: no per-offset ravel)
    L = OH * PW
    acc = np.empty(L, dtype=x.dtype)
    for c in range(NC):
        _to_phases(x[c], P, ph_, pw_)
        acc[:] = fill
        for a in range(kh):
            for b in range(kw):
                off = (a // sh) * PW + b // sw
                src = Pf[a % sh, b % sw, off:off + L]
                if mode == MAX:
                    for i in range(L):
                        v = src[i]
                        r = acc[i]
                        acc[i] = v if (v > r) | (v != v) else r
                else:
                    for i in range(L):
                        acc[i] += src[i]
        _crop(acc, out[c], PW, mode == AVG, div, add)


@_jit
def _crop(acc, oc, PW, avg, div, add):  # pragma: no cover - compiled
    """``oc`` (OH, OW) (=, or += when ``add``) the outputs in ``acc`` (pitch ``PW``), divided
    by ``div`` when ``avg``: one loop nest per case (a branch inside the row loop kept
    the division scalar: 4.7 against 0.7 ms for (2048, 56, 56))."""
    OH, OW = oc.shape
    if avg and add:
        for oh in range(OH):
            row = acc[oh * PW:oh * PW + OW]
            orow = oc[oh]
            drow = div[oh]
            for ow in range(OW):
                orow[ow] += row[ow] / drow[ow]
    elif avg:
        for oh in range(OH):
            row = acc[oh * PW:oh * PW + OW]
            orow = oc[oh]
            drow = div[oh]
            for ow in range(OW):
                orow[ow] = row[ow] / drow[ow]
    elif add:
        for oh in range(OH):
            row = acc[oh * PW:oh * PW + OW]
            orow = oc[oh]
            for ow in range(OW):
                orow[ow] += row[ow]
    else:
        for oh in range(OH):
            row = acc[oh * PW:oh * PW + OW]
            orow = oc[oh]
            for ow in range(OW):
                orow[ow] = row[ow]


@_jit
def _spread(dyc, g, PW, avg, div):  # pragma: no cover - compiled
    """``g`` at pitch ``PW`` = ``dyc`` (OH, OW), divided by ``div`` when ``avg`` (one loop
    nest per case, as ``_crop``)."""
    OH, OW = dyc.shape
    if avg:
        for oh in range(OH):
            grow = g[oh * PW:oh * PW + OW]
            drow = dyc[oh]
            qrow = div[oh]
            for ow in range(OW):
                grow[ow] = drow[ow] / qrow[ow]
    else:
        for oh in range(OH):
            grow = g[oh * PW:oh * PW + OW]
            drow = dyc[oh]
            for ow in range(OW):
                grow[ow] = drow[ow]


@_jit
def pool_backward(x, y, dy, dx, kh, kw, sh, sw, ph_, pw_, PH, PW, mode, div, add, zero,  # pragma: no cover
                  ninf):
    """``dx (=|+=)`` the pooling gradient for ``x``/``dx`` (NC, H, W), ``y``/``dy`` (NC, OH,
    OW): scattered into zeroed phase planes offset by offset, then copied out."""
    NC = dx.shape[0]
    OH, OW = dy.shape[1], dy.shape[2]
    n = kh * kw
    L = OH * PW
    G = np.empty((sh, sw, PH, PW), dtype=dx.dtype)   # the gradient's phase planes
    g = np.zeros(L, dtype=dx.dtype)                  # dy (avg: / div) at pitch PW; 0 past OW
    m = mode == MAX   # the input's phases, the outputs and the winners: max only
    P = np.empty((sh, sw, PH, PW) if m else (1, 1, 1, 1), dtype=dx.dtype)
    P[...] = ninf
    Pf = P.reshape((P.shape[0], P.shape[1], P.shape[2] * P.shape[3]))
    Gf = G.reshape((sh, sw, PH * PW))
    yv = np.zeros(L if m else 1, dtype=dx.dtype)
    win = np.empty(L if m else 1, dtype=np.int64)
    for c in range(NC):
        _spread(dy[c], g, PW, mode == AVG, div)
        if mode == MAX:
            _to_phases(x[c], P, ph_, pw_)
            for oh in range(OH):
                yrow = yv[oh * PW:oh * PW + OW]
                src = y[c, oh]
                for ow in range(OW):
                    yrow[ow] = src[ow]
            win[:] = n
            k = 0
            for a in range(kh):
                for b in range(kw):
                    off = (a // sh) * PW + b // sw
                    src = Pf[a % sh, b % sw, off:off + L]
                    for i in range(L):
                        w = win[i]
                        win[i] = k if (src[i] == yv[i]) & (w == n) else w
                    k += 1
            for i in range(L):
                w = win[i]
                yy = yv[i]
                win[i] = w if w != n else (n - 1 if (n > 1) & (yy == yy) else -1)
        G[...] = zero
        k = 0
        for a in range(kh):
            for b in range(kw):
                off = (a // sh) * PW + b // sw
                dst = Gf[a % sh, b % sw, off:off + L]
                if mode == MAX:
                    for i in range(L):
                        v = g[i]
                        dst[i] += v if win[i] == k else v * zero
                else:
                    for i in range(L):
                        dst[i] += g[i]
                k += 1
        _from_phases(G, dx[c], ph_, pw_, add)


@_jit
def _dw_sizes(H, W, OH, OW, KH, KW, sh, sw, ph_, pw_, dh, dw):  # pragma: no cover - compiled
    """Phase planes' ``(PH, PW)`` for a depthwise convolution (kernel positions ``a dh``,
    ``e dw``) and the run length ``L`` of its outputs at pitch ``PW``."""
    PW = max(OW + ((KW - 1) * dw) // sw, (pw_ + W - 1) // sw + 1)
    PH = max(OH + ((KH - 1) * dh) // sh, (ph_ + H - 1) // sh + 1) + 1
    return PH, PW, (OH - 1) * PW + OW


@_jit
def dw_forward(x, w, b, out, s, p, d, has_bias, add, zero):  # pragma: no cover - compiled
    """``out`` (N, F, OH, OW) (=|+=) depthwise ``conv(x (N, C, H, W), w (F, 1, KH, KW))``
    (+ ``b``) with any stride ``s``, padding ``p`` and dilation ``d`` (filter ``f`` reads
    channel ``f // (F / C)``, as ``_dwkern.dw_forward_s1``), on zero-filled phase planes:
    per filter, one multiply-add run per kernel position."""
    N, C, H, W = x.shape
    F, _, KH, KW = w.shape
    OH, OW = out.shape[2], out.shape[3]
    M = F // C
    sh, sw = s
    dh, dw = d
    PH, PW, L = _dw_sizes(H, W, OH, OW, KH, KW, sh, sw, p[0], p[1], dh, dw)
    P = np.zeros((sh, sw, PH, PW), dtype=x.dtype)
    Pf = P.reshape((sh, sw, PH * PW))   # the planes flattened (a view: no per-position ravel)
    acc = np.empty(L, dtype=out.dtype)
    for n in range(N):
        for c in range(C):
            _to_phases(x[n, c], P, p[0], p[1])
            for f in range(c * M, c * M + M):
                acc[:] = zero
                for a in range(KH):
                    for e in range(KW):
                        wv = w[f, 0, a, e]
                        r, q = a * dh, e * dw
                        off = (r // sh) * PW + q // sw
                        src = Pf[r % sh, q % sw, off:off + L]
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


@numba.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def _dot(a, b, zero):  # pragma: no cover - compiled
    """``sum(a * b)``, reassociated so that it vectorises (as ``_dwkern._dot``)."""
    t = zero
    for i in range(a.shape[0]):
        t += a[i] * b[i]
    return t


@_jit
def dw_backward(x, w, dy, dx, dwt, s, p, d, need_dx, add_dx, need_dw, zero):  # pragma: no cover - compiled
    """Depthwise gradients with any stride (``dw_forward``'s geometry): ``dx`` (=|+=) the
    data gradient (when ``need_dx``; ``add_dx``: add), accumulated on zeroed phase planes
    and copied out; ``dwt`` (F, 1, KH, KW) = the weight gradient (when ``need_dw``; written,
    the caller applies its req), one dot product per kernel position over the outputs at
    pitch ``PW`` (zero past ``OW``)."""
    N, C, H, W = x.shape
    F, _, KH, KW = w.shape
    OH, OW = dy.shape[2], dy.shape[3]
    M = F // C
    sh, sw = s
    dh, dw = d
    PH, PW, L = _dw_sizes(H, W, OH, OW, KH, KW, sh, sw, p[0], p[1], dh, dw)
    P = np.zeros((sh, sw, PH, PW), dtype=x.dtype)
    G = np.empty((sh, sw, PH, PW), dtype=dx.dtype)
    Pf, Gf = P.reshape((sh, sw, PH * PW)), G.reshape((sh, sw, PH * PW))
    g = np.zeros(L, dtype=dy.dtype)
    if need_dw:
        dwt[...] = zero
    for n in range(N):
        for c in range(C):
            if need_dw:
                _to_phases(x[n, c], P, p[0], p[1])
            G[...] = zero
            for f in range(c * M, c * M + M):
                for oh in range(OH):
                    seg = g[oh * PW:oh * PW + OW]
                    src = dy[n, f, oh]
                    for i in range(OW):
                        seg[i] = src[i]
                for a in range(KH):
                    for e in range(KW):
                        r, q = a * dh, e * dw
                        off = (r // sh) * PW + q // sw
                        if need_dw:
                            dwt[f, 0, a, e] += _dot(g, Pf[r % sh, q % sw, off:off + L], zero)
                        if need_dx:
                            wv = w[f, 0, a, e]
                            dst = Gf[r % sh, q % sw, off:off + L]
                            for i in range(L):
                                dst[i] += wv * g[i]
            if need_dx:
                _from_phases(G, dx[n, c], p[0], p[1], add_dx)
