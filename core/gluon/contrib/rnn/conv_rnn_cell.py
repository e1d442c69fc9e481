"""Convolutional recurrent cells (MXNet 1.9.1 ``gluon.contrib.rnn.conv_rnn_cell``).

The input-to-hidden and hidden-to-hidden transforms of RNN/LSTM/GRU cells are
convolutions (Shi et al. 2015, "Convolutional LSTM Network"). The i2h convolution (stride
1, ``i2h_pad``, ``i2h_dilate``) fixes the state's spatial size from ``input_shape``; the h2h
convolution pads to keep that size, so its kernel must be odd. Parameters are named as in
MXNet (``i2h_weight``, ``h2h_weight``, ``i2h_bias``, ``h2h_bias``); the gate order along the
channel axis is MXNet's (LSTM: in, forget, cell, out; GRU: reset, update, candidate).
"""
from __future__ import annotations

from typing import Any

from ...rnn.cell_base import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv1DLSTMCell", "Conv1DGRUCell", "Conv2DRNNCell", "Conv2DLSTMCell", "Conv2DGRUCell",
           "Conv3DRNNCell", "Conv3DLSTMCell", "Conv3DGRUCell"]


def _tuple(v: Any, n: int, name: str) -> tuple[int, ...]:
    t = (int(v),) * n if isinstance(v, int) else tuple(int(x) for x in v)
    if len(t) != n:
        raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {v!r}")
    return t


class _BaseConvRNNCell(HybridRecurrentCell):
    """Shared machinery: parameters, state shapes, the two convolutions."""

    _gates = 1
    _dims = 0
    _kind = ""

    def __init__(self, input_shape: Any, hidden_channels: int, i2h_kernel: Any, h2h_kernel: Any,
                 i2h_pad: Any, i2h_dilate: Any, h2h_dilate: Any, i2h_weight_initializer: Any,
                 h2h_weight_initializer: Any, i2h_bias_initializer: Any, h2h_bias_initializer: Any,
                 conv_layout: str, activation: Any, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        n = self._dims
        self._hidden_channels = hidden_channels
        self._input_shape = tuple(input_shape)
        self._conv_layout = conv_layout
        self._activation = activation
        self._i2h_kernel = _tuple(i2h_kernel, n, "i2h_kernel")
        self._h2h_kernel = _tuple(h2h_kernel, n, "h2h_kernel")
        for k in self._h2h_kernel:
            assert k % 2 == 1, f"Only support odd number, get h2h_kernel= {h2h_kernel}"
        self._i2h_pad = _tuple(i2h_pad, n, "i2h_pad")
        self._i2h_dilate = _tuple(i2h_dilate, n, "i2h_dilate")
        self._h2h_dilate = _tuple(h2h_dilate, n, "h2h_dilate")
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel))
        self._channel_axis = conv_layout.find("C")
        if len(self._input_shape) != n + 1:
            raise ValueError(f"{type(self).__name__}: input_shape {input_shape} must give channels and "
                             f"{n} spatial sizes (without the batch axis) for layout {conv_layout}")
        in_c = self._input_shape[self._channel_axis - 1]
        spatial = [s for i, s in enumerate(self._input_shape) if i != self._channel_axis - 1]
        # i2h convolution: stride 1
        out = tuple((s + 2 * p - d * (k - 1) - 1) + 1 if s else 0
                    for s, p, d, k in zip(spatial, self._i2h_pad, self._i2h_dilate, self._i2h_kernel))
        state = list(out)
        state.insert(self._channel_axis - 1, hidden_channels)
        self._state_shape = tuple(state)
        g = self._gates * hidden_channels
        # weights as the layout's kernels: (out, in, *k) channel-first, (out, *k, in) channel-last
        if self._channel_axis == 1:
            i2h_shape, h2h_shape = (g, in_c) + self._i2h_kernel, (g, hidden_channels) + self._h2h_kernel
        else:
            i2h_shape, h2h_shape = (g,) + self._i2h_kernel + (in_c,), (g,) + self._h2h_kernel + (hidden_channels,)
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape,
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape,
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        info = {"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
        return [dict(info) for _ in range(self._num_states)]

    _num_states = 1

    def _alias(self) -> str:
        return self._kind

    def __repr__(self) -> str:
        shape = tuple(self.i2h_weight.shape or (0, 0))
        in_c = shape[1 if self._channel_axis == 1 else -1]
        return (f"{self.__class__.__name__}({in_c if in_c else None} -> {shape[0]}, "
                f"{self._activation}, {self._conv_layout})")

    def _convs(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any, i2h_bias: Any,
               h2h_bias: Any, prefix: str) -> tuple[Any, Any]:
        g = self._gates * self._hidden_channels
        i2h = F.Convolution(data=inputs, weight=i2h_weight, bias=i2h_bias, kernel=self._i2h_kernel,
                            pad=self._i2h_pad, dilate=self._i2h_dilate, num_filter=g,
                            layout=self._conv_layout, name=prefix + "i2h")
        h2h = F.Convolution(data=states[0], weight=h2h_weight, bias=h2h_bias, kernel=self._h2h_kernel,
                            pad=self._h2h_pad, dilate=self._h2h_dilate, num_filter=g,
                            layout=self._conv_layout, name=prefix + "h2h")
        return i2h, h2h


class _ConvRNNCell(_BaseConvRNNCell):
    _kind = "conv_rnn"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,
                       i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix = "t%d_" % self._counter
        i2h, h2h = self._convs(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + "out")
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    _kind = "conv_lstm"
    _gates = 4
    _num_states = 2

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,
                       i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix = "t%d_" % self._counter
        i2h, h2h = self._convs(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, axis=self._channel_axis, name=prefix + "slice")
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        in_transform = self._get_activation(F, gates[2], self._activation, name=prefix + "c")
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform, name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    _kind = "conv_gru"
    _gates = 3

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,
                       i2h_bias: Any, h2h_bias: Any) -> Any:
        prefix = "t%d_" % self._counter
        i2h, h2h = self._convs(F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix)
        ax = self._channel_axis
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, axis=ax, name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, axis=ax, name=prefix + "h2h_slice")
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        candidate = self._get_activation(F, i2h_n + reset_gate * h2h_n, self._activation, name=prefix + "h_act")
        next_h = F.elemwise_add((1. - update_gate) * candidate, update_gate * states[0], name=prefix + "out")
        return next_h, [next_h]


def _make(base: type, dims: int, layout: str, name: str, doc: str) -> type:
    zero = (0,) * dims
    one = (1,) * dims

    def __init__(self: Any, input_shape: Any, hidden_channels: int, i2h_kernel: Any, h2h_kernel: Any,
                 i2h_pad: Any = zero, i2h_dilate: Any = one, h2h_dilate: Any = one,
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 conv_layout: str = layout, activation: Any = "tanh", prefix: str | None = None,
                 params: Any = None) -> None:
        _BaseConvRNNCell.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate,
                      h2h_dilate, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                      h2h_bias_initializer, conv_layout, activation, prefix=prefix, params=params)

    return type(name, (base,), {"__init__": __init__, "_dims": dims, "__doc__": doc, "__module__": __name__})


_DOC = ("{dims}D convolutional {kind} cell. ``input_shape`` is the input's shape without the batch "
        "axis, in ``conv_layout`` ({layout}); channels may be 0 (inferred at the first call).")
_SPECS = ((1, "NCW"), (2, "NCHW"), (3, "NCDHW"))
_KINDS = ((_ConvRNNCell, "RNN"), (_ConvLSTMCell, "LSTM"), (_ConvGRUCell, "GRU"))

Conv1DRNNCell, Conv2DRNNCell, Conv3DRNNCell, Conv1DLSTMCell, Conv2DLSTMCell, Conv3DLSTMCell, \
    Conv1DGRUCell, Conv2DGRUCell, Conv3DGRUCell = (
        _make(base, d, lay, f"Conv{d}D{kind}Cell", _DOC.format(dims=d, kind=kind, layout=lay))
        for base, kind in _KINDS for d, lay in _SPECS)
