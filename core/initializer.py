"""Weight initializers (``plexnet.init`` / ``plexnet.initializer``, MXNet 1.x ``mx.init``).

An initializer is called as ``init(desc, arr)`` where ``desc`` is an ``InitDesc`` (a
``str`` subclass carrying the variable's attributes) or a plain name, and ``arr`` an
NDArray that it fills in place. The name decides what happens, as in MXNet:

========================  =============================================
name ends with            filled by
========================  =============================================
``weight``                ``_init_weight`` (the initializer's own rule)
``bias``                  ``_init_bias``: 0
``gamma``                 ``_init_gamma``: 1
``beta``                  ``_init_beta``: 0
``moving_mean``           0            ``moving_var``: 1
``moving_inv_var``        0            ``moving_avg``: 0
``min``                   0            ``max``: 1
========================  =============================================

A variable whose attributes hold ``__init__`` (``mx.sym.Variable('w',
init=mx.init.Constant(2))``, or what an operator sets on its auxiliary states) is
filled by that initializer instead. Anything else is an error that names the variable.

Random initializers draw from the device's generator in the resource manager, so
``plexnet.random.seed(s)`` makes them reproducible (on every engine: the draw is an
engine operation serialised with every other user of that generator).
"""
from __future__ import annotations

import json
import logging
import re
import warnings
from math import sqrt
from typing import Any, Callable, Sequence

import numpy as np

from .registry import ClassRegistry

__all__ = ["InitDesc", "Initializer", "Load", "Mixed", "Zero", "One", "Constant", "Uniform", "Normal",
           "Orthogonal", "Xavier", "MSRAPrelu", "Bilinear", "LSTMBias", "FusedRNN", "register", "alias", "create",
           "fused_rnn_layout", "fused_rnn_num_input", "RNN_GATES"]


class InitDesc(str):
    """A parameter name with its symbol attributes (``attrs``) and the global
    initializer (``global_init``) of the call that reaches it."""

    attrs: dict
    global_init: Any

    def __new__(cls, name: str, attrs: dict | None = None, global_init: Any = None) -> "InitDesc":
        ret = super().__new__(cls, name)
        ret.attrs = dict(attrs or {})
        ret.global_init = global_init
        return ret


# -- filling arrays ----------------------------------------------------------------------------
def _is_nd(arr: Any) -> bool:
    return hasattr(arr, "_chunk") and hasattr(arr, "asnumpy")


def _assign(arr: Any, value: Any) -> None:
    """``arr[:] = value`` for NDArrays and numpy arrays."""
    arr[:] = value


def _random_fill(arr: Any, kind: str, a: float, b: float) -> None:
    """Fill ``arr`` with ``uniform(a, b)`` or ``normal(a, b)`` (mean, std) draws from the
    device's generator of the resource manager, inside an engine operation that mutates
    the generator's variable (so seeded programs draw the same numbers every run)."""
    if not _is_nd(arr):
        # a plain numpy array: draw on the cpu generator, synchronously
        from . import nd
        tmp = nd.empty(np.shape(arr), dtype=np.asarray(arr).dtype)
        _random_fill(tmp, kind, a, b)
        arr[...] = tmp.asnumpy()
        return
    fn = _nd_sampler(kind)
    if fn is not None:
        try:
            fn(a, b, shape=arr.shape, ctx=arr.context, dtype=arr.dtype, out=arr)
            return
        except (TypeError, NotImplementedError):  # an older sampler signature: use ours
            pass
    from . import engine
    from .resource import ResourceRequest
    from .resource import get as get_resources
    ctx = arr.context
    res = get_resources().request(ctx, ResourceRequest.kRandom)
    data = arr._data
    shape = tuple(arr.shape)

    def draw(_rctx: Any) -> None:
        rng = res.get_random()
        if kind == "uniform":
            vals = rng.uniform(a, b, size=shape)
        else:
            vals = rng.normal(a, b, size=shape)
        data[...] = vals.astype(data.dtype, copy=False) if hasattr(vals, "astype") else vals

    engine.get().push_sync(draw, ctx, (), (res.var, arr._chunk.var), name=f"init.{kind}")


def _nd_sampler(kind: str) -> Callable[..., Any] | None:
    """``plexnet.nd.random.uniform/normal`` when the NDArray samplers exist."""
    try:
        from .ndarray import random as ndrandom  # type: ignore[attr-defined]
    except ImportError:
        return None
    return getattr(ndrandom, kind, None)


# -- the base class ----------------------------------------------------------------------------
class Initializer:
    """Base class: subclasses implement ``_init_weight(name, arr)``; the other rules
    (bias, gamma, beta, moving statistics) come from the name (see the module doc)."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._verbose = False
        self._print_func: Callable[[Any], str] | None = None

    def set_verbosity(self, verbose: bool = False, print_func: Callable[[Any], str] | None = None) -> "Initializer":
        """Log every initialised array (with ``print_func(arr)``, default its RMS)."""
        self._verbose = verbose
        if print_func is None:
            def asum_stat(x: Any) -> str:
                v = np.asarray(x.asnumpy() if hasattr(x, "asnumpy") else x, dtype=np.float64)
                return str(float(np.linalg.norm(v.ravel()) / sqrt(max(v.size, 1))))
            print_func = asum_stat
        self._print_func = print_func
        return self

    def _verbose_print(self, desc: str, init: str, arr: Any) -> None:
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self) -> str:
        """``'["name", {kwargs}]'``: what ``create`` and ``sym.Variable(init=...)`` read."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc: Any, arr: Any) -> None:
        if not isinstance(desc, str):
            raise TypeError(f"initializer: name must be a string or InitDesc, got {desc!r}")
        legacy = not isinstance(desc, InitDesc)
        if legacy:
            warnings.warn("Calling initializer with init(str, NDArray) has been deprecated. "
                          "please use init(mx.init.InitDesc(...), NDArray) instead.", DeprecationWarning,
                          stacklevel=2)
            desc = InitDesc(desc)
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        if legacy:  # MXNet's name-only rules
            if desc.startswith("upsampling"):
                self._init_bilinear(desc, arr)
                return
            if desc.startswith("stn_loc") and desc.endswith("weight"):
                self._init_zero(desc, arr)
                return
            if desc.startswith("stn_loc") and desc.endswith("bias"):
                self._init_loc_bias(desc, arr)
                return
        for suffix, method, label in _DISPATCH:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, label, arr)
                return
        self._init_default(desc, arr)

    # the rules
    def _init_bilinear(self, _: str, arr: Any) -> None:
        _assign(arr, _bilinear(arr.shape))

    def _init_loc_bias(self, _: str, arr: Any) -> None:
        if arr.shape[0] != 6:
            raise ValueError(f"stn_loc bias must have 6 elements, got shape {arr.shape}")
        _assign(arr, np.array([1.0, 0, 0, 0, 1.0, 0]))

    def _init_zero(self, _: str, arr: Any) -> None:
        _assign(arr, 0.0)

    def _init_one(self, _: str, arr: Any) -> None:
        _assign(arr, 1.0)

    def _init_bias(self, _: str, arr: Any) -> None:
        _assign(arr, 0.0)

    def _init_gamma(self, _: str, arr: Any) -> None:
        _assign(arr, 1.0)

    def _init_beta(self, _: str, arr: Any) -> None:
        _assign(arr, 0.0)

    def _init_weight(self, name: str, arr: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _init_weight")

    def _init_default(self, name: str, _: Any) -> None:
        raise ValueError(
            f"Unknown initialization pattern for {name!r}. Default initialization is limited to names "
            f"ending in 'weight', 'bias', 'gamma' (1.0), 'beta' (0.0), 'moving_mean' (0.0), 'moving_var' "
            f"(1.0), 'min' and 'max'. Use mx.sym.Variable(name, init=mx.init.*) to set the initializer "
            f"of {name!r}.")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        kw = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({kw})"


# (suffix, method, label), checked in order: the longer suffixes first
_DISPATCH = (
    ("weight_quantize", "_init_zero", "weight_quantize"),
    ("bias_quantize", "_init_zero", "bias_quantize"),
    ("moving_mean", "_init_zero", "moving_mean"),
    ("moving_var", "_init_one", "moving_var"),
    ("moving_inv_var", "_init_zero", "moving_inv_var"),
    ("moving_avg", "_init_zero", "moving_avg"),
    ("weight", "_init_weight", "weight"),
    ("bias", "_init_bias", "bias"),
    ("gamma", "_init_gamma", "gamma"),
    ("beta", "_init_beta", "beta"),
    ("min", "_init_zero", "min"),
    ("max", "_init_one", "max"),
)


def _bilinear(shape: Sequence[int]) -> np.ndarray:
    n = int(np.prod(shape))
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    i = np.arange(n)
    x = i % shape[3]
    y = (i // shape[3]) % shape[2]
    weight = (1 - np.abs(x / f - c)) * (1 - np.abs(y / f - c))
    return weight.astype("float32").reshape(shape)


_classes = ClassRegistry(Initializer, "initializer", accepts="a name, an Initializer or a JSON string")
_REGISTRY = _classes.classes


def register(klass: type) -> type:
    """Register an initializer class under its lower-cased name (for ``create`` and
    for ``__init__`` attributes)."""
    return _classes.register(klass)


def alias(*aliases: str) -> Callable[[type], type]:
    return _classes.alias(*aliases)


def create(*args: Any, **kwargs: Any) -> Initializer:
    """An initializer from a name (``'xavier'``), an instance, a config dict, or a JSON
    string as ``dumps()`` writes (``'["uniform", {"scale": 0.1}]'``)."""
    return _classes.create(*args, **kwargs)


# -- composite initializers ---------------------------------------------------------------------
class Load:
    """Initialise from saved parameters (a dict, or a file ``nd.save`` wrote; ``arg:`` /
    ``aux:`` prefixes are stripped); names not found go to ``default_init``."""

    def __init__(self, param: Any, default_init: Any = None, verbose: bool = False) -> None:
        if isinstance(param, str):
            from .ndarray import load
            param = load(param)
        if not isinstance(param, dict):
            raise TypeError("Load: param must be a dict of name -> array or a file name")
        self.param = {}
        for name, arr in param.items():
            if name.startswith("arg:") or name.startswith("aux:"):
                self.param[name[4:]] = arr
            else:
                self.param[name] = arr
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name: str, arr: Any) -> None:
        if name in self.param:
            if tuple(arr.shape) != tuple(self.param[name].shape):
                raise ValueError(f"Parameter {name} cannot be initialized from loading. Shape mismatch, "
                                 f"target {tuple(arr.shape)} vs loaded {tuple(self.param[name].shape)}")
            _assign(arr, self.param[name])
            if self.verbose:
                logging.info("Initialized %s by loading", name)
        else:
            if self.default_init is None:
                raise ValueError(f"Cannot Initialize {name}. Not found in loaded param and no default "
                                 f"Initializer is provided.")
            self.default_init(name, arr)
            if self.verbose:
                logging.info("Initialized %s by default", name)


class Mixed:
    """Pick the initializer by the first regular expression that matches the name."""

    def __init__(self, patterns: Sequence[str], initializers: Sequence[Any]) -> None:
        if len(patterns) != len(initializers):
            raise ValueError("Mixed: patterns and initializers must have the same length")
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name: str, arr: Any) -> None:
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError(f"Parameter name {name} did not match any pattern. Consider adding a \".*\" "
                         f"pattern at the end with a default Initializer.")


# -- the initializers ----------------------------------------------------------------------------
@register
@alias("zeros")
class Zero(Initializer):
    """Weights 0."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: str, arr: Any) -> None:
        _assign(arr, 0)


@register
@alias("ones")
class One(Initializer):
    """Weights 1."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: str, arr: Any) -> None:
        _assign(arr, 1)


@register
class Constant(Initializer):
    """Weights ``value`` (a scalar, or an array broadcast to the weight)."""

    def __init__(self, value: Any) -> None:
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _: str, arr: Any) -> None:
        v = self.value
        if isinstance(v, (list, tuple)):
            v = np.asarray(v, dtype=np.float32)
        _assign(arr, v)

    def dumps(self) -> str:
        val = self._kwargs["value"]
        if not np.isscalar(val):
            val = val.tolist() if isinstance(val, np.ndarray) else (
                val.asnumpy().tolist() if hasattr(val, "asnumpy") else val)
        return json.dumps([self.__class__.__name__.lower(), dict(self._kwargs, value=val)])


@register
class Uniform(Initializer):
    """Weights drawn from ``U(-scale, scale)``."""

    def __init__(self, scale: float = 0.07) -> None:
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _: str, arr: Any) -> None:
        _random_fill(arr, "uniform", -self.scale, self.scale)


@register
class Normal(Initializer):
    """Weights drawn from ``N(0, sigma^2)``."""

    def __init__(self, sigma: float = 0.01) -> None:
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _: str, arr: Any) -> None:
        _random_fill(arr, "normal", 0.0, self.sigma)


@register
class Orthogonal(Initializer):
    """An orthogonal matrix (from the SVD of a random one) times ``scale``."""

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform") -> None:
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _: str, arr: Any) -> None:
        from . import nd
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        tmp_nd = nd.empty((nout, nin), ctx=getattr(arr, "context", None))
        if self.rand_type == "uniform":
            _random_fill(tmp_nd, "uniform", -1.0, 1.0)
        elif self.rand_type == "normal":
            _random_fill(tmp_nd, "normal", 0.0, 1.0)
        else:
            raise ValueError(f"Orthogonal: unknown rand_type {self.rand_type!r}")
        tmp = tmp_nd.asnumpy()
        u, _s, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        _assign(arr, (self.scale * res.reshape(arr.shape)).astype(np.float32))


@register
class Xavier(Initializer):
    """Glorot/Xavier: ``scale = sqrt(magnitude / factor)`` where ``factor`` is the
    average of fan-in and fan-out (``factor_type='avg'``), fan-in (``'in'``) or fan-out
    (``'out'``); draws ``U(-scale, scale)`` (``rnd_type='uniform'``) or
    ``N(0, scale^2)`` (``'gaussian'``)."""

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3) -> None:
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _scale(self, name: str, shape: Sequence[int]) -> float:
        if len(shape) < 2:
            raise ValueError(f"Xavier initializer cannot be applied to vector {name}. It requires at least 2D.")
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        if self.factor_type == "avg":
            factor = (fan_in + fan_out) / 2.0
        elif self.factor_type == "in":
            factor = fan_in
        elif self.factor_type == "out":
            factor = fan_out
        else:
            raise ValueError(f"Incorrect factor type {self.factor_type!r} (use 'avg', 'in' or 'out')")
        return float(np.sqrt(self.magnitude / factor))

    def _init_weight(self, name: str, arr: Any) -> None:
        scale = self._scale(name, arr.shape)
        if self.rnd_type == "uniform":
            _random_fill(arr, "uniform", -scale, scale)
        elif self.rnd_type == "gaussian":
            _random_fill(arr, "normal", 0.0, scale)
        else:
            raise ValueError(f"Unknown random type {self.rnd_type!r} (use 'uniform' or 'gaussian')")


@register
class MSRAPrelu(Xavier):
    """He/MSRA initialisation for PReLU nets: Gaussian Xavier with magnitude
    ``2 / (1 + slope^2)``."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25) -> None:
        magnitude = 2.0 / (1 + slope ** 2)
        super().__init__("gaussian", factor_type, magnitude)
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Bilinear upsampling weights (for deconvolution)."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: str, arr: Any) -> None:
        _assign(arr, _bilinear(arr.shape))


@register
class LSTMBias(Initializer):
    """LSTM bias: 0, except the forget gate's ``forget_bias``."""

    def __init__(self, forget_bias: float = 1.0) -> None:
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name: str, arr: Any) -> None:
        v = np.zeros(arr.shape, dtype=np.float32)
        num_hidden = int(arr.shape[0] / 4)
        v[num_hidden:2 * num_hidden] = self.forget_bias
        _assign(arr, v)


#: gate suffixes of the fused ``RNN`` operator's modes, in its parameter order
RNN_GATES = {"rnn_relu": ("",), "rnn_tanh": ("",), "lstm": ("_i", "_f", "_c", "_o"), "gru": ("_r", "_z", "_o")}


def fused_rnn_layout(num_input: int, num_hidden: int, num_layers: int, mode: str, bidirectional: bool,
                     prefix: str = "") -> tuple[list[tuple[str, int, tuple]], int]:
    """``([(name, offset, shape), ...], total)``: where each per-gate weight and bias lives
    in the ``RNN`` operator's packed parameter vector (every weight of every layer and
    direction, then every bias), named as MXNet's ``FusedRNNCell.unpack_weights`` names
    them (``l0_i2h_i_weight``, ``r1_h2h_o_bias``)."""
    gates = RNN_GATES[mode]
    dirs = ("l", "r") if bidirectional else ("l",)
    b, h, p = len(dirs), num_hidden, 0
    out: list[tuple[str, int, tuple]] = []
    for layer in range(num_layers):
        for d in dirs:
            for g in gates:
                shape = (h, b * h) if layer > 0 else (h, num_input)
                out.append((f"{prefix}{d}{layer}_i2h{g}_weight", p, shape))
                p += shape[0] * shape[1]
            for g in gates:
                out.append((f"{prefix}{d}{layer}_h2h{g}_weight", p, (h, h)))
                p += h * h
    for layer in range(num_layers):
        for d in dirs:
            for kind in ("i2h", "h2h"):
                for g in gates:
                    out.append((f"{prefix}{d}{layer}_{kind}{g}_bias", p, (h,)))
                    p += h
    return out, p


def fused_rnn_num_input(size: int, num_hidden: int, num_layers: int, mode: str, bidirectional: bool) -> int:
    """The input width a packed parameter vector of ``size`` elements implies."""
    b, m, h = 2 if bidirectional else 1, len(RNN_GATES[mode]), num_hidden
    return size // b // h // m - (num_layers - 1) * (h + b * h + 2) - h - 2


@register
class FusedRNN(Initializer):
    """Initialises the ``RNN`` operator's packed parameters gate by gate: with ``init``
    (or the global initializer when None), LSTM forget-gate biases with
    ``forget_bias``."""

    def __init__(self, init: Any, num_hidden: int, num_layers: int, mode: str, bidirectional: bool = False,
                 forget_bias: float = 1.0) -> None:
        if isinstance(init, str):
            init = create(init)
        super().__init__(init=init.dumps() if init is not None else None, num_hidden=num_hidden,
                         num_layers=num_layers, mode=mode, bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden, self._num_layers, self._mode = num_hidden, num_layers, mode
        self._bidirectional, self._forget_bias = bidirectional, forget_bias

    def _init_weight(self, desc: Any, arr: Any) -> None:
        size = int(np.prod(arr.shape))
        num_input = fused_rnn_num_input(size, self._num_hidden, self._num_layers, self._mode, self._bidirectional)
        layout, total = fused_rnn_layout(num_input, self._num_hidden, self._num_layers, self._mode,
                                         self._bidirectional)
        if total != size:
            raise ValueError(f"FusedRNN: {desc!r} has {size} elements, not a packed {self._mode} parameter vector "
                             f"({total} for input width {num_input})")
        host = np.zeros(size, dtype=np.float32)
        global_init = getattr(desc, "global_init", None)
        for name, off, shape in layout:
            piece = host[off:off + int(np.prod(shape))].reshape(shape)
            sub = InitDesc(name, global_init=global_init)
            if self._mode == "lstm" and name.endswith("_f_bias"):
                piece[...] = self._forget_bias
            elif self._init is not None:
                self._init(sub, piece)
            elif global_init is not None:
                global_init(sub, piece)
            else:
                raise ValueError("FusedRNN without init needs a global initializer (call it through one)")
        _assign(arr, host.reshape(arr.shape))


def __getattr__(name: str) -> Any:
    # MXNet's initializer module imports ``ndarray.load`` at its top (``mx.init.load`` is
    # ``mx.nd.load``); here it resolves on first use, ndarray sitting above this module
    if name == "load":
        from .ndarray import load
        return load
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
