"""``gluon.contrib``: MXNet 1.9.1's ``mxnet.gluon.contrib`` layers.

``nn`` (Concurrent, HybridConcurrent, Identity, SyncBatchNorm, PixelShuffle1D/2D/3D),
``rnn`` (convolutional RNN/LSTM/GRU cells, LSTMPCell, VariationalDropoutCell),
``cnn`` (DeformableConvolution, ModulatedDeformableConvolution on ops-contrib's operators)
``data`` (IntervalSampler) and ``estimator`` (Estimator, event handlers, BatchProcessor;
ported from MXNet's Apache-2.0 sources). Not provided: ``nn.SparseEmbedding`` (row-sparse
gradients) and ``data.text`` (WikiText downloads).
"""
from . import cnn, data, estimator, nn, rnn

__all__ = ["nn", "rnn", "cnn", "data", "estimator"]
