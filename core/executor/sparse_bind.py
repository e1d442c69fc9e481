"""``simple_bind`` with storage types: ``stype_dict`` and ``Variable(stype=)`` (MXNet's
``__storage_type__``) choose the arguments' storage types, MXNet's backward rules the
gradients' (``sparse.grad_stypes``)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..context import Context
from ..operator.contract import OpReqType
from .sparse import check_stype, grad_stypes, make_array, var_stype, wants_sparse

__all__ = ["sparse_simple_bind"]


def sparse_simple_bind(dense_cls: Any, symbol: Any, ctx: Context, g: Any, shapes: Sequence[Any],
                       types: Sequence[Any], reqs: Sequence[OpReqType], stype_dict: dict | None,
                       group2ctx: Any) -> Any:
    """A ``SparseExecutor`` when the storage types ask for one, else ``None`` (the dense
    executor binds as before)."""
    names = [g.nodes[nid].name for nid in g.arg_nids]
    sd = dict(stype_dict or {})
    inputs = set(names) | set(g.aux_names())
    for k in sd:
        if k not in inputs:
            raise ValueError(f"simple_bind: stype_dict key {k!r} is not an input of the symbol")
    arg_st = [check_stype(sd[n], f"simple_bind: stype_dict[{n!r}]") if n in sd else var_stype(g.nodes[nid])
              for n, nid in zip(names, g.arg_nids)]
    if not wants_sparse(g, arg_st):
        return None
    grad_st = grad_stypes(g, arg_st)

    def shape_type(nid: int) -> tuple[tuple, Any]:
        e = g.row_ptr[nid]
        return tuple(shapes[e]), types[e] if types[e] is not None else np.dtype(np.float32)

    args, grads = [], []
    for nid, s, gs, r in zip(g.arg_nids, arg_st, grad_st, reqs):
        shape, dt = shape_type(nid)
        args.append(make_array(s, shape, ctx, dt))
        grads.append(make_array(gs, shape, ctx, dt) if r != OpReqType.null else None)
    aux = [make_array("default", *shape_type(nid)[:1], ctx, shape_type(nid)[1]) for nid in g.aux_nids]
    from .sparse_exec import SparseExecutor
    return SparseExecutor(dense_cls, symbol, ctx, g, args, grads, reqs, aux, group2ctx)
