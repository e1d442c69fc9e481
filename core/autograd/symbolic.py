"""``autograd.get_symbol``: the recorded computation of an array as a Symbol."""
from __future__ import annotations

from typing import Any

from ..base import PlexnetError
from ..symbol.node import Entry, Node, param_string, topo_sort
from ..symbol.symbol import Symbol
from ..tape import Leaf, OpNode, SimpleNode
from .backward import _check_heads, _topo

__all__ = ["get_symbol"]


def get_symbol(x: Any) -> Any:
    """The Symbol that computes ``x`` from its variables (named ``var0``, ``var1`` ...
    in order of first use) and constants (``const0`` ...)."""
    _check_heads([x])
    if isinstance(x._ag[0], Leaf):
        return Symbol([Entry(Node(None, "var0"), 0)])
    order = _topo([x])
    made: dict[int, Any] = {}  # tape node -> Node, or an inlined graph's output entries
    leaves: dict[int, Entry] = {}
    counts = {"var": 0, "const": 0}

    def var_for(arr: Any) -> Entry:
        ag = arr._ag
        key = id(ag[0]) if ag is not None else id(arr._chunk)
        e = leaves.get(key)
        if e is None:
            kind = "var" if ag is not None else "const"
            e = leaves[key] = Entry(Node(None, f"{kind}{counts[kind]}"), 0)
            counts[kind] += 1
        return e

    for k, node in enumerate(order):
        ins = []
        for a in node.inputs:
            ag = a._ag
            if ag is not None and not isinstance(ag[0], Leaf) and id(ag[0]) in made:
                m = made[id(ag[0])]
                ins.append(m[ag[1]] if isinstance(m, list) else Entry(m, ag[1]))
            else:
                ins.append(var_for(a))
        if isinstance(node, OpNode):
            op, attrs = node.prop.op_name, {k2: param_string(v) for k2, v in node.prop.get_params().items()}
        elif isinstance(node, SimpleNode):
            op = node.sop.name
            attrs = {"scalar": param_string(node.env.scalar)} if node.sop.enable_scalar else {}
        elif getattr(node, "bound", None) is not None:  # a hybridized call (gluon's CachedNode)
            made[id(node)] = _inline(node, ins, var_for, Entry, Node, topo_sort, k)
            continue
        else:
            raise PlexnetError(f"get_symbol: the graph contains {node.name!r}, which has no operator form")
        made[id(node)] = Node(op, f"{op.lower()}{k}", attrs, ins)
    root, idx = x._ag
    made_root = made[id(root)]
    if isinstance(made_root, list):  # an inlined graph: its outputs
        return Symbol([made_root[idx]])
    return Symbol([Entry(made_root, idx)])


def _inline(node: Any, ins: list, var_for: Any, Entry: Any, Node: Any, topo_sort: Any, k: int) -> list:
    """The entries of a hybridized call's graph, copied with its variables replaced by the
    recorded inputs (matched through the executor's gradient arrays) or new constants."""
    exe = node.bound.exe
    by_grad = {id(g): e for g, e in zip(node.grads, ins) if g is not None}
    names = list(exe._arg_names) + list(exe._aux_names)
    arrays = list(exe.arg_arrays) + list(exe.aux_arrays)
    grads = list(node.bound.grad_of) + [None] * len(exe.aux_arrays)
    var_map = {}
    for name, arr, g in zip(names, arrays, grads):
        e = by_grad.get(id(g)) if g is not None else None
        var_map[name] = e if e is not None else var_for(arr)
    copies: dict[int, Any] = {}
    outs = exe._symbol._outputs
    for n in topo_sort(outs):
        if n.op is None:
            copies[id(n)] = var_map[n.name]
            continue
        new_ins = [copies[id(e[0])] if e[0].op is None else Entry(copies[id(e[0])], e[1]) for e in n.inputs]
        copies[id(n)] = Node(n.op, f"{n.name}_{k}", dict(n.attrs), new_ins, subgraphs=n.subgraphs)
    return [copies[id(e[0])] if e[0].op is None else Entry(copies[id(e[0])], e[1]) for e in outs]
