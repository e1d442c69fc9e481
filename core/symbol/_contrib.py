"""MXNet's Python-level ``sym.contrib`` functions (the operators of the namespace come
from ``_contrib_*`` registrations, e.g. the ``plexnet-ops-contrib`` plugin):
``AttrScope`` (re-exported, as MXNet's module does), ``uniform`` (``sym.random.uniform``),
``rand_zipfian`` (log-uniform candidate sampling as a graph), the AdamW update
wrappers and the control flow ``foreach``, ``while_loop``, ``cond`` (operators
``_foreach``/``_while_loop``/``_cond`` of plexnet-ops-contrib, each holding its
subgraphs; see ``_control_flow``).

The CSR graph operators (``getnnz``, ``edge_id``, ``dgl_*``) take CSR storage inputs;
plexnet has them as NDArray functions (``nd.contrib``), not as registered operators a graph
can hold, so their ``sym.contrib`` names exist but raise ``NotImplementedForSymbol`` naming
the operator and pointing to ``nd.contrib``."""
from __future__ import annotations

import math
from typing import Any

from ._control_flow import cond, foreach, while_loop
from ..base import NotImplementedForSymbol
from .attribute import AttrScope
from .symbol import Symbol

#: MXNet's CSR-only graph operators (nd.contrib has them: plexnet.ndarray.sparse.graph)
_CSR_ONLY = ("getnnz", "edge_id", "dgl_adjacency", "dgl_subgraph", "dgl_csr_neighbor_uniform_sample",
             "dgl_csr_neighbor_non_uniform_sample", "dgl_graph_compact")

__all__ = ["AttrScope", "uniform", "rand_zipfian", "adamw_update", "mp_adamw_update", "foreach", "while_loop",
           "cond", *_CSR_ONLY]


def uniform(*args: Any, **kwargs: Any) -> Symbol:
    """``sym.random.uniform`` (MXNet's ``sym.contrib.uniform`` is the same function)."""
    from . import random as _random
    return _random.uniform(*args, **kwargs)


def rand_zipfian(true_classes: Symbol, num_sampled: int, range_max: int) -> tuple[Symbol, Symbol, Symbol]:
    """Symbols of ``num_sampled`` classes drawn from the log-uniform (Zipfian) distribution
    over ``[0, range_max)`` (int64) and the expected counts of ``true_classes`` and of the
    sampled classes (see ``nd.contrib.rand_zipfian``)."""
    if not isinstance(true_classes, Symbol):
        raise TypeError(f"rand_zipfian: true_classes must be a Symbol, got {type(true_classes).__name__}")
    log_range = math.log(range_max + 1)
    draws = uniform(0, log_range, shape=(num_sampled,), dtype="float64")
    sampled = (draws.exp() - 1).astype("int64") % range_max
    true_f = true_classes.astype("float64")
    count_true = ((true_f + 2.0) / (true_f + 1.0)).log() / log_range * num_sampled
    sampled_f = sampled.astype("float64")
    count_sampled = ((sampled_f + 2.0) / (sampled_f + 1.0)).log() / log_range * num_sampled
    return sampled, count_true, count_sampled


def _op(name: str) -> Any:
    from . import op_function
    fn = op_function(name)
    if fn is None:
        raise AttributeError(f"sym.contrib: operator {name!r} is not registered (install plexnet-ops-contrib)")
    return fn


def adamw_update(weight: Symbol, grad: Symbol, mean: Symbol, var: Symbol, rescale_grad: Symbol, lr: float,
                 eta: float, **kwargs: Any) -> Symbol:
    """One AdamW step (operator ``_adamw_update``; see ``nd.contrib.adamw_update``)."""
    return _op("_adamw_update")(weight=weight, grad=grad, mean=mean, var=var, rescale_grad=rescale_grad, lr=lr,
                                eta=eta, **kwargs)


def mp_adamw_update(weight: Symbol, grad: Symbol, mean: Symbol, var: Symbol, weight32: Symbol, rescale_grad: Symbol,
                    lr: float, eta: float, **kwargs: Any) -> Symbol:
    """One multi-precision AdamW step (operator ``_mp_adamw_update``)."""
    return _op("_mp_adamw_update")(weight=weight, grad=grad, mean=mean, var=var, weight32=weight32,
                                   rescale_grad=rescale_grad, lr=lr, eta=eta, **kwargs)


class CSRSymbolError(NotImplementedForSymbol):
    """A CSR graph operator asked for as a Symbol (plexnet has it as an NDArray function only)."""

    def __str__(self) -> str:
        return (f"sym.contrib.{self.function} (operator \"_contrib_{self.function}\") is an NDArray function in "
                f"plexnet, not an operator a symbol can hold; call mx.nd.contrib.{self.function} "
                f"on CSRNDArrays instead")


def _csr_only(name: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Symbol:
        raise CSRSymbolError(fn, f"_contrib_{name}", *args)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"MXNet's ``sym.contrib.{name}`` takes CSR storage inputs; plexnet has it as an NDArray "
                  f"function only, so this raises ``NotImplementedForSymbol``: use ``nd.contrib.{name}`` "
                  f"(docs/sparse.md).")
    return fn


for _name in _CSR_ONLY:
    globals()[_name] = _csr_only(_name)
del _name
