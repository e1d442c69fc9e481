"""``BucketingModule`` (MXNet 1.x): one ``Module`` per bucket key (e.g. sequence
length), all sharing the default bucket's parameters, optimizer and memory.

``sym_gen(bucket_key) -> (symbol, data_names, label_names)`` builds each bucket's
network; ``forward`` switches to the batch's ``bucket_key`` (binding that bucket on first
use against the default bucket's module, so parameters and gradients are shared arrays).
"""
from __future__ import annotations

import logging
import warnings
from typing import Any, Callable

import numpy as np

from .. import ndarray as nd
from .. import symbol as sym
from ..context import cpu
from ..initializer import Uniform
from ..model import load_params
from ..symbol.name import NameManager
from .base_module import BaseModule, ModuleStateError, _check_input_names
from .module import Module

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """A module over several networks that share parameters (bucketing)."""

    def __init__(self, sym_gen: Callable[[Any], tuple], default_bucket_key: Any = None, logger: Any = logging,
                 context: Any = None, work_load_list: Any = None, fixed_param_names: Any = None,
                 state_names: Any = None, group2ctxs: Any = None, compression_params: dict | None = None) -> None:
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise ValueError("BucketingModule needs default_bucket_key")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)
        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = context if context is not None else cpu()
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets: dict[Any, Module] = {}
        self._curr_module: Module | None = None
        self._curr_bucket_key: Any = None
        self._params_dirty = False
        self._monitor: Any = None
        self._grad_req: Any = None

    def _reset_bind(self) -> None:
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, *args: Any, **kwargs: Any) -> tuple:
        with NameManager():  # the same automatic names in every bucket
            return self._sym_gen(*args, **kwargs)

    def _module(self, symbol: Any, data_names: Any, label_names: Any) -> Module:
        return Module(symbol, data_names, label_names, logger=self.logger, context=self._context,
                      work_load_list=self._work_load_list, fixed_param_names=self._fixed_param_names,
                      state_names=self._state_names, group2ctxs=self._group2ctxs,
                      compression_params=self._compression_params)

    def _need(self, *flags: str) -> Module:
        for f in flags:
            if not getattr(self, f):
                raise ModuleStateError(f"BucketingModule: {f.replace('_', ' ')} is required first "
                                       f"(bind, init_params, init_optimizer)")
        assert self._curr_module is not None
        return self._curr_module

    # -- properties ---------------------------------------------------------------------------------
    @property
    def default_bucket_key(self) -> Any:
        return self._default_bucket_key

    @property
    def data_names(self) -> list[str]:
        if self.binded:
            return self._need().data_names
        return list(self._call_sym_gen(self._default_bucket_key)[1])

    @property
    def output_names(self) -> list[str]:
        if self.binded:
            return self._need().output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self) -> list:
        return self._need("binded").data_shapes

    @property
    def label_shapes(self) -> Any:
        return self._need("binded").label_shapes

    @property
    def output_shapes(self) -> list:
        return self._need("binded").output_shapes

    @property
    def symbol(self) -> Any:
        return self._need("binded").symbol

    # -- parameters ---------------------------------------------------------------------------------
    def get_params(self) -> tuple[dict, dict]:
        mod = self._need("params_initialized")
        mod._params_dirty = self._params_dirty
        params = mod.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params: dict, aux_params: dict, allow_missing: bool = False, force_init: bool = True,
                   allow_extra: bool = False) -> None:
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params call ignored.",
                          stacklevel=2)
            return
        self._need("binded").set_params(arg_params, aux_params, allow_missing=allow_missing, force_init=force_init,
                                         allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer: Any = Uniform(0.01), arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        if self.params_initialized and not force_init:
            return
        self._need("binded").init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                                          allow_missing=allow_missing, force_init=force_init,
                                          allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context: bool = True) -> list:
        return self._need("binded", "params_initialized").get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states: Any = None, value: Any = None) -> None:
        self._need("binded", "params_initialized").set_states(states, value)

    # -- binding --------------------------------------------------------------------------------------
    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: Any = "write") -> None:
        """Bind the default bucket (other buckets bind on first use, sharing it)."""
        arg_params = aux_params = None
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise ValueError("shared_module for BucketingModule is not supported")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True
        self._grad_req = grad_req
        symbol, data_names, label_names = self._call_sym_gen(self._default_bucket_key)
        module = self._buckets.get(self._default_bucket_key) or self._module(symbol, data_names, label_names)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind=False,
                    shared_module=None, grad_req=self._grad_req)
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if arg_params is not None:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key: Any, data_shapes: Any, label_shapes: Any = None) -> None:
        """Make ``bucket_key``'s module current, binding it (sharing the default bucket's
        parameters and memory) the first time."""
        cur = self._need("binded")
        default = self._buckets[self._default_bucket_key]
        module = self._buckets.get(bucket_key)
        if module is None:
            symbol, data_names, label_names = self._call_sym_gen(bucket_key)
            module = self._module(symbol, data_names, label_names)
            module.bind(data_shapes, label_shapes, cur.for_training, cur.inputs_need_grad, force_rebind=False,
                        shared_module=default, grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        elif not module.binded:
            module.bind(data_shapes, label_shapes, cur.for_training, cur.inputs_need_grad, force_rebind=False,
                        shared_module=default, grad_req=self._grad_req)
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        cur = self._need("binded", "params_initialized")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        cur.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        for mod in self._buckets.values():
            if mod is not cur:
                mod.borrow_optimizer(cur)
        self.optimizer_initialized = True

    # -- computation ----------------------------------------------------------------------------------
    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        self._need("binded", "params_initialized")
        original = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data, data_batch.provide_label)
        self._need().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        self._need("binded", "params_initialized")
        key = getattr(data_batch, "bucket_key", None)
        if key is None:
            key = self._default_bucket_key
        self.switch_bucket(key, data_batch.provide_data, data_batch.provide_label)
        self._need().forward(data_batch, is_train=is_train)

    def backward(self, out_grads: Any = None) -> None:
        self._need("binded", "params_initialized").backward(out_grads=out_grads)

    def update(self) -> None:
        mod = self._need("binded", "params_initialized", "optimizer_initialized")
        self._params_dirty = True
        mod.update()

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        return self._need("binded", "params_initialized").get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        return self._need("binded", "params_initialized", "inputs_need_grad").get_input_grads(
            merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        self._need("binded", "params_initialized").update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        self._need("binded")
        self._monitor = mon
        for mod in self._buckets.values():
            mod.install_monitor(mon)

    # -- checkpoints ----------------------------------------------------------------------------------
    def save_checkpoint(self, prefix: str, epoch: int, remove_amp_cast: bool = False) -> None:
        """``PREFIX-EPOCH.params``, one ``PREFIX-KEY-symbol.json`` per bucket and
        ``PREFIX.buckets`` (the keys, int32), as MXNet writes them."""
        if not self._buckets:
            raise RuntimeError("Empty BucketingModule cannot be saved")
        self.save_params("%s-%04d.params" % (prefix, epoch))
        for key in self._buckets:
            symbol, _, _ = self._call_sym_gen(key)
            symbol.save("%s-%s-symbol.json" % (prefix, key), remove_amp_cast=remove_amp_cast)
        nd.save("%s.buckets" % prefix, nd.array(list(self._buckets.keys()), dtype=np.int32))

    @staticmethod
    def load(prefix: str, epoch: int, sym_gen: Any = None, default_bucket_key: Any = None,
             **kwargs: Any) -> "BucketingModule":
        """A module from ``save_checkpoint``'s files (bind before use)."""
        if sym_gen is None or default_bucket_key is None:
            raise ValueError("sym_gen and default_bucket_key are required for loading BucketingModule")
        keys = [int(k) for k in nd.load("%s.buckets" % prefix)[0].asnumpy().astype("int32")]
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key in keys:
            _, data_names, label_names = sym_gen(key)
            mod._buckets[key] = Module(sym.load("%s-%s-symbol.json" % (prefix, key)), data_names, label_names,
                                       **kwargs)
            if key == default_bucket_key:
                mod._curr_module = mod._buckets[key]
        return BucketingModule._with_params(mod, *load_params(prefix, epoch))

    @staticmethod
    def load_dict(sym_dict: dict | None = None, sym_gen: Any = None, default_bucket_key: Any = None,
                  arg_params: dict | None = None, aux_params: dict | None = None,
                  **kwargs: Any) -> "BucketingModule":
        """A module from ``{bucket_key: symbol}`` and parameters."""
        if sym_dict is None or arg_params is None or aux_params is None or default_bucket_key is None:
            raise ValueError("sym_dict, arg_params, aux_params and default_bucket_key are required")
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key, loaded in sym_dict.items():
            _, data_names, label_names = sym_gen(default_bucket_key)
            mod._buckets[key] = Module(loaded, data_names, label_names, **kwargs)
            if key == default_bucket_key:
                mod._curr_module = mod._buckets[key]
        return BucketingModule._with_params(mod, arg_params, aux_params)

    @staticmethod
    def _with_params(mod: "BucketingModule", arg_params: dict, aux_params: dict) -> "BucketingModule":
        if mod._curr_module is None:
            raise ValueError(f"default bucket {mod._default_bucket_key!r} is not among the saved buckets")
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
