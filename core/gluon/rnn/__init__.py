"""``gluon.rnn``: recurrent layers on the fused ``RNN`` operator and recurrent cells
(MXNet 1.9.1 ``mxnet.gluon.rnn``, ported from its Apache-2.0 sources). The
``VariationalDropoutCell`` and ``LSTMPCell`` of MXNet's ``gluon.contrib.rnn`` are
exported here as well."""
from . import rnn_cell, rnn_layer
from .contrib_cells import LSTMPCell, VariationalDropoutCell
from .rnn_cell import (BidirectionalCell, DropoutCell, GRUCell, HybridRecurrentCell, HybridSequentialRNNCell,
                       LSTMCell, ModifierCell, RecurrentCell, ResidualCell, RNNCell, SequentialRNNCell, ZoneoutCell)
from .rnn_layer import GRU, LSTM, RNN

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
           "HybridSequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell", "VariationalDropoutCell", "LSTMPCell", "RNN", "LSTM", "GRU", "rnn_cell", "rnn_layer"]
