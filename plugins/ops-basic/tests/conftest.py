"""Shared test configuration of plexnet-ops-basic: makes ``opcheck`` importable from
every test folder (``from opcheck import check_forward, ...``)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded numpy generator for test data."""
    return np.random.default_rng(0)
