"""``mx.contrib.svrg_optimization``: stochastic variance-reduced gradient training for the
Module API (``svrg_module.SVRGModule`` and its optimizer ``svrg_optimizer._SVRGOptimizer``)."""
from . import svrg_module, svrg_optimizer

__all__ = ["svrg_module", "svrg_optimizer"]
