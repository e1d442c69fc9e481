"""Graph nodes shared by ``Symbol`` and the executor.

A ``Node`` is a variable (``op is None``) or an operator application. Its ``attrs`` are
MXNet's string attributes: operator parameters (``num_hidden``) and hidden attributes in
the ``__key__`` form (``__shape__``, ``__lr_mult__``, ``__ctx_group__``). ``inputs`` are
``(node, output_index)`` pairs: the operator's arguments first, then its auxiliary states.
A Symbol is nothing but a list of such pairs (its outputs); symbols share nodes.
A control-flow node (``_foreach``, ``_while_loop``, ``_cond``) also holds ``subgraphs``:
Symbols its operator runs (MXNet's ``subgraphs`` field of a JSON node); its property
gets them as ``prop.subgraphs``.
"""
from __future__ import annotations

from typing import Any, Iterable, NamedTuple

import numpy as np

__all__ = ["Node", "Entry", "topo_sort", "is_hidden", "op_registry", "DTYPE_MX_TO_NP", "DTYPE_NP_TO_MX",
           "param_string"]


def op_registry() -> Any:
    from ..plugins import registries
    return registries().operators


def is_hidden(key: str) -> bool:
    """True for MXNet's hidden attribute keys (``__shape__``), which are no operator
    parameters."""
    return len(key) > 4 and key.startswith("__") and key.endswith("__")


#: MXNet's numeric dtype codes (``__dtype__`` attribute, ``mshadow::TypeFlag``)
DTYPE_MX_TO_NP: dict[int, np.dtype] = {
    0: np.dtype("float32"), 1: np.dtype("float64"), 2: np.dtype("float16"), 3: np.dtype("uint8"),
    4: np.dtype("int32"), 5: np.dtype("int8"), 6: np.dtype("int64"), 7: np.dtype("bool"),
    8: np.dtype("int16"), 9: np.dtype("uint16"), 10: np.dtype("uint32"), 11: np.dtype("uint64"),
}
DTYPE_NP_TO_MX: dict[np.dtype, int] = {v: k for k, v in DTYPE_MX_TO_NP.items()}


def param_string(v: Any) -> str:
    """MXNet's string form of a Python parameter value (what symbol JSON stores)."""
    if isinstance(v, str):
        return v
    if v is None:
        return "None"
    if isinstance(v, (type, np.dtype)):
        try:
            return np.dtype(v).name
        except TypeError:
            pass
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (list, tuple)):  # numpy 2 prints np.int64(3) inside containers; MXNet's numpy 1 printed 3
        v = tuple(x.item() if isinstance(x, np.generic) else x for x in v)
    return str(v)


class Node:
    """One variable or operator application."""

    __slots__ = ("op", "name", "attrs", "inputs", "_prop", "subgraphs", "__weakref__")

    def __init__(self, op: str | None, name: str, attrs: dict[str, str] | None = None,
                 inputs: list["Entry"] | None = None, prop: Any = None, subgraphs: list[Any] | None = None) -> None:
        self.op = op
        self.name = name
        self.attrs: dict[str, str] = attrs if attrs is not None else {}
        self.inputs: list[Entry] = inputs if inputs is not None else []
        self._prop = prop
        #: Symbols a control-flow operator runs (a copy made from the property keeps them)
        self.subgraphs: list[Any] | None = subgraphs if subgraphs is not None else getattr(prop, "subgraphs", None)

    @property
    def is_variable(self) -> bool:
        return self.op is None

    def params(self) -> dict[str, str]:
        """Operator parameters (the non-hidden attributes)."""
        return {k: v for k, v in self.attrs.items() if not is_hidden(k)}

    @property
    def prop(self) -> Any:
        """The ``OperatorProperty`` of an operator node (created from the registry on
        first use; ``None`` for variables)."""
        p = self._prop
        if p is None and self.op is not None:
            p = self._prop = op_registry().create_property(self.op, self.params())
            if self.subgraphs is not None:  # such properties are stateful: never cached, never shared
                p.subgraphs = list(self.subgraphs)
        return p

    def reset_prop(self) -> None:
        self._prop = None

    def num_outputs(self) -> int:
        return 1 if self.op is None else self.prop.num_outputs()

    def num_visible_outputs(self) -> int:
        return 1 if self.op is None else self.prop.num_visible_outputs()

    def num_args(self) -> int:
        """How many inputs are arguments (the rest are auxiliary states)."""
        return 0 if self.op is None else len(self.prop.list_arguments())

    def output_name(self, index: int) -> str:
        if self.op is None:
            return self.name
        outs = self.prop.list_outputs()
        out = outs[index] if index < len(outs) else f'output{index}'
        return f"{self.name}_{out}" if self.name else out  # an unnamed (atomic) node: MXNet's 'output'

    def __repr__(self) -> str:
        return f"<Node {self.op or 'null'} {self.name}>"


class Entry(NamedTuple):
    """Output ``index`` of ``node``."""

    node: Node
    index: int  # type: ignore[assignment]  # MXNet's name; shadows tuple.index


def topo_sort(heads: Iterable[Entry]) -> list[Node]:
    """Nodes reachable from ``heads`` in nnvm's DFS post-order (inputs in order, a node
    after all of its inputs); iterative, so deep graphs do not hit the recursion limit."""
    order: list[Node] = []
    seen: set[int] = set()
    for h in heads:
        root = h[0]
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack: list[list[Any]] = [[root, 0]]
        while stack:
            top = stack[-1]
            node, i = top
            if i < len(node.inputs):
                top[1] = i + 1
                child = node.inputs[i][0]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append([child, 0])
            else:
                stack.pop()
                order.append(node)
    return order
