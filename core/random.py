"""Random numbers (``plexnet.random``, also ``mx.random`` / ``mx.rnd``).

``seed(seed_state, ctx='all')`` reseeds the per-device generators the resource manager
owns (``plexnet.resource``). Operators draw from them through a ``kRandom`` resource,
serialised by the resource's engine variable, so a seeded program draws the same numbers
in every run, on the naive and on the threaded engines.
"""
from __future__ import annotations

import numbers
from typing import Any

from . import resource as _resource

__all__ = ["seed"]


def seed(seed_state: int, ctx: Any = "all") -> None:
    """Seed the random number generators (``mxnet.random.seed``).

    ``seed_state`` is an integer. ``ctx="all"`` (default) seeds every device's generator,
    including those created later; a ``Context`` seeds only that device's. Each device
    derives its own stream from the seed, so ``cpu(0)`` and ``gpu(0)`` differ, but a
    given seed yields the same numbers run after run.

    The reseed is an operation on the engine: draws pushed before ``seed`` use the old
    state, draws pushed after it the new one, even on the threaded engines.

    >>> import plexnet as mx
    >>> mx.random.seed(128)
    """
    if isinstance(seed_state, bool) or not isinstance(seed_state, numbers.Integral):
        raise ValueError(f"seed_state must be an integer, got {seed_state!r}")
    if not (isinstance(ctx, str) and ctx == "all"):
        from .context import Context
        if not isinstance(ctx, Context):
            raise ValueError(f"ctx must be 'all' or a Context, got {ctx!r}")
    _resource.seed(int(seed_state), ctx)


# The samplers of ``mxnet.random`` are those of ``nd.random`` (MXNet: ``from .ndarray.random import *``).
from .ndarray.random import (exponential, gamma, generalized_negative_binomial, multinomial,  # noqa: E402
                             negative_binomial, normal, poisson, randint, randn, shuffle, uniform)

__all__ += ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial", "negative_binomial",
            "generalized_negative_binomial", "shuffle", "randint"]
