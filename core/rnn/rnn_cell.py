"""Symbolic RNN cells of MXNet 1.x (``mx.rnn``): a cell builds one time step of a
recurrent network out of ``mx.sym`` operators; ``unroll(length, inputs)`` builds the
whole sequence, sharing the cell's parameter variables across the steps.

* ``RNNCell``, ``LSTMCell``, ``GRUCell``: one step with ``FullyConnected`` layers
  (``i2h`` for the input, ``h2h`` for the hidden state, gates packed along the output).
* ``FusedRNNCell``: the whole sequence as one ``RNN`` operator (packed parameters,
  ``init.FusedRNN``); ``unfuse()`` gives the equivalent stack of step cells.
* ``SequentialRNNCell``, ``BidirectionalCell``: stacks and both directions;
  ``DropoutCell``, ``ZoneoutCell``, ``ResidualCell`` (``ModifierCell``s) wrap cells.
* ``unpack_weights``/``pack_weights`` convert between packed parameters (one ``i2h``
  matrix for all gates) and one array per gate, as MXNet's checkpoints of RNN models
  (``save_rnn_checkpoint``) store them.

Names follow MXNet's, so checkpoints and symbol JSON interoperate.
"""
from __future__ import annotations

import warnings
from numbers import Number
from typing import Any, Callable, Sequence

from .. import ndarray
from .. import symbol
from ..initializer import LSTMBias, FusedRNN, RNN_GATES, fused_rnn_layout, fused_rnn_num_input

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell", "SequentialRNNCell",
           "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


def _cells_state_info(cells: Sequence["BaseRNNCell"]) -> list:
    return sum([c.state_info for c in cells], [])


def _cells_begin_state(cells: Sequence["BaseRNNCell"], **kwargs: Any) -> list:
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _cells_unpack_weights(cells: Sequence["BaseRNNCell"], args: dict) -> dict:
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def _cells_pack_weights(cells: Sequence["BaseRNNCell"], args: dict) -> dict:
    for cell in cells:
        args = cell.pack_weights(args)
    return args


def _normalize_sequence(length: int | None, inputs: Any, layout: str, merge: bool | None,
                        in_layout: str | None = None) -> tuple[Any, int]:
    """Inputs as a list of per-step symbols (``merge=False``), one symbol with a time
    axis (``merge=True``) or as given (``None``); and the time axis of ``layout``."""
    if inputs is None:
        raise ValueError("unroll(inputs=None) has been deprecated. Please create input variables outside unroll.")
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError("unroll doesn't allow grouped symbol as input. Please convert to list with "
                                 "list(inputs) first or let unroll handle splitting.")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise ValueError(f"unroll: {len(inputs)} inputs for length {length}")
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(i, axis=axis) for i in inputs], dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim0=axis, dim1=in_axis)
    return inputs, axis


class RNNParams:
    """A cell's parameter variables, created once per name (``prefix + name``)."""

    def __init__(self, prefix: str = "") -> None:
        self._prefix = prefix
        self._params: dict[str, Any] = {}

    def get(self, name: str, **kwargs: Any) -> Any:
        """The variable ``prefix + name`` (created with ``kwargs`` the first time)."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """Base class of the cells: ``cell(inputs, states) -> (output, new_states)`` builds
    one step."""

    def __init__(self, prefix: str = "", params: RNNParams | None = None) -> None:
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Restart the step counters (names of the next unroll start at ``t0``)."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        raise NotImplementedError(f"{type(self).__name__} cannot be stepped")

    @property
    def params(self) -> RNNParams:
        self._own_params = False
        return self._params

    @property
    def state_info(self) -> list:
        """One ``{'shape': ..., '__layout__': ...}`` per state (0 = the batch size)."""
        raise NotImplementedError(f"{type(self).__name__} must define state_info")

    @property
    def state_shape(self) -> list:
        return [ele["shape"] for ele in self.state_info]

    @property
    def _gate_names(self) -> Sequence[str]:
        return ()

    def _check_unmodified(self) -> None:
        if self._modified:
            raise RuntimeError("After applying modifier cells (e.g. DropoutCell) the base cell cannot be called "
                               "directly. Call the modifier cell instead.")

    def begin_state(self, func: Callable[..., Any] = symbol.zeros, **kwargs: Any) -> list:
        """Initial states made by ``func`` (default ``sym.zeros``), named
        ``<prefix>begin_state_<n>``; ``func=mx.sym.Variable`` makes them inputs."""
        self._check_unmodified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name="%sbegin_state_%d" % (self._prefix, self._init_counter), **kwargs))
        return states

    def unpack_weights(self, args: dict) -> dict:
        """Split packed ``i2h``/``h2h`` weights and biases into one array per gate."""
        args = args.copy()
        if not self._gate_names:
            return args
        h = self._num_hidden  # type: ignore[attr-defined]
        for group in ("i2h", "h2h"):
            weight = args.pop("%s%s_weight" % (self._prefix, group))
            bias = args.pop("%s%s_bias" % (self._prefix, group))
            for j, gate in enumerate(self._gate_names):
                args["%s%s%s_weight" % (self._prefix, group, gate)] = weight[j * h:(j + 1) * h].copy()
                args["%s%s%s_bias" % (self._prefix, group, gate)] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args: dict) -> dict:
        """The inverse of ``unpack_weights``."""
        args = args.copy()
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            weight = [args.pop("%s%s%s_weight" % (self._prefix, group, g)) for g in self._gate_names]
            bias = [args.pop("%s%s%s_bias" % (self._prefix, group, g)) for g in self._gate_names]
            args["%s%s_weight" % (self._prefix, group)] = ndarray.concatenate(weight)
            args["%s%s_bias" % (self._prefix, group)] = ndarray.concatenate(bias)
        return args

    def unroll(self, length: int, inputs: Any, begin_state: list | None = None, layout: str = "NTC",
               merge_outputs: bool | None = None) -> tuple[Any, list]:
        """``(outputs, states)`` after ``length`` steps. ``inputs``: one symbol with a
        time axis (``layout``: ``NTC`` or ``TNC``) or a list of per-step symbols;
        ``merge_outputs``: one symbol (True), a list (False) or like the inputs (None)."""
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = begin_state if begin_state is not None else self.begin_state()
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _fc_params(self, i2h_bias_init: Any = None) -> None:
        """The step cells' parameters: ``i2h``/``h2h`` weights and biases."""
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias", **({"init": i2h_bias_init} if i2h_bias_init is not None else {}))
        self._hB = self.params.get("h2h_bias")

    def _nc_states(self, n: int) -> list:
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"} for _ in range(n)]  # type: ignore[attr-defined]

    def _get_activation(self, inputs: Any, activation: Any, **kwargs: Any) -> Any:
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class RNNCell(BaseRNNCell):
    """Elman RNN: ``h' = activation(W_i x + b_i + W_h h + b_h)``."""

    def __init__(self, num_hidden: int, activation: Any = "tanh", prefix: str = "rnn_",
                 params: RNNParams | None = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._fc_params()

    @property
    def state_info(self) -> list:
        return self._nc_states(1)

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("",)

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=self._num_hidden,
                                    name="%si2h" % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB, num_hidden=self._num_hidden,
                                    name="%sh2h" % name)
        output = self._get_activation(i2h + h2h, self._activation, name="%sout" % name)
        return output, [output]


class LSTMCell(BaseRNNCell):
    """Long short-term memory (gates ``i, f, c, o``); the forget gate's bias starts at
    ``forget_bias``."""

    def __init__(self, num_hidden: int, prefix: str = "lstm_", params: RNNParams | None = None,
                 forget_bias: float = 1.0) -> None:
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._fc_params(LSTMBias(forget_bias=forget_bias))

    @property
    def state_info(self) -> list:
        return self._nc_states(2)

    @property
    def _gate_names(self) -> Sequence[str]:
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=self._num_hidden * 4,
                                    name="%si2h" % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 4, name="%sh2h" % name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name="%sslice" % name)
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name="%si" % name)
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name="%sf" % name)
        in_transform = symbol.Activation(gates[2], act_type="tanh", name="%sc" % name)
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name="%so" % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform, name="%sstate" % name)
        next_h = symbol._internal._mul(out_gate, symbol.Activation(next_c, act_type="tanh"), name="%sout" % name)
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """Gated recurrent unit (gates ``r, z`` and the candidate ``o``)."""

    def __init__(self, num_hidden: int, prefix: str = "gru_", params: RNNParams | None = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._fc_params()

    @property
    def state_info(self) -> list:
        return self._nc_states(1)

    @property
    def _gate_names(self) -> Sequence[str]:
        return ["_r", "_z", "_o"]

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        prev_h = states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=self._num_hidden * 3,
                                    name="%s_i2h" % name)
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB, num_hidden=self._num_hidden * 3,
                                    name="%s_h2h" % name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name="%s_i2h_slice" % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name="%s_h2h_slice" % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name="%s_r_act" % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name="%s_z_act" % name)
        next_h_tmp = symbol.Activation(i2h + reset_gate * h2h, act_type="tanh", name="%s_h_act" % name)
        next_h = symbol._internal._plus((1. - update_gate) * next_h_tmp, update_gate * prev_h, name="%sout" % name)
        return next_h, [next_h]


class FusedRNNCell(BaseRNNCell):
    """A whole (multi-layer, optionally bidirectional) RNN as one ``RNN`` operator with
    packed parameters ``<prefix>parameters``; cannot be stepped, only unrolled."""

    def __init__(self, num_hidden: int, num_layers: int = 1, mode: str = "lstm", bidirectional: bool = False,
                 dropout: float = 0., get_next_state: bool = False, forget_bias: float = 1.0,
                 prefix: str | None = None, params: RNNParams | None = None) -> None:
        if mode not in RNN_GATES:
            raise ValueError(f"FusedRNNCell: mode must be one of {sorted(RNN_GATES)}, got {mode!r}")
        if prefix is None:
            prefix = "%s_" % mode
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        initializer = FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get("parameters", init=initializer)

    @property
    def state_info(self) -> list:
        b = self._bidirectional + 1
        n = (self._mode == "lstm") + 1
        return [{"shape": (b * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"} for _ in range(n)]

    @property
    def _gate_names(self) -> Sequence[str]:
        return list(RNN_GATES[self._mode])

    @property
    def _num_gates(self) -> int:
        return len(self._gate_names)

    def _slice_weights(self, arr: Any, li: int, lh: int) -> dict:
        """Views of the packed vector ``arr``, one per gate weight/bias."""
        layout, total = fused_rnn_layout(li, lh, self._num_layers, self._mode, self._bidirectional, self._prefix)
        if total != arr.size:
            raise ValueError("Invalid parameters size for FusedRNNCell")
        return {name: arr[off:off + _prod(shape)].reshape(shape) for name, off, shape in layout}

    def unpack_weights(self, args: dict) -> dict:
        args = args.copy()
        arr = args.pop(self._parameter.name)
        num_input = fused_rnn_num_input(arr.size, self._num_hidden, self._num_layers, self._mode,
                                        self._bidirectional)
        args.update({name: a.copy() for name, a in self._slice_weights(arr, num_input, self._num_hidden).items()})
        return args

    def pack_weights(self, args: dict) -> dict:
        args = args.copy()
        b, m, h = self._bidirectional + 1, self._num_gates, self._num_hidden
        w0 = args["%sl0_i2h%s_weight" % (self._prefix, self._gate_names[0])]
        num_input = w0.shape[1]
        total = (num_input + h + 2) * h * m * b + (self._num_layers - 1) * m * h * (h + b * h + 2) * b
        arr = ndarray.zeros((total,), ctx=w0.context, dtype=w0.dtype)
        for name, piece in self._slice_weights(arr, num_input, h).items():
            piece[:] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length: int, inputs: Any, begin_state: list | None = None, layout: str = "NTC",
               merge_outputs: bool | None = None) -> tuple[Any, list]:
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for faster speed", stacklevel=2)
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise ValueError(f"Unsupported layout {layout}")
        states = begin_state if begin_state is not None else self.begin_state()
        kw = {"state": states[0], "state_cell": states[1]} if self._mode == "lstm" else {"state": states[0]}
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional, p=self._dropout,
                         state_outputs=self._get_next_state, mode=self._mode, name=self._prefix + "rnn", **kw)
        attr = {"__layout__": "LNC"}
        if not self._get_next_state:
            outputs, states = rnn, []
        elif self._mode == "lstm":
            rnn[1]._set_attr(**attr)
            rnn[2]._set_attr(**attr)
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            rnn[1]._set_attr(**attr)
            outputs, states = rnn[0], [rnn[1]]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self) -> "SequentialRNNCell":
        """The same network as a ``SequentialRNNCell`` of step cells (same names, so
        ``unpack_weights`` of this cell feeds it)."""
        stack = SequentialRNNCell()
        make = {"rnn_relu": lambda p: RNNCell(self._num_hidden, activation="relu", prefix=p),
                "rnn_tanh": lambda p: RNNCell(self._num_hidden, activation="tanh", prefix=p),
                "lstm": lambda p: LSTMCell(self._num_hidden, prefix=p),
                "gru": lambda p: GRUCell(self._num_hidden, prefix=p)}[self._mode]
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make("%sl%d_" % (self._prefix, i)), make("%sr%d_" % (self._prefix, i)),
                                            output_prefix="%sbi_l%d_" % (self._prefix, i)))
            else:
                stack.add(make("%sl%d_" % (self._prefix, i)))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix="%s_dropout%d_" % (self._prefix, i)))
        return stack


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


class SequentialRNNCell(BaseRNNCell):
    """Cells stacked: each cell's output is the next one's input."""

    def __init__(self, params: RNNParams | None = None) -> None:
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells: list[BaseRNNCell] = []

    def add(self, cell: BaseRNNCell) -> None:
        """Append a cell (its parameters join this cell's)."""
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise ValueError("Either specify params for SequentialRNNCell or child cells, not both.")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self) -> list:
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs: Any) -> list:  # type: ignore[override]
        self._check_unmodified()
        return _cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args: dict) -> dict:
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args: dict) -> dict:
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise ValueError("a SequentialRNNCell holding a BidirectionalCell cannot be stepped; use unroll")
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length: int, inputs: Any, begin_state: list | None = None, layout: str = "NTC",
               merge_outputs: bool | None = None) -> tuple[Any, list]:
        self.reset()
        num_cells = len(self._cells)
        if begin_state is None:
            begin_state = self.begin_state()
        p = 0
        next_states: list = []
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n], layout=layout,
                                         merge_outputs=None if i < num_cells - 1 else merge_outputs)
            p += n
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the inputs (no state)."""

    def __init__(self, dropout: float, prefix: str = "dropout_", params: RNNParams | None = None) -> None:
        super().__init__(prefix, params)
        if not isinstance(dropout, Number):
            raise TypeError("dropout probability must be a number")
        self.dropout = dropout

    @property
    def state_info(self) -> list:
        return []

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length: int, inputs: Any, begin_state: list | None = None, layout: str = "NTC",
               merge_outputs: bool | None = None) -> tuple[Any, list]:
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout, merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """Base class of cells that wrap another cell (``base_cell``) and modify it; the
    base cell is then only used through the modifier."""

    def __init__(self, base_cell: BaseRNNCell) -> None:
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self) -> RNNParams:
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self) -> list:
        return self.base_cell.state_info

    def begin_state(self, init_sym: Callable[..., Any] = symbol.zeros, **kwargs: Any) -> list:  # type: ignore[override]
        self._check_unmodified()
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(init_sym, **kwargs)
        self.base_cell._modified = True
        return begin

    def unpack_weights(self, args: dict) -> dict:
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args: dict) -> dict:
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        raise NotImplementedError(f"{type(self).__name__} must define __call__")


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al.): at training time, outputs/states keep their previous
    value with probabilities ``zoneout_outputs``/``zoneout_states``."""

    def __init__(self, base_cell: BaseRNNCell, zoneout_outputs: float = 0., zoneout_states: float = 0.) -> None:
        if isinstance(base_cell, FusedRNNCell):
            raise ValueError("FusedRNNCell doesn't support zoneout. Please unfuse first.")
        if isinstance(base_cell, BidirectionalCell):
            raise ValueError("BidirectionalCell doesn't support zoneout since it doesn't support step. Please add "
                             "ZoneoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output: Any = None

    def reset(self) -> None:
        super().reset()
        self.prev_output = None

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p: float, like: Any) -> Any:
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev_output = self.prev_output if self.prev_output is not None else symbol.zeros_like(next_output)
        output = (symbol.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0. else next_output)
        states = ([symbol.where(mask(p_states, new_s), new_s, old_s) for new_s, old_s in zip(next_states, states)]
                  if p_states != 0. else next_states)
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (He et al.'s residual connection)."""

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name="%s_plus_residual" % output.name)
        return output, states

    def unroll(self, length: int, inputs: Any, begin_state: list | None = None, layout: str = "NTC",
               merge_outputs: bool | None = None) -> tuple[Any, list]:
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout,
                                                merge_outputs=merge_outputs)
        self.base_cell._modified = True
        merge = isinstance(outputs, symbol.Symbol) if merge_outputs is None else merge_outputs
        inputs, _ = _normalize_sequence(length, inputs, layout, merge)
        if merge:
            outputs = symbol.elemwise_add(outputs, inputs, name="%s_plus_residual" % outputs.name)
        else:
            outputs = [symbol.elemwise_add(o, i, name="%s_plus_residual" % o.name) for o, i in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(BaseRNNCell):
    """Runs ``l_cell`` forwards and ``r_cell`` backwards over the sequence and
    concatenates their outputs; unroll only."""

    def __init__(self, l_cell: BaseRNNCell, r_cell: BaseRNNCell, params: RNNParams | None = None,
                 output_prefix: str = "bi_") -> None:
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            if not (l_cell._own_params and r_cell._own_params):
                raise ValueError("Either specify params for BidirectionalCell or child cells, not both.")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args: dict) -> dict:
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args: dict) -> dict:
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    @property
    def state_info(self) -> list:
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs: Any) -> list:  # type: ignore[override]
        self._check_unmodified()
        return _cells_begin_state(self._cells, **kwargs)

    def unroll(self, length: int, inputs: Any, begin_state: list | None = None, layout: str = "NTC",
               merge_outputs: bool | None = None) -> tuple[Any, list]:
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        states = begin_state if begin_state is not None else self.begin_state()
        l_cell, r_cell = self._cells
        nl = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:nl], layout=layout,
                                            merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)), begin_state=states[nl:],
                                            layout=layout, merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, symbol.Symbol) and isinstance(r_outputs, symbol.Symbol)
            if not merge_outputs:
                if isinstance(l_outputs, symbol.Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis, num_outputs=length, squeeze_axis=1))
                if isinstance(r_outputs, symbol.Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis, num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(lo, ro, dim=1 + merge_outputs,
                                 name=("%sout" % self._output_prefix if merge_outputs
                                       else "%st%d" % (self._output_prefix, i)))
                   for i, lo, ro in zip(range(len(l_outputs)), l_outputs, r_outputs)]
        if merge_outputs:
            outputs = outputs[0]
        return outputs, [l_states, r_states]
