"""The tape's nodes: one per recorded operator call, linked through ``NDArray._ag``.

An NDArray that takes part in differentiation carries ``_ag = (node, output_index)``:
``node`` is the ``TapeNode`` that computed it, or a ``Leaf`` for a variable marked with
``attach_grad``/``mark_variables``. A node keeps only what its backward needs: the
input arrays (whose own ``_ag`` link the graph), the raw output buffers and engine
variables, and the ``Operator`` instance of the call (stateful operators keep their
forward state there, as in MXNet). Nothing references an output NDArray, so the graph
dies with the last array that can reach it.

Recording is cheap on purpose: an operator call under ``record()`` whose inputs carry no
``_ag`` is not recorded at all (MXNet does the same), and a recorded call costs one
small object and a loop over its outputs.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..base import PlexnetError
from ..engine.base import FnProperty
from ..operator.contract import OpContext, OperatorProperty, OpReqType
from ..resource import get as _resources
from .bulk import pusher as _pusher
from .state import STATE

__all__ = [
    "Leaf",
    "OpNode",
    "SimpleNode",
    "TapeNode",
    "ViewNode",
    "check_inplace",
    "copy_into",
    "describe",
    "fill",
    "mark_variable",
    "record_op",
    "record_simple",
    "record_view",
    "small_prop",
]

_NULL, _WRITE, _ADD = OpReqType.null, OpReqType.write, OpReqType.add
_NO_BACKWARD_RESOURCE = OperatorProperty.backward_resource


def describe(arr: Any) -> str:
    """A short description of an array for error messages."""
    ag = getattr(arr, "_ag", None)
    where = ""
    if ag is not None:
        n = ag[0]
        where = " (a variable)" if isinstance(n, Leaf) else f" (output {ag[1]} of operator {n.name!r})"
    return f"NDArray of shape {tuple(arr.shape)} on {arr.context}{where}"


class Leaf:
    """A variable: where its gradient goes and how (``write`` / ``add``)."""

    __slots__ = ("__weakref__", "fresh", "grad", "req")
    name = "<variable>"
    freed = False

    def __init__(self, grad: Any, req: OpReqType) -> None:
        self.grad = grad
        self.req = req
        #: set when a backward wrote the gradient (gluon.Trainer's stale-gradient check)
        self.fresh = False


def mark_variable(arr: Any, grad: Any, req: OpReqType) -> None:
    """Make ``arr`` a variable whose gradient goes into ``grad`` (``req``: write / add /
    null); ``autograd.mark_variables`` and ``NDArray.attach_grad`` check the arguments."""
    arr._ag = (Leaf(grad, req), 0)


def grad_of(arr: Any) -> Any:
    """The gradient array of a variable (``NDArray.grad``), or None."""
    ag = arr._ag
    if ag is not None and isinstance(ag[0], Leaf):
        return ag[0].grad
    return None


class TapeNode:
    """A recorded call. Subclasses implement ``push_backward`` (and, where a
    differentiable gradient exists, are known to ``higher.py``)."""

    #: accepts ``backward.Ones`` placeholders among its output gradients
    takes_ones = False
    #: its ``push_backward`` pushes only through the tape's ``pusher`` (``bulk.py``), so a
    #: backward walk may collect its pushes into bulk operations; a node that pushes any
    #: other way (a hybridized graph's executor, user code) is preceded by a flush
    bulkable = False

    def own_grad(self, i: int) -> Any:
        """An array this node writes the gradient of argument ``i`` into anyway; the
        walk may use it as that gradient's buffer instead of a new one (None: no)."""
        return None

    __slots__ = ("__weakref__", "ctx", "freed", "inputs", "n_args", "name", "nvis", "out_chunks", "out_data")

    def __init__(self, name: str, inputs: Sequence[Any], n_args: int, outs: Sequence[Any]) -> None:
        self.name = name
        self.inputs = list(inputs)
        self.n_args = n_args
        self.out_data = [o._data for o in outs]
        # the chunks, not just their buffers: a dead chunk's storage and engine variable are recycled
        self.out_chunks = [o._chunk for o in outs]
        #: outputs that receive gradients (a hidden output such as BatchNorm's mean does not)
        self.nvis = len(outs)
        self.ctx = outs[0]._chunk.ctx if outs else inputs[0]._chunk.ctx
        self.freed = False

    def free(self) -> None:
        """Drop what backward needed (after a backward without ``retain_graph``)."""
        self.freed = True
        self.inputs = []
        self.out_data = []
        self.out_chunks = []

    def push_backward(self, out_grads: list, targets: list, is_train: bool) -> None:
        """Push the computation of the input gradients. ``out_grads`` holds one NDArray
        per visible output; ``targets[i]`` is ``(NDArray, req)`` for argument ``i`` or
        ``None`` when nobody needs that gradient."""
        raise NotImplementedError


def _grad_buffers(node: TapeNode, targets: list) -> tuple[list, list, list]:
    """Raw in_grad arrays, reqs and written engine vars for ``targets``. A gradient
    nobody needs gets a scratch buffer, allocated inside the pushed function
    (``_materialize``): private to that operation, it needs no engine variable."""
    ig, req, wv = [], [], []
    for i in range(node.n_args):
        t = targets[i]
        if t is None:
            d = node.inputs[i]._data
            ig.append((d.shape, d.dtype))
            req.append(_NULL)
        else:
            ig.append(t[0]._data)
            req.append(t[1])
            wv.append(t[0]._chunk.var)
    return ig, req, wv


def _materialize(ig: list, xp: Any) -> list:
    return [xp.empty(*a) if a.__class__ is tuple else a for a in ig]


_INLINE, _NORMAL = FnProperty.INLINE, FnProperty.NORMAL
#: element-wise gradients up to this size run on the calling thread, as nd's forward ones
INLINE_MAX_BYTES = int(os.environ.get("PLEXNET_INLINE_MAX_BYTES", 1 << 16))


def small_prop(nbytes: int, ctx: Any) -> FnProperty:
    """INLINE for small CPU element-wise work (cheaper than a worker hand-off)."""
    return _INLINE if nbytes <= INLINE_MAX_BYTES and ctx.device_type == "cpu" else _NORMAL


def fill(x: Any, value: float) -> None:
    """Push ``x[...] = value`` (a gradient buffer; ``x`` is an NDArray)."""
    d, ctx = x._data, x._chunk.ctx
    _pusher().push_sync(lambda rc: d.fill(value), ctx, (), (x._chunk.var,), small_prop(d.nbytes, ctx), 0,
                        "autograd_fill")


def copy_into(dst: Any, src: Any, req: OpReqType) -> None:
    """Push ``dst = src`` (``req`` write) or ``dst += src`` (add) between NDArrays."""
    d, s = dst._data, src._data
    if req == _ADD:
        def run(rc: Any) -> None:
            rc.xp.add(d, s, out=d)
    else:
        def run(rc: Any) -> None:
            d[...] = s
    ctx = dst._chunk.ctx
    _pusher().push_sync(run, ctx, (src._chunk.var,), (dst._chunk.var,), small_prop(d.nbytes, ctx), 0,
                        "autograd_accumulate")


class OpNode(TapeNode):
    """A call through an ``OperatorProperty``; backward is the operator's own."""

    __slots__ = ("op", "prop")
    bulkable = True

    def __init__(self, prop: Any, op: Any, inputs: Sequence[Any], n_args: int, outs: Sequence[Any],
                 nvis: int | None = None) -> None:
        TapeNode.__init__(self, prop.op_name, inputs, n_args, outs)
        self.prop = prop
        self.op = op
        self.nvis = prop.num_visible_outputs() if nvis is None else nvis

    def free(self) -> None:
        TapeNode.free(self)
        self.op = None

    def push_backward(self, out_grads: list, targets: list, is_train: bool) -> None:
        na, prop, ctx = self.n_args, self.prop, self.ctx
        ins = self.inputs
        og = [g._data for g in out_grads]
        reads = [g._chunk.var for g in out_grads]
        if len(ins) == na:
            # no auxiliary states (the common case): _grad_buffers and the inputs in one pass
            ig: list = []
            req: list = []
            writes: list = []
            ind = []
            for x, t in zip(ins, targets):
                d = x._data
                ind.append(d)
                reads.append(x._chunk.var)
                if t is None:
                    ig.append((d.shape, d.dtype))
                    req.append(_NULL)
                else:
                    b = t[0]
                    ig.append(b._data)
                    req.append(t[1])
                    writes.append(b._chunk.var)
            aux: list = []
        else:
            ig, req, wv = _grad_buffers(self, targets)
            ind = [x._data for x in ins[:na]]
            aux = [x._data for x in ins[na:]]
            reads += [x._chunk.var for x in ins[:na]]
            writes = wv + [x._chunk.var for x in ins[na:]]
        reads += [c.var for c in self.out_chunks]
        outd = self.out_data
        if type(prop).backward_resource is _NO_BACKWARD_RESOURCE:  # asks for nothing: skip the shapes
            requested: list = []
        else:
            requested = [_resources().request(ctx, r) for r in prop.backward_resource([x.shape for x in ins[:na]])]
            writes = writes + [r.var for r in requested]
        op = self.op
        if getattr(op, "is_async", False):
            def run_async(rc: Any, on_complete: Any) -> None:
                op.backward_async(OpContext(is_train, rc, requested), og, ind, outd, req, _materialize(ig, rc.xp),
                                  aux, on_complete)
            _pusher().push_async(run_async, ctx, reads, writes, _NORMAL, 0, f"{self.name}_backward")
        else:
            def run(rc: Any) -> None:
                op.backward(OpContext(is_train, rc, requested), og, ind, outd, req, _materialize(ig, rc.xp), aux)
            _pusher().push_sync(run, ctx, reads, writes, _NORMAL, 0, f"{self.name}_backward")


class SimpleNode(TapeNode):
    """A call on the SimpleOp fast path (NDArray arithmetic); backward calls the
    SimpleOp's gradient function with the call's scalar."""

    __slots__ = ("env", "sop")
    bulkable = True

    def __init__(self, sop: Any, env: Any, inputs: Sequence[Any], out: Any) -> None:
        TapeNode.__init__(self, sop.name, inputs, len(inputs), (out,))
        self.sop = sop
        self.env = env

    def push_backward(self, out_grads: list, targets: list, is_train: bool) -> None:
        sop, env = self.sop, self.env
        if sop.gradient is None:
            raise PlexnetError(f"operator {sop.name!r} has no gradient; it cannot be differentiated")
        ig, req, wv = _grad_buffers(self, targets)
        g = out_grads[0]
        kind = sop.grad_kind
        reads = [g._chunk.var]
        if kind == "out_value":
            extra: tuple = (self.out_data[0],)
            reads += [c.var for c in self.out_chunks]
        elif kind == "in_data":
            extra = tuple(x._data for x in self.inputs)
            reads += [x._chunk.var for x in self.inputs]
        else:
            extra = ()
        gd, fn = g._data, sop.gradient
        if sop.nin == 1:
            def run(rc: Any) -> None:
                g0 = ig[0]
                fn(gd, *extra, env, rc.xp.empty(*g0) if g0.__class__ is tuple else g0, req[0], rc)
        else:
            def run(rc: Any) -> None:
                g0, g1 = _materialize(ig, rc.xp)
                fn(gd, *extra, env, g0, g1, req[0], req[1], rc)
        _pusher().push_sync(run, self.ctx, reads, wv, small_prop(gd.nbytes, self.ctx), 0, self.name + "_backward")


def record_op(prop: Any, op: Any, inputs: Sequence[Any], n_args: int, outs: Sequence[Any],
              nvis: int | None = None) -> None:
    """Record a generic operator call (called by ``nd`` while recording; ``nvis``: the
    property's ``num_visible_outputs()`` when the caller knows it)."""
    for x in inputs:
        if x._ag is not None:
            break
    else:
        return
    node = OpNode(prop, op, inputs, n_args, outs, nvis)
    for i, o in enumerate(outs):
        o._ag = (node, i)


def record_simple(sop: Any, env: Any, inputs: Sequence[Any], out: Any) -> None:
    """Record a SimpleOp fast-path call (arithmetic)."""
    for x in inputs:
        if x._ag is not None:
            break
    else:
        return
    out._ag = (SimpleNode(sop, env, inputs, out), 0)


def check_inplace(arr: Any, op_name: str, inputs: Sequence[Any] = ()) -> None:
    """Refuse an in-place write into an array that is part of a recorded graph while
    recording (its old value may be needed by backward), as MXNet does; and, with
    ``inputs``, an operation that reads and writes ``arr`` and is recorded because another
    input is in the graph (MXNet: ``x += y``, ``x[0] = y[0]`` with ``y`` recorded)."""
    if STATE.recording and arr._ag is not None:
        raise PlexnetError(
            f"{op_name}: in-place write into {describe(arr)} while recording; the array is part of the "
            f"computational graph and backward may need its current value. Write into a new array, or do "
            f"this outside autograd.record() (after backward)")
    if STATE.recording and any(x is arr for x in inputs) and \
            any(getattr(x, "_ag", None) is not None for x in inputs if x is not arr):
        raise PlexnetError(
            f"{op_name}: Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with "
            f"autograd: {describe(arr)} is both read and written by an operation that is recorded")


class ViewNode(TapeNode):
    """A view taken under recording (``reshape``, basic indexing) or an advanced-index
    copy: its gradient is the output gradient reshaped, or scattered into zeros at the
    indexed places (accumulating repeated indices for advanced keys)."""

    __slots__ = ("adv", "key")
    bulkable = True

    def __init__(self, src: Any, out: Any, key: Any, adv: bool = False, name: str | None = None) -> None:
        TapeNode.__init__(self, name or ("reshape" if key is None else "getitem"), (src,), 1, (out,))
        self.key = key
        self.adv = adv

    def push_backward(self, out_grads: list, targets: list, is_train: bool) -> None:
        t = targets[0]
        if t is None:
            return
        g = out_grads[0]
        gd, dst, req, key, adv = g._data, t[0]._data, t[1], self.key, self.adv
        if key is None:
            def run(rc: Any) -> None:
                v = gd.reshape(dst.shape)
                if req == _ADD:
                    rc.xp.add(dst, v, out=dst)
                else:
                    dst[...] = v
        else:
            def run(rc: Any) -> None:
                if req != _ADD:
                    dst.fill(0)
                if adv:
                    _scatter_add(rc.xp, dst, key, gd)
                else:
                    dst[key] += gd
        _pusher().push_sync(run, self.ctx, (g._chunk.var,), (t[0]._chunk.var,), small_prop(gd.nbytes, self.ctx), 0,
                            f"{self.name}_backward")


def _scatter_add(xp: Any, dst: Any, key: Any, value: Any) -> None:
    """``dst[key] += value`` with repeated indices accumulated (numpy's ``add.at``)."""
    at = getattr(getattr(xp, "add", None), "at", None)
    if at is not None:
        at(dst, key, value)
    else:  # CuPy without ufunc.at
        import cupyx  # type: ignore[import-not-found]
        cupyx.scatter_add(dst, key, value)


def record_view(src: Any, out: Any, key: Any, advanced: bool = False, name: str | None = None) -> Any:
    """Record ``out``, a view of ``src`` (``key`` None: a reshape; else the basic
    index), or with ``advanced`` the copy ``src[key]`` of advanced indexing. A whole copy
    (``copyto``, ``astype``: ``key`` None and ``name`` given) is recorded as a reshape of
    the same shape: its gradient is the output gradient, cast to the source's dtype."""
    if src._ag is not None:
        out._ag = (ViewNode(src, out, key, advanced, name), 0)
    return out
