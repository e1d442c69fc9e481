"""Fixtures shared by the core test packages (resource, storage, ...)."""
from __future__ import annotations

from typing import Iterator

import pytest

import plexnet.engine as engine_mod
from plexnet.engine import ENGINE_TYPES
# with the core installed alone, tests that only lack an operator plugin are skipped
from plexnet.testing.core_alone import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401


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
