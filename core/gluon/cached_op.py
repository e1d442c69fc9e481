"""``mx.nd.CachedOp(sym, flags)``: a Symbol run imperatively on NDArrays (MXNet's CachedOp).

Built on what a hybridized block uses (``gluon/cached.py``): the graph is bound with
``Executor.bind`` once per signature (context, input shapes and dtypes, which inputs need
gradients, recording or not) and reused. Inputs are given in ``sym.list_inputs()`` order
(arguments and auxiliary states as the graph reaches them), as in MXNet:

* arguments listed in the ``param_indices`` flag are bound directly (identity checked per
  call: another array rebinds); every other argument (MXNet's default: all of them are
  ``data_indices``) is copied into the executor's own array;
* auxiliary states are bound directly, so a training call updates the caller's arrays
  (BatchNorm's moving statistics), as MXNet's CachedOp does.

Under ``autograd.record()`` a call is one tape node (``CachedNode``): the executor's
backward computes the gradients of the inputs that carry autograd information and hands
them to the tape. ``flags`` are MXNet's ``CachedOpConfig`` (unknown names raise, as there);
``static_alloc``/``static_shape``/bulk sizes are accepted: plexnet's executor always
allocates statically.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Sequence

from ..autograd import pause
from ..tape import STATE
from ..base import PlexnetError
from ..executor import Executor
from ..ndarray import NDArray
from ..ndarray import ndarray as _nd
from ..operator.params import Field, ParamError, Params, Shape
from ..symbol import load_json
from .cached import CachedNode, _Bound, _copy, free_bound

__all__ = ["CachedOp", "CachedOpConfig", "cached_op_call"]


class CachedOpConfig(Params):
    """MXNet 1.9.1's ``CachedOpConfig`` (the ``flags`` of ``CachedOp``)."""

    static_alloc = Field(bool, default=False, doc="Statically allocate memory to improve speed.")
    static_shape = Field(bool, default=False, doc="Optimize for invariant input shapes between iterations.")
    inline_limit = Field(int, default=2, low=0, doc="Maximum number of operators that can be inlined.")
    forward_bulk_size = Field(int, default=15, low=0, doc="Segment size of bulk execution during forward pass.")
    backward_bulk_size = Field(int, default=15, low=0, doc="Segment size of bulk execution during backward pass.")
    data_indices = Field(Shape, default=(), doc="Position of argument variables.")
    param_indices = Field(Shape, default=(), doc="Position of parameters.")
    subgraph = Field(str, default="", doc="JSON string of a subgraph.")
    is_dynamic = Field(bool, default=False, doc="Whether the graph contains dynamic shape operators.")


class CachedOp:
    """Run ``sym`` on NDArrays: ``CachedOp(sym, flags)(*inputs, out=None)``."""

    def __init__(self, sym: Any, flags: Sequence[tuple[str, Any]] = ()) -> None:
        self.sym = sym
        cfg: Any = CachedOpConfig.parse("CachedOp", {key: val for key, val in flags})
        self.config = cfg
        names = sym.list_inputs()
        n = len(names)
        data_idx, param_idx = list(cfg.data_indices), list(cfg.param_indices)
        for i in data_idx + param_idx:
            if not 0 <= i < n:
                raise ParamError(f"CachedOp: input index {i} in data_indices/param_indices is out of range: the "
                                 f"symbol has {n} inputs ({', '.join(names)})")
        if (data_idx or param_idx) and len(data_idx) + len(param_idx) != n:
            raise ParamError(f"CachedOp: data_indices ({len(data_idx)}) and param_indices ({len(param_idx)}) must "
                             f"cover the symbol's {n} inputs ({', '.join(names)})")
        pos = {nm: i for i, nm in enumerate(names)}
        self.input_names = names
        #: per argument, the index of the input feeding it; per auxiliary state likewise
        self.arg_pos = [pos[a] for a in sym.list_arguments()]
        self.aux_pos = [pos[a] for a in sym.list_auxiliary_states()]
        direct = set(param_idx)
        #: arguments bound as given (parameters); the others are copied in
        self.arg_direct = [i in direct for i in self.arg_pos]
        self._bound: dict[tuple, list[_Bound]] = {}

    def num_inputs(self) -> int:
        return len(self.input_names)

    def _bind(self, ctx: Any, args: Sequence[NDArray], need: tuple, ident: tuple) -> _Bound:
        arg_arrays, grads, reqs, in_arrays = [], [], [], []
        for p, d in zip(self.arg_pos, self.arg_direct):
            a = args[p]
            if d:
                arr = a
            else:
                arr = _nd.empty(a.shape, ctx, a.dtype)
                in_arrays.append(arr)
            arg_arrays.append(arr)
            grads.append(_nd.zeros(a.shape, ctx, a.dtype) if need[p] else None)
            reqs.append("write" if need[p] else "null")
        aux = [args[p] for p in self.aux_pos]
        exe = Executor.bind(self.sym, ctx, arg_arrays, grads if any(r != "null" for r in reqs) else None, reqs, aux)
        return _Bound(exe, in_arrays, ident, grads)

    def __call__(self, *args: NDArray, **kwargs: Any) -> Any:
        out = kwargs.pop("out", None)
        if kwargs:
            raise TypeError("CachedOp.__call__ got unexpected keyword argument(s): " + ", ".join(kwargs.keys()))
        n = len(self.input_names)
        if len(args) != n:
            raise PlexnetError(f"CachedOp: takes {n} inputs ({', '.join(self.input_names)}), got {len(args)}")
        for i, a in enumerate(args):
            if not isinstance(a, NDArray):
                raise TypeError(f"CachedOp: input {i} ({self.input_names[i]!r}) must be an NDArray, got "
                                f"{type(a).__name__}")
        ctx = args[0].context
        recording = STATE.recording
        need = tuple(recording and a._ag is not None for a in args)  # auxiliary states get no gradient
        key = (ctx, tuple((a.shape, a._data.dtype) for a in args), need, recording)
        ident = tuple(args[p] for p, d in zip(self.arg_pos, self.arg_direct) if d) + \
            tuple(args[p] for p in self.aux_pos)
        lst = self._bound.setdefault(key, [])
        b = free_bound(lst, ident)
        if b is None:
            lst[:] = [c for c in lst if c.busy()]  # keep only those a pending backward still needs
            with pause(STATE.training):  # the executor's own arrays are no part of the recorded graph
                b = self._bind(ctx, args, need, ident)
            lst.append(b)
        dst = iter(b.in_arrays)
        for p, d in zip(self.arg_pos, self.arg_direct):
            if not d:
                src, to = args[p], next(dst)
                if src._chunk.ctx is ctx or src._chunk.ctx == ctx:
                    _copy(src, to, False)
                else:
                    src.copyto(to)
        exe = b.exe
        exe.forward(is_train=STATE.training)
        outs = _outputs([o for o in exe.outputs if o is not None], out, ctx)
        inputs = [args[p] for p in self.arg_pos if need[p]]
        if inputs:
            grads = [g for p, g in zip(self.arg_pos, b.grad_of) if need[p]]
            node = CachedNode(b, inputs, grads, [False] * len(inputs), outs)
            for i, o in enumerate(outs):
                o._ag = (node, i)
            b.node_ref = weakref.ref(node)
        if out is not None:
            return out
        return outs[0] if len(outs) == 1 else outs

    def __repr__(self) -> str:
        return f"<CachedOp {self.sym.name or 'group'} inputs={self.input_names}>"


def _outputs(results: Sequence[NDArray], out: Any, ctx: Any) -> list[NDArray]:
    """Copies of the executor's outputs (they stay valid across calls), or ``out=``'s arrays."""
    if out is None:
        targets = [_nd.empty(o.shape, ctx, o.dtype) for o in results]
    else:
        targets = [out] if isinstance(out, NDArray) else list(out)
        if len(targets) != len(results):
            raise PlexnetError(f"CachedOp: out= gives {len(targets)} arrays, the symbol has {len(results)} outputs")
        for t, o in zip(targets, results):
            if t.shape != o.shape:
                raise PlexnetError(f"CachedOp: out= array of shape {t.shape} for an output of shape {o.shape}")
    for o, t in zip(results, targets):
        if t._chunk.ctx is ctx or t._chunk.ctx == ctx:
            _copy(o, t, False)
        else:
            o.copyto(t)
    return targets


@functools.lru_cache(maxsize=32)
def _subgraph_op(subgraph: str, flags: tuple) -> CachedOp:
    return CachedOp(load_json(subgraph), flags)


def cached_op_call(*args: NDArray, subgraph: str = "", out: Any = None, name: Any = None, **flags: Any) -> Any:
    """``nd._internal._CachedOp(*arrays, subgraph=json, **flags)``: MXNet's ``_CachedOp`` operator
    run imperatively, i.e. ``CachedOp(load_json(subgraph), flags)(*arrays)`` (inputs in the
    graph's ``list_inputs()`` order). The CachedOp of each (graph, flags) is kept for later calls."""
    if not subgraph:
        raise PlexnetError("_CachedOp: the subgraph argument (the graph's JSON) is required")
    key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in flags.items()))
    return _subgraph_op(subgraph, key)(*args, out=out)
