"""Backward over the tape: a walk of the recorded nodes in reverse topological order.

The accumulation rules are the executor's (``executor/gradient.py``): the first
contributor to a value's gradient writes the buffer, later ones add into it
(``OpReqType.add``, MXNet's in-place gradient sum); a node that feeds the same array
twice gets a private buffer for the second use, added afterwards; a variable with
``grad_req='add'`` receives every contribution added, one with ``'write'`` has its
first contribution written straight into its gradient array (no copy). Every
gradient computation is an engine operation: backward returns before the work is done.

With ``create_graph`` the walk instead calls each node's differentiable gradient
(``higher.py``) built from recorded NDArray operators, so the result can be
differentiated again.
"""
from __future__ import annotations

import contextlib

import numpy as np
from collections.abc import Sequence
from typing import Any

from ..base import PlexnetError
from .. import engine as _engine_mod
from ..env import env_flag, env_int
from ..engine.base import FnProperty
from ..operator.contract import OpReqType
from ..ndarray.ndarray import _new
from ..ndarray.sparse.autograd import StorageNode, deferrable, row_hint, store_sparse
from ..ndarray.sparse.base import STATE as _SPARSE
from ..tape import Leaf, SimpleNode, describe
from ..tape import copy_into as _copy_into, fill as _fill
from ..tape.bulk import Bulk, pusher as _pusher
from .higher import diff_backward

#: operators whose gradient is the output gradient unchanged
IDENTITY_GRAD = frozenset(("_plus_scalar", "_minus_scalar", "_copy", "identity"))
#: operators whose input gradient is always zero (nothing behind them gets a gradient from them)
ZERO_GRAD = frozenset(("BlockGrad", "stop_gradient", "zeros_like", "ones_like"))

__all__ = ["run_backward"]

_NULL, _WRITE, _ADD = OpReqType.null, OpReqType.write, OpReqType.add


def _new_like(x: Any) -> Any:
    return _new(x._data.shape, x._chunk.ctx, x._data.dtype)


class Ones:
    """A head gradient of ones not made yet: a node with ``takes_ones`` (a hybridized
    graph, whose executor keeps ones) uses it without any array; others ``materialize``."""

    __slots__ = ("like",)

    def __init__(self, like: Any) -> None:
        self.like = like

    def materialize(self) -> Any:
        b = _new_like(self.like)
        _fill(b, 1.0)
        return b


def _topo(heads: Sequence[Any]) -> list:
    """Tape nodes reachable from ``heads``, inputs before consumers (iterative DFS)."""
    order: list = []
    # tape nodes and leaves compare by identity (no __eq__): a set of them, not of ids
    seen: set[Any] = set()
    for h in heads:
        root = h._ag[0]
        if root in seen or isinstance(root, Leaf):
            continue
        seen.add(root)
        stack = [(root, iter(root.inputs))]
        while stack:
            node, it = stack[-1]
            for x in it:
                ag = x._ag
                if ag is None:
                    continue
                n = ag[0]
                if n in seen or n.__class__ is Leaf:  # Leaf has no subclasses
                    continue
                if n.freed:
                    # as MXNet: an earlier backward cleared this part of the graph, so the
                    # array is a constant of the new one (no gradient flows into it)
                    continue
                seen.add(n)
                stack.append((n, iter(n.inputs)))
                break
            else:
                stack.pop()
                order.append(node)
    return order


def _freed_msg(node: Any) -> str:
    return (f"backward: the graph through operator {node.name!r} was already freed by an earlier backward. "
            f"Pass retain_graph=True to the first backward to differentiate the same graph twice")


def _check_heads(heads: Sequence[Any]) -> None:
    for h in heads:
        ag = h._ag
        if ag is None:
            raise PlexnetError(
                f"backward: cannot differentiate {describe(h)}: it was not computed under autograd.record() from "
                f"arrays marked with attach_grad()/mark_variables(), so it is not in a computational graph")
        if ag[0].freed:
            raise PlexnetError(_freed_msg(ag[0]))


def _bulk() -> Bulk | None:
    """A bulk for this backward walk's pushes (``tape/bulk.py``): consecutive nodes' gradient
    computations as one engine operation of up to ``PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD``
    (default ``PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN``, 15) calls, as the executor's bulk
    segments (and MXNet's bulked backward). None with ``PLEXNET_EXEC_BULK_EXEC_TRAIN=0`` or
    on the NaiveEngine, whose point is one operation per call for debugging."""
    if not env_flag("PLEXNET_EXEC_BULK_EXEC_TRAIN", True) or _engine_mod.get().kind == "NaiveEngine":
        return None
    n = env_int("PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD", env_int("PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", 15))
    return Bulk(n if n > 0 else 1 << 30) if n != 1 else None


def run_backward(heads: Sequence[Any], head_grads: Sequence[Any] | None, variables: Sequence[Any] | None = None,
                 retain_graph: bool = False, train_mode: bool = True, create_graph: bool = False) -> list | None:
    """Differentiate ``heads``. Without ``variables`` gradients go to every reached
    variable's ``.grad``; with them, new arrays holding the gradient of each variable
    are returned (``autograd.grad``)."""
    heads = list(heads)
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif len(head_grads) != len(heads):
        raise ValueError(f"backward: {len(head_grads)} head gradients for {len(heads)} heads")
    _check_heads(heads)
    head_grads = list(head_grads)
    for k, (h, g) in enumerate(zip(heads, head_grads)):
        if g is not None and tuple(g.shape) != tuple(h.shape):
            if g.size <= h.size:
                raise ValueError(f"backward: head gradient of shape {tuple(g.shape)} for a head of shape "
                                 f"{tuple(h.shape)}")
            # MXNet does not check: the head's gradient is read from the start of the given
            # array's memory (MXNet's test_contrib_control_flow passes a longer one)
            head_grads[k] = g.reshape((-1,))[:h.size].reshape(tuple(h.shape))
    order = _topo(heads)
    want: dict[int, int] | None = None
    if variables is not None:
        want = {}
        for i, v in enumerate(variables):
            if v._ag is None or not isinstance(v._ag[0], Leaf):
                raise PlexnetError(f"grad: variable {i} ({describe(v)}) is not marked; call attach_grad() or "
                                   f"autograd.mark_variables() on it before recording")
            want[id(v._ag[0])] = i
    # which nodes lead to a wanted variable
    need: set[int] = set()
    for node in order:
        for x in node.inputs[:node.n_args]:
            ag = x._ag
            if ag is None:
                continue
            n = ag[0]
            if isinstance(n, Leaf):
                if (n.req != _NULL) if want is None else (id(n) in want):
                    need.add(id(node))
                    break
            elif id(n) in need:
                need.add(id(node))
                break
    if want is None and not need and not any(h._ag[0].__class__ is Leaf and h._ag[0].req != _NULL for h in heads):
        # as MXNet ("There are no inputs in computation graph that require gradients")
        raise PlexnetError("backward: there are no inputs in the computational graph that require gradients: "
                           "every variable the heads depend on has grad_req='null'")
    if create_graph:
        res = diff_backward(heads, head_grads, order, need, want, variables, train_mode)
        if not retain_graph:
            for node in order:
                node.free()
        return res
    bulk = _bulk()
    #: gradient key of a variable with a sparse gradient array -> (leaf, dense buffer, row hints)
    sparse_leaves: dict[tuple[int, int], tuple[Any, Any, list]] = {}
    #: what the sparse backward of each contribution keeps, per gradient key of a sparse
    #: variable or of a storage cast's output (passed through it); None: no sparse array exists
    shints: dict[tuple[int, int], list] | None = {} if _SPARSE.live else None
    #: row_sparse contributions computed from their rows only, after the walk (no dense buffer
    #: of the variable's size): gradient key -> [(row hint, output gradient)]; and where each
    #: variable's key leads (sparse/autograd.py ``deferrable``)
    sdefer: dict[tuple[int, int], list] = {}
    sdest: dict[tuple[int, int], Any] = {}
    with bulk if bulk is not None else contextlib.nullcontext():
        acc: dict[tuple[int, int], Any] = {}   # (node id, output index) -> gradient buffer (NDArray)
        for h, g in zip(heads, head_grads):
            n, k = h._ag
            key = (id(n), k)
            if n.__class__ is Leaf and (n.req == _NULL if want is None else id(n) not in want):
                continue
            cur = acc.get(key)
            if cur is not None:
                if cur.__class__ is Ones:
                    cur = acc[key] = cur.materialize()
                _add_seed(cur, g)
            elif n.__class__ is not Leaf and g is None:
                acc[key] = Ones(h)  # made only if a node needs the array (a hybridized graph has its own)
            elif n.__class__ is Leaf and want is None:
                if g is None:
                    g = _new_like(h)
                    _fill(g, 1.0)
                if n.grad.stype != "default":  # a sparse variable as its own head
                    buf = acc[key] = _new(tuple(h.shape), h.context, np.dtype(h.dtype))
                    _copy_into(buf, g, _WRITE)
                    assert shints is not None  # a sparse array exists
                    shints[key] = [None]
                    sparse_leaves[key] = (n, buf, shints[key])
                    continue
                _copy_into(n.grad, g, n.req)
                n.fresh = True
                acc[key] = n.grad
            else:
                buf = acc[key] = _new_like(h)
                _fill(buf, 1.0) if g is None else _copy_into(buf, g, _WRITE)
        # nodes whose output gradient may be non-zero: from the heads, stopping at ZERO_GRAD ops
        live = {id(h._ag[0]) for h in heads}
        for node in reversed(order):
            nid = id(node)
            if nid not in need:
                continue
            prop = getattr(node, "prop", None)
            if prop is not None:
                if not getattr(prop, "differentiable", True):
                    if nid not in live:  # all-zero output gradient: skipped, as nnvm's Gradient pass
                        continue
                    raise PlexnetError(f"Operator {prop.op_name} is non-differentiable because it didn't "
                                       f"register FGradient attribute")
                op_name = prop.op_name  # _op_name(node), inline
            else:
                op_name = node.sop.name if node.__class__ is SimpleNode else None
            if nid in live and op_name not in ZERO_GRAD:
                for x in node.inputs[:node.n_args]:
                    if x._ag is not None:
                        live.add(id(x._ag[0]))
            if sdefer and node.__class__ is StorageNode:
                d = sdefer.pop((nid, 0), None)
                if d is not None:  # pass deferred row contributions on to the storage cast's input
                    ag = node.inputs[0]._ag
                    sdefer.setdefault((id(ag[0]), ag[1]), []).extend(d)
                    if (nid, 0) not in acc:
                        continue
            nvis = node.nvis
            if nvis == 1:
                cur = acc.pop((nid, 0), None)
                if cur is None:
                    cur = _zeros_of(node, 0)
                elif cur.__class__ is Ones and not node.takes_ones:
                    cur = cur.materialize()
                ogs = [cur]
            else:
                ogs = []
                for k in range(nvis):
                    cur = acc.pop((nid, k), None)
                    ogs.append(cur if cur is not None else _zeros_of(node, k))
                if not node.takes_ones:
                    ogs = [g.materialize() if g.__class__ is Ones else g for g in ogs]
            n_args = node.n_args
            ins = node.inputs
            if n_args == 1 and node.__class__ is SimpleNode and node.sop.name in IDENTITY_GRAD:
                # the gradient is the output gradient itself: hand the buffer on, no operation
                ag = ins[0]._ag
                if ag is not None and ag[0].__class__ is not Leaf and id(ag[0]) in need:
                    key = (id(ag[0]), ag[1])
                    cur = acc.get(key)
                    if cur is None:
                        acc[key] = ogs[0]
                    else:
                        _copy_into(cur, ogs[0], _ADD)
                    continue
            targets: list = []
            privates: list | None = None
            keys: list | None = [] if n_args > 1 else None
            for i in range(n_args):
                x = ins[i]
                ag = x._ag
                if ag is None:
                    targets.append(None)
                    continue
                n = ag[0]
                if n.__class__ is Leaf:
                    if n.req == _NULL if want is None else id(n) not in want:
                        targets.append(None)
                        continue
                elif id(n) not in need:
                    targets.append(None)
                    continue
                key = (id(n), ag[1])
                if shints is not None and want is None and (n.__class__ is StorageNode or n.__class__ is Leaf):
                    dest = deferrable(node, i, n)
                    if dest is not None:  # a row_sparse contribution: computed from its rows after the walk
                        leaf, lkey, hint = dest
                        sdefer.setdefault(key, []).append((hint, ogs[0]))
                        sdest[lkey] = leaf
                        if bulk is not None:
                            bulk.keep(ogs)
                        targets.append(None)
                        continue
                cur = acc.get(key)
                if cur.__class__ is Ones:
                    cur = acc[key] = cur.materialize()
                if keys is not None:
                    if key in keys:  # the same array twice in one call: a private buffer, added after
                        if shints and key in shints:
                            shints[key].append(_hint(node, i, shints))
                        p = _new_like(x)
                        if privates is None:
                            privates = []
                        privates.append((p, key))
                        targets.append((p, _WRITE))
                        continue
                    keys.append(key)
                if cur is not None:
                    if shints and key in shints:
                        shints[key].append(_hint(node, i, shints))
                    targets.append((cur, _ADD))
                elif n.__class__ is Leaf and (want is None or n.grad is not None) and n.grad.stype != "default":
                    # a sparse gradient array: the operators write dense gradients; gathered
                    # here, stored into it after the walk as MXNet stores them (sparse/autograd.py)
                    b = acc[key] = _new(tuple(x.shape), x.context, np.dtype(x.dtype))
                    assert shints is not None  # a sparse array exists
                    shints[key] = [_hint(node, i, shints)]
                    sparse_leaves[key] = (n, b, shints[key])
                    targets.append((b, _WRITE))
                elif n.__class__ is Leaf and want is None:
                    n.fresh = True
                    acc[key] = n.grad
                    targets.append((n.grad, n.req))
                else:
                    if shints is not None and n.__class__ is StorageNode:
                        shints[key] = [_hint(node, i, shints)]
                    b = node.own_grad(i)  # a buffer the node writes anyway (no copy)
                    if b is None:
                        b = _new_like(x)
                    acc[key] = b
                    targets.append((b, _WRITE))
            if bulk is not None:
                if not node.bulkable:
                    bulk.flush()  # it pushes outside the tape: what came before goes first
                alive = bulk.alive  # bulk.keep(ogs) and the targets' buffers, inline
                alive.extend(ogs)
                for t in targets:
                    if t is not None:
                        alive.append(t[0])
            node.push_backward(ogs, targets, train_mode)
            if privates:
                for p, key in privates:
                    _copy_into(acc[key], p, _ADD)
                if bulk is not None:
                    bulk.keep([p for p, _key in privates])
    sparse_results: dict[tuple[int, int], Any] = {}
    for key, (n, b, hints) in sparse_leaves.items():
        if want is None:
            store_sparse(n, b, hints, sdefer.pop(key, ()))
        else:  # autograd.grad: a new array in the variable's gradient storage type, as MXNet
            sparse_results[key] = store_sparse(n, b, hints, into=True)
    for key, d in sdefer.items():  # variables that received deferred contributions only
        store_sparse(sdest[key], None, [], d)
    if not retain_graph:
        for node in order:
            node.free()
    if variables is not None:
        results = []
        for v in variables:
            key = (id(v._ag[0]), 0)
            r = sparse_results[key] if key in sparse_results else acc.get(key)
            if r is None:  # not reached: zero gradient
                r = _new_like(v)
                _fill(r, 0.0)
            results.append(r)
        return results
    return None


def _hint(node: Any, i: int, shints: dict) -> Any:
    """What ``node``'s sparse backward keeps of argument ``i``'s gradient (sparse/autograd.py);
    a storage cast passes on what its own output gradient's contributions keep."""
    if node.__class__ is StorageNode:
        hs = shints.get((id(node), 0))
        return ("union", hs) if hs and all(h is not None for h in hs) else None
    return row_hint(node, i)


def _op_name(node: Any) -> str | None:
    prop = getattr(node, "prop", None)
    if prop is not None:
        return prop.op_name
    return node.sop.name if node.__class__ is SimpleNode else None


def _add_seed(buf: Any, g: Any) -> None:
    if g is None:
        d = buf._data
        _pusher().push_sync(lambda rc: rc.xp.add(d, 1, out=d), buf._chunk.ctx, (), (buf._chunk.var,),
                            FnProperty.NORMAL, 0, "autograd_seed")
    else:
        _copy_into(buf, g, _ADD)


def _zeros_of(node: Any, k: int) -> Any:
    d = node.out_data[k]
    z = _new(d.shape, node.ctx, d.dtype)
    _fill(z, 0.0)
    return z
