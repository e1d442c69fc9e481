"""Shared test configuration of plexnet-ops-basic: makes ``opcheck`` importable from
every test folder (``from opcheck import check_forward, ...``).

With ``PLEXNET_OPCHECK_CTX=gpu(0)`` opcheck repeats every operator run on that context and
compares it with the CPU (see ``opcheck``'s docstring); tests that use NDArrays run with
that context as the default context. The summary says what was compared; with
``PLEXNET_OPCHECK_REPORT=path`` it is also written there as JSON (the GPU suite of
plexnet-device-cuda reads it)."""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Iterator

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import opcheck  # noqa: E402


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded numpy generator for test data."""
    return np.random.default_rng(0)


@pytest.fixture(autouse=True, scope="module")
def _test_the_xp_implementations() -> Iterator[None]:
    """These tests are about ops-basic's own (``xp``) implementations: where another
    installed plugin registers a CPU implementation at a higher priority (plexnet-ops-torch),
    ``xp`` is forced for each test module here (and released after it, so that other
    suites in the same session see the registry's own choice);
    ``PLEXNET_OPS_BASIC_TEST_IMPL=registry`` tests the registry's choice instead."""
    from plexnet.plugins import registries
    reg = registries().operators
    forced = []
    if os.environ.get("PLEXNET_OPS_BASIC_TEST_IMPL", "xp") == "xp":
        for name in reg.list_operators():
            impls = reg.implementations(name)
            if any(r.impl_name == "xp" for r in impls) and reg.forced_impl(name, "cpu") is None \
                    and reg.select_impl(name, "cpu").impl_name != "xp":
                reg.force_impl(name, "cpu", "xp")
                forced.append(name)
    yield
    for name in forced:
        reg.force_impl(name, "cpu", None)


@pytest.fixture(autouse=True)
def _opcheck_device_is_the_default_context() -> Iterator[None]:
    """Under ``PLEXNET_OPCHECK_CTX`` NDArray-level tests (``mx.nd.*``) run on that context."""
    if opcheck.DEVICE is None:
        yield
        return
    with opcheck.DEVICE:
        yield


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if opcheck.DEVICE is None:
        return
    rep = opcheck.MIRROR.as_dict()
    terminalreporter.write_line(
        f"opcheck on {rep['device']}: {rep['runs']} runs of {rep['operators']} operators compared with "
        f"{opcheck.CTX} ({rep['arrays']} arrays); not available there: "
        + (", ".join(f"{k} ({v})" for k, v in rep["unsupported"].items()) or "none"))
    path = os.environ.get("PLEXNET_OPCHECK_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(rep, f, indent=1)
