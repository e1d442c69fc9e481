"""Basic Gluon layers (MXNet 1.x ``gluon.nn.basic_layers``): containers, Dense,
Dropout, normalisation layers, Embedding, Flatten, lambdas."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ...base import PlexnetError
from ..block import Block, HybridBlock
from .activations import Activation

__all__ = ["Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "BatchNorm", "BatchNormReLU",
           "SyncBatchNorm", "InstanceNorm", "LayerNorm", "GroupNorm", "Flatten", "Lambda", "HybridLambda",
           "Concatenate", "HybridConcatenate", "Identity"]


class Sequential(Block):
    """Children run one after the other."""

    _summary_row = False   # Block.summary: a container, no row of its own (as MXNet)

    def __init__(self, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks: Block) -> None:
        """Append blocks (in order)."""
        for block in blocks:
            self.register_child(block)

    def forward(self, x: Any, *args: Any) -> Any:
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                args = tuple(x[1:])
                x = x[0]
        if args:
            x = tuple([x] + list(args))
        return x

    def __repr__(self) -> str:
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}" for key, block in self._children.items())
        return f"{self.__class__.__name__}(\n{modstr}\n)"

    def __getitem__(self, key: Any) -> Any:
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self) -> int:
        return len(self._children)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are HybridBlocks. Consider using "
                          f"HybridSequential for the best performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(HybridBlock):
    """Children (HybridBlocks) run one after the other; hybridizes as one graph."""

    _summary_row = False

    def __init__(self, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks: HybridBlock) -> None:
        for block in blocks:
            self.register_child(block)

    def hybrid_forward(self, F: Any, x: Any, *args: Any) -> Any:
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                args = tuple(x[1:])
                x = x[0]
        if args:
            x = tuple([x] + list(args))
        return x

    __repr__ = Sequential.__repr__
    __len__ = Sequential.__len__
    __getitem__ = Sequential.__getitem__


def _indent(s: str, n: int) -> str:
    lines = s.split("\n")
    return "\n".join([lines[0]] + [" " * n + line for line in lines[1:]])


def _gamma_beta(blk: HybridBlock, scale: bool, center: bool, shape: tuple, gamma_init: Any, beta_init: Any) -> None:
    """The learned scale (``gamma``) and shift (``beta``) of a normalisation layer."""
    blk.gamma = blk.params.get("gamma", grad_req="write" if scale else "null", shape=shape, init=gamma_init,
                               allow_deferred_init=True, differentiable=scale)
    blk.beta = blk.params.get("beta", grad_req="write" if center else "null", shape=shape, init=beta_init,
                              allow_deferred_init=True, differentiable=center)


class Dense(HybridBlock):
    """Fully connected layer: ``activation(dot(x, weight.T) + bias)``."""

    def __init__(self, units: int, activation: str | None = None, use_bias: bool = True, flatten: bool = True,
                 dtype: Any = "float32", weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 in_units: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units), init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer, dtype=dtype,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation is not None else None

    def hybrid_forward(self, F: Any, x: Any, weight: Any, bias: Any = None) -> Any:
        if bias is None:
            act = F.FullyConnected(x, weight, no_bias=True, num_hidden=self._units, flatten=self._flatten,
                                   name="fwd")
        else:
            act = F.FullyConnected(x, weight, bias, num_hidden=self._units, flatten=self._flatten, name="fwd")
        if self.act is not None:
            act = self.act(act)
        return act

    def __repr__(self) -> str:
        shape = self.weight.shape
        return (f"{self.__class__.__name__}({shape[1] if shape and shape[1] else None} -> {shape[0]}, "
                f"{self.act if self.act else 'linear'})")


class Dropout(HybridBlock):
    """Zeroes a fraction ``rate`` of the inputs while training (scaled by 1/(1-rate))."""

    def __init__(self, rate: float, axes: tuple = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p = {self._rate}, axes={self._axes})"


class _BatchNorm(HybridBlock):
    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, use_global_stats: bool = False, fuse_relu: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros", running_variance_initializer: Any = "ones",
                 in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats}
        self.fuse_relu = fuse_relu
        if in_channels != 0:
            self.in_channels = in_channels
        _gamma_beta(self, scale, center, (in_channels,), gamma_initializer, beta_initializer)
        self.running_mean = self.params.get("running_mean", grad_req="null", shape=(in_channels,),
                                            init=running_mean_initializer, allow_deferred_init=True,
                                            differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null", shape=(in_channels,),
                                           init=running_variance_initializer, allow_deferred_init=True,
                                           differentiable=False)

    def cast(self, dtype: Any) -> None:
        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def _alias(self) -> str:
        return "batchnorm"

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any, running_mean: Any, running_var: Any) -> Any:
        out = F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)
        return F.relu(out) if self.fuse_relu else out

    def __repr__(self) -> str:
        return _norm_repr(self, f", in_channels={self.gamma.shape[0] or None}", self._repr_kwargs())

    def _repr_kwargs(self) -> dict:
        return self._kwargs


class BatchNorm(_BatchNorm):
    """Batch normalisation over ``axis`` (moving statistics kept as parameters)."""

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, use_global_stats: bool = False, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(axis, momentum, epsilon, center, scale, use_global_stats, False, beta_initializer,
                         gamma_initializer, running_mean_initializer, running_variance_initializer, in_channels,
                         **kwargs)


class BatchNormReLU(_BatchNorm):
    """BatchNorm followed by ReLU."""

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, use_global_stats: bool = False, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(axis, momentum, epsilon, center, scale, use_global_stats, True, beta_initializer,
                         gamma_initializer, running_mean_initializer, running_variance_initializer, in_channels,
                         **kwargs)

    def _alias(self) -> str:
        return "batchnormrelu"


class SyncBatchNorm(BatchNorm):
    """Cross-device BatchNorm. In one process on one device it is BatchNorm; the
    statistics are not synchronised across devices (``num_devices`` > 1 is refused)."""

    def __init__(self, in_channels: int = 0, num_devices: int | None = None, momentum: float = 0.9,
                 epsilon: float = 1e-5, center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros", running_variance_initializer: Any = "ones",
                 **kwargs: Any) -> None:
        if num_devices is not None and num_devices > 1:
            raise PlexnetError(f"SyncBatchNorm: num_devices={num_devices}; plexnet synchronises batch statistics "
                               f"only within one device (use num_devices=1 or BatchNorm)")
        super().__init__(1, momentum, epsilon, center, scale, use_global_stats, beta_initializer,
                         gamma_initializer, running_mean_initializer, running_variance_initializer, in_channels,
                         **kwargs)

    def _alias(self) -> str:
        return "syncbatchnorm"

    def _repr_kwargs(self) -> dict:
        # MXNet's contrib operator's arguments: no axis; the device count and the key
        k = {n: v for n, v in self._kwargs.items() if n != "axis"}
        return {**k, "ndev": 1, "key": self.prefix}


class Embedding(HybridBlock):
    """Maps integer indices to dense vectors of size ``output_dim``."""

    def __init__(self, input_dim: int, output_dim: int, dtype: Any = "float32", weight_initializer: Any = None,
                 sparse_grad: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype, "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim), init=weight_initializer,
                                      dtype=dtype, allow_deferred_init=True,
                                      grad_stype="row_sparse" if sparse_grad else "default")

    def hybrid_forward(self, F: Any, x: Any, weight: Any) -> Any:
        return F.Embedding(x, weight, name="fwd", input_dim=self._kwargs["input_dim"],
                           output_dim=self._kwargs["output_dim"], dtype=self._kwargs["dtype"])

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._kwargs['input_dim']} -> {self._kwargs['output_dim']}, " \
               f"{self._kwargs['dtype']})"


class Flatten(HybridBlock):
    """Collapses every axis but the first."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.Flatten(x)

    def __repr__(self) -> str:
        return self.__class__.__name__


class InstanceNorm(HybridBlock):
    """Instance normalisation (per sample and channel)."""

    def __init__(self, axis: int = 1, epsilon: float = 1e-5, center: bool = True, scale: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", in_channels: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        _gamma_beta(self, scale, center, (in_channels,), gamma_initializer, beta_initializer)

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any) -> Any:
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon).swapaxes(1, self._axis)

    def __repr__(self) -> str:
        return _norm_repr(self, f", in_channels={self.gamma.shape[0]}")


class LayerNorm(HybridBlock):
    """Layer normalisation over ``axis``."""

    def __init__(self, axis: int = -1, epsilon: float = 1e-5, center: bool = True, scale: bool = True,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", in_channels: int = 0,
                 prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        _gamma_beta(self, scale, center, (in_channels,), gamma_initializer, beta_initializer)

    def hybrid_forward(self, F: Any, data: Any, gamma: Any, beta: Any) -> Any:
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self) -> str:
        return _norm_repr(self, f", in_channels={self.gamma.shape[0]}")


class GroupNorm(HybridBlock):
    """Group normalisation: channels split into ``num_groups`` groups (gamma/beta per group)."""

    def __init__(self, num_groups: int = 1, epsilon: float = 1e-5, center: bool = True, scale: bool = True,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", prefix: str | None = None,
                 params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center, "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        # one scale/shift per group, as in MXNet 1.x
        _gamma_beta(self, scale, center, (num_groups,), gamma_initializer, beta_initializer)

    def hybrid_forward(self, F: Any, data: Any, gamma: Any, beta: Any) -> Any:
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups, eps=self._epsilon)

    def __repr__(self) -> str:
        return _norm_repr(self, "")


def _norm_repr(block: HybridBlock, tail: str, kwargs: dict | None = None) -> str:
    """MXNet's text of a normalisation layer: its arguments (values as ``repr``), then ``tail``."""
    body = ", ".join(f"{k}={v!r}" for k, v in (block._kwargs if kwargs is None else kwargs).items())
    return f"{block.__class__.__name__}({body}{tail})"


class Lambda(Block):
    """Wraps a function (or the name of an ``nd`` operator) as a Block."""

    def __init__(self, function: Callable | str, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            from ... import ndarray as nd
            if not hasattr(nd, function):
                raise PlexnetError(f"Function name {function} is not found in ndarray.")
            self._func_impl = getattr(nd, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type {type(function)}")

    def forward(self, *args: Any) -> Any:
        return self._func_impl(*args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({getattr(self._func_impl, '__name__', self._func_impl)})"


class HybridLambda(HybridBlock):
    """Wraps ``function(F, *args)`` (or an operator name) as a HybridBlock."""

    def __init__(self, function: Callable | str, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            name = function
            self._func = lambda F, *args: getattr(F, name)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = getattr(function, "__name__", repr(function))
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type {type(function)}")

    def hybrid_forward(self, F: Any, x: Any, *args: Any) -> Any:
        return self._func(F, x, *args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_name})"


class Concatenate(Sequential):
    """Runs every child on the same input and concatenates the outputs on ``axis``."""

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x: Any) -> Any:
        from ... import ndarray as nd
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcatenate(HybridSequential):
    """Hybridizable Concatenate."""

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return x
