"""Cells built from other cells: stacks (``SequentialRNNCell`` and its hybrid twin),
``DropoutCell``, ``BidirectionalCell`` and the modifiers on the ``ModifierCell`` base
(``ZoneoutCell``, ``ResidualCell``, ``VariationalDropoutCell``).

A modifier wraps one base cell and shares its parameters; its prefix is the base
cell's prefix followed by the modifier's alias. The base cell is marked modified so
that it is no longer stepped on its own.
"""
from __future__ import annotations

from typing import Any, Callable

from ... import symbol
from ..block import _indent
from ..parameter import tensor_types
from .cell_base import _MODIFIED, HybridRecurrentCell, RecurrentCell
from .sequence import (default_begin_state, format_sequence, mask_sequence, numeric_types, reverse_sequence,
                       split_states)

__all__ = ["SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell",
           "ResidualCell", "BidirectionalCell", "VariationalDropoutCell"]


def _children_state_info(cell: RecurrentCell, batch_size: int) -> list[dict]:
    children: list[Any] = list(cell._children.values())
    return sum([c.state_info(batch_size) for c in children], [])


def _children_begin_state(cell: RecurrentCell, message: str = _MODIFIED, **kwargs: Any) -> list:
    assert not cell._modified, message
    children: list[Any] = list(cell._children.values())
    return sum([c.begin_state(**kwargs) for c in children], [])


class _Stack(RecurrentCell):
    """What both sequential stacks do: children run one after the other, each on its
    own slice of the flat state list."""

    def __repr__(self) -> str:
        body = "\n".join(f"({i}): {_indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{type(self).__name__}(\n{body}\n)"

    def add(self, cell: RecurrentCell) -> None:
        """Append ``cell`` to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return _children_state_info(self, batch_size)

    def begin_state(self, **kwargs: Any) -> list:  # type: ignore[override]
        return _children_begin_state(self, **kwargs)

    def __call__(self, inputs: Any, states: Any) -> tuple[Any, list]:
        self._counter += 1
        assert all(not isinstance(cell, BidirectionalCell) for cell in self._children.values())
        next_states: list = []
        for cell, state in split_states(list(self._children.values()), states):
            inputs, state = cell(inputs, state)
            next_states += state
        return inputs, next_states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Unroll each child over the whole sequence in turn; only the last child's
        outputs follow ``merge_outputs``."""
        self.reset()
        inputs, _, F, batch_size = format_sequence(length, inputs, layout, None)
        begin_state = default_begin_state(self, F, begin_state, inputs, batch_size)
        cells: list[Any] = list(self._children.values())
        next_states: list = []
        for i, (cell, states) in enumerate(split_states(cells, begin_state)):
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states, layout=layout,
                                         merge_outputs=None if i < len(cells) - 1 else merge_outputs,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i: int) -> Any:
        return self._children[str(i)]

    def __len__(self) -> int:
        return len(self._children)


class SequentialRNNCell(_Stack):
    """A stack of recurrent cells, run in the order added."""

    def __init__(self, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class HybridSequentialRNNCell(_Stack, HybridRecurrentCell):
    """A stack of hybridizable recurrent cells, run in the order added."""

    def __init__(self, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        return self.__call__(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs; the states pass through unchanged.

    Parameters
    ----------
    rate : float
        Fraction of the elements dropped.
    axes : tuple of int, default ()
        Axes along which one mask is shared (plain dropout when empty).
    """

    def __init__(self, rate: float, axes: tuple = (), prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix, params)
        assert isinstance(rate, numeric_types), "rate must be a number"
        self._rate = rate
        self._axes = axes

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return []

    def _alias(self) -> str:
        return "dropout"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes, name="t%d_fwd" % self._counter)
        return inputs, states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """One Dropout over the whole sequence when it comes as one tensor, else per step
        (``valid_length`` is not used: dropout needs no masking)."""
        self.reset()
        inputs, _, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, tensor_types):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """Base of the cells that wrap one ``base_cell`` and change its step (zoneout,
    residual connection, dropout masks). The base cell is marked modified: step the
    modifier, not the base cell."""

    def __init__(self, base_cell: RecurrentCell) -> None:
        assert not base_cell._modified, \
            "Cell %s is already modified. One cell cannot be modified twice" % base_cell.name
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self) -> Any:
        return self.base_cell.params

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func: Callable[..., Any] = symbol.zeros, **kwargs: Any) -> list:  # type: ignore[override]
        assert not self._modified, _MODIFIED.replace("ZoneoutCell", "DropoutCell")
        with _unmodified(self.base_cell):
            return self.base_cell.begin_state(func=func, **kwargs)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_cell})"


class _unmodified:
    """Lets a modifier call its base cell's own begin_state/unroll."""

    def __init__(self, cell: RecurrentCell) -> None:
        self._cell = cell

    def __enter__(self) -> None:
        self._cell._modified = False

    def __exit__(self, *exc: Any) -> None:
        self._cell._modified = True


def _no_bidirectional(base_cell: RecurrentCell, what: str, wrapper: str) -> None:
    assert not isinstance(base_cell, BidirectionalCell), \
        f"BidirectionalCell doesn't support {what}" + \
        (" since it doesn't support step" if what == "zoneout" else "") + \
        f". Please add {wrapper} to the cells underneath instead."
    if isinstance(base_cell, SequentialRNNCell):
        # as MXNet: a SequentialRNNCell has no _bidirectional, so this raises AttributeError
        assert not base_cell._bidirectional, (  # type: ignore[attr-defined]
            f"Bidirectional SequentialRNNCell doesn't support {what}. "
            f"Please add {wrapper} to the cells underneath instead.")


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016): in training, each unit of the output and of the
    states keeps its previous value with probability ``zoneout_outputs`` /
    ``zoneout_states``."""

    def __init__(self, base_cell: RecurrentCell, zoneout_outputs: float = 0., zoneout_states: float = 0.) -> None:
        _no_bidirectional(base_cell, "zoneout", "ZoneoutCell")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, "
                f"{self.base_cell})")

    def _alias(self) -> str:
        return "zoneout"

    def reset(self) -> None:
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p: float, new: Any, old: Any) -> Any:
            # the dropout of ones is the mask: 0 where the unit keeps its old value
            return F.where(F.Dropout(F.ones_like(new), p=p), new, old)

        prev_output = self._prev_output if self._prev_output is not None else F.zeros_like(next_output)
        p_out, p_state = self.zoneout_outputs, self.zoneout_states
        output = keep_new(p_out, next_output, prev_output) if p_out != 0. else next_output
        if p_state != 0.:
            next_states = [keep_new(p_state, new, old) for new, old in zip(next_states, states)]
        self._prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds the step's input to the base cell's output (Wu et al. 2016,
    https://arxiv.org/abs/1609.08144)."""

    def __init__(self, base_cell: RecurrentCell) -> None:
        super().__init__(base_cell)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs, name="t%d_fwd" % self._counter), states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Unroll the base cell over the sequence, then add the (masked) inputs."""
        self.reset()
        with _unmodified(self.base_cell):
            outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs, valid_length=valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, tensor_types)
        inputs, axis, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = mask_sequence(F, inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward over the sequence and joins their
    outputs along the feature axis. It has no step: use ``unroll``.

    Parameters
    ----------
    l_cell : RecurrentCell
        The forward cell.
    r_cell : RecurrentCell
        The backward cell.
    output_prefix : str, default 'bi_'
        Prefix of the joined outputs' names.
    """

    def __init__(self, l_cell: RecurrentCell, r_cell: RecurrentCell, output_prefix: str = "bi_") -> None:
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs: Any, states: Any) -> Any:
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(forward={self._children['l_cell']}, "
                f"backward={self._children['r_cell']})")

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return _children_state_info(self, batch_size)

    def begin_state(self, **kwargs: Any) -> list:  # type: ignore[override]
        return _children_begin_state(self, _MODIFIED.replace("ZoneoutCell", "DropoutCell"), **kwargs)

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Unroll both cells (the backward one on the reversed valid part of each
        sequence) and concatenate their outputs step by step."""
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        reversed_inputs = list(reverse_sequence(inputs, length, valid_length))
        states = default_begin_state(self, F, begin_state, inputs, batch_size)
        l_cell: Any
        r_cell: Any
        l_cell, r_cell = self._children.values()
        n_left = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left], layout=layout,
                                            merge_outputs=merge_outputs, valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs, begin_state=states[n_left:],
                                            layout=layout, merge_outputs=False, valid_length=valid_length)
        r_outputs = reverse_sequence(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, tensor_types)
            l_outputs, _, _, _ = format_sequence(None, l_outputs, layout, merge_outputs)
            r_outputs, _, _, _ = format_sequence(None, r_outputs, layout, merge_outputs)
        if merge_outputs:
            r_outputs = F.stack(*r_outputs, axis=axis)
            outputs = F.concat(l_outputs, r_outputs, dim=2, name="%sout" % self._output_prefix)
        else:
            outputs = [F.concat(l_o, r_o, dim=1, name="%st%d" % (self._output_prefix, i))
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, r_outputs))]
        if valid_length is not None:
            outputs = mask_sequence(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal & Ghahramani 2016, https://arxiv.org/abs/1512.05287):
    one dropout mask per sequence, each for the inputs, the first state (h) and the
    outputs. The masks are drawn at the first step and kept until ``reset()`` (which
    ``unroll`` calls).

    Parameters
    ----------
    base_cell : RecurrentCell
        The cell to wrap.
    drop_inputs, drop_states, drop_outputs : float, default 0.
        Dropout rates; 0 leaves that part alone.
    """

    def __init__(self, base_cell: RecurrentCell, drop_inputs: float = 0., drop_states: float = 0.,
                 drop_outputs: float = 0.) -> None:
        if drop_states:
            _no_bidirectional(base_cell, "variational state dropout", "VariationalDropoutCell")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _alias(self) -> str:
        return "vardrop"

    def reset(self) -> None:
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _masked(self, F: Any, part: str, x: Any) -> Any:
        """``x`` times the sequence's mask of ``part`` (drawn from ``x``'s shape at the
        first step); ``x`` itself when that part has no dropout."""
        rate = getattr(self, f"drop_{part}")
        if not rate:
            return x
        mask = getattr(self, f"drop_{part}_mask")
        if mask is None:
            mask = F.Dropout(F.ones_like(x), p=rate)
            setattr(self, f"drop_{part}_mask", mask)
        return x * mask

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:
        if self.drop_states:   # only h, always the first state
            states = [self._masked(F, "states", states[0])] + list(states[1:])
        inputs = self._masked(F, "inputs", inputs)
        next_output, next_states = self.base_cell(inputs, states)
        return self._masked(F, "outputs", next_output), next_states

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p_out = {self.drop_outputs}, p_state = {self.drop_states})"

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Without state dropout the input and output masks are applied to the whole
        sequence at once (dropout shared along the time axis); with it, step by step."""
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs, valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, True)
        states = default_begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        outputs, states = self.base_cell.unroll(length, inputs, states, layout, merge_outputs=True,
                                                valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, tensor_types)
        outputs, _, _, _ = format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = mask_sequence(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, states
