"""MXNet 1.x symbol JSON.

Format (what MXNet 1.9 writes and reads; `to_json` lays it out as MXNet's dmlc::JSONWriter does)::

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

Loading validates the document's structure first (types, node and output indices,
nesting depth) and raises ``SymbolJSONError`` naming the file (``source``), the node and
the field, never a raw ``KeyError``/``TypeError``/``RecursionError``.
"""
from __future__ import annotations

import json
import warnings
from typing import Any, Callable

from ..base import PlexnetError, open_for_read
from ..util import is_np_shape
from .node import Entry, Node, is_hidden, op_registry, topo_sort

__all__ = ["to_json", "from_json", "load_file", "SymbolJSONError", "MXNET_VERSION"]

MXNET_VERSION = 10901


class _Struct(dict):  # type: ignore[type-arg]
    """An nnvm struct (graph, node): always written over several lines."""


class _Inline(list):  # type: ignore[type-arg]
    """A ``dmlc::any`` value pair (``["int", 10901]``): always on one line."""


def _dmlc_str(s: str) -> str:
    # dmlc::JSONWriter::WriteString escapes only these (other characters as they are)
    return '"' + (s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
                  .replace("\r", "\\r").replace("\t", "\\t")) + '"'


def _dmlc_write(v: Any, out: list[str], depth: int) -> None:
    """``v`` in dmlc::JSONWriter's layout, which MXNet's ``tojson`` writes: a struct over
    several lines, a map over several lines when it has more than one entry, an array
    when it has more than 10 items or holds structs; items separated by ``", "``, a line
    break after it and two spaces per open scope."""
    if isinstance(v, str):
        out.append(_dmlc_str(v))
        return
    if isinstance(v, bool) or not isinstance(v, (dict, list)):
        out.append(json.dumps(v))
        return
    if isinstance(v, dict):
        multi = isinstance(v, _Struct) or len(v) > 1
        items: list[tuple[str | None, Any]] = list(v.items())
        opener, closer = "{", "}"
    else:
        multi = not isinstance(v, _Inline) and (len(v) > 10 or any(isinstance(x, _Struct) for x in v))
        items = [(None, x) for x in v]
        opener, closer = "[", "]"
    out.append(opener)
    sep = "\n" + "  " * (depth + 1) if multi else ""
    for i, (k, x) in enumerate(items):
        out.append(", " if i else "")
        out.append(sep)
        if k is not None:
            out.append(_dmlc_str(k) + ": ")
        _dmlc_write(x, out, depth + 1)
    if multi and items:
        out.append("\n" + "  " * depth)
    out.append(closer)


def _graph(sym: Any) -> _Struct:
    nodes = topo_sort(sym._outputs)
    index = {id(n): i for i, n in enumerate(nodes)}
    jnodes = []
    row_ptr = [0]
    arg_nodes = []
    for i, n in enumerate(nodes):
        na = n.num_args() if n.op is not None else 0
        jn = _Struct(op=n.op if n.op is not None else "null", name=n.name)
        if n.attrs:
            jn["attrs"] = dict(sorted(n.attrs.items()))  # nnvm writes them in key order
        jn["inputs"] = [[index[id(e[0])], int(e[1]), 1 if k >= na else 0] for k, e in enumerate(n.inputs)]
        if n.subgraphs:  # MXNet's control-flow operators: a whole graph per subgraph
            jn["subgraphs"] = [_graph(s) for s in n.subgraphs]
        jnodes.append(jn)
        if n.op is None:
            arg_nodes.append(i)
        row_ptr.append(row_ptr[-1] + n.num_outputs())
    return _Struct(nodes=jnodes, arg_nodes=arg_nodes, node_row_ptr=row_ptr,
                   heads=[[index[id(e[0])], int(e[1]), 0] for e in sym._outputs],
                   attrs=_graph_attrs())


def _graph_attrs() -> dict[str, Any]:
    # MXNet >= 1.6 marks a graph written under np_shape; loading one without the mark treats
    # 0 in shapes as unknown (the 1.5 meaning)
    if is_np_shape():
        return {"is_np_shape": _Inline(["int", 1]), "mxnet_version": _Inline(["int", MXNET_VERSION])}
    return {"mxnet_version": _Inline(["int", MXNET_VERSION])}


def to_json(sym: Any) -> str:
    """The symbol's JSON document, laid out as MXNet 1.9.1 writes it (dmlc::JSONWriter)."""
    out: list[str] = []
    _dmlc_write(_graph(sym), out, 0)
    return "".join(out)


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


def _make_prop(op: str, name: str, attrs: dict[str, str], subgraphs: list[Any] | None = None) -> Any:
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
    prop = reg.create_property(op, params)
    if subgraphs is not None:  # control-flow properties are stateful: a fresh instance each time
        prop.subgraphs = subgraphs
    return prop


class SymbolJSONError(PlexnetError, ValueError):
    """A symbol JSON document is malformed: it names the file, the node and the field."""


def _entry(v: Any, where: str, n_nodes: int, nodes: list[Node] | None, src_err: str) -> tuple[int, int]:
    """Validate one ``[node, output(, version)]`` entry; returns ``(node, output)``."""
    if (not isinstance(v, list) or not 1 <= len(v) <= 3
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in v)):
        raise SymbolJSONError(f"{where}: expected [node, output, version] integers, got {v!r:.80}")
    src, out = v[0], (v[1] if len(v) > 1 else 0)
    if not 0 <= src < n_nodes:
        raise SymbolJSONError(f"{where}: node index {src} {src_err}")
    if out < 0 or (nodes is not None and out >= nodes[src].num_outputs()):
        have = nodes[src].num_outputs() if nodes is not None else "?"
        raise SymbolJSONError(f"{where}: output index {out} of node {src} out of range (it has {have} outputs)")
    return src, out


def _check_dict_of_scalars(v: Any, where: str) -> None:
    if v is None:
        return
    if not isinstance(v, dict):
        raise SymbolJSONError(f"{where}: expected an object of strings, got {type(v).__name__}")
    for k, x in v.items():
        if isinstance(x, (dict, list)):
            raise SymbolJSONError(f"{where}[{k!r}]: expected a string, got {type(x).__name__}")


def load_file(fname: str, make: Callable[[list[Entry]], Any]) -> Any:
    """A symbol from the JSON file ``fname`` (errors name the file); ``make`` as in ``from_json``."""
    with open_for_read(fname, "r", encoding="utf-8", errors="strict") as f:
        try:
            text = f.read()
        except UnicodeDecodeError as e:
            raise SymbolJSONError(f"{fname}: not a UTF-8 text file: {e}") from None
    return from_json(text, source=fname, make=make)


def from_json(text: str, source: str = "symbol JSON", *, make: Callable[[list[Entry]], Any]) -> Any:
    """Parse MXNet symbol JSON; ``source`` (a file name) prefixes every error. ``make`` turns
    output entries into a symbol (``Symbol``; this module sits below the class), for the
    graph and for every subgraph."""
    if not isinstance(text, str):
        raise SymbolJSONError(f"{source}: expected JSON text (str), got {type(text).__name__}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise SymbolJSONError(f"{source}: not valid JSON: {e}") from None
    except RecursionError:
        raise SymbolJSONError(f"{source}: JSON nested too deeply: not a symbol file") from None
    if not isinstance(doc, dict) or "nodes" not in doc or "heads" not in doc:
        raise SymbolJSONError(f"{source}: expected an object with 'nodes' and 'heads'")
    if not isinstance(doc["nodes"], list) or not isinstance(doc["heads"], list):
        raise SymbolJSONError(f"{source}: 'nodes' and 'heads' must be lists")
    nodes: list[Node] = []
    for i, jn in enumerate(doc["nodes"]):
        where = f"{source}: nodes[{i}]"
        if not isinstance(jn, dict):
            raise SymbolJSONError(f"{where}: expected an object, got {type(jn).__name__}")
        op = jn.get("op", "null")
        name = jn.get("name", f"node{i}")
        if not (op is None or isinstance(op, str)) or not isinstance(name, str):
            raise SymbolJSONError(f"{where}: 'op' and 'name' must be strings, got {op!r:.40} and {name!r:.40}")
        where = f"{source}: nodes[{i}] ({name!r})"
        for key in ("param", "attr", "attrs"):
            _check_dict_of_scalars(jn.get(key), f"{where}.{key}")
        is_op = op not in ("null", None)
        attrs = _node_attrs(jn, is_op)
        jinputs = jn.get("inputs", [])
        if not isinstance(jinputs, list):
            raise SymbolJSONError(f"{where}.inputs: expected a list, got {type(jinputs).__name__}")
        inputs = []
        for k, inp in enumerate(jinputs):
            src, out = _entry(inp, f"{where}.inputs[{k}]", i, nodes, "does not come before this node")
            inputs.append(Entry(nodes[src], out))
        jsubs = jn.get("subgraphs")
        if jsubs is not None and not isinstance(jsubs, list):
            raise SymbolJSONError(f"{where}.subgraphs: expected a list, got {type(jsubs).__name__}")
        subgraphs = None if not jsubs else [from_json(json.dumps(js), source=f"{where}.subgraphs[{k}]", make=make)
                                            for k, js in enumerate(jsubs)]
        if is_op:
            try:
                prop = _make_prop(str(op), name, attrs, subgraphs)
            except SymbolJSONError:
                raise
            except PlexnetError as e:
                raise SymbolJSONError(f"{where}: {e}") from None
            except (ValueError, TypeError, KeyError) as e:
                raise SymbolJSONError(f"{where}: bad attributes for {op}: {e}") from None
            nodes.append(Node(op, name, attrs, inputs, prop, subgraphs))
        else:
            nodes.append(Node(None, name, attrs, []))
    if not doc["heads"]:
        raise SymbolJSONError(f"{source}: 'heads' is empty: no output")
    heads = []
    for k, h in enumerate(doc["heads"]):
        src, out = _entry(h, f"{source}: heads[{k}]", len(nodes), nodes, f"out of range ({len(nodes)} nodes)")
        heads.append(Entry(nodes[src], out))
    for n in nodes:
        if n.op is not None:
            need = len(n.prop.list_arguments()) + len(n.prop.list_auxiliary_states())
            if len(n.inputs) != need:
                names = n.prop.list_arguments() + n.prop.list_auxiliary_states()
                raise SymbolJSONError(f"{source}: node {n.name!r} ({n.op}) has {len(n.inputs)} inputs, the "
                                   f"operator takes {need} ({', '.join(names)})")
    return make(heads)
