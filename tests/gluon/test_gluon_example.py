"""examples/gluon_mnist.py trains a hybridized LeNet on the demo's digits."""
from __future__ import annotations

import importlib.util
import os

import pytest

pytest.importorskip("sklearn")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _example():
    spec = importlib.util.spec_from_file_location("gluon_mnist", os.path.join(ROOT, "examples", "gluon_mnist.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_gluon_mnist_learns() -> None:
    r = _example().run(epochs=3, verbose=False)
    assert r["hybridized"] and r["test_accuracy"] > 0.9
