"""Shared fixtures of the plexnet.io / plexnet.recordio tests.

The files under ``fixtures/`` were written by Apache MXNet 1.9.1 (see
``fixtures/make_fixtures.py``); the ``*_expected.*`` files hold what MXNet returned.
"""
from __future__ import annotations

import json
import os
import threading
import time

import numpy as np
import pytest

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
#: a Python with Apache MXNet installed, for the cross-checks (skipped when absent)
MXNET_PYTHON = os.environ.get("PLEXNET_MXNET_PYTHON", "/work/mxvenv/bin/python")


@pytest.fixture(scope="session")
def fixtures_dir() -> str:
    return FIXTURES


@pytest.fixture(scope="session")
def iters_expected() -> dict:
    with open(os.path.join(FIXTURES, "iters_expected.json")) as f:
        return json.load(f)


@pytest.fixture(scope="session")
def mxnet_python() -> str:
    """Path of a Python with MXNet; skips the test when there is none."""
    if not os.path.exists(MXNET_PYTHON):
        pytest.skip(f"no MXNet venv at {MXNET_PYTHON} (set PLEXNET_MXNET_PYTHON)")
    return MXNET_PYTHON


def _io_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("plexnet-io")}


@pytest.fixture
def no_leaked_threads():
    """Fails the test if plexnet.io threads started during it are still alive after it."""
    before = _io_threads()
    yield
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = _io_threads() - before
        if not left:
            return
        time.sleep(0.02)
    pytest.fail(f"leaked threads: {sorted(t.name for t in left)}")


def batches(it, epochs: int = 1):
    """[[{'data': [np...], 'label': [np...], 'pad', 'index'}]] over ``epochs`` epochs (reset after each)."""
    out = []
    for _ in range(epochs):
        ep = []
        for b in it:
            ep.append({"data": [d.asnumpy() for d in b.data],
                       "label": [lab.asnumpy() for lab in (b.label or [])],
                       "pad": b.pad,
                       "index": None if b.index is None else np.asarray(b.index).tolist()})
        out.append(ep)
        it.reset()
    return out


@pytest.fixture
def collect():
    return batches
