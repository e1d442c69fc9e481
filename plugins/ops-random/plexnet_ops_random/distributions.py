"""The distributions MXNet samples from, as draws on a numpy-``Generator``-like object.

Parameters follow MXNet 1.9.1's operators: ``gamma(alpha, beta)`` with ``beta`` the
scale, ``exponential(lam)`` with ``lam`` the rate, ``negative_binomial(k, p)`` the
number of failures before ``k`` successes, ``generalized_negative_binomial(mu, alpha)``
the gamma-Poisson mixture with mean ``mu`` and variance ``mu + alpha * mu**2``.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

__all__ = ["Distribution", "DISTRIBUTIONS"]


def _gnb(rng: Any, mu: Any, alpha: Any, size: Any) -> Any:
    safe = alpha + (alpha == 0)  # alpha == 0 is the Poisson limit
    lam = rng.gamma(1.0 / safe, mu * safe, size)
    lam = lam * (alpha != 0) + mu * (alpha == 0)
    return rng.poisson(lam, size)


class Distribution(NamedTuple):
    """``random``: (name, default) of the scalar parameters of ``_random_<name>``;
    ``sample``: argument names of ``_sample_<name>``; ``draw(rng, *params, size)``."""

    random: tuple[tuple[str, Any, type], ...]
    sample: tuple[str, ...]
    draw: Callable[..., Any]


DISTRIBUTIONS: dict[str, Distribution] = {
    "uniform": Distribution((("low", 0.0, float), ("high", 1.0, float)), ("low", "high"),
                            # low + (high - low) * U: Generator.uniform's draws, without its
                            # refusal of low > high (MXNet's sample_uniform draws from (high, low])
                            lambda g, a, b, size: a + (b - a) * g.random(size)),
    "normal": Distribution((("loc", 0.0, float), ("scale", 1.0, float)), ("mu", "sigma"),
                           lambda g, a, b, size: g.normal(a, b, size)),
    "gamma": Distribution((("alpha", 1.0, float), ("beta", 1.0, float)), ("alpha", "beta"),
                          lambda g, a, b, size: g.gamma(a, b, size)),
    "exponential": Distribution((("lam", 1.0, float),), ("lam",),
                                lambda g, lam, size: g.exponential(1.0 / lam, size)),
    "poisson": Distribution((("lam", 1.0, float),), ("lam",), lambda g, lam, size: g.poisson(lam, size)),
    "negative_binomial": Distribution((("k", 1, int), ("p", 1.0, float)), ("k", "p"),
                                      lambda g, k, p, size: g.negative_binomial(k, p, size)),
    "generalized_negative_binomial": Distribution((("mu", 1.0, float), ("alpha", 1.0, float)), ("mu", "alpha"),
                                                  _gnb),
}
