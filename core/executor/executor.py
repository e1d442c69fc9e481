"""The graph executor (MXNet 1.x ``GraphExecutor`` behind ``mx.executor.Executor``).

Binding does all the work once: shape/type inference, the execution graph with its
gradient part (``gradient.py``), the memory plan (``planner.py``), storage blocks from
the storage pool, one ``Operator`` per node with its ``OpContext`` resources, and the
engine operations of the bulked segments (``bulk.py``). ``forward``/``backward`` then
only push those prebuilt operations.
"""
from __future__ import annotations

import abc
import functools
import gc
import os
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from .. import engine as _engine_mod
from ..base import PlexnetError, ShapeError
from ..context import HOST_DEVICE_TYPES, Context, current_context
from ..ndarray.chunk import Chunk, alloc_chunk
from ..ndarray.ndarray import NDArray
from ..operator.contract import OpReqType
from ..resource import ResourceRequest
from ..resource import get as _resources
from .bulk import bulk_settings, env_flag, env_int, make_segments
from .arguments import copy_forward_arguments
from .calls import _bwd_call, _fwd_async_call, _fwd_call, _sum_call, _zeros_call
from .gradient import ExecGraph, build_exec_graph
from ..symbol.graph import IndexedGraph, InferTypeError, infer_shapes, infer_types, is_complete
from .planner import Plan, plan_memory

__all__ = ["Executor"]

_NULL, _WRITE, _INPLACE, _ADD = OpReqType.null, OpReqType.write, OpReqType.inplace, OpReqType.add


def _parse_req(v: Any) -> OpReqType:
    return OpReqType.parse(v) if not isinstance(v, OpReqType) else v


def _view(chunk: Chunk, shape: tuple, dtype: np.dtype, offset: int = 0) -> NDArray:
    n = 1
    for d in shape:
        n *= int(d)
    nbytes = n * dtype.itemsize
    return NDArray(chunk, chunk.handle.buf[offset:offset + nbytes].view(dtype).reshape(shape))


def _zeros(shape: tuple, ctx: Context, dtype: np.dtype) -> NDArray:
    from ..ndarray.ndarray import zeros
    return zeros(shape, ctx, dtype)


_F = TypeVar("_F", bound=Callable[..., Any])


def _gc_paused(fn: _F) -> _F:
    """Run ``fn`` with Python's cyclic garbage collector paused. Binding allocates tens of
    thousands of small objects, which trips collections that walk every object of the
    process (numpy, the plugins' modules): half of a 1,200-node graph's bind time
    (unrolled LSTM: 295 -> 130 ms; MXNet 1.9.1 binds it in 105 ms). Nothing bind makes is
    garbage until it returns, so pausing loses nothing; the collector resumes after."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()
    return run  # type: ignore[return-value]



#: MXNet 1.9.1 operators without FListInputNames: a monitor_all callback names their inputs
#: "<node>_input0", ... (recorded with MXNet 1.9.1, MXNET_SUBGRAPH_BACKEND=NONE)
_MON_UNNAMED_INPUTS = frozenset((
    "Activation", "BlockGrad", "Cast", "Flatten", "Reshape", "SoftmaxActivation", "abs", "arccos", "arccosh",
    "arcsin", "arcsinh", "arctan", "arctanh", "argmax", "argmax_channel", "argmin", "argsort", "broadcast_axes",
    "broadcast_axis", "cast", "cbrt", "ceil", "clip", "cos", "cosh", "degrees", "erf", "erfinv", "exp",
    "expand_dims", "expm1", "fix", "flatten", "floor", "gamma", "gammaln", "hard_sigmoid", "identity", "log",
    "log10", "log1p", "log2", "logical_not", "make_loss", "max", "max_axis", "mean", "min", "min_axis", "nanprod",
    "nansum", "negative", "norm", "ones_like", "prod", "radians", "rcbrt", "reciprocal", "relu", "reshape", "rint",
    "round", "rsqrt", "sample_multinomial", "shape_array", "shuffle", "sigmoid", "sign", "sin", "sinh",
    "size_array", "slice", "smooth_l1", "softmin", "softsign", "sort", "sqrt", "square", "stop_gradient", "sum",
    "sum_axis", "tan", "tanh", "topk", "transpose", "trunc", "zeros_like",
    "slice_axis", "broadcast_to", "amp_cast",
    # scalar operators (x + 1, 1 - x, x > 0, ...)
    "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar",
    "_mod_scalar", "_rmod_scalar", "_power_scalar", "_rpower_scalar", "_maximum_scalar", "_minimum_scalar",
    "_hypot_scalar", "_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
    "_lesser_scalar", "_lesser_equal_scalar", "_logical_and_scalar", "_logical_or_scalar", "_logical_xor_scalar",
))


class Executor(metaclass=abc.ABCMeta):  # noqa: B024 - no abstract methods: ABCMeta for register()
    """A bound symbol: arrays for arguments, gradients, auxiliary states and outputs,
    and the prebuilt operations that compute them. (An ABC only so that ``SparseExecutor``,
    which wraps one, is an ``Executor`` to ``isinstance`` as every MXNet executor is.)"""

    #: runs graphs holding an operator with ``forward_dynamic`` (run-time output shapes);
    #: ``dynamic.py`` sets it (it subclasses this one)
    dynamic_class: Any = None
    #: monitor_all reports variable inputs by their own name (GraphExecutor); a CachedOp's
    #: executor sets it False (MXNet's CachedOp hook does not)
    _monitor_vars: bool = True

    # -- construction -----------------------------------------------------------------------------
    @_gc_paused
    def __init__(self, symbol: Any, ctx: Context, arg_arrays: Sequence[NDArray],
                 grad_arrays: Sequence[NDArray | None], grad_reqs: Sequence[OpReqType],
                 aux_arrays: Sequence[NDArray], shared_exec: "Executor | None" = None,
                 plan_memory_on: bool | None = None, bulk_exec: bool | None = None,
                 _graph: IndexedGraph | None = None, _share_outputs: bool = False) -> None:
        g = self._take_arrays(symbol, ctx, arg_arrays, grad_arrays, grad_reqs, aux_arrays, _graph)
        # shapes and types from the bound arrays
        known_s = {g.row_ptr[nid]: a.shape for nid, a in zip(g.arg_nids, self.arg_arrays)}
        known_s.update({g.row_ptr[nid]: a.shape for nid, a in zip(g.aux_nids, self.aux_arrays)})
        shapes = infer_shapes(g, known_s)
        known_t = {g.row_ptr[nid]: a._data.dtype for nid, a in zip(g.arg_nids, self.arg_arrays)}
        known_t.update({g.row_ptr[nid]: a._data.dtype for nid, a in zip(g.aux_nids, self.aux_arrays)})
        dtypes = infer_types(g, known_t)
        for nid, a in list(zip(g.arg_nids, self.arg_arrays)) + list(zip(g.aux_nids, self.aux_arrays)):
            s = shapes[g.row_ptr[nid]]
            if s is not None and tuple(s) != a.shape:
                raise ShapeError(f"bind: array for {g.nodes[nid].name!r} has shape {a.shape}, the graph needs "
                                 f"{tuple(s)}")
        missing = [g.entry_name(e) for e in range(g.num_entries) if not is_complete(shapes[e])]
        if missing:
            raise ShapeError(f"bind: cannot infer the shapes of {', '.join(missing[:10])}"
                             + (" ..." if len(missing) > 10 else ""))
        missing = [g.entry_name(e) for e in range(g.num_entries) if dtypes[e] is None]
        if missing:
            raise PlexnetError(f"bind: cannot infer the types of {', '.join(missing[:10])}")
        for i, (a, gr) in enumerate(zip(self.arg_arrays, self.grad_arrays)):
            if gr is not None and gr.shape != a.shape:
                raise ShapeError(f"bind: gradient array for {self._arg_names[i]!r} has shape {gr.shape}, the "
                                 f"argument has {a.shape}")
        self._shapes = shapes
        self._dtypes = dtypes
        # execution graph and memory plan
        xg = build_exec_graph(g, shapes, dtypes, self._grad_reqs)
        self._xg = xg
        self._training = bool(xg.backward)
        if plan_memory_on is None:
            plan_memory_on = env_flag("PLEXNET_EXEC_PLAN_MEMORY", True)
        match = float(env_int("PLEXNET_EXEC_MATCH_RANGE", 16))
        strategy = os.environ.get("PLEXNET_EXEC_MEMORY_STRATEGY", "auto").strip().lower() or "auto"
        self._plan: Plan = plan_memory(xg.entries, xg.schedule, enable=bool(plan_memory_on), match_range=match,
                                       strategy=strategy)
        self._allocate(shared_exec, _share_outputs)
        self._build_calls(bulk_exec)
        self._head_ones = True
        self._monitor: Any = None

    def _take_arrays(self, symbol: Any, ctx: Context, arg_arrays: Sequence[NDArray],
                     grad_arrays: Sequence[NDArray | None], grad_reqs: Sequence[OpReqType],
                     aux_arrays: Sequence[NDArray], graph: IndexedGraph | None) -> IndexedGraph:
        """Keep the symbol, its graph, names and bound arrays (no gradient array: req null)."""
        self._symbol = symbol
        self._cse_on = os.environ.get("MXNET_ELIMINATE_COMMON_EXPR", "1") != "0"  # read at bind, as MXNet
        self._ctx = ctx
        g = graph if graph is not None else IndexedGraph(symbol._outputs)
        self._g = g
        self._arg_names = g.arg_names()
        self._aux_names = g.aux_names()
        self._out_names = g.output_names()
        _check_unique(self._arg_names + self._aux_names)
        self.arg_arrays = list(arg_arrays)
        self.grad_arrays = list(grad_arrays)
        self.aux_arrays = list(aux_arrays)
        self._grad_reqs = [_parse_req(r) for r in grad_reqs]
        for i, r in enumerate(self._grad_reqs):
            if r != _NULL and self.grad_arrays[i] is None:
                self._grad_reqs[i] = _NULL
        return g

    # -- storage ------------------------------------------------------------------------------------
    def _allocate(self, shared_exec: "Executor | None", share_outputs: bool = False) -> None:
        xg, plan, ctx = self._xg, self._plan, self._ctx
        # blocks: reuse the shared executor's blocks where large enough (bucketing)
        # units holding graph outputs are neither lent nor borrowed
        pinned = [False] * len(plan.unit_sizes)
        for ent in xg.entries:
            if ent.pinned and plan.unit[ent.eid] >= 0:
                pinned[plan.unit[ent.eid]] = True
        self._unit_pinned = pinned
        avail: list[tuple[int, int, Chunk]] = []
        if shared_exec is not None:
            avail = sorted(((c.handle.size, i, c) for i, c in enumerate(shared_exec._blocks)
                            if not shared_exec._unit_pinned[i]), key=lambda t: (t[0], t[1]))
        reuse: dict[int, Chunk] = {}
        if shared_exec is not None and share_outputs:
            # Executor.reshape: each output lives in the original's output memory where it fits (MXNet)
            sp, taken = shared_exec._plan, set()
            for e_new, e_old in zip(self._g.outputs, shared_exec._g.outputs):
                u, uo = plan.unit[e_new], sp.unit[e_old]
                if u < 0 or uo < 0 or u in reuse or uo in taken or plan.offset[e_new] != sp.offset[e_old]:
                    continue
                if sp.unit_sizes[uo] >= plan.unit_sizes[u]:
                    reuse[u] = shared_exec._blocks[uo]
                    taken.add(uo)
        blocks: list[Chunk] = []
        self._shared_bytes = 0
        for u, size in enumerate(plan.unit_sizes):
            if u in reuse:
                blocks.append(reuse[u])
                self._shared_bytes += size
                continue
            hit = None
            for k, (s, _i, c) in enumerate(avail):
                if s >= size and not pinned[u]:
                    hit = avail.pop(k)[2]
                    break
            if hit is not None:
                blocks.append(hit)
                self._shared_bytes += size
            else:
                blocks.append(alloc_chunk(max(size, 1), ctx))
        self._blocks = blocks
        arrays: list[NDArray | None] = [None] * len(xg.entries)
        for ent in xg.entries:
            if ent.kind == "arg":
                arrays[ent.eid] = self.arg_arrays[ent.ref]
            elif ent.kind == "aux":
                arrays[ent.eid] = self.aux_arrays[ent.ref]
            elif ent.kind == "arg_grad":
                arrays[ent.eid] = self.grad_arrays[ent.ref]
            elif ent.kind == "head_grad":
                if ent.ref in xg.head_grads and xg.head_grads[ent.ref] == ent.eid:
                    from ..ndarray.ndarray import ones
                    arrays[ent.eid] = ones(ent.shape, ctx, ent.dtype)
            else:
                b = plan.unit[ent.eid]
                if b < 0:
                    continue
                arrays[ent.eid] = _view(blocks[b], ent.shape, ent.dtype, plan.offset[ent.eid])
        self._arrays = arrays
        for ent in xg.entries:
            if ent.kind in ("arg", "aux", "arg_grad") and not _same_memory(arrays[ent.eid]._chunk.ctx, ctx):
                raise PlexnetError(f"bind: array {ent.name!r} is on {arrays[ent.eid]._chunk.ctx}, the executor "
                                   f"on {ctx}")
        self.outputs = [arrays[e] for e in self._g.outputs]
        self._head_grad_arrays = {pos: arrays[e] for pos, e in xg.head_grads.items()}

    # -- closures and segments -------------------------------------------------------------------------
    def _build_calls(self, bulk_exec: bool | None) -> None:
        xg, ctx, arrays = self._xg, self._ctx, self._arrays
        raw = [None if a is None else a._data for a in arrays]
        var = [None if a is None else a._chunk.var for a in arrays]
        res_mgr = _resources()
        shapes = self._shapes
        self._ops: dict[int, Any] = {}
        self._workspace: list[Any] = []
        self._temp_requests = 0

        def op_of(fnid: int, prop: Any) -> Any:
            op = self._ops.get(fnid)
            if op is None:
                op = self._ops[fnid] = prop.create_operator(ctx)
            return op

        plan = self._plan

        def req_of(eid: int, req: OpReqType) -> OpReqType:
            if req == _WRITE and plan.inplace_of[eid] >= 0:
                return _INPLACE
            return req

        fwd_items: dict[bool, list] = {True: [], False: []}
        for xn in xg.forward:
            in_shapes = [shapes[e] for e in xn.in_data]
            wants = xn.prop.forward_resource(in_shapes)
            self._temp_requests += sum(1 for r in wants if r.type == ResourceRequest.kTempSpace)
            requested = [res_mgr.request(ctx, r) for r in wants]
            op = op_of(xn.fnid, xn.prop)
            ins = [raw[e] for e in xn.in_data]
            outs = [raw[e] for e in xn.out_data]
            aux = [raw[e] for e in xn.aux]
            req = [req_of(e, r) for e, r in zip(xn.out_data, xn.reqs)]
            reads = [var[e] for e in xn.in_data]
            writes = [var[e] for e in xn.out_data] + [r.var for r in requested]
            aux_vars = [var[e] for e in xn.aux]
            is_async = bool(getattr(op, "is_async", False))
            for is_train in (True, False):
                call = (_fwd_async_call(op.forward_async, is_train, requested, ins, req, outs, aux) if is_async
                        else _fwd_call(op.forward, is_train, requested, ins, req, outs, aux))
                fwd_items[is_train].append((xn.name, call, reads + ([] if is_train else aux_vars),
                                            writes + (aux_vars if is_train else []), is_async))
        bwd_items: list = []
        for xn in xg.backward:
            if xn.kind == "backward":
                in_shapes = [shapes[e] for e in self._g.inputs[xn.fnid][:len(xn.in_data)]]
                wants = xn.prop.backward_resource(in_shapes)
                self._temp_requests += sum(1 for r in wants if r.type == ResourceRequest.kTempSpace)
                requested = [res_mgr.request(ctx, r) for r in wants]
                op = op_of(xn.fnid, xn.prop)
                pick = (lambda es: [None if e is None else raw[e] for e in es])
                og, ind, outd = pick(xn.out_grad), pick(xn.in_data), pick(xn.out_data)
                ig = [raw[e] for e in xn.in_grad]
                aux = [raw[e] for e in xn.aux]
                req = [req_of(e, r) for e, r in zip(xn.in_grad, xn.reqs)]
                is_async = bool(getattr(op, "is_async", False))
                call = (_bwd_call(op.backward_async, requested, og, ind, outd, req, ig, aux, True, True) if is_async
                        else _bwd_call(op.backward, requested, og, ind, outd, req, ig, aux))
                reads = [var[e] for e in xn.reads]
                writes = [var[e] for e, r in xn.writes] + [r.var for r in requested] + [var[e] for e in xn.aux]
                bwd_items.append((xn.name, call, reads, writes, is_async))
            elif xn.kind == "sum":
                out = raw[xn.in_grad[0]]
                ins = [raw[e] for e in xn.sum_inputs]
                req = req_of(xn.in_grad[0], xn.reqs[0])
                bwd_items.append((xn.name, _sum_call(ins, out, req), [var[e] for e in xn.reads],
                                  [var[xn.in_grad[0]]], False))
            elif xn.kind == "zeros":
                out = raw[xn.in_grad[0]]
                bwd_items.append((xn.name, _zeros_call(out), [], [var[xn.in_grad[0]]], False))
            else:  # pragma: no cover
                raise PlexnetError(f"unknown node kind {xn.kind}")
        on, nf, nb = bulk_settings(self._training, bulk_exec)
        self._bulk = on
        self._fwd_items = fwd_items
        self._fwd_segs = {t: make_segments(fwd_items[t], on, nf) for t in (True, False)}
        self._bwd_segs = make_segments(bwd_items, on, nb)
        self._bwd_items = bwd_items
        self._build_oprs(_engine_mod.get())

    def _build_oprs(self, eng: Any) -> None:
        """The engine operations of the segments, built for ``eng`` (again after
        ``engine.set_engine`` replaced the engine: an operation pushed to the old one would
        share variables with the new one's and corrupt both schedulers' bookkeeping)."""
        self._engine = eng
        self._fwd_oprs = {t: [s.build(eng, "forward") for s in self._fwd_segs[t]] for t in (True, False)}
        self._bwd_oprs = [s.build(eng, "backward") for s in self._bwd_segs]
        self._bwd_oprs_infer: list | None = None
        self.__dict__.pop("_mon_oprs", None)
        self.__dict__.pop("_mon_bwd_oprs", None)

    def _current_engine(self) -> Any:
        """The process-wide engine, the segment operations rebuilt for it if it changed."""
        if self._engine is not _engine_mod._engine:
            self._build_oprs(_engine_mod.get())
        return self._engine

    # -- running ----------------------------------------------------------------------------------------
    def forward(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """Run the forward pass (asynchronously); keyword arrays are first copied into
        the arguments of those names. Returns ``outputs``."""
        if kwargs:
            copy_forward_arguments(self.arg_dict, self._arg_names, kwargs)
        eng = self._current_engine()
        ctx = self._ctx
        if self._monitor is not None:
            self._forward_monitored(bool(is_train))
            return self.outputs
        for opr in self._fwd_oprs[bool(is_train)]:
            eng.push(opr, ctx)
        return self.outputs

    def _forward_monitored(self, is_train: bool) -> None:
        """Node by node; after each node, copies of its outputs (and inputs with
        ``monitor_all``) go to the monitor callback before later nodes reuse the memory."""
        cache = self.__dict__.setdefault("_mon_oprs", {})
        oprs = cache.get(is_train)
        if oprs is None:
            segs = make_segments(self._fwd_items[is_train], False, 1)
            oprs = cache[is_train] = [s.build(self._engine, "forward") for s in segs]
        callback, monitor_all = self._monitor
        xg, arrays = self._xg, self._arrays
        for xn, opr in zip(xg.forward, oprs):
            self._engine.push(opr, self._ctx)
            names = []
            if monitor_all:
                # MXNet's GraphExecutor::ExecuteMonInputCallback: for each input (arguments, then
                # auxiliary states) a variable's own name first (not in a CachedOp, which sets
                # _monitor_vars False), then "<node>_<input name>", the input
                # names being the operator's FListInputNames, else input0, input1, ...
                ins = list(xn.in_data) + list(xn.aux or ())
                if getattr(xn.prop, "op_name", None) in _MON_UNNAMED_INPUTS:
                    in_names = [f"input{i}" for i in range(len(ins))]
                else:
                    in_names = list(xn.prop.list_arguments()) + list(xn.prop.list_auxiliary_states())
                for n, e in zip(in_names, ins):
                    if e is None:
                        continue
                    if xg.entries[e].kind in ("arg", "aux") and self._monitor_vars:
                        names.append((xg.entries[e].name, e))
                    names.append((f"{xn.name}_{n}", e))
            # every output, hidden ones too (MXNet reports e.g. LRN's tmp_norm, BatchNorm's mean/var)
            names += [(xg.entries[e].name, e) for e in xn.out_data if e is not None]
            for name, e in names:
                if arrays[e] is not None:
                    callback(name, arrays[e].copy())

    def _backward_monitored(self, is_train: bool) -> None:
        """Node by node, like ``_forward_monitored``: after each operator's backward, its
        input gradients go to the callback as ``<node>_backward_output<i>`` (MXNet's
        names; ``_output`` alone for one), with ``monitor_all`` its inputs too."""
        cache = self.__dict__.setdefault("_mon_bwd_oprs", {})
        oprs = cache.get(is_train)
        if oprs is None:
            items = self._bwd_items if is_train else [
                (it[0], it[1].with_train(False) if hasattr(it[1], "with_train") else it[1]) + it[2:]
                for it in self._bwd_items]
            oprs = cache[is_train] = [s.build(self._engine, "backward") for s in make_segments(items, False, 1)]
        callback, monitor_all = self._monitor
        arrays = self._arrays
        for xn, opr in zip(self._xg.backward, oprs):
            self._engine.push(opr, self._ctx)
            if xn.kind != "backward":
                continue
            names: list[tuple[str, int]] = []
            if monitor_all:
                ins = [e for e in xn.out_grad + xn.in_data + xn.out_data if e is not None]
                names += [(f"{xn.name}_backward_input{k}", e) for k, e in enumerate(ins)]
            n = len(xn.in_grad)
            names += [(f"{xn.name}_backward_output{k if n > 1 else ''}", e) for k, e in enumerate(xn.in_grad)]
            for name, e in names:
                if arrays[e] is not None:
                    callback(name, arrays[e].copy())

    def get_optimized_symbol(self) -> Any:
        """The bound graph after MXNet's common-subexpression pass (on unless
        ``MXNET_ELIMINATE_COMMON_EXPR=0`` at bind time); plexnet has no subgraph backends
        that rewrite it further. (The executor itself runs the bound graph.)"""
        if not getattr(self, "_cse_on", True):
            return self._symbol
        from ..symbol.cse import eliminate_common_expr
        return eliminate_common_expr(self._symbol)

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Run the backward pass. ``out_grads`` (one per output, or one NDArray) are the
        head gradients; without ``out_grads``, ones are used (loss operators such as
        SoftmaxOutput do not read them). A list must give one for every output that is
        not a loss up to its last such output, as MXNet requires."""
        if not self._training:
            # bound without gradients (grad_req 'null' everywhere): MXNet's backward is a no-op
            # (a Module with no parameters and inputs_need_grad=False calls it)
            return
        heads = self._head_grad_arrays
        if out_grads is not None:
            if isinstance(out_grads, (NDArray, np.ndarray)):
                out_grads = [out_grads]
            # MXNet reads one head gradient per output and ignores any further ones (its
            # test_contrib_control_flow passes a state's gradient to a graph without states)
            out_grads = list(out_grads)[:len(self.outputs)]
            for pos, gr in enumerate(out_grads):
                h = heads.get(pos)
                if h is None or gr is None:
                    continue
                if tuple(gr.shape) != h.shape:
                    raise ShapeError(f"backward: out_grad {pos} has shape {tuple(gr.shape)}, output "
                                     f"{self._out_names[pos]!r} has {h.shape}")
                h[:] = gr
            missing = [pos for pos in heads if pos >= len(out_grads) or out_grads[pos] is None]
            if missing:
                # MXNet raises here; plexnet used to run on with the previous call's values
                raise PlexnetError(f"backward: output {self._out_names[missing[0]]!r} (position {missing[0]}) is "
                                   f"not a loss, so it needs a head gradient; got {len(out_grads)} out_grads for "
                                   f"{len(self.outputs)} outputs (MXNet: \"Because the last operator is not Loss "
                                   f"function, head_gradient is required when calling backward\")")
            self._head_ones = False
        elif not self._head_ones:
            for h in heads.values():
                h[:] = 1
            self._head_ones = True
        eng = self._current_engine()
        ctx = self._ctx
        if self._monitor is not None:
            self._backward_monitored(bool(is_train))
            return
        if is_train:
            oprs = self._bwd_oprs
        else:
            if self._bwd_oprs_infer is None:
                items = [(it[0], it[1].with_train(False) if hasattr(it[1], "with_train") else it[1]) + it[2:]
                         for it in self._bwd_items]
                on, _nf, nb = bulk_settings(True, self._bulk)
                self._bwd_oprs_infer = [s.build(eng, "backward") for s in make_segments(items, on, nb)]
            oprs = self._bwd_oprs_infer
        for opr in oprs:
            eng.push(opr, ctx)

    # -- dictionaries ----------------------------------------------------------------------------------
    # the dictionaries are built once (as MXNet caches them); the arrays never change
    @property
    def arg_dict(self) -> dict[str, NDArray]:
        d = self.__dict__.get("_arg_dict")
        if d is None:
            d = self._arg_dict = dict(zip(self._arg_names, self.arg_arrays))
        return d

    @property
    def grad_dict(self) -> dict[str, NDArray | None]:
        d = self.__dict__.get("_grad_dict")
        if d is None:
            d = self._grad_dict = dict(zip(self._arg_names, self.grad_arrays))
        return d

    @property
    def aux_dict(self) -> dict[str, NDArray]:
        d = self.__dict__.get("_aux_dict")
        if d is None:
            d = self._aux_dict = dict(zip(self._aux_names, self.aux_arrays))
        return d

    def _place_outputs(self, group2ctx: dict | None) -> None:
        """With ``group2ctx``, each output reports the context of the group of the node that
        produces it, as MXNet's (the same memory: ``group2ctx`` here only maps host contexts,
        see ``_check_group2ctx``; the alias shares the output's engine variable)."""
        self._group2ctx = group2ctx
        if not group2ctx:
            return
        g, eng = self._g, _engine_mod.get()
        outs = list(self.outputs)
        for i, e in enumerate(g.outputs):
            c = _placed_ctx(g.nodes[g.entry_node(e)], group2ctx, self._ctx)
            a = outs[i]
            if a is None or c == a._chunk.ctx:
                continue
            alias = Chunk(None, c, eng, ext=a)
            alias.var = a._chunk.var
            outs[i] = NDArray(alias, a._data)
        self.outputs = outs
        self.__dict__.pop("_output_dict", None)

    @property
    def output_dict(self) -> dict[str, NDArray]:
        d = self.__dict__.get("_output_dict")
        if d is None:
            d = self._output_dict = dict(zip(self._out_names, self.outputs))
        return d

    @property
    def grad_req(self) -> dict[str, str]:
        return {n: r.name for n, r in zip(self._arg_names, self._grad_reqs)}

    @property
    def symbol(self) -> Any:
        return self._symbol

    @property
    def ctx(self) -> Context:
        return self._ctx

    def copy_params_from(self, arg_params: dict[str, Any], aux_params: dict[str, Any] | None = None,
                         allow_extra_params: bool = False) -> None:
        """Copy parameter values (NDArrays or numpy arrays) into the bound arrays."""
        arg_dict, aux_dict = self.arg_dict, self.aux_dict
        for name, arr in arg_params.items():
            if name in arg_dict:
                dst = arg_dict[name]
                if tuple(arr.shape) != dst.shape:
                    raise ShapeError(f"copy_params_from: {name!r} has shape {tuple(arr.shape)}, the executor's "
                                     f"array has {dst.shape}")
                dst[:] = arr
            elif not allow_extra_params:
                raise ValueError(f"Find name \"{name}\" that is not in the arguments")
        for name, arr in (aux_params or {}).items():
            if name in aux_dict:
                dst = aux_dict[name]
                if tuple(arr.shape) != dst.shape:
                    raise ShapeError(f"copy_params_from: {name!r} has shape {tuple(arr.shape)}, the executor's "
                                     f"array has {dst.shape}")
                dst[:] = arr
            elif not allow_extra_params:
                raise ValueError(f"Find name \"{name}\" that is not in the auxiliary states")

    def set_monitor_callback(self, callback: Any, monitor_all: bool = False) -> None:
        """Call ``callback(name, array)`` for every node output (``<node>_output``; with
        ``monitor_all`` also every node input) during ``forward``. ``array`` is a copy
        taken right after the node ran, so memory reuse by later nodes cannot change it.
        While a callback is set, forward runs node by node. ``None`` removes it."""
        self._monitor = None if callback is None else (callback, bool(monitor_all))

    # -- reshape -------------------------------------------------------------------------------------------
    def reshape(self, partial_shaping: bool = False, allow_up_sizing: bool = False, **kwargs: Any) -> "Executor":
        """A new executor for new input shapes that shares this one's parameter arrays
        (where their shapes are unchanged) and internal memory."""
        g = self._g
        inputs = {g.nodes[i].name: g.row_ptr[i] for i in g.var_nids}
        unknown = [k for k in kwargs if k not in inputs]
        if unknown:
            raise ValueError(f"reshape: unknown input(s) {unknown}; inputs are {', '.join(inputs)}")
        known = {inputs[k]: tuple(v) for k, v in kwargs.items()}
        shapes = infer_shapes(g, known)

        def remake(name: str, old: NDArray | None, new_shape: tuple | None) -> NDArray | None:
            if old is None:
                return None
            if new_shape is None or tuple(new_shape) == old.shape:
                return old
            if name not in kwargs and not partial_shaping:
                raise ShapeError(f"reshape: shape of {name!r} changes from {old.shape} to {tuple(new_shape)}; "
                                 f"pass partial_shaping=True to allow inputs not named to change")
            if int(np.prod(new_shape)) > old.size:
                if not allow_up_sizing:
                    raise ShapeError(f"reshape: new shape {tuple(new_shape)} of {name!r} is larger than the "
                                     f"old {old.shape}; pass allow_up_sizing=True")
                return _zeros(tuple(new_shape), self._ctx, old._data.dtype)
            # a view of the old memory (same chunk, same engine variable), as MXNet does
            flat = old._data.reshape(-1)
            return NDArray(old._chunk, flat[:int(np.prod(new_shape))].reshape(tuple(new_shape)))

        args = [remake(n, a, shapes[g.row_ptr[nid]]) for n, a, nid in zip(self._arg_names, self.arg_arrays,
                                                                           g.arg_nids)]
        grads = [remake(n, a, shapes[g.row_ptr[nid]]) for n, a, nid in zip(self._arg_names, self.grad_arrays,
                                                                            g.arg_nids)]
        aux = [remake(n, a, shapes[g.row_ptr[nid]]) for n, a, nid in zip(self._aux_names, self.aux_arrays,
                                                                          g.aux_nids)]
        exe = Executor(self._symbol, self._ctx, args, grads, self._grad_reqs, aux, shared_exec=self,
                       plan_memory_on=self._plan.enabled, bulk_exec=self._bulk, _graph=g, _share_outputs=True)
        exe._place_outputs(self.__dict__.get("_group2ctx"))
        # MXNet 1.9.1's GraphExecutor::Reshape keeps the monitor callback (and its setting)
        exe._monitor, exe._monitor_vars = self._monitor, self._monitor_vars
        return exe

    # -- reporting ---------------------------------------------------------------------------------------
    def memory_report(self) -> dict[str, Any]:
        """Figures of the memory plan (bytes): ``planned_bytes`` (internal blocks:
        forward values, outputs, internal gradients; what MXNet's ``Total .. MB
        allocated`` counts), ``naive_bytes`` (the same entries without any sharing),
        ``ratio``, block and entry counts, in-place hand-overs, and the external arrays
        (arguments, gradients, aux states, head gradients)."""
        plan, xg = self._plan, self._xg
        ext = {"arg": 0, "aux": 0, "arg_grad": 0, "head_grad": 0}
        for e in xg.entries:
            if e.kind in ext and self._arrays[e.eid] is not None:
                ext[e.kind] += e.nbytes
        pool = 0
        for c in self._blocks:
            pool += c.handle.size if c.handle is not None else 0
        planned = plan.planned_bytes
        return {
            "planned_bytes": planned,
            "naive_bytes": plan.naive_bytes,
            "ratio": planned / plan.naive_bytes if plan.naive_bytes else 1.0,
            "num_blocks": plan.num_blocks,
            "strategy": plan.strategy,
            "alternatives": dict(plan.alternatives),
            "peak_live_bytes": plan.peak_live_bytes,
            "num_internal_entries": sum(1 for e in xg.entries if not e.external),
            "num_inplace": plan.num_inplace,
            "plan_memory": plan.enabled,
            "training": self._training,
            "pool_bytes": pool,
            "shared_bytes": self._shared_bytes,
            "arg_bytes": ext["arg"],
            "grad_bytes": ext["arg_grad"],
            "aux_bytes": ext["aux"],
            "head_grad_bytes": ext["head_grad"],
            "forward_segments": len(self._fwd_segs[True]),
            "backward_segments": len(self._bwd_segs),
            "forward_nodes": len(xg.forward),
            "backward_nodes": len(xg.backward),
        }

    def debug_str(self) -> str:
        """The graph, the schedule with storage assignments, and the memory figures."""
        r = self.memory_report()
        xg, plan = self._xg, self._plan
        lines = [self._symbol.debug_str().rstrip("\n"), "=" * 40, "Schedule (node: outputs -> block)"]
        for step, xn in enumerate(xg.schedule):
            outs = []
            for e, req in xn.writes:
                ent = xg.entries[e]
                b = plan.unit[e]
                where = f"unit{b}+{plan.offset[e]}" if b >= 0 else ent.kind
                ip = f" inplace<-{xg.entries[plan.inplace_of[e]].name}" if plan.inplace_of[e] >= 0 else ""
                outs.append(f"{ent.name}{list(ent.shape)}:{req.name}@{where}{ip}")
            lines.append(f"  [{step}] {xn.kind} {xn.name}: " + ", ".join(outs))
        lines.append(f"Planned memory: {r['planned_bytes']} bytes in {r['num_blocks']} unit(s) ({r['strategy']} "
                     f"strategy); naive total {r['naive_bytes']} bytes (ratio {r['ratio']:.3f}); peak of live values "
                     f"{r['peak_live_bytes']} bytes; {r['num_inplace']} in-place")
        lines.append(f"External arrays: args {r['arg_bytes']} bytes, grads {r['grad_bytes']} bytes, aux "
                     f"{r['aux_bytes']} bytes, head grads {r['head_grad_bytes']} bytes")
        lines.append(f"Engine operations: forward {r['forward_segments']} segment(s) for {r['forward_nodes']} "
                     f"nodes, backward {r['backward_segments']} segment(s) for {r['backward_nodes']} nodes "
                     f"(bulk {'on' if self._bulk else 'off'})")
        # MXNet's last two lines: scripts read the memory figure as split("\n")[-3]
        # (example/memcost)
        lines.append(f"Total {r['planned_bytes'] // (1 << 20)} MB allocated")
        lines.append(f"Total {self._temp_requests} TempSpace resource requested")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"<Executor {self._symbol!r} on {self._ctx}>"

    # -- the bind entry points ---------------------------------------------------------------------------
    @classmethod
    @_gc_paused
    def simple_bind(cls, symbol: Any, ctx: Context | None = None, grad_req: Any = "write",
                    type_dict: dict | None = None, stype_dict: dict | None = None, group2ctx: dict | None = None,
                    shared_arg_names: Sequence[str] | None = None, shared_exec: "Executor | None" = None,
                    shared_buffer: dict | None = None, **kwargs: Any) -> "Executor":
        plan_on = kwargs.pop("plan_memory", None)
        bulk = kwargs.pop("bulk_exec", None)
        ctx = ctx or current_context()
        _check_group2ctx(group2ctx, ctx)
        g = IndexedGraph(symbol._outputs)
        arg_names, aux_names = g.arg_names(), g.aux_names()
        _check_unique(arg_names + aux_names)
        inputs = {g.nodes[i].name: g.row_ptr[i] for i in g.var_nids}
        known: dict[int, tuple] = {}
        for k, v in kwargs.items():
            if k not in inputs:  # MXNet ignores keywords that name no input (test_take passes axis=)
                continue
            known[inputs[k]] = (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(d) for d in v)
        shapes = infer_shapes(g, known)
        unknown = [g.nodes[i].name for i in g.var_nids if not is_complete(shapes[g.row_ptr[i]])]
        if unknown:
            raise ShapeError(f"simple_bind: cannot infer the shapes of {', '.join(unknown)}; give their shapes "
                             f"(or those of the inputs they depend on) as keyword arguments")
        tknown: dict[int, Any] = {}
        td = dict(type_dict or {})
        for nid in g.arg_nids:
            name = g.nodes[nid].name
            if name in td:
                tknown[g.row_ptr[nid]] = np.dtype(td[name])
        for k in td:
            if k not in inputs:
                raise ValueError(f"simple_bind: type_dict key {k!r} is not an input of the symbol")
            if k in aux_names:
                tknown[inputs[k]] = np.dtype(td[k])
        try:
            types: list[Any] = infer_types(g, tknown)
        except InferTypeError:  # an operator that needs an input's type (Embedding's indices)
            types = [None] * g.num_entries
        if any(t is None for t in types):
            # MXNet's default: float32 for every argument not given
            for nid in g.arg_nids:
                e = g.row_ptr[nid]
                if e not in tknown and types[e] is None:
                    tknown[e] = np.dtype(np.float32)
            types = infer_types(g, tknown)
        reqs = _grad_req_list(grad_req, arg_names)
        shared_names = set(shared_arg_names or ())
        sh_args = shared_exec.arg_dict if shared_exec is not None else {}
        sh_grads = shared_exec.grad_dict if shared_exec is not None else {}
        sh_aux = shared_exec.aux_dict if shared_exec is not None else {}

        # sparse storage types (executor/sparse.py): checked once per bind, never per forward
        if stype_dict or any("__storage_type__" in g.nodes[nid].attrs for nid in g.arg_nids) or any(
                g.nodes[nid].attrs.get("sparse_grad") in ("True", "true", "1")
                or g.nodes[nid].op in ("cast_storage", "_contrib_SparseEmbedding", "dot") for nid in g.op_nids):
            from .sparse_bind import sparse_simple_bind
            sexe = sparse_simple_bind(_class_for(cls, g), symbol, ctx, g, shapes, types, reqs, stype_dict, group2ctx)
            if sexe is not None:
                return sexe

        def make(name: str, nid: int, pool: dict) -> NDArray:
            e = g.row_ptr[nid]
            shape, dt = tuple(shapes[e]), types[e] if types[e] is not None else np.dtype(np.float32)
            if name in shared_names and name in pool and pool[name] is not None:
                a = pool[name]
                if a.shape == shape and a._data.dtype == dt:
                    return a
            return _zeros(shape, _group_ctx(g.nodes[nid], group2ctx, ctx), dt)

        args = [make(n, nid, sh_args) for n, nid in zip(arg_names, g.arg_nids)]
        grads = [make(n, nid, sh_grads) if r != _NULL else None
                 for n, nid, r in zip(arg_names, g.arg_nids, reqs)]
        aux = [make(n, nid, sh_aux) for n, nid in zip(aux_names, g.aux_nids)]
        exe = _class_for(cls, g)(symbol, ctx, args, grads, reqs, aux, shared_exec=shared_exec,
                                 plan_memory_on=plan_on, bulk_exec=bulk, _graph=g)
        exe._place_outputs(group2ctx)
        return exe

    @classmethod
    @_gc_paused
    def bind(cls, symbol: Any, ctx: Context | None, args: Any, args_grad: Any = None, grad_req: Any = "write",
             aux_states: Any = None, group2ctx: dict | None = None, shared_exec: "Executor | None" = None,
             **kwargs: Any) -> "Executor":
        plan_on = kwargs.pop("plan_memory", None)
        bulk = kwargs.pop("bulk_exec", None)
        if kwargs:
            raise TypeError(f"bind: unexpected keyword arguments {list(kwargs)}")
        ctx = ctx or current_context()
        _check_group2ctx(group2ctx, ctx)
        g = IndexedGraph(symbol._outputs)
        arg_names, aux_names = g.arg_names(), g.aux_names()
        _check_unique(arg_names + aux_names)
        arg_list = _array_list(args, arg_names, "args", required=True)
        if args_grad is None:
            grad_list: list = [None] * len(arg_names)
            reqs = [_NULL] * len(arg_names)
        else:
            grad_list = _array_list(args_grad, arg_names, "args_grad", required=False)
            reqs = _grad_req_list(grad_req, arg_names)
        if aux_states is None and aux_names:
            known = {g.row_ptr[nid]: a.shape for nid, a in zip(g.arg_nids, arg_list)}
            shapes = infer_shapes(g, known)
            known_t = {g.row_ptr[nid]: a._data.dtype for nid, a in zip(g.arg_nids, arg_list)}
            types = infer_types(g, known_t)
            aux_list = []
            for nid in g.aux_nids:
                e = g.row_ptr[nid]
                if not is_complete(shapes[e]):
                    raise ShapeError(f"bind: cannot infer the shape of auxiliary state {g.nodes[nid].name!r}")
                aux_list.append(_zeros(tuple(shapes[e]), ctx, types[e] or np.dtype(np.float32)))
        else:
            aux_list = _array_list(aux_states or [], aux_names, "aux_states", required=True)
        if any(getattr(a, "stype", "default") != "default" for a in (*arg_list, *grad_list)) or any(
                g.nodes[nid].op in ("cast_storage", "dot") for nid in g.op_nids) and _sparse_graph(g):
            from .sparse_exec import SparseExecutor  # sparse storage: executor/sparse.py
            return SparseExecutor(_class_for(cls, g), symbol, ctx, g, arg_list, grad_list, reqs, aux_list, group2ctx)
        exe = _class_for(cls, g)(symbol, ctx, arg_list, grad_list, reqs, aux_list, shared_exec=shared_exec,
                                 plan_memory_on=plan_on, bulk_exec=bulk, _graph=g)
        exe._place_outputs(group2ctx)
        return exe

    # -- introspection for tests and tools ------------------------------------------------------------------
    @property
    def plan(self) -> Plan:
        return self._plan

    @property
    def exec_graph(self) -> ExecGraph:
        return self._xg


def _sparse_graph(g: IndexedGraph) -> bool:
    from .sparse import makes_sparse
    return makes_sparse(g)


def _class_for(cls: Any, g: IndexedGraph) -> Any:
    """``cls``, or the dynamic executor when an operator of ``g`` shapes its outputs at run time."""
    dyn = cls.dynamic_class
    if dyn is not None and any(callable(getattr(g.nodes[i].prop, "forward_dynamic", None)) for i in g.op_nids):
        return dyn
    return cls


# -- argument handling -------------------------------------------------------------------------------------

def _check_unique(names: list[str]) -> None:
    seen: set[str] = set()
    dup = [n for n in names if n in seen or seen.add(n)]  # type: ignore[func-returns-value]
    if dup:
        raise PlexnetError(f"bind: the symbol has several inputs named {sorted(set(dup))}; input names must be "
                           f"unique")


def _check_group2ctx(group2ctx: dict | None, ctx: Context) -> None:
    """``group2ctx`` (``ctx_group`` attribute -> context) is honoured where every context
    is host memory (``cpu(0)``, ``cpu(1)`` ...: one address space, so the graph runs as
    one and the arrays of each group live on its context, as in MXNet); placing groups on
    other devices (model parallelism across GPUs) is refused with this explanation."""
    if not group2ctx:
        return
    for group, c in group2ctx.items():
        if not isinstance(c, Context):
            raise TypeError(f"group2ctx[{group!r}] must be a Context, got {type(c).__name__}")
        if c != ctx and not (c.device_type in HOST_DEVICE_TYPES and ctx.device_type in HOST_DEVICE_TYPES):
            raise PlexnetError(f"group2ctx: group {group!r} on {c} while the executor is on {ctx}: the plexnet "
                               f"executor runs a graph on one device (host contexts may be mixed); bind one "
                               f"executor per device")


def _placed_ctx(node: Any, group2ctx: dict, ctx: Context) -> Context:
    """Where MXNet places an operator node's output: its ``__ctx_group__``'s context, else
    (a node outside every group) that of its first input's producer, followed back until a
    grouped node; ``ctx`` when none is."""
    while node is not None:  # the graph is acyclic: the walk ends at a variable
        group = node.attrs.get("__ctx_group__")
        if group is not None and group in group2ctx:
            return group2ctx[group]
        node = node.inputs[0][0] if node.inputs else None
    return ctx


def _group_ctx(node: Any, group2ctx: dict | None, ctx: Context) -> Context:
    """The context of a variable node: its ``__ctx_group__``'s, else ``ctx``."""
    if group2ctx:
        group = node.attrs.get("__ctx_group__")
        if group is not None and group in group2ctx:
            return group2ctx[group]
    return ctx


def _same_memory(a: Context, b: Context) -> bool:
    return a == b or (a.device_type in HOST_DEVICE_TYPES and b.device_type in HOST_DEVICE_TYPES)


def _array_list(v: Any, names: list[str], what: str, required: bool) -> list:
    if isinstance(v, dict):
        out = []
        for n in names:
            a = v.get(n)
            if a is None and required:
                raise ValueError(f"bind: {what} has no array for {n!r}")
            out.append(a)
        return out
    v = list(v)
    if len(v) != len(names):
        raise ValueError(f"bind: {what} has {len(v)} arrays, the symbol has {len(names)} ({', '.join(names)})")
    if required and any(a is None for a in v):
        raise ValueError(f"bind: {what} contains None")
    return v


def _grad_req_list(grad_req: Any, names: list[str]) -> list[OpReqType]:
    if isinstance(grad_req, (str, OpReqType)):
        return [_parse_req(grad_req)] * len(names)
    if isinstance(grad_req, dict):  # keys that are not arguments are ignored, as in MXNet
        return [_parse_req(grad_req.get(n, "null")) for n in names]
    reqs = list(grad_req)
    if len(reqs) != len(names):
        raise ValueError(f"grad_req has {len(reqs)} entries, the symbol has {len(names)} arguments")
    return [_parse_req(r) for r in reqs]
