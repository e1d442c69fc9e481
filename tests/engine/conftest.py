"""Fixtures for the dependency-engine tests: a fresh engine of every kind."""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator

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


def _fresh(kind: str) -> Iterator[engine_mod.Engine]:
    e = make_engine(kind)
    try:
        yield e
    finally:
        close_engine(e)


@pytest.fixture(params=ENGINE_TYPES)
def eng(request: pytest.FixtureRequest) -> Iterator[engine_mod.Engine]:
    """A fresh engine of each kind (not the process-wide one), shut down afterwards."""
    yield from _fresh(request.param)


@pytest.fixture(params=THREADED)
def teng(request: pytest.FixtureRequest) -> Iterator[engine_mod.Engine]:
    """A fresh threaded engine of each kind."""
    yield from _fresh(request.param)


class Helper:
    """A thread that completes asynchronous operations (``helper.q.put(job)``)."""

    def __init__(self) -> None:
        self.q: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self) -> None:
        while True:
            job = self.q.get()
            if job is None:
                return
            job()

    def close(self) -> None:
        self.q.put(None)
        self.t.join(10)


@pytest.fixture(scope="module")
def helper() -> Iterator[Helper]:
    """A helper thread shared by a test module's asynchronous operations."""
    h = Helper()
    yield h
    h.close()
