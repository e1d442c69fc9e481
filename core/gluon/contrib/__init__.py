"""``gluon.contrib``: MXNet 1.9.1's ``mxnet.gluon.contrib`` layers.

``nn`` (Concurrent, HybridConcurrent, Identity, SyncBatchNorm, PixelShuffle1D/2D/3D),
``rnn`` (convolutional RNN/LSTM/GRU cells, LSTMPCell, VariationalDropoutCell),
``cnn`` (DeformableConvolution, ModulatedDeformableConvolution on ops-contrib's operators)
and ``data`` (IntervalSampler). Not provided: ``nn.SparseEmbedding`` (row-sparse
gradients), ``data.text`` (WikiText downloads) and ``estimator``.
"""
from . import cnn, data, nn, rnn

__all__ = ["nn", "rnn", "cnn", "data"]
