"""MXNet 1.x symbol JSON.

Format (what MXNet 1.9 writes and reads)::

    {"nodes": [{"op": "null", "name": "data", "inputs": []},
               {"op": "FullyConnected", "name": "fc1", "attrs": {"num_hidden": "128"},
                "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}, ...],
     "arg_nodes": [0, 1, 2, ...],          # every variable node
     "node_row_ptr": [0, 1, 2, 3, 4, ...],  # prefix sums of node output counts
     "heads": [[3, 0, 0]],
     "attrs": {"mxnet_version": ["int", 10901]}}

Inputs are ``[node, output, version]``; MXNet writes version 1 for inputs an operator
mutates (auxiliary states). Older files (MXNet < 0.9: ``param``/``attr`` keys, a
``backward_source_id``) load too. Operator parameters an operator here does not know are
dropped with a warning on load, so files from a newer MXNet still load.
"""
from __future__ import annotations

import json
import warnings
from typing import Any

from ..base import PlexnetError
from .node import Entry, Node, is_hidden, op_registry, topo_sort

__all__ = ["to_json", "from_json", "MXNET_VERSION"]

MXNET_VERSION = 10901


def to_json(sym: Any) -> str:
    nodes = topo_sort(sym._outputs)
    index = {id(n): i for i, n in enumerate(nodes)}
    jnodes = []
    row_ptr = [0]
    arg_nodes = []
    for i, n in enumerate(nodes):
        na = n.num_args() if n.op is not None else 0
        jn: dict[str, Any] = {"op": n.op if n.op is not None else "null", "name": n.name}
        if n.attrs:
            jn["attrs"] = dict(n.attrs)
        jn["inputs"] = [[index[id(e[0])], int(e[1]), 1 if k >= na else 0] for k, e in enumerate(n.inputs)]
        jnodes.append(jn)
        if n.op is None:
            arg_nodes.append(i)
        row_ptr.append(row_ptr[-1] + n.num_outputs())
    doc = {
        "nodes": jnodes,
        "arg_nodes": arg_nodes,
        "node_row_ptr": row_ptr,
        "heads": [[index[id(e[0])], int(e[1]), 0] for e in sym._outputs],
        "attrs": {"mxnet_version": ["int", MXNET_VERSION]},
    }
    return json.dumps(doc, indent=2)


def _node_attrs(jn: dict[str, Any], is_op: bool) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for key in ("param",):  # MXNet < 0.9: operator parameters
        for k, v in (jn.get(key) or {}).items():
            attrs[k] = str(v)
    for k, v in (jn.get("attr") or {}).items():  # MXNet < 1.0: user attributes
        attrs[k if (is_hidden(k) or not is_op) else f"__{k}__"] = str(v)
    for k, v in (jn.get("attrs") or {}).items():
        attrs[k] = str(v)
    return attrs


def _make_prop(op: str, name: str, attrs: dict[str, str]) -> Any:
    reg = op_registry()
    try:
        cls = reg.property_class(op)
    except Exception as e:
        raise PlexnetError(f"symbol JSON: node {name!r} uses operator {op!r}, which is not registered "
                           f"(is the plugin that provides it installed? `plexnet plugins` lists what is)") from e
    params = {k: v for k, v in attrs.items() if not is_hidden(k)}
    pcls = cls.param_cls
    if pcls is not None:
        extra = set(getattr(cls, "extra_kwargs", ()))
        unknown = [k for k in params if k not in pcls._fields and k not in extra]
        if unknown:
            warnings.warn(f"symbol JSON: node {name!r} ({op}): dropping parameter(s) {unknown} that this "
                          f"implementation of {op} does not know", RuntimeWarning, stacklevel=3)
            for k in unknown:
                del attrs[k]
                del params[k]
    return reg.create_property(op, params)


def from_json(text: str) -> Any:
    from .symbol import Symbol
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise PlexnetError(f"symbol JSON: not valid JSON: {e}") from None
    if not isinstance(doc, dict) or "nodes" not in doc or "heads" not in doc:
        raise PlexnetError("symbol JSON: expected an object with 'nodes' and 'heads'")
    nodes: list[Node] = []
    for i, jn in enumerate(doc["nodes"]):
        op = jn.get("op", "null")
        name = jn.get("name", f"node{i}")
        is_op = op not in ("null", None)
        attrs = _node_attrs(jn, is_op)
        inputs = []
        for inp in jn.get("inputs", []):
            src = int(inp[0])
            if src >= i:
                raise PlexnetError(f"symbol JSON: node {name!r} takes input from node {src}, which does not "
                                   f"come before it")
            inputs.append(Entry(nodes[src], int(inp[1]) if len(inp) > 1 else 0))
        if is_op:
            prop = _make_prop(op, name, attrs)
            nodes.append(Node(op, name, attrs, inputs, prop))
        else:
            nodes.append(Node(None, name, attrs, []))
    heads = [Entry(nodes[int(h[0])], int(h[1]) if len(h) > 1 else 0) for h in doc["heads"]]
    for n in nodes:
        if n.op is not None:
            need = len(n.prop.list_arguments()) + len(n.prop.list_auxiliary_states())
            if len(n.inputs) != need:
                raise PlexnetError(f"symbol JSON: node {n.name!r} ({n.op}) has {len(n.inputs)} inputs, the "
                                   f"operator takes {need} ({', '.join(n.prop.list_arguments() + n.prop.list_auxiliary_states())})")
    return Symbol(heads)
