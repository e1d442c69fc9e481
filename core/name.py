"""``plexnet.name``: MXNet's ``mxnet.name`` module path (``from mxnet.name import ...``); the code
lives in ``plexnet.symbol.name``, and this module *is* that one."""
import sys

from .symbol import name as _impl

sys.modules[__name__] = _impl
