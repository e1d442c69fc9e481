"""Common subexpression elimination on a symbol graph, as MXNet 1.9.1's
``EliminateCommonExpr`` pass (``MXNET_ELIMINATE_COMMON_EXPR``): what
``Executor.get_optimized_symbol()`` reports.

Two operator nodes merge when they apply the same operator with the same attributes to the
same inputs and the operator is deterministic and pure: no random or temporary resource,
no auxiliary states (they mutate inputs), no subgraphs. MXNet decides eligibility from
registered attributes (FResourceRequest, FMutateInputs, FCreateOpState); plexnet asks the
operator's property, so a few operators MXNet keeps apart (FullyConnected and reductions
request temp space there) merge here; values are the same either way.
Outputs that end up as the same entry get a ``_copy`` node each after the first, as MXNet.
"""
from __future__ import annotations

from typing import Any

from .node import Entry, Node
from .symbol import Symbol, create

__all__ = ["eliminate_common_expr"]


def _eligible(n: Node) -> bool:
    if n.op is None or n.subgraphs:
        return False
    try:
        prop = n.prop
        if prop.list_auxiliary_states():
            return False
        nargs = len(prop.list_arguments())
        return not prop.forward_resource([None] * nargs) and not prop.backward_resource([None] * nargs)
    except Exception:  # an operator that cannot answer without shapes: keep it apart
        return False


def eliminate_common_expr(sym: Symbol) -> Symbol:
    """A copy of ``sym`` with identical pure operator applications merged."""
    s = sym._deepcopy()
    canon: dict[Any, Node] = {}
    repl: dict[int, Node] = {}
    for n in s._topo():
        n.inputs = [Entry(repl.get(id(e[0]), e[0]), e[1]) for e in n.inputs]
        if not _eligible(n):
            continue
        key = (n.op, tuple(sorted(n.attrs.items())), tuple((id(e[0]), e[1]) for e in n.inputs))
        other = canon.setdefault(key, n)
        if other is not n:
            repl[id(n)] = other
    outs: list[Entry] = []
    seen: set[tuple[int, int]] = set()
    for e in s._outputs:
        e = Entry(repl.get(id(e[0]), e[0]), e[1])
        k = (id(e[0]), e[1])
        if k in seen:  # the same entry twice: MXNet isolates each further output with a copy
            e = create("_copy", [Symbol([e])], {"name": f"{e[0].name}_{e[1]}_copy"})._outputs[0]
        seen.add(k)
        outs.append(e)
    return Symbol(outs)
