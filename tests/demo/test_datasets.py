"""``plexnet.datasets.load_digits``: shapes, scaling, a deterministic stratified split."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from plexnet import datasets  # noqa: E402

pytestmark = pytest.mark.timeout(60)


def test_digits_split():
    s = datasets.load_digits()
    assert s.train_data.shape[1:] == (1, 8, 8) and s.test_data.shape[1:] == (1, 8, 8)
    assert len(s.train_label) + len(s.test_label) == 1797 and abs(len(s.test_label) - 360) <= 5
    assert s.train_data.dtype == np.float32 and s.train_label.dtype == np.float32
    assert 0.0 <= s.train_data.min() and s.train_data.max() <= 1.0
    counts = np.bincount(s.test_label.astype(int), minlength=10)
    assert counts.min() >= 34 and counts.max() <= 38  # every class held out in proportion
    again = datasets.load_digits()
    np.testing.assert_array_equal(s.test_label, again.test_label)
    other = datasets.load_digits(seed=1)
    assert not np.array_equal(s.test_label, other.test_label)


def test_digits_upsampled_and_errors():
    s = datasets.load_digits(size=16)
    assert s.train_data.shape[1:] == (1, 16, 16)
    np.testing.assert_array_equal(s.train_data[:, :, ::2, ::2], datasets.load_digits().train_data)
    with pytest.raises(ValueError):
        datasets.load_digits(size=10)
    with pytest.raises(ValueError):
        datasets.load_digits(test_fraction=1.5)
