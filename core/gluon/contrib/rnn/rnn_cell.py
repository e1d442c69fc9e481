"""``gluon.contrib.rnn.rnn_cell``: the cells live in ``gluon.rnn.contrib_cells``."""
from ...rnn.contrib_cells import LSTMPCell, VariationalDropoutCell

__all__ = ["VariationalDropoutCell", "LSTMPCell"]
