"""``plexnet.nd.random``: MXNet 1.9.1's sampling front end.

Each function dispatches as MXNet's ``_random_helper`` does: scalar distribution
parameters call ``_random_<dist>`` (one draw of ``shape``), NDArray parameters call
``_sample_<dist>`` (``shape`` draws per parameter element). The operators come from the
``plexnet-ops-random`` plugin; they draw from the resource manager's per-device
generators inside engine operations that mutate the generator's variable, so
``plexnet.random.seed`` makes every stream reproducible, on every engine. Any other
registered ``_random_<name>`` operator (a third-party plugin's) is ``nd.random.<name>``.

Without the plugin, ``uniform``/``normal``/``randn``/``randint`` with scalar parameters
still work (drawn the same way: initializers and ``plexnet demo`` need no extra plugin);
everything else names the missing plugin.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

from .. import engine as _engine_mod
from ..base import MXNetError, ShapeError
from ..context import Context, current_context
from ..engine.base import FnProperty
from ..operator import namespaces as _namespaces
from ..operator.hints import missing_fluent_message
from ..operator.registry import OperatorNotFound
from ..resource import ResourceRequest, get as _resources
from ..util import is_np_shape
from . import op_function
from .ndarray import NDArray, _new

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial", "negative_binomial",
           "generalized_negative_binomial", "shuffle", "randint",
           "current_context"]


def _op(name: str) -> Callable[..., Any]:
    fn = op_function(name)
    if fn is None:
        raise OperatorNotFound(missing_fluent_message(f"nd.random.{name.lstrip('_')}", name))
    return fn


# -- core fallback for the basic scalar samplers (no plugin installed) ---------------------------------
_FALLBACK: dict[str, Callable[..., Any]] = {
    "_random_uniform": lambda g, p, s: g.uniform(p[0], p[1], s),
    "_random_normal": lambda g, p, s: g.normal(p[0], p[1], s),
    "_random_randint": lambda g, p, s: g.integers(p[0], p[1], s),
}


def _fallback(name: str, params: list[Any], shape: Any, dtype: Any, ctx: Context, out: NDArray | None) -> NDArray:
    draw = _FALLBACK[name]
    if out is None:
        shape = (int(shape),) if isinstance(shape, numbers.Integral) else tuple(shape)
        default = np.int32 if name == "_random_randint" else np.float32
        out = _new(shape, ctx, np.dtype(dtype) if dtype not in (None, "None") else np.dtype(default))
    res = _resources().request(out.context, ResourceRequest(ResourceRequest.kRandom))
    dst = out._data

    def run(rc: Any) -> None:
        dst[...] = draw(res.get_random(), params, dst.shape)

    _engine_mod.get().push_sync(run, out.context, (), (out._chunk.var, res.var), FnProperty.NORMAL, 0, name)
    return out


def _check_known_shape(op: str, shape: Any) -> None:
    """MXNet 1.x outside ``np_shape``: a given shape with a 0 dimension, or ``()``, is unknown,
    so the imperative sampler fails shape inference (symbols keep 0 as "infer it")."""
    s = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if (not s or 0 in s) and not is_np_shape():
        raise ShapeError(f"Operator {op} inferring shapes failed: shape {s} has an unknown dimension (0, or "
                         f"the 0-d shape) outside numpy shape semantics")


def _random_helper(random: str, sampler: str | None, params: list[Any], shape: Any, dtype: Any,
                   ctx: Context | None, out: NDArray | None, kwargs: dict[str, Any]) -> Any:
    """MXNet's dispatch: NDArray parameters -> ``sampler``, numbers -> ``random``."""
    if isinstance(params[0], NDArray):
        for p in params[1:]:
            if not isinstance(p, NDArray):
                raise ValueError(f"Distribution parameters must all have the same type, but got both "
                                 f"{type(params[0])} and {type(p)}.")
        if sampler is None:
            raise ValueError(f"{random}: distribution parameters must be numbers, got NDArray")
        kw = dict(kwargs)
        if shape is not None:
            kw["shape"] = shape
        if dtype is not None:
            kw["dtype"] = dtype
        return _op(sampler)(*params, out=out, **kw)
    if isinstance(params[0], (numbers.Number, np.generic)) and not isinstance(params[0], bool):
        for p in params[1:]:
            if not isinstance(p, (numbers.Number, np.generic)):
                raise ValueError(f"Distribution parameters must all have the same type, but got both "
                                 f"{type(params[0])} and {type(p)}.")
        ctx = out.context if out is not None else (ctx or current_context())
        if shape is not None:
            _check_known_shape(random, shape)
            if out is None and not isinstance(shape, (int, np.integer)) and not tuple(shape):
                # numpy shape semantics: shape () is one draw as a 0-d array (MXNet 1.9.1)
                return _random_helper(random, sampler, params, (1,), dtype, ctx, None, kwargs).reshape(())
        if shape is None:
            shape = out.shape if out is not None else 1
        if dtype is None and out is not None:
            dtype = out.dtype
        if op_function(random) is None and random in _FALLBACK and not kwargs:
            return _fallback(random, params, shape, dtype, ctx, out)
        names = _namespaces.RANDOM_PARAMS[random]
        kw = dict(zip(names, params), shape=shape, ctx=ctx, out=out, **kwargs)
        if dtype is not None:
            kw["dtype"] = np.dtype(dtype).name
        return _op(random)(**kw)
    raise ValueError(f"Distribution parameters must be either NDArray or numbers, but got {type(params[0])}.")




def uniform(low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
            out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Samples from the uniform distribution on ``[low, high)``: ``shape`` draws for number
    parameters; for NDArray parameters ``shape`` draws per element (output
    ``low.shape + shape``)."""
    return _random_helper("_random_uniform", "_sample_uniform", [low, high], shape, dtype, ctx, out, kwargs)


def normal(loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
           out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Samples from the normal distribution with mean ``loc`` and standard deviation ``scale``."""
    return _random_helper("_random_normal", "_sample_normal", [loc, scale], shape, dtype, ctx, out, kwargs)


def randn(*shape: int, **kwargs: Any) -> NDArray:
    """Normal samples of the given shape: ``randn(2, 3, loc=0, scale=1)``."""
    loc, scale = kwargs.pop("loc", 0), kwargs.pop("scale", 1)
    dtype, ctx, out = kwargs.pop("dtype", None), kwargs.pop("ctx", None), kwargs.pop("out", None)
    if not shape and out is None and not is_np_shape() and not any(isinstance(a, NDArray) for a in (loc, scale)):
        # MXNet 1.9.1 passes the empty shape on, and its shape inference fails
        raise MXNetError("Operator _random_normal inferring shapes failed: randn() needs a shape, "
                         "e.g. randn(2, 3)")
    # no shape: the output's, or under numpy shape semantics one draw as a 0-d array (MXNet)
    given = shape if shape else (() if out is None and is_np_shape() else None)
    return _random_helper("_random_normal", "_sample_normal", [loc, scale], given, dtype, ctx, out, kwargs)


def poisson(lam: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
            out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Samples from the Poisson distribution with rate ``lam``."""
    return _random_helper("_random_poisson", "_sample_poisson", [lam], shape, dtype, ctx, out, kwargs)


def exponential(scale: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
                out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Samples from the exponential distribution with scale ``scale`` (rate ``1/scale``)."""
    return _random_helper("_random_exponential", "_sample_exponential", [1.0 / scale], shape, dtype, ctx, out,
                          kwargs)


def gamma(alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
          out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Samples from the gamma distribution with shape ``alpha`` and scale ``beta``."""
    return _random_helper("_random_gamma", "_sample_gamma", [alpha, beta], shape, dtype, ctx, out, kwargs)


def negative_binomial(k: Any = 1, p: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
                      out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Failures before ``k`` successes of trials with success probability ``p``."""
    return _random_helper("_random_negative_binomial", "_sample_negative_binomial", [k, p], shape, dtype, ctx,
                          out, kwargs)


def generalized_negative_binomial(mu: Any = 1, alpha: Any = 1, shape: Any = None, dtype: Any = None,
                                  ctx: Context | None = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Gamma-Poisson samples with mean ``mu`` and dispersion ``alpha``."""
    return _random_helper("_random_generalized_negative_binomial", "_sample_generalized_negative_binomial",
                          [mu, alpha], shape, dtype, ctx, out, kwargs)


def randint(low: int, high: int, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
            out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Integers drawn uniformly from ``[low, high)`` (int32 unless ``dtype='int64'``)."""
    return _random_helper("_random_randint", None, [low, high], shape, dtype, ctx, out, kwargs)


def multinomial(data: NDArray, shape: Any = None, get_prob: bool = False, out: Any = None, dtype: Any = "int32",
                **kwargs: Any) -> Any:
    """Category indices drawn from the distributions in the last axis of ``data``; with
    ``get_prob`` also their log-probabilities (differentiable with respect to ``data``)."""
    kw = dict(kwargs, get_prob=get_prob, dtype=np.dtype(dtype).name, out=out)
    if shape is not None:
        kw["shape"] = shape
    return _op("_sample_multinomial")(data, **kw)


def shuffle(data: NDArray, **kwargs: Any) -> NDArray:
    """A copy of ``data`` with its first axis randomly permuted."""
    return _op("_shuffle")(data, **kwargs)


def _like(dist: str) -> Callable[..., NDArray]:
    op = f"_random_{dist}_like"

    def fn(data: NDArray | None = None, *args: Any, **kwargs: Any) -> NDArray:
        # MXNet's (data, <distribution parameters>, out, name): positional values pass through
        return _op(op)(data, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = f"{dist}_like"
    fn.__doc__ = f"Samples of the {dist.replace('_', ' ')} distribution in the shape and dtype of ``data`` ({op})."
    return fn


for _dist in _namespaces.LIKE_DISTRIBUTIONS:  # uniform_like, normal_like, ...
    globals()[f"{_dist}_like"] = _like(_dist)
    __all__.append(f"{_dist}_like")
del _dist


def __getattr__(name: str) -> Any:
    """A third-party ``_random_<name>`` / ``_sample_<name>`` operator as ``nd.random.<name>``."""
    fn = _namespaces.prefixed_op(op_function, "random", name)
    if fn is None:
        raise AttributeError(f"plexnet.nd.random has no function {name!r}")
    return fn
