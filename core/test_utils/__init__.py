"""``mx.test_utils``: the testing helpers of MXNet 1.9.1 that users' tests import.

* ``compare``: tolerances per dtype, ``assert_almost_equal`` (MXNet's semantics and
  message), ``almost_equal``, ``same``, ``assert_exception`` ...
* ``symbolic``: ``check_symbolic_forward/backward``, ``check_numeric_gradient``,
  ``numeric_grad``, ``check_consistency``, ``check_speed``, ``simple_forward``,
  ``compare_optimizer``;
* ``data``: random arrays and shapes, local data sets (no downloads), environment and
  stderr helpers, ``DummyIter``;
* ``stats``: checks of random generators (``verify_generator``, ``chi_square_check``).
"""
from __future__ import annotations

from .compare import *  # noqa: F401,F403
from .compare import __all__ as _c
from .data import *  # noqa: F401,F403
from .data import __all__ as _d
from ..context import current_context
from .gluon import check_gluon_hybridize_consistency
from .stats import *  # noqa: F401,F403
from .stats import __all__ as _s
from .symbolic import *  # noqa: F401,F403
from .symbolic import __all__ as _y

__all__ = _c + _d + _s + _y + ["current_context", "check_gluon_hybridize_consistency"]
