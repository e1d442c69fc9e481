"""plexnet-ops-torch tests: every case runs the torch implementation and ops-basic's
numpy (``xp``) implementation of the same operator on the same inputs and compares."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
