"""plexnet-ops-numba tests: each case runs the numba implementation and ops-basic's numpy
(``xp``) implementation of the same operator on the same inputs and compares them.
Skipped where numba or the plugin is not installed."""
from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("numba")
pytest.importorskip("plexnet_ops_numba")

sys.path.insert(0, os.path.dirname(__file__))
