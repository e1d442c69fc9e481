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


# the tests use small arrays: run the kernels on them (production skips arrays below
# ``_base.MIN_ELEMENTS``, which ``test_small_calls_skip_numba`` checks); a module-level
# setting, not a fixture, because hypothesis refuses function-scoped fixtures
from plexnet_ops_numba import _base  # noqa: E402

_base.MIN_ELEMENTS = 0
