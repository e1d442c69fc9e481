"""``PythonModule`` and ``PythonLossModule`` (MXNet 1.x): modules written in Python
around NDArrays, for use in a ``SequentialModule`` (a loss computed in Python, say).

A ``PythonModule`` subclass implements ``_compute_output_shapes``, ``forward``,
``backward``, ``get_outputs`` and ``get_input_grads``; it has no parameters.
``PythonLossModule`` passes its input through and takes its gradient from
``grad_func(scores, labels)``.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

from .. import ndarray as nd
from ..initializer import Uniform
from .base_module import BaseModule, ModuleStateError
from .sequential_module import _name, _shape

__all__ = ["PythonModule", "PythonLossModule"]


class PythonModule(BaseModule):
    """A parameter-free module implemented in Python."""

    def __init__(self, data_names: Sequence[str], label_names: Sequence[str] | None, output_names: Sequence[str],
                 logger: Any = logging) -> None:
        super().__init__(logger=logger)
        self._data_names = list(data_names)
        self._label_names = list(label_names) if label_names is not None else None
        self._output_names = list(output_names)
        self._data_shapes: Any = None
        self._label_shapes: Any = None
        self._output_shapes: Any = None

    @property
    def data_names(self) -> list[str]:
        return self._data_names

    @property
    def output_names(self) -> list[str]:
        return self._output_names

    @property
    def data_shapes(self) -> Any:
        return self._data_shapes

    @property
    def label_shapes(self) -> Any:
        return self._label_shapes

    @property
    def output_shapes(self) -> Any:
        return self._output_shapes

    def get_params(self) -> tuple[dict, dict]:
        return {}, {}

    def init_params(self, initializer: Any = Uniform(0.01), arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        """No parameters: nothing to do."""
        self.params_initialized = True

    def update(self) -> None:
        """No parameters: nothing to update."""

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise RuntimeError("PythonModule does not support presliced labels")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module: Any = None,
             grad_req: Any = "write") -> None:
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise ValueError("Python module only support write gradient")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        names = [_name(x) for x in data_shapes]
        if names != self._data_names:
            raise ValueError(f"data_shapes name {names}, the module's data_names are {self._data_names}")
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        if label_shapes is not None:
            lnames = [_name(x) for x in label_shapes]
            if self._label_names is None or lnames != self._label_names:
                raise ValueError(f"label_shapes name {lnames}, the module's label_names are {self._label_names}")
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self) -> list:
        """``[(name, shape), ...]`` of the outputs, from ``self._data_shapes``."""
        raise NotImplementedError(f"{type(self).__name__} must implement _compute_output_shapes")

    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),), force_init: bool = False) -> None:
        """No parameters: nothing to optimise."""
        self.optimizer_initialized = True


class PythonLossModule(PythonModule):
    """A loss: forward passes the scores through; backward's input gradient is
    ``grad_func(scores, labels)``."""

    def __init__(self, name: str = "pyloss", data_names: Sequence[str] = ("data",),
                 label_names: Sequence[str] = ("softmax_label",), logger: Any = logging,
                 grad_func: Callable[[Any, Any], Any] | None = None) -> None:
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        self._name = name
        if len(data_names) != 1 or len(label_names) != 1:
            raise ValueError("PythonLossModule takes one data and one label input")
        if grad_func is not None and not callable(grad_func):
            raise TypeError("grad_func must be callable")
        self._scores: Any = None
        self._labels: Any = None
        self._scores_grad: Any = None
        self._grad_func = grad_func

    def _compute_output_shapes(self) -> list:
        return [(self._name + "_output", _shape(self._data_shapes[0]))]

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        return [self._scores]

    def backward(self, out_grads: Any = None) -> None:
        if out_grads is not None:
            raise ValueError("For a loss module, out_grads should be None")
        if not self.for_training:
            raise ModuleStateError("backward needs a module bound for training")
        self._backward_impl()

    def _backward_impl(self) -> None:
        """``grad_func(scores, labels)``; subclasses without one override this."""
        if self._grad_func is None:
            raise NotImplementedError("PythonLossModule needs grad_func (or a subclass overriding _backward_impl)")
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, nd.NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        return [self._scores_grad]

    def install_monitor(self, mon: Any) -> None:
        raise NotImplementedError("PythonLossModule has no executor to monitor (as in MXNet)")

