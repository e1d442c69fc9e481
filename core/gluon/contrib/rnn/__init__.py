"""``gluon.contrib.rnn``: convolutional recurrent cells, ``LSTMPCell`` and
``VariationalDropoutCell`` (the latter two are also in ``gluon.rnn``)."""
from . import conv_rnn_cell, rnn_cell
from .conv_rnn_cell import (Conv1DGRUCell, Conv1DLSTMCell, Conv1DRNNCell, Conv2DGRUCell, Conv2DLSTMCell,
                            Conv2DRNNCell, Conv3DGRUCell, Conv3DLSTMCell, Conv3DRNNCell)
from .rnn_cell import LSTMPCell, VariationalDropoutCell

__all__ = ["Conv1DRNNCell", "Conv1DLSTMCell", "Conv1DGRUCell", "Conv2DRNNCell", "Conv2DLSTMCell", "Conv2DGRUCell",
           "Conv3DRNNCell", "Conv3DLSTMCell", "Conv3DGRUCell", "VariationalDropoutCell", "LSTMPCell",
           "conv_rnn_cell", "rnn_cell"]
