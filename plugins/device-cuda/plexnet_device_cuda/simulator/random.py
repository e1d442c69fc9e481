"""``cupy.random`` of the simulator: ``RandomState`` (numpy's PCG64 behind CuPy's API,
bound to its device) and the module-level functions on each device's default state."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import runtime
from .arrays import kernel_result, ndarray, unwrap
from .errors import unsupported


class RandomState:
    """``cupy.random.RandomState``: numpy's PCG64 behind CuPy's RandomState API (seeds
    up to 64 bits, results float64/int64 unless ``dtype`` says otherwise, arrays on the
    current device, bound to the device it was created on)."""

    def __init__(self, seed: Any = None, method: Any = None) -> None:
        self._device = runtime.RT.device()
        self.seed(seed)

    def seed(self, seed: Any = None) -> None:
        if seed is not None:
            if isinstance(seed, ndarray):
                seed = seed.item()
            seed = int(seed)
            if seed < 0 or seed >= 1 << 64:
                raise ValueError(f"seed must be in [0, 2**64): {seed}")
        self._gen = np.random.Generator(np.random.PCG64(seed))

    def _out(self, what: str, r: Any, reads: list | None = None) -> ndarray:
        rt = runtime.RT
        dev = rt.device()
        if dev != self._device:
            raise RuntimeError(f"cupy.random.RandomState created on device {self._device} used while device "
                               f"{dev} is current (the generator's state lives on device {self._device}) "
                               f"[CuPy simulator]")
        return kernel_result(rt, f"random.{what}", np.asarray(r) if not isinstance(r, np.ndarray) else r,
                             reads or [], [])

    def _args(self, *vals: Any) -> tuple[list, list]:
        reads: list[ndarray] = []
        return [unwrap(v, reads, True) for v in vals], reads

    def random_sample(self, size: Any = None, dtype: Any = float) -> ndarray:
        return self._out("random_sample", self._gen.random(size, dtype=np.float64).astype(dtype, copy=False))

    random = ranf = sample = random_sample

    def rand(self, *size: Any, **kwarg: Any) -> ndarray:
        dtype = kwarg.pop("dtype", float)
        if kwarg:
            raise TypeError(f"rand() got unexpected keyword arguments {', '.join(kwarg)}")
        return self.random_sample(size or None, dtype)

    def randn(self, *size: Any, **kwarg: Any) -> ndarray:
        dtype = kwarg.pop("dtype", float)
        if kwarg:
            raise TypeError(f"randn() got unexpected keyword arguments {', '.join(kwarg)}")
        return self.standard_normal(size or None, dtype)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (lo, hi), reads = self._args(low, high)
        return self._out("uniform", self._gen.uniform(lo, hi, size).astype(dtype, copy=False), reads)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (lo, sc), reads = self._args(loc, scale)
        return self._out("normal", self._gen.normal(lo, sc, size).astype(dtype, copy=False), reads)

    def standard_normal(self, size: Any = None, dtype: Any = float) -> ndarray:
        return self._out("standard_normal", self._gen.standard_normal(size).astype(dtype, copy=False))

    def randint(self, low: Any, high: Any = None, size: Any = None, dtype: Any = int) -> ndarray:
        return self._out("randint", self._gen.integers(low, high, size, dtype=np.dtype(dtype)))

    def random_integers(self, low: Any, high: Any = None, size: Any = None) -> ndarray:
        if high is None:
            low, high = 1, low
        return self._out("random_integers", self._gen.integers(low, high, size, endpoint=True))

    def poisson(self, lam: Any = 1.0, size: Any = None, dtype: Any = "l") -> ndarray:
        (lm,), reads = self._args(lam)
        return self._out("poisson", self._gen.poisson(lm, size).astype(dtype, copy=False), reads)

    def exponential(self, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (sc,), reads = self._args(scale)
        return self._out("exponential", self._gen.exponential(sc, size).astype(dtype, copy=False), reads)

    def standard_exponential(self, size: Any = None, dtype: Any = float) -> ndarray:
        return self._out("standard_exponential", self._gen.standard_exponential(size).astype(dtype, copy=False))

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (sh, sc), reads = self._args(shape, scale)
        return self._out("gamma", self._gen.gamma(sh, sc, size).astype(dtype, copy=False), reads)

    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = float) -> ndarray:
        (sh,), reads = self._args(shape)
        return self._out("standard_gamma", self._gen.standard_gamma(sh, size).astype(dtype, copy=False), reads)

    def beta(self, a: Any, b: Any, size: Any = None, dtype: Any = float) -> ndarray:
        (aa, bb), reads = self._args(a, b)
        return self._out("beta", self._gen.beta(aa, bb, size).astype(dtype, copy=False), reads)

    def binomial(self, n: Any, p: Any, size: Any = None, dtype: Any = int) -> ndarray:
        (nn, pp), reads = self._args(n, p)
        return self._out("binomial", self._gen.binomial(nn, pp, size).astype(dtype, copy=False), reads)

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (mm, ss), reads = self._args(mean, sigma)
        return self._out("lognormal", self._gen.lognormal(mm, ss, size).astype(dtype, copy=False), reads)

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> ndarray:
        (lo, sc), reads = self._args(loc, scale)
        return self._out("laplace", self._gen.laplace(lo, sc, size).astype(dtype, copy=False), reads)

    def permutation(self, a: Any) -> ndarray:
        if isinstance(a, ndarray):
            return self._out("permutation", self._gen.permutation(a._a), [a])
        if isinstance(a, np.ndarray):
            raise unsupported(a)
        return self._out("permutation", self._gen.permutation(int(a)))

    def shuffle(self, a: ndarray) -> None:
        if not isinstance(a, ndarray):
            raise TypeError("The array must be cupy.ndarray")
        self._gen.shuffle(a._a)
        runtime.RT.kernel("random.shuffle", [], [a], [])

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> ndarray:
        (aa, pp), reads = self._args(a, p)
        return self._out("choice", np.asarray(self._gen.choice(aa, size, replace, pp)), reads)


#: the default generator of each device (``cupy.random``'s functions use the current device's)
_random_states: dict[int, RandomState] = {}


def get_random_state() -> RandomState:
    d = runtime.RT.device()
    rs = _random_states.get(d)
    if rs is None:
        rs = _random_states[d] = RandomState()
    return rs


def set_random_state(rs: RandomState) -> None:
    _random_states[runtime.RT.device()] = rs


def reset_states() -> None:
    _random_states.clear()


def random_function(name: str) -> Callable:
    def f(*args: Any, **kwargs: Any) -> Any:
        return getattr(get_random_state(), name)(*args, **kwargs)
    f.__name__ = name
    return f


def seed(seed: Any = None) -> None:
    get_random_state().seed(seed)
