"""Normalise-over-a-set helpers shared by InstanceNorm and GroupNorm."""
from __future__ import annotations

from plexnet.operator import OpReqType

from ._common import writes


def store(xp, out, req, value):
    if req == OpReqType.null:
        return
    if writes(req):
        xp.copyto(out, value)
    else:
        out += value


def normalize(xp, xr, axes, eps):
    """``(xhat, mean, std)`` of ``xr`` normalised over ``axes`` (kept as size-1 dims)."""
    mean = xr.mean(axis=axes, keepdims=True)
    xc = xr - mean
    std = xp.sqrt((xc * xc).mean(axis=axes, keepdims=True) + eps)
    xc /= std
    return xc, mean, std


def normalize_grad(gdy, xhat, std, axes):
    """d/dx of ``xhat`` applied to ``gdy`` (the head gradient times gamma)."""
    dx = gdy - gdy.mean(axis=axes, keepdims=True)
    dx -= xhat * (gdy * xhat).mean(axis=axes, keepdims=True)
    dx /= std
    return dx
