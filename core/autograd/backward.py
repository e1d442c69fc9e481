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

from collections.abc import Sequence
from typing import Any

from ..base import PlexnetError
from ..engine import get as _engine
from ..operator.contract import OpReqType
from .tape import Leaf, describe

__all__ = ["run_backward"]

_NULL, _WRITE, _ADD = OpReqType.null, OpReqType.write, OpReqType.add


def _new_like(x: Any) -> Any:
    from ..ndarray.ndarray import _new
    return _new(x._data.shape, x._chunk.ctx, x._data.dtype)


def _fill(x: Any, value: float) -> None:
    d = x._data
    _engine().push_sync(lambda rc: d.fill(value), x._chunk.ctx, (), (x._chunk.var,), 0, 0, "autograd_fill")


def _copy_into(dst: Any, src: Any, req: OpReqType) -> None:
    d, s = dst._data, src._data
    if req == _ADD:
        def run(rc: Any) -> None:
            rc.xp.add(d, s, out=d)
    else:
        def run(rc: Any) -> None:
            d[...] = s
    _engine().push_sync(run, dst._chunk.ctx, (src._chunk.var,), (dst._chunk.var,), 0, 0, "autograd_accumulate")


def _topo(heads: Sequence[Any]) -> list:
    """Tape nodes reachable from ``heads``, inputs before consumers (iterative DFS)."""
    order: list = []
    seen: set[int] = set()
    for h in heads:
        root = h._ag[0]
        if id(root) in seen or isinstance(root, Leaf):
            continue
        seen.add(id(root))
        stack = [(root, iter(root.inputs))]
        while stack:
            node, it = stack[-1]
            for x in it:
                ag = x._ag
                if ag is None:
                    continue
                n = ag[0]
                if id(n) in seen or isinstance(n, Leaf):
                    continue
                if n.freed:
                    raise PlexnetError(_freed_msg(n))
                seen.add(id(n))
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
    for h, g in zip(heads, head_grads):
        if g is not None and tuple(g.shape) != tuple(h.shape):
            raise ValueError(f"backward: head gradient of shape {tuple(g.shape)} for a head of shape "
                             f"{tuple(h.shape)}")
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
    if create_graph:
        from .higher import diff_backward
        res = diff_backward(heads, head_grads, order, need, want, variables, train_mode)
        if not retain_graph:
            for node in order:
                node.free()
        return res
    acc: dict[tuple[int, int], list] = {}   # (node id, index) -> [buffer NDArray]
    results: list = [None] * len(variables) if variables is not None else []
    for h, g in zip(heads, head_grads):
        n, k = h._ag
        key = (id(n), k)
        if isinstance(n, Leaf):
            if want is not None:
                if id(n) not in want:
                    continue
                buf = results[want[id(n)]]
                if buf is None:
                    buf = results[want[id(n)]] = _new_like(h)
                    _fill(buf, 1.0) if g is None else _copy_into(buf, g, _WRITE)
                else:
                    _add_seed(buf, g)
            elif n.req != _NULL:
                if g is None:
                    g = _new_like(h)
                    _fill(g, 1.0)
                _copy_into(n.grad, g, n.req if key not in acc else _ADD)
                n.fresh = True
                acc[key] = [n.grad]
            continue
        cur = acc.get(key)
        if cur is None:
            buf = _new_like(h)
            _fill(buf, 1.0) if g is None else _copy_into(buf, g, _WRITE)
            acc[key] = [buf]
        else:
            _add_seed(cur[0], g)
    for node in reversed(order):
        nid = id(node)
        if nid not in need:
            continue
        ogs = []
        for k in range(node.num_visible()):
            cur = acc.pop((nid, k), None)
            if cur is None:  # an output nobody differentiated: zero gradient
                ogs.append(_zeros_of(node, k))
            else:
                ogs.append(cur[0])
        targets: list = []
        privates: list = []
        seen_here: set = set()
        for x in node.inputs[:node.n_args]:
            ag = x._ag
            if ag is None:
                targets.append(None)
                continue
            n, k = ag
            if isinstance(n, Leaf):
                if want is not None:
                    if id(n) not in want:
                        targets.append(None)
                        continue
                    pos = want[id(n)]
                    if id(n) in seen_here:
                        p = _new_like(x)
                        privates.append((p, results[pos]))
                        targets.append((p, _WRITE))
                    elif results[pos] is None:
                        results[pos] = _new_like(x)
                        targets.append((results[pos], _WRITE))
                    else:
                        targets.append((results[pos], _ADD))
                    seen_here.add(id(n))
                    continue
                if n.req == _NULL:
                    targets.append(None)
                    continue
            elif id(n) not in need:
                targets.append(None)
                continue
            key = (id(n), k)
            cur = acc.get(key)
            if key in seen_here:
                p = _new_like(x)
                privates.append((p, cur[0]))
                targets.append((p, _WRITE))
            elif cur is None:
                if isinstance(n, Leaf):
                    n.fresh = True
                    acc[key] = [n.grad]
                    targets.append((n.grad, n.req))
                else:
                    b = _new_like(x)
                    acc[key] = [b]
                    targets.append((b, _WRITE))
            else:
                targets.append((cur[0], _ADD))
            seen_here.add(key)
        node.push_backward(ogs, targets, train_mode)
        for p, dst in privates:
            _copy_into(dst, p, _ADD)
    if not retain_graph:
        for node in order:
            node.free()
    if variables is not None:
        for i, r in enumerate(results):
            if r is None:  # not reached: zero gradient
                r = results[i] = _new_like(variables[i])
                _fill(r, 0.0)
        return results
    return None


def _add_seed(buf: Any, g: Any) -> None:
    if g is None:
        d = buf._data
        _engine().push_sync(lambda rc: rc.xp.add(d, 1, out=d), buf._chunk.ctx, (), (buf._chunk.var,), 0, 0,
                            "autograd_seed")
    else:
        _copy_into(buf, g, _ADD)


def _zeros_of(node: Any, k: int) -> Any:
    from ..ndarray.ndarray import _new
    d = node.out_data[k]
    z = _new(d.shape, node.ctx, d.dtype)
    _fill(z, 0.0)
    return z
