"""Fixtures shared by the core test packages (resource, storage, ...)."""
from __future__ import annotations

from typing import Iterator

import pytest

import plexnet.engine as engine_mod
from plexnet.engine import ENGINE_TYPES


def _available_engine_kinds() -> list[str]:
    return list(engine_mod._engine_types())


@pytest.fixture(params=ENGINE_TYPES)
def engine_kind(request: pytest.FixtureRequest) -> Iterator[engine_mod.Engine]:
    """Each engine type in turn as the process-wide engine (skipped where not built);
    the previous engine type is restored afterwards."""
    kind = request.param
    if kind not in _available_engine_kinds():
        pytest.skip(f"{kind} is not available in this build")
    old_kind = engine_mod.get().kind
    eng = engine_mod.set_engine(kind)
    try:
        yield eng
    finally:
        engine_mod.set_engine(old_kind)
