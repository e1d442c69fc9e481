"""Winograd F(2x2, 3x3) for 3x3, stride-1 convolutions (forward and data gradient).

Why: a ResNet step is its 3x3 convolutions, and with im2col they cost a GEMM of
``9 C`` x ``F`` per output pixel plus the im2col copy (9x the input) and, backward, the
col2im scatter. Winograd's F(2x2, 3x3) computes each 2x2 output block from a 4x4 input
tile with 16 products per (input, output) channel pair instead of 36: the GEMMs shrink
2.25x, and the transforms read and write 4x the input instead of 9x. Lavin & Gray, "Fast
Algorithms for Convolutional Neural Networks" (2015); cuDNN and oneDNN ship the same
algorithm.

How: ``V = B^T d B`` for every tile (``_winokern.input_tiles``), ``U = G g G^T`` for every
filter (one small GEMM with the 16x9 matrix ``kron(G, G)``), the 16 GEMMs ``M[k] = U[k] @
V[k]`` as one batched ``np.matmul`` on OpenBLAS, then ``Y = A^T M A`` per tile
(``_winokern.output_tiles``). The data gradient of a stride-1 convolution is the
convolution of the output gradient with the 180-degree-rotated, transposed filters and
padding ``2 - pad``: the same three steps. The weight gradient is the transposed
algorithm: ``dU[k] = sum over tiles of (A e A^T)[k] (B^T d B)[k]^T`` for the output
gradient's 2x2 blocks ``e`` (``_winokern.gradient_tiles``) and the input tiles ``d``, 16
GEMMs whose inner dimension is the tiles, then ``dw = G^T dU G`` (``kron(G, G)^T``).

The batch runs in chunks whose transformed input fits a few MB of cache (and whose GEMMs
keep at least 256 columns). Rounding differs from the im2col GEMM's (another order of
additions, and the transforms' own): relative differences of about 1e-6 in float32. So
only float32 takes this path (float64 keeps ops-basic's arithmetic), and only where both
channel counts reach ``MIN_CHANNELS`` (below that the GEMMs are too small to win);
``PLEXNET_NUMBA_WINOGRAD=0`` turns it off.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from plexnet.operator import OpReqType
from plexnet_ops_basic.nn import _split

from . import _base

__all__ = ["ENABLED", "MIN_CHANNELS", "MIN_TILES", "eligible", "forward", "backward_data", "backward_weight", "filters",
           "chunk_size"]

ENABLED = os.environ.get("PLEXNET_NUMBA_WINOGRAD", "1") not in ("", "0")
#: both the input and the output channel count at least this (ResNet's stages: 64-512)
MIN_CHANNELS = int(os.environ.get("PLEXNET_NUMBA_WINOGRAD_MIN_CHANNELS", "32"))
#: at least this many 2x2 output tiles in the batch: the filter transforms (16 x F x C per
#: call) and GEMMs with few columns cost more than the smaller GEMMs save below it
#: (ResNet-18 at batch 1, 224x224: its 14x14 and 7x7 stages were slower by Winograd;
#: CIFAR batch 32's 4x4 stage, 128 tiles, was level)
MIN_TILES = int(os.environ.get("PLEXNET_NUMBA_WINOGRAD_MIN_TILES", "256"))
#: bytes of transformed input per chunk (the GEMM's right operand stays in L2/L3)
CHUNK_BYTES = 4 << 20
#: at least this many GEMM columns (tiles) per chunk
MIN_COLUMNS = 256

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
#: U.flat = _T @ g.flat for a 3x3 filter g (row-major): kron(G, G), 16 x 9
_T = np.kron(_G, _G)
_T_ROT = np.ascontiguousarray(_T[:, ::-1])   # the same for the filter rotated by 180 degrees


def eligible(p: Any, x: Any, w: Any) -> bool:
    """A 2-D 3x3 convolution with stride 1, no dilation, one group, padding <= 2, float32,
    at least ``MIN_CHANNELS`` input and output channels and ``MIN_TILES`` output tiles, and
    the kernels load."""
    if not (ENABLED and len(p.kernel) == 2 and tuple(p.kernel) == (3, 3) and tuple(p.stride) == (1, 1)
            and tuple(p.dilate) == (1, 1) and p.num_group == 1 and max(p.pad) <= 2 and x.dtype == np.float32
            and x.ndim == 4 and x.shape[1] >= MIN_CHANNELS and w.shape[0] >= MIN_CHANNELS):
        return False
    ho, wo = x.shape[2] + 2 * p.pad[0] - 2, x.shape[3] + 2 * p.pad[1] - 2
    return x.shape[0] * ((ho + 1) // 2) * ((wo + 1) // 2) >= MIN_TILES and _base.kernels("_winokern") is not None


def filters(w: Any, rotated: bool) -> Any:
    """``U[k]`` (16, F, C) of the filters ``w`` (F, C, 3, 3); ``rotated``: (16, C, F) of the
    data gradient's filters ``w[f, c]`` rotated by 180 degrees (input and output swapped)."""
    F, C = w.shape[0], w.shape[1]
    T = (_T_ROT if rotated else _T).astype(w.dtype)
    U = np.matmul(T, w.reshape(F * C, 9).T).reshape(16, F, C)
    # rotated: a transposed view; each U[k] is Fortran-ordered, which the batched matmul
    # hands to BLAS as a transposed operand (no copy)
    return U.transpose(0, 2, 1) if rotated else U


def chunk_size(n: int, c: int, tiles: int, itemsize: int) -> int:
    """Samples per chunk: the transformed input (16 x ``c`` x tiles per sample) within
    ``CHUNK_BYTES``, but at least ``MIN_COLUMNS`` GEMM columns."""
    per = 16 * c * tiles * itemsize
    k = max(CHUNK_BYTES // max(per, 1), -(-MIN_COLUMNS // max(tiles, 1)), 1)
    return int(max(min(n, k), 1))


def _over_chunks(n: int, per: int, elements: int, run: Any) -> None:
    """``run(n0, n1, slot)`` for the batch in chunks of ``per`` samples: taken in turn by this
    thread (slot 0) and ops-basic's helper thread (slot 1), each with one BLAS thread, while
    the engine's thread policy leaves a second core free (at least two chunks then; the
    transforms have no threads of their own, and the 16 GEMMs of a chunk are small: two
    chunks at once use both cores better than one chunk's GEMMs on two BLAS threads); else
    all here, the GEMMs on the policy's BLAS threads."""
    two = n >= 2 and _split.ways(np, n, elements, always=True) == 2
    if two and per >= n:
        per = -(-n // 2)
    spans = [(n0, min(n, n0 + per)) for n0 in range(0, n, per)]
    if two:
        _split.run_items(len(spans), lambda i, slot: run(*spans[i], slot))
    else:
        for n0, n1 in spans:
            run(n0, n1, 0)


def _convolve(x: Any, U: Any, pad: tuple, y: Any, bias: Any | None, add: bool) -> None:
    """``y (add or write)= conv3x3(x, filters U) + bias`` for ``x`` (N, C, H, W) and ``U``
    (16, F, C); ``pad`` as (rows, columns)."""
    K = _base.kernels("_winokern")
    assert K is not None   # callers check ``_base.kernels`` first
    N, C = x.shape[0], x.shape[1]
    F = U.shape[1]
    Ho, Wo = y.shape[2], y.shape[3]
    th, tw = (Ho + 1) // 2, (Wo + 1) // 2
    tiles = th * tw
    b = bias if bias is not None else np.zeros(0, x.dtype)

    def run(n0: int, n1: int, slot: int) -> None:
        cols = (n1 - n0) * tiles
        V = np.empty((16, C, cols), x.dtype)
        M = np.empty((16, F, cols), x.dtype)
        K.input_tiles(x, V, pad[0], pad[1], th, tw, n0, n1)
        np.matmul(U, V, out=M)
        K.output_tiles(M, y, th, tw, n0, n1, b, bias is not None, add)
    _over_chunks(N, chunk_size(N, C, tiles, x.itemsize), x.size, run)


def _weight_gradient(x: Any, dy: Any, pad: tuple, dw: Any, add: bool) -> None:
    """``dw (add or write)= dconv/dw`` for input ``x`` (N, C, H, W), output gradient ``dy``."""
    K = _base.kernels("_winokern")
    assert K is not None
    N, C = x.shape[0], x.shape[1]
    F, Ho, Wo = dy.shape[1], dy.shape[2], dy.shape[3]
    th, tw = (Ho + 1) // 2, (Wo + 1) // 2
    tiles = th * tw
    dU = [np.zeros((16, F, C), x.dtype), None]   # one sum per thread

    def run(n0: int, n1: int, slot: int) -> None:
        cols = (n1 - n0) * tiles
        V = np.empty((16, C, cols), x.dtype)
        D = np.empty((16, F, cols), x.dtype)
        K.input_tiles(x, V, pad[0], pad[1], th, tw, n0, n1)
        K.gradient_tiles(dy, D, th, tw, n0, n1)
        part = np.matmul(D, V.transpose(0, 2, 1))
        acc = dU[slot]
        if acc is None:
            dU[slot] = part
        else:
            acc += part
    _over_chunks(N, chunk_size(N, max(C, F), tiles, x.itemsize), x.size, run)
    total = dU[0] if dU[1] is None else dU[0] + dU[1]
    g = np.matmul(total.reshape(16, F * C).T, _T.astype(total.dtype)).reshape(dw.shape)
    if add:
        dw += g
    else:
        np.copyto(dw, g)


#: the weight gradient by Winograd too (``PLEXNET_NUMBA_WINOGRAD_WGRAD=0``: ops-basic's
#: im2col GEMM for it, Winograd for the forward and the data gradient only)
WEIGHT_GRADIENT = os.environ.get("PLEXNET_NUMBA_WINOGRAD_WGRAD", "1") not in ("", "0")


def _pads(pad: Any) -> tuple:
    return (int(pad[0]), int(pad[1]))


def forward(p: Any, x: Any, w: Any, b: Any | None, y: Any, req: OpReqType) -> None:
    """``y (req)= conv(x, w) + b`` (``eligible`` holds)."""
    if req != OpReqType.null:
        _convolve(x, filters(w, False), _pads(p.pad), y, b, req == OpReqType.add)


def backward_weight(p: Any, x: Any, dy: Any, dw: Any, req: OpReqType) -> None:
    """``dw (req)= dconv/dw`` (``eligible`` holds)."""
    if req != OpReqType.null:
        _weight_gradient(x, dy, _pads(p.pad), dw, req == OpReqType.add)


def backward_data(p: Any, w: Any, dy: Any, dx: Any, req: OpReqType) -> None:
    """``dx (req)= conv_transpose(dy, w)`` (``eligible`` holds): for stride 1 the
    convolution of ``dy`` with the rotated, transposed filters and padding ``2 - pad``."""
    if req != OpReqType.null:
        pr, pc = _pads(p.pad)
        _convolve(dy, filters(w, True), (2 - pr, 2 - pc), dx, None, req == OpReqType.add)
