"""Winograd F(4x4, 3x3) (default) and F(2x2, 3x3) for 3x3, stride-1 convolutions:
forward, data and weight gradients.

Why: a ResNet step is its 3x3 convolutions, and with im2col they cost a GEMM of
``9 C`` x ``F`` per output pixel plus the im2col copy (9x the input) and, backward, the
col2im scatter. Winograd's F(m x m, 3x3) computes each m x m output block from an
(m + 2)-square input tile with (m + 2)^2 products per (input, output) channel pair instead
of 9 m^2: F(2x2) shrinks the GEMMs 2.25x, F(4x4) 4x. Lavin & Gray, "Fast Algorithms for
Convolutional Neural Networks" (2015); cuDNN and oneDNN ship the same algorithms.

How: ``V = B^T d B`` for every tile (``input_tiles``), ``U = G g G^T`` for every filter,
the GEMMs ``M[k] = U[k] V[k]`` for the (m + 2)^2 positions as one batched ``np.matmul``
on OpenBLAS, then ``Y = A^T M A`` per tile (``output_tiles``). The weight gradient is the
transposed algorithm: ``dU[k] = sum over tiles of (A e A^T)[k] (B^T d B)[k]^T`` for the
output gradient's blocks ``e`` (``gradient_tiles``), GEMMs whose inner dimension is the
tiles, then ``dw = G^T dU G``. F(2x2)'s data gradient is the convolution of the output
gradient with the 180-degree-rotated, transposed filters and padding ``2 - pad``;
F(4x4)'s (``backward``) is the forward's transpose, ``B (D U) B^T`` added up over the
overlapping input tiles, which shares ``D = A e A^T`` with the weight gradient.

F(2x2)'s kernels (``_winokern``) keep the arrays as (position, channel, tile) and run
their inner loops over the tiles of a tile row; F(4x4)'s (``_winokern4``) keep them
channels last and run over the channels (docs/ops-numba.md has the figures).

The batch runs in chunks whose transformed input fits a few MB of cache (and whose GEMMs
keep at least 256 columns). Rounding differs from the im2col GEMM's (another order of
additions, and the transforms' own): about 1e-7 (F(2x2)) and 1e-6 to 1e-5 (F(4x4)) of
the largest output in float32. So only float32 takes this path (float64 keeps ops-basic's
arithmetic), and only where both channel counts reach ``MIN_CHANNELS`` (below that the
GEMMs are too small to win); ``PLEXNET_NUMBA_WINOGRAD=0`` turns it off,
``PLEXNET_NUMBA_WINOGRAD_TILE=2`` selects F(2x2, 3x3).
"""
from __future__ import annotations

import os
import threading
from typing import Any, NamedTuple

import numpy as np

from plexnet.operator import OpReqType
from plexnet_ops_basic.nn import _split

from . import _base

__all__ = ["ENABLED", "TILE", "MIN_CHANNELS", "MIN_TILES", "F2", "F4", "Variant", "choose", "eligible", "forward",
           "backward", "backward_data", "backward_weight", "filters", "chunk_size", "scratch"]


class Variant(NamedTuple):
    """One Winograd algorithm F(m x m, 3x3): ``m`` x ``m`` output blocks from
    ``(m + 2)``-square input tiles, ``(m + 2) ** 2`` GEMMs."""
    m: int
    kernels: str     #: the numba kernel module (input, output and gradient transforms)
    T: Any           #: ``U.flat = T @ g.flat`` for a 3x3 filter ``g`` (row-major): kron(G, G)
    T_rot: Any       #: the same for the filter rotated by 180 degrees
    #: transformed arrays as (positions, tiles, channels) instead of (positions, channels, tiles)
    channels_last: bool

    @property
    def positions(self) -> int:
        return (self.m + 2) ** 2


def _variant(m: int, kernels: str, G: Any, channels_last: bool) -> Variant:
    T = np.kron(G, G)
    return Variant(m, kernels, T, np.ascontiguousarray(T[:, ::-1]), channels_last)


#: F(2x2, 3x3): 16 products per 4 outputs (2.25x fewer than im2col's 36)
F2 = _variant(2, "_winokern", np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]]),
              channels_last=False)
#: F(4x4, 3x3), points 0, +-1, +-2, infinity: 36 products per 16 outputs (4x fewer)
F4 = _variant(4, "_winokern4", np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                                          [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]]),
              channels_last=True)

ENABLED = os.environ.get("PLEXNET_NUMBA_WINOGRAD", "1") not in ("", "0")
#: the output block: 4 (F(4x4, 3x3), default) or 2 (F(2x2, 3x3))
TILE = int(os.environ.get("PLEXNET_NUMBA_WINOGRAD_TILE", "4"))
#: both the input and the output channel count at least this (ResNet's stages: 64-512)
MIN_CHANNELS = int(os.environ.get("PLEXNET_NUMBA_WINOGRAD_MIN_CHANNELS", "32"))
#: at least this many 2x2 output blocks (a quarter of the output pixels) in the batch: the
#: filter transforms (positions x F x C per call) and GEMMs with few rows cost more than
#: the smaller GEMMs save below it (ResNet-18 at batch 1, 224x224: its 14x14 and 7x7
#: stages were slower by F(2x2, 3x3)). CIFAR batch 32's 4x4 stage (128 blocks, 512
#: channels) was level with im2col by F(2x2) and is about 30 % faster by F(4x4)
MIN_TILES = int(os.environ.get("PLEXNET_NUMBA_WINOGRAD_MIN_TILES", "128"))
#: filter pairs (F x C) from which the filter transforms are shared with the helper thread:
#: below, a transform takes well under a millisecond (0.07 ms at 64 x 64), about what
#: waking the helper costs, and the split's self-check (``_split.observe``) would turn
#: every split off for seconds after such poor overlap
FILTER_SPLIT_MIN = 256 * 256
#: bytes of transformed input per chunk (the GEMM's right operand stays in L2/L3)
CHUNK_BYTES = 4 << 20
#: at least this many GEMM columns (tiles) per chunk
MIN_COLUMNS = 256
#: the same for the backward, whose chunks hold two transformed arrays (input and output
#: gradient) and a filter-gradient sum per thread: 64-channel 32x32 layer at batch 32,
#: 2 MB / 128 columns (2 samples a chunk) took 6.0-6.4 ms against 7.5-8.1 with 4 MB / 256
#: (best of 7, five interleaved rounds); the forward was level, so it keeps its chunks
BACKWARD_CHUNK_BYTES = 2 << 20
BACKWARD_MIN_COLUMNS = 128
#: F(4x4) forward chunks with at most this many tiles compute ``M^T = U V^T`` (the filters
#: as BLAS's left operand, untransposed) and transpose the small result: the 512-channel
#: 4x4 stage at batch 32 (32 tiles) took 5.1 + 0.2 ms per call for its GEMMs, against 6.6
#: with ``M = V U^T`` (the 38 MB of filters read as a transposed operand)
FEW_COLUMNS = int(os.environ.get("PLEXNET_NUMBA_WINOGRAD_FEW_COLUMNS", "64"))


_tls = threading.local()


def scratch(name: str, shape: tuple, dtype: Any) -> Any:
    """A buffer of this thread's, reused from call to call (grown to the largest request;
    contents undefined). Fresh numpy arrays of these sizes are fresh pages from the
    kernel: the first touch of the 38 MB of F(4x4) filters of a 512-channel layer cost
    5 ms, as much as computing them. Valid until this thread asks for ``name`` again;
    the two threads of ``_over_chunks`` each have their own."""
    bufs = _tls.__dict__.setdefault("bufs", {})
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buf = bufs.get(name)
    if buf is None or buf.size < n:
        buf = bufs[name] = np.empty(max(n, 1), np.uint8)
    return buf[:n].view(dtype).reshape(shape)


_seen: set = set()


def _first_call(*key: Any) -> None:
    """Mark this thread's current call as the first for ``key`` (its shapes) or not: a
    first call's fresh scratch buffers fault in their pages in both threads at once, which
    the kernel serialises, so its splits stay out of the split's self-check (three such
    splits at the start of a run turned every split off for two seconds: a ResNet-18 step
    then took 860-880 ms instead of 610-630)."""
    _tls.cold = key not in _seen
    _seen.add(key)


def _observed() -> bool:
    return not getattr(_tls, "cold", False)


def choose() -> Variant:
    """The variant ``TILE`` names (F(4x4, 3x3) unless 2)."""
    return F2 if TILE == 2 else F4


def eligible(p: Any, x: Any, w: Any) -> bool:
    """A 2-D 3x3 convolution with stride 1, no dilation, one group, padding <= 2, float32,
    at least ``MIN_CHANNELS`` input and output channels and ``MIN_TILES`` 2x2 output
    blocks, and the kernels load."""
    if not (ENABLED and len(p.kernel) == 2 and tuple(p.kernel) == (3, 3) and tuple(p.stride) == (1, 1)
            and tuple(p.dilate) == (1, 1) and p.num_group == 1 and max(p.pad) <= 2 and x.dtype == np.float32
            and x.ndim == 4 and x.shape[1] >= MIN_CHANNELS and w.shape[0] >= MIN_CHANNELS):
        return False
    ho, wo = x.shape[2] + 2 * p.pad[0] - 2, x.shape[3] + 2 * p.pad[1] - 2
    return (x.shape[0] * ((ho + 1) // 2) * ((wo + 1) // 2) >= MIN_TILES
            and _base.kernels(choose().kernels) is not None)


def filters(w: Any, rotated: bool, v: Variant = F2, two: bool = False) -> Any:
    """``U[k]`` (positions, F, C) of the filters ``w`` (F, C, 3, 3); ``rotated``: (positions,
    C, F) of the data gradient's filters ``w[f, c]`` rotated by 180 degrees (input and
    output swapped). F(4x4)'s is this thread's ``scratch("U")``: valid until the next call;
    ``two``: half the filters each on this thread and the helper."""
    F, C = w.shape[0], w.shape[1]
    K = _base.kernels(v.kernels) if v.channels_last else None
    if K is not None:   # one pass, vectorised over the channels (a 36 x 9 GEMM with N = F C is not)
        U = scratch("U", (v.positions, F, C), w.dtype)
        wc = np.ascontiguousarray(w)
        _halves(F, two and F * C >= FILTER_SPLIT_MIN, lambda f0, f1: K.filter_tiles(wc, U, rotated, f0, f1))
    else:
        T = (v.T_rot if rotated else v.T).astype(w.dtype)
        U = np.matmul(T, w.reshape(F * C, 9).T).reshape(v.positions, F, C)
    # rotated: a transposed view; each U[k] is Fortran-ordered, which the batched matmul
    # hands to BLAS as a transposed operand (no copy)
    return U.transpose(0, 2, 1) if rotated else U


def chunk_size(n: int, c: int, tiles: int, itemsize: int, positions: int = 16, backward: bool = False) -> int:
    """Samples per chunk: the transformed input (``positions`` x ``c`` x tiles per sample)
    within ``CHUNK_BYTES``, but at least ``MIN_COLUMNS`` GEMM columns; ``backward``: within
    ``BACKWARD_CHUNK_BYTES`` and ``BACKWARD_MIN_COLUMNS``."""
    budget, columns = (BACKWARD_CHUNK_BYTES, BACKWARD_MIN_COLUMNS) if backward else (CHUNK_BYTES, MIN_COLUMNS)
    per = positions * c * tiles * itemsize
    k = max(budget // max(per, 1), -(-columns // max(tiles, 1)), 1)
    return int(max(min(n, k), 1))


def _two(n: int, elements: int) -> bool:
    """Whether to share this call with ops-basic's helper thread: the engine's thread policy
    leaves a second core free (the transforms have no threads of their own, and the GEMMs
    of a chunk are small: two threads with one BLAS thread each use both cores better than
    one chunk's GEMMs on two BLAS threads)."""
    return n >= 2 and _split.ways(np, n, elements, always=True) == 2


def _halves(count: int, two: bool, fn: Any) -> None:
    """``fn(lo, hi)`` over ``range(count)``: the two halves on this thread and the helper
    when ``two``, else one call here."""
    if two and count >= 2:
        h = count // 2
        _split.run_items(2, lambda i, slot: fn(0, h) if i == 0 else fn(h, count), _observed())
    else:
        fn(0, count)


def _over_chunks(n: int, per: int, two: bool, run: Any, by_position: bool = False) -> None:
    """``run(n0, n1, slot, split)`` for the batch in chunks of ``per`` samples, taken in turn
    by this thread (slot 0) and the helper thread (slot 1) when ``two``; else all here, the
    GEMMs on the policy's BLAS threads. With two threads the chunks are an even number of
    nearly equal sizes (32 samples in chunks of at most 7: six of 5-6, not 7, 7, 7, 7, 4).
    A batch that fits one chunk is halved for the two threads, unless ``by_position``: then
    it stays one chunk whose GEMMs the two threads share by position (``split``), which
    keeps their rows (ResNet's 4x4 stage at batch 32 has 32 tiles: halves of 16 rows ran the
    512-channel GEMMs at a third of the rate)."""
    if two and per >= n and by_position:
        run(0, n, 0, True)
        return
    chunks = -(-n // per)
    if two and chunks % 2:   # an even count of even chunks: both threads finish together
        chunks += 1
    chunks = min(chunks, n)
    cuts = [n * i // chunks for i in range(chunks + 1)]
    spans = list(zip(cuts[:-1], cuts[1:]))
    if two:
        _split.run_items(len(spans), lambda i, slot: run(*spans[i], slot, False), _observed())
    else:
        for n0, n1 in spans:
            run(n0, n1, 0, False)


def _tiles(v: Variant, ho: int, wo: int) -> tuple[int, int]:
    return -(-ho // v.m), -(-wo // v.m)


class _FilterGradient:
    """``dU``, the gradient of the transformed filters, summed per thread of ``_over_chunks``
    (each sum in that thread's scratch), then ``dw`` from their total."""

    def __init__(self, v: Variant, F: int, C: int, dtype: Any) -> None:
        self.shape = (v.positions, F, C)
        self.dtype = dtype
        self.sums: list = [None, None]

    def part(self, slot: int) -> Any:
        """The buffer for this chunk's product: the slot's sum itself for its first chunk."""
        return scratch("dU" if self.sums[slot] is None else "dU part", self.shape, self.dtype)

    def add(self, slot: int, part: Any) -> None:
        if self.sums[slot] is None:
            self.sums[slot] = part
        else:
            self.sums[slot] += part

    def total(self) -> Any:
        s0, s1 = self.sums
        return s0 if s1 is None else np.add(s0, s1, out=s0)


def _convolve(x: Any, U: Any, pad: tuple, y: Any, bias: Any | None, add: bool, v: Variant, two: bool) -> None:
    """``y (add or write)= conv3x3(x, filters U) + bias`` for ``x`` (N, C, H, W) and ``U``
    (positions, F, C); ``pad`` as (rows, columns); ``two``: see ``_over_chunks``."""
    K = _base.kernels(v.kernels)
    assert K is not None   # callers check ``_base.kernels`` first
    N, C = x.shape[0], x.shape[1]
    F = U.shape[1]
    th, tw = _tiles(v, y.shape[2], y.shape[3])
    tiles = th * tw
    b = bias if bias is not None else np.zeros(0, x.dtype)

    def run(n0: int, n1: int, slot: int, split: bool) -> None:
        cols = (n1 - n0) * tiles
        if v.channels_last:   # M[k] (tiles, F) = V[k] (tiles, C) @ U[k]^T
            V = scratch("V", (v.positions, cols, C), x.dtype)
            M = scratch("M", (v.positions, cols, F), x.dtype)
            K.input_tiles(x, V, pad[0], pad[1], th, tw, n0, n1)
            if cols <= FEW_COLUMNS:
                Mt = scratch("Mt", (v.positions, F, cols), x.dtype)

                def gemms(k0: int, k1: int) -> None:   # M^T = U V^T, then M
                    np.matmul(U[k0:k1], V[k0:k1].transpose(0, 2, 1), out=Mt[k0:k1])
                    np.copyto(M[k0:k1], Mt[k0:k1].transpose(0, 2, 1))
                _halves(v.positions, split, gemms)
            else:
                Ut = U.transpose(0, 2, 1)
                _halves(v.positions, split, lambda k0, k1: np.matmul(V[k0:k1], Ut[k0:k1], out=M[k0:k1]))
        else:
            V = scratch("V", (v.positions, C, cols), x.dtype)
            M = scratch("M", (v.positions, F, cols), x.dtype)
            K.input_tiles(x, V, pad[0], pad[1], th, tw, n0, n1)
            np.matmul(U, V, out=M)
        K.output_tiles(M, y, th, tw, n0, n1, b, bias is not None, add)
    _over_chunks(N, chunk_size(N, C, tiles, x.itemsize, v.positions), two, run, v.channels_last)


def _weight_gradient(x: Any, dy: Any, pad: tuple, dw: Any, add: bool, v: Variant) -> None:
    """``dw (add or write)= dconv/dw`` for input ``x`` (N, C, H, W), output gradient ``dy``."""
    K = _base.kernels(v.kernels)
    assert K is not None
    N, C = x.shape[0], x.shape[1]
    F = dy.shape[1]
    th, tw = _tiles(v, dy.shape[2], dy.shape[3])
    tiles = th * tw
    dU = _FilterGradient(v, F, C, x.dtype)

    def run(n0: int, n1: int, slot: int, split: bool) -> None:
        cols = (n1 - n0) * tiles
        shape = (v.positions, cols, C) if v.channels_last else (v.positions, C, cols)
        V = scratch("V", shape, x.dtype)
        D = scratch("M", shape[:1] + ((cols, F) if v.channels_last else (F, cols)), x.dtype)
        K.input_tiles(x, V, pad[0], pad[1], th, tw, n0, n1)
        K.gradient_tiles(dy, D, th, tw, n0, n1)
        part = dU.part(slot)
        if v.channels_last:
            np.matmul(D.transpose(0, 2, 1), V, out=part)
        else:
            np.matmul(D, V.transpose(0, 2, 1), out=part)
        dU.add(slot, part)
    two = _two(N, x.size)
    _over_chunks(N, chunk_size(N, max(C, F), tiles, x.itemsize, v.positions, True), two, run)
    total = dU.total()
    if v.channels_last:
        _filter_gradient(K, total, dw, add, two)
        return
    g = np.matmul(total.reshape(v.positions, F * C).T, v.T.astype(total.dtype)).reshape(dw.shape)
    if add:
        dw += g
    else:
        np.copyto(dw, g)


#: the weight gradient by Winograd too (``PLEXNET_NUMBA_WINOGRAD_WGRAD=0``: ops-basic's
#: im2col GEMM for it, Winograd for the forward and the data gradient only)
WEIGHT_GRADIENT = os.environ.get("PLEXNET_NUMBA_WINOGRAD_WGRAD", "1") not in ("", "0")


def _filter_gradient(K: Any, dU: Any, dw: Any, add: bool, two: bool) -> None:
    """``dw (add or write)= G^T dU G`` (F(4x4)'s kernel), half the filters each on this thread
    and the helper from ``FILTER_SPLIT_MIN`` filter pairs."""
    F, C = dw.shape[0], dw.shape[1]
    _halves(F, two and F * C >= FILTER_SPLIT_MIN, lambda f0, f1: K.filter_gradient(dU, dw, add, f0, f1))


def _pads(pad: Any) -> tuple:
    return (int(pad[0]), int(pad[1]))


def forward(p: Any, x: Any, w: Any, b: Any | None, y: Any, req: OpReqType, v: Variant | None = None) -> None:
    """``y (req)= conv(x, w) + b`` (``eligible`` holds); ``v`` defaults to ``choose()``."""
    if req != OpReqType.null:
        v = v or choose()
        _first_call("forward", v.m, x.shape, w.shape)
        two = _two(x.shape[0], x.size)
        _convolve(x, filters(w, False, v, two), _pads(p.pad), y, b, req == OpReqType.add, v, two)


def backward_weight(p: Any, x: Any, dy: Any, dw: Any, req: OpReqType, v: Variant | None = None) -> None:
    """``dw (req)= dconv/dw`` (``eligible`` holds)."""
    if req != OpReqType.null:
        v = v or choose()
        _first_call("weight", v.m, x.shape, dw.shape)
        _weight_gradient(x, dy, _pads(p.pad), dw, req == OpReqType.add, v)


def backward_data(p: Any, w: Any, dy: Any, dx: Any, req: OpReqType, v: Variant | None = None) -> None:
    """``dx (req)= conv_transpose(dy, w)`` (``eligible`` holds): for stride 1 the
    convolution of ``dy`` with the rotated, transposed filters and padding ``2 - pad``."""
    if req != OpReqType.null:
        v = v or choose()
        _first_call("data", v.m, dy.shape, w.shape)
        pr, pc = _pads(p.pad)
        two = _two(dy.shape[0], dx.size)
        _convolve(dy, filters(w, True, v, two), (2 - pr, 2 - pc), dx, None, req == OpReqType.add, v, two)


def backward(p: Any, x: Any, w: Any, dy: Any, dx: Any, dx_req: OpReqType, dw: Any, dw_req: OpReqType,
             v: Variant | None = None) -> None:
    """Both gradients (each by its req; ``eligible`` holds). F(4x4, 3x3) transforms the
    output gradient once for both (``D = A e A^T``): the weight gradient is ``D^T V`` as in
    ``backward_weight``, the data gradient the transpose of the forward, ``B (D U) B^T``
    added up over the overlapping input tiles, with the forward's filters ``U``; this saves
    the rotated filters and a second input transform (of ``dy``). F(2x2, 3x3) runs
    ``backward_data`` and ``backward_weight``."""
    v = v or choose()
    need_dx, need_dw = dx_req != OpReqType.null, dw_req != OpReqType.null
    if not v.channels_last or not need_dx:
        if need_dx:
            backward_data(p, w, dy, dx, dx_req, v)
        if need_dw:
            backward_weight(p, x, dy, dw, dw_req, v)
        return
    K = _base.kernels(v.kernels)
    assert K is not None
    _first_call("backward", v.m, x.shape, w.shape)
    pad = _pads(p.pad)
    N, C = x.shape[0], x.shape[1]
    F = dy.shape[1]
    th, tw = _tiles(v, dy.shape[2], dy.shape[3])
    tiles = th * tw
    two = _two(N, x.size)
    U = filters(w, False, v, two)   # (positions, F, C)
    dU = _FilterGradient(v, F, C, x.dtype)
    add_dx = dx_req == OpReqType.add

    def run(n0: int, n1: int, slot: int, split: bool) -> None:
        cols = (n1 - n0) * tiles
        D = scratch("M", (v.positions, cols, F), x.dtype)
        V = scratch("V", (v.positions, cols, C), x.dtype)
        K.gradient_tiles(dy, D, th, tw, n0, n1)
        if need_dw:
            K.input_tiles(x, V, pad[0], pad[1], th, tw, n0, n1)
            part = dU.part(slot)
        Dt = D.transpose(0, 2, 1)

        def gemms(k0: int, k1: int) -> None:
            if need_dw:
                np.matmul(Dt[k0:k1], V[k0:k1], out=part[k0:k1])
            np.matmul(D[k0:k1], U[k0:k1], out=V[k0:k1])   # the transformed input's gradient, in V
        _halves(v.positions, split, gemms)
        if need_dw:
            dU.add(slot, part)
        K.input_adjoint(V, dx, pad[0], pad[1], th, tw, n0, n1, add_dx)
    _over_chunks(N, chunk_size(N, max(C, F), tiles, x.itemsize, v.positions, True), two, run, True)
    if need_dw:
        _filter_gradient(K, dU.total(), dw, dw_req == OpReqType.add, two)
