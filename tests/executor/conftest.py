"""Executor tests: register the toy operators (``toy_ops.py``) and make the helpers in
this folder importable."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import toy_ops  # noqa: E402

toy_ops.register()


@pytest.fixture
def rng() -> np.random.RandomState:
    return np.random.RandomState(0)
