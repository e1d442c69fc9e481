"""``autograd.get_symbol``: the recorded computation of an array as a Symbol."""
from __future__ import annotations

from typing import Any

from ..base import PlexnetError
from .tape import Leaf, OpNode, SimpleNode

__all__ = ["get_symbol"]


def get_symbol(x: Any) -> Any:
    """The Symbol that computes ``x`` from its variables (named ``var0``, ``var1`` ...
    in order of first use) and constants (``const0`` ...)."""
    from ..symbol.node import Entry, Node, param_string
    from ..symbol.symbol import Symbol
    from .backward import _check_heads, _topo
    _check_heads([x])
    if isinstance(x._ag[0], Leaf):
        return Symbol([Entry(Node(None, "var0"), 0)])
    order = _topo([x])
    made: dict[int, Node] = {}
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
                ins.append(Entry(made[id(ag[0])], ag[1]))
            else:
                ins.append(var_for(a))
        if isinstance(node, OpNode):
            op, attrs = node.prop.op_name, {k2: param_string(v) for k2, v in node.prop.get_params().items()}
        elif isinstance(node, SimpleNode):
            op = node.sop.name
            attrs = {"scalar": param_string(node.env.scalar)} if node.sop.enable_scalar else {}
        else:
            raise PlexnetError(f"get_symbol: the graph contains {node.name!r}, which has no operator form")
        made[id(node)] = Node(op, f"{op.lower()}{k}", attrs, ins)
    root, idx = x._ag
    return Symbol([Entry(made[id(root)], idx)])
