"""Convolutional RNN cells of MXNet 1.x (``mx.rnn.ConvRNNCell``, ``ConvLSTMCell``,
``ConvGRUCell``): the step cells with ``Convolution`` in place of ``FullyConnected``
(Shi et al., Convolutional LSTM). States have the shape of the ``i2h`` convolution's
output (its batch axis 0 = unknown until bound)."""
from __future__ import annotations

import functools
from typing import Any, Sequence

from .. import symbol
from .rnn_cell import BaseRNNCell, RNNParams

__all__ = ["BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]

_LEAKY = functools.partial(symbol.LeakyReLU, act_type="leaky", slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Shared parts: the state shape, the parameters and the two convolutions."""

    def __init__(self, input_shape: Sequence[int], num_hidden: int, h2h_kernel: Sequence[int],
                 h2h_dilate: Sequence[int], i2h_kernel: Sequence[int], i2h_stride: Sequence[int],
                 i2h_pad: Sequence[int], i2h_dilate: Sequence[int], i2h_weight_initializer: Any,
                 h2h_weight_initializer: Any, i2h_bias_initializer: Any, h2h_bias_initializer: Any, activation: Any,
                 prefix: str = "", params: RNNParams | None = None, conv_layout: str = "NCHW") -> None:
        super().__init__(prefix=prefix, params=params)
        if h2h_kernel[0] % 2 != 1 or h2h_kernel[1] % 2 != 1:
            raise ValueError(f"Only support odd number, get h2h_kernel= {tuple(h2h_kernel)}")
        self._h2h_kernel = h2h_kernel
        self._h2h_pad = (h2h_dilate[0] * (h2h_kernel[0] - 1) // 2, h2h_dilate[1] * (h2h_kernel[1] - 1) // 2)
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        probe = symbol.Convolution(data=symbol.Variable("data"), num_filter=num_hidden, kernel=i2h_kernel,
                                   stride=i2h_stride, pad=i2h_pad, dilate=i2h_dilate, layout=conv_layout)
        shape = probe.infer_shape(data=tuple(input_shape))[1][0]
        self._state_shape = (0,) + tuple(shape[1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self) -> int:
        return len(self._gate_names)

    #: how many states the cell carries (h; LSTM: h and c)
    _num_states = 1

    @property
    def state_info(self) -> list:
        return [{"shape": self._state_shape, "__layout__": self._conv_layout} for _ in range(self._num_states)]

    def _conv_forward(self, inputs: Any, states: list, name: str) -> tuple[Any, Any]:
        i2h = symbol.Convolution(name="%si2h" % name, data=inputs, num_filter=self._num_hidden * self._num_gates,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride, pad=self._i2h_pad,
                                 dilate=self._i2h_dilate, weight=self._iW, bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name="%sh2h" % name, data=states[0], num_filter=self._num_hidden * self._num_gates,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate, pad=self._h2h_pad, stride=(1, 1),
                                 weight=self._hW, bias=self._hB, layout=self._conv_layout)
        return i2h, h2h


def _defaults(kw: dict) -> dict:
    out = dict(h2h_kernel=(3, 3), h2h_dilate=(1, 1), i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1),
               i2h_dilate=(1, 1), i2h_weight_initializer=None, h2h_weight_initializer=None,
               i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", activation=_LEAKY, params=None,
               conv_layout="NCHW")
    out.update(kw)
    return out


class ConvRNNCell(BaseConvRNNCell):
    """Convolutional Elman RNN."""

    def __init__(self, input_shape: Sequence[int], num_hidden: int, prefix: str = "ConvRNN_", **kwargs: Any) -> None:
        super().__init__(input_shape=input_shape, num_hidden=num_hidden, prefix=prefix, **_defaults(kwargs))

    @property
    def _gate_names(self) -> Sequence[str]:
        return ("",)

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name="%sout" % name)
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM (Shi et al. 2015)."""

    _num_states = 2

    def __init__(self, input_shape: Sequence[int], num_hidden: int, prefix: str = "ConvLSTM_",
                 **kwargs: Any) -> None:
        super().__init__(input_shape=input_shape, num_hidden=num_hidden, prefix=prefix, **_defaults(kwargs))

    @property
    def _gate_names(self) -> Sequence[str]:
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, axis=self._conv_layout.find("C"),
                                    name="%sslice" % name)
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name="%si" % name)
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name="%sf" % name)
        in_transform = self._get_activation(gates[2], self._activation, name="%sc" % name)
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name="%so" % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform, name="%sstate" % name)
        next_h = symbol._internal._mul(out_gate, self._get_activation(next_c, self._activation), name="%sout" % name)
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU."""

    def __init__(self, input_shape: Sequence[int], num_hidden: int, prefix: str = "ConvGRU_", **kwargs: Any) -> None:
        super().__init__(input_shape=input_shape, num_hidden=num_hidden, prefix=prefix, **_defaults(kwargs))

    @property
    def _gate_names(self) -> Sequence[str]:
        return ["_r", "_z", "_o"]

    def __call__(self, inputs: Any, states: list) -> tuple[Any, list]:
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name="%s_i2h_slice" % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name="%s_h2h_slice" % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name="%s_r_act" % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name="%s_z_act" % name)
        next_h_tmp = self._get_activation(i2h + reset_gate * h2h, self._activation, name="%s_h_act" % name)
        next_h = symbol._internal._plus((1. - update_gate) * next_h_tmp, update_gate * states[0],
                                        name="%sout" % name)
        return next_h, [next_h]
