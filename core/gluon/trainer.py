"""``gluon.Trainer``: applies an optimizer to a set of parameters (MXNet 1.x).

``step(batch_size)`` = ``allreduce_grads()`` (sum the gradients of every context
through the KVStore) + ``update(batch_size)`` (the optimizer, with ``rescale_grad =
scale / batch_size``). The KVStore is created lazily on the first step, as MXNet does,
with the same rules as ``Module`` (``model._create_kvstore``): one device and a non-dist
type needs no kvstore; ``update_on_kvstore`` runs the optimizer inside the store.
"""
from __future__ import annotations

from typing import Any

from .. import optimizer as opt
from ..base import PlexnetError
from ..fileio import atomic_write
from ..model import _create_kvstore, _kv_capable_optimizer
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]


def _sparse_kvstore(kvstore: Any) -> Any:
    from .. import kvstore as kvs
    if isinstance(kvstore, str):
        return kvs.create(kvstore)
    if hasattr(kvstore, "push") and hasattr(kvstore, "pull"):
        return kvstore
    raise TypeError(f"Cannot create '{kvstore}' KVStore with row_sparse parameters. The type must be KVStore or str.")


class Trainer:
    """Updates ``params`` (a ParameterDict, or a list/dict of Parameters) with
    ``optimizer`` (a name or an Optimizer) and ``optimizer_params``."""

    def __init__(self, params: Any, optimizer: Any, optimizer_params: dict | None = None, kvstore: Any = "device",
                 compression_params: dict | None = None, update_on_kvstore: bool | None = None) -> None:
        if isinstance(params, (dict, ParameterDict)):
            # MXNet 1.9.1 takes a dict's parameters in sorted name order: the indices of the
            # optimizer states, the kvstore keys and saved state files depend on it
            params = [params[k] for k in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise ValueError(f"First argument must be a list or dict of Parameters, got {type(params)}.")
        self._params: list[Parameter] = []
        self._param2idx: dict[str, int] = {}
        for i, p in enumerate(params):
            if not isinstance(p, Parameter):
                raise ValueError(f"First argument must be a list or dict of Parameters, got list of {type(p)}.")
            if p.name in self._param2idx:
                if any(q is p for q in self._params):
                    continue   # as MXNet: a shared parameter listed again is kept once (its index stays i)
                raise PlexnetError(f"Trainer: two different parameters are named {p.name!r}")
            self._param2idx[p.name] = i
            self._params.append(p)
            p._set_trainer(self)
        # as MXNet 1.9.1: sparse weights are always updated in a kvstore; sparse gradients of
        # dense weights are reduced through it and applied on the workers (single machine)
        self._contains_sparse_weight = any(p._stype != "default" for p in self._params)
        self._contains_sparse_grad = any(p._grad_stype != "default" for p in self._params)
        self._params_to_init = [p for p in self._params if p._data is None]
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        optimizer_params = dict(optimizer_params or {})
        self._scale = float(optimizer_params.get("rescale_grad", 1.0))
        self._init_optimizer(optimizer, optimizer_params)
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore: Any = None
        self._update_on_kvstore: bool | None = None
        self._distributed: bool | None = None

    def _check_contexts(self) -> list | None:
        contexts = None
        for p in self._params:
            try:
                ctx = p.list_ctx()
            except RuntimeError:
                continue
            if contexts is not None and contexts != ctx:
                raise PlexnetError(f"All Parameters must be initialized on the same set of contexts, but Parameter "
                                   f"{p.name} is initialized on {ctx} while previous Parameters are initialized on "
                                   f"{contexts}.")
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer: Any, optimizer_params: dict) -> None:
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise PlexnetError("optimizer_params must be None if optimizer is an instance of Optimizer instead "
                                   "of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._optimizer.idx2name = {i: p.name for i, p in enumerate(self._params)}
        self._updaters = [opt.get_updater(self._optimizer) for _ in (self._contexts or [None])]

    def _init_kvstore(self) -> None:
        self._contexts = self._check_contexts() or self._contexts
        ndev = len(self._contexts or [None])
        config = self._kvstore_params
        arg_arrays = {p.name: p._check_and_get(p._data, self._contexts[0]) for p in self._params
                      if p._data is not None} \
            if self._contexts else {}
        kv, update_on_kv = _create_kvstore(config["kvstore"], ndev, arg_arrays)
        if self._contains_sparse_weight:
            if config["update_on_kvstore"] is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights are present.")
            if kv is None:  # one device: MXNet still creates the store (its sparse pull path)
                kv = _sparse_kvstore(config["kvstore"])
            update_on_kv = True
        elif self._contains_sparse_grad:
            update_on_kv = kv is not None and "dist" in kv.type
            if config["update_on_kvstore"] is False and update_on_kv:
                raise ValueError("Cannot set update_on_kvstore=False on dist kvstore when sparse gradients "
                                 "are present.")
        self._distributed = kv is not None and "dist" in kv.type
        if config["update_on_kvstore"] is not None and not self._contains_sparse_weight:
            if config["update_on_kvstore"] and kv is not None and not _kv_capable_optimizer(kv):
                raise ValueError(f"Please set update_on_kvstore=False when training with {type(kv)}")
            # as MXNet: without a kvstore (one device, non-dist type) the flag has no effect
            update_on_kv = bool(config["update_on_kvstore"]) and kv is not None
        if kv is not None:
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            for i, p in enumerate(self._params):
                if p._data is not None:
                    kv.init(i, p._check_and_get(p._data, list)[0])
                    if self._distributed:
                        kv.pull(i, p._check_and_get(p._data, list))
            if update_on_kv:
                kv.set_optimizer(self._optimizer)
        self._kvstore = kv
        # as MXNet 1.9.1: without a kvstore the flag stays undecided (None)
        self._update_on_kvstore = bool(update_on_kv) if kv is not None else None
        self._updaters = [opt.get_updater(self._optimizer) for _ in (self._contexts or [None])]
        self._kv_initialized = True
        self._params_to_init = [p for p in self._params if p._data is None]

    def _reset_kvstore(self) -> None:
        """Drop the kvstore (re-created at the next step): loaded parameter values must
        replace the copies a kvstore that updates holds (MXNet's ``_reset_kvstore``)."""
        if self._kvstore is not None and "dist" in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None

    # -- learning rate -------------------------------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate can be accessed.")
        return self._optimizer.learning_rate

    @property
    def optimizer(self) -> Any:
        return self._optimizer

    def set_learning_rate(self, lr: float) -> None:
        self._optimizer.set_learning_rate(lr)

    # -- the step ---------------------------------------------------------------------------------------
    def step(self, batch_size: float, ignore_stale_grad: bool = False) -> None:
        """One update: gradients summed over contexts, then scaled by
        ``1/batch_size`` and applied."""
        self._optimizer.rescale_grad = self._scale / batch_size
        if not self._kv_initialized:
            self._init_kvstore()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self) -> None:
        """Sum the gradients over contexts (for ``update`` called separately)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._update_on_kvstore:
            # an AssertionError, as MXNet (which asserts)
            raise AssertionError("allreduce_grads() when parameters are updated on kvstore is not supported. Try "
                                 "setting `update_on_kvstore` to False when creating trainer.")
        self._allreduce_grads()

    def _allreduce_grads(self) -> None:
        kv = self._kvstore
        if kv is None:
            return
        for i, p in enumerate(self._params):
            if p.grad_req == "null":
                continue
            grads = p.list_grad()
            if grads[0].stype != "default":
                # sparse gradients: push, then pull them back summed (MXNet 1.9.1; a pushpull
                # keeps row_sparse values as they are)
                kv.push(i, grads, priority=-i)
                if p._stype == "default" and not self._update_on_kvstore:
                    kv.pull(i, grads, priority=-i, ignore_sparse=bool(self._distributed))
                continue
            if self._update_on_kvstore:
                kv.push(i, grads, priority=-i)
            else:
                kv.pushpull(i, grads, priority=-i)

    def update(self, batch_size: float, ignore_stale_grad: bool = False) -> None:
        """Apply the optimizer (after ``allreduce_grads``)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._update_on_kvstore:
            raise AssertionError("update() when parameters are updated on kvstore is not supported. Try setting "
                                 "`update_on_kvstore` to False when creating trainer.")
        self._optimizer.rescale_grad = self._scale / batch_size
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad: bool = False) -> None:
        loss_scaler = getattr(self, "_amp_loss_scaler", None)  # set by contrib.amp.init_trainer
        if loss_scaler is not None and loss_scaler.has_overflow(self._params):
            return  # an overflowed gradient: skip this update, as MXNet's
        updates: list[list] = [[] for _ in self._updaters]
        one = updates[0] if len(updates) == 1 else None
        on_kv = self._update_on_kvstore
        for i, p in enumerate(self._params):
            if p.grad_req == "null":
                continue
            datas = p._check_and_get(p._data, list)  # row_sparse weights too (kept dense)
            if one is not None and len(datas) == 1 and not on_kv:
                # one context (the common case): the loop below for one array, without the lists
                ag = datas[0]._ag
                if ag is not None and ag[0].fresh:
                    one.append((i, p.list_grad()[0], datas[0]))
                    ag[0].fresh = False
                    continue
            leaves = [d._ag[0] if d._ag is not None else None for d in datas]
            if not all(lf is not None and lf.fresh for lf in leaves):
                if not ignore_stale_grad:
                    ctxs = [d.context for d, lf in zip(datas, leaves) if lf is None or not lf.fresh]
                    raise UserWarning(
                        f"Gradient of Parameter `{p.name}` on context {ctxs[0]} has not been updated by backward "
                        f"since last `step`. This could mean a bug in your model that made it only use a subset "
                        f"of the Parameters (Blocks) for this iteration. If you are intentionally only using a "
                        f"subset, call step with ignore_stale_grad=True to suppress this warning and skip "
                        f"updating of Parameters with stale gradient")
                continue
            if on_kv:
                # row_sparse weights hold every row here: pull them whole (MXNet pulls the rows a
                # row_sparse_data asks for; a plain pull skips row_sparse targets)
                self._kvstore.pull(i, datas, priority=-i, ignore_sparse=p._stype == "default")
            else:
                for upd, d, g in zip(updates, datas, p.list_grad()):
                    upd.append((i, g, d))
            for lf in leaves:
                if lf is not None:  # all are: a stale one skipped the parameter above
                    lf.fresh = False
        if self._update_on_kvstore:
            return
        for updater, upd in zip(self._updaters, updates):
            if upd:
                idx, grads, weights = zip(*upd)
                updater(list(idx), list(grads), list(weights))

    # -- states ---------------------------------------------------------------------------------------
    def save_states(self, fname: str) -> None:
        """Save the optimizer states (momentum ...)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            atomic_write(fname, self._updaters[0].get_states(dump_optimizer=True))  # old or new, never half

    def load_states(self, fname: str) -> None:
        """Load what ``save_states`` wrote."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, "rb") as f:
                states = f.read()
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
