"""Layers of MXNet 1.9.1's ``gluon.contrib.nn``.

``Concurrent``/``HybridConcurrent`` are ``gluon.nn``'s Concatenate/HybridConcatenate under
their 1.x contrib names; the pixel shuffles rearrange ``factor``-fold channel groups into
space (sub-pixel convolution, Shi et al. 2016) with reshapes and one transpose.
``SparseEmbedding`` keeps a row_sparse weight and gradient (docs/sparse.md "Autograd").
"""
from __future__ import annotations

from typing import Any

from .... import ndarray as _nd
from ...block import Block, HybridBlock
from ...nn.basic_layers import Concatenate, HybridConcatenate, Identity, SyncBatchNorm

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SyncBatchNorm", "PixelShuffle1D", "PixelShuffle2D",
           "PixelShuffle3D", "SparseEmbedding"]


class Concurrent(Concatenate):
    """Runs every child block on the same input and concatenates the outputs on ``axis``."""


class HybridConcurrent(HybridConcatenate):
    """Hybridizable ``Concurrent``."""


def _factors(factor: Any, ndim: int, name: str) -> tuple[int, ...]:
    if isinstance(factor, int):
        fs = (factor,) * ndim
    else:
        fs = tuple(int(f) for f in factor)
        if len(fs) != ndim:
            raise ValueError(f"{name}: wrong length {len(fs)} of factor {factor!r} (need {ndim})")
    for f in fs:
        if f < 1:
            raise ValueError(f"{name}: factor must be positive, got {factor!r}")
    return fs


class _PixelShuffle(HybridBlock):
    _ndim = 0

    def __init__(self, factor: Any) -> None:
        super().__init__()
        self._fs = _factors(factor, self._ndim, type(self).__name__)
        # MXNet keeps an int for 1-D (shown by repr)
        self._factors: Any = self._fs[0] if self._ndim == 1 else self._fs

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        fs = self._fs
        n = len(fs)
        prod = 1
        for f in fs:
            prod *= f
        # (N, C*prod(f), d1..dn) -> (N, C, f1..fn, d1..dn): reshape codes split the channel axis
        x = F.reshape(x, (0, -4, -1, prod) + (0,) * n)
        for i in range(n - 1):
            rest = 1
            for f in fs[i + 1:]:
                rest *= f
            x = F.reshape(x, (0, 0) + (0,) * i + (-4, fs[i], rest) + (0,) * n)
        # interleave: (N, C, d1, f1, d2, f2, ...)
        axes = (0, 1) + tuple(a for i in range(n) for a in (2 + n + i, 2 + i))
        x = F.transpose(x, axes=axes)
        # merge each (di, fi) pair
        return F.reshape(x, (0, 0) + (-3,) * n)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._factors})"


class PixelShuffle1D(_PixelShuffle):
    """(N, f*C, W) -> (N, C, W*f)."""
    _ndim = 1


class PixelShuffle2D(_PixelShuffle):
    """(N, f1*f2*C, H, W) -> (N, C, H*f1, W*f2)."""
    _ndim = 2


class PixelShuffle3D(_PixelShuffle):
    """(N, f1*f2*f3*C, D, H, W) -> (N, C, D*f1, H*f2, W*f3)."""
    _ndim = 3


class SparseEmbedding(Block):
    """MXNet 1.9.1's ``contrib.nn.SparseEmbedding``: an Embedding whose weight and gradient are
    row_sparse. Each call reads the rows ``x`` looks up (``row_sparse_data``; a Trainer must
    exist) and, under ``autograd.record()``, gets a row_sparse gradient holding those rows;
    the Trainer updates them lazily. Not hybridizable (a Block, as MXNet's)."""

    def __init__(self, input_dim: int, output_dim: int, dtype: Any = "float32", weight_initializer: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype, "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim), init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x: Any) -> Any:
        weight = self.weight.row_sparse_data(x)
        return _nd.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return f"{self.__class__.__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"
