"""Statistical checks of random generators (``mx.test_utils``): bucket probabilities
from a quantile function, mean/variance checks and Pearson's chi-square test."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["gen_buckets_probs_with_ppf", "mean_check", "var_check", "chi_square_check", "verify_generator"]


def gen_buckets_probs_with_ppf(ppf: Callable[[float], float], nbuckets: int) -> tuple[list, list]:
    """``nbuckets`` equal-probability buckets ``[(lo, hi), ...]`` of a continuous
    distribution given by its percent-point function, and their probabilities."""
    if nbuckets <= 0:
        raise ValueError("gen_buckets_probs_with_ppf: nbuckets must be positive")
    probs = [1.0 / nbuckets for _ in range(nbuckets)]
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator: Callable[[int], Any], mu: float, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample mean lies within ``mu +- 3 sigma / sqrt(n)``."""
    mean = np.array(generator(nsamples)).mean()
    return bool(mu - 3 * sigma / np.sqrt(nsamples) < mean < mu + 3 * sigma / np.sqrt(nsamples))


def var_check(generator: Callable[[int], Any], sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample variance lies within 3 standard errors of ``sigma**2``."""
    var = np.array(generator(nsamples)).var(ddof=1)
    half = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - half < var < sigma ** 2 + half)


def chi_square_check(generator: Callable[[int], Any], buckets: list, probs: list,
                     nsamples: int = 1000000) -> tuple[float, np.ndarray, np.ndarray]:
    """Pearson's chi-square test of ``generator(nsamples)`` against bucket probabilities.
    ``buckets``: ``[(lo, hi), ...]`` (continuous) or the values themselves (discrete).
    Returns ``(p_value, observed, expected)``; needs scipy, as MXNet."""
    try:
        import scipy.stats as ss
    except ImportError:
        raise ImportError("scipy is not available. Please check if the scipy python bindings are "
                          "installed.") from None
    if not isinstance(buckets, list) or len(probs) != len(buckets):
        raise ValueError("chi_square_check: buckets must be a list as long as probs")
    samples = generator(nsamples)
    continuous = isinstance(buckets[0], (list, tuple))
    if continuous:
        edges = np.zeros((len(buckets) * 2,), dtype=np.float32)
        for i, (lo, hi) in enumerate(buckets):
            if lo > hi or (i < len(buckets) - 1 and hi > buckets[i + 1][0]):
                raise ValueError("chi_square_check: buckets must be ordered and not overlap")
            edges[2 * i], edges[2 * i + 1] = lo, hi
        ids = np.searchsorted(edges, samples, side="right") // 2
    else:
        ids = np.array(samples)
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    observed = np.zeros(len(buckets), dtype=np.int64)
    for i, b in enumerate(buckets):
        observed[i] = (ids == (i if continuous else b)).sum()
    _, p = ss.chisquare(f_obs=observed, f_exp=expected * (observed.sum() / max(expected.sum(), 1)))
    return float(p), observed, expected


def verify_generator(generator: Callable[[int], Any], buckets: list, probs: list, nsamples: int = 1000000,
                     nrepeat: int = 5, success_rate: float = 0.2, alpha: float = 0.05) -> list[float]:
    """Run ``chi_square_check`` ``nrepeat`` times; raise ``AssertionError`` unless at least
    ``success_rate`` of the runs have p > ``alpha``. Returns the p-values."""
    ps, obs, exp = [], [], []
    for _ in range(nrepeat):
        p, o, e = chi_square_check(generator, buckets, probs, nsamples)
        ps.append(p)
        obs.append(o)
        exp.append(e)
    if (np.array(ps) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError(f"Generator test fails, Chi-square p={ps}, obs_freq={obs}, expected_freq={exp}."
                             f"\nbuckets={buckets}, probs={probs}")
    return ps
