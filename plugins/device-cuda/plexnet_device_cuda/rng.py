"""A numpy-``Generator``-shaped wrapper over CuPy's random state."""
from __future__ import annotations

from typing import Any


class CupyGenerator:
    """Methods plexnet's samplers and operators call: random, uniform, normal,
    integers, poisson, exponential, gamma, permutation, standard_normal."""

    def __init__(self, cupy: Any, seed: int) -> None:
        self._rs = cupy.random.RandomState(seed % (2**63))

    def random(self, size: Any = None, dtype: Any = float) -> Any:
        return self._rs.random_sample(size, dtype)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None) -> Any:
        return self._rs.uniform(low, high, size)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> Any:
        return self._rs.normal(loc, scale, size)

    def standard_normal(self, size: Any = None) -> Any:
        return self._rs.standard_normal(size)

    def integers(self, low: int, high: int | None = None, size: Any = None, dtype: Any = "l") -> Any:
        # CuPy's RandomState.randint takes numpy's dtype argument (default 'l', int64).
        return self._rs.randint(low, high, size, dtype=dtype)

    def poisson(self, lam: float = 1.0, size: Any = None) -> Any:
        return self._rs.poisson(lam, size)

    def exponential(self, scale: float = 1.0, size: Any = None) -> Any:
        return self._rs.exponential(scale, size)

    def gamma(self, shape: float, scale: float = 1.0, size: Any = None) -> Any:
        return self._rs.gamma(shape, scale, size)

    def permutation(self, n: Any) -> Any:
        return self._rs.permutation(n)
