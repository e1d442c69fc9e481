"""plexnet-ops-torch tests: every case runs the torch implementation and ops-basic's
numpy (``xp``) implementation of the same operator on the same inputs and compares.
Skipped where torch or the plugin is not installed."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("plexnet_ops_torch")


@pytest.fixture(autouse=True)
def _torch_for_every_size(monkeypatch):
    """The cases are small: make torch take them (production skips calls below
    ``MIN_ELEMENTS``; tests/test_ops_torch.py checks that gate separately)."""
    from plexnet_ops_torch import _base
    monkeypatch.setattr(_base, "MIN_ELEMENTS", 0)
