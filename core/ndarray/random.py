"""``plexnet.nd.random`` samplers, drawing from the resource manager's per-device
generators (ordered through the generator's engine variable, so ``plexnet.random.seed``
makes every stream reproducible, on every engine)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import engine as _engine_mod
from ..context import Context, current_context
from ..resource import ResourceRequest, get as _resources
from .ndarray import NDArray, _dtype, _new

__all__ = ["uniform", "normal", "randn", "randint", "poisson", "exponential", "gamma", "shuffle",
           "multinomial"]


def _shape(shape: Any) -> tuple:
    if shape is None:
        return (1,)
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def _sample(draw: Callable[[Any, Any], Any], shape: Any, ctx: Context | None, dtype: Any,
            out: NDArray | None, name: str, reads: tuple = ()) -> NDArray:
    ctx = out.context if out is not None else (ctx or current_context())
    res = _resources().request(ctx, ResourceRequest(ResourceRequest.kRandom))
    if out is None:
        out = _new(_shape(shape), ctx, _dtype(dtype))
    dst = out._data

    def run(rc: Any) -> None:
        dst[...] = draw(res.get_random(), dst.shape)

    _engine_mod.get().push_sync(run, ctx, [r._chunk.var for r in reads], (out._chunk.var, res.var), 0, 0, name)
    return out


def uniform(low: float = 0.0, high: float = 1.0, shape: Any = None, dtype: Any = None,
            ctx: Context | None = None, out: NDArray | None = None, **kw: Any) -> NDArray:
    return _sample(lambda g, s: g.uniform(low, high, s), shape, ctx, dtype, out, "random_uniform")


def normal(loc: float = 0.0, scale: float = 1.0, shape: Any = None, dtype: Any = None,
           ctx: Context | None = None, out: NDArray | None = None, **kw: Any) -> NDArray:
    return _sample(lambda g, s: g.normal(loc, scale, s), shape, ctx, dtype, out, "random_normal")


def randn(*shape: int, loc: float = 0.0, scale: float = 1.0, dtype: Any = None, ctx: Context | None = None,
          **kw: Any) -> NDArray:
    return normal(loc, scale, shape, dtype, ctx)


def randint(low: int, high: int, shape: Any = None, dtype: Any = "int32", ctx: Context | None = None,
            out: NDArray | None = None, **kw: Any) -> NDArray:
    return _sample(lambda g, s: g.integers(low, high, s), shape, ctx, dtype, out, "random_randint")


def poisson(lam: float = 1.0, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
            out: NDArray | None = None, **kw: Any) -> NDArray:
    return _sample(lambda g, s: g.poisson(lam, s), shape, ctx, dtype, out, "random_poisson")


def exponential(scale: float = 1.0, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
                out: NDArray | None = None, **kw: Any) -> NDArray:
    return _sample(lambda g, s: g.exponential(scale, s), shape, ctx, dtype, out, "random_exponential")


def gamma(alpha: float = 1.0, beta: float = 1.0, shape: Any = None, dtype: Any = None,
          ctx: Context | None = None, out: NDArray | None = None, **kw: Any) -> NDArray:
    return _sample(lambda g, s: g.gamma(alpha, beta, s), shape, ctx, dtype, out, "random_gamma")


def multinomial(data: NDArray, shape: Any = None, get_prob: bool = False, dtype: Any = "int32",
                **kw: Any) -> NDArray:
    """Sample category indices from each row of probabilities ``data``."""
    if get_prob:
        raise NotImplementedError("multinomial(get_prob=True) is not supported")
    probs = data._data
    extra = _shape(shape) if shape is not None else ()

    def draw(g: Any, s: tuple) -> Any:
        p = probs.reshape(-1, probs.shape[-1])
        cdf = p.cumsum(axis=1)
        u = g.random((p.shape[0],) + (extra or (1,)))
        idx = (u.reshape(p.shape[0], -1, 1) > cdf[:, None, :]).sum(axis=2)
        return idx.reshape(s)
    return _sample(draw, data.shape[:-1] + extra, data.context, dtype, None, "random_multinomial", (data,))


def shuffle(data: NDArray, **kw: Any) -> NDArray:
    """A copy of ``data`` with its first axis shuffled."""
    src = data._data
    return _sample(lambda g, s: src[g.permutation(src.shape[0])], data.shape, data.context, data.dtype, None,
                   "random_shuffle", (data,))
