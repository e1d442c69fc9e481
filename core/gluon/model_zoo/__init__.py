"""``gluon.model_zoo``: predefined vision models (MXNet 1.x ``mxnet.gluon.model_zoo``).

The architectures are MXNet 1.9.1's (ported from its Apache-2.0 sources) so that
parameter names and shapes match and MXNet-saved parameter files load.
"""
from . import model_store, vision

__all__ = ["model_store", "vision"]
