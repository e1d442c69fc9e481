"""Sequence plumbing shared by the recurrent cells: turning an input into steps or one
tensor, masking and reversing padded sequences, default begin states and the step loop
of ``unroll``.

The operators are created in a fixed order because a traced graph's automatic node
names (``stack0``, ``split1`` ...) depend on it and must be MXNet 1.9.1's.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from ... import ndarray, symbol
from ..parameter import tensor_types

numeric_types = (float, int, np.generic)


def as_list(obj: Any) -> list:
    """``obj`` itself when it is a list, else ``[obj]``."""
    return obj if isinstance(obj, list) else [obj]


def module_of(x: Any) -> Any:
    """``symbol`` for a Symbol (or a list starting with one), else ``ndarray``."""
    first = x[0] if isinstance(x, (list, tuple)) else x
    return symbol if isinstance(first, symbol.Symbol) else ndarray


def make_state(func: Any, name: str, info: dict) -> Any:
    """Call a begin-state creator. plexnet's NDArray creators reject the symbol-only
    attributes (``__layout__``) that MXNet's ignore, so those are dropped for them."""
    if getattr(func, "__module__", "").startswith("plexnet.ndarray"):
        info = {k: v for k, v in info.items() if not (k.startswith("__") and k.endswith("__"))}
    return func(name=name, **info)


def format_sequence(length: int | None, inputs: Any, layout: str,
                    merge: bool | None) -> tuple[Any, int, Any, int]:
    """Bring ``inputs`` (one tensor laid out as ``layout``, or a list of steps) to the
    form ``merge`` asks for: a list of steps (False), one tensor (True) or as given
    (None). Returns ``(inputs, time_axis, F, batch_size)``; the batch size is 0 for
    symbols."""
    assert inputs is not None, \
        "unroll(inputs=None) has been deprecated. Please create input variables outside unroll."
    axis = layout.find("T")
    batch_size = 0
    F: Any
    if isinstance(inputs, symbol.Symbol):
        F = symbol
        if merge is False:
            assert len(inputs.list_outputs()) == 1, \
                "unroll doesn't allow grouped symbol as input. Please convert " \
                "to list with list(inputs) first or let unroll handle splitting."
            inputs = list(symbol.split(inputs, axis=axis, num_outputs=length, squeeze_axis=1))
    elif isinstance(inputs, ndarray.NDArray):
        F = ndarray
        batch_size = inputs.shape[layout.find("N")]
        if merge is False:
            assert length is None or length == inputs.shape[axis]
            inputs = as_list(ndarray.split(inputs, axis=axis, num_outputs=inputs.shape[axis], squeeze_axis=1))
    else:
        assert length is None or len(inputs) == length
        F = module_of(inputs)
        if F is ndarray:
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
    return inputs, axis, F, batch_size


def mask_sequence(F: Any, data: Any, length: int | None, valid_length: Any, time_axis: int,
                  merge: bool | None) -> Any:
    """Zero the steps of ``data`` past each sequence's ``valid_length``; a list of steps
    when not ``merge``."""
    assert valid_length is not None
    if not isinstance(data, tensor_types):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True, axis=time_axis)
    if not merge:
        outputs = as_list(F.split(outputs, num_outputs=length, axis=time_axis, squeeze_axis=True))
    return outputs


def reverse_sequence(steps: list, length: int, valid_length: Any = None) -> list:
    """The steps in reverse order; with ``valid_length`` each sequence is reversed
    within its own valid part (the padding stays at the end)."""
    if valid_length is None:
        return list(reversed(steps))
    F = module_of(steps)
    rev = F.SequenceReverse(F.stack(*steps, axis=0), sequence_length=valid_length, use_sequence_length=True)
    if length > 1 or F is symbol:
        return F.split(rev, axis=0, num_outputs=length, squeeze_axis=True)
    return [rev[0]]


def default_begin_state(cell: Any, F: Any, begin_state: Any, inputs: Any, batch_size: int) -> Any:
    """``begin_state``, or the cell's zero states (on the inputs' context)."""
    if begin_state is not None:
        return begin_state
    if F is ndarray:
        ctx = inputs.context if isinstance(inputs, tensor_types) else inputs[0].context
        with ctx:
            return cell.begin_state(func=F.zeros, batch_size=batch_size)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)


def split_states(cells: Sequence[Any], states: Sequence[Any]) -> Iterator[tuple[Any, list]]:
    """Each cell with its share of a flat state list, in order."""
    p = 0
    for cell in cells:
        n = len(cell.state_info())
        yield cell, list(states[p:p + n])
        p += n


def unroll_steps(cell: Any, length: int, inputs: Any, begin_state: Any, layout: str,
                 merge_outputs: bool | None, valid_length: Any) -> tuple[Any, list]:
    """Call ``cell`` once per step. With ``valid_length`` the states returned are each
    sequence's last valid ones and the outputs past it are zero."""
    cell.reset()
    inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
    states = default_begin_state(cell, F, begin_state, inputs, batch_size)
    outputs, history = [], []
    for i in range(length):
        output, states = cell(inputs[i], states)
        outputs.append(output)
        if valid_length is not None:
            history.append(states)
    if valid_length is not None:
        states = [F.SequenceLast(F.stack(*steps, axis=0), sequence_length=valid_length,
                                 use_sequence_length=True, axis=0)
                  for steps in zip(*history)]
        outputs = mask_sequence(F, outputs, length, valid_length, axis, True)
    outputs, _, _, _ = format_sequence(length, outputs, layout, merge_outputs)
    return outputs, states
