"""plexnet-ops-torch tests: every case runs the torch implementation and ops-basic's
numpy (``xp``) implementation of the same operator on the same inputs and compares.
Skipped where torch or the plugin is not installed."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("plexnet_ops_torch")
