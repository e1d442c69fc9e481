"""Fixtures for the dependency-engine tests: a fresh engine of every kind."""
from __future__ import annotations

from collections.abc import Iterator

import plexnet.engine as engine_mod
import pytest
from plexnet.engine import ENGINE_TYPES, EngineOpError

THREADED = ("ThreadedEngine", "ThreadedEnginePerDevice")


def make_engine(kind: str) -> engine_mod.Engine:
    if kind not in engine_mod._engine_types():
        pytest.skip(f"{kind} is not available in this build")
    return engine_mod.create(kind)


def close_engine(eng: engine_mod.Engine) -> None:
    try:
        eng.wait_for_all()
    except EngineOpError:
        pass
    eng.shutdown()


@pytest.fixture
def new_engine() -> Iterator:
    """A factory ``new_engine(kind, **kw)`` whose engines are shut down afterwards."""
    made: list = []

    def make(kind: str, **kw: object) -> engine_mod.Engine:
        e = make_engine(kind) if not kw else engine_mod._engine_types()[kind](**kw)
        made.append(e)
        return e
    try:
        yield make
    finally:
        for e in made:
            close_engine(e)


@pytest.fixture(params=ENGINE_TYPES)
def eng(request: pytest.FixtureRequest) -> Iterator[engine_mod.Engine]:
    """A fresh engine of each kind (not the process-wide one), shut down afterwards."""
    e = make_engine(request.param)
    try:
        yield e
    finally:
        close_engine(e)


@pytest.fixture(params=THREADED)
def teng(request: pytest.FixtureRequest) -> Iterator[engine_mod.Engine]:
    """A fresh threaded engine of each kind."""
    e = make_engine(request.param)
    try:
        yield e
    finally:
        close_engine(e)
