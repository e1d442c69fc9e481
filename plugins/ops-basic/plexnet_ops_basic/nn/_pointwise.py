"""1x1 convolutions (one group, no padding; any stride and dimension count) as plain
GEMMs: no im2col, no col2im, no layout transposes.

Why: for a 1x1 kernel im2col is the input itself (or, strided, a subsample of it), yet the
general path still chunks the batch and copies through its csn / strided layouts: a
64 -> 128 1x1 convolution on (32, 64, 32, 32) took 4.2-4.5 ms forward and 10-12 ms
backward, against 2.1 and 5.6 here (its GEMMs alone: 1.3 and 2.6). Bottleneck ResNets,
MobileNet, SqueezeNet, DenseNet and Inception are mostly 1x1 convolutions; ResNet-18's
shortcut projections are 1x1 with stride 2.

Per sample the output is ``W (F, C) @ x[n] (C, P)`` with ``P`` the output pixels.
From ``FOLD_BELOW`` pixels down (a deep stage's 4x4 maps) that is ``N`` GEMMs too small
for BLAS: the batch is folded into the GEMM instead, ``(C, N P)`` by one transposed copy
(512 -> 2048 channels at 4x4, batch 32: forward 3.8 -> 2.8 ms, weight gradient
6.9 -> 3.0). Rounding: the sums run over the input channels (and, for the weight
gradient, over the samples' pixels) in BLAS's order, as the im2col GEMM's do, so results
agree with it to float rounding, not bit for bit."""
from __future__ import annotations

from math import prod
from typing import Any

from plexnet.operator import OpReqType

from ._common import writes

__all__ = ["FOLD_BELOW", "eligible", "forward", "backward"]

#: output pixels per sample below which the batch is folded into one GEMM (the
#: per-sample GEMMs were faster from 64 pixels on: (32, 128, 8x8) -> 256 channels
#: 0.36 against 0.42 ms forward; slower at 16: 0.51 against 0.45)
FOLD_BELOW = 64


def eligible(p: Any, x: Any, *outs: Any) -> bool:
    """A 1x1 kernel (any dimension count), one group, no padding, channels first; the
    arrays written (``outs``, None for one not written) C-contiguous, so their (N, C, P)
    reshapes are views."""
    return (p.num_group == 1 and all(k == 1 for k in p.kernel) and not any(p.pad)
            and x.ndim == len(p.kernel) + 2 and all(o is None or o.flags.c_contiguous for o in outs))


def _sampled(xp: Any, p: Any, x: Any) -> Any:
    """``x`` as (N, C, P): the pixels the kernel reads (every ``stride``-th), contiguous."""
    if any(s != 1 for s in p.stride):
        x = xp.ascontiguousarray(x[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in p.stride)])
    elif not x.flags.c_contiguous:
        x = xp.ascontiguousarray(x)
    return x.reshape(x.shape[0], x.shape[1], prod(x.shape[2:]))


def _folded(xp: Any, a: Any) -> Any:
    """(N, K, P) -> (K, N P), one transposed copy."""
    n, k, q = a.shape
    return xp.ascontiguousarray(a.transpose(1, 0, 2)).reshape(k, n * q)


def _unfold_into(xp: Any, r: Any, out: Any, req: OpReqType) -> None:
    """``out`` (N, K, P) (req)= ``r`` (K, N P)."""
    n, k, q = out.shape
    v = r.reshape(k, n, q).transpose(1, 0, 2)
    if writes(req):
        xp.copyto(out, v)
    else:
        out += v


def _product(xp: Any, w2: Any, a: Any, out: Any, req: OpReqType) -> None:
    """``out (N, F, P) (req)= w2 (F, K) @ a (N, K, P)`` per sample."""
    if a.shape[2] < FOLD_BELOW:
        _unfold_into(xp, xp.matmul(w2, _folded(xp, a)), out, req)
    elif writes(req) and out.flags.c_contiguous:
        xp.matmul(w2, a, out=out)
    elif writes(req):
        out[...] = xp.matmul(w2, a)
    else:
        out += xp.matmul(w2, a)


def forward(xp: Any, p: Any, x: Any, w: Any, b: Any | None, y: Any, req: OpReqType) -> None:
    """``y (req)= conv1x1(x, w) + b`` (``eligible`` holds)."""
    if req == OpReqType.null:
        return
    F = w.shape[0]
    xs = _sampled(xp, p, x)
    yv = y.reshape(y.shape[0], F, prod(y.shape[2:]))
    _product(xp, w.reshape(F, -1), xs, yv, req)
    if b is not None:
        yv += b.reshape(1, F, 1)


def _weight_gradient(xp: Any, dyv: Any, xs: Any, dw: Any, req: OpReqType) -> None:
    """``dw (req)= sum over samples of dy[n] (F, P) @ xs[n]^T (P, C)``."""
    F, C = dyv.shape[1], xs.shape[1]
    dw2 = dw.reshape(F, C)
    if xs.shape[2] < FOLD_BELOW:
        g = xp.matmul(_folded(xp, dyv), _folded(xp, xs).T)
        if writes(req):
            xp.copyto(dw2, g)
        else:
            dw2 += g
        return
    # one GEMM per sample added up: no (F, N, P) / (C, N, P) transposed copies, which cost
    # more than the GEMMs at 32x32 (64 -> 128 channels: 4.4 against 2.7 ms)
    part = xp.empty((F, C), dtype=dw.dtype)
    first = 0
    if writes(req) and dw2.flags.c_contiguous and dyv.shape[0]:
        xp.matmul(dyv[0], xs[0].T, out=dw2)
        first = 1
    elif writes(req):
        dw2[...] = 0
    for n in range(first, dyv.shape[0]):
        xp.matmul(dyv[n], xs[n].T, out=part)
        dw2 += part


def _data_gradient(xp: Any, p: Any, w: Any, dyv: Any, dx: Any, req: OpReqType) -> None:
    """``dx (req)= conv1x1's data gradient``: ``W^T @ dy[n]`` at the sampled pixels, zero
    at the others (stride > 1)."""
    F = w.shape[0]
    wt = w.reshape(F, -1).T
    if all(s == 1 for s in p.stride):
        _product(xp, wt, dyv, dx.reshape(dx.shape[0], dx.shape[1], prod(dx.shape[2:])), req)
        return
    sl = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in p.stride)
    dxs = xp.empty((dx.shape[0], dx.shape[1], prod(dyv.shape[2:])), dtype=dx.dtype)
    _product(xp, wt, dyv, dxs, OpReqType.write)
    view = dxs.reshape(dx[sl].shape)
    if writes(req):
        dx[...] = 0
        dx[sl] = view
    else:
        dx[sl] += view


def backward(xp: Any, p: Any, x: Any, w: Any, dy: Any, dx: Any, dx_req: OpReqType, dw: Any,
             dw_req: OpReqType) -> None:
    """Data and weight gradients of ``conv1x1(x, w)``, each by its req (``eligible``
    holds; the bias gradient is the caller's)."""
    dyv = dy.reshape(dy.shape[0], dy.shape[1], prod(dy.shape[2:]))
    if not dyv.flags.c_contiguous:
        dyv = xp.ascontiguousarray(dyv)
    if dw_req != OpReqType.null:
        _weight_gradient(xp, dyv, _sampled(xp, p, x), dw, dw_req)
    if dx_req != OpReqType.null:
        _data_gradient(xp, p, w, dyv, dx, dx_req)
