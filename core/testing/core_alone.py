"""pytest hooks for a test suite that must also run with the core installed alone.

With no operator plugin installed (``plexnet-ops-basic`` absent), a test that fails only
because an operator is missing -- an ``OperatorNotFound``, or the ``mx.nd.X needs an
operator plugin`` error, anywhere in the exception chain -- is reported as *skipped*,
with the distribution to install as the reason; every other failure stays a failure.
With ops-basic installed the hooks change nothing. Use them from a ``conftest.py``::

    from plexnet.testing.core_alone import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401

(``pytest_make_collect_report`` covers test modules that call an operator at import.)
"""
from __future__ import annotations

import importlib.util
from collections.abc import Generator
from typing import Any

import pytest

from ..operator.hints import DEFAULT_DISTRIBUTION
from ..operator.registry import OperatorNotFound

__all__ = ["CORE_ALONE", "missing_operator", "pytest_runtest_makereport", "pytest_make_collect_report"]

#: no standard operator plugin is importable here
CORE_ALONE = importlib.util.find_spec("plexnet_ops_basic") is None

_MARKERS = ("needs an operator plugin", "no operator plugin is installed")


def missing_operator(exc: BaseException | None) -> str | None:
    """The message if ``exc`` (or an exception it was raised from) is a missing operator."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        msg = str(exc)
        if isinstance(exc, OperatorNotFound) or any(m in msg for m in _MARKERS):
            return msg.splitlines()[0] if msg else type(exc).__name__
        exc = exc.__cause__ or exc.__context__
    return None


def _reason(msg: str) -> str:
    return f"needs an operator plugin (pip install {DEFAULT_DISTRIBUTION}): {msg}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
    outcome = yield
    rep = outcome.get_result()
    if not CORE_ALONE or not rep.failed or call.excinfo is None:
        return
    msg = missing_operator(call.excinfo.value)
    if msg is not None:
        rep.outcome = "skipped"
        rep.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {_reason(msg)}")
        _drain_engine()


def _drain_engine() -> None:
    """A test stopped half-way may have pushed work that fails later (its inputs were
    never made): wait for it here so that its error is not raised in another test."""
    from .. import engine
    try:
        engine.get().wait_for_all()
    except Exception:  # noqa: BLE001 - the skipped test's own follow-up errors
        pass


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    outcome = yield
    rep = outcome.get_result()
    if not CORE_ALONE or not rep.failed:
        return
    text = str(rep.longrepr)
    msg = next((line.strip() for line in text.splitlines()
                if any(m in line for m in _MARKERS) or "OperatorNotFound" in line), None)
    if msg is not None:
        rep.outcome = "skipped"
        rep.longrepr = (str(collector.path), 0, f"Skipped: {_reason(msg)}")

