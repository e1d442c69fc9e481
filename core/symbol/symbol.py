"""``Symbol``: a symbolic graph (MXNet 1.x ``mx.sym.Symbol``).

A symbol is a list of outputs ``(node, index)`` of a DAG of ``Node`` objects. Symbols
share nodes: composing never copies, except ``__call__``/``__copy__``, which copy the
graph before substituting variables. See ``plexnet.symbol`` for creating symbols.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Any, Iterator, Sequence

import numpy as np

from ..base import NotImplementedForSymbol, PlexnetError
from ..operator.fluent import install_fluent
from ..fileio import atomic_write
from .. import upcalls
from . import attribute as _attribute
from . import name as _name
from .arith_names import _ARITH, arith_op_name
from .graph import mutated_inputs
from .inference import InferenceMixin
from .json_io import from_json, load_file, to_json
from .node import DTYPE_NP_TO_MX, Entry, Node, is_hidden, op_registry, param_string, topo_sort

__all__ = ["Symbol", "Variable", "var", "Group", "create", "load", "load_json", "arith_op_name"]


#: MXNet 1.9.1's CPU subgraph backends: accepted, the graph left as it is (no fusion pass)
_CPU_SUBGRAPH_BACKENDS = ("MKLDNN", "MKLDNN_QUANTIZE")


class Symbol(InferenceMixin):
    """A symbolic graph with one or more outputs."""

    __slots__ = ("_outputs", "__weakref__")
    # numpy should defer to our reflected operators (2 * sym)
    __array_priority__ = 1000.0

    def __init__(self, outputs: Sequence[Entry]) -> None:
        self._outputs: list[Entry] = [Entry(e[0], e[1]) for e in outputs]

    # -- structure ---------------------------------------------------------------------------------
    def _topo(self) -> list[Node]:
        return topo_sort(self._outputs)

    def _heads_node(self) -> Node | None:
        """The node all outputs come from, if there is one such node."""
        nodes = {id(e[0]): e[0] for e in self._outputs}
        return next(iter(nodes.values())) if len(nodes) == 1 else None

    @property
    def name(self) -> str | None:
        """The node name of a single-output symbol, else ``None``."""
        if len(self._outputs) != 1:
            return None
        return self._outputs[0][0].name

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self) -> Iterator["Symbol"]:
        return (Symbol([e]) for e in self._outputs)

    def __getitem__(self, index: int | str | slice) -> "Symbol":
        if isinstance(index, str):
            names = self.list_outputs()
            hits = [i for i, n in enumerate(names) if n == index]
            if not hits:
                raise ValueError(f"no output named {index!r}; outputs are {names}")
            if len(hits) > 1:
                raise ValueError(f"more than one output is named {index!r}")
            return Symbol([self._outputs[hits[0]]])
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not isinstance(index, (int, np.integer)):
            raise TypeError(f"symbol index must be an int, a slice or an output name, not {type(index).__name__}")
        n = len(self._outputs)
        if not -n <= int(index) < n:
            raise IndexError(f"symbol output index {index} out of range for {n} output(s)")
        return Symbol([self._outputs[int(index)]])

    def __repr__(self) -> str:
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return f"<Symbol group [{', '.join(e[0].name for e in self._outputs)}]>"

    def __hash__(self) -> int:
        return id(self)

    def __copy__(self) -> "Symbol":
        return self._deepcopy()

    def __deepcopy__(self, memo: Any = None) -> "Symbol":
        return self._deepcopy()

    copy = __copy__

    def _deepcopy(self) -> "Symbol":
        """A copy of the graph (new nodes, same names and attributes)."""
        mapping: dict[int, Node] = {}
        for n in self._topo():
            new = Node(n.op, n.name, dict(n.attrs), [Entry(mapping[id(e[0])], e[1]) for e in n.inputs], n._prop)
            mapping[id(n)] = new
        return Symbol([Entry(mapping[id(e[0])], e[1]) for e in self._outputs])

    def __getstate__(self) -> dict:
        return {"json": self.tojson()}

    def __setstate__(self, state: dict) -> None:
        self._outputs = load_json(state["json"])._outputs

    # -- listing ----------------------------------------------------------------------------------
    def _mutated(self, nodes: list[Node]) -> set[int]:
        out: set[int] = set()
        for n in nodes:
            if n.op is not None:
                na = n.num_args()
                for e in n.inputs[na:]:
                    out.add(id(e[0]))
                for k in mutated_inputs(n):
                    out.add(id(n.inputs[k][0]))
        return out

    def list_arguments(self) -> list[str]:
        """Names of the arguments (input variables that no operator mutates), in
        topological order."""
        nodes = self._topo()
        mut = self._mutated(nodes)
        return [n.name for n in nodes if n.op is None and id(n) not in mut]

    def list_auxiliary_states(self) -> list[str]:
        """Names of the auxiliary states (variables mutated by an operator, e.g.
        BatchNorm's moving statistics)."""
        nodes = self._topo()
        mut = self._mutated(nodes)
        return [n.name for n in nodes if n.op is None and id(n) in mut]

    def list_inputs(self) -> list[str]:
        """Every input variable: arguments and auxiliary states, in topological order."""
        return [n.name for n in self._topo() if n.op is None]

    def list_outputs(self) -> list[str]:
        return [e[0].output_name(e[1]) for e in self._outputs]

    def get_internals(self) -> "Symbol":
        """A symbol whose outputs are every node's (visible) outputs."""
        outs: list[Entry] = []
        for n in self._topo():
            outs.extend(Entry(n, i) for i in range(n.num_visible_outputs()))
        return Symbol(outs)

    def get_children(self) -> "Symbol | None":
        """The inputs of this symbol's output node(s), or ``None`` for a variable."""
        ins: list[Entry] = []
        seen: set[int] = set()
        for e in self._outputs:
            if id(e[0]) in seen:
                continue
            seen.add(id(e[0]))
            ins.extend(e[0].inputs)
        return Symbol(ins) if ins else None

    # -- attributes --------------------------------------------------------------------------------
    def attr(self, key: str) -> str | None:
        """The string attribute ``key`` of this symbol's node (``None`` if absent)."""
        node = self._heads_node()
        if node is None:
            return None
        v = node.attrs.get(key)
        if v is None and not is_hidden(key):
            v = node.attrs.get(f"__{key}__")
        return v

    @staticmethod
    def _node_attrs(node: Node) -> dict[str, str]:
        out = dict(node.attrs)
        for k, v in node.attrs.items():
            if is_hidden(k) and k[2:-2] in _HIDDEN_KEYS:  # MXNet un-hides only these (not __shape__)
                out.setdefault(k[2:-2], v)
        return out

    def list_attr(self, recursive: bool = False) -> dict[str, str]:
        """Attributes of this symbol's node; hidden keys (``__lr_mult__``) also appear
        without underscores (``lr_mult``), as in MXNet."""
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        node = self._heads_node()
        return {} if node is None else self._node_attrs(node)

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """``{node name: attributes}`` for every node of the graph that has any."""
        return {n.name: self._node_attrs(n) for n in self._topo() if n.attrs}

    def _set_attr(self, **kwargs: Any) -> None:
        """Set string attributes on this symbol's node (operator parameters included)."""
        node = self._heads_node()
        if node is None:
            raise PlexnetError("_set_attr needs a symbol with a single output node")
        old = dict(node.attrs)
        if "name" in kwargs:  # nnvm's SetAttrs: the key "name" renames the node
            new_name = kwargs.pop("name")
            if not isinstance(new_name, str):
                raise ValueError(f"attribute 'name' must be a string, got {type(new_name).__name__}")
            node.name = new_name
        kwargs = _hide_keys(kwargs)
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError(f"attribute {k!r} must be a string, got {type(v).__name__}")
            node.attrs[k] = v
        if node.op is not None and any(not is_hidden(k) for k in kwargs):
            node.reset_prop()
            try:
                node.prop  # validate now, like MXNet
            except Exception:
                node.attrs = old
                node.reset_prop()
                raise

    # -- composition --------------------------------------------------------------------------------
    def __call__(self, *args: "Symbol", **kwargs: Any) -> "Symbol":
        """A copy of this symbol with input variables replaced: positional symbols
        replace the arguments in ``list_arguments()`` order, keywords replace inputs by
        name. ``name=`` renames the output node."""
        s = self._deepcopy()
        s._compose(*args, **kwargs)
        return s

    def _gen_atomic_symbol(self) -> "Symbol":
        """The head operator alone: no inputs, no name (MXNet's atomic symbol, which a call
        composes by argument names)."""
        node = self._heads_node()
        if node is None or node.op is None:
            raise PlexnetError("_gen_atomic_symbol needs a symbol whose outputs come from one operator")
        new = Node(node.op, "", dict(node.attrs), [], node._prop)
        return Symbol([Entry(new, i) for i in range(node.prop.num_visible_outputs())])

    def _compose_atomic(self, node: Node, args: tuple, kwargs: dict[str, Any], name: Any) -> None:
        prop = node.prop
        names = list(prop.list_arguments()) + list(prop.list_auxiliary_states())
        node.name = _name.current().get(name, (node.op or "").lower())
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise PlexnetError(f"compose: {node.op} has no input {k!r}; inputs are {', '.join(names)}")
            bound[k] = v
        node.inputs = [_single_entry(bound[n], f"compose argument {n!r}") if n in bound
                       else Entry(Node(None, f"{node.name}_{n}"), 0) for n in names]

    def _compose(self, *args: "Symbol", **kwargs: Any) -> None:
        name = kwargs.pop("name", None)
        head = self._heads_node()
        if head is not None and head.op is not None and not head.inputs and head.name == "":
            self._compose_atomic(head, args, kwargs, name)  # an atomic symbol
            return
        nodes = self._topo()
        mut = self._mutated(nodes)
        var_nodes = [n for n in nodes if n.op is None]
        arg_nodes = [n for n in var_nodes if id(n) not in mut]
        repl: dict[int, Entry] = {}
        if len(args) > len(arg_nodes):
            raise PlexnetError(f"compose: {len(args)} positional symbols given, but the symbol has only "
                               f"{len(arg_nodes)} arguments ({', '.join(n.name for n in arg_nodes)})")
        for n, s in zip(arg_nodes, args):
            repl[id(n)] = _single_entry(s, f"compose argument {n.name!r}")
        by_name: dict[str, list[Node]] = {}
        for n in var_nodes:
            by_name.setdefault(n.name, []).append(n)
        for k, s in kwargs.items():
            if k not in by_name:
                raise PlexnetError(f"compose: keyword argument {k!r} matches no input of the symbol; inputs are "
                                   f"{', '.join(n.name for n in var_nodes)}")
            for n in by_name[k]:
                if id(n) in repl:
                    raise PlexnetError(f"compose: input {k!r} given twice")
                repl[id(n)] = _single_entry(s, f"compose argument {k!r}")
        if repl:
            for n in nodes:
                if n.op is not None:
                    n.inputs = [repl.get(id(e[0]), e) for e in n.inputs]
            self._outputs = [repl.get(id(e[0]), e) for e in self._outputs]
        if name:
            node = self._heads_node()
            if node is not None and node.op is not None:
                node.name = name

    # -- arithmetic -------------------------------------------------------------------------------
    def _binary(self, other: Any, key: str, reflect: bool = False) -> "Symbol":
        sym_op, sym_hint, sc_op, sc_hint, rsc_op, rsc_hint = _ARITH[key]
        if isinstance(other, Symbol):
            lhs, rhs = (other, self) if reflect else (self, other)
            return _create_hinted(arith_op_name(sym_op), sym_hint, [lhs, rhs], {})
        if isinstance(other, (numbers.Number, np.generic)):
            if reflect:
                if rsc_op is None:
                    return NotImplemented
                return _create_hinted(arith_op_name(rsc_op), rsc_hint, [self], {"scalar": _scalar(other)})
            return _create_hinted(arith_op_name(sc_op), sc_hint, [self], {"scalar": _scalar(other)})
        return NotImplemented

    def __add__(self, o: Any) -> "Symbol":
        return self._binary(o, "add")

    def __radd__(self, o: Any) -> "Symbol":
        return self._binary(o, "add", reflect=True)

    def __sub__(self, o: Any) -> "Symbol":
        return self._binary(o, "sub")

    def __rsub__(self, o: Any) -> "Symbol":
        return self._binary(o, "sub", reflect=True)

    def __mul__(self, o: Any) -> "Symbol":
        return self._binary(o, "mul")

    def __rmul__(self, o: Any) -> "Symbol":
        return self._binary(o, "mul", reflect=True)

    def __truediv__(self, o: Any) -> "Symbol":
        return self._binary(o, "div")

    def __rtruediv__(self, o: Any) -> "Symbol":
        return self._binary(o, "div", reflect=True)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __mod__(self, o: Any) -> "Symbol":
        return self._binary(o, "mod")

    def __rmod__(self, o: Any) -> "Symbol":
        return self._binary(o, "mod", reflect=True)

    def __pow__(self, o: Any) -> "Symbol":
        return self._binary(o, "pow")

    def __rpow__(self, o: Any) -> "Symbol":
        return self._binary(o, "pow", reflect=True)

    def __neg__(self) -> "Symbol":
        return self._binary(-1.0, "mul")

    def __pos__(self) -> "Symbol":
        return self

    def __abs__(self) -> "Symbol":
        return _create_hinted(arith_op_name("abs"), "abs", [self], {})

    def __eq__(self, o: Any) -> "Symbol":  # type: ignore[override]
        return self._binary(o, "eq")

    def __ne__(self, o: Any) -> "Symbol":  # type: ignore[override]
        return self._binary(o, "ne")

    def __gt__(self, o: Any) -> "Symbol":
        return self._binary(o, "gt")

    def __ge__(self, o: Any) -> "Symbol":
        return self._binary(o, "ge")

    def __lt__(self, o: Any) -> "Symbol":
        return self._binary(o, "lt")

    def __le__(self, o: Any) -> "Symbol":
        return self._binary(o, "le")

    # in-place arithmetic: MXNet 1.x raises (a Symbol is immutable; hybridized code that
    # writes ``x += y`` must fail the same way it does on MXNet)
    def __iadd__(self, o: Any) -> "Symbol":
        raise NotImplementedForSymbol(self.__iadd__, "+=", o, 1)

    def __isub__(self, o: Any) -> "Symbol":
        raise NotImplementedForSymbol(self.__isub__, "-=", o)

    def __imul__(self, o: Any) -> "Symbol":
        raise NotImplementedForSymbol(self.__imul__, "*=", o)

    def __itruediv__(self, o: Any) -> "Symbol":
        raise NotImplementedForSymbol(self.__itruediv__, "/=", o)

    __idiv__ = __itruediv__

    def __getattr__(self, name: str) -> Any:
        # operators as methods: s.reshape(shape=...), s.sum(axis=1), s.flatten() ...
        if name.startswith("_"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")
        fn = _op_function(_METHOD_ALIASES.get(name, name))
        if fn is None:
            from ..operator.hints import missing_method_message
            from ..registry import registries
            raise AttributeError(missing_method_message("Symbol", name, registries().operators))
        return lambda *args, **kwargs: fn(self, *args, **kwargs)

    def astype(self, *args: Any, **kwargs: Any) -> "Symbol":
        """``cast`` to a dtype (``s.astype('float16')``)."""
        return _op("cast")(self, *args, **kwargs)

    def reshape(self, *args: Any, **kwargs: Any) -> "Symbol":
        """The ``reshape`` operator (MXNet's special values 0, -1, -2, -3, -4, ``reverse``)."""
        return _op("reshape")(self, *args, **kwargs)

    def flatten(self, inplace: bool = False, **kwargs: Any) -> "Symbol":
        return _op("flatten")(self, **kwargs)

    def expand_dims(self, axis: int, inplace: bool = False, **kwargs: Any) -> "Symbol":
        return _op("expand_dims")(self, axis=axis, **kwargs)

    def squeeze(self, axis: Any = None, inplace: bool = False, **kwargs: Any) -> "Symbol":
        return _op("squeeze")(self, axis=axis, **kwargs)

    def diag(self, k: int = 0, **kwargs: Any) -> "Symbol":
        return _op("diag")(self, k, **kwargs)

    def broadcast_to(self, *args: Any, **kwargs: Any) -> "Symbol":
        return _op("broadcast_to")(self, *args, **kwargs)

    def split_v2(self, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False) -> "Symbol":
        """``numpy.split``-like split (operator ``_split_v2``)."""
        if isinstance(indices_or_sections, int):
            return _op("_split_v2")(self, sections=indices_or_sections, axis=axis, squeeze_axis=squeeze_axis)
        # MXNet prepends 0, so an empty tuple is one piece (the whole array)
        return _op("_split_v2")(self, indices=(0,) + tuple(indices_or_sections), axis=axis,
                                squeeze_axis=squeeze_axis)

    # -- NDArray-only methods: MXNet raises NotImplementedForSymbol ------------------------------
    def __bool__(self) -> bool:
        raise NotImplementedForSymbol(self.__bool__, "bool")

    def wait_to_read(self) -> None:
        raise NotImplementedForSymbol(self.wait_to_read, None)

    def asnumpy(self) -> None:
        raise NotImplementedForSymbol(self.asnumpy, None)

    def asscalar(self) -> None:
        raise NotImplementedForSymbol(self.asscalar, None)

    def as_in_context(self, *a: Any) -> None:
        raise NotImplementedForSymbol(self.as_in_context, None)

    def detach(self) -> None:
        raise NotImplementedForSymbol(self.detach, None)

    def backward(self, *a: Any) -> None:
        raise NotImplementedForSymbol(self.backward, None)

    @property
    def handle(self) -> tuple:
        """The output entries ``((node, index), ...)`` (MXNet: a C handle)."""
        return tuple(self._outputs)

    def get_backend_symbol(self, backend: str) -> "Symbol":
        """The graph partitioned for subgraph ``backend``. MXNet's CPU build registers
        ``MKLDNN`` and ``MKLDNN_QUANTIZE`` (oneDNN operator fusion); plexnet's executor runs
        the graph as it is, so for those names the symbol comes back unchanged (MXNet's fused
        nodes are named ``sg_mkldnn_*``; these keep their names). Any other name is unknown
        (MXNet's error)."""
        if backend in _CPU_SUBGRAPH_BACKENDS:
            return self
        raise PlexnetError(f"SubgraphProperty {backend} is not found in SubgraphPropertyRegistry")

    def optimize_for(self, backend: str, args: Any = None, aux: Any = None, ctx: Any = None,
                     shape_dict: Any = None, type_dict: Any = None, stype_dict: Any = None,
                     skip_infer: bool = False, **kwargs: Any) -> "Symbol":
        """Partition for ``backend``: the symbol unchanged, as ``get_backend_symbol``; an
        unknown backend also warns."""
        if backend not in _CPU_SUBGRAPH_BACKENDS:
            warnings.warn(f"Error optimizing for backend '{backend}' cannot be found", stacklevel=2)
        return self

    def gradient(self, wrt: Sequence[str]) -> "Symbol":
        """MXNet 1.9.1 does not implement symbolic gradients (``MXSymbolGrad``); bind and
        call ``backward`` instead."""
        raise PlexnetError("not implemented: Symbol.gradient (as in MXNet 1.9.1); bind the symbol "
                           "(simple_bind) and call backward() for gradients")

    # -- serialization ------------------------------------------------------------------------------
    def tojson(self, remove_amp_cast: bool = True) -> str:
        """MXNet 1.x symbol JSON (loadable by ``mx.sym.load_json`` of MXNet 1.9); with
        ``remove_amp_cast`` (MXNet's default) without ``amp_cast``/``amp_multicast`` nodes."""
        return to_json(self._without_amp_cast() if remove_amp_cast else self)

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        """Write ``tojson()`` to ``fname`` atomically (the old file or the new, never half)."""
        atomic_write(fname, self.tojson(remove_amp_cast))

    def _without_amp_cast(self) -> "Symbol":
        """The graph with every ``amp_cast`` / ``amp_multicast`` output replaced by the
        matching input (MXNet's RemoveAmpCast pass); ``self`` when there is none."""
        nodes = self._topo()
        if not any(n.op in ("amp_cast", "amp_multicast") for n in nodes):
            return self
        mapping: dict[int, Node] = {}
        bypass: dict[tuple[int, int], Entry] = {}

        def entry(e: Entry) -> Entry:
            return bypass.get((id(e[0]), e[1])) or Entry(mapping[id(e[0])], e[1])
        for n in nodes:
            if n.op in ("amp_cast", "amp_multicast"):
                for k, src in enumerate(n.inputs[:n.num_outputs()]):
                    bypass[(id(n), k)] = entry(src)
                continue
            mapping[id(n)] = Node(n.op, n.name, dict(n.attrs), [entry(e) for e in n.inputs], n._prop)
        return Symbol([entry(e) for e in self._outputs])

    def debug_str(self) -> str:
        """A readable listing of the graph in nnvm's ``Symbol::Print`` layout (MXNet 1.9.1):
        the outputs, then each variable and operator node in DFS order."""
        outs = self._outputs
        if len(outs) == 1 and not outs[0][0].inputs:
            n = outs[0][0]
            return f"Variable:{n.name}\n" if n.op is None else f"AtomicFunctor  Op:{n.op}\n"
        lines = ["Symbol Outputs:"]
        lines += [f"\toutput[{i}]={e[0].name}({e[1]})" for i, e in enumerate(outs)]
        for n in self._topo():
            if n.op is None:
                lines.append(f"Variable:{n.name}")
                continue
            lines += ["-" * 20, f"Op:{n.op}, Name={n.name}", "Inputs:"]
            n_args = n.num_args()
            for i, e in enumerate(n.inputs):
                arg = f"\targ[{i}]={e[0].name}({e[1]})"
                if e[0].op is None:  # a variable's version: 1 once an operator mutates it (aux states)
                    arg += f" version={int(i >= n_args)}"
                lines.append(arg)
            if n.attrs:
                lines.append("Attrs:")
                lines += [f"\t{k}={v}" for k, v in sorted(n.attrs.items())]
        return "\n".join(lines) + "\n"

    # -- execution ----------------------------------------------------------------------------------
    def simple_bind(self, ctx: Any = None, grad_req: Any = "write", type_dict: dict | None = None,
                    stype_dict: dict | None = None, group2ctx: dict | None = None,
                    shared_arg_names: Sequence[str] | None = None, shared_exec: Any = None,
                    shared_buffer: dict | None = None, **kwargs: Any) -> Any:
        """Allocate every array from input shapes and bind: ``net.simple_bind(mx.cpu(),
        data=(128, 784))``. Extra keywords ``plan_memory=`` and ``bulk_exec=`` (bools)
        override ``PLEXNET_EXEC_PLAN_MEMORY`` and ``PLEXNET_EXEC_BULK_EXEC_*``."""
        executor = upcalls.get(upcalls.EXECUTOR)  # a layer above (plexnet.upcalls)
        return executor.simple_bind(self, ctx, grad_req=grad_req, type_dict=type_dict, stype_dict=stype_dict,
                                    group2ctx=group2ctx, shared_arg_names=shared_arg_names,
                                    shared_exec=shared_exec, shared_buffer=shared_buffer, **kwargs)

    def bind(self, ctx: Any, args: Any, args_grad: Any = None, grad_req: Any = "write",
             aux_states: Any = None, group2ctx: dict | None = None, shared_exec: Any = None,
             **kwargs: Any) -> Any:
        """Bind to given arrays (lists in ``list_arguments()`` order or dicts by name)."""
        return upcalls.get(upcalls.EXECUTOR).bind(self, ctx, args, args_grad=args_grad, grad_req=grad_req,
                                                  aux_states=aux_states, group2ctx=group2ctx,
                                                  shared_exec=shared_exec, **kwargs)

    def eval(self, ctx: Any = None, **kwargs: Any) -> list:
        """Bind to the given arrays (by name) and run forward once; returns the outputs."""
        exe = self.bind(ctx, kwargs, grad_req="null")
        return exe.forward()


# -- helpers -----------------------------------------------------------------------------------------

# Symbol's methods make Symbols through the ``sym.<name>`` functions, which the package
# (plexnet.symbol, a step above this module) plugs in when it is imported.

def _not_plugged(name: str) -> Any:
    raise PlexnetError("Symbol operators are not plugged in: import plexnet.symbol (import plexnet does)")


_op_function: Any = _not_plugged
#: Symbol method names that MXNet maps to differently named operators
_METHOD_ALIASES = {"reshape": "Reshape", "flatten": "Flatten", "swapaxes": "SwapAxis", "split": "SliceChannel",
                   "slice_channel": "SliceChannel", "cast": "Cast"}


def plug_operator_functions(op_function: Any) -> None:
    """Install ``op_function(name)``: the ``sym.<name>`` function or None (``plexnet.symbol`` does)."""
    global _op_function
    _op_function = op_function


def _op(name: str) -> Any:
    fn = _op_function(name)
    if fn is None:
        from ..operator.registry import OperatorNotFound
        raise OperatorNotFound(f"operator {name!r} is not registered (is the plugin that provides it "
                               f"installed? `plexnet plugins` lists what is)")
    return fn


install_fluent(Symbol, lambda name: _op(name), "Symbol")

#: attribute names MXNet always stores in the hidden ``__key__`` form
_HIDDEN_KEYS = frozenset(("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage", "profiler_scope"))


def _hide_keys(attrs: dict[str, Any] | None) -> dict[str, Any]:
    return {(f"__{k}__" if k in _HIDDEN_KEYS else k): v for k, v in (attrs or {}).items()}


def _scalar(v: Any) -> str:
    if isinstance(v, np.generic):
        v = v.item()
    return str(v)


def _single_entry(s: Any, what: str) -> Entry:
    if not isinstance(s, Symbol):
        raise TypeError(f"{what} must be a Symbol, got {type(s).__name__}")
    if len(s._outputs) != 1:
        raise PlexnetError(f"{what}: symbol {s!r} has {len(s._outputs)} outputs; pick one with s[i]")
    return s._outputs[0]


def _flatten_symbols(args: Sequence[Any]) -> list[Any]:
    """A list of symbols given positionally (``Concat([a, b])``) counts as its items."""
    out: list[Any] = []
    for a in args:
        if isinstance(a, (list, tuple)) and a and all(isinstance(x, Symbol) for x in a):
            out.extend(a)
        else:
            out.append(a)
    return out


def _split_positional(op_name: str, cls: Any, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    from ..operator.calling import split_positional
    return split_positional(op_name, cls, args, kwargs, lambda a: isinstance(a, Symbol),
                            tail=("name", "attr", "out"))


def _create_hinted(op: str, hint: str, args: list, params: dict[str, Any]) -> Symbol:
    return create(op, args, params, hint=hint)


def create(op_name: str, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None,
           hint: str | None = None) -> Symbol:
    """Apply registered operator ``op_name``: positional symbols bind the operator's
    arguments, then its auxiliary states, in order (MXNet's input order); symbol keywords
    bind arguments or auxiliary states by name,
    other keywords are parameters. Missing inputs become variables named
    ``<name>_<argument>``. ``name=`` names the node (default from the ``NameManager``),
    ``attr=`` adds attributes."""
    kwargs = dict(kwargs or {})
    reg = op_registry()
    cls = reg.property_class(op_name)
    # MXNet's generated signature: inputs, then parameters in declaration order, name, attr
    args = _split_positional(op_name, cls, _flatten_symbols(args), kwargs)
    name = kwargs.pop("name", None)
    attr = kwargs.pop("attr", None)
    kwargs.pop("out", None)
    sym_kwargs: dict[str, Symbol] = {}
    params: dict[str, str] = {}
    hidden: dict[str, str] = {}
    for k, v in kwargs.items():
        if isinstance(v, Symbol):
            sym_kwargs[k] = v
        elif k in _HIDDEN_KEYS and v is not None:  # MXNet: ``lr_mult=`` etc. become ``__lr_mult__`` attributes
            hidden[f"__{k}__"] = _scalar(v)
        elif k.startswith("__") and k.endswith("__") and v is not None:  # ``__layout__=``: an attribute too
            hidden[k] = _scalar(v)
        elif v is not None:
            params[k] = param_string(v)
        elif getattr(getattr(cls.param_cls, "_fields", {}).get(k), "optional", False):
            params[k] = "None"  # explicit None of an optional parameter (slice_axis end=None): MXNet passes it
    pos: list[Symbol] = list(args)
    if hint is None:
        hint = op_name.lower()
    op_name = reg.canonical(op_name)  # aliases (``_plus``, ``flatten``) are stored as MXNet does
    # named before the parameters are checked: MXNet's generated function takes the name
    # first, so a failed call still uses up a number (``max0`` fails, the next is ``max1``)
    node_name = _name.current().get(name, hint)
    pcls = cls.param_cls
    if pcls is not None and "num_args" in pcls._fields and "num_args" not in params:
        params["num_args"] = str(len(pos) + len(sym_kwargs))
    prop = reg.create_property(op_name, params)
    arg_names = list(prop.list_arguments())
    aux_names = list(prop.list_auxiliary_states())
    if len(pos) > len(arg_names) + len(aux_names):
        raise PlexnetError(f"{op_name}: takes {len(arg_names) + len(aux_names)} input symbols "
                           f"({', '.join(arg_names + aux_names)}), got {len(pos)}")
    bound: dict[str, Entry] = {}
    for n, s in zip(arg_names + aux_names, pos):  # as MXNet: auxiliary states follow the arguments
        bound[n] = _single_entry(s, f"{op_name} argument {n!r}")
    for k, s in sym_kwargs.items():
        if k not in arg_names and k not in aux_names:
            raise PlexnetError(f"{op_name}: unknown input {k!r}; inputs are "
                               f"{', '.join(arg_names + aux_names)}")
        if k in bound:
            raise PlexnetError(f"{op_name}: input {k!r} given both positionally and by keyword")
        bound[k] = _single_entry(s, f"{op_name} argument {k!r}")
    if attr is not None and not isinstance(attr, dict):
        raise TypeError(f"{op_name}: attr must be a dict of strings")
    attr = _hide_keys(attr) if attr is not None else None
    attrs = _hide_keys(_attribute.current().get(attr))
    attrs.update(hidden)
    for k, v in (attr or {}).items():
        if not isinstance(v, str):
            raise ValueError(f"{op_name}: attribute {k!r} must be a string, got {type(v).__name__}")
    attrs.update(params)
    inputs: list[Entry] = []
    for n in arg_names + aux_names:
        e = bound.get(n)
        if e is None:
            # MXNet gives the automatic variable the node's attributes
            e = Entry(Node(None, f"{node_name}_{n}", dict(attrs)), 0)
        inputs.append(e)
    var_attrs = getattr(prop, "input_var_attrs", None)
    if var_attrs is not None:  # MXNet's FSetInputVarAttrOnCompose (PReLU's gamma, BatchNorm's moving stats)
        names = arg_names + aux_names
        for n, extra in var_attrs().items():
            if n in names:
                var = inputs[names.index(n)][0]
                if var.op is None:
                    for k, v in extra.items():
                        var.attrs.setdefault(k, v)
    node = Node(op_name, node_name, attrs, inputs, prop)
    return Symbol([Entry(node, i) for i in range(prop.num_visible_outputs())])


def Variable(name: str, attr: dict[str, str] | None = None, shape: Any = None, lr_mult: float | None = None,
             wd_mult: float | None = None, dtype: Any = None, init: Any = None, stype: str | None = None,
             **kwargs: Any) -> Symbol:
    """A symbolic input. ``shape``/``dtype`` feed inference; ``lr_mult``, ``wd_mult``
    and ``init`` are stored as hidden attributes for optimizers and initializers; extra
    attributes must be given as ``__key__=value``."""
    if not isinstance(name, str):
        raise TypeError("Variable: name must be a string")
    attrs = _hide_keys(_attribute.current().get(attr))
    if shape is not None:
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
        attrs["__shape__"] = str(shape)
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        attrs["__dtype__"] = str(DTYPE_NP_TO_MX[np.dtype(dtype)])
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        codes = {"default": 0, "row_sparse": 1, "csr": 2}
        if stype not in codes:  # MXNet: a KeyError from its storage-type table
            raise ValueError(f"Variable {name!r}: unknown storage type {stype!r}; expected one of "
                             f"{', '.join(codes)}")
        attrs["__storage_type__"] = str(codes[stype])
    for k, v in kwargs.items():
        if not is_hidden(k):
            raise ValueError(f"Attribute name={k} is not supported. Additional attributes must start and end "
                             f"with double underscores, e.g, __yourattr__")
        attrs[k] = str(v)
    return Symbol([Entry(Node(None, name, attrs), 0)])


var = Variable


def Group(symbols: Sequence[Symbol]) -> Symbol:
    """One symbol whose outputs are the outputs of ``symbols``, in order."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Group expects a non-empty list of Symbols")
    outs: list[Entry] = []
    for s in symbols:
        outs.extend(s._outputs)
    return Symbol(outs)


def load_json(json_str: str) -> Symbol:
    """A symbol from MXNet symbol JSON (``Symbol.tojson`` here or in MXNet)."""
    return from_json(json_str, make=Symbol)


def load(fname: str) -> Symbol:
    """A symbol from a JSON file (``Symbol.save`` here or in MXNet); errors name the file."""
    return load_file(fname, make=Symbol)

