"""``Module``: a symbol bound to one or more devices (MXNet 1.x ``mx.mod.Module``).

    mod = mx.mod.Module(net, data_names=("data",), label_names=("softmax_label",),
                        context=mx.cpu())
    mod.fit(train_iter, eval_data=val_iter, optimizer="sgd",
            optimizer_params={"learning_rate": 0.1}, num_epoch=10)
    mod.save_checkpoint("lenet", 10)
    mod2 = mx.mod.Module.load("lenet", 10)

Parameters are owned by the executors (one copy per device); ``get_params`` returns
host copies (``arg_params``, ``aux_params``). ``init_optimizer`` follows MXNet's
kvstore rules: a kvstore name with a single device and no ``dist`` means no kvstore;
otherwise the kvstore aggregates gradients and, when it can, runs the optimizer itself
(``update_on_kvstore``); see ``plexnet.model._create_kvstore``.
"""
from __future__ import annotations

import logging
import warnings
from typing import Any, Sequence

import numpy as np

from ..context import Context, cpu
from ..initializer import InitDesc, Uniform
from ..model import (_create_kvstore, _initialize_kvstore, _update_params, _update_params_on_kvstore,
                     atomic_write, load_checkpoint, params_file, save_symbol, symbol_file)
from .base_module import BaseModule, ModuleStateError, _check_input_names, _parse_data_desc
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]


class Module(BaseModule):
    """A module over one symbol.

    ``data_names`` / ``label_names`` name the symbol's inputs fed from data batches;
    every other argument is a parameter, learned unless listed in
    ``fixed_param_names``. ``context`` is a Context or a list (data parallelism,
    split by ``work_load_list``).
    """

    def __init__(self, symbol: Any, data_names: Sequence[str] | None = ("data",),
                 label_names: Sequence[str] | None = ("softmax_label",), logger: Any = logging,
                 context: Any = None, work_load_list: Sequence[float] | None = None,
                 fixed_param_names: Sequence[str] | None = None, state_names: Sequence[str] | None = None,
                 group2ctxs: Any = None, compression_params: dict | None = None) -> None:
        super().__init__(logger=logger)
        if context is None:
            context = cpu()
        if isinstance(context, Context):
            context = [context]
        self._context = list(context)
        if not self._context:
            raise ValueError("Module needs at least one context")
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise ValueError(f"work_load_list has {len(work_load_list)} entries for {len(self._context)} contexts")
        self._work_load_list = list(work_load_list)
        # ``ctx_group`` attribute -> context, one dict for every context or a list with one per
        # context (MXNet's rule); host contexts may be mixed, other devices are refused at bind
        self._group2ctxs = _prepare_group2ctxs(group2ctxs, len(self._context))
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)

        arg_names = symbol.list_arguments()
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()

        self._arg_params: dict | None = None
        self._aux_params: dict | None = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer: Any = None
        self._kvstore: Any = None
        self._update_on_kvstore: bool | None = None
        self._updater: Any = None
        self._preload_opt_states: str | None = None
        self._grad_req: Any = None
        self._exec_group: DataParallelExecutorGroup | None = None
        self._data_shapes: Any = None
        self._label_shapes: Any = None

    # -- checkpoints ------------------------------------------------------------------------------
    @staticmethod
    def load(prefix: str, epoch: int, load_optimizer_states: bool = False, **kwargs: Any) -> "Module":
        """A module from ``PREFIX-symbol.json`` and ``PREFIX-EPOCH.params`` (and, with
        ``load_optimizer_states``, ``PREFIX-EPOCH.states`` once ``init_optimizer``
        runs). Keyword arguments go to ``Module(...)``."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = "%s-%04d.states" % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix: str, epoch: int, save_optimizer_states: bool = False,
                        remove_amp_cast: bool = True) -> None:
        """Save ``PREFIX-symbol.json``, ``PREFIX-EPOCH.params`` (and
        ``PREFIX-EPOCH.states``), each atomically."""
        save_symbol(symbol_file(prefix), self._symbol, remove_amp_cast)
        param_name = params_file(prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = "%s-%04d.states" % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def _reset_bind(self) -> None:
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # -- properties ---------------------------------------------------------------------------------
    @property
    def data_names(self) -> list[str]:
        return self._data_names

    @property
    def label_names(self) -> list[str]:
        return self._label_names

    @property
    def output_names(self) -> list[str]:
        return self._output_names

    @property
    def data_shapes(self) -> list:
        assert self.binded
        return self._data_shapes

    @property
    def label_shapes(self) -> list | None:
        assert self.binded
        return self._label_shapes

    @property
    def output_shapes(self) -> list:
        assert self.binded
        return self._exec_group.get_output_shapes()  # type: ignore[union-attr]

    # -- parameters ---------------------------------------------------------------------------------
    def get_params(self) -> tuple[dict, dict]:
        """``(arg_params, aux_params)``: host copies of the current parameters."""
        if not self.params_initialized:
            raise ModuleStateError("parameters are not initialized: call init_params (or fit) first")
        if self._params_dirty:
            self._sync_params_from_devices()
        return (self._arg_params, self._aux_params)  # type: ignore[return-value]

    def init_params(self, initializer: Any = Uniform(0.01), arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        """Initialise the parameters: from ``arg_params`` / ``aux_params`` where given
        (every parameter must be there unless ``allow_missing``), else with
        ``initializer`` (MXNet's name rules: see ``plexnet.initializer``)."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. init_params call ignored.",
                          stacklevel=2)
            return
        if not self.binded:
            raise ModuleStateError("call bind before initializing the parameters")

        def _impl(name: InitDesc, arr: Any, cache: dict | None) -> None:
            if cache is not None:
                if name in cache:
                    cache_arr = cache[name]
                    if cache_arr is not arr:
                        if tuple(cache_arr.shape) != tuple(arr.shape):
                            raise ValueError(f"parameter {name!r}: given shape {tuple(cache_arr.shape)} does not "
                                             f"match the network's {tuple(arr.shape)}")
                        if hasattr(cache_arr, "copyto"):
                            cache_arr.copyto(arr)
                        else:
                            arr[:] = np.asarray(cache_arr)
                    return
                if not allow_missing:
                    raise RuntimeError(f"{name} is not presented (parameter {name!r} is missing from the given "
                                       f"params; pass allow_missing=True to initialize it with the initializer)")
            if initializer is None:
                raise RuntimeError(f"parameter {name!r} has no value and no initializer was given")
            initializer(name, arr)

        attrs = _attr_dict(self._symbol)
        for name, arr in sorted(self._arg_params.items()):  # type: ignore[union-attr]
            _impl(InitDesc(name, attrs.get(name, None)), arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):  # type: ignore[union-attr]
            _impl(InitDesc(name, attrs.get(name, None)), arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params,  # type: ignore[union-attr]
                                    allow_extra=allow_extra)

    def set_params(self, arg_params: dict, aux_params: dict, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        """Set the parameters from ``arg_params`` / ``aux_params``."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params call ignored.",
                          stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)  # type: ignore[union-attr]
        self._params_dirty = True
        self.params_initialized = True

    # -- binding ------------------------------------------------------------------------------------
    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: Any = "write") -> None:
        """Allocate executors for ``data_shapes`` / ``label_shapes`` (``DataDesc`` or
        ``(name, shape)``). ``for_training=False`` allocates no gradients;
        ``inputs_need_grad`` also computes gradients of the data inputs."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise ValueError("inputs_need_grad=True needs for_training=True")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        shared_group = None
        if shared_module is not None:
            if not (isinstance(shared_module, Module) and shared_module.binded
                    and shared_module.params_initialized):
                raise ValueError("shared_module must be a bound Module with initialized parameters")
            shared_group = shared_module._exec_group
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes, self._label_shapes,
            self._param_names, for_training, inputs_need_grad, shared_group, logger=self.logger,
            fixed_param_names=self._fixed_param_names, grad_req=grad_req, state_names=self._state_names,
            group2ctxs=self._group2ctxs)
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            # loaded (Module.load) or re-bound: give the new executors the parameters
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            from .. import nd
            # a row_sparse weight (Variable(stype='row_sparse')) keeps its storage type (MXNet)
            self._arg_params = {name: nd.zeros(block[0].shape, dtype=block[0].dtype,
                                               stype=getattr(block[0], "stype", "default"))
                                for name, block in zip(self._exec_group.param_names_in_order(),
                                                       self._exec_group.param_arrays)}
            self._aux_params = {name: nd.zeros(block[0].shape, dtype=block[0].dtype)
                                for name, block in zip(self._aux_names, self._exec_group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """Re-bind for new input shapes (e.g. another batch size), keeping parameters."""
        assert self.binded
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)  # type: ignore[union-attr]

    # -- optimizer ----------------------------------------------------------------------------------
    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        """Set up the optimizer (a name with ``optimizer_params``, or an Optimizer) and
        the kvstore (a name, a KVStore or None). ``rescale_grad`` defaults to
        ``1 / (batch_size * workers of a dist_sync kvstore)``."""
        from .. import optimizer as opt
        if not (self.binded and self.params_initialized):
            raise ModuleStateError("bind and init_params before init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kv, update_on_kvstore = _create_kvstore(kvstore, len(self._context), self._arg_params)
        group = self._exec_group
        batch_size = group.batch_size  # type: ignore[union-attr]
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        rescale_grad = 1.0 / batch_size
        param_names = group.param_names_in_order()  # type: ignore[union-attr]
        idx2name: dict[int, str] = {}
        if update_on_kvstore:
            idx2name.update(enumerate(param_names))
        else:
            n = len(self._context)
            for k in range(n):
                idx2name.update({i * n + k: name for i, name in enumerate(param_names)})
        if isinstance(optimizer, str):
            params = dict(optimizer_params or {})
            if "rescale_grad" not in params:
                params["rescale_grad"] = rescale_grad
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name, **params)
        else:
            if not isinstance(optimizer, opt.Optimizer):
                raise TypeError(f"optimizer must be a name or an Optimizer, got {type(optimizer).__name__}")
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(
                    "Optimizer created manually outside Module but rescale_grad is not normalized to "
                    f"1.0/batch_size/num_workers ({optimizer.rescale_grad} vs. {rescale_grad}). Is this intended?",
                    stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        self._optimizer = optimizer
        self._kvstore = kv
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kv is not None:
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kv.set_optimizer(self._optimizer)
            _initialize_kvstore(kvstore=kv, param_arrays=group.param_arrays,  # type: ignore[union-attr]
                                arg_params=self._arg_params, param_names=param_names,
                                update_on_kvstore=update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module: "Module") -> None:
        """Use ``shared_module``'s optimizer, kvstore and updater."""
        assert shared_module.optimizer_initialized
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    # -- computation --------------------------------------------------------------------------------
    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Run the network on ``data_batch`` (``is_train`` None: as bound). A batch of
        another shape re-binds (parameters are kept)."""
        from ..io import DataDesc
        if not (self.binded and self.params_initialized):
            raise ModuleStateError("bind and init_params before forward")
        curr = tuple(tuple(i.shape) for i in self._data_shapes)
        if isinstance(data_batch, list):
            new_shapes = []
            for i in range(len(data_batch[0].data)):
                shape = data_batch[0].data[i].shape
                for db in data_batch:
                    if shape != db.data[i].shape:
                        raise ValueError("All data batches in a list need to have the same shape")
                new_shapes.append((len(data_batch) * shape[0],) + tuple(shape[1:]))
            new = tuple(new_shapes)
        else:
            new = tuple(tuple(i.shape) for i in data_batch.data)
        if curr != new:
            if getattr(data_batch, "provide_data", None):
                new_dshape = data_batch.provide_data
            else:
                new_dshape = [DataDesc(i.name, shape, i.dtype, i.layout)
                              for i, shape in zip(self._data_shapes, new)]
            if getattr(data_batch, "provide_label", None):
                new_lshape = data_batch.provide_label
            elif getattr(data_batch, "label", None) and self._label_shapes:
                new_lshape = [DataDesc(i.name, j.shape, i.dtype, i.layout)
                              for i, j in zip(self._label_shapes, data_batch.label)]
            elif self._label_shapes:
                # no labels in this batch (prediction): resize the label inputs too
                new_lshape = []
                for i in self._label_shapes:
                    shape = list(i.shape)
                    axis = DataDesc.get_batch_axis(i.layout)
                    if axis >= 0 and shape:
                        shape[axis] = new[0][DataDesc.get_batch_axis(self._data_shapes[0].layout)]
                    new_lshape.append(DataDesc(i.name, tuple(shape), i.dtype, i.layout))
            else:
                new_lshape = None
            self.reshape(new_dshape, new_lshape)
        self._exec_group.forward(data_batch, is_train)  # type: ignore[union-attr]

    def backward(self, out_grads: Any = None) -> None:
        if not (self.binded and self.params_initialized):
            raise ModuleStateError("bind and init_params before backward")
        self._exec_group.backward(out_grads=out_grads)  # type: ignore[union-attr]

    def update(self) -> None:
        """Apply the gradients of the last ``backward`` (through the kvstore and/or
        the local updater)."""
        if not (self.binded and self.params_initialized and self.optimizer_initialized):
            raise ModuleStateError("bind, init_params and init_optimizer before update")
        self._params_dirty = True
        group = self._exec_group
        names = group.param_names_in_order()  # type: ignore[union-attr]
        if self._update_on_kvstore:
            _update_params_on_kvstore(group.param_arrays, group.grad_arrays,  # type: ignore[union-attr]
                                      self._kvstore, names)
        else:
            _update_params(group.param_arrays, group.grad_arrays,  # type: ignore[union-attr]
                           updater=self._updater, num_device=len(self._context), kvstore=self._kvstore,
                           param_names=names)

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        if not (self.binded and self.params_initialized):
            raise ModuleStateError("bind and init_params before get_outputs")
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)  # type: ignore[union-attr]

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        if not (self.binded and self.params_initialized and self.inputs_need_grad):
            raise ModuleStateError("bind with inputs_need_grad=True to get input gradients")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)  # type: ignore[union-attr]

    def get_states(self, merge_multi_context: bool = True) -> list:
        assert self.binded and self.params_initialized
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)  # type: ignore[union-attr]

    def set_states(self, states: Any = None, value: Any = None) -> None:
        assert self.binded and self.params_initialized
        self._exec_group.set_states(states, value)  # type: ignore[union-attr]

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with the last outputs and ``labels``."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)  # type: ignore[union-attr]

    def _sync_params_from_devices(self) -> None:
        self._exec_group.get_params(self._arg_params, self._aux_params)  # type: ignore[union-attr]
        if self._kvstore and self._update_on_kvstore:
            # the devices hold only the rows their batches pulled: the kvstore has them all (MXNet)
            from .. import nd
            for name, val in sorted(self._arg_params.items()):  # type: ignore[union-attr]
                if getattr(val, "stype", "default") == "row_sparse":
                    self._kvstore.row_sparse_pull(name, val, row_ids=nd.arange(0, val.shape[0], dtype="int64"))
        self._params_dirty = False

    # -- optimizer states ----------------------------------------------------------------------------
    def save_optimizer_states(self, fname: str) -> None:
        """Save the optimizer's state (momentum etc.) to ``fname`` (atomically)."""
        if not self.optimizer_initialized:
            raise ModuleStateError("init_optimizer before save_optimizer_states")
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            atomic_write(fname, self._updater.get_states())

    def load_optimizer_states(self, fname: str) -> None:
        if not self.optimizer_initialized:
            raise ModuleStateError("init_optimizer before load_optimizer_states")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, "rb") as f:
                self._updater.set_states(f.read())

    def install_monitor(self, mon: Any) -> None:
        assert self.binded
        self._exec_group.install_monitor(mon)  # type: ignore[union-attr]

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        """Before ``forward`` of ``data_batch``: with ``sparse_row_id_fn`` (``batch ->
        {parameter name: row ids}``), pull those rows of each row_sparse parameter from the
        kvstore into the executors (``row_sparse_pull``), as MXNet 1.9.1's Module."""
        assert self.binded
        if sparse_row_id_fn is None:
            return
        if not self._kvstore or not self._update_on_kvstore:
            warnings.warn(UserWarning("Parameters are not updated in the KVStore. No need to call sparse_row_id_fn."),
                          stacklevel=2)
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise TypeError(f"sparse_row_id_fn must return a dict {{parameter name: row ids}}, got "
                            f"{type(row_ids).__name__}")
        group = self._exec_group
        names = group.param_names_in_order()  # type: ignore[union-attr]
        for name, ids in row_ids.items():
            if name not in names:
                raise ValueError(f"sparse_row_id_fn: {name!r} is not a parameter; parameters are {names}")
            idx = names.index(name)
            val = group.param_arrays[idx]  # type: ignore[union-attr]
            if getattr(val[0], "stype", "default") != "row_sparse":
                warnings.warn(UserWarning(f"{name}.stype is not 'row_sparse'. No need to perform row_sparse_pull."),
                              stacklevel=2)
            else:
                self._kvstore.row_sparse_pull(name, val, row_ids=[ids] * len(val), priority=-idx)


def _attr_dict(symbol: Any) -> dict:
    fn = getattr(symbol, "attr_dict", None)
    if fn is None:
        return {}
    try:
        return fn() or {}
    except Exception:  # noqa: BLE001 - attributes are optional for initialization
        return {}


def _prepare_group2ctxs(group2ctxs: Any, n: int) -> list[dict | None]:
    """MXNet's ``_prepare_group2ctxs``: a dict applies to every context, each of its
    values a context or a list of one context or of one per context
    (example/model-parallel); a list gives one dict per context."""
    if group2ctxs is None:
        return [None] * n
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != n:
            raise ValueError(f"group2ctxs: a list needs one dict per context ({n}), got {len(group2ctxs)}")
        return list(group2ctxs)
    if isinstance(group2ctxs, dict):
        out: list[dict | None] = [{} for _ in range(n)]
        for group, v in group2ctxs.items():
            ctxs = list(v) if isinstance(v, (list, tuple)) else [v] * n
            if len(ctxs) == 1:
                ctxs = ctxs * n
            if len(ctxs) != n:
                raise ValueError(f"group2ctxs[{group!r}]: a list needs 1 or {n} contexts (one per context of "
                                 f"the module), got {len(ctxs)}")
            for i, c in enumerate(ctxs):
                out[i][group] = c  # type: ignore[index]
        return out
    raise TypeError(f"group2ctxs must be a dict or a list of dicts, got {type(group2ctxs).__name__}")
