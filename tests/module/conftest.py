"""Fixtures of the Module tests: the digits data (or a synthetic stand-in when
scikit-learn is missing) and seeded random generators."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import plexnet as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from module_testlib import synthetic  # noqa: E402


@pytest.fixture(scope="session")
def digits():
    """(train_x, train_y, test_x, test_y): scikit-learn's digits, else separable blobs."""
    try:
        from plexnet import datasets
        s = datasets.load_digits(seed=0)
        return s.train_data, s.train_label, s.test_data, s.test_label
    except ImportError:
        x, y = synthetic(800)
        return x[:600], y[:600], x[600:], y[600:]


@pytest.fixture
def seeded():
    np.random.seed(7)
    mx.random.seed(7)
