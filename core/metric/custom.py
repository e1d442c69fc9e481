"""Metrics from user code: ``Loss`` (and its ``Torch`` / ``Caffe`` names), ``CustomMetric``, ``np``."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy

from .base import EvalMetric, _as_lists, _is_array, _np, check_label_shapes, register

__all__ = ["Loss", "Torch", "Caffe", "CustomMetric", "np"]


@register
class Loss(EvalMetric):
    """Mean of the outputs themselves (for networks whose output is a loss)."""

    _numpy_value = True  # MXNet 1.9.1 returns a numpy float64

    def __init__(self, name: str = "loss", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def update(self, _: Any, preds: Any) -> None:
        if _is_array(preds):
            preds = [preds]
        for pred in preds:
            p = _np(pred)
            self._add(float(numpy.sum(p, dtype=p.dtype)), p.size)


@register
class Torch(Loss):
    """Dummy metric for torch criterions."""

    def __init__(self, name: str = "torch", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """Dummy metric for caffe criterions."""

    def __init__(self, name: str = "caffe", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on numpy arrays; it returns the batch value
    (counted as one instance) or a ``(sum_metric, num_inst)`` tuple."""

    def __init__(self, feval: Callable[[Any, Any], Any], name: str | None = None,
                 allow_extra_outputs: bool = False, output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        if name is None:
            name = getattr(feval, "__name__", type(feval).__name__)
            if name.find("<") != -1:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names, has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _as_lists(labels, preds)
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds)
        for pred, label in zip(preds, labels):
            reval = self._feval(_np(label), _np(pred))
            if isinstance(reval, tuple):
                sum_metric, num_inst = reval
                self._add(sum_metric, num_inst)
            else:
                self._add(reval, 1)

    def get_config(self) -> dict:
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval: Callable[[Any, Any], Any], name: str | None = None,
       allow_extra_outputs: bool = False) -> CustomMetric:
    """A ``CustomMetric`` from a function of numpy arrays (``mx.metric.np``)."""
    def feval(label: Any, pred: Any) -> Any:
        return numpy_feval(label, pred)
    feval.__name__ = getattr(numpy_feval, "__name__", "feval")
    return CustomMetric(feval, name, allow_extra_outputs)
