"""``plexnet.optimizer`` (``mx.optimizer``): optimizers, updaters and their registry.

``create(name, **kwargs)`` instantiates any registered optimizer: the built-ins (an
internal plugin, ``plexnet.optimizer.builtin``: ``sgd``, ``nag``, ``adam``, ``adagrad``,
``rmsprop``, and from ``more``: ``signum``, ``ftml``, ``ftrl``, ``lars``, ``lbsgd``, ``lamb``,
``dcasgd``, ``sgld``, ``ccsgd``, ``adamax``, ``nadam``, ``adadelta``, ``test``), those of
installed plugins (hook ``plexnet_register_optimizers``) and user classes decorated with
``@Optimizer.register``.

``plexnet.optimizer.kernels`` holds the update arithmetic (MXNet's fused optimizer
kernels written against ``xp``), shared by these classes and by the ``sgd_update``,
``adam_update``, ... operators of plexnet-ops-basic.
"""
from __future__ import annotations

from . import contrib, kernels
from .builtin import NAG, SGD, AdaGrad, Adam, RMSProp
from .more import DCASGD, FTML, LAMB, LARS, LBSGD, SGLD, AdaDelta, Adamax, Ftrl, Nadam, Signum, Test, ccSGD
from .optimizer import (Optimizer, Updater, create, from_config, get_updater, list_optimizers, lookup,
                        register)

__all__ = ["Optimizer", "Updater", "get_updater", "create", "register", "lookup", "list_optimizers",
           "from_config", "kernels", "contrib",
           "SGD", "NAG", "Adam", "AdaGrad", "RMSProp", "Signum", "FTML", "Ftrl", "LARS",
           "LBSGD", "LAMB", "DCASGD", "SGLD", "ccSGD", "Adamax", "Nadam", "AdaDelta", "Test", "NDabs"]


def NDabs(*args: object, **kwargs: object) -> object:  # noqa: N802 - MXNet exposes nd.abs under this name here
    """``mx.nd.abs`` (MXNet's optimizer module imports it as ``NDabs``)."""
    from .. import ndarray  # nd.abs: names the plugin to install when it is missing
    return ndarray.abs(*args, **kwargs)
