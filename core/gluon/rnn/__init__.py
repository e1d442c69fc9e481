"""``gluon.rnn``: recurrent cells (one step per call, ``unroll`` over a sequence) and
the fused recurrent layers on the ``RNN`` operator, as MXNet 1.9.1's ``gluon.rnn``.
``VariationalDropoutCell`` and ``LSTMPCell`` (MXNet's ``gluon.contrib.rnn``) are
exported here as well."""
from . import rnn_cell, rnn_layer
from .cell_wrappers import VariationalDropoutCell
from .rnn_cell import (BidirectionalCell, DropoutCell, GRUCell, HybridRecurrentCell, HybridSequentialRNNCell,
                       LSTMCell, LSTMPCell, ModifierCell, RecurrentCell, ResidualCell, RNNCell, SequentialRNNCell,
                       ZoneoutCell)
from .rnn_layer import GRU, LSTM, RNN

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
           "HybridSequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell", "VariationalDropoutCell", "LSTMPCell", "RNN", "LSTM", "GRU", "rnn_cell", "rnn_layer"]
