"""The recurrent cell contract: ``RecurrentCell`` (one step per call, ``state_info``,
``begin_state``, ``unroll``) and its hybridizable variant."""
from __future__ import annotations

from typing import Any, Callable

from ... import ndarray
from ..block import Block, HybridBlock
from ..nn import LeakyReLU
from .sequence import make_state, unroll_steps

__all__ = ["RecurrentCell", "HybridRecurrentCell"]

_MODIFIED = ("After applying modifier cells (e.g. ZoneoutCell) the base "
             "cell cannot be called directly. Call the modifier cell instead.")

# activations with their own operator; any other name goes to Activation(act_type=...)
_NAMED_ACTIVATIONS = ("tanh", "relu", "sigmoid", "softsign")


class RecurrentCell(Block):
    """Abstract base class of the recurrent cells.

    A call runs one time step: ``cell(inputs, states) -> (output, new_states)``.
    ``state_info`` describes the states, ``begin_state`` creates them and ``unroll``
    runs a whole sequence. Operators a step creates are named ``t<step>_...``.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the cell's name and of its parameters' names.
    params : ParameterDict, optional
        Parameters to share; a new container when None.
    """

    def __init__(self, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Restart the step and begin-state counters (before another sequence or graph)."""
        self._init_counter = -1
        self._counter = -1
        child: Any
        for child in self._children.values():
            child.reset()

    def state_info(self, batch_size: int = 0) -> list[dict]:
        """Shape and layout of each state, for a batch of ``batch_size``."""
        raise NotImplementedError()

    def begin_state(self, batch_size: int = 0, func: Callable[..., Any] = ndarray.zeros,
                    **kwargs: Any) -> list:
        """Initial states, one per ``state_info`` entry, made by ``func``.

        Parameters
        ----------
        batch_size : int
            Size of the batch axis (needed for NDArray states).
        func : callable, default ndarray.zeros
            Creator called with ``name``, the state's info and ``kwargs``
            (``symbol.zeros``, ``symbol.var``, ``ndarray.ones``, ...).
        **kwargs
            More arguments for ``func`` (``dtype``, ``ctx``, ...).
        """
        assert not self._modified, _MODIFIED
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(make_state(func, "%sbegin_state_%d" % (self._prefix, self._init_counter), info))
        return states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Run the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : Symbol, NDArray or list of them
            One tensor laid out as ``layout`` or a list of ``(batch, ...)`` steps.
        begin_state : list, optional
            Initial states; ``begin_state()``'s zeros when None.
        layout : str, default 'NTC'
            Layout of a single-tensor input and of merged outputs.
        merge_outputs : bool, optional
            True: one output tensor; False: a list of steps; None: whichever is cheaper.
        valid_length : Symbol or NDArray, optional
            ``(batch,)`` lengths of the sequences: padded outputs are zero and the
            states returned are each sequence's last valid ones.

        Returns
        -------
        outputs : tensor or list of tensors
        states : list of tensors
        """
        return unroll_steps(self, length, inputs, begin_state, layout, merge_outputs, valid_length)

    def _get_activation(self, F: Any, inputs: Any, activation: Any, **kwargs: Any) -> Any:
        """Apply ``activation``: a name, a LeakyReLU block or any callable."""
        if isinstance(activation, str) and activation in _NAMED_ACTIVATIONS:
            return getattr(F, activation)(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs: Any, states: Any) -> Any:  # type: ignore[override]
        """One time step: ``(output, new_states)``."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell whose step is a ``hybrid_forward`` (can be hybridized)."""

    def __init__(self, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
