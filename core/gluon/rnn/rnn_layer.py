"""Fused recurrent layers: ``RNN``, ``LSTM`` and ``GRU`` are one layer class
parameterised by the ``RNN`` operator's mode, running every layer and direction in one
operator call on the packed parameters.

Parameters are registered per layer and direction (``l0_i2h_weight``,
``r1_h2h_bias`` ...) in MXNet 1.9.1's order; ``_collect_params_with_prefix`` writes them
under the names of the equivalent stack of cells (``_unfused.0.l_cell.i2h_weight``) as
MXNet does, so ``.params`` files load both ways.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from ... import ndarray, symbol
from ...symbol.symbol import create as _create_symbol
from ..block import HybridBlock
from ..parameter import tensor_types
from . import rnn_cell
from .sequence import make_state

__all__ = ["RNN", "LSTM", "GRU"]

_PARAM_NAME = re.compile(r"(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z")


class _RNNLayer(HybridBlock):
    """A multi-layer, optionally bidirectional recurrent layer of ``mode`` (the RNN
    operator's: rnn_relu, rnn_tanh, lstm, gru); ``projection_size`` and the state
    clipping are LSTM-only."""

    def __init__(self, hidden_size: int, num_layers: int, layout: str, dropout: float, bidirectional: bool,
                 input_size: int, i2h_weight_initializer: Any, h2h_weight_initializer: Any,
                 i2h_bias_initializer: Any, h2h_bias_initializer: Any, mode: str, projection_size: int | None,
                 h2r_weight_initializer: Any, lstm_state_clip_min: float | None,
                 lstm_state_clip_max: float | None, lstm_state_clip_nan: bool, dtype: Any,
                 use_sequence_length: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        assert layout in ("TNC", "NTC"), "Invalid layout %s; must be one of ['TNC' or 'NTC']" % layout
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states: bool | None = None
        self._gates = rnn_cell.mode_of(mode).gates

        rows = self._gates * hidden_size
        out_size = self._projection_size or hidden_size   # what a layer passes on per direction
        ni = input_size
        for i in range(num_layers):
            for d in self._directions():
                self._register_param(f"{d}{i}_i2h_weight", (rows, ni), i2h_weight_initializer, dtype)
                self._register_param(f"{d}{i}_h2h_weight", (rows, out_size), h2h_weight_initializer, dtype)
                self._register_param(f"{d}{i}_i2h_bias", (rows,), i2h_bias_initializer, dtype)
                self._register_param(f"{d}{i}_h2h_bias", (rows,), h2h_bias_initializer, dtype)
                if self._projection_size:
                    self._register_param(f"{d}{i}_h2r_weight", (out_size, hidden_size), h2r_weight_initializer,
                                         dtype)
            ni = out_size * self._dir

    def _directions(self) -> list[str]:
        return ["l", "r"][:self._dir]

    def _register_param(self, name: str, shape: tuple, init: Any, dtype: Any) -> Any:
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True, dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self) -> str:
        shape: Any = self._reg_params["l0_i2h_weight"].shape
        s = f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0] // self._gates}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        return s + ")"

    def _collect_params_with_prefix(self, prefix: str = "") -> dict:
        if prefix:
            prefix += "."
        matches = {key: _PARAM_NAME.match(key) for key in self._reg_params}
        bidirectional = any(m.group(1) == "r" for m in matches.values())  # type: ignore[union-attr]

        def unfused(m: Any) -> str:
            d, layer, kind, what = m.groups()
            cell = f"{d}_cell." if bidirectional else ""
            return f"_unfused.{layer}.{cell}{kind}_{what}"

        ret = {prefix + unfused(matches[key]): val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size: int = 0) -> list[dict]:
        """``(layers * directions, batch, size)`` states: h (the projection's size for a
        projected LSTM), and c for an LSTM."""
        sizes = [self._projection_size or self._hidden_size, self._hidden_size][:rnn_cell.mode_of(self._mode).states]
        return [{"shape": (self._num_layers * self._dir, batch_size, n), "__layout__": "LNC", "dtype": self._dtype}
                for n in sizes]

    def _unfuse(self) -> rnn_cell.HybridSequentialRNNCell:
        """The equivalent stack of cells, sharing this layer's parameters."""
        assert not self._projection_size, "_unfuse does not support projection layer yet!"
        assert not self._lstm_state_clip_min and not self._lstm_state_clip_max, \
            "_unfuse does not support state clipping yet!"
        mode = self._mode

        def make_cell(**kwargs: Any) -> Any:
            if mode.startswith("rnn_"):
                return rnn_cell.RNNCell(self._hidden_size, activation=mode[4:], **kwargs)
            return (rnn_cell.LSTMCell if mode == "lstm" else rnn_cell.GRUCell)(self._hidden_size, **kwargs)

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kwargs = {"input_size": ni, "i2h_weight_initializer": self._i2h_weight_initializer,
                          "h2h_weight_initializer": self._h2h_weight_initializer,
                          "i2h_bias_initializer": self._i2h_bias_initializer,
                          "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(make_cell(prefix="l%d_" % i, **kwargs),
                                                         make_cell(prefix="r%d_" % i, **kwargs)))
                else:
                    stack.add(make_cell(prefix="l%d_" % i, **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def cast(self, dtype: Any) -> None:
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size: int = 0, func: Callable[..., Any] = ndarray.zeros, **kwargs: Any) -> list:
        """Initial states (``h0_0``, ``h0_1`` after the prefix), one per ``state_info``
        entry, made by ``func`` (``ndarray.zeros``, ``symbol.var`` ...) with ``kwargs``."""
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(make_state(func, "%sh0_%d" % (self.prefix, i), info))
        return states

    def _finish_shapes(self, inputs: Any) -> None:
        """Give the first layer's i2h weights the input size (deferred init): the
        packed-parameter concat cannot infer it backwards."""
        shape = getattr(inputs, "shape", None)
        if shape is None or len(shape) != 3:
            return
        for d in self._directions():
            p = getattr(self, f"{d}0_i2h_weight")
            if p.shape is not None and p.shape[1] == 0 and shape[2]:
                p.shape = (p.shape[0], shape[2])

    def _tie_input_size(self, F: Any, inputs: Any, kwargs: dict) -> dict:
        """Traced with the input size still unknown (a hybridized parent calls this
        layer with Symbols before deferred init): add a zero array shaped
        ``(gates * hidden, C)`` from the data to the first layer's i2h weights, so that
        shape inference gives them the input size as MXNet's ``_rnn_param_concat``
        does. Values and gradients are unchanged."""
        p = self._reg_params["l0_i2h_weight"]
        if p.shape is None or p.shape[1] != 0:
            return kwargs
        first = F.reshape(F.slice_axis(F.slice_axis(inputs, axis=0, begin=0, end=1), axis=1, begin=0, end=1),
                          shape=(1, -1))
        zeros = F.zeros_like(F.broadcast_axis(first, axis=0, size=p.shape[0]))
        kwargs = dict(kwargs)
        for d in self._directions():
            name = f"{d}0_i2h_weight"
            kwargs[name] = F.elemwise_add(kwargs[name], zeros)
        return kwargs

    def infer_shape(self, inputs: Any, *args: Any) -> None:
        self._finish_shapes(inputs)

    def __call__(self, inputs: Any, states: Any = None, sequence_length: Any = None,  # type: ignore[override]
                 **kwargs: Any) -> Any:
        self._finish_shapes(inputs)
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, ndarray.NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, tensor_types):
            states = [states]
        if self._use_sequence_length:
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any,  # type: ignore[override]
                       sequence_length: Any = None, **kwargs: Any) -> Any:
        if F is ndarray:
            batch_size = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info["shape"]:
                    raise ValueError("Invalid recurrent state shape. Expecting %s, got %s."
                                     % (str(info["shape"]), str(state.shape)))
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        return out[0] if self.skip_states else out

    def _packed_params(self, F: Any, kwargs: dict) -> Any:
        """All parameters flattened into one vector in the RNN operator's order: the
        weights of every layer and direction, then the biases (no h2r bias)."""
        kinds = ["i2h", "h2h", "h2r"] if self._projection_size else ["i2h", "h2h"]
        parts = [kwargs[f"{d}{layer}_{kind}_{what}"].reshape(-1)
                 for what in ["weight", "bias"]
                 for layer in range(self._num_layers)
                 for d in self._directions()
                 for kind in kinds if kind != "h2r" or what != "bias"]
        if F is symbol:
            # MXNet's node is _rnn_param_concat (Concat that also infers the parts'
            # shapes backwards); the shapes are settled before (_finish_shapes,
            # _tie_input_size), so a Concat under MXNet's node name does
            return _create_symbol("Concat", parts, {"dim": 0}, hint="_rnn_param_concat")
        return F.concat(*parts, dim=0)

    def _forward_kernel(self, F: Any, inputs: Any, states: Any, sequence_length: Any, **kwargs: Any) -> Any:
        """One RNN operator call over the (time-major) sequence."""
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, 0, 1)
        if F is symbol:
            kwargs = self._tie_input_size(F, inputs, kwargs)
        params = self._packed_params(F, kwargs)
        rnn_args = states + [sequence_length] if self._use_sequence_length else states
        rnn = F.RNN(inputs, params, *rnn_args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=self._projection_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2, p=self._dropout,
                    state_outputs=True, mode=self._mode, lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max, lstm_state_clip_nan=self._lstm_state_clip_nan)
        outputs, states = rnn[0], [rnn[k] for k in range(1, 1 + rnn_cell.mode_of(self._mode).states)]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs, states


_LAYER_DOC = """
    Parameters
    ----------
    hidden_size : int
        Features of the hidden state h.
    num_layers : int, default 1
        Number of stacked recurrent layers.
    layout : str, default 'TNC'
        Layout of the data and outputs ('TNC' or 'NTC': time, batch, features).
    dropout : float, default 0
        Dropout on the outputs of every layer but the last.
    bidirectional : bool, default False
        Run a backward layer too and concatenate both outputs.
    input_size : int, default 0
        Input features; 0 infers them from the first input.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
        Initializers of the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers of the biases.
    dtype : str, default 'float32'
        Type of the parameters and of the default states.
    prefix : str, optional
        Name prefix.
    params : ParameterDict, optional
        Parameters to share.

    Call with ``data`` (``(T, N, C)`` for 'TNC') and optionally the states
    (``begin_state()``'s shapes: ``(num_layers * directions, N, hidden_size)``).
    Returns the outputs ``(T, N, directions * hidden_size)``, and the final states
    when states were given.
"""


class RNN(_RNNLayer):
    r"""Multi-layer Elman RNN: :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`
    with ``activation`` 'relu' or 'tanh'.
    """

    __doc__ = (__doc__ or "") + _LAYER_DOC

    def __init__(self, hidden_size: int, num_layers: int = 1, activation: str = "relu", layout: str = "TNC",
                 dropout: float = 0, bidirectional: bool = False, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0, dtype: Any = "float32",
                 **kwargs: Any) -> None:
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None, False, dtype, **kwargs)


class LSTM(_RNNLayer):
    r"""Multi-layer long short-term memory (the step of ``LSTMCell``), optionally with
    a projected recurrent state (``projection_size``, as ``LSTMPCell``) and clipped
    cell states.

    Also: ``projection_size`` (int, optional) with ``h2r_weight_initializer``; and
    ``state_clip_min`` / ``state_clip_max`` (both or neither) clip c, with
    ``state_clip_nan`` also turning NaN into the bounds. The states are ``[h, c]``.
    """

    __doc__ = (__doc__ or "") + _LAYER_DOC

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC", dropout: float = 0,
                 bidirectional: bool = False, input_size: int = 0, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", projection_size: int | None = None,
                 h2r_weight_initializer: Any = None, state_clip_min: float | None = None,
                 state_clip_max: float | None = None, state_clip_nan: bool = False, dtype: Any = "float32",
                 **kwargs: Any) -> None:
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)


class GRU(_RNNLayer):
    r"""Multi-layer gated recurrent unit in cuDNN's form (the step of ``GRUCell``)."""

    __doc__ = (__doc__ or "") + _LAYER_DOC

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC", dropout: float = 0,
                 bidirectional: bool = False, input_size: int = 0, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", dtype: Any = "float32", **kwargs: Any) -> None:
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype, **kwargs)
