"""``SparseExecutor``: a bound symbol whose arguments or gradients are sparse.

``Executor.bind``/``simple_bind`` return one when ``sparse.wants_sparse`` says so; see
``sparse.py`` for how it runs and docs/sparse.md ("Symbolic sparse storage").
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..base import PlexnetError, ShapeError
from ..context import Context
from ..ndarray.ndarray import NDArray, zeros as _dense_zeros
from ..ndarray import sparse as _sp
from ..operator.contract import OpReqType
from .arguments import copy_forward_arguments
from .sparse import _densify, _param, _sparse_grad_rules, _truthy, infer_stypes, stype_of

__all__ = ["SparseExecutor"]

_NULL, _ADD = OpReqType.null, OpReqType.add


class SparseExecutor:
    """Executor over CSR/row_sparse arguments or gradients (same API as ``Executor``)."""

    def __init__(self, dense_cls: Any, symbol: Any, ctx: Context, g: Any, arg_arrays: Sequence[NDArray],
                 grad_arrays: Sequence[NDArray | None], grad_reqs: Sequence[OpReqType],
                 aux_arrays: Sequence[NDArray], group2ctx: Any = None) -> None:
        self._symbol, self._ctx, self._g = symbol, ctx, g
        self._arg_names, self._aux_names, self._out_names = g.arg_names(), g.aux_names(), g.output_names()
        self.arg_arrays = list(arg_arrays)
        self.aux_arrays = list(aux_arrays)
        self.grad_arrays = list(grad_arrays)
        self._grad_reqs = [OpReqType.parse(r) if gr is not None else _NULL for r, gr in zip(grad_reqs, grad_arrays)]
        for name, a, gr in zip(self._arg_names, self.arg_arrays, self.grad_arrays):
            if stype_of(a) != "default" and a.stype not in ("csr", "row_sparse"):
                raise PlexnetError(f"bind: argument {name!r} has unknown storage type {a.stype!r}")
            if gr is not None and tuple(gr.shape) != tuple(a.shape):
                raise ShapeError(f"bind: gradient array for {name!r} has shape {tuple(gr.shape)}, the argument "
                                 f"has {tuple(a.shape)}")
        self._stypes = infer_stypes(g, [stype_of(a) for a in self.arg_arrays], [stype_of(a) for a in self.aux_arrays])
        self._check_nodes()
        # the dense twin: the user's dense arrays themselves, dense copies of the sparse ones
        self._dargs = [a if stype_of(a) == "default" else _dense_zeros(a.shape, ctx, a.dtype) for a in self.arg_arrays]
        self._dgrads = [None if gr is None else gr if stype_of(gr) == "default"
                        else _dense_zeros(gr.shape, ctx, gr.dtype) for gr in self.grad_arrays]
        dreqs = [r if gr is None or stype_of(gr) == "default" else (OpReqType.write if r != _NULL else _NULL)
                 for r, gr in zip(self._grad_reqs, self.grad_arrays)]
        self._has_grad = any(r != _NULL for r in self._grad_reqs)
        self._dense = dense_cls(symbol, ctx, self._dargs, self._dgrads, dreqs, self.aux_arrays, _graph=g)
        if group2ctx:
            self._dense._place_outputs(group2ctx)
        self._rules = self._row_rules()
        # run-time output shapes (boolean_mask...): the node-by-node pass has no NDArray call for them
        self._dynamic = any(callable(getattr(g.nodes[i].prop, "forward_dynamic", None)) for i in g.op_nids)
        self._trained = False
        self.outputs: list[NDArray] = [self._cast(o, self._stypes[e]) for o, e in zip(self._dense.outputs, g.outputs)]

    # -- checks --------------------------------------------------------------------------------------
    def _check_nodes(self) -> None:
        g, st = self._g, self._stypes
        for nid in g.op_nids:
            node = g.nodes[nid]
            ins = [st[e] for e in g.inputs[nid]]
            if node.subgraphs is not None and any(s != "default" for s in ins):
                raise PlexnetError(f"bind: operator {node.op!r} ({node.name!r}) runs a subgraph; it takes no sparse "
                                   f"inputs (storage types {ins})")
            if node.op == "_sparse_retain" and ins[0] != "row_sparse":
                raise PlexnetError(f"bind: operator _sparse_retain ({node.name!r}): argument 'data' has storage "
                                   f"type {ins[0]}; retain takes a row_sparse array (MXNet 1.9.1)")
            if node.op == "_sparse_adagrad_update" and ins[1] != "row_sparse":
                raise PlexnetError(f"bind: operator _sparse_adagrad_update ({node.name!r}): argument 'grad' has "
                                   f"storage type {ins[1]}; the operator takes only a row_sparse gradient")
            if node.op == "BatchNorm" and _truthy(node.params().get("fix_gamma", True)) and any(
                    s != "default" for s in ins):
                raise PlexnetError(f"bind: operator BatchNorm ({node.name!r}): fix_gamma=True is not supported for "
                                   f"sparse inputs (storage types {ins}; MXNet 1.9.1 refuses it too); "
                                   f"use fix_gamma=False or dense arrays")
            if node.op == "cast_storage" and {ins[0], node.params().get("stype")} == {"csr", "row_sparse"}:
                raise PlexnetError(f"bind: operator cast_storage ({node.name!r}): argument 'data' has storage type "
                                   f"{ins[0]}; casting between csr and row_sparse is not supported (as MXNet)")

    def _row_rules(self) -> list[tuple[int, str, int, int]]:
        """(argument index, kind, index of the argument that names the rows, input_dim) for
        each row_sparse gradient whose rows MXNet's kernel chooses."""
        g = self._g
        pos = {g.row_ptr[nid]: i for i, nid in enumerate(g.arg_nids)}
        idx_of = {nid: i for i, nid in enumerate(g.arg_nids)}
        kinds = _sparse_grad_rules(g, self._stypes)
        rules = []
        for nid in g.op_nids:
            node, ins = g.nodes[nid], g.inputs[nid]
            if len(ins) < 2 or ins[1] not in pos:
                continue
            w = pos[ins[1]]
            if self.grad_arrays[w] is None or stype_of(self.grad_arrays[w]) != "row_sparse":
                continue
            k = kinds.get(g.arg_nids[w], set())
            if node.op == "dot" and "dot" in k and ins[0] in pos:
                rules.append((w, "dot", pos[ins[0]], 0))
            elif node.op in ("Embedding", "_contrib_SparseEmbedding") and "embedding" in k and ins[0] in pos:
                rules.append((w, "embedding", pos[ins[0]], int(_param(node.params().get("input_dim", "0")))))
        del idx_of
        return rules

    # -- running -------------------------------------------------------------------------------------------
    @staticmethod
    def _cast(a: NDArray, stype: str) -> NDArray:
        s = stype_of(a)
        if s == stype:
            return a
        if stype == "default" or s == "default":
            return a.tostype(stype)
        return a.tostype("default").tostype(stype)  # csr <-> row_sparse goes through dense

    def forward(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """Run the forward pass; keyword arrays are first copied into the arguments of those
        names. Returns ``outputs`` (sparse where MXNet's storage-type rules say so)."""
        copy_forward_arguments(self.arg_dict, self._arg_names, kwargs)
        if is_train and self._has_grad or self._dynamic:
            self._forward_dense(bool(is_train))
        else:
            self._forward_sparse(bool(is_train))
        return self.outputs

    def _forward_dense(self, is_train: bool = True) -> None:
        for a, d in zip(self.arg_arrays, self._dargs):
            if a is not d:
                d[:] = a  # a dense copy of the sparse argument
        outs = self._dense.forward(is_train=is_train)
        self.outputs = [self._cast(o, self._stypes[e]) for o, e in zip(outs, self._g.outputs)]
        self._trained = is_train

    def _forward_sparse(self, is_train: bool) -> None:
        from .. import autograd
        from ..ndarray import op_function
        g = self._g
        vals: list[Any] = [None] * g.num_entries
        for nid, a in zip(g.arg_nids, self.arg_arrays):
            vals[g.row_ptr[nid]] = a
        for nid, a in zip(g.aux_nids, self.aux_arrays):
            vals[g.row_ptr[nid]] = a
        with autograd.train_mode() if is_train else autograd.predict_mode():
            for nid in g.op_nids:
                node = g.nodes[nid]
                ins = [vals[e] for e in g.inputs[nid]]
                params = {k: _param(v) for k, v in node.params().items()}
                if node.op == "_sparse_retain":
                    res: Any = _sp.retain(ins[0], ins[1])
                else:
                    fn = op_function(node.op)
                    if fn is None:
                        raise PlexnetError(f"forward: operator {node.op!r} ({node.name!r}) has no NDArray function")
                    res = fn(*ins, **params)
                res = list(res) if isinstance(res, (list, tuple)) else [res]
                for k, r in enumerate(res[:g.row_ptr[nid + 1] - g.row_ptr[nid]]):
                    vals[g.row_ptr[nid] + k] = r
        self.outputs = [self._cast(vals[e], self._stypes[e]) for e in g.outputs]
        self._trained = False

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Run the backward pass (the dense twin's), then store each gradient in the bound
        array's storage type."""
        if not self._has_grad:
            return
        if not self._trained:
            self._forward_dense()
        if out_grads is not None:
            if isinstance(out_grads, (NDArray, np.ndarray)):
                out_grads = [out_grads]
            out_grads = [None if o is None else _densify(o) if isinstance(o, NDArray) else o for o in out_grads]
        self._dense.backward(out_grads, is_train=is_train)
        for i, (gr, dg, req) in enumerate(zip(self.grad_arrays, self._dgrads, self._grad_reqs)):
            if gr is None or dg is None or gr is dg or req == _NULL:
                continue
            if stype_of(gr) == "csr":  # the non-zero entries (MXNet's csr gradients: unary operators of csr)
                gr[:] = (gr.tostype("default") + dg if req == _ADD else dg).tostype("csr")
                continue
            rsp = self._to_rsp(i, dg)
            if req == _ADD:
                gr[:] = _sp.add(gr, rsp) if stype_of(gr) == "row_sparse" else gr + rsp
            else:
                gr[:] = rsp

    def _to_rsp(self, i: int, dense: NDArray) -> NDArray:
        """``dense`` as row_sparse holding MXNet's rows: those its kernels produce plus
        every row with a non-zero value."""
        host = dense.asnumpy()
        mine = [r for r in self._rules if r[0] == i]
        if not mine:
            # MXNet's element-wise backward kernels with a dense head gradient write every row
            ids = np.arange(host.shape[0], dtype=np.int64)
            return _sp.row_sparse_array((host, ids), shape=host.shape, ctx=dense.context, dtype=host.dtype)
        rows = [np.nonzero(np.any(host.reshape(host.shape[0], -1) != 0, axis=1))[0]]
        for w, kind, src, dim in mine:
            a = self.arg_arrays[src]
            if kind == "dot" and stype_of(a) == "csr":
                rows.append(a.indices.asnumpy().astype(np.int64))
            elif kind == "embedding":
                rows.append(np.clip(a.asnumpy().astype(np.int64).ravel(), 0, max(dim - 1, 0)))
        ids = np.unique(np.concatenate(rows)).astype(np.int64)
        return _sp.row_sparse_array((host[ids], ids), shape=host.shape, ctx=dense.context, dtype=host.dtype)

    # -- dictionaries and the rest of the Executor API ---------------------------------------------------------
    @property
    def arg_dict(self) -> dict[str, NDArray]:
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self) -> dict[str, NDArray | None]:
        return dict(zip(self._arg_names, self.grad_arrays))

    @property
    def aux_dict(self) -> dict[str, NDArray]:
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self) -> dict[str, NDArray]:
        return dict(zip(self._out_names, self.outputs))

    @property
    def grad_req(self) -> dict[str, str]:
        names = {OpReqType.null: "null", OpReqType.write: "write", OpReqType.inplace: "write", OpReqType.add: "add"}
        return {n: names[r] for n, r in zip(self._arg_names, self._grad_reqs)}

    @property
    def symbol(self) -> Any:
        return self._symbol

    @property
    def ctx(self) -> Context:
        return self._ctx

    def copy_params_from(self, arg_params: dict[str, Any], aux_params: dict[str, Any] | None = None,
                         allow_extra_params: bool = False) -> None:
        """Copy parameter values into the bound arrays (a sparse array takes the value's
        entries in its own storage type)."""
        for params, d, what in ((arg_params, self.arg_dict, "arguments"), (aux_params or {}, self.aux_dict,
                                                                          "auxiliary states")):
            for name, arr in params.items():
                if name in d:
                    dst = d[name]
                    if tuple(arr.shape) != tuple(dst.shape):
                        raise ShapeError(f"copy_params_from: {name!r} has shape {tuple(arr.shape)}, the executor's "
                                         f"array has {tuple(dst.shape)}")
                    dst[:] = self._cast(arr, stype_of(dst)) if isinstance(arr, NDArray) else arr
                elif not allow_extra_params:
                    raise ValueError(f"Find name \"{name}\" that is not in the {what}")

    def set_monitor_callback(self, callback: Any, monitor_all: bool = False) -> None:
        """Monitors see the dense twin's node outputs (the training path)."""
        self._dense.set_monitor_callback(callback, monitor_all)

    def reshape(self, *args: Any, **kwargs: Any) -> Any:
        raise PlexnetError("Executor.reshape: not supported for executors with sparse arguments or gradients; "
                           "bind again with the new shapes")

    def debug_str(self) -> str:
        return self._dense.debug_str()

    def get_optimized_symbol(self) -> Any:
        """The bound graph after MXNet's common-subexpression pass (the dense twin's)."""
        return self._dense.get_optimized_symbol()

    def memory_report(self) -> Any:
        """The dense twin's memory plan report."""
        return self._dense.memory_report()

    def __repr__(self) -> str:
        return f"<SparseExecutor {self._symbol!r} on {self._ctx}>"
