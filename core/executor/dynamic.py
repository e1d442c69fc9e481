"""The executor of a graph with dynamic-shape operators (MXNet's dynamic ``CachedOp`` path).

An operator whose output shape depends on input *values* (``_contrib_boolean_mask``)
leaves shape inference incomplete, so no memory plan can be made at bind time. Its
property declares ``forward_dynamic(inputs) -> outputs`` on NDArrays; ``Executor.bind``
and ``simple_bind`` then return a :class:`DynamicExecutor`, which runs the graph node by
node through the NDArray API (every other node through the imperative operator call),
recording with autograd when gradients are wanted, and runs backward over that record.
Outputs are new arrays with the shapes of this run, as in MXNet.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import autograd
from ..base import PlexnetError, ShapeError
from ..context import Context
from ..ndarray.invoke import invoke
from ..ndarray.ndarray import NDArray, array, ones, zeros
from ..operator.contract import OpReqType
from ..symbol.graph import IndexedGraph
from .arguments import copy_forward_arguments
from .executor import Executor

__all__ = ["DynamicExecutor"]

_NULL, _ADD = OpReqType.null, OpReqType.add


class DynamicExecutor(Executor):
    """A bound symbol run node by node on NDArrays (the API of :class:`Executor`)."""

    def __init__(self, symbol: Any, ctx: Context, arg_arrays: Sequence[NDArray],
                 grad_arrays: Sequence[NDArray | None], grad_reqs: Sequence[OpReqType],
                 aux_arrays: Sequence[NDArray], shared_exec: Any = None, plan_memory_on: bool | None = None,
                 bulk_exec: bool | None = None, _graph: IndexedGraph | None = None,
                 _share_outputs: bool = False) -> None:
        g = self._take_arrays(symbol, ctx, arg_arrays, grad_arrays, grad_reqs, aux_arrays, _graph)
        for name, a, gr in zip(self._arg_names, self.arg_arrays, self.grad_arrays):
            if gr is not None and gr.shape != a.shape:
                raise ShapeError(f"bind: gradient array for {name!r} has shape {gr.shape}, the argument has {a.shape}")
        for i in g.op_nids:
            if g.nodes[i].subgraphs:
                raise PlexnetError(f"bind: {g.nodes[i].op} ({g.nodes[i].name!r}) runs subgraphs, which a graph with "
                                   f"dynamic-shape operators cannot hold")
        self._training = any(r != _NULL for r in self._grad_reqs)
        self.outputs = []
        self._recorded: tuple[list, list] | None = None
        self._monitor: Any = None

    # -- running ---------------------------------------------------------------------------------------
    def forward(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """Run the graph; keyword arrays are first copied into the arguments of those names."""
        copy_forward_arguments(self.arg_dict, self._arg_names, kwargs)
        g = self._g
        record = bool(is_train) and self._training
        values: list[Any] = [None] * g.num_entries
        leaves: list[tuple[int, NDArray]] = []
        for k, (nid, a) in enumerate(zip(g.arg_nids, self.arg_arrays)):
            x = a.detach()  # the graph of this run only (a Gluon parameter's own record stays out)
            if record and self._grad_reqs[k] != _NULL:
                x = a.copy()
                x.attach_grad()
                leaves.append((k, x))
            values[g.row_ptr[nid]] = x
        for nid, a in zip(g.aux_nids, self.aux_arrays):
            values[g.row_ptr[nid]] = a  # updated in place (BatchNorm's moving statistics)
        scope = autograd.record(train_mode=bool(is_train)) if record else autograd.pause(train_mode=bool(is_train))
        with scope:
            for nid in g.op_nids:
                node = g.nodes[nid]
                ins = [values[e] for e in g.inputs[nid]]
                run = getattr(node.prop, "forward_dynamic", None)
                res = run(ins) if callable(run) else invoke(str(node.op), ins, node.params())
                res = list(res) if isinstance(res, (list, tuple)) else [res]
                base = g.row_ptr[nid]
                for k, r in enumerate(res[:g.row_ptr[nid + 1] - base]):
                    values[base + k] = r
                if self._monitor is not None:
                    callback, _all = self._monitor
                    for k, r in enumerate(res):
                        callback(node.output_name(k), r.copy())
        outs: list[NDArray] = [values[e] for e in g.outputs]
        if any(o is None for o in outs):
            raise PlexnetError("forward: a graph output is a hidden output of its operator, which the dynamic "
                               "executor does not keep")
        self.outputs = list(outs)
        self.__dict__.pop("_output_dict", None)
        self._recorded = (leaves, outs) if record else None
        return outs

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Gradients of the last training forward into the bound gradient arrays
        (``write`` or ``add`` per argument); omitted head gradients are ones."""
        if not self._training:
            return
        if self._recorded is None:
            raise PlexnetError("backward: run forward(is_train=True) first")
        leaves, outs = self._recorded
        if out_grads is not None and isinstance(out_grads, (NDArray, np.ndarray)):
            out_grads = [out_grads]
        heads = []
        for pos, o in enumerate(outs):
            gr = out_grads[pos] if out_grads is not None and pos < len(out_grads) else None
            if gr is None:
                gr = ones(o.shape, o.context, o.dtype)
            elif tuple(gr.shape) != o.shape:
                raise ShapeError(f"backward: out_grad {pos} has shape {tuple(gr.shape)}, output "
                                 f"{self._out_names[pos]!r} has {o.shape}")
            heads.append(gr if isinstance(gr, NDArray) else array(gr, ctx=o.context, dtype=o.dtype))
        autograd.backward(outs, heads, retain_graph=True, train_mode=is_train)
        for k, x in leaves:
            dst = self.grad_arrays[k]
            if self._grad_reqs[k] == _ADD:
                dst += x.grad
            else:
                dst[:] = x.grad

    # -- introspection ---------------------------------------------------------------------------------
    @property
    def output_dict(self) -> dict[str, NDArray]:
        return {n: o for n, o in zip(self._out_names, self.outputs) if o is not None}

    def set_monitor_callback(self, callback: Any, monitor_all: bool = False) -> None:
        """``callback(name, array)`` for every node output during ``forward``."""
        self._monitor = None if callback is None else (callback, bool(monitor_all))

    def reshape(self, partial_shaping: bool = False, allow_up_sizing: bool = False, **kwargs: Any) -> "Executor":
        """A new executor with arguments of new shapes (zeros); the others are shared."""
        args = [zeros(tuple(kwargs[n]), self._ctx, a.dtype) if n in kwargs and tuple(kwargs[n]) != a.shape else a
                for n, a in zip(self._arg_names, self.arg_arrays)]
        grads = [None if gr is None else (zeros(a.shape, self._ctx, gr.dtype) if a is not old else gr)
                 for a, old, gr in zip(args, self.arg_arrays, self.grad_arrays)]
        return DynamicExecutor(self._symbol, self._ctx, args, grads, self._grad_reqs, self.aux_arrays, _graph=self._g)

    def memory_report(self) -> dict[str, Any]:
        return {"dynamic": True, "planned_bytes": 0}

    def debug_str(self) -> str:
        return f"DynamicExecutor: {len(self._g.op_nids)} operators run node by node (dynamic shapes)"

    def __repr__(self) -> str:
        return f"<DynamicExecutor {self._symbol!r} on {self._ctx}>"



Executor.dynamic_class = DynamicExecutor
