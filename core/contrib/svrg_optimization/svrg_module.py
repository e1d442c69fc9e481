"""``SVRGModule``: a ``Module`` trained by stochastic variance-reduced gradient (SVRG).

SVRG (Johnson & Zhang, 2013) keeps a snapshot ``w~`` of the weights and the mean
gradient ``mu`` over all training data at ``w~``, refreshed every ``update_freq``
epochs. Each step then uses ``g_batch(w) - g_batch(w~) + mu``: an unbiased estimate of
the full gradient whose variance shrinks as ``w`` approaches ``w~``.

The module holds a second, auxiliary ``Module`` over the same symbol for ``w~``: it sees
the same batches, so each step costs two forward/backward passes. ``mu`` lives in
``_param_dict`` (one dict per device); with a KVStore the devices' and workers' shares
are summed under extra ``<name>_full`` keys by the ``_SVRGOptimizer``.

This is MXNet 1.9.1's ``mx.contrib.svrg_optimization.svrg_module``: names, signatures,
defaults and training trajectories are the same.
"""
from __future__ import annotations

import logging
from typing import Any, Iterator, Sequence

from ...context import cpu
from ...initializer import Uniform
from ...model import _create_kvstore
from ...module import Module
from ...ndarray import zeros
from ...optimizer import create
from .svrg_optimizer import _SVRGOptimizer

__all__ = ["SVRGModule"]


class _SnapshotEpochs:
    """``train_data`` as ``Module.fit`` sees it inside ``SVRGModule.fit``.

    Every pass ``fit`` starts (``iter``) first refreshes the full gradient when the epoch
    is a multiple of ``update_freq``, then rewinds the data; ``fit``'s own end-of-epoch
    ``reset`` is dropped, so the data is rewound exactly where MXNet's SVRG loop does it
    (the difference shows with ``roll_over`` iterators)."""

    def __init__(self, module: "SVRGModule", data: Any, begin_epoch: int) -> None:
        self._module = module
        self._data = data
        self._epoch = begin_epoch

    def __iter__(self) -> Iterator[Any]:
        if self._epoch % self._module.update_freq == 0:
            self._module.update_full_grads(self._data)
        self._epoch += 1
        self._data.reset()
        return iter(self._data)

    def reset(self) -> None:
        """Deferred to the start of the next pass."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._data, name)


class SVRGModule(Module):
    """A ``Module`` whose updates follow the SVRG rule (MXNet 1.9.1's ``SVRGModule``).

    Parameters
    ----------
    symbol, data_names, label_names, logger, context, work_load_list, fixed_param_names,
    state_names, group2ctxs, compression_params
        As for ``Module``; the auxiliary module is built with the same values.
    update_freq : int
        Epochs between full-gradient snapshots (``2``: a pass over all data every other
        epoch). A positive integer; there is no default.

    Examples
    --------
    >>> mod = SVRGModule(symbol=lro, data_names=['data'], label_names=['lin_reg_label'], update_freq=2)
    >>> mod.fit(di, eval_metric='mse', optimizer='sgd', optimizer_params=(('learning_rate', 0.025),),
    ...         num_epoch=10, kvstore='local')
    """

    def __init__(self, symbol: Any, data_names: Sequence[str] = ("data",),
                 label_names: Sequence[str] = ("softmax_label",), logger: Any = logging, context: Any = cpu(),
                 work_load_list: Sequence[float] | None = None, fixed_param_names: Sequence[str] | None = None,
                 state_names: Sequence[str] | None = None, group2ctxs: Any = None,
                 compression_params: dict | None = None, update_freq: int | None = None) -> None:
        config = dict(data_names=data_names, label_names=label_names, logger=logger, context=context,
                      work_load_list=work_load_list, fixed_param_names=fixed_param_names, state_names=state_names,
                      group2ctxs=group2ctxs, compression_params=compression_params)
        super().__init__(symbol, **config)
        if not isinstance(update_freq, int):
            raise TypeError("update_freq in SVRGModule must be an integer to represent the frequency for "
                            f"calculating full gradients (got {update_freq!r})")
        if update_freq <= 0:
            raise ValueError("update_freq in SVRGModule must be a positive integer to represent the frequency for "
                             f"calculating full gradients (got {update_freq})")
        self.update_freq = update_freq
        # holds the snapshot weights w~ and computes the batch gradients at w~
        self._mod_aux = Module(symbol, **config)
        # mu, per device: {parameter name: NDArray}; created by init_optimizer
        self._param_dict: list[dict[str, Any]] | None = None
        self._ctx_len = len(self._context)

    @property
    def _group(self) -> Any:
        assert self._exec_group is not None, "SVRGModule: bind() first"
        return self._exec_group

    @property
    def _aux_group(self) -> Any:
        assert self._mod_aux._exec_group is not None, "SVRGModule: bind(for_training=True) first"
        return self._mod_aux._exec_group

    @property
    def _mu(self) -> list[dict[str, Any]]:
        assert self._param_dict is not None, "SVRGModule: init_optimizer() first"
        return self._param_dict

    # -- both modules -------------------------------------------------------------------------
    def _reset_bind(self) -> None:
        super()._reset_bind()
        self._mod_aux._reset_bind()

    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: Any = "write") -> None:
        """Bind this module and, when training, the auxiliary one (``Module.bind``)."""
        args = (data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind, shared_module, grad_req)
        super().bind(*args)
        if for_training:
            self._mod_aux.bind(*args)

    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """Reshape both modules for new input shapes (``Module.reshape``)."""
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Forward ``data_batch``; the auxiliary module runs too when ``is_train`` is true
        (not when it is None: prediction leaves ``w~`` alone)."""
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads: Any = None) -> None:
        """Backward through both modules (the auxiliary one when it is bound)."""
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        """Prepare both modules for ``data_batch`` (``Module.prepare``)."""
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)

    # -- optimizer ----------------------------------------------------------------------------
    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        """Install an ``_SVRGOptimizer`` wrapping ``optimizer`` (a name or an Optimizer)
        and, with a KVStore, a zero ``<name>_full`` key per parameter."""
        self._param_dict = [{name: zeros(arr.shape, ctx=ctx) for name, arr in self.get_params()[0].items()}
                            for ctx in self._context]
        svrg_opt = self._create_optimizer(_SVRGOptimizer.__name__, default_opt=optimizer, kvstore=kvstore,
                                          optimizer_params=optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg_opt, optimizer_params=optimizer_params,
                               force_init=force_init)
        if self._kvstore:
            group = self._group
            for idx, (name, on_devices) in enumerate(zip(group.param_names, group.param_arrays)):
                self._kvstore.init(name + "_full", zeros(on_devices[0].shape))
                if self._update_on_kvstore:
                    # as MXNet 1.9.1: this pulls the new zero key into the devices' weights, so
                    # training starts from zero while the first snapshot takes the host copy
                    self._kvstore.pull(name + "_full", on_devices, priority=-idx)

    def _create_optimizer(self, optimizer: str, default_opt: Any, kvstore: Any, optimizer_params: Any) -> Any:
        """The ``_SVRGOptimizer`` (registered name ``optimizer``) around ``default_opt``,
        indexed as ``Module.init_optimizer`` indexes parameters, ``_full`` keys after them."""
        kv, update_on_kvstore = _create_kvstore(kvstore, self._ctx_len, self._arg_params or {})
        batch_size = self._group.batch_size
        if kv and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        names = self._group.param_names
        if update_on_kvstore:
            idx2name = dict(enumerate(names))
        else:   # the updater sees one index per (parameter, device)
            n = self._ctx_len
            idx2name = {i * n + k: name for k in range(n) for i, name in enumerate(names)}
        for name in self._mu[0]:
            idx2name[max(idx2name) + 1] = name + "_full"
        params = dict(optimizer_params)
        params.setdefault("rescale_grad", 1.0 / batch_size)
        params.update(default_optimizer=default_opt, param_idx2name=idx2name)
        return create(optimizer, **params)

    # -- the SVRG steps -----------------------------------------------------------------------
    def update_full_grads(self, train_data: Any) -> None:
        """Take the snapshot: copy the weights into the auxiliary module and average its
        gradients over one pass of ``train_data`` into ``mu`` (summed over workers and
        devices through the KVStore when there is one)."""
        names = self._group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        train_data.reset()
        nbatch, pad = 0, 0
        # as MXNet 1.9.1 the sums start from the previous snapshot's mu, not from zero
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            grads = self._aux_group.grad_arrays
            for ctx, mu in enumerate(self._mu):
                for i, name in enumerate(names):
                    mu[name] = mu[name] + grads[i][ctx]
            pad = batch.pad
        # the padded tail of the last batch does not count as data
        num_batches = nbatch - pad / train_data.batch_size
        for name in names:
            for mu in self._mu:
                mu[name] /= num_batches
            if self._kvstore:
                self._accumulate_kvstore(name, [mu[name] for mu in self._mu])

    def _accumulate_kvstore(self, key: str, value: list[Any]) -> None:
        """Sum ``value`` (one mean gradient per device) over devices and workers under
        ``<key>_full``, then share the result out to the devices."""
        self._kvstore.push(key + "_full", value)
        self._kvstore._barrier()
        self._kvstore.pull(key + "_full", value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key: str, value: list[Any]) -> None:
        """Each device's ``mu`` of ``key``: the summed full gradient over the device count."""
        for i in range(self._ctx_len):
            self._mu[i][key] = value[i] / self._ctx_len

    def _svrg_grads_update_rule(self, g_curr_batch_curr_weight: Any, g_curr_batch_special_weight: Any,
                                g_special_weight_all_batch: Any) -> Any:
        """``g(w) - g(w~) + mu``, written into ``g_curr_batch_curr_weight`` (and returned)."""
        g_curr_batch_curr_weight -= g_curr_batch_special_weight
        g_curr_batch_curr_weight += g_special_weight_all_batch
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self) -> None:
        """Replace this module's batch gradients by their SVRG estimates."""
        grads, aux_grads = self._group.grad_arrays, self._aux_group.grad_arrays
        for ctx, mu in enumerate(self._mu):
            for i, name in enumerate(self._group.param_names):
                grads[i][ctx] = self._svrg_grads_update_rule(grads[i][ctx], aux_grads[i][ctx], mu[name])

    def update(self) -> None:
        """An optimizer step on the SVRG gradients of the last forward/backward."""
        self._update_svrg_gradients()
        super().update()

    def fit(self, train_data: Any, eval_data: Any = None, eval_metric: Any = "acc", epoch_end_callback: Any = None,
            batch_end_callback: Any = None, kvstore: Any = "local", optimizer: Any = "sgd",
            optimizer_params: Any = (("learning_rate", 0.01),), eval_end_callback: Any = None,
            eval_batch_end_callback: Any = None, initializer: Any = Uniform(0.01), arg_params: dict | None = None,
            aux_params: dict | None = None, allow_missing: bool = False, force_rebind: bool = False,
            force_init: bool = False, begin_epoch: int = 0, num_epoch: int | None = None,
            validation_metric: Any = None, monitor: Any = None, sparse_row_id_fn: Any = None,
            **kwargs: Any) -> None:
        """``Module.fit`` with a full-gradient snapshot at the start of every epoch that is
        a multiple of ``update_freq``. ``kwargs``: plexnet's extra ``fit`` options
        (``progress``)."""
        assert num_epoch is not None, "please specify number of epochs"
        super().fit(_SnapshotEpochs(self, train_data, begin_epoch), eval_data=eval_data, eval_metric=eval_metric,
                    epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                    kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params,
                    eval_end_callback=eval_end_callback, eval_batch_end_callback=eval_batch_end_callback,
                    initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                    allow_missing=allow_missing, force_rebind=force_rebind, force_init=force_init,
                    begin_epoch=begin_epoch, num_epoch=num_epoch, validation_metric=validation_metric,
                    monitor=monitor, sparse_row_id_fn=sparse_row_id_fn, **kwargs)
