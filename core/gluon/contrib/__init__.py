"""``gluon.contrib``: MXNet 1.9.1's ``mxnet.gluon.contrib`` layers.

``nn`` (Concurrent, HybridConcurrent, Identity, SyncBatchNorm, PixelShuffle1D/2D/3D),
``rnn`` (convolutional RNN/LSTM/GRU cells, LSTMPCell, VariationalDropoutCell),
``cnn`` (DeformableConvolution, ModulatedDeformableConvolution on ops-contrib's operators)
``data`` (IntervalSampler, text.WikiText2/103 from local files) and ``estimator``
(Estimator, event handlers, BatchProcessor; ported from MXNet's Apache-2.0 sources).
``nn.SparseEmbedding`` has a row_sparse weight and gradient (docs/sparse.md "Autograd").
"""
from typing import Any

from . import cnn, data, nn, rnn

__all__ = ["nn", "rnn", "cnn", "data", "estimator"]


def __getattr__(name: str) -> Any:
    # estimator imports gluon.data's DataLoader; gluon.data (vision datasets -> model zoo ->
    # contrib.nn) imports this package: loaded on first use, the import is not circular
    if name == "estimator":
        import importlib
        mod = importlib.import_module(f"{__name__}.estimator")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
