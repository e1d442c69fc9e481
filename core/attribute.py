"""``plexnet.attribute``: MXNet's ``mxnet.attribute`` module path (``from mxnet.attribute import ...``); the code
lives in ``plexnet.symbol.attribute``, and this module *is* that one."""
import sys

from .symbol import attribute as _impl

sys.modules[__name__] = _impl
