"""``mx.sym.sparse`` (``mx.symbol.sparse``): MXNet 1.9.1's 72 sparse symbol functions.

Each builds the same graph node as MXNet's: the dense operator (``sym.sparse.dot`` is a
``dot`` node, ``sym.sparse.ElementWiseSum`` an ``add_n`` one, named ``elementwisesum0``),
except ``retain`` and ``adagrad_update``, which exist only here (operators
``_sparse_retain`` and ``_sparse_adagrad_update``, ``sparse_ops.py``). What makes a graph
sparse is the storage type of the arrays bound to it (``Variable(stype=)``,
``simple_bind(stype_dict=)``, ``bind`` with CSR/row_sparse arrays): the executor then runs
the sparse kernels (``plexnet.executor.sparse``; docs/sparse.md, "Symbolic sparse storage").
"""
from __future__ import annotations

from typing import Any as _Any, Callable as _Callable

from .symbol import Symbol as _Symbol, create as _create

#: exposed name -> registered operator (MXNet's op in the node; ``None``: the same name)
SPARSE_FUNCTIONS: dict[str, str | None] = {n: None for n in (
    "ElementWiseSum Embedding FullyConnected LinearRegressionOutput LogisticRegressionOutput MAERegressionOutput "
    "abs adam_update add_n arccos arccosh arcsin arcsinh arctan arctanh broadcast_add broadcast_div "
    "broadcast_minus broadcast_mul broadcast_plus broadcast_sub cast_storage cbrt ceil clip concat cos cosh "
    "degrees dot elemwise_add elemwise_div elemwise_mul elemwise_sub exp expm1 fix floor ftrl_update gamma "
    "gammaln log log10 log1p log2 make_loss mean negative norm radians relu rint round rsqrt sgd_mom_update "
    "sgd_update sigmoid sign sin sinh slice sqrt square stop_gradient sum tan tanh trunc where zeros_like"
).split()}
SPARSE_FUNCTIONS.update({"retain": "_sparse_retain", "adagrad_update": "_sparse_adagrad_update"})

__all__ = sorted(SPARSE_FUNCTIONS)


def _make(exposed: str, op: str) -> _Callable[..., _Symbol]:
    hint = exposed.lower()

    def fn(*args: _Any, **kwargs: _Any) -> _Symbol:
        return _create(op, args, kwargs, hint=hint)
    fn.__name__ = fn.__qualname__ = exposed
    fn.__doc__ = (f"``sym.sparse.{exposed}``: the ``{op}`` operator (symbolic); sparse kernels run when "
                  f"the bound arrays are sparse (docs/sparse.md).")
    return fn


for _name, _op in SPARSE_FUNCTIONS.items():
    globals()[_name] = _make(_name, _op or _name)
del _name, _op


def __dir__() -> list[str]:
    return list(__all__)
