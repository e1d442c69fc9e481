"""Helpers MXNet scripts and tests use from ``mx.test_utils``."""
from __future__ import annotations

from typing import Any

import numpy as np

from .context import Context, current_context

__all__ = ["default_context", "set_default_context", "assert_almost_equal", "almost_equal", "same",
           "rand_shape_nd", "rand_ndarray"]

_default: Context | None = None


def default_context() -> Context:
    return _default or current_context()


def set_default_context(ctx: Context) -> None:
    global _default
    _default = ctx


def _np(a: Any) -> np.ndarray:
    return a.asnumpy() if hasattr(a, "asnumpy") else np.asarray(a)


def almost_equal(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-20, equal_nan: bool = False) -> bool:
    return bool(np.allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def assert_almost_equal(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-20,
                        names: tuple[str, str] = ("a", "b"), equal_nan: bool = False) -> None:
    """Raise with the largest violation if ``a`` and ``b`` differ beyond the tolerances."""
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=equal_nan,
                               err_msg=f"{names[0]} vs {names[1]}")


def same(a: Any, b: Any) -> bool:
    return bool(np.array_equal(_np(a), _np(b)))


def rand_shape_nd(num_dim: int, dim: int = 10) -> tuple[int, ...]:
    return tuple(np.random.randint(1, dim + 1, size=num_dim).tolist())


def rand_ndarray(shape: Any, stype: str = "default", density: Any = None, dtype: Any = None,
                 ctx: Context | None = None) -> Any:
    if stype != "default":
        raise NotImplementedError("sparse storage types are not supported")
    from .ndarray import array
    return array(np.random.uniform(-1, 1, shape), ctx=ctx or default_context(), dtype=dtype)
