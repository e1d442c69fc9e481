"""The cached graph of a hybridized block (MXNet's ``CachedOp``) on plexnet's executor.

The traced Symbol is bound once per *signature* (context, input shapes and dtypes,
which inputs need gradients, recording or not) with ``Executor.bind``: the parameter
arrays are bound directly (no copy), inputs are copied into the executor's own input
arrays, and the executor brings shape inference, memory planning, in-place reuse and
bulked engine segments. A call pushes: the input copies, the forward segments, a copy
of each output (results stay valid across calls).

Under ``autograd.record()`` the whole call is one tape node (``CachedNode``): its
backward hands the output gradients to the executor's backward and copies the
gradients it computed into whatever the tape asks for (a parameter's gradient array,
``add`` or ``write``), in one engine operation. An executor whose forward values are
still needed by a pending backward is *busy*; a call meanwhile binds a second one (with
its own memory), so interleaved calls under one ``record()`` stay correct.
"""
from __future__ import annotations

import weakref
from typing import Any, Sequence

import numpy as np

from ..autograd.backward import Ones
from ..tape import STATE, TapeNode, small_prop
from ..base import PlexnetError
from ..engine import get as _engine
from ..engine.base import FnProperty
from ..executor import Executor
from ..ndarray import NDArray
from ..ndarray import ndarray as _nd
from ..operator.contract import OpReqType
from .parameter import Parameter

__all__ = ["CachedGraph", "CachedNode"]

_ADD = OpReqType.add
#: order a call's input copies after pending writes to the block's parameters (see
#: ``CachedGraph.__call__``); a switch for benchmarks comparing both orders
ORDER_COPIES_AFTER_PARAMS = True


def _infer_from(sym: Any, names: list[str], args: list) -> tuple[dict, dict]:
    """Argument and aux shapes / dtypes of ``sym`` from its inputs' arrays."""
    shapes = {n: tuple(a.shape) for n, a in zip(names, args) if a is not None}
    arg_s, _, aux_s = sym.infer_shape_partial(**shapes)
    sdict = dict(zip(sym.list_arguments(), arg_s))
    sdict.update(zip(sym.list_auxiliary_states(), aux_s))
    dtypes = {n: np.dtype(a.dtype) for n, a in zip(names, args) if a is not None}
    try:
        arg_t, _, aux_t = sym.infer_type_partial(**dtypes)
        tdict = dict(zip(sym.list_arguments(), arg_t))
        tdict.update(zip(sym.list_auxiliary_states(), aux_t))
    except Exception:  # noqa: BLE001 - dtype inference is best effort here
        tdict = {}
    return sdict, tdict


class _Bound:
    """One bound executor and what it was bound to."""

    __slots__ = ("exe", "in_arrays", "params", "grad_of", "node_ref")

    def __init__(self, exe: Executor, in_arrays: list, params: tuple, grad_of: list) -> None:
        self.exe = exe
        self.in_arrays = in_arrays
        self.params = params          # the parameter arrays bound (identity checked per call)
        self.grad_of = grad_of        # per argument: the executor's gradient array or None
        self.node_ref: Any = None

    def busy(self) -> bool:
        ref = self.node_ref
        if ref is None:
            return False
        n = ref()
        return n is not None and not n.freed


class CachedGraph:
    """Binds and runs the traced graph of a block."""

    def __init__(self, block: Any, inputs: Sequence[Any], out: Any) -> None:
        self.sym = out
        self.input_names = [s.name for s in inputs]
        params = {p.name: p for p in block.collect_params().values()}
        pos = {n: i for i, n in enumerate(self.input_names)}
        self.arg_slots: list[tuple[str, Any]] = []
        for n in out.list_arguments():
            if n in pos:
                self.arg_slots.append(("in", pos[n]))
            elif n in params:
                self.arg_slots.append(("param", params[n]))
            else:
                raise PlexnetError(f"hybridized graph of {block.name!r}: input {n!r} is neither a data input "
                                   f"({', '.join(self.input_names)}) nor a parameter of the block")
        self.aux_params: list[Parameter] = []
        for n in out.list_auxiliary_states():
            if n not in params:
                raise PlexnetError(f"hybridized graph of {block.name!r}: auxiliary state {n!r} is not a parameter")
            self.aux_params.append(params[n])
        self.params = [p for k, p in self.arg_slots if k == "param"] + self.aux_params
        self.n_arg_params = len(self.params) - len(self.aux_params)
        self._bound: dict[tuple, list[_Bound]] = {}
        self._hook = getattr(block, "_op_hook", None)

    def _finish_init(self, args: Sequence[NDArray]) -> None:
        pending = [p for p in self.params if p._data is None]
        if not pending:
            return
        if any(not p._deferred_init for p in pending):
            for p in pending:
                p.data()  # raises the parameter's own error
        sdict, tdict = _infer_from(self.sym, self.input_names, list(args))
        for p in pending:
            if sdict.get(p.name) is not None:
                p.shape = sdict[p.name]
            if tdict.get(p.name) is not None:
                p.dtype = tdict[p.name]
            p._finish_deferred_init()

    def _bind(self, ctx: Any, args: Sequence[NDArray], need: tuple, recording: bool, pdata: tuple,
              pgrad: tuple, shared: Executor | None) -> _Bound:
        in_arrays = [_nd.empty(a.shape, ctx, a.dtype) for a in args]
        arg_arrays, grads, reqs = [], [], []
        k = 0
        for kind, v in self.arg_slots:
            if kind == "in":
                arg_arrays.append(in_arrays[v])
                g = need[v]
            else:
                arg_arrays.append(pdata[k])
                direct = pgrad[k] if k < len(pgrad) else None
                k += 1
                g = recording and v.grad_req != "null"
                if direct is not None:  # the parameter's own gradient array: no copy after backward
                    grads.append(direct)
                    reqs.append("write")
                    continue
            a = arg_arrays[-1]
            grads.append(_nd.zeros(a.shape, ctx, a.dtype) if g else None)
            reqs.append("write" if g else "null")
        aux = list(pdata[k:])
        exe = Executor.bind(self.sym, ctx, arg_arrays, grads if any(r != "null" for r in reqs) else None, reqs,
                            aux, shared_exec=shared)
        if self._hook is not None:
            cb, monitor_all = self._hook
            ops = {n.name: n.op for n in self.sym._topo() if n.op is not None}

            def monitor(name: str, arr: NDArray) -> None:
                # MXNet 1.9.1 passes the entry's name: '<node>_output', '<node>_<input>';
                # a graph variable's own entry (the executor's monitor reports those too) is
                # not an operator's and MXNet's CachedOp hook leaves it out
                node = next((n for n in ops if name.startswith(n + "_")), None)
                if node is not None:
                    cb(name, ops[node], arr)
            exe._monitor_vars = False  # MXNet's CachedOp hook does not report variables
            exe.set_monitor_callback(monitor, monitor_all)
        return _Bound(exe, in_arrays, pdata + pgrad, grads)

    def __call__(self, args: Sequence[NDArray]) -> list[NDArray]:
        if len(args) != len(self.input_names):
            raise ValueError(f"hybridized block takes {len(self.input_names)} inputs, got {len(args)}")
        ctx = args[0].context
        for p in self.params:
            if p._data is None:
                self._finish_init(args)
                break
        recording = STATE.recording
        need = tuple(recording and a._ag is not None for a in args)
        key = (ctx, tuple((a.shape, a._data.dtype) for a in args), need, recording)
        pdata = tuple(p.data(ctx) for p in self.params)
        # recording: parameters with grad_req 'write' have the executor write their gradient arrays
        pgrad = tuple(p.grad(ctx) if p.grad_req == "write" and p._grad_stype == "default" else None
                      for p in self.params[:self.n_arg_params]) \
            if recording else ()
        ident = pdata + pgrad
        lst = self._bound.setdefault(key, [])
        b = free_bound(lst, ident)
        if b is None:
            lst[:] = [c for c in lst if _same(c.params, ident)]
            # no memory sharing: the busy executor's values are still needed
            b = self._bind(ctx, args, need, recording, pdata, pgrad, None)
            lst.append(b)
        # The input copies also wait for pending writes to the parameters (an optimizer
        # update): the forward waits for those anyway, and so the update and the copy do
        # not become ready together when the previous backward ends (which would wake a
        # second engine worker for a few microseconds of work and, with it, halve the
        # BLAS threads of the GEMMs that start meanwhile).
        after = tuple(d._chunk.var for d in pdata[:self.n_arg_params]) if ORDER_COPIES_AFTER_PARAMS else ()
        for src, dst in zip(args, b.in_arrays):
            if src._chunk.ctx is ctx or src._chunk.ctx == ctx:
                _copy(src, dst, False, after)
            else:
                src.copyto(dst)
        exe = b.exe
        exe.forward(is_train=STATE.training)
        outs = []
        for o in exe.outputs:  # copies: results stay valid across calls
            c = _nd.empty(o.shape, ctx, o.dtype)
            _copy(o, c, False)
            outs.append(c)
        if recording:
            inputs: list = []
            grads: list = []
            direct: list = []
            k = 0
            for (kind, v), g in zip(self.arg_slots, b.grad_of):
                if kind == "in":
                    if need[v]:
                        inputs.append(args[v])
                        grads.append(g)
                        direct.append(False)
                else:
                    if g is not None:
                        inputs.append(pdata[k])
                        grads.append(g)
                        direct.append(g is pgrad[k])
                    k += 1
            if inputs:
                node = CachedNode(b, inputs, grads, direct, outs)
                for i, o in enumerate(outs):
                    o._ag = (node, i)
                b.node_ref = weakref.ref(node)
        return outs


def free_bound(bound: list, ident: tuple) -> Any:
    """The first executor of ``bound`` that no pending backward still needs and that was
    bound to the arrays ``ident``, or None."""
    for cand in bound:
        if not cand.busy() and _same(cand.params, ident):
            return cand
    return None


def _same(a: tuple, b: tuple) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is not y:
            return False
    return True


class CachedNode(TapeNode):
    """The tape node of one hybridized call."""

    __slots__ = ("bound", "direct", "grads")

    def __init__(self, bound: _Bound, inputs: list, grads: list, direct: list, outs: list) -> None:
        TapeNode.__init__(self, "_CachedOp", inputs, len(inputs), outs)
        self.bound = bound
        self.grads = grads
        #: per input: the executor writes this parameter's own gradient array
        self.direct = direct

    def free(self) -> None:
        TapeNode.free(self)
        self.grads = []

    takes_ones = True

    def own_grad(self, i: int) -> Any:
        # the executor's gradient array: valid until this executor's next backward,
        # which the engine orders after every reader
        if i < len(self.grads) and not self.direct[i]:
            return self.grads[i]
        return None

    def push_backward(self, out_grads: list, targets: list, is_train: bool) -> None:
        exe = self.bound.exe
        # a parameter gradient the executor overwrites but the tape wants elsewhere, or
        # added to an earlier contribution: keep its current value aside first
        saved = []
        for g, t, d in zip(self.grads, targets, self.direct):
            if d and not (t is not None and t[0] is g and t[1] != _ADD):
                tmp = _nd.empty(g.shape, g.context, g.dtype)
                _copy(g, tmp, False)
                saved.append((g, tmp, t))
        if all(g.__class__ is Ones for g in out_grads):
            exe.backward(is_train=is_train)  # the executor's head gradients are ones already
        else:
            exe.backward([g.materialize() if g.__class__ is Ones else g for g in out_grads], is_train=is_train)
        for g, tmp, t in saved:
            if t is not None and t[0] is g:  # add to the earlier contribution
                _copy(tmp, g, True)
                continue
            if t is not None:
                _copy(g, t[0], t[1] == _ADD)
            _copy(tmp, g, False)  # the parameter's gradient as it was
        todo = [(g, t) for g, t, d in zip(self.grads, targets, self.direct)
                if t is not None and t[0] is not g and not d]
        if not todo:
            return
        pairs = [(g._data, t[0]._data, t[1] == _ADD) for g, t in todo]
        reads = [g._chunk.var for g, _t in todo]
        writes = [t[0]._chunk.var for _g, t in todo]

        def run(rc: Any) -> None:
            xp = rc.xp
            for src, dst, add in pairs:
                if add:
                    xp.add(dst, src, out=dst)
                else:
                    dst[...] = src
        _engine().push_sync(run, self.ctx, reads, writes, FnProperty.NORMAL, 0, "_CachedOp_grads")


def _copy(src: NDArray, dst: NDArray, add: bool, after: tuple = ()) -> None:
    """``dst (+)= src`` on one device, also ordered after writes to the variables
    ``after``; small CPU copies run inline (no worker hand-off)."""
    s, d = src._data, dst._data
    ctx = dst._chunk.ctx

    def run(rc: Any) -> None:
        if add:
            rc.xp.add(d, s, out=d)
        else:
            d[...] = s
    _engine().push_sync(run, ctx, (src._chunk.var,) + after, (dst._chunk.var,), small_prop(d.nbytes, ctx), 0,
                        "_CachedOp_copy")
