"""``plexnet.sym`` / ``plexnet.symbol``: symbolic graphs (MXNet 1.x ``mx.sym``).

Every registered operator is a function here: ``sym.FullyConnected(data, num_hidden=10,
name='fc1')`` (inputs positionally or by argument name, parameters by keyword); a
third-party plugin's operators appear as soon as it is installed. Missing inputs become
variables named ``<node>_<argument>`` (``fc1_weight``, ``softmax_label``,
``bn_moving_mean``); a node without ``name=`` is named by the ``NameManager``
(``fullyconnected0``).
"""
from __future__ import annotations

from typing import Any

from ..operator import namespaces as _namespaces
from ..operator.hints import missing_fluent_message, providing_distribution
from ..operator.registry import OperatorNotFound, OpFunctionCache
from .attribute import AttrScope
from ..base import PlexnetError
from .name import NameManager, Prefix
from .name import current as _name_current
from .node import Entry, Node
from .symbol import Group, Symbol, Variable, create, load, load_json, plug_operator_functions, var
from .arith import *  # noqa: F401,F403 - MXNet's Python-level operator functions
from . import sparse  # noqa: F401 - ``mx.sym.sparse``

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "create", "AttrScope", "NameManager", "Node",
           "Entry", "Prefix", "op_function", "zeros", "ones", "maximum", "minimum", "pow"]

def _make_function(name: str) -> Any:
    from ..plugins import registries

    def fn(*args: Any, **kwargs: Any) -> Symbol:
        return create(name, args, kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = registries().operators.function_doc(name, f"The {name} operator (symbolic).")
    from ..operator.signature import operator_signature  # help() and IDEs show the parameters
    fn.__signature__ = operator_signature(registries().operators.property_class(name), "sym")  # type: ignore[attr-defined]
    return fn


_functions = OpFunctionCache(_make_function)
_renamed: dict[tuple[str, str], tuple[Any, Any]] = {}


def _function_as(full: str, exposed: str) -> Any | None:
    """Operator ``full``'s function as MXNet exposes it under the name ``exposed``: a node
    made without ``name=`` is named after ``exposed`` (``sym.contrib.boolean_mask`` ->
    ``boolean_mask0``, ``sym.linalg_gemm2`` -> ``linalg_gemm20``; MXNet hints with the
    function's own name, not the registered ``_contrib_boolean_mask``)."""
    base = _functions.get(full)
    if base is None or exposed == full:
        return base
    cached = _renamed.get((full, exposed))
    if cached is not None and cached[0] is base:
        return cached[1]
    hint = exposed.lower()

    def fn(*args: Any, **kwargs: Any) -> Symbol:
        return create(full, args, kwargs, hint=hint)
    fn.__name__ = fn.__qualname__ = exposed
    fn.__doc__ = base.__doc__
    fn.__signature__ = getattr(base, "__signature__", None)  # type: ignore[attr-defined]
    _renamed[(full, exposed)] = (base, fn)
    return fn


def _sub_lookup(sub: str) -> Any:
    prefixes = _namespaces.PREFIXES[sub]

    def lookup(full: str) -> Any | None:
        exposed = next((full[len(p):] for p in prefixes if full.startswith(p)), full)
        return _function_as(full, exposed)
    return lookup


#: operator sub-namespaces built from name prefixes (``_linalg_gemm`` -> ``sym.linalg.gemm``)
_SUBSPACES = ("linalg", "image", "contrib")
for _sub in _SUBSPACES:  # cheap: names resolve on access; ``import plexnet.<this>.linalg`` works
    globals()[_sub] = _namespaces.namespace(__name__, _sub, _sub_lookup(_sub),
                                            extras_module=__name__ + "._contrib" if _sub == "contrib" else None)
del _sub


def op_function(name: str) -> Any | None:
    """The ``sym.<name>`` function of a registered operator, or ``None``."""
    return _functions.get(name)


# Symbol's methods make Symbols through these (the class sits below them: see symbol.py)
plug_operator_functions(op_function)


#: MXNet's CachedOpConfig flags, which ``_CachedOp`` accepts besides ``subgraph``
_CACHED_OP_FLAGS = frozenset({"static_alloc", "static_shape", "inline_limit", "forward_bulk_size",
                              "backward_bulk_size", "data_indices", "param_indices", "is_dynamic"})


def _cached_op(*args: Symbol, subgraph: str = "", name: str | None = None, **flags: Any) -> Symbol:
    """``sym._internal._CachedOp(*inputs, subgraph=json)``: the graph in ``subgraph`` applied to
    ``inputs`` (in the graph's ``list_inputs()`` order; missing trailing ones become variables
    ``<node>_<input>`` as for any operator). plexnet inlines the graph (as
    ``autograd.get_symbol`` does) where MXNet keeps one ``_CachedOp`` node; the inlined operators
    are named ``<node>_<name>``, so values, gradients, arguments, auxiliary states and output
    names are MXNet's."""
    unknown = sorted(set(flags) - _CACHED_OP_FLAGS)
    if unknown:
        raise PlexnetError(f"_CachedOp: cannot find argument {unknown[0]!r}; possible arguments: subgraph, "
                           f"{', '.join(sorted(_CACHED_OP_FLAGS))}")
    if not subgraph:
        raise PlexnetError("_CachedOp: the subgraph argument (the graph's JSON) is required")
    g = load_json(subgraph)
    names = g.list_inputs()
    if len(args) > len(names) or not all(isinstance(a, Symbol) for a in args):
        raise PlexnetError(f"_CachedOp: the subgraph takes {len(names)} input symbols ({', '.join(names)}), "
                           f"got {len(args)} inputs of types {[type(a).__name__ for a in args]}")
    node = _name_current().get(name, "_cachedop")
    for n in g._topo():  # MXNet's outputs are "<node>_<subgraph output>": prefix the inlined operators
        if n.op is not None:
            n.name = f"{node}_{n.name}"
    inputs = list(args) + [Variable(f"{node}_{n}") for n in names[len(args):]]
    return g(**dict(zip(names, inputs)))


class _Internal:
    """``sym._internal``: MXNet scripts reach operators such as ``_plus`` or
    ``_PlusScalar`` through it."""

    def __getattr__(self, name: str) -> Any:
        if name == "_CachedOp":
            return _cached_op
        fn = op_function(name) or (op_function(name[1:]) if name.startswith("_") else None)
        if fn is None:
            if providing_distribution(name) is not None:
                raise OperatorNotFound(missing_fluent_message(f"mx.sym._internal.{name}", name))
            raise AttributeError(f"plexnet.sym._internal has no operator {name!r}")
        return fn


_internal = _Internal()


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "random":
        import importlib
        return importlib.import_module(__name__ + ".random")
    fn = op_function(name) or _function_as(_namespaces.flat_name(name) or "", name)
    if fn is None:
        from ..operator.hints import missing_operator_message
        from ..plugins import registries
        raise AttributeError(missing_operator_message(f"mx.sym.{name}", name, registries().operators, globals()))
    return fn


def __dir__() -> list[str]:
    from ..plugins import registries
    ops = registries().operators
    return sorted(set(globals()) | set(ops) | {"random", *_SUBSPACES}
                  | {n[1:] for n in ops if _namespaces.flat_name(n[1:])})


def _need(name: str) -> Any:
    fn = op_function(name)
    if fn is None:
        from ..operator.hints import missing_fluent_message
        raise AttributeError(missing_fluent_message(f"mx.sym.{name.lstrip('_')}", name))
    return fn


def zeros(shape: Any, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A symbol of zeros (operator ``_zeros``)."""
    return _need("_zeros")(shape=shape, dtype=dtype, **kwargs)


def ones(shape: Any, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A symbol of ones (operator ``_ones``)."""
    return _need("_ones")(shape=shape, dtype=dtype, **kwargs)


def _scalar_or_sym(lhs: Any, rhs: Any, op: str, sop: str, name: str | None) -> Symbol:
    kw = {"name": name} if name else {}
    if isinstance(lhs, Symbol) and isinstance(rhs, Symbol):
        return _need(op)(lhs, rhs, **kw)
    if isinstance(lhs, Symbol):
        return _need(sop)(lhs, scalar=rhs, **kw)
    if isinstance(rhs, Symbol):
        return _need(sop)(rhs, scalar=lhs, **kw)
    raise TypeError("at least one operand must be a Symbol")


def maximum(left: Any, right: Any, name: str | None = None) -> Any:
    if not isinstance(left, Symbol) and not isinstance(right, Symbol):
        return left if left > right else right  # two numbers: a number, as MXNet
    return _scalar_or_sym(left, right, "_maximum", "_maximum_scalar", name)


def minimum(left: Any, right: Any, name: str | None = None) -> Any:
    if not isinstance(left, Symbol) and not isinstance(right, Symbol):
        return left if left < right else right  # two numbers: a number, as MXNet
    return _scalar_or_sym(left, right, "_minimum", "_minimum_scalar", name)


def pow(base: Any, exp: Any, name: str | None = None) -> Symbol:  # noqa: A001 - MXNet's name
    if isinstance(base, Symbol):
        return base ** exp
    return exp.__rpow__(base)


def split_v2(ary: Symbol, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False) -> Symbol:
    """``numpy.split``-like split (MXNet's ``sym.split_v2``, operator ``_split_v2``)."""
    return ary.split_v2(indices_or_sections, axis, squeeze_axis)
