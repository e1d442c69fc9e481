"""The fully connected recurrent cells (Elman RNN, LSTM, GRU and the projected LSTM)
and, re-exported, the cells that combine or modify other cells.

One base owns what the cells share: the input-to-hidden (``i2h``) and hidden-to-hidden
(``h2h``) FullyConnected projections, whose weights stack the gate blocks along the
output axis (gate and state counts per kind are ``MODES``, shared with the fused
layers), the state shapes and ``repr``.
Each cell only writes its step. Operator names inside a step are MXNet 1.9.1's, so a
hybridized cell traces the same graph.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from .cell_base import HybridRecurrentCell, RecurrentCell
from .cell_wrappers import (BidirectionalCell, DropoutCell, HybridSequentialRNNCell, ModifierCell, ResidualCell,
                            SequentialRNNCell, ZoneoutCell)

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
           "HybridSequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell"]



class Mode(NamedTuple):
    """What the cells and the fused layers of one kind share."""
    gates: int    # gate blocks stacked along the output axis of the i2h/h2h weights
    states: int   # recurrent states (h, and c for an LSTM)


# gate order: rnn (h), lstm (input, forget, cell, output), gru (reset, update, new)
MODES = {"rnn": Mode(1, 1), "lstm": Mode(4, 2), "gru": Mode(3, 1)}


def mode_of(name: str) -> Mode:
    """The ``Mode`` of a cell alias or of an RNN operator mode (``rnn_tanh`` ...)."""
    return MODES[name.split("_")[0]]


class _DenseCell(HybridRecurrentCell):
    """Parameters, states and repr of a fully connected cell of mode ``_mode``."""

    _mode = ""

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any, h2h_weight_initializer: Any,
                 i2h_bias_initializer: Any, h2h_bias_initializer: Any, input_size: int,
                 prefix: str | None, params: Any, projection_size: int | None = None,
                 h2r_weight_initializer: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = MODES[self._mode].gates * hidden_size

        def param(name: str, shape: tuple, init: Any) -> Any:
            return self.params.get(name, shape=shape, init=init, allow_deferred_init=True)

        # registration order is MXNet's: it is the order of collect_params()
        self.i2h_weight = param("i2h_weight", (rows, input_size), i2h_weight_initializer)
        self.h2h_weight = param("h2h_weight", (rows, projection_size or hidden_size), h2h_weight_initializer)
        if projection_size:
            self.h2r_weight = param("h2r_weight", (projection_size, hidden_size), h2r_weight_initializer)
        self.i2h_bias = param("i2h_bias", (rows,), i2h_bias_initializer)
        self.h2h_bias = param("h2h_bias", (rows,), h2h_bias_initializer)

    def _state_sizes(self) -> list[int]:
        return [self._hidden_size] * MODES[self._mode].states

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [{"shape": (batch_size, n), "__layout__": "NC"} for n in self._state_sizes()]

    def _alias(self) -> str:
        return self._mode

    def _mapping(self) -> str:
        rows, cols = self.i2h_weight.shape
        return f"{cols if cols else None} -> {rows}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._mapping()})"

    def _projections(self, F: Any, inputs: Any, h: Any, i2h_weight: Any, h2h_weight: Any, i2h_bias: Any,
                     h2h_bias: Any, prefix: str) -> tuple[Any, Any]:
        n = MODES[self._mode].gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n, name=prefix + "i2h")
        h2h = F.FullyConnected(data=h, weight=h2h_weight, bias=h2h_bias, num_hidden=n, name=prefix + "h2h")
        return i2h, h2h


class RNNCell(_DenseCell):
    r"""Elman recurrent cell: :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`.

    Parameters
    ----------
    hidden_size : int
        Number of output units.
    activation : str, LeakyReLU or callable, default 'tanh'
        The non-linearity.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
        Initializers of the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers of the biases.
    input_size : int, default 0
        Input features; 0 infers them at the first call.
    prefix : str, optional
        Name prefix (default ``rnn<n>_``).
    params : ParameterDict, optional
        Parameters to share.

    A step takes ``(batch, input_size)`` data and one ``(batch, hidden_size)`` state
    and returns the new hidden state as both output and state.
    """

    _mode = "rnn"

    def __init__(self, hidden_size: int, activation: Any = "tanh", i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0, prefix: str | None = None,
                 params: Any = None) -> None:
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._mapping()}, {self._activation})"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,
                       i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix = "t%d_" % self._counter
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        output = self._get_activation(F, F.elemwise_add(i2h, h2h, name=prefix + "plus0"), self._activation,
                                      name=prefix + "out")
        return output, [output]


class LSTMCell(_DenseCell):
    r"""Long short-term memory cell (Hochreiter & Schmidhuber 1997).

    .. math::
        \begin{array}{ll}
        i_t, f_t, o_t = ract(W_{i\cdot} x_t + b_{i\cdot} + W_{h\cdot} h_{t-1} + b_{h\cdot}) \\
        g_t = act(W_{ig} x_t + b_{ig} + W_{hg} h_{t-1} + b_{hg}) \\
        c_t = f_t * c_{t-1} + i_t * g_t \\
        h_t = o_t * act(c_t)
        \end{array}

    Parameters
    ----------
    hidden_size : int
        Number of output units.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
        Initializers of the input and recurrent weight matrices (gates stacked in the
        order input, forget, cell, output).
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers of the biases.
    input_size : int, default 0
        Input features; 0 infers them at the first call.
    prefix : str, optional
        Name prefix (default ``lstm<n>_``).
    params : ParameterDict, optional
        Parameters to share.
    activation : str, default 'tanh'
        Activation of the cell candidate and of the output.
    recurrent_activation : str, default 'sigmoid'
        Activation of the three gates.

    A step takes ``(batch, input_size)`` data and the states ``[h, c]``, each
    ``(batch, hidden_size)``, and returns ``h_t, [h_t, c_t]``.
    """

    _mode = "lstm"

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 prefix: str | None = None, params: Any = None, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid") -> None:
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,
                       i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix = "t%d_" % self._counter
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        gates = F.SliceChannel(F.elemwise_add(i2h, h2h, name=prefix + "plus0"), num_outputs=4,
                               name=prefix + "slice")
        acts = (self._recurrent_activation, self._recurrent_activation, self._activation,
                self._recurrent_activation)
        in_gate, forget_gate, candidate, out_gate = (
            self._get_activation(F, gates[k], act, name=prefix + tag) for k, (act, tag) in enumerate(zip(acts, "ifco")))
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + "mul0"),
                                F.elemwise_mul(in_gate, candidate, name=prefix + "mul1"), name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=self._activation, name=prefix + "activation0"),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class GRUCell(_DenseCell):
    r"""Gated recurrent unit cell in cuDNN's form (the reset gate scales the recurrent
    projection after the matrix product, unlike Cho et al. 2014).

    .. math::
        \begin{array}{ll}
        r_t, z_t = sigmoid(W_{i\cdot} x_t + b_{i\cdot} + W_{h\cdot} h_{t-1} + b_{h\cdot}) \\
        n_t = \tanh(W_{in} x_t + b_{in} + r_t * (W_{hn} h_{t-1} + b_{hn})) \\
        h_t = (1 - z_t) * n_t + z_t * h_{t-1}
        \end{array}

    Parameters
    ----------
    hidden_size : int
        Number of output units.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
        Initializers of the input and recurrent weight matrices (gates stacked in the
        order reset, update, new).
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers of the biases.
    input_size : int, default 0
        Input features; 0 infers them at the first call.
    prefix : str, optional
        Name prefix (default ``gru<n>_``).
    params : ParameterDict, optional
        Parameters to share.

    A step takes ``(batch, input_size)`` data and one ``(batch, hidden_size)`` state.
    """

    _mode = "gru"

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 prefix: str | None = None, params: Any = None) -> None:
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size, prefix, params)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,
                       i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix = "t%d_" % self._counter
        prev_h = states[0]
        i2h, h2h = self._projections(F, inputs, prev_h, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice")
        reset = F.Activation(F.elemwise_add(i2h_r, h2h_r, name=prefix + "plus0"), act_type="sigmoid",
                             name=prefix + "r_act")
        update = F.Activation(F.elemwise_add(i2h_z, h2h_z, name=prefix + "plus1"), act_type="sigmoid",
                              name=prefix + "z_act")
        new = F.Activation(F.elemwise_add(i2h_n, F.elemwise_mul(reset, h2h_n, name=prefix + "mul0"),
                                          name=prefix + "plus2"), act_type="tanh", name=prefix + "h_act")
        keep = F.elemwise_sub(F.ones_like(update, name=prefix + "ones_like0"), update, name=prefix + "minus0")
        next_h = F.elemwise_add(F.elemwise_mul(keep, new, name=prefix + "mul1"),
                                F.elemwise_mul(update, prev_h, name=prefix + "mul20"), name=prefix + "out")
        return next_h, [next_h]


class LSTMPCell(_DenseCell):
    r"""LSTM cell with a projected recurrent state (Sak et al. 2014,
    https://arxiv.org/abs/1402.1128): the LSTM of ``LSTMCell`` (sigmoid gates, tanh)
    reading :math:`r_{t-1}` instead of :math:`h_{t-1}`, and :math:`r_t = W_{hr} h_t`.

    Parameters
    ----------
    hidden_size : int
        Units of the cell state.
    projection_size : int
        Units of the output (the projected state).
    i2h_weight_initializer, h2h_weight_initializer, h2r_weight_initializer : optional
        Initializers of the input, recurrent and projection weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers of the biases.
    input_size : int, default 0
        Input features; 0 infers them at the first call.
    prefix : str, optional
        Name prefix (default ``lstmp<n>_``).
    params : ParameterDict, optional
        Parameters to share.

    States: ``[r, c]`` with shapes ``(batch, projection_size)`` and
    ``(batch, hidden_size)``; a step returns ``r_t, [r_t, c_t]``.
    """

    _mode = "lstm"

    def __init__(self, hidden_size: int, projection_size: int, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, h2r_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 prefix: str | None = None, params: Any = None) -> None:
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size, prefix, params, projection_size=projection_size,
                         h2r_weight_initializer=h2r_weight_initializer)
        self._projection_size = projection_size

    def _state_sizes(self) -> list[int]:
        return [self._projection_size, self._hidden_size]

    def _alias(self) -> str:
        return "lstmp"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._mapping()} -> {self.h2r_weight.shape[0]})"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,
                       h2r_weight: Any, i2h_bias: Any, h2h_bias: Any) -> Any:
        # MXNet writes this step with arithmetic operators (automatic node names) and
        # Activation nodes, unlike LSTMCell: kept so the traced graphs are the same
        prefix = "t%d_" % self._counter
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + "slice")
        in_gate, forget_gate, candidate, out_gate = (
            F.Activation(gates[k], act_type="tanh" if tag == "c" else "sigmoid", name=prefix + tag)
            for k, tag in enumerate("ifco"))
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * candidate, name=prefix + "state")
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"), name=prefix + "hidden")
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size, weight=h2r_weight, no_bias=True,
                                  name=prefix + "out")
        return next_r, [next_r, next_c]
