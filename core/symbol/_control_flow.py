"""MXNet 1.9.1's symbolic control flow: ``sym.contrib.foreach``, ``while_loop``, ``cond``.

Each traces the user's Python function once on placeholder variables inside
``AttrScope(__subgraph_name__=<unique name>)``, so the nodes it creates carry that
attribute; the subgraph is the group of the function's outputs (an ``identity`` in
front of an output that is an input or was made outside). Edges from the subgraph to
operator nodes made outside are cut as MXNet cuts them: the outer output becomes an
input of the control-flow node and a variable named after it inside. Variables the
function uses (weights) stay variables of the subgraph and inputs of the node. The node
(``_foreach``, ``_while_loop``, ``_cond``) holds the subgraphs and MXNet's ``*_locs``
attributes, so the symbol's JSON is MXNet's (a ``subgraphs`` field per node).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..operator.hints import missing_fluent_message
from ..operator.registry import OperatorNotFound
from . import name as _name
from .attribute import AttrScope
from .attribute import current as _current_attrs
from .node import Entry, Node, op_registry, topo_sort
from .symbol import Group, Symbol, var

__all__ = ["foreach", "while_loop", "cond"]

_KEY = "__subgraph_name__"


# -- nested lists of symbols ------------------------------------------------------------------------
def _flatten(args: Any, what: str) -> tuple[list[Symbol], Any]:
    if isinstance(args, Symbol):
        n = len(args.list_outputs())
        return [args], (n if n > 1 else 0)
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"{what} must be a (nested) list of Symbols, got {type(args).__name__}")
    flat: list[Symbol] = []
    fmts = []
    for a in args:
        f, fmt = _flatten(a, what)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args: list[Any], fmt: Any) -> tuple[Any, list[Any]]:
    if isinstance(fmt, int):
        return (args[0], args[1:]) if fmt == 0 else (args[:fmt], args[fmt:])
    out = []
    for f in fmt:
        r, args = _regroup(args, f)
        out.append(r)
    return out, args


def _uniq_name(sym: Symbol) -> str:
    """Placeholder name of an input (MXNet: ``<name>-<output index>``)."""
    e = sym._outputs[0]
    return f"{e[0].name}-{e[1]}"


def _unique_subgraph_name(name: str) -> str:
    outer = _current_attrs().get(None).get(_KEY, "")
    if outer:
        name = f"{outer}${name}"
    counts = AttrScope._subgraph_names  # looked up per call: MXNet's tests reset it
    counts[name] += 1
    return f"{name}{counts[name] - 1}"


def _identity(s: Symbol) -> Symbol:
    from . import op_function
    fn = op_function("identity")
    if fn is None:
        raise OperatorNotFound(missing_fluent_message("sym.contrib control flow", "identity"))
    out: Symbol = fn(s)
    return out


def _make_graph(outputs: list[Symbol], sub_name: str) -> Symbol:
    """Group ``outputs`` (inside the scope): identity in front of inputs and outer nodes."""
    inputs = set(Group(outputs).list_inputs()) if outputs else set()

    def inner(s: Symbol) -> bool:
        return s._outputs[0][0].attrs.get(_KEY, "") == sub_name
    return Group([_identity(s) if s.name in inputs or not inner(s) else s for s in outputs])


def _cut(g: Symbol, sub_name: str) -> dict[str, Entry]:
    """Cut the edges from ``g``'s nodes to operator nodes made outside: a new variable
    (named after the outer output) replaces each; returns name -> the outer entry."""
    cut: dict[str, Entry] = {}
    made: dict[tuple[int, int], Entry] = {}
    for node in topo_sort(g._outputs):
        if node.op is None or node.attrs.get(_KEY, "") != sub_name:
            continue
        for k, e in enumerate(node.inputs):
            src = e[0]
            if src.op is None or src.attrs.get(_KEY, "") == sub_name:
                continue
            key = (id(src), int(e[1]))
            if key not in made:
                nm = src.output_name(int(e[1]))
                made[key] = Entry(Node(None, nm, {_KEY: sub_name}), 0)
                cut[nm] = Entry(src, int(e[1]))
            node.inputs[k] = made[key]
    return cut


def _input_entries(g: Symbol) -> dict[str, Entry]:
    """name -> the variable node of each input of ``g``."""
    return {n.name: Entry(n, 0) for n in topo_sort(g._outputs) if n.op is None}


def _node(op: str, subgraphs: list[Symbol], inputs: list[Entry], params: dict[str, Any], hint: str) -> Symbol:
    reg = op_registry()
    params = {k: str(list(v)) if isinstance(v, (list, tuple)) else str(v) for k, v in params.items()}
    params["num_args"] = str(len(inputs) + len(subgraphs))
    prop = reg.create_property(op, params)
    prop.subgraphs = list(subgraphs)
    attrs = _current_attrs().get(None)
    attrs.update(params)
    node = Node(op, _name.current().get(None, hint), attrs, list(inputs), prop, list(subgraphs))
    return Symbol([Entry(node, i) for i in range(prop.num_outputs())])


def _single(s: Symbol) -> Entry:
    return s._outputs[0]


# -- foreach --------------------------------------------------------------------------------------
def foreach(body: Callable[[Any, Any], tuple[Any, Any]], data: Any, init_states: Any,
            name: str = "foreach") -> tuple[Any, Any]:
    """``outs, states = body(data[i], states)`` over the first axis of ``data`` (a Symbol
    or a nested list of them), as one ``_foreach`` node; returns the stacked outputs and
    the final states (both as the body returned them)."""
    flat_data, data_fmt = _flatten(data, "foreach input")
    flat_init, init_fmt = _flatten(init_states, "foreach states")
    sub_name = _unique_subgraph_name(name)
    with AttrScope(**{_KEY: sub_name}):
        in_eles, _ = _regroup([var(_uniq_name(s)) for s in flat_data], data_fmt)
        st, _ = _regroup([var(_uniq_name(s)) for s in flat_init], init_fmt)
        sym_out, sym_states = body(in_eles, st)
        flat_out, out_fmt = _flatten(sym_out, "foreach output")
        flat_states, state_fmt = _flatten(sym_states, "foreach loop_vars")
        if state_fmt != init_fmt:
            raise ValueError("foreach: the input and output loop_vars have different formats")
        g = _make_graph(flat_out + flat_states, sub_name)
    cut = _cut(g, sub_name)
    entries = _input_entries(g)
    names = g.list_inputs()
    if len(set(names)) != len(names):
        raise ValueError(f"foreach: the inputs of the subgraph do not have unique names: {names}")
    data_names = [_uniq_name(s) for s in flat_data]
    state_names = [_uniq_name(s) for s in flat_init]
    for what, ns in (("data arrays", data_names), ("state arrays", state_names)):
        missing = [n for n in ns if n not in names]
        if missing:  # an assertion in MXNet (its tests catch AssertionError)
            raise AssertionError(f"foreach: the {what} have to be used in the loop body (unused: {missing})")
    ins = [_single(s) for s in flat_data] + [_single(s) for s in flat_init]
    remain_locs = []
    for i, n in enumerate(names):
        if n in data_names or n in state_names:
            continue
        ins.append(cut.get(n, entries[n]))
        remain_locs.append(i)
    res = _node("_foreach", [g], ins, {
        "num_outputs": len(flat_out) + len(flat_states), "num_out_data": len(flat_out),
        "in_state_locs": [names.index(n) for n in state_names],
        "in_data_locs": [names.index(n) for n in data_names], "remain_locs": remain_locs}, "_foreach")
    outs, _ = _regroup([res[i] for i in range(len(flat_out))], out_fmt)
    states, _ = _regroup([res[len(flat_out) + i] for i in range(len(flat_states))], state_fmt)
    return outs, states


# -- while_loop and cond: several subgraphs over one list of inputs --------------------------------
def _union(graphs: Sequence[tuple[Symbol, dict[str, Entry]]], bound: dict[str, Entry]) -> tuple[list[Entry], list]:
    """The node's inputs (each outer entry once) and, per subgraph, the input index of
    each of its inputs. ``bound`` maps placeholder names to outer entries."""
    inputs: list[Entry] = []
    where: dict[tuple[bool, int, int], int] = {}
    locs = []
    for g, cut in graphs:
        entries = _input_entries(g)
        names = g.list_inputs()
        if len(set(names)) != len(names):
            raise ValueError(f"the inputs of the subgraph do not have unique names: {names}")
        mine = []
        for n in names:
            e = bound.get(n) or cut.get(n) or entries[n]
            # a loop variable is its own input even where a free variable is the same outer
            # output (MXNet's test_uniq_name): the loop overwrites it each step
            key = (n in bound, id(e[0]), int(e[1]))
            if key not in where:
                where[key] = len(inputs)
                inputs.append(e)
            mine.append(where[key])
        locs.append(mine)
    return inputs, locs


def while_loop(cond: Callable[..., Symbol], func: Callable[..., tuple[Any, Any]], loop_vars: Any,
               max_iterations: Any = None, name: str = "while_loop") -> tuple[Any, Any]:
    """While ``cond(*loop_vars)`` holds (at most ``max_iterations`` steps):
    ``step_output, loop_vars = func(*loop_vars)``, as one ``_while_loop`` node. Returns
    the step outputs stacked into ``max_iterations`` rows and the final loop variables."""
    if max_iterations is None:
        raise ValueError("while_loop: max_iterations should be specified")
    try:
        max_iterations = int(max_iterations.asscalar() if hasattr(max_iterations, "asscalar") else max_iterations)
    except (TypeError, ValueError):
        raise ValueError(f"while_loop: cannot convert max_iterations ({max_iterations!r}) to int") from None
    flat_vars, var_fmt = _flatten(loop_vars, "while loop_vars")
    if not flat_vars:
        raise ValueError("while_loop: loop_vars should contain at least one element")
    var_names = [_uniq_name(s) for s in flat_vars]
    info: dict[str, Any] = {}

    def trace(kind: str) -> tuple[Symbol, dict[str, Entry]]:
        sub_name = _unique_subgraph_name(f"{name}_{kind}")
        with AttrScope(**{_KEY: sub_name}):
            vs, _ = _regroup([var(n) for n in var_names], var_fmt)
            if kind == "cond":
                r = cond(*vs)
                if not isinstance(r, Symbol):
                    raise ValueError("while_loop: the return of cond must be a Symbol")
                outs = [r]
            else:
                step, new = func(*vs)
                step = [] if step is None else (list(step) if isinstance(step, tuple) else step)
                new = [] if new is None else (list(new) if isinstance(new, tuple) else new)
                step_flat, info["out_fmt"] = _flatten(step, "while output")
                new_flat, _ = _flatten(new, "while loop_vars")
                if len(new_flat) != len(flat_vars):
                    raise ValueError(f"while_loop: func returned {len(new_flat)} loop variables, expected "
                                     f"{len(flat_vars)}")
                info["num_out_data"] = len(step_flat)
                outs = step_flat + new_flat
            g = _make_graph(outs, sub_name)
        return g, _cut(g, sub_name)

    cond_g, func_g = trace("cond"), trace("func")
    bound = {n: _single(s) for n, s in zip(var_names, flat_vars)}
    inputs, (cond_locs, func_locs) = _union([cond_g, func_g], bound)
    func_names = func_g[0].list_inputs()
    var_locs = []
    for k, n in enumerate(var_names, 1):
        if n not in func_names:
            raise ValueError(f"while_loop: the {k}-th loop_var doesn't involve into the computation")
        var_locs.append(func_names.index(n))
    nd = info["num_out_data"]
    res = _node("_while_loop", [cond_g[0], func_g[0]], inputs, {
        "max_iterations": max_iterations, "cond_input_locs": cond_locs, "func_input_locs": func_locs,
        "func_var_locs": var_locs, "num_out_data": nd, "num_outputs": nd + len(flat_vars)}, "_while_loop")
    outs, _ = _regroup([res[i] for i in range(nd)], info["out_fmt"])
    final, _ = _regroup([res[nd + i] for i in range(len(flat_vars))], var_fmt)
    return outs, final


def cond(pred: Symbol, then_func: Callable[[], Any], else_func: Callable[[], Any], name: str = "cond") -> Any:
    """``then_func()`` if ``pred`` (a one-element Symbol) is true, else ``else_func()``, as
    one ``_cond`` node; both branches must give the same number of outputs."""
    if not isinstance(pred, Symbol):
        raise TypeError(f"cond: pred must be a Symbol, got {type(pred).__name__}")
    info: dict[str, Any] = {}

    def trace(kind: str, fn: Callable[[], Any]) -> tuple[Symbol, dict[str, Entry]]:
        sub_name = _unique_subgraph_name(f"{name}_{kind}")
        with AttrScope(**{_KEY: sub_name}):
            outs, fmt = _flatten(fn(), "cond outputs")
            info["fmt_" + kind] = fmt
            info[kind] = len(outs)
            g = _make_graph(outs, sub_name)
        return g, _cut(g, sub_name)

    graphs = [trace("pred", lambda: pred), trace("then", then_func), trace("else", else_func)]
    if info["pred"] != 1:
        raise ValueError("cond: pred should always be a single output")
    if info["then"] != info["else"]:
        raise ValueError(f"cond: the then branch gives {info['then']} outputs, the else branch {info['else']}")
    inputs, (c_locs, t_locs, e_locs) = _union(graphs, {})
    n = info["then"]
    res = _node("_cond", [g for g, _ in graphs], inputs, {
        "cond_input_locs": c_locs, "then_input_locs": t_locs, "else_input_locs": e_locs, "num_outputs": n},
        "_cond")
    outs, _ = _regroup([res[i] for i in range(n)], info["fmt_then"])  # then_func's format, as MXNet
    return outs
