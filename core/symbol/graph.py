"""The indexed forward graph and shape/type inference over it.

``IndexedGraph(heads)`` numbers the nodes reachable from a symbol's outputs in
topological order and every node output (an *entry*) with an integer id, like nnvm's
``IndexedGraph``: entry id = ``row_ptr[node_id] + output_index``. Symbol inference
(``Symbol.infer_shape``) and the executor both run on it, so it sits with the symbols
(nnvm's passes sit below both too); ``plexnet.executor.graph`` re-exports it.

Inference is a fixpoint: each operator's ``infer_shape`` sees the shapes known so far for
its arguments and may fill in inputs (a weight's shape from the data's) as well as
outputs; passes alternate forward and backward over the nodes until nothing changes.
A conflict raises ``ShapeError`` (``TypeError`` for dtypes) naming the node, its
operator, the argument and both shapes.
"""
from __future__ import annotations

import ast
from typing import Any, Callable, Sequence

import numpy as np

from ..base import InferTypeError, ShapeError
from ..util import is_np_shape
from .node import DTYPE_MX_TO_NP, Entry, Node, topo_sort

__all__ = ["IndexedGraph", "infer_shapes", "infer_types", "parse_shape_attr", "parse_dtype_attr", "mutated_inputs",
           "InferTypeError", "is_complete", "merge_shapes"]


class IndexedGraph:
    """Nodes in topological order with integer ids for nodes and entries."""

    def __init__(self, heads: Sequence[Entry]) -> None:
        self.heads = [Entry(h[0], h[1]) for h in heads]
        self.nodes: list[Node] = topo_sort(self.heads)
        self.node_id: dict[int, int] = {id(n): i for i, n in enumerate(self.nodes)}
        self.row_ptr: list[int] = [0]
        for n in self.nodes:
            self.row_ptr.append(self.row_ptr[-1] + n.num_outputs())
        self.num_entries = self.row_ptr[-1]
        nid = self.node_id
        #: input entry ids of every node (arguments then auxiliary states)
        self.inputs: list[list[int]] = [[self.row_ptr[nid[id(e[0])]] + e[1] for e in n.inputs]
                                        for n in self.nodes]
        self.nargs: list[int] = [n.num_args() for n in self.nodes]
        self.outputs: list[int] = [self.entry_id(h) for h in self.heads]
        # variables: arguments (read only) vs auxiliary states (mutated by an operator)
        mutated: set[int] = set()
        for i, n in enumerate(self.nodes):
            if n.op is not None:
                for e in self.inputs[i][self.nargs[i]:]:
                    mutated.add(e)
                for k in mutated_inputs(n):
                    mutated.add(self.inputs[i][k])
        self.var_nids = [i for i, n in enumerate(self.nodes) if n.op is None]
        self.arg_nids = [i for i in self.var_nids if self.row_ptr[i] not in mutated]
        self.aux_nids = [i for i in self.var_nids if self.row_ptr[i] in mutated]
        self.op_nids = [i for i, n in enumerate(self.nodes) if n.op is not None]

    def entry_id(self, e: Entry) -> int:
        return self.row_ptr[self.node_id[id(e[0])]] + e[1]

    def entry_name(self, eid: int) -> str:
        nid = self.entry_node(eid)
        return self.nodes[nid].output_name(eid - self.row_ptr[nid])

    def entry_node(self, eid: int) -> int:
        # row_ptr is sorted: binary search
        lo, hi = 0, len(self.nodes) - 1
        rp = self.row_ptr
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if rp[mid] <= eid:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def arg_names(self) -> list[str]:
        return [self.nodes[i].name for i in self.arg_nids]

    def aux_names(self) -> list[str]:
        return [self.nodes[i].name for i in self.aux_nids]

    def output_names(self) -> list[str]:
        return [h[0].output_name(h[1]) for h in self.heads]


# -- attribute parsing ----------------------------------------------------------------------------

def parse_shape_attr(s: str | None) -> tuple[int, ...] | None:
    """``__shape__`` attribute -> shape (0 for an unknown dimension, MXNet 1.x's
    convention; -1 counts as 0); ``None`` when absent or ``()``."""
    if not s:
        return None
    try:
        v = ast.literal_eval(s.strip())
    except (ValueError, SyntaxError):
        raise ShapeError(f"invalid __shape__ attribute {s!r}") from None
    if isinstance(v, int):
        v = (v,)
    shape = tuple(max(int(d), 0) for d in v)
    return shape or None


def mutated_inputs(node: Node) -> list[int]:
    """Positions of the inputs an operator node writes in place (MXNet's ``FMutateInputs``,
    ``mutate_inputs()`` of the property): variables there are auxiliary states, as in MXNet."""
    m = getattr(node.prop, "mutate_inputs", None) if node.op is not None else None
    return [k for k in m() if k < len(node.inputs)] if m is not None else []


def is_complete(s: Any) -> bool:
    """A shape known in every dimension (MXNet 1.x: 0 marks an unknown dimension; under
    ``mx.np_shape()`` a 0 is a real size and ``()`` a 0-d shape)."""
    if s is None:
        return False
    if is_np_shape():
        return all(d >= 0 for d in s)
    return all(d > 0 for d in s)


def merge_shapes(cur: tuple, new: tuple) -> tuple | None:
    """``cur`` refined with ``new`` where one has an unknown (0) dimension (nnvm's
    ``shape_assign``); ``None`` when they conflict."""
    if cur == new:
        return cur
    if len(cur) != len(new):
        return None
    out = []
    for a, b in zip(cur, new):
        if a == b or b == 0:
            out.append(a)
        elif a == 0:
            out.append(b)
        else:
            return None
    return tuple(out)


def _merge_equal(cur: Any, new: Any) -> Any:
    return cur if cur == new else None


def parse_dtype_attr(s: str | None) -> np.dtype | None:
    """``__dtype__`` attribute (MXNet's numeric code or a dtype name) -> numpy dtype."""
    if s is None or s == "":
        return None
    s = s.strip()
    if s.lstrip("-").isdigit():
        code = int(s)
        if code < 0:
            return None
        if code not in DTYPE_MX_TO_NP:
            raise TypeError(f"unknown MXNet dtype code {code} in __dtype__ attribute")
        return DTYPE_MX_TO_NP[code]
    return np.dtype(s)


# -- inference --------------------------------------------------------------------------------------

def _fmt(v: Any) -> str:
    if v is None:
        return "unknown"
    if isinstance(v, np.dtype):
        return v.name
    return str(tuple(v))


def _infer(g: IndexedGraph, values: list[Any], call: Callable[[Any, list], tuple], what: str,
           norm: Callable[[Any], Any], err_cls: type[Exception],
           merge: Callable[[Any, Any], Any] = _merge_equal) -> list[Any]:
    """Fixpoint of ``call(prop, in_values) -> (ins, outs, auxs)`` over the graph;
    ``merge(current, inferred)`` refines a value (``None``: a conflict)."""
    order = g.op_nids
    if not order:
        return values
    rev = order[::-1]
    nodes, inputs, nargs, row_ptr = g.nodes, g.inputs, g.nargs, g.row_ptr
    shape = what == "shape"
    # a node whose every input, output and auxiliary value is complete learns nothing more
    # from another visit (a later conflicting value is caught by the node that writes it):
    # the sweeps after the first skip it (binding a 1,200-node unrolled LSTM: 2x fewer calls)
    done = [False] * len(nodes)
    for sweep in range(2 * len(order) + 2):
        changed = False
        for nid in (order if sweep % 2 == 0 else rev):
            if done[nid]:
                continue
            node = nodes[nid]
            prop = node.prop
            ins = inputs[nid]
            na = nargs[nid]
            nout = row_ptr[nid + 1] - row_ptr[nid]
            in_vals = [values[e] for e in ins[:na]]
            out_known = [values[row_ptr[nid] + k] for k in range(nout)]
            # nothing to learn from a node whose inputs are all unknown and outputs too
            # (shapes; a type may come from a parameter: Cast's dtype)
            if what == "shape" and in_vals and all(v is None for v in in_vals) and \
                    all(v is None for v in out_known):
                continue
            if what == "shape":
                in_vals = _refine_partial(prop, in_vals, out_known, call)
            # shapes with unknown (0) dimensions: an operator may not handle them yet
            incomplete = what == "shape" and any(v is None or 0 in v for v in in_vals)
            try:
                r_in, r_out, r_aux = call(prop, list(in_vals))
                r_in = _backfill(prop, r_in, r_out, out_known, what)
            except err_cls as e:
                if incomplete and any(v is not None and 0 in v for v in in_vals):
                    continue
                raise err_cls(f"Error in operator {node.name} ({node.op}): {e}") from None
            except (ValueError, TypeError, IndexError, ZeroDivisionError) as e:
                if incomplete:
                    continue  # an operator that cannot handle unknown inputs yet
                raise err_cls(f"Error in operator {node.name} ({node.op}): {type(e).__name__}: {e} "
                              f"(input {what}s: {', '.join(_fmt(v) for v in in_vals)})") from None
            names = None
            triples = ((ins[:na], r_in, "argument"), (list(range(row_ptr[nid], row_ptr[nid] + nout)), r_out,
                                                         "output"), (ins[na:], r_aux, "auxiliary state"))
            for eids, got, kind in triples:
                if got is None:
                    continue
                for k, (eid, v) in enumerate(zip(eids, got)):
                    if v is None:
                        continue
                    v = norm(v)
                    cur = values[eid]
                    if cur is None:
                        values[eid] = v
                        changed = True
                        continue
                    merged = merge(cur, v)
                    if merged is not None:
                        if merged != cur:
                            values[eid] = merged
                            changed = True
                    else:
                        if names is None:
                            names = (prop.list_arguments(), prop.list_outputs(), prop.list_auxiliary_states())
                        label = {"argument": names[0], "output": names[1],
                                 "auxiliary state": names[2]}[kind]
                        nm = label[k] if k < len(label) else str(k)
                        src = g.entry_name(eid)
                        raise err_cls(
                            f"Error in operator {node.name} ({node.op}): {what} inconsistent for {kind} "
                            f"{nm!r} (entry {src!r}): provided {_fmt(cur)}, inferred {_fmt(v)}; "
                            f"input {what}s: "
                            + ", ".join(f"{a}={_fmt(values[x])}" for a, x in zip(names[0], ins[:na])))
            done[nid] = _complete(values, ins, row_ptr[nid], row_ptr[nid + 1], shape)
        if not changed and sweep >= 1:
            break
    return values


def _complete(values: list[Any], ins: Sequence[int], lo: int, hi: int, shape: bool) -> bool:
    """Whether a node's input entries ``ins`` and output entries ``lo..hi`` all have complete
    values (no unknown shape dimension)."""
    for eid in list(ins) + list(range(lo, hi)):
        v = values[eid]
        if v is None or (shape and 0 in v):
            return False
    return True


def _refine_partial(prop: Any, in_vals: list[Any], out_known: list[Any], call: Callable[[Any, list], tuple]) -> list:
    """Fill unknown (0) dimensions of inputs the way MXNet's operators do with
    ``shape_assign``, which the ``infer_shape(in_shape)`` contract cannot express:

    * element-wise SimpleOps (inputs shaped like the output): every input and the known
      output merged into one shape (``zeros((0, 5)) + x`` gives the zeros the batch);
    * any operator with a known output whose inputs lack the leading (batch) dimension:
      the output's, when the operator then infers that very output.
    """
    partial = [v is not None and 0 in v for v in in_vals]
    if not any(partial):
        return in_vals
    own = getattr(prop, "refine_partial_inputs", None)  # an operator's own rule (Reshape)
    if own is not None:
        refined = own(list(in_vals), list(out_known))
        if refined is not None:
            return list(refined)
    op = getattr(type(prop), "simple", None)
    if op is not None and op.shape_fn is None:
        merged: Any = None
        for v in list(in_vals) + out_known[:1]:
            if v is None:
                continue
            merged = v if merged is None else merge_shapes(merged, v)
            if merged is None:
                return in_vals  # a conflict: let the operator report it
        return [merged if v is not None else None for v in in_vals]
    out0 = out_known[0] if out_known else None
    if out0 is None or not out0 or 0 in out0:
        return in_vals
    trial = [(out0[0],) + tuple(v[1:]) if p and v and v[0] == 0 else v for v, p in zip(in_vals, partial)]
    if trial == in_vals:
        return in_vals
    try:
        outs = call(prop, list(trial))[1]
    except Exception:  # noqa: BLE001 - the guess does not fit this operator
        return in_vals
    ok = outs is not None and all(o is None or k is None or merge_shapes(tuple(k), tuple(int(d) for d in o)) is not None
                                  for o, k in zip(outs, out_known))
    return trial if ok else in_vals


def _backfill(prop: Any, r_in: Any, r_out: Any, out_known: list[Any], what: str) -> Any:
    """Shapes/types flowing backwards through SimpleOps with the default shape function
    (inputs equal the output), which the ``infer_shape(in_shape)`` contract cannot
    express."""
    if what == "shape" and getattr(prop, "backfill_shapes", False) and r_in is not None:
        # input i shaped like output i (amp_cast, amp_multicast: MXNet's ElemwiseShape)
        res = list(r_in)
        for i, v in enumerate(res):
            for o in (r_out[i] if r_out is not None and i < len(r_out) else None,
                      out_known[i] if i < len(out_known) else None):
                if o is not None:
                    v = o if v is None else (merge_shapes(v, o) or v)
            res[i] = v
        return res
    op = getattr(type(prop), "simple", None)
    if op is None or r_in is None or all(v is not None for v in r_in):
        return r_in
    if (op.shape_fn if what == "shape" else op.type_fn) is not None:
        return r_in
    out = (r_out[0] if r_out and r_out[0] is not None else None)
    if out is None and out_known:
        out = out_known[0]
    if out is None:
        return r_in
    return [out if v is None else v for v in r_in]


def _norm_shape(v: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in v)


def infer_shapes(g: IndexedGraph, known: dict[int, tuple] | None = None) -> list[tuple | None]:
    """Shapes of every entry (``None`` where unknown; 0 for a dimension not known).
    ``known`` maps entry ids of variables to shapes (0 or -1 for an unknown dimension,
    as MXNet 1.x); variables' ``__shape__`` attributes count too, where ``known`` does
    not give a shape."""
    values: list[Any] = [None] * g.num_entries
    for nid in g.var_nids:
        s = parse_shape_attr(g.nodes[nid].attrs.get("__shape__"))
        if s is not None:
            values[g.row_ptr[nid]] = s
    for e, s in (known or {}).items():
        if s is not None:
            values[e] = tuple(max(d, 0) for d in _norm_shape(s))
    return _infer(g, values, lambda p, v: p.infer_shape(v), "shape", _norm_shape, ShapeError, merge_shapes)


def _norm_dtype(v: Any) -> np.dtype:
    return np.dtype(v)


def infer_types(g: IndexedGraph, known: dict[int, Any] | None = None) -> list[np.dtype | None]:
    """Data types of every entry (``None`` where unknown); like ``infer_shapes``."""
    values: list[Any] = [None] * g.num_entries
    for nid in g.var_nids:
        t = parse_dtype_attr(g.nodes[nid].attrs.get("__dtype__"))
        if t is not None:
            values[g.row_ptr[nid]] = t
    for e, t in (known or {}).items():
        if t is not None:
            values[e] = np.dtype(t)
    return _infer(g, values, lambda p, v: p.infer_type(v), "type", _norm_dtype, InferTypeError)
