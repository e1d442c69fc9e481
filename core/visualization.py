"""``mx.viz`` / ``mx.visualization``: a symbol as a table (``print_summary``) or a
Graphviz graph (``plot_network``), as MXNet 1.9.1 draws them.

``plot_network`` needs the optional ``graphviz`` Python package (``pip install graphviz``,
plus Graphviz's ``dot`` to render); without it, it raises ``ImportError`` saying so. The
graph's content (nodes with labels and colours, edges with shapes/types) comes from
``network_spec``, which needs nothing.
"""
from __future__ import annotations

import copy
import json
import re
import warnings
from typing import Any, Sequence

from .symbol import Symbol

__all__ = ["print_summary", "plot_network", "network_spec"]


def _str2tuple(string: str) -> list[str]:
    return re.findall(r"\d+", string)


def _shape_dict(symbol: Symbol, shape: dict) -> dict[str, tuple]:
    internals = symbol.get_internals()
    _, out_shapes, _ = internals.infer_shape(**shape)
    if out_shapes is None:
        raise ValueError("Input shape is incomplete")
    return dict(zip(internals.list_outputs(), out_shapes))


def _layer_params(node: dict, pre_filter: int, shape_dict: dict | None) -> int:
    """Parameter count MXNet's summary reports for a node."""
    op, attrs = node["op"], node.get("attrs", {})
    if op == "Convolution":
        n = pre_filter * int(attrs["num_filter"]) // int(attrs.get("num_group", "1"))
        for k in _str2tuple(attrs["kernel"]):
            n *= int(k)
        return n if attrs.get("no_bias") == "True" else n + int(attrs["num_filter"])
    if op == "FullyConnected":
        hidden = int(attrs["num_hidden"])
        return pre_filter * hidden if attrs.get("no_bias") == "True" else (pre_filter + 1) * hidden
    if op == "BatchNorm" and shape_dict is not None:
        return int(shape_dict[node["name"] + "_output"][1]) * 2
    if op == "Embedding":
        return int(attrs["input_dim"]) * int(attrs["output_dim"])
    return 0


def print_summary(symbol: Symbol, shape: dict | None = None, line_length: int = 120,
                  positions: Sequence[float] = (.44, .64, .74, 1.)) -> None:
    """Print one row per layer: name (operator), output shape (without the batch axis,
    needs ``shape``), parameter count and the layers it reads; then the total."""
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be Symbol")
    shape_dict = _shape_dict(symbol, shape) if shape is not None else None
    conf = json.loads(symbol.tojson())
    nodes = conf["nodes"]
    heads = set(conf["heads"][0])
    pos = [int(line_length * p) for p in positions] if positions[-1] <= 1 else list(positions)

    def print_row(fields: list, positions: list) -> None:
        line = ""
        for i, field in enumerate(fields):
            line += str(field)
            line = line[:positions[i]]
            line += " " * (positions[i] - len(line))
        print(line)

    print("_" * line_length)
    print_row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"], pos)
    print("=" * line_length)

    def layer(node: dict, out_shape: Any) -> int:
        pre_node, pre_filter = [], 0
        if node["op"] != "null":
            for item in node["inputs"]:
                inp = nodes[item[0]]
                if inp["op"] != "null" or item[0] in heads:
                    pre_node.append(inp["name"])
                    if shape_dict is not None:
                        key = inp["name"] + "_output" if inp["op"] != "null" else inp["name"]
                        if key in shape_dict:
                            pre_filter += int(shape_dict[key][1:][0])
        n = _layer_params(node, pre_filter, shape_dict)
        print_row([node["name"] + "(" + node["op"] + ")", "x".join(str(x) for x in out_shape), n,
                   pre_node[0] if pre_node else ""], pos)
        for extra in pre_node[1:]:
            print_row(["", "", "", extra], pos)
        return n

    total = 0
    for i, node in enumerate(nodes):
        out_shape: Any = []
        op = node["op"]
        if op == "null" and i > 0:
            continue
        if (op != "null" or i in heads) and shape_dict is not None:
            key = node["name"] + "_output" if op != "null" else node["name"]
            if key in shape_dict:
                out_shape = shape_dict[key][1:]
        total += layer(node, out_shape)
        print("=" * line_length if i == len(nodes) - 1 else "_" * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)


_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69", "#fccde5")
_WEIGHT_LIKE = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean", "_running_var",
                "_running_mean")


def _node_look(node: dict) -> tuple[str, dict[str, str]]:
    """(label, extra attributes) of an operator node, as MXNet draws it."""
    op, attrs = node["op"], node.get("attrs", {})
    if op == "Convolution":
        label = "Convolution\n{}/{}, {}".format("x".join(_str2tuple(attrs["kernel"])),
                                                "x".join(_str2tuple(attrs["stride"])) if "stride" in attrs else "1",
                                                attrs["num_filter"])
        return label, {"fillcolor": _COLORS[1]}
    if op == "FullyConnected":
        return f"FullyConnected\n{attrs['num_hidden']}", {"fillcolor": _COLORS[1]}
    if op == "BatchNorm":
        return node["name"], {"fillcolor": _COLORS[3]}
    if op == "Activation":
        return f"Activation\n{attrs['act_type']}", {"fillcolor": _COLORS[2]}
    if op == "LeakyReLU":
        return f"LeakyReLU\n{attrs.get('act_type', 'Leaky')}", {"fillcolor": _COLORS[2]}
    if op == "Pooling":
        label = "Pooling\n{}, {}/{}".format(attrs["pool_type"],
                                            "x".join(_str2tuple(attrs["kernel"])) if "kernel" in attrs else "[]",
                                            "x".join(_str2tuple(attrs["stride"])) if "stride" in attrs else "1")
        return label, {"fillcolor": _COLORS[4]}
    if op in ("Concat", "Flatten", "Reshape"):
        return node["name"], {"fillcolor": _COLORS[5]}
    if op == "Softmax":
        return node["name"], {"fillcolor": _COLORS[6]}
    return (attrs["op_type"] if op == "Custom" else node["name"]), {"fillcolor": _COLORS[7]}


def network_spec(symbol: Symbol, shape: dict | None = None, dtype: dict | None = None,
                 node_attrs: dict | None = None, hide_weights: bool = True) -> tuple[list, list]:
    """``(nodes, edges)`` of ``plot_network``'s graph: nodes ``(name, label, attrs)``,
    edges ``(tail, head, attrs)`` (drawn from a node back to its input)."""
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be a Symbol")
    internals = symbol.get_internals()
    shape_dict = _shape_dict(symbol, shape) if shape is not None else None
    type_dict = None
    if dtype is not None:
        _, out_types, _ = internals.infer_type(**dtype)
        if out_types is None:
            raise ValueError("Input type is incomplete")
        type_dict = dict(zip(internals.list_outputs(), out_types))
    nodes = json.loads(symbol.tojson())["nodes"]
    names = [n["name"] for n in nodes]
    if len(names) != len(set(names)):
        seen: set[str] = set()
        repeated = {n for n in names if n in seen or seen.add(n)}  # type: ignore[func-returns-value]
        warnings.warn("There are multiple variables with the same name in your graph, this may result in cyclic "
                      "graph. Repeated names: " + ",".join(sorted(repeated)), RuntimeWarning, stacklevel=3)
    base = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034", "style": "filled"}
    base.update(node_attrs or {})
    out_nodes, hidden = [], set()
    for node in nodes:
        attr = copy.deepcopy(base)
        if node["op"] == "null":
            if node["name"].endswith(_WEIGHT_LIKE):
                if hide_weights:
                    hidden.add(node["name"])
                continue
            attr.update(shape="oval", fillcolor=_COLORS[0])
            label = node["name"]
        else:
            label, extra = _node_look(node)
            attr.update(extra)
        out_nodes.append((node["name"], label, attr))
    edges = []
    for node in nodes:
        if node["op"] == "null":
            continue
        inputs = node["inputs"][:1] if node["op"] == "_contrib_BilinearResize2D" else node["inputs"]
        for item in inputs:
            inp = nodes[item[0]]
            if inp["name"] in hidden:
                continue
            attr = {"dir": "back", "arrowtail": "open", "label": ""}
            key = inp["name"]
            if inp["op"] != "null":
                key += "_output"
                params = inp.get("attrs", {})
                if "num_outputs" in params:
                    key += str(int(params["num_outputs"]) - 1)
            if shape_dict is not None:
                attr["label"] = "x".join(str(x) for x in shape_dict[key][1:])
            if type_dict is not None:
                attr["label"] += "(" + type_dict[key].__name__ + ")"
            edges.append((node["name"], inp["name"], attr))
    return out_nodes, edges


def plot_network(symbol: Symbol, title: str = "plot", save_format: str = "pdf", shape: dict | None = None,
                 dtype: dict | None = None, node_attrs: dict | None = None, hide_weights: bool = True) -> Any:
    """A ``graphviz.Digraph`` of ``symbol`` (weights hidden by default; edges labelled
    with shapes/types when ``shape``/``dtype`` are given)."""
    try:
        from graphviz import Digraph
    except ImportError:
        raise ImportError("Draw network requires graphviz library: pip install graphviz (and Graphviz's dot "
                          "to render)") from None
    nodes, edges = network_spec(symbol, shape, dtype, node_attrs, hide_weights)
    dot = Digraph(name=title, format=save_format)
    for name, label, attr in nodes:
        dot.node(name=name, label=label, **attr)
    for tail, head, attr in edges:
        dot.edge(tail_name=tail, head_name=head, **attr)
    return dot
