"""``mx.test_utils``: the testing helpers of MXNet 1.9.1 that users' tests import.

* ``compare``: tolerances per dtype, ``assert_almost_equal`` (MXNet's semantics and
  message), ``almost_equal``, ``same``, ``assert_exception`` ...
* ``symbolic``: ``check_symbolic_forward/backward``, ``check_numeric_gradient``,
  ``numeric_grad``, ``check_consistency``, ``check_speed``, ``simple_forward``,
  ``compare_optimizer``;
* ``data``: random arrays and shapes, local data sets (no downloads), environment and
  stderr helpers, ``DummyIter``;
* ``sparse_data``: random CSR / row_sparse arrays (``rand_sparse_ndarray`` ...);
* ``stats``: checks of random generators (``verify_generator``, ``chi_square_check``).
"""
from __future__ import annotations

from .compare import *  # noqa: F401,F403
from .compare import __all__ as _c
from .data import *  # noqa: F401,F403
from .data import __all__ as _d
from .sparse_data import *  # noqa: F401,F403
from .sparse_data import __all__ as _sp
from ..context import current_context
from .gluon import check_gluon_hybridize_consistency
from .stats import *  # noqa: F401,F403
from .stats import __all__ as _s
from .symbolic import *  # noqa: F401,F403
from .symbolic import __all__ as _y

# MXNet's test_utils has no __all__, so MXNet's tests rely on ``from mxnet.test_utils import *``
# also bringing ``np``, ``mx`` and a few standard modules; keep those names exported.
import bz2, errno, gzip, json, logging, numbers, os, platform, struct, sys, time, traceback, zipfile  # noqa: E401,E402
from collections import OrderedDict  # noqa: E402
from contextlib import contextmanager  # noqa: E402

import numpy as np  # noqa: E402
import numpy.random as rnd  # noqa: E402
import numpy.testing as npt  # noqa: E402

import plexnet as mx  # noqa: E402
from ..context import Context  # noqa: E402
from ..symbol import Symbol  # noqa: E402

__all__ = _c + _d + _sp + _s + _y + ["current_context", "check_gluon_hybridize_consistency"]
__all__ += ["bz2", "errno", "gzip", "json", "logging", "numbers", "os", "platform", "struct", "sys", "time",
            "traceback", "zipfile", "OrderedDict", "contextmanager", "np", "rnd", "npt", "mx", "Context", "Symbol"]
