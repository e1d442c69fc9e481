"""Data parallelism over a list of devices: one executor per device, each computing a
slice of the batch (MXNet 1.x ``DataParallelExecutorGroup``).

The batch is split along each input's batch axis (``DataDesc.layout``'s ``N``) in
proportion to ``workload``; outputs are concatenated back. Parameters live on every
device; gradients are aggregated (and weights updated) by ``Module.update`` through
the kvstore.
"""
from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from ..io import DataDesc
from .base_module import ModuleStateError

__all__ = ["DataParallelExecutorGroup", "split_input_slice"]


def split_input_slice(batch_size: int, work_load_list: Sequence[float]) -> list[slice]:
    """Split ``batch_size`` examples into slices proportional to ``work_load_list``."""
    total = sum(work_load_list)
    nums = [round(w * batch_size / total) for w in work_load_list]
    if sum(nums) < batch_size:
        nums[-1] += batch_size - sum(nums)
    slices = []
    end = 0
    for n in nums:
        begin = int(min(end, batch_size))
        end = int(min(begin + n, batch_size))
        if begin >= end:
            raise ValueError(f"batch size {batch_size} is too small to split over {len(work_load_list)} "
                             f"devices (workload {list(work_load_list)})")
        slices.append(slice(begin, end))
    return slices


def _copy_into(src: Any, dst: Any) -> None:
    """``src`` (NDArray or numpy) into the NDArray ``dst`` (across devices too)."""
    if hasattr(src, "copyto"):
        if tuple(src.shape) != tuple(dst.shape):
            raise ValueError(f"cannot load an array of shape {tuple(src.shape)} into an input of shape "
                             f"{tuple(dst.shape)}")
        src.copyto(dst)
    else:
        dst[:] = np.asarray(src)


def _slice_axis(arr: Any, axis: int, begin: int, end: int) -> Any:
    if axis == 0:
        return arr[begin:end]
    from .. import nd
    return nd.slice_axis(arr, axis=axis, begin=begin, end=end)


def _load_general(data: Sequence[Any], targets: Sequence[Any], major_axis: Sequence[int]) -> None:
    for d_src, d_targets, axis in zip(data, targets, major_axis):
        for slice_idx, d_dst in d_targets:
            if axis >= 0 and (slice_idx.start != 0 or d_src.shape[axis] != slice_idx.stop):
                _copy_into(_slice_axis(d_src, axis, slice_idx.start, slice_idx.stop), d_dst)
            else:
                _copy_into(d_src, d_dst)


def _merge_multi_context(outputs: Sequence[Sequence[Any]], major_axis: Sequence[int]) -> list[Any]:
    from .. import nd
    rets = []
    for tensors, axis in zip(outputs, major_axis):
        if axis >= 0 and len(tensors) > 1:
            ctx0 = tensors[0].context
            rets.append(nd.concat(*[t.as_in_context(ctx0) for t in tensors], dim=axis))
        else:
            rets.append(tensors[0])
    return rets


class DataParallelExecutorGroup:
    """One executor per context over slices of each batch."""

    def __init__(self, symbol: Any, contexts: Sequence[Any], workload: Sequence[float],
                 data_shapes: Sequence[Any], label_shapes: Sequence[Any] | None, param_names: Sequence[str],
                 for_training: bool, inputs_need_grad: bool, shared_group: Any = None,
                 logger: Any = logging, fixed_param_names: Sequence[str] | None = None,
                 grad_req: Any = "write", state_names: Sequence[str] | None = None,
                 group2ctxs: Sequence[dict | None] | None = None) -> None:
        self.param_names = list(param_names)
        #: per context, ``ctx_group`` -> context for the executor there (``Module(group2ctxs=)``)
        self.group2ctxs = list(group2ctxs) if group2ctxs is not None else [None] * len(contexts)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        if not for_training:
            grad_req = "null"
        data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
        if label_shapes is not None:
            label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        data_names = [x.name for x in data_shapes]
        self.grad_req = self._grad_req_dict(grad_req, data_names)

        self.batch_size: int | None = None
        self.slices: list[slice] | None = None
        self.execs: list[Any] = []
        self._default_execs: list[Any] | None = None
        self._exec_cache: dict[tuple, list[Any]] = {}
        self.data_arrays: Any = None
        self.label_arrays: Any = None
        self.param_arrays: Any = None
        self.state_arrays: Any = None
        self.grad_arrays: Any = None
        self.aux_arrays: Any = None
        self.input_grad_arrays: Any = None
        self.data_shapes: Any = None
        self.label_shapes: Any = None
        self.data_names: list[str] = []
        self.label_names: list[str] = []
        self.data_layouts: Any = None
        self.label_layouts: Any = None
        self.output_names = symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [self._output_layout(i) for i in range(self.num_outputs)]
        self._shared_group = shared_group
        #: per context, the non-parameter arrays (inputs, their gradients as ``"grad of NAME"``)
        #: by name, shared with ``shared_group`` (MXNet's ``shared_buffer`` of simple_bind)
        self.shared_data_arrays: list[dict[str, Any]] = (
            [{} for _ in self.contexts] if shared_group is None else shared_group.shared_data_arrays)
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def _output_layout(self, index: int) -> int:
        try:
            layout = self.symbol[index].attr("__layout__")
        except Exception:  # noqa: BLE001 - a symbol without per-output attributes
            layout = None
        return DataDesc.get_batch_axis(layout)

    def _grad_req_dict(self, grad_req: Any, data_names: Sequence[str]) -> dict[str, str]:
        if isinstance(grad_req, str):
            out = {}
            for k in self.arg_names:
                if k in self.param_names:
                    out[k] = "null" if k in self.fixed_param_names else grad_req
                elif k in data_names:
                    out[k] = grad_req if self.inputs_need_grad else "null"
                else:
                    out[k] = "null"
            return out
        if isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise ValueError(f"grad_req has {len(grad_req)} entries for {len(self.arg_names)} arguments "
                                 f"{self.arg_names}")
            return dict(zip(self.arg_names, grad_req))
        if isinstance(grad_req, dict):
            out = {}
            for k in self.arg_names:
                if k in self.param_names:
                    out[k] = "null" if k in self.fixed_param_names else "write"
                elif k in data_names:
                    out[k] = "write" if self.inputs_need_grad else "null"
                else:
                    out[k] = "null"
            out.update(grad_req)
            return out
        raise ValueError("grad_req must be one of str, list, tuple, or dict.")

    # -- binding ----------------------------------------------------------------------------
    def decide_slices(self, data_shapes: Sequence[DataDesc]) -> list[int]:
        if not data_shapes:
            raise ValueError("a module needs at least one data input")
        major_axis = [DataDesc.get_batch_axis(getattr(x, "layout", None)) for x in data_shapes]
        for desc, axis in zip(data_shapes, major_axis):
            if axis == -1:
                continue
            batch_size = desc.shape[axis]
            if self.batch_size is not None:
                if batch_size != self.batch_size:
                    raise ValueError(f"all data must have the same batch size: batch_size = {self.batch_size}, "
                                     f"but {desc.name} has shape {desc.shape}")
            else:
                self.batch_size = batch_size
                self.slices = split_input_slice(self.batch_size, self.workload)
        return major_axis

    def _collect_arrays(self) -> None:
        assert self.slices is not None
        self.data_arrays = [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(self.execs)]
                            for name, _ in self.data_shapes]
        self.state_arrays = [[e.arg_dict[name] for e in self.execs] for name in self.state_names]
        if self.label_shapes is not None:
            self.label_arrays = [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(self.execs)]
                                 for name, _ in self.label_shapes]
        else:
            self.label_arrays = None
        self.param_arrays = [[e.arg_dict[name] for e in self.execs] for name in self.arg_names
                             if name in self.param_names]
        if self.for_training:
            self.grad_arrays = [[_grad_of(e, name) for e in self.execs] for name in self.arg_names
                                if name in self.param_names]
        else:
            self.grad_arrays = None
        data_names = [x[0] for x in self.data_shapes]
        if self.inputs_need_grad:
            self.input_grad_arrays = [[_grad_of(e, name) for e in self.execs] for name in data_names
                                      if name in self.arg_names]
        else:
            self.input_grad_arrays = None
        self.aux_arrays = [[e.aux_dict[name] for e in self.execs] for name in self.aux_names]

    def bind_exec(self, data_shapes: Sequence[DataDesc], label_shapes: Sequence[DataDesc] | None,
                  shared_group: Any = None, reshape: bool = False) -> None:
        assert reshape or not self.execs
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        if label_shapes is not None:
            self.label_layouts = self.decide_slices(label_shapes)
        key = self._shape_key(data_shapes, label_shapes)
        cached = self._exec_cache.get(key) if reshape else None
        if cached is not None:
            self.execs = cached
        else:
            new_execs = []
            for i in range(len(self.contexts)):
                data_i = self._sliced_shape(data_shapes, i, self.data_layouts)
                label_i = self._sliced_shape(label_shapes, i, self.label_layouts) if label_shapes else []
                if reshape:
                    new_execs.append(self._reshape_ith_exec(i, data_i, label_i))
                else:
                    shared = None if shared_group is None else shared_group.execs[i]
                    new_execs.append(self._bind_ith_exec(i, data_i, label_i, shared))
            self.execs = new_execs
            self._exec_cache[key] = new_execs
        self.data_shapes = list(data_shapes)
        self.label_shapes = list(label_shapes) if label_shapes is not None else None
        self.data_names = [i.name for i in self.data_shapes]
        if label_shapes is not None:
            self.label_names = [i.name for i in self.label_shapes]  # type: ignore[union-attr]
        self._collect_arrays()

    @staticmethod
    def _shape_key(data_shapes: Sequence[DataDesc], label_shapes: Sequence[DataDesc] | None) -> tuple:
        return (tuple((d.name, tuple(d.shape)) for d in data_shapes),
                tuple((d.name, tuple(d.shape)) for d in (label_shapes or ())))

    def reshape(self, data_shapes: Sequence[DataDesc], label_shapes: Sequence[DataDesc] | None) -> None:
        """Switch to executors for new input shapes; parameters, gradients and auxiliary
        states stay shared with the original executors."""
        if self._shape_key(data_shapes, label_shapes) == self._shape_key(self.data_shapes, self.label_shapes):
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def _input_types(self, data_shapes: Sequence[DataDesc], label_shapes: Sequence[DataDesc]) -> dict:
        types = {x.name: np.dtype(x.dtype) for x in data_shapes}
        types.update({x.name: np.dtype(x.dtype) for x in label_shapes})
        return types

    def _bind_ith_exec(self, i: int, data_shapes: Sequence[DataDesc], label_shapes: Sequence[DataDesc],
                       shared_exec: Any) -> Any:
        ctx = self.contexts[i]
        input_shapes = {d.name: tuple(d.shape) for d in data_shapes}
        input_shapes.update({d.name: tuple(d.shape) for d in label_shapes})
        types = self._input_types(data_shapes, label_shapes)
        type_dict = {k: v for k, v in types.items() if v != np.float32}
        kwargs: dict[str, Any] = dict(input_shapes)
        if type_dict:
            kwargs["type_dict"] = type_dict
        if shared_exec is not None:
            return self._bind_sharing(shared_exec, ctx, input_shapes, types, self.group2ctxs[i], i)
        exe = self.symbol.simple_bind(ctx=ctx, grad_req=self.grad_req, group2ctx=self.group2ctxs[i], **kwargs)
        buf = self.shared_data_arrays[i]
        for name in self.arg_names:
            if name not in self.param_names:
                buf.setdefault(name, exe.arg_dict[name])
                g = _grad_of(exe, name)
                if g is not None:
                    buf.setdefault("grad of " + name, g)
        return exe

    def _reshape_or_create(self, i: int, key: str, shape: tuple, dtype: Any, ctx: Any) -> Any:
        """MXNet's ReshapeOrCreate: a view of the shared array ``key`` when it is large
        enough, else a new array that replaces it in ``shared_data_arrays[i]``."""
        from ..ndarray import NDArray, zeros
        buf, n = self.shared_data_arrays[i], int(np.prod(shape))
        cur = buf.get(key)
        if cur is not None and cur.size >= n and cur.dtype == np.dtype(dtype) and cur.context == ctx:
            if cur.shape == tuple(shape):
                return cur
            return NDArray(cur._chunk, cur._data.reshape(-1)[:n].reshape(tuple(shape)))
        buf[key] = zeros(shape, ctx=ctx, dtype=dtype)
        return buf[key]

    def _reshape_ith_exec(self, i: int, data_shapes: Sequence[DataDesc], label_shapes: Sequence[DataDesc]) -> Any:
        base = self._default_execs[i] if self._default_execs else self.execs[i]
        input_shapes = {d.name: tuple(d.shape) for d in data_shapes}
        input_shapes.update({d.name: tuple(d.shape) for d in label_shapes})
        reshape = getattr(base, "reshape", None)
        if reshape is not None:
            try:
                return reshape(partial_shaping=True, allow_up_sizing=True, **input_shapes)
            except (TypeError, NotImplementedError):
                pass
        return self._bind_sharing(base, self.contexts[i], input_shapes,
                                  self._input_types(data_shapes, label_shapes), self.group2ctxs[i])

    def _bind_sharing(self, base: Any, ctx: Any, input_shapes: dict, types: dict,
                      group2ctx: dict | None = None, i: int | None = None) -> Any:
        """A new executor for ``input_shapes`` whose parameters, gradients and auxiliary
        states are ``base``'s arrays (``Symbol.bind`` with those arrays); with a context
        index ``i``, the other arguments come from ``shared_data_arrays[i]``."""
        from .. import nd
        arg_shapes, _, _ = self.symbol.infer_shape(**input_shapes)
        args = {}
        grads = {}
        for name, shape in zip(self.arg_names, arg_shapes):
            if i is not None and (name not in self.param_names or name not in base.arg_dict):
                dtype = types.get(name, np.float32)
                args[name] = self._reshape_or_create(i, name, shape, dtype, ctx)
                if self.grad_req.get(name, "null") != "null":
                    grads[name] = self._reshape_or_create(i, "grad of " + name, shape, dtype, ctx)
            elif name in input_shapes:
                args[name] = nd.zeros(shape, ctx=ctx, dtype=types.get(name, np.float32))
                if self.grad_req.get(name, "null") != "null":
                    grads[name] = nd.zeros(shape, ctx=ctx, dtype=types.get(name, np.float32))
            else:
                args[name] = base.arg_dict[name]
                g = _grad_of(base, name)
                if g is not None:
                    grads[name] = g
        aux = {name: base.aux_dict[name] for name in self.aux_names}
        return self.symbol.bind(ctx=ctx, args=args, args_grad=grads or None, grad_req=self.grad_req,
                                aux_states=aux, group2ctx=group2ctx)

    def _sliced_shape(self, shapes: Sequence[DataDesc] | None, i: int, major_axis: Sequence[int]) -> list[DataDesc]:
        assert self.slices is not None
        out = []
        for desc, axis in zip(shapes or (), major_axis):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            out.append(DataDesc(desc.name, tuple(shape), getattr(desc, "dtype", np.float32),
                                getattr(desc, "layout", "NCHW")))
        return out

    # -- parameters -------------------------------------------------------------------------
    def set_params(self, arg_params: dict, aux_params: dict, allow_extra: bool = False) -> None:
        for e in self.execs:
            e.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params: dict, aux_params: dict) -> None:
        """Copy the parameters (averaged over devices) into ``arg_params`` /
        ``aux_params``."""
        for name, block in zip(self.param_names_in_order(), self.param_arrays):
            _average_into(block, arg_params[name])
        for name, block in zip(self.aux_names, self.aux_arrays):
            _average_into(block, aux_params[name])

    def param_names_in_order(self) -> list[str]:
        return [n for n in self.arg_names if n in self.param_names]

    # -- computation ------------------------------------------------------------------------
    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        _load_general(data_batch.data, self.data_arrays, self.data_layouts)
        if is_train is None:
            is_train = self.for_training
        if self.label_arrays is not None and data_batch.label:
            _load_general(data_batch.label, self.label_arrays, self.label_layouts)
        for e in self.execs:
            e.forward(is_train=is_train)

    def get_output_shapes(self) -> list[tuple[str, tuple]]:
        shapes = [out.shape for out in self.execs[0].outputs]
        concat = []
        for key, shape, axis in zip(self.output_names, shapes, self.output_layouts):
            s = list(shape)
            if axis >= 0:
                s[axis] = self.batch_size
            concat.append((key, tuple(s)))
        return concat

    def get_outputs(self, merge_multi_context: bool = True, begin: int = 0, end: int | None = None) -> list:
        if end is None:
            end = self.num_outputs
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            return _merge_multi_context(outputs, self.output_layouts[begin:end])
        return outputs

    def get_states(self, merge_multi_context: bool = True) -> list:
        if merge_multi_context:
            raise ValueError("merge_multi_context=True is not supported for get_states")
        return self.state_arrays

    def set_states(self, states: Any = None, value: Any = None) -> None:
        if states is not None:
            if value is not None:
                raise ValueError("Only one of states & value can be specified.")
            for src_list, dst_list in zip(states, self.state_arrays):
                for src, dst in zip(src_list, dst_list):
                    _copy_into(src, dst)
        else:
            if value is None:
                raise ValueError("At least one of states & value must be specified.")
            for dst_list in self.state_arrays:
                for dst in dst_list:
                    dst[:] = value

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        if not self.inputs_need_grad:
            raise ValueError("bind with inputs_need_grad=True to get input gradients")
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def backward(self, out_grads: Any = None) -> None:
        if not self.for_training:
            raise ModuleStateError("re-bind with for_training=True to run backward")
        if out_grads is None:
            out_grads = []
        elif hasattr(out_grads, "shape"):
            out_grads = [out_grads]
        assert self.slices is not None
        for i, (e, islice) in enumerate(zip(self.execs, self.slices)):
            sliced = []
            for grad, axis in zip(out_grads, self.output_layouts):
                if axis >= 0 and len(self.execs) > 1:
                    sliced.append(_slice_axis(grad, axis, islice.start, islice.stop).as_in_context(self.contexts[i]))
                else:
                    sliced.append(grad.as_in_context(self.contexts[i]) if hasattr(grad, "as_in_context") else grad)
            if sliced:
                e.backward(out_grads=sliced)
            else:
                e.backward()

    def update_metric(self, eval_metric: Any, labels: Sequence[Any], pre_sliced: bool = False) -> None:
        assert self.slices is not None
        for k, (texec, islice) in enumerate(zip(self.execs, self.slices)):
            if not pre_sliced:
                labels_slice = []
                for label, axis in zip(labels, self.label_layouts or [0] * len(labels)):
                    if axis >= 0 and len(self.execs) > 1:
                        labels_slice.append(_slice_axis(label, axis, islice.start, islice.stop))
                    else:
                        labels_slice.append(label)
            else:
                labels_slice = labels[k]
            labels_ = OrderedDict(zip(self.label_names, labels_slice))
            preds = OrderedDict(zip(self.output_names, texec.outputs))
            eval_metric.update_dict(labels_, preds)

    def install_monitor(self, mon: Any) -> None:
        for e in self.execs:
            mon.install(e)


def _grad_of(executor: Any, name: str) -> Any:
    gd = getattr(executor, "grad_dict", None) or {}
    return gd.get(name)


def _average_into(block: Sequence[Any], target: Any) -> None:
    if len(block) == 1:
        src = block[0]
        if src is target:
            return
        if tuple(src.shape) == tuple(target.shape) and src.dtype == target.dtype:
            src.copyto(target)
            return
        target[:] = src.asnumpy().astype(np.dtype(target.dtype), copy=False)
        return
    acc = np.mean([w.asnumpy().astype(np.float64) for w in block], axis=0)
    target[:] = acc.astype(np.dtype(target.dtype))
