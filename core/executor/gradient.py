"""The execution graph: forward nodes, then the gradient nodes built from each
operator's ``declare_backward_dependency`` (nnvm's ``Gradient`` pass for legacy
operators).

Entries (values) are numbered; the forward entries keep the ids of the
``IndexedGraph``. Each entry has a kind:

``arg`` / ``aux``          the user's argument / auxiliary-state arrays (external)
``data``                   a forward value (internal, planned)
``head_grad``              the gradient given for an output (external, default ones)
``arg_grad``               the user's gradient array of an argument (external)
``grad``                   an internal gradient or a scratch in_grad (planned)

Gradient rules:

* a forward node gets a backward node when one of its arguments needs a gradient (an
  argument with ``grad_req != 'null'`` or a value computed from one);
* the backward node receives only the arrays its operator declares
  (``declare_backward_dependency``; out_grads are dropped for ``need_top_grad() ==
  False`` loss operators), so undeclared forward values die as soon as the forward
  pass is done with them;
* a value read by several consumers gets the sum of their gradients: the first
  contributor (in schedule order) writes the gradient buffer, later ones *add* to it
  (``OpReqType.add``), MXNet's in-place gradient sum; a head gradient of a value that is
  also consumed inside the graph is added by a ``sum`` node;
* ``grad_req='add'`` arguments get every contribution added; an argument that needs a
  gradient but does not reach any output gets zeros (``write``);
* an in_grad nobody needs still gets a scratch buffer, with ``req=null``.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..base import PlexnetError
from ..operator.contract import OpReqType
from ..symbol.graph import IndexedGraph

__all__ = ["ExecEntry", "ExecNode", "ExecGraph", "build_exec_graph", "EXTERNAL_KINDS"]

EXTERNAL_KINDS = frozenset(("arg", "aux", "head_grad", "arg_grad"))
#: operators whose input gradient is always zero: nothing upstream of them needs a backward
ZERO_GRAD_OPS = frozenset(("BlockGrad", "stop_gradient", "zeros_like", "ones_like"))
_NULL, _WRITE, _ADD = OpReqType.null, OpReqType.write, OpReqType.add


class ExecEntry:
    """One value of the execution graph."""

    __slots__ = ("eid", "shape", "dtype", "nbytes", "kind", "name", "pinned", "ref")

    def __init__(self, eid: int, shape: tuple, dtype: np.dtype, kind: str, name: str, ref: Any = None) -> None:
        self.eid = eid
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        n = 1
        for d in self.shape:
            n *= int(d)
        self.nbytes = n * self.dtype.itemsize
        self.kind = kind
        self.name = name
        #: a user-visible value (a graph output): never freed, never overwritten in place
        self.pinned = False
        #: for arg/aux/arg_grad: the position in the executor's argument / aux list;
        #: for head_grad: the output position
        self.ref = ref

    @property
    def external(self) -> bool:
        return self.kind in EXTERNAL_KINDS

    def __repr__(self) -> str:
        return f"<entry {self.eid} {self.kind} {self.name} {self.shape} {self.dtype.name}>"


class ExecNode:
    """One step of the schedule.

    ``kind`` is ``forward`` / ``backward`` (an operator), ``sum`` (``out (req)= sum of
    inputs``) or ``zeros``. ``reads`` lists every entry read (with multiplicity),
    ``writes`` ``(entry, req)`` pairs, ``inplace`` the ``(input, output)`` pairs the
    operator allows to share memory.
    """

    __slots__ = ("kind", "name", "fnid", "prop", "in_data", "aux", "out_data", "out_grad", "in_grad",
                 "reqs", "reads", "writes", "inplace", "sum_inputs")

    def __init__(self, kind: str, name: str, fnid: int = -1, prop: Any = None) -> None:
        self.kind = kind
        self.name = name
        self.fnid = fnid
        self.prop = prop
        self.in_data: list[int | None] = []
        self.aux: list[int] = []
        self.out_data: list[int | None] = []
        self.out_grad: list[int | None] = []
        self.in_grad: list[int] = []
        self.reqs: list[OpReqType] = []
        self.reads: list[int] = []
        self.writes: list[tuple[int, OpReqType]] = []
        self.inplace: list[tuple[int, int]] = []
        self.sum_inputs: list[int] = []

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"


class ExecGraph:
    """Entries plus the schedule: ``forward`` nodes, then ``backward`` nodes."""

    def __init__(self, g: IndexedGraph) -> None:
        self.g = g
        self.entries: list[ExecEntry] = []
        self.forward: list[ExecNode] = []
        self.backward: list[ExecNode] = []
        #: output position -> head_grad entry id (only outputs whose gradient is used)
        self.head_grads: dict[int, int] = {}
        #: argument position -> arg_grad entry id
        self.arg_grads: dict[int, int] = {}

    @property
    def schedule(self) -> list[ExecNode]:
        return self.forward + self.backward

    def new_entry(self, shape: tuple, dtype: Any, kind: str, name: str, ref: Any = None) -> int:
        eid = len(self.entries)
        self.entries.append(ExecEntry(eid, shape, dtype, kind, name, ref))
        return eid


def build_exec_graph(g: IndexedGraph, shapes: Sequence[tuple], dtypes: Sequence[np.dtype],
                     grad_reqs: Sequence[OpReqType]) -> ExecGraph:
    """The execution graph of ``g``. ``grad_reqs`` has one entry per argument (in
    ``g.arg_nids`` order); when all are ``null`` there is no backward part."""
    xg = ExecGraph(g)
    arg_pos = {nid: i for i, nid in enumerate(g.arg_nids)}
    aux_pos = {nid: i for i, nid in enumerate(g.aux_nids)}
    # forward entries keep the IndexedGraph's ids
    for nid, node in enumerate(g.nodes):
        for k in range(g.row_ptr[nid + 1] - g.row_ptr[nid]):
            eid = g.row_ptr[nid] + k
            if node.op is None:
                kind, ref = ("arg", arg_pos[nid]) if nid in arg_pos else ("aux", aux_pos[nid])
            else:
                kind, ref = "data", None
            xg.new_entry(shapes[eid], dtypes[eid], kind, node.output_name(k), ref)
    for e in g.outputs:
        xg.entries[e].pinned = True
    # forward nodes
    for nid in g.op_nids:
        node = g.nodes[nid]
        prop = node.prop
        na = g.nargs[nid]
        ins = g.inputs[nid]
        nout = g.row_ptr[nid + 1] - g.row_ptr[nid]
        outs = list(range(g.row_ptr[nid], g.row_ptr[nid] + nout))
        xn = ExecNode("forward", node.name, nid, prop)
        xn.in_data = list(ins[:na])
        xn.aux = list(ins[na:])
        xn.out_data = list(outs)
        xn.reqs = [_WRITE] * nout
        xn.reads = list(ins)
        xn.writes = [(e, _WRITE) for e in outs]
        ids_in = list(range(na))
        ids_out = list(range(na, na + nout))
        for i, o in prop.forward_inplace_option(ids_in, ids_out):
            if 0 <= i < na and na <= o < na + nout:
                xn.inplace.append((ins[i], outs[o - na]))
        xg.forward.append(xn)
    if all(r == _NULL for r in grad_reqs):
        return xg
    _build_backward(xg, g, grad_reqs)
    return xg


class _Acc:
    """Gradient accumulation state of one forward entry."""

    __slots__ = ("eid", "pre", "writers")

    def __init__(self) -> None:
        self.eid: int | None = None       # the gradient buffer, once a contributor wrote it
        self.pre: list[int] = []          # pre-existing gradients to add (head grads)
        self.writers: set[int] = set()    # ids of backward nodes that wrote it


def non_differentiable_msg(prop: Any, name: str) -> str:
    """MXNet's error for a gradient through an operator that declares ``differentiable = False``."""
    return (f"Operator {prop.op_name} is non-differentiable because it didn't register FGradient attribute "
            f"(node {name!r})")


def _build_backward(xg: ExecGraph, g: IndexedGraph, grad_reqs: Sequence[OpReqType]) -> None:
    ents = xg.entries
    rg = [False] * g.num_entries
    arg_req: dict[int, OpReqType] = {}
    for pos, nid in enumerate(g.arg_nids):
        e = g.row_ptr[nid]
        arg_req[e] = grad_reqs[pos]
        rg[e] = grad_reqs[pos] != _NULL
    needs_bwd = [False] * len(g.nodes)
    for nid in g.op_nids:
        if any(rg[e] for e in g.inputs[nid][:g.nargs[nid]]):
            needs_bwd[nid] = True
            for e in range(g.row_ptr[nid], g.row_ptr[nid + 1]):
                rg[e] = True
    # as nnvm's Gradient pass: a node whose output gradients are all zero (it reaches the
    # outputs only through zero-gradient operators such as BlockGrad) gets no backward node
    live = [False] * g.num_entries
    for e in g.outputs:
        live[e] = rg[e]
    for nid in reversed(g.op_nids):
        if not needs_bwd[nid]:
            continue
        if not any(live[e] for e in range(g.row_ptr[nid], g.row_ptr[nid + 1])):
            needs_bwd[nid] = False
        elif g.nodes[nid].prop.op_name not in ZERO_GRAD_OPS:
            for e in g.inputs[nid][:g.nargs[nid]]:
                live[e] = live[e] or rg[e]
    acc: dict[int, _Acc] = {}

    def acc_of(e: int) -> _Acc:
        a = acc.get(e)
        if a is None:
            a = acc[e] = _Acc()
        return a

    # head gradients
    for pos, e in enumerate(g.outputs):
        if rg[e]:
            h = xg.new_entry(ents[e].shape, ents[e].dtype, "head_grad", f"{ents[e].name}_head_grad", pos)
            xg.head_grads[pos] = h
            acc_of(e).pre.append(h)

    def sum_node(name: str, inputs: list[int], out: int, req: OpReqType) -> None:
        xn = ExecNode("sum", name)
        xn.sum_inputs = list(inputs)
        xn.reads = list(inputs)
        xn.writes = [(out, req)]
        xn.reqs = [req]
        xn.in_grad = [out]
        if req == _WRITE and inputs and not ents[inputs[0]].external:
            xn.inplace = [(inputs[0], out)]
        xg.backward.append(xn)

    def zeros_node(name: str, out: int) -> None:
        xn = ExecNode("zeros", name)
        xn.writes = [(out, _WRITE)]
        xn.reqs = [_WRITE]
        xn.in_grad = [out]
        xg.backward.append(xn)

    def finalize(e: int) -> int:
        """The complete gradient of forward entry ``e`` (emitting sum/zeros nodes)."""
        a = acc_of(e)
        name = f"{ents[e].name}_grad"
        if a.eid is None:
            if len(a.pre) == 1:
                return a.pre[0]
            out = xg.new_entry(ents[e].shape, ents[e].dtype, "grad", name)
            if a.pre:
                sum_node(f"{name}_sum", a.pre, out, _WRITE)
            else:
                zeros_node(f"{name}_zeros", out)
            a.eid = out
            a.pre = []
            return out
        if a.pre:
            sum_node(f"{name}_add_head", a.pre, a.eid, _ADD)
            a.pre = []
        return a.eid

    pending_private: list[tuple[int, int]] = []

    def contribute(e: int, node_key: int) -> tuple[int, OpReqType]:
        """Where backward node ``node_key`` writes its gradient for forward entry ``e``."""
        a = acc_of(e)
        name = f"{ents[e].name}_grad"
        if a.eid is None:
            if ents[e].kind == "arg":
                a.eid = xg.new_entry(ents[e].shape, ents[e].dtype, "arg_grad", name, ents[e].ref)
                xg.arg_grads[ents[e].ref] = a.eid
                req = _ADD if arg_req[e] == _ADD else _WRITE
            else:
                a.eid = xg.new_entry(ents[e].shape, ents[e].dtype, "grad", name)
                req = _WRITE
            a.writers.add(node_key)
            return a.eid, req
        if node_key in a.writers:  # this node already writes it: give it a private buffer
            p = xg.new_entry(ents[e].shape, ents[e].dtype, "grad", f"{name}_part")
            pending_private.append((p, a.eid))
            return p, _WRITE
        a.writers.add(node_key)
        return a.eid, _ADD

    for nid in reversed(g.op_nids):
        if not needs_bwd[nid]:
            continue
        node = g.nodes[nid]
        prop = node.prop
        if not getattr(prop, "differentiable", True):
            raise PlexnetError(non_differentiable_msg(prop, node.name))
        na = g.nargs[nid]
        ins = g.inputs[nid]
        nout = g.row_ptr[nid + 1] - g.row_ptr[nid]
        nvis = prop.num_visible_outputs()
        outs = list(range(g.row_ptr[nid], g.row_ptr[nid] + nout))
        og_ids = list(range(nvis))
        in_ids = list(range(nvis, nvis + na))
        out_ids = list(range(nvis + na, nvis + na + nout))
        ig_ids = list(range(nvis + na + nout, nvis + 2 * na + nout))
        deps = set(prop.declare_backward_dependency(og_ids, in_ids, out_ids))
        if not prop.need_top_grad():
            deps -= set(og_ids)
        xn = ExecNode("backward", node.name, nid, prop)
        xn.out_grad = [finalize(outs[k]) if og_ids[k] in deps else None for k in range(nvis)]
        xn.in_data = [ins[k] if in_ids[k] in deps else None for k in range(na)]
        xn.out_data = [outs[k] if out_ids[k] in deps else None for k in range(nout)]
        xn.aux = list(ins[na:])
        by_id: dict[int, int | None] = {}
        by_id.update(zip(og_ids, xn.out_grad))
        by_id.update(zip(in_ids, xn.in_data))
        by_id.update(zip(out_ids, xn.out_data))
        key = len(xg.backward)
        for k in range(na):
            e = ins[k]
            if rg[e]:
                ge, req = contribute(e, key)
            else:
                ge, req = xg.new_entry(ents[e].shape, ents[e].dtype, "grad", f"{node.name}_scratch{k}"), _NULL
            xn.in_grad.append(ge)
            xn.reqs.append(req)
        xn.reads = [e for e in xn.out_grad + xn.in_data + xn.out_data if e is not None] + xn.aux
        xn.writes = list(zip(xn.in_grad, xn.reqs))
        for src, dst in prop.backward_inplace_option(og_ids, in_ids, out_ids, ig_ids):
            s = by_id.get(src)
            if s is None or not (0 <= dst - ig_ids[0] < na if ig_ids else False):
                continue
            k = dst - ig_ids[0]
            if xn.reqs[k] == _WRITE:
                xn.inplace.append((s, xn.in_grad[k]))
        xg.backward.append(xn)
        while pending_private:
            p, target = pending_private.pop()
            sum_node(f"{ents[target].name}_add_part", [p], target, _ADD)
    _finish_arguments(xg, g, grad_reqs, acc, sum_node, zeros_node)
    # head gradients nobody reads (loss outputs) are not allocated
    used = {e for xn in xg.backward for e in xn.reads}
    xg.head_grads = {pos: h for pos, h in xg.head_grads.items() if h in used}


def _finish_arguments(xg: ExecGraph, g: IndexedGraph, grad_reqs: Sequence[OpReqType], acc: dict,
                      sum_node: Any, zeros_node: Any) -> None:
    ents = xg.entries
    # arguments: head gradients given directly on a variable, and arguments without
    # any contribution
    for pos, nid in enumerate(g.arg_nids):
        if grad_reqs[pos] == _NULL:
            continue
        e = g.row_ptr[nid]
        a = acc.get(e)
        req = grad_reqs[pos]
        if a is None or (a.eid is None and not a.pre):
            if req == _ADD:
                continue
            out = xg.new_entry(ents[e].shape, ents[e].dtype, "arg_grad", f"{ents[e].name}_grad", pos)
            xg.arg_grads[pos] = out
            zeros_node(f"{ents[e].name}_grad_zeros", out)
            continue
        if a.pre:
            if a.eid is None:
                out = xg.new_entry(ents[e].shape, ents[e].dtype, "arg_grad", f"{ents[e].name}_grad", pos)
                xg.arg_grads[pos] = out
                sum_node(f"{ents[e].name}_grad_sum", a.pre, out, _ADD if req == _ADD else _WRITE)
            else:
                sum_node(f"{ents[e].name}_grad_add_head", a.pre, a.eid, _ADD)
            a.pre = []
