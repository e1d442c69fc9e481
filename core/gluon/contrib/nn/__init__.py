"""``gluon.contrib.nn``: parallel containers, identity, pixel shuffles, SyncBatchNorm, SparseEmbedding."""
from . import basic_layers
from .basic_layers import (Concurrent, HybridConcurrent, Identity, PixelShuffle1D, PixelShuffle2D, PixelShuffle3D,
                           SparseEmbedding, SyncBatchNorm)

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SyncBatchNorm", "PixelShuffle1D", "PixelShuffle2D",
           "PixelShuffle3D", "SparseEmbedding", "basic_layers"]
