"""``gluon.model_zoo``: predefined vision models (MXNet 1.x ``mxnet.gluon.model_zoo``).

The networks are built as MXNet 1.9.1 builds them (same layers, creation order and
prefixes), so parameter names and shapes match and MXNet-saved parameter files load.
"""
from . import model_store, vision

__all__ = ["model_store", "vision"]
