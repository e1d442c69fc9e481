"""The metric base: ``EvalMetric``, the input helpers and the metric class registry
(``register``, ``alias``)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy

from ..registry import ClassRegistry

__all__ = ["EvalMetric", "register", "alias", "check_label_shapes"]


def _is_array(x: Any) -> bool:
    return hasattr(x, "asnumpy") or isinstance(x, numpy.ndarray)


def _np(x: Any) -> numpy.ndarray:
    """A numpy view/copy of an NDArray, numpy array or array-like."""
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return numpy.asarray(x)


def check_label_shapes(labels: Any, preds: Any, wrap: bool = False, shape: bool = False) -> tuple:
    """Check that ``labels`` and ``preds`` have the same length (or, with ``shape``, the
    same shape); with ``wrap`` a single array becomes a one-element list."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError(f"Shape of labels {label_shape} does not match shape of predictions {pred_shape}")
    if wrap:
        labels, preds = _as_lists(labels, preds)
    return labels, preds


def _as_lists(labels: Any, preds: Any) -> tuple:
    """A single array (of labels, of predictions) becomes a one-element list."""
    if _is_array(labels):
        labels = [labels]
    if _is_array(preds):
        preds = [preds]
    return labels, preds


def _wrap(labels: Any, preds: Any) -> tuple:
    return check_label_shapes(*_as_lists(labels, preds))


class EvalMetric:
    """Base class of every metric.

    ``name`` is the display name; ``output_names`` / ``label_names`` select which
    outputs and labels ``update_dict`` passes on (default: all, in order).
    Subclasses implement ``update(labels, preds)``.
    """

    #: MXNet's value type: a numpy float64 where its ``update`` sums numpy scalars
    #: (Accuracy, the regression and log-loss metrics, Loss), a Python float elsewhere
    _numpy_value = False

    def __init__(self, name: str, output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, **kwargs: Any) -> None:
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        # numpy 2 writes a numpy float as np.float64(0.4); MXNet's (numpy 1.x) text has 0.4
        values = {k: float(v) if isinstance(v, numpy.floating) else v for k, v in self.get_name_value()}
        return f"EvalMetric: {values}"

    def get_config(self) -> dict:
        """The configuration; ``create(**config)`` recreates the metric."""
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label: dict, pred: dict) -> None:
        """Update with name -> array dicts of labels and outputs."""
        preds = [pred[n] for n in self.output_names] if self.output_names is not None else list(pred.values())
        labels = [label[n] for n in self.label_names] if self.label_names is not None else list(label.values())
        self.update(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        """Accumulate a batch: ``labels`` and ``preds`` are lists of arrays."""
        raise NotImplementedError()

    def reset(self) -> None:
        """Clear local and global counters."""
        self.num_inst: float = 0
        self.sum_metric = 0.0
        self.global_num_inst: float = 0
        self.global_sum_metric = 0.0

    def reset_local(self) -> None:
        """Clear the local counters only (global ones keep accumulating)."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self) -> tuple:
        """``(name, value)``; ``value`` is nan before any update."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self._value(self.sum_metric / self.num_inst))

    def get_global(self) -> tuple:
        """``(name, value)`` over everything since the last ``reset``."""
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float("nan"))
            return (self.name, self._value(self.global_sum_metric / self.global_num_inst))
        return self.get()

    def _value(self, v: Any) -> Any:
        return numpy.float64(v) if self._numpy_value else v

    def get_name_value(self) -> list[tuple]:
        """``[(name, value), ...]``."""
        return self._name_value_pairs(*self.get())

    def get_global_name_value(self) -> list[tuple]:
        if self._has_global_stats:
            return self._name_value_pairs(*self.get_global())
        return self.get_name_value()

    @staticmethod
    def _name_value_pairs(name: Any, value: Any) -> list[tuple]:
        if not isinstance(name, list):
            name = [name]
        if not isinstance(value, list):
            value = [value]
        return list(zip(name, value))

    # helpers for subclasses
    def _add(self, value: Any, n: Any) -> None:
        # numpy scalars become Python numbers first: MXNet (numpy 1.x) accumulated batch
        # values in float64, numpy 2 would keep float32 and round differently
        if isinstance(value, numpy.generic):
            value = value.item()
        if isinstance(n, numpy.generic):
            n = n.item()
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += n
        self.global_num_inst += n


_classes = ClassRegistry(EvalMetric, "metric", accepts="a name, an EvalMetric, a list or a function",
                         known="known metrics")
_REGISTRY = _classes.classes
_create = _classes.create


def register(klass: type) -> type:
    """Register a metric class under its lower-cased class name."""
    return _classes.register(klass)


def alias(*aliases: str) -> Callable[[type], type]:
    """Register a metric class under extra names: ``@alias('acc')``."""
    return _classes.alias(*aliases)

