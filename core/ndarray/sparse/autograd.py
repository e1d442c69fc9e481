"""Sparse arrays under ``autograd.record()`` (MXNet 1.9.1 semantics, docs/sparse.md "Autograd").

Forward results keep MXNet's storage types while recording: an operator with a sparse
argument runs its sparse kernel, unrecorded, for the result, and the same operator on
dense copies of the arguments, recorded, for the gradient. ``StorageNode`` links the two
(and a sparse argument to its dense copy): its gradient is the output gradient, so the
tape only ever carries dense gradient buffers, as MXNet's backward, whose operators on
sparse inputs fall back to dense (the values agree: tests/sparse/test_autograd_sparse*.py).

A variable whose gradient array is sparse (``attach_grad(stype=...)``, a Gluon parameter
with ``grad_stype='row_sparse'``) has its contributions gathered densely by the backward
walk and stored by ``store_sparse`` after it, as MXNet stores them:

* a row_sparse gradient whose every contribution comes from an operator with a sparse
  backward (``dot(csr, w)``: the columns ``csr`` stores; ``Embedding(sparse_grad=True)``
  and ``contrib.SparseEmbedding``: the looked-up rows) holds exactly those rows, zero or
  not (the union of them for several contributions);
* otherwise (a dense contribution, a csr gradient) the summed dense gradient is cast to
  the buffer's storage type, keeping the non-zero rows / entries (MXNet's storage fallback
  ``cast_storage``).

Nothing here runs until the first sparse array exists or a sparse gradient is attached:
the dense imperative path pays no more than before.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from ...engine.base import FnProperty
from ...operator.contract import OpReqType
from ...tape import STATE as _AG, Leaf, TapeNode, copy_into
from ...tape.bulk import pusher
from .. import ndarray as _nd
from ..ndarray import NDArray, _new
from . import kernels as K
from .base import BaseSparseNDArray, RowSparseNDArray, host, new_rsp, plug

__all__ = ["CsrDotNode", "StorageNode", "dense_input", "in_graph", "deferrable", "link", "recorded", "RECORDERS",
           "retain_dense", "row_hint", "store_sparse", "ROW_HINTS"]

#: recorded dense node -> {argument index: what its sparse backward keeps} (``row_hint``)
ROW_HINTS: "weakref.WeakKeyDictionary[TapeNode, dict[int, tuple]]" = weakref.WeakKeyDictionary()

_ADD = OpReqType.add
_NORMAL = FnProperty.NORMAL


class _Spec:
    """The shape and dtype of a node's output, for a zero output gradient (``_zeros_of``)
    without reading a sparse array's dense view."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape = tuple(shape)
        self.dtype = dtype


class SparseTapeNode(TapeNode):
    """A tape node with one recorded argument and one output, set up without
    ``TapeNode.__init__`` (which reads the outputs' raw buffers, a sparse array's dense
    copy); its gradient buffer has the argument's shape and dtype."""

    __slots__ = ("arg_dtype", "arg_shape")

    def _setup(self, name: str, arg: NDArray, out: NDArray) -> None:
        self.name = name
        self.inputs = [arg]
        self.n_args = 1
        self.out_data = [_Spec(out.shape, out.dtype)]
        self.out_chunks = []
        self.nvis = 1
        self.ctx = out.context
        self.freed = False
        self.arg_shape = tuple(arg.shape)
        self.arg_dtype = np.dtype(arg.dtype)

    def own_grad(self, i: int) -> Any:
        return _new(self.arg_shape, self.ctx, self.arg_dtype)


class StorageNode(SparseTapeNode):
    """``out`` holds ``src``'s values in another storage type (``cast_storage``, a sparse
    result linked to the recorded dense computation of its values, the dense copy of a
    sparse argument): the gradient of ``src`` is ``out``'s gradient, dense."""

    __slots__ = ()
    bulkable = True

    def __init__(self, src: NDArray, out: NDArray, name: str) -> None:
        self._setup(name, src, out)

    def push_backward(self, out_grads: list, targets: list, is_train: bool) -> None:
        t = targets[0]
        if t is not None:
            copy_into(t[0], out_grads[0], t[1])


def link(src: NDArray, out: NDArray, name: str) -> NDArray:
    """Give ``out`` (``src``'s values, computed unrecorded) ``src``'s place in the graph."""
    if src._ag is not None:
        out._ag = (StorageNode(src, out, name), 0)
    return out


def dense_input(a: Any) -> Any:
    """A sparse argument as the dense array a recorded operator reads (linked to it);
    anything else unchanged."""
    if isinstance(a, BaseSparseNDArray):
        d = a._dense()
        return link(a, d, "cast_storage") if a._ag is not None else d
    return a


def in_graph(args: tuple, kwargs: dict[str, Any]) -> bool:
    """Whether an argument is part of a recorded graph (only then is a call recorded)."""
    for a in args:
        if getattr(a, "_ag", None) is not None:
            return True
    return any(getattr(v, "_ag", None) is not None for v in kwargs.values())


def recorded(name: str, fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any],
             impl: Callable[..., Any] | None) -> Any:
    """``nd.<name>`` while recording, with a sparse argument and an argument in the graph:
    the result in MXNet's storage type, its gradient through the dense operator."""
    res: Any = NotImplemented
    if impl is not None:
        prev, _AG.recording = _AG.recording, False
        try:
            res = impl(fn, *args, **kwargs)
        finally:
            _AG.recording = prev
    rec = _csr_dot_node if name == "dot" else RECORDERS.get(name)
    if rec is not None and isinstance(res, NDArray):
        node = rec(res, args, kwargs, name)
        if node is not None:  # one node of the call with its own backward (no dense twin)
            res._ag = (node, 0)
            return res
    dense = fn(*(dense_input(a) for a in args), **{k: dense_input(v) for k, v in kwargs.items()})
    if name == "dot":
        _hint_dot(dense, args, kwargs)
    if isinstance(res, BaseSparseNDArray) and isinstance(dense, NDArray):
        return link(dense, res, name)
    return dense


class CsrDotNode(SparseTapeNode):
    """``dot(csr, w)`` / ``dot(csr.T, w)`` with a constant csr (a sparse linear model's data):
    the gradient of ``w`` (``csr.T @ dy``, ``csr @ dy``) is computed from the compact arrays in
    one engine operation, as MXNet's sparse backward: no dense copy of the csr is made."""

    __slots__ = ("csr", "ta")
    bulkable = True

    def __init__(self, csr: Any, rhs: NDArray, out: NDArray, transpose_a: bool) -> None:
        self._setup("_sparse_dot", rhs, out)
        self.csr = csr
        self.ta = transpose_a

    def free(self) -> None:
        TapeNode.free(self)
        self.csr = None

    def push_backward(self, out_grads: list, targets: list, is_train: bool) -> None:
        t = targets[0]
        if t is None:
            return
        buf, req = t
        g, csr = out_grads[0], self.csr
        parts = (csr.data, csr.indices, csr.indptr)
        d, i, p = (x._data for x in parts)
        gd, bd, nrows, ta = g._data, buf._data, csr.shape[0], self.ta

        def run(rc: Any) -> None:
            if ta:  # d(csr.T @ w)/dw: csr @ dy
                r = K.csr_matmul(d, i, p, gd, nrows)
                if req == _ADD:
                    np.add(bd, r, out=bd)
                else:
                    bd[...] = r
                return
            v, keep = K.csr_t_matmul(d, i, p, gd)  # only the columns csr stores
            if req != _ADD:
                bd.fill(0)
            bd[keep] += v
        pusher().push_sync(run, self.ctx, [g._chunk.var] + [x._chunk.var for x in parts], [buf._chunk.var],
                           _NORMAL, 0, "_sparse_dot_backward")


#: operator name -> ``f(result, args, kwargs, name)`` making the tape node of a call whose
#: sparse argument has a backward of its own (``embedding.py``), or None: the generic path
RECORDERS: dict[str, Callable[..., Any]] = {}


def _csr_dot_node(res: NDArray, args: tuple, kwargs: dict[str, Any], name: str = "dot") -> CsrDotNode | None:
    """The tape node of ``dot(csr, w)`` when only ``w`` is in the graph, on the CPU (else None:
    the generic path)."""
    if len(args) > 2 or kwargs.get("transpose_b") or isinstance(res, BaseSparseNDArray) and res.stype != \
            "row_sparse":
        return None
    lhs: Any = args[0] if args else kwargs.get("lhs")
    rhs: Any = args[1] if len(args) > 1 else kwargs.get("rhs")
    if getattr(lhs, "stype", "") != "csr" or lhs._ag is not None or not isinstance(rhs, NDArray) or \
            rhs._ag is None or rhs.ndim != 2 or lhs.context.device_type != "cpu" or \
            any(getattr(v, "_ag", None) is not None for k, v in kwargs.items() if k not in ("lhs", "rhs")):
        return None
    ta = bool(kwargs.get("transpose_a", False))
    node = CsrDotNode(lhs, rhs, res, ta)
    if not ta:
        ROW_HINTS[node] = {0: ("cols", lhs)}
    return node


def retain_dense(data: BaseSparseNDArray, idx: np.ndarray) -> NDArray:
    """``retain``'s values computed densely and recorded: ``data`` times a row mask."""
    mask = np.zeros((data.shape[0],) + (1,) * (data.ndim - 1), dtype=np.dtype(data.dtype))
    mask[np.asarray(idx, np.int64).reshape(-1)] = 1
    return dense_input(data) * _nd.array(mask, ctx=data.context)  # type: ignore[no-any-return]


def _hint_dot(dense: Any, args: tuple, kwargs: dict[str, Any]) -> None:
    """``dot(csr, w)``: MXNet's backward ``dot(csr.T, dy)`` is row_sparse, holding a row for
    every column ``csr`` stores (even where the value is zero)."""
    lhs = args[0] if args else kwargs.get("lhs")
    if kwargs.get("transpose_a") or kwargs.get("transpose_b") or len(args) > 2:
        return
    if lhs is not None and getattr(lhs, "stype", "") == "csr" and getattr(dense, "_ag", None) is not None:
        ROW_HINTS[dense._ag[0]] = {1: ("cols", lhs)}


_SPARSE_GRAD_OPS = ("Embedding", "_contrib_SparseEmbedding", "SparseEmbedding")


def row_hint(node: Any, i: int) -> tuple | None:
    """What the sparse backward of ``node`` keeps of argument ``i``'s gradient, or None
    when MXNet computes that gradient densely."""
    h = ROW_HINTS.get(node)
    if h is not None:
        return h.get(i)
    prop = getattr(node, "prop", None)
    if i == 1 and prop is not None and prop.op_name in _SPARSE_GRAD_OPS and \
            getattr(prop.param, "sparse_grad", False) and node.inputs:
        return ("take", node.inputs[0], int(prop.param.input_dim))
    return None


def deferrable(node: Any, i: int, producer: Any) -> tuple[Any, tuple[int, int], tuple] | None:
    """Whether argument ``i`` of ``node`` (whose gradient goes to the array ``producer`` made,
    a variable or a storage cast) is a row_sparse contribution that can be computed from its
    rows after the walk: ``dot(csr, w)``, ``Embedding(sparse_grad=True)`` into a variable with
    a row_sparse gradient array (possibly through storage casts, e.g. ``row_sparse_data``).
    Returns (the variable's Leaf, its gradient key, the row hint) or None."""
    if node.__class__ is StorageNode:
        return None
    p, k = producer, 0
    while p.__class__ is StorageNode:
        ag = p.inputs[0]._ag if p.inputs else None
        if ag is None:
            return None
        p, k = ag
    # the cheap tests first: this runs for every variable of a dense graph once sparse arrays exist
    if p.__class__ is not Leaf or p.req == OpReqType.null or not isinstance(p.grad, RowSparseNDArray):
        return None
    hint = row_hint(node, i)
    return None if hint is None else (p, (id(p), k), hint)


def _rows_vals(hint: tuple, og: NDArray) -> tuple[np.ndarray, np.ndarray]:
    """A deferred contribution's stored rows and their values (unique, ascending rows)."""
    g = host(og)
    if hint[0] == "cols":  # dot(csr, w): csr.T @ dy over the columns csr stores
        csr = hint[1]
        v, keep = K.csr_t_matmul(host(csr.data), host(csr.indices), host(csr.indptr), g)
        return keep, v
    idx = np.clip(host(hint[1]).astype(np.int64).reshape(-1), 0, hint[2] - 1)  # Embedding: the looked-up rows
    if idx.size == 0:
        return np.zeros(0, K.IDX), np.zeros((0, g.shape[-1]), g.dtype)
    order = np.argsort(idx, kind="stable")  # a segment sum of dy (data.shape + (output_dim,)) per row
    sidx = idx[order]
    starts = np.flatnonzero(np.concatenate(([True], sidx[1:] != sidx[:-1])))
    vals = np.add.reduceat(g.reshape(-1, g.shape[-1])[order], starts, axis=0)
    return sidx[starts].astype(K.IDX), vals


def _rows(hint: tuple) -> np.ndarray:
    if hint[0] == "union":  # passed through storage casts (backward.py)
        return np.unique(np.concatenate([_rows(h) for h in hint[1]])).astype(K.IDX)
    if hint[0] == "cols":
        return np.unique(host(hint[1].indices)).astype(K.IDX)
    idx = np.clip(host(hint[1]).astype(np.int64).reshape(-1), 0, hint[2] - 1)
    return np.unique(idx).astype(K.IDX)


def store_sparse(leaf: Any, dense: NDArray | None, hints: list, deferred: Any = (), into: Any = None) -> Any:
    """``leaf.grad`` (a sparse array) takes the gathered dense gradient ``dense`` (None: no
    dense contribution) plus the ``deferred`` row contributions (``deferrable``): written, or
    added for ``grad_req='add'`` (MXNet 1.9.1 refuses 'add' for sparse gradients). With
    ``into`` (``autograd.grad``): a new array of ``leaf.grad``'s storage type is returned
    instead and the variable is left alone."""
    g = leaf.grad
    add = leaf.req == _ADD and into is None
    parts = [_rows_vals(h, og) for h, og in deferred]
    if isinstance(g, RowSparseNDArray) and (dense is None or (hints and all(h is not None for h in hints))):
        if dense is not None:
            rows = np.unique(np.concatenate([_rows(h) for h in hints])).astype(K.IDX)
            parts.append((rows, host(dense)[rows]))
        if add:
            parts.append((host(g.indices), host(g.data)))
        if len(parts) == 1:  # the common case: one contribution, its rows already unique and sorted
            rows, vals = parts[0][0].astype(K.IDX, copy=False), parts[0][1]
        else:
            rows = np.unique(np.concatenate([r for r, _v in parts])).astype(K.IDX) if parts else np.zeros(0, K.IDX)
            vals = np.zeros((rows.shape[0],) + tuple(g.shape[1:]), np.dtype(g.dtype))
            for r, v in parts:
                vals[np.searchsorted(rows, r)] += v  # each part's rows are unique
        res: Any = new_rsp(vals, rows, g.shape, g.context, g.dtype)
        if into is not None:
            return res
        g._assign(res)
    else:  # the summed dense gradient, cast keeping the non-zero rows / entries
        d = host(dense).copy() if dense is not None else np.zeros(g.shape, np.dtype(g.dtype))
        for r, v in parts:
            d[r] += v  # each part's rows are unique
        if add:
            d += g.asnumpy()
        res = _nd.array(d, ctx=g.context, dtype=g.dtype)
        if into is not None:
            return res.tostype(g.stype)
        g[:] = res
    leaf.fresh = True
    return g


def _record_copy(src: BaseSparseNDArray, res: BaseSparseNDArray) -> None:
    if _AG.recording:
        link(src, res, "_copy")


def _dense_arg(a: BaseSparseNDArray) -> NDArray:
    return dense_input(a) if _AG.recording else a._dense()  # type: ignore[no-any-return]


def _record_fn(src: BaseSparseNDArray, res: NDArray, f: Callable[[NDArray], NDArray], name: str) -> None:
    """``res = f(src)`` computed unrecorded on the compact arrays: its gradient goes through
    ``f`` on ``src``'s dense copy, recorded."""
    if _AG.recording:
        link(f(dense_input(src)), res, name)


plug(record_copy=_record_copy, dense_arg=_dense_arg, record_fn=_record_fn)
