"""Repository-wide pytest settings (applies to tests/, plugins/ and examples/).

Property tests: with ``CI`` set (``.ci/run`` sets it) Hypothesis runs derandomized, so a CI
run is reproducible and a float-rounding edge found once does not turn a later run red at
random; locally the examples stay random, which is where new edges get found.
"""
from __future__ import annotations

import os

try:
    from hypothesis import settings
except ImportError:  # the core installed without the test extra
    pass
else:
    settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
    if os.environ.get("CI"):
        settings.load_profile("ci")
