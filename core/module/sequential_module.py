"""``SequentialModule`` (MXNet 1.x): modules chained one after another; each module's
outputs are the next one's data, and gradients flow back through ``get_input_grads``.

``add(module, take_labels=True)`` gives a module the labels (a loss module);
``auto_wiring=True`` renames the previous outputs to the module's data names.
"""
from __future__ import annotations

import copy
import logging
from typing import Any

from ..initializer import Uniform
from .base_module import BaseModule, ModuleStateError

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """A container of modules run in sequence."""

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger: Any = logging) -> None:
        super().__init__(logger=logger)
        self._modules: list[BaseModule] = []
        self._metas: list[dict[str, Any]] = []
        self._label_shapes: Any = None
        self._data_shapes: Any = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module: BaseModule, **kwargs: Any) -> "SequentialModule":
        """Append ``module`` (metas: ``take_labels``, ``auto_wiring``); returns self."""
        unknown = [k for k in kwargs if k not in self._meta_keys]
        if unknown:
            raise ValueError(f'Unknown meta "{unknown[0]}", a typo? (known: {sorted(self._meta_keys)})')
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    def _need(self, *flags: str) -> None:
        for f in flags:
            if not getattr(self, f):
                raise ModuleStateError(f"SequentialModule: {f.replace('_', ' ')} is required first")

    @property
    def data_names(self) -> list[str]:
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self) -> list[str]:
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self) -> Any:
        self._need("binded")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self) -> Any:
        self._need("binded")
        return self._label_shapes

    @property
    def output_shapes(self) -> Any:
        self._need("binded")
        return self._modules[-1].output_shapes

    def get_params(self) -> tuple[dict, dict]:
        self._need("binded", "params_initialized")
        arg_params: dict = {}
        aux_params: dict = {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer: Any = Uniform(0.01), arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        """Initialise every module; the same parameter name in two modules is an error."""
        if self.params_initialized and not force_init:
            return
        self._need("binded")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                               allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
        seen_args: dict[str, int] = {}
        seen_aux: dict[str, int] = {}
        for i, module in enumerate(self._modules):
            args, auxs = module.get_params()
            for known, names in ((seen_args, args), (seen_aux, auxs)):
                for name in names:
                    if name in known:
                        j = known[name]
                        raise ValueError(f'Duplicated parameter names: name "{name}" in layer {i} '
                                         f"({type(module)}) is already used in layer {j} "
                                         f"({type(self._modules[j])}).")
                    known[name] = i
        self.params_initialized = True

    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: Any = "write") -> None:
        """Bind each module to the previous one's output shapes (every module after the
        first computes input gradients when training)."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise ValueError("inputs_need_grad=True needs for_training=True")
        if shared_module is not None:
            raise ValueError("Shared module is not supported")
        if not self._modules:
            raise ValueError("Attempting to bind an empty SequentialModule")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True
        self._label_shapes = label_shapes
        my_data_shapes = data_shapes
        anybody_needs_label = False
        for i, module in enumerate(self._modules):
            meta = self._metas[i]
            if meta.get(self.META_TAKE_LABELS):
                my_label_shapes = label_shapes
                anybody_needs_label = True
            else:
                my_label_shapes = None
            my_inputs_need_grad = bool(inputs_need_grad or (for_training and i > 0))
            if meta.get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(my_data_shapes):
                    raise ValueError(f"auto_wiring: module {i} takes {len(names)} inputs, the previous one gives "
                                     f"{len(my_data_shapes)}")
                my_data_shapes = [(new, _shape(d)) for new, d in zip(names, my_data_shapes)]
            module.bind(data_shapes=my_data_shapes, label_shapes=my_label_shapes, for_training=for_training,
                        inputs_need_grad=my_inputs_need_grad, force_rebind=force_rebind, shared_module=None,
                        grad_req=grad_req)
            my_data_shapes = module.output_shapes
        if not anybody_needs_label:
            self._label_shapes = None

    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        self._need("binded", "params_initialized")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params,
                                  force_init=force_init)
        self.optimizer_initialized = True

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        self._need("binded", "params_initialized")
        data_batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(data_batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            data_batch.data = module.get_outputs()
            if getattr(data_batch, "provide_data", None) is not None:
                names = [_name(x) for x in module.output_shapes]
                data_batch.provide_data = [(n, x.shape) for n, x in zip(names, data_batch.data)]

    def backward(self, out_grads: Any = None) -> None:
        self._need("binded", "params_initialized")
        for i in range(len(self._modules) - 1, -1, -1):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i == 0:
                break
            out_grads = module.get_input_grads()

    def update(self) -> None:
        self._need("binded", "params_initialized", "optimizer_initialized")
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        self._need("binded", "params_initialized")
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        self._need("binded", "params_initialized", "inputs_need_grad")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` from the modules that take labels."""
        self._need("binded", "params_initialized")
        for meta, module in zip(self._metas, self._modules):
            if meta.get(self.META_TAKE_LABELS):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        self._need("binded")
        for module in self._modules:
            module.install_monitor(mon)


def _name(desc: Any) -> str:
    return desc.name if hasattr(desc, "name") else desc[0]


def _shape(desc: Any) -> tuple:
    return tuple(desc.shape) if hasattr(desc, "shape") else tuple(desc[1])
