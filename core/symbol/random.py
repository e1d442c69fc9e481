"""``plexnet.sym.random``: MXNet 1.9.1's symbolic sampling front end.

As ``nd.random``: Symbol distribution parameters build a ``_sample_<dist>`` node,
numbers a ``_random_<dist>`` node (operators from ``plexnet-ops-random``). Any other
registered ``_random_<name>`` operator is ``sym.random.<name>``.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

from ..operator import namespaces as _namespaces
from ..operator.hints import missing_fluent_message
from ..operator.registry import OperatorNotFound
from . import op_function
from .symbol import Symbol

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial", "negative_binomial",
           "generalized_negative_binomial", "shuffle", "randint"]



def _op(name: str) -> Callable[..., Symbol]:
    fn = op_function(name)
    if fn is None:
        raise OperatorNotFound(missing_fluent_message(f"sym.random.{name.lstrip('_')}", name))
    return fn


def _random_helper(random: str, sampler: str | None, params: list[Any], shape: Any, dtype: Any,
                   kwargs: dict[str, Any]) -> Symbol:
    kw = dict(kwargs)
    if shape is not None:
        kw["shape"] = shape
    if dtype is not None:
        kw["dtype"] = np.dtype(dtype).name
    if isinstance(params[0], Symbol):
        if any(not isinstance(p, Symbol) for p in params[1:]):
            raise ValueError("Distribution parameters must all have the same type, but got both Symbol and "
                             f"{', '.join(type(p).__name__ for p in params[1:] if not isinstance(p, Symbol))}.")
        if sampler is None:
            raise ValueError(f"{random}: distribution parameters must be numbers, got Symbol")
        return _op(sampler)(*params, **kw)
    if isinstance(params[0], (numbers.Number, np.generic)) and not isinstance(params[0], bool):
        if any(not isinstance(p, (numbers.Number, np.generic)) for p in params[1:]):
            raise ValueError("Distribution parameters must all have the same type.")
        return _op(random)(**dict(zip(_namespaces.RANDOM_PARAMS[random], params)), **kw)
    raise ValueError(f"Distribution parameters must be either Symbol or numbers, but got {type(params[0])}.")


def uniform(low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Uniform samples on ``[low, high)`` (see ``nd.random.uniform``)."""
    return _random_helper("_random_uniform", "_sample_uniform", [low, high], shape, dtype, kwargs)


def normal(loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Normal samples (see ``nd.random.normal``)."""
    return _random_helper("_random_normal", "_sample_normal", [loc, scale], shape, dtype, kwargs)


def randn(*shape: int, **kwargs: Any) -> Symbol:
    """Normal samples of the given shape."""
    loc, scale, dtype = kwargs.pop("loc", 0), kwargs.pop("scale", 1), kwargs.pop("dtype", None)
    return _random_helper("_random_normal", "_sample_normal", [loc, scale], shape or None, dtype, kwargs)


def poisson(lam: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Poisson samples."""
    return _random_helper("_random_poisson", "_sample_poisson", [lam], shape, dtype, kwargs)


def exponential(scale: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Exponential samples with scale ``scale`` (rate ``1/scale``)."""
    return _random_helper("_random_exponential", "_sample_exponential", [1.0 / scale], shape, dtype, kwargs)


def gamma(alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Gamma samples with shape ``alpha`` and scale ``beta``."""
    return _random_helper("_random_gamma", "_sample_gamma", [alpha, beta], shape, dtype, kwargs)


def negative_binomial(k: Any = 1, p: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Negative binomial samples."""
    return _random_helper("_random_negative_binomial", "_sample_negative_binomial", [k, p], shape, dtype, kwargs)


def generalized_negative_binomial(mu: Any = 1, alpha: Any = 1, shape: Any = None, dtype: Any = None,
                                  **kwargs: Any) -> Symbol:
    """Generalized negative binomial samples."""
    return _random_helper("_random_generalized_negative_binomial", "_sample_generalized_negative_binomial",
                          [mu, alpha], shape, dtype, kwargs)


def randint(low: int, high: int, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Uniform integers on ``[low, high)``."""
    return _random_helper("_random_randint", None, [low, high], shape, dtype, kwargs)


def multinomial(data: Symbol, shape: Any = None, get_prob: bool = True, dtype: Any = "int32",
                **kwargs: Any) -> Symbol:
    """Category draws from the distributions in the last axis of ``data`` (MXNet's symbolic
    default is ``get_prob=True``)."""
    kw = dict(kwargs, get_prob=get_prob, dtype=np.dtype(dtype).name)
    if shape is not None:
        kw["shape"] = shape
    return _op("_sample_multinomial")(data, **kw)


def shuffle(data: Symbol, **kwargs: Any) -> Symbol:
    """``data`` with its first axis randomly permuted."""
    return _op("_shuffle")(data, **kwargs)


def _like(dist: str) -> Callable[..., Symbol]:
    op = f"_random_{dist}_like"

    def fn(data: Symbol | None = None, *args: Any, **kwargs: Any) -> Symbol:
        # MXNet's (data, <distribution parameters>, name, attr, out): positional values pass through
        return _op(op)(data, *args, **kwargs) if data is not None else _op(op)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = f"{dist}_like"
    fn.__doc__ = f"Samples of the {dist.replace('_', ' ')} distribution shaped like ``data`` ({op})."
    return fn


for _dist in _namespaces.LIKE_DISTRIBUTIONS:  # uniform_like, normal_like, ...
    globals()[f"{_dist}_like"] = _like(_dist)
    __all__.append(f"{_dist}_like")
del _dist


def __getattr__(name: str) -> Any:
    """A third-party ``_random_<name>`` / ``_sample_<name>`` operator as ``sym.random.<name>``."""
    fn = _namespaces.prefixed_op(op_function, "random", name)
    if fn is None:
        raise AttributeError(f"plexnet.sym.random has no function {name!r}")
    return fn
