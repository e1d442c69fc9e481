"""Makes ops-basic's ``opcheck`` harness importable (``from opcheck import ...``): the
contrib tests drive operators through the same contract-level harness."""
from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "..", "ops-basic", "tests"))
