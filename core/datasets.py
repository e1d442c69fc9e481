"""Small built-in data sets for demos and tests (no download).

``load_digits()`` returns the UCI handwritten digits that scikit-learn ships
(``sklearn.datasets.load_digits``: 1,797 grey 8x8 images of the digits 0-9) as float32
NCHW images scaled to [0, 1] and float32 labels, split into a training and a held-out
test part with a fixed, class-stratified shuffle. scikit-learn is an optional
dependency (``pip install 'plexnet[demo]'``); without it a clear ``ImportError`` says
what to install.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Split", "load_digits", "require_sklearn"]


class Split(NamedTuple):
    """A train/test split: images ``(N, 1, H, W)`` float32 in [0, 1], labels ``(N,)``
    float32."""

    train_data: np.ndarray
    train_label: np.ndarray
    test_data: np.ndarray
    test_label: np.ndarray


def require_sklearn() -> object:
    """``sklearn.datasets`` or an ImportError that says how to get it."""
    try:
        import sklearn.datasets as skd
    except ImportError as e:
        raise ImportError(
            "the digits data set comes from scikit-learn, which is not installed; install the demo "
            "extra: pip install 'plexnet[demo]' (or: pip install scikit-learn)") from e
    return skd


def _stratified_split(y: np.ndarray, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    train, test = [], []
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        rng.shuffle(idx)
        n_test = int(round(len(idx) * test_fraction))
        test.append(idx[:n_test])
        train.append(idx[n_test:])
    tr = np.concatenate(train)
    te = np.concatenate(test)
    rng.shuffle(tr)
    rng.shuffle(te)
    return tr, te


def load_digits(test_fraction: float = 0.2, seed: int = 0, size: int = 8) -> Split:
    """The digits as a ``Split``: ``test_fraction`` of every class is held out (chosen
    by ``seed``). ``size`` 8 keeps the original 8x8 images; 16 (or any multiple of 8)
    upsamples them by pixel repetition."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    if size % 8 or size <= 0:
        raise ValueError(f"size must be a positive multiple of 8, got {size}")
    skd = require_sklearn()
    digits = skd.load_digits()  # type: ignore[attr-defined]
    x = (np.asarray(digits.images, dtype=np.float32) / 16.0)[:, None, :, :]
    if size != 8:
        r = size // 8
        x = x.repeat(r, axis=2).repeat(r, axis=3)
    y = np.asarray(digits.target, dtype=np.float32)
    tr, te = _stratified_split(y.astype(np.int64), test_fraction, seed)
    return Split(np.ascontiguousarray(x[tr]), y[tr], np.ascontiguousarray(x[te]), y[te])
