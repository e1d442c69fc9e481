"""``plexnet.rnn`` (``mx.rnn``): MXNet 1.x's symbolic RNN cells, text iterators and
RNN checkpoints."""
from __future__ import annotations

from ..io import DataBatch, DataDesc, DataIter
from ..model import load_checkpoint, save_checkpoint
from . import io, rnn, rnn_cell
from .conv_rnn_cell import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell
from .io import BucketSentenceIter, encode_sentences
from .rnn import do_rnn_checkpoint, load_rnn_checkpoint, rnn_unroll, save_rnn_checkpoint
from .rnn_cell import (BaseRNNCell, BidirectionalCell, DropoutCell, FusedRNNCell, GRUCell, LSTMCell, ModifierCell,
                       ResidualCell, RNNCell, RNNParams, SequentialRNNCell, ZoneoutCell)

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell", "SequentialRNNCell",
           "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell", "BaseConvRNNCell",
           "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell", "encode_sentences", "BucketSentenceIter", "rnn_unroll",
           "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint", "DataBatch", "DataDesc", "DataIter",
           "load_checkpoint", "save_checkpoint", "io", "rnn", "rnn_cell"]
