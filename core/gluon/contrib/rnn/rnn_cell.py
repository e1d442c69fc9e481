"""``gluon.contrib.rnn.rnn_cell``: ``VariationalDropoutCell`` and ``LSTMPCell`` (defined
with the other cells in ``gluon.rnn``) and ``dynamic_unroll`` (MXNet 1.9.1's)."""
from __future__ import annotations

from typing import Any

from ...rnn.cell_wrappers import VariationalDropoutCell
from ...rnn.rnn_cell import LSTMPCell
from ...rnn.sequence import format_sequence

__all__ = ["VariationalDropoutCell", "LSTMPCell", "dynamic_unroll"]


def dynamic_unroll(cell: Any, inputs: Any, begin_state: Any, drop_inputs: float = 0, drop_outputs: float = 0,
                   layout: str = "TNC", valid_length: Any = None) -> tuple[Any, Any]:
    """Unroll ``cell`` over the time axis of ``inputs`` with ``contrib.foreach`` (MXNet
    1.9.1's ``gluon.contrib.rnn.rnn_cell.dynamic_unroll``). With ``valid_length`` (shape
    ``(batch,)``) a sequence keeps its last valid state and its padded outputs are 0.

    Returns ``(outputs, states)``: outputs laid out as ``layout``, states as ``begin_state``.
    """
    inputs, axis, F, _ = format_sequence(0, inputs, layout, True)
    axes = list(range(len(layout)))
    if axis != 0:
        axes[0], axes[axis] = axes[axis], axes[0]
        inputs = F.transpose(inputs, axes=axes)
    states = begin_state
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(axis,))

    if valid_length is None:
        def loop_body(inputs: Any, states: Any) -> Any:
            return cell(inputs, states)
    else:
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        states.append(F.zeros((1,)))  # the step number rides along as the last state

        def loop_body(inputs: Any, states: Any) -> Any:
            cell_states, iter_no = states[:-1], states[-1]
            out, new_states = cell(inputs, cell_states)
            for i, state in enumerate(cell_states):
                new_states[i] = F.where(F.broadcast_greater(valid_length, iter_no), new_states[i], state)
            new_states.append(iter_no + 1)
            return out, new_states

    outputs, states = F.contrib.foreach(loop_body, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(axis,))
    if axis != 0:
        outputs = F.transpose(outputs, axes)
    if valid_length is not None:
        outputs = F.SequenceMask(outputs, sequence_length=valid_length, use_sequence_length=True, axis=axis)
        return outputs, states[:-1]
    return outputs, states
