"""What a freshly built model-zoo network must share with MXNet 1.9.1's, recorded by
the fixture generator (with mxnet) and checked by the tests (with plexnet): the full
parameter names in `collect_params()` order with their declared shapes (before any
inference), initializers, grad_req and dtype, and the graph traced from a Symbol
input (operators, node names, inputs, attributes)."""
from __future__ import annotations

import inspect
import json
from typing import Any


def _strip(name: str, prefix: str) -> str:
    return name[len(prefix):] if name.startswith(prefix) else name


def _init(init: Any) -> str | None:
    if init is None or isinstance(init, str):
        return init
    return init.dumps()


def structure(net: Any, mx: Any) -> dict:
    """The network's structure with its own prefix removed from every name."""
    pre = net.prefix
    params = net.collect_params()
    graph = json.loads(net(mx.sym.var("data")).tojson())
    nodes = []
    for node in graph["nodes"]:
        attrs = dict(node.get("attrs", {}))
        attrs.pop("__storage_type__", None)    # plexnet has dense storage only
        nodes.append([node["op"], _strip(node["name"], pre), [i[0] for i in node["inputs"]], attrs])
    return {
        "params": [[_strip(k, pre), list(p.shape), _init(p.init), p.grad_req, str(p.dtype)]
                   for k, p in params.items()],
        "nodes": nodes,
        "heads": [h[0] for h in graph["heads"]],
    }


def signatures(vision: Any, names: list[str] | None = None) -> dict:
    """Parameter names, kinds and defaults of ``names`` (default: every public callable)
    of ``vision``; ``root``'s default depends on $MXNET_HOME and is left out."""
    if names is None:
        names = [n for n in dir(vision) if not n.startswith("_") and callable(getattr(vision, n))]
    out = {}
    for name in sorted(names):
        obj = getattr(vision, name)
        sig = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
        out[name] = [[p.name, p.kind.name, None if p.name == "root" or p.default is p.empty else repr(p.default)]
                     for p in sig.parameters.values()]
    return out
