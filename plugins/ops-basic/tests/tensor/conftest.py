"""Tensor operator tests: make ``tensorref`` (shared references/helpers) importable."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
