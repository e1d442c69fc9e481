"""The operator test harness now ships with plexnet as ``plexnet.testing`` (see its
docstring); this name stays for the existing tests: ``import opcheck`` is that module."""
import sys

from plexnet.testing import opcheck as _harness

sys.modules[__name__] = _harness
