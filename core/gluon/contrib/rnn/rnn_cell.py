"""``gluon.contrib.rnn.rnn_cell``: ``VariationalDropoutCell`` and ``LSTMPCell`` (defined
with the other cells in ``gluon.rnn``)."""
from ...rnn.cell_wrappers import VariationalDropoutCell
from ...rnn.rnn_cell import LSTMPCell

__all__ = ["VariationalDropoutCell", "LSTMPCell"]
