"""Online evaluation metrics (``plexnet.metric``, MXNet 1.x ``mx.metric``).

Every metric accumulates ``sum_metric`` and ``num_inst`` over ``update(labels, preds)``
calls and reports ``sum_metric / num_inst`` from ``get()``. The values are the same as
MXNet 1.9's on the same inputs (the arithmetic is done in numpy in the same dtypes and
order as MXNet's Python code; ``tests/metric`` checks figures computed with MXNet).

``labels`` and ``preds`` are lists of NDArrays (a single NDArray is wrapped); numpy
arrays are accepted as well. ``create`` builds a metric from a name (``'acc'``,
``'top_k_accuracy'``, ``'ce'``, ``'mse'`` ...), a config dict or JSON string, a list
(a ``CompositeEvalMetric``) or a function ``feval(label, pred)`` (a ``CustomMetric``).

Global statistics (``get_global``): ``reset_local()`` (what ``Speedometer`` calls with
``auto_reset=True``) clears the local counters only, so the epoch-end figures that
``Module.fit`` logs cover the whole epoch.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Callable, Sequence

import numpy

from .registry import ClassRegistry

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC", "PCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "Loss", "Torch", "Caffe", "CustomMetric", "np", "create",
           "register", "alias", "check_label_shapes"]


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

    def __init__(self, name: str, output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, **kwargs: Any) -> None:
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict:
        """The configuration; ``create(**config)`` recreates the metric."""
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label: dict, pred: dict) -> None:
        """Update with name -> array dicts of labels and outputs."""
        if self.output_names is not None:
            pred = [pred[name] for name in self.output_names]
        else:
            pred = list(pred.values())
        if self.label_names is not None:
            label = [label[name] for name in self.label_names]
        else:
            label = list(label.values())
        self.update(label, pred)

    def update(self, labels: Any, preds: Any) -> None:
        """Accumulate a batch: ``labels`` and ``preds`` are lists of arrays."""
        raise NotImplementedError()

    def reset(self) -> None:
        """Clear local and global counters."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self) -> None:
        """Clear the local counters only (global ones keep accumulating)."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self) -> tuple:
        """``(name, value)``; ``value`` is nan before any update."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self) -> tuple:
        """``(name, value)`` over everything since the last ``reset``."""
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float("nan"))
            return (self.name, self.global_sum_metric / self.global_num_inst)
        return self.get()

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


def create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """A metric from a name, an instance, a config dict/JSON, a list (composite) or a
    function ``feval(label, pred)`` (``CustomMetric``)::

        mx.metric.create('acc'); mx.metric.create(['acc', 'ce'])
        mx.metric.create(lambda label, pred: float((label == pred.argmax(1)).mean()))
    """
    if callable(metric) and not isinstance(metric, (EvalMetric, type)):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, (list, tuple)):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create(metric, *args, **kwargs)


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns lists of names and values."""

    def __init__(self, metrics: Sequence[Any] | None = None, name: str = "composite",
                 output_names: Sequence[str] | None = None, label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.metrics = [create(i) for i in (metrics or [])]

    def add(self, metric: Any) -> None:
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> EvalMetric:
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError(f"Metric index {index} is out of range 0 and {len(self.metrics)}") from None

    def update_dict(self, labels: dict, preds: dict) -> None:  # type: ignore[override]
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self) -> None:
        for metric in getattr(self, "metrics", ()):
            metric.reset()

    def reset_local(self) -> None:
        for metric in getattr(self, "metrics", ()):
            metric.reset_local()

    def _collect(self, getter: str) -> tuple:
        names: list = []
        values: list = []
        for metric in self.metrics:
            name, value = getattr(metric, getter)()
            if isinstance(name, str):
                name = [name]
            if not isinstance(value, (list, tuple)):
                value = [value]
            names.extend(name)
            values.extend(value)
        return (names, values)

    def get(self) -> tuple:
        return self._collect("get")

    def get_global(self) -> tuple:
        return self._collect("get_global")

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"metrics": [i.get_config() for i in self.metrics]})
        return config


# -- classification ------------------------------------------------------------------------
@register
@alias("acc")
class Accuracy(EvalMetric):
    """Fraction of samples whose predicted class (argmax over ``axis``, or the
    prediction itself when it has the label's shape) equals the label."""

    def __init__(self, axis: int = 1, name: str = "accuracy", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred_label in zip(labels, preds):
            pred = _np(pred_label)
            label = _np(label)
            if pred.shape != label.shape:
                pred = numpy.argmax(pred, axis=self.axis)
            pred = pred.astype("int32").ravel()
            label = label.astype("int32").ravel()
            check_label_shapes(label, pred)
            num_correct = int((pred == label).sum())
            self._add(num_correct, len(pred))


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the ``top_k`` highest predictions."""

    def __init__(self, top_k: int = 1, name: str = "top_k_accuracy", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        if not self.top_k > 1:
            raise ValueError("Please use Accuracy if top_k is no more than 1")
        self.name += f"_{self.top_k}"

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred_label in zip(labels, preds):
            pred = _np(pred_label).astype("float32")
            if pred.ndim > 2:
                raise ValueError("Predictions should be no more than 2 dims")
            label = _np(label).astype("int32")
            check_label_shapes(label, pred)
            num_samples = pred.shape[0]
            if pred.ndim == 1:
                n = int((numpy.argpartition(pred, -self.top_k).flat == label.flat).sum())
                self._add(n, 0)
            else:
                num_classes = pred.shape[1]
                top_k = min(num_classes, self.top_k)
                # argpartition as MXNet: only membership in the top k matters
                part = numpy.argpartition(pred, -top_k)
                for j in range(top_k):
                    n = int((part[:, num_classes - 1 - j].flat == label.flat).sum())
                    self._add(n, 0)
            self.num_inst += num_samples
            self.global_num_inst += num_samples


class _BinaryClassificationMetrics:
    """True/false positive/negative counts over batches (for F1 and MCC)."""

    def __init__(self) -> None:
        self.reset_stats()

    def update_binary_stats(self, label: Any, pred: Any) -> None:
        pred = _np(pred)
        label = _np(label).astype("int32")
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError(f"{self.__class__.__name__} currently only supports binary classification.")
        pred_true = pred_label == 1
        pred_false = 1 - pred_true
        label_true = label == 1
        label_false = 1 - label_true
        tp = (pred_true * label_true).sum()
        fp = (pred_true * label_false).sum()
        fn = (pred_false * label_true).sum()
        tn = (pred_false * label_false).sum()
        self.true_positives += tp
        self.global_true_positives += tp
        self.false_positives += fp
        self.global_false_positives += fp
        self.false_negatives += fn
        self.global_false_negatives += fn
        self.true_negatives += tn
        self.global_true_negatives += tn

    @staticmethod
    def _ratio(a: Any, b: Any) -> float:
        return float(a) / (a + b) if a + b > 0 else 0.0

    @property
    def precision(self) -> float:
        return self._ratio(self.true_positives, self.false_positives)

    @property
    def global_precision(self) -> float:
        return self._ratio(self.global_true_positives, self.global_false_positives)

    @property
    def recall(self) -> float:
        return self._ratio(self.true_positives, self.false_negatives)

    @property
    def global_recall(self) -> float:
        return self._ratio(self.global_true_positives, self.global_false_negatives)

    @property
    def fscore(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    @property
    def global_fscore(self) -> float:
        p, r = self.global_precision, self.global_recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    def matthewscc(self, use_global: bool = False) -> float:
        if use_global:
            if not self.global_total_examples:
                return 0.0
            tp, fp = float(self.global_true_positives), float(self.global_false_positives)
            fn, tn = float(self.global_false_negatives), float(self.global_true_negatives)
        else:
            if not self.total_examples:
                return 0.0
            tp, fp = float(self.true_positives), float(self.false_positives)
            fn, tn = float(self.false_negatives), float(self.true_negatives)
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.0:
                denom *= t
        return ((tp * tn) - (fp * fn)) / math.sqrt(denom)

    @property
    def total_examples(self) -> Any:
        return self.false_negatives + self.false_positives + self.true_negatives + self.true_positives

    @property
    def global_total_examples(self) -> Any:
        return (self.global_false_negatives + self.global_false_positives + self.global_true_negatives
                + self.global_true_positives)

    def local_reset_stats(self) -> None:
        self.false_positives = self.false_negatives = self.true_positives = self.true_negatives = 0

    def reset_stats(self) -> None:
        self.local_reset_stats()
        self.global_false_positives = self.global_false_negatives = 0
        self.global_true_positives = self.global_true_negatives = 0


class _BinaryStatsMetric(EvalMetric):
    """F1 and MCC: a score of the binary counts, the mean of per-batch scores
    (``average='macro'``) or one score over all batches (``'micro'``).

    Subclasses keep MXNet's attribute names (F1: ``metrics`` / ``average``, MCC:
    ``_metrics`` / ``_average``) and give them to this class through ``_stats``,
    ``_per_batch`` and ``_score``."""

    _stats: _BinaryClassificationMetrics
    _per_batch: bool

    def _score(self, use_global: bool) -> float:
        raise NotImplementedError()

    def update(self, labels: Any, preds: Any) -> None:
        stats = self._stats
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            stats.update_binary_stats(label, pred)
        if self._per_batch:
            self.sum_metric += self._score(False)
            self.global_sum_metric += self._score(True)
            self.num_inst += 1
            self.global_num_inst += 1
            stats.reset_stats()
        else:
            self.sum_metric = self._score(False) * stats.total_examples
            self.global_sum_metric = self._score(True) * stats.global_total_examples
            self.num_inst = stats.total_examples
            self.global_num_inst = stats.global_total_examples

    def reset(self) -> None:
        super().reset()
        self._stats.reset_stats()

    def reset_local(self) -> None:
        super().reset_local()
        self._stats.local_reset_stats()


@register
class F1(_BinaryStatsMetric):
    """F1 score of a binary classification (``average='macro'``: mean of per-batch
    scores; ``'micro'``: one score over all batches)."""

    def __init__(self, name: str = "f1", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, average: str = "macro") -> None:
        self.average = average
        self.metrics = _BinaryClassificationMetrics()
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    _stats = property(lambda self: self.metrics)  # type: ignore[assignment]
    _per_batch = property(lambda self: self.average == "macro")  # type: ignore[assignment]

    def _score(self, use_global: bool) -> float:
        return self.metrics.global_fscore if use_global else self.metrics.fscore


@register
class MCC(_BinaryStatsMetric):
    """Matthews correlation coefficient of a binary classification."""

    def __init__(self, name: str = "mcc", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, average: str = "macro") -> None:
        self._average = average
        self._metrics = _BinaryClassificationMetrics()
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    _stats = property(lambda self: self._metrics)  # type: ignore[assignment]
    _per_batch = property(lambda self: self._average == "macro")  # type: ignore[assignment]

    def _score(self, use_global: bool) -> float:
        return self._metrics.matthewscc(use_global=use_global)


@register
class PCC(EvalMetric):
    """Multiclass Matthews correlation (from the confusion matrix)."""

    def __init__(self, name: str = "pcc", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, has_global_stats: bool = True) -> None:
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc: int) -> None:
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), "constant", constant_values=(0))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), "constant", constant_values=(0))
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat: numpy.ndarray) -> float:
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        i = cmat.diagonal()
        cov_xy = numpy.sum(i * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label = _np(label).astype("int32")
            pred = _np(pred)
            if pred.shape != label.shape:
                pred = pred.argmax(axis=1)
            else:
                pred = pred.astype("int32")
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(int(n) + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            for i, j in zip(pred, label):
                bcm[i, j] += 1
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self) -> float:  # type: ignore[override]
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, v: Any) -> None:
        pass

    @property
    def global_sum_metric(self) -> float:  # type: ignore[override]
        return self._calc_mcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, v: Any) -> None:
        pass

    def reset(self) -> None:
        self.global_num_inst = 0.0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self) -> None:
        self.num_inst = 0.0
        self.lcm = numpy.zeros((self.k, self.k))


@register
class Perplexity(EvalMetric):
    """``exp(-mean(log p(label)))``; labels equal to ``ignore_label`` are skipped."""

    def __init__(self, ignore_label: int | None, axis: int = -1, name: str = "perplexity",
                 output_names: Sequence[str] | None = None, label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        loss = 0.0
        num = 0
        for label, pred in zip(labels, preds):
            pred = _np(pred)
            label = _np(label)
            if label.size != pred.size / pred.shape[-1]:
                raise ValueError(f"shape mismatch: {label.shape} vs. {pred.shape}")
            label = label.reshape((label.size,))
            idx = label.astype("int32")
            axis = self.axis % pred.ndim
            # nd.pick(pred, idx, axis): idx has pred's shape without ``axis``
            picked = numpy.take_along_axis(
                pred, numpy.expand_dims(idx.reshape(pred.shape[:axis] + pred.shape[axis + 1:]), axis),
                axis=axis).squeeze(axis).reshape(-1)
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(picked.dtype)
                num -= float(ignore.sum())
                picked = picked * (1 - ignore) + ignore
            loss -= float(numpy.sum(numpy.log(numpy.maximum(picked.dtype.type(1e-10), picked)),
                                    dtype=picked.dtype))
            num += picked.size
        self._add(loss, num)

    def get(self) -> tuple:
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self) -> tuple:
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


# -- regression --------------------------------------------------------------------------------
class _RegressionMetric(EvalMetric):
    """MAE, MSE, RMSE: ``_batch_error(label, pred)`` of each batch (1-d arrays as
    columns), averaged over batches as MXNet does."""

    @staticmethod
    def _batch_error(label: numpy.ndarray, pred: numpy.ndarray) -> Any:
        raise NotImplementedError()

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label, pred = _np(label), _np(pred)
            if label.ndim == 1:
                label = label.reshape(label.shape[0], 1)
            if pred.ndim == 1:
                pred = pred.reshape(pred.shape[0], 1)
            self._add(self._batch_error(label, pred), 1)


@register
class MAE(_RegressionMetric):
    """Mean absolute error (averaged per batch, as MXNet)."""

    def __init__(self, name: str = "mae", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    @staticmethod
    def _batch_error(label: numpy.ndarray, pred: numpy.ndarray) -> Any:
        return numpy.abs(label - pred).mean()


@register
class MSE(_RegressionMetric):
    """Mean squared error (averaged per batch, as MXNet)."""

    def __init__(self, name: str = "mse", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    @staticmethod
    def _batch_error(label: numpy.ndarray, pred: numpy.ndarray) -> Any:
        return ((label - pred) ** 2.0).mean()


@register
class RMSE(_RegressionMetric):
    """Root mean squared error (per batch, averaged over batches, as MXNet)."""

    def __init__(self, name: str = "rmse", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    @staticmethod
    def _batch_error(label: numpy.ndarray, pred: numpy.ndarray) -> Any:
        return numpy.sqrt(((label - pred) ** 2.0).mean())


class _PickedLogLoss(EvalMetric):
    """CrossEntropy and NegativeLogLikelihood: the sum over samples of
    ``-log(pred[i, label[i]] + eps)``, counted per sample."""

    eps: float

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label = _np(label).ravel()
            pred = _np(pred)
            n = pred.shape[0]
            if label.shape[0] != n:
                raise ValueError(f"{label.shape[0]} labels for {n} predictions")
            prob = pred[numpy.arange(n, dtype=numpy.int64), numpy.int64(label)]
            self._add((-numpy.log(prob + self.eps)).sum(), n)


@register
@alias("ce")
class CrossEntropy(_PickedLogLoss):
    """Mean of ``-log(p[label] + eps)`` over samples."""

    def __init__(self, eps: float = 1e-12, name: str = "cross-entropy", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps


@register
@alias("nll_loss")
class NegativeLogLikelihood(_PickedLogLoss):
    """Negative log-likelihood (same figure as ``CrossEntropy``, named ``nll-loss``)."""

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None) -> None:
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of predictions and labels (``average='macro'``: mean of
    per-batch coefficients; ``'micro'``: one over all batches)."""

    def __init__(self, name: str = "pearsonr", output_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, average: str = "macro") -> None:
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def reset_micro(self) -> None:
        self._sse_p = 0
        self._mean_p = 0
        self._sse_l = 0
        self._mean_l = 0
        self._pred_nums = 0
        self._label_nums = 0
        self._conv = 0

    def reset(self) -> None:
        super().reset()
        if self.average == "micro":
            self.reset_micro()

    @staticmethod
    def update_variance(new_values: numpy.ndarray, *aggregate: Any) -> tuple:
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += numpy.sum(delta * delta_2)
        return count, mean, m_2

    def update_cov(self, label: numpy.ndarray, pred: numpy.ndarray) -> None:
        self._conv = self._conv + numpy.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _np(label).ravel().astype(numpy.float64)
            pred = _np(pred).ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self.global_num_inst += 1
                self.num_inst += 1
                self._label_nums, self._mean_l, self._sse_l = self.update_variance(
                    label, self._label_nums, self._mean_l, self._sse_l)
                self.update_cov(label, pred)
                self._pred_nums, self._mean_p, self._sse_p = self.update_variance(
                    pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self) -> tuple:
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        n = self._label_nums
        r = self._conv / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1)) * numpy.sqrt(self._sse_l / (n - 1)))
        return (self.name, r)


@register
class Loss(EvalMetric):
    """Mean of the outputs themselves (for networks whose output is a loss)."""

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
