"""Symbol tests: the toy operators of ``tests/executor/toy_ops.py`` are registered so
the tests do not depend on plexnet-ops-basic (integration tests that do skip when an
operator is missing)."""
from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(_HERE), "executor"))

import toy_ops  # noqa: E402

toy_ops.register()

